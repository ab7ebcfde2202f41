//! The workload a seed draws: agents, workflows of steps, and the order of the processes that
//! drive them; then, faults off, passes until a fixed point.

use std::time::Duration;

use rand::RngExt as _;
use rand::rngs::StdRng;

use crate::scripted_agent::{AgentConfig, InProcessAgent, ServedBinding};

use super::schedule::{self, Faults};
use super::world::World;
use super::{Exit, Sim, TIMEOUT, invariants, settled};

/// The most passes after the faults stop before the run must be at a fixed point.
pub const LIVENESS_PASSES: u32 = 12;
/// The text of every reply.
pub const ANSWER: &str = "two rooms";
/// The saga workflow's name.
pub const SAGA: &str = "trip";

/// One planned step.
#[derive(Debug, Clone)]
pub struct Planned {
    /// `WORKFLOW/STEP`.
    pub name: String,
    /// The agent's base URL.
    pub agent: String,
    /// The message text.
    pub text: String,
    /// Whether it is a saga step (an effect, compensated by a message).
    pub saga: bool,
}

/// The agents a seed draws, their faults from `faults` (their bindings and stream faults from
/// `breadth`, so that the other draws stay as they were before bindings were drawn).
pub fn world(rng: &mut StdRng, breadth: &mut StdRng, faults: Faults) -> World {
    let n = rng.random_range(1..=2);
    let mut agents = Vec::new();
    let mut dedup = Vec::new();
    for i in 0..n {
        let base = format!("http://127.0.0.1:{}/", 9001 + i);
        let d = rng.random_bool(0.3);
        let cfg = AgentConfig {
            name: format!("sim-{i}"),
            dedup: d,
            list_ignores_filters: rng.random_bool(0.3),
            refuse_context_id: rng.random_bool(0.25),
            tick: Duration::from_secs(1),
            ..AgentConfig::default()
        };
        let cfg = binding(cfg, breadth.random_range(0..10));
        let agent = InProcessAgent::new(cfg, &base).unwrap_or_else(|e| panic!("agent: {e}"));
        agents.push((base, agent));
        dedup.push(d);
    }
    let streams = rand::SeedableRng::seed_from_u64(breadth.random());
    World::new(agents, dedup, faults, streams, TIMEOUT)
}

/// The binding an agent serves, drawn per seed (`which` in 0..10): A2A v1.0 over JSON-RPC (half
/// the agents) or HTTP+JSON (three in ten), or A2A v0.3 over JSON-RPC (two in ten: it has no
/// ListTasks, so most lookups end `UNCERTAIN` there).
fn binding(cfg: AgentConfig, which: u32) -> AgentConfig {
    match which {
        0..=4 => cfg,
        5..=7 => AgentConfig {
            binding: ServedBinding::HttpJson,
            ..cfg
        },
        _ => AgentConfig {
            protocol_v03: true,
            ..cfg
        },
    }
}

/// The steps a seed draws: two plain workflows and a saga.
pub fn plan(sim: &mut Sim) -> Vec<Planned> {
    let urls: Vec<String> = sim.world.agents.iter().map(|(u, _)| u.clone()).collect();
    let mut steps = Vec::new();
    for w in 0..3 {
        let saga = w == 2;
        let count = sim.rng.random_range(if saga { 2..=3 } else { 1..=3 });
        for s in 0..count {
            let agent = urls[sim.rng.random_range(0..urls.len())].clone();
            let text = if saga {
                format!("book room {s}")
            } else {
                match sim.rng.random_range(0..4) {
                    0 => format!("hello {w}.{s}"),
                    1 => format!("work:{} {w}.{s}", sim.rng.random_range(1..=4)),
                    2 => "ask".to_owned(),
                    _ => format!("fail {w}.{s}"),
                }
            };
            let workflow = if saga {
                SAGA.to_owned()
            } else {
                format!("w{w}")
            };
            steps.push(Planned {
                name: format!("{workflow}/s{s}"),
                agent,
                text,
                saga,
            });
        }
    }
    steps
}

fn args(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

fn delegate_args(p: &Planned) -> Vec<String> {
    let mut a = args(&["delegate", &p.name, "--agent", &p.agent]);
    if p.saga {
        a.extend(args(&[
            "--effect",
            "--compensate",
            "cancel {task_id}",
            "--verify-url",
            &format!("{}_scripted/bookings/{{task_id}}", p.agent),
        ]));
    }
    a.push(p.text.clone());
    a
}

impl Sim {
    async fn faulty(&mut self, a: &[String]) -> Exit {
        let crash = self.world.faults.crash();
        self.process(a, crash).await
    }

    /// A `reconcile` under faults, its exit code checked against the journal (invariant 8).
    async fn reconcile(&mut self) -> Result<Exit, String> {
        let exit = self.faulty(&args(&["reconcile"])).await;
        settled::reconcile_exit(self, exit).map(|()| exit)
    }
}

/// Runs the workload, then passes to a fixed point; `Err` names a liveness failure.
pub async fn drive(sim: &mut Sim) -> Result<(), String> {
    sim.world.set_faults(false);
    let urls: Vec<String> = sim.world.agents.iter().map(|(u, _)| u.clone()).collect();
    for url in &urls {
        let exit = sim.process(&args(&["agents", "add", url]), None).await;
        if exit != Exit::Code(0) {
            return Err(format!("`agents add {url}` exited {exit:?}"));
        }
    }
    let steps = plan(sim);
    sim.world.set_faults(true);
    for p in &steps {
        let mut a = delegate_args(p);
        // `delegate --follow` (its exit is the follow's), or a `follow` of its own later.
        let follows = sim.breadth.random_range(0..10);
        if follows < 2 {
            a.insert(1, "--follow".to_owned());
        }
        let exit = sim.faulty(&a).await;
        if follows < 2 {
            settled::follow_exit(sim, &p.name, exit)
                .or_else(|_| settled::delegate_exit(sim, &p.name, exit))?;
        } else {
            settled::delegate_exit(sim, &p.name, exit)?;
        }
        if (2..4).contains(&follows) {
            let crash = sim.breadth.random_bool(0.3).then(|| {
                (
                    sim.breadth.random_range(1..=4),
                    sim.breadth.random_bool(0.5),
                )
            });
            let exit = sim
                .process(&args(&["follow", &p.name, "--until", "10m"]), crash)
                .await;
            settled::follow_exit(sim, &p.name, exit)?;
        }
        if sim.rng.random_bool(0.4) {
            sim.reconcile().await?;
        }
        if sim.rng.random_bool(0.3)
            && let Some(ask) = steps.iter().find(|s| s.text == "ask")
        {
            let exit = sim.faulty(&args(&["reply", &ask.name, ANSWER])).await;
            settled::reply_exit(sim, &ask.name, exit)?;
        }
        schedule::forget(sim);
        schedule::step_clock(sim);
        let pause = sim.rng.random_range(0..20);
        sim.advance(Duration::from_secs(pause)).await;
    }
    if steps.iter().any(|p| p.saga) {
        sim.reconcile().await?;
        let exit = sim.faulty(&args(&["compensate", SAGA])).await;
        settled::compensate_exit(sim, exit)?;
    }
    sim.world.set_faults(false);
    let mut last = None;
    for _ in 0..LIVENESS_PASSES {
        sim.advance(Duration::from_secs(600)).await;
        let reconcile = sim.process(&args(&["reconcile"]), None).await;
        let compensate = sim.process(&args(&["compensate", SAGA]), None).await;
        let now = (invariants::snapshot(sim)?, reconcile, compensate);
        let settled = matches!(reconcile, Exit::Code(0 | 4));
        if settled && last.as_ref() == Some(&now) {
            sim.fixed_point = Some((reconcile, compensate));
            return Ok(());
        }
        last = Some(now);
    }
    Err(format!(
        "liveness: no fixed point within {LIVENESS_PASSES} passes after the faults stopped \
         (last: {last:?})"
    ))
}
