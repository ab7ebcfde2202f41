//! The workload a seed draws: agents, workflows of steps, and the order of the processes that
//! drive them; then, faults off, passes until a fixed point.
//!
//! A workload is data ([`Workload`]): drawn from the seed for a run, written into a kept case
//! with its fault schedule, and replayed from there, so that a change to the generator leaves
//! the kept cases as they were.

use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};
use serde::{Deserialize, Serialize};

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
/// The `--wait` some processes are given (a held lock is waited for on virtual time).
pub const WAIT: &str = "30s";

/// A run's workload: the agents, the steps, and the processes in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Workload {
    /// The agents, in order (agent `i` serves `http://127.0.0.1:900{i+1}/`).
    pub agents: Vec<AgentSpec>,
    /// The seed of the stream faults' generator (stream faults are not in a schedule).
    pub streams: u64,
    /// The steps, in the order they are delegated.
    pub steps: Vec<Planned>,
    /// What runs while faults are on, in order.
    pub processes: Vec<Action>,
}

/// One agent of a workload: how it behaves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSpec {
    /// It de-duplicates by `messageId`.
    pub dedup: bool,
    /// Its ListTasks ignores the filters.
    pub list_ignores_filters: bool,
    /// It refuses client-chosen context ids.
    pub refuse_context_id: bool,
    /// It files every new task under a context of its own (never with `refuse_context_id`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replace_context_id: bool,
    /// The binding it serves: `jsonrpc` (A2A v1.0), `http+json` or `v0.3` (JSON-RPC).
    pub binding: String,
}

/// One planned step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// What a process's exit is checked against (invariant 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    /// `delegate` of the step.
    Delegate,
    /// `delegate --follow` of the step: a follow's exit, or a delegate's.
    DelegateFollow,
    /// `follow` of the step.
    Follow,
    /// `reply` to the step.
    Reply,
    /// `reconcile`.
    Reconcile,
    /// `compensate` of the saga.
    Compensate,
}

/// One thing the workload does while faults are on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "do")]
pub enum Action {
    /// A process of these arguments (after `a2a-recover --journal J --timeout T -q`).
    Run {
        /// Its arguments.
        args: Vec<String>,
        /// What its exit is checked against.
        check: Check,
        /// The step it is checked on, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step: Option<String>,
        /// Where it is killed when faults are drawn (a replayed schedule holds its kills).
        #[serde(skip)]
        kill: Kill,
    },
    /// `resolve --as DECISION` of the step the journal points to when the run reaches it
    /// ([`super::resolve`]), else of `fallback`.
    Resolve {
        /// The decision: `resend`, `retry`, `done` or `abandoned`.
        #[serde(rename = "as")]
        decision: String,
        /// The step decided when none needs it.
        fallback: String,
        /// Whether it is given `--wait`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        wait: bool,
    },
    /// The faults between processes (an agent forgets a task, an agent's clock steps back).
    Between,
    /// Virtual time passes.
    Pause {
        /// How long, in seconds.
        secs: u64,
    },
}

/// Where a process is killed when faults are drawn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Kill {
    /// Where the fault generator says.
    #[default]
    Drawn,
    /// At this exchange (before or after the agent processed it), if any: drawn with the
    /// workload.
    At(Option<(u64, bool)>),
}

impl Action {
    fn run(args: Vec<String>, check: Check, step: Option<&str>) -> Self {
        Self::Run {
            args,
            check,
            step: step.map(str::to_owned),
            kill: Kill::Drawn,
        }
    }
}

/// The base URL of agent `i`.
fn agent_url(i: usize) -> String {
    format!("http://127.0.0.1:{}/", 9001 + i)
}

/// The workload seed `seed` draws.
pub fn draw(seed: u64) -> Workload {
    let mut rng = StdRng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    // The draws added after the first workloads (bindings, stream faults, follows) come from a
    // generator of their own, so that the first draws stay as they were.
    let mut breadth = StdRng::seed_from_u64(seed ^ 0xB4EA_D7B0);
    // And those added later still (`resolve`, `--wait`) from a third, and the agents' further
    // misbehaviours (context ids replaced, direct answers, rejections) from a fourth.
    let mut later = StdRng::seed_from_u64(seed ^ 0x7E50_17E5);
    let mut misbehaving = StdRng::seed_from_u64(seed ^ 0x0DD_BA11);
    let n = rng.random_range(1..=2);
    let mut agents = Vec::new();
    for _ in 0..n {
        let dedup = rng.random_bool(0.3);
        let list_ignores_filters = rng.random_bool(0.3);
        let refuse_context_id = rng.random_bool(0.25);
        agents.push(AgentSpec {
            dedup,
            list_ignores_filters,
            refuse_context_id,
            replace_context_id: !refuse_context_id && misbehaving.random_bool(0.25),
            binding: binding_name(breadth.random_range(0..10)).to_owned(),
        });
    }
    let streams = breadth.random();
    let mut steps = plan(&mut rng, agents.len());
    // Some plain steps answered with a direct message (no task), or rejected.
    for (i, p) in steps.iter_mut().enumerate() {
        let roll = misbehaving.random_range(0..10);
        if !p.saga && p.text != "ask" && roll < 2 {
            let word = if roll == 0 { "direct" } else { "reject" };
            p.text = format!("{word} {i}");
        }
    }
    let mut processes = Vec::new();
    for p in &steps {
        let mut a = delegate_args(p);
        // `delegate --follow` (its exit is the follow's), or a `follow` of its own later.
        let follows = breadth.random_range(0..10);
        if follows < 2 {
            a.insert(1, "--follow".to_owned());
            processes.push(Action::run(a, Check::DelegateFollow, Some(&p.name)));
        } else {
            processes.push(Action::run(a, Check::Delegate, Some(&p.name)));
        }
        if (2..4).contains(&follows) {
            let kill = breadth
                .random_bool(0.3)
                .then(|| (breadth.random_range(1..=4), breadth.random_bool(0.5)));
            processes.push(Action::Run {
                args: args(&["follow", &p.name, "--until", "10m"]),
                check: Check::Follow,
                step: Some(p.name.clone()),
                kill: Kill::At(kill),
            });
        }
        if later.random_bool(0.3) {
            let decision = super::resolve::DECISIONS[later.random_range(0..10)];
            processes.push(Action::Resolve {
                decision: decision.to_owned(),
                fallback: steps[0].name.clone(),
                wait: later.random_bool(0.2),
            });
        }
        if rng.random_bool(0.4) {
            processes.push(Action::run(args(&["reconcile"]), Check::Reconcile, None));
        }
        if rng.random_bool(0.3)
            && let Some(ask) = steps.iter().find(|s| s.text == "ask")
        {
            let a = args(&["reply", &ask.name, ANSWER]);
            processes.push(Action::run(a, Check::Reply, Some(&ask.name)));
        }
        processes.push(Action::Between);
        processes.push(Action::Pause {
            secs: rng.random_range(0..20),
        });
    }
    if steps.iter().any(|p| p.saga) {
        processes.push(Action::run(args(&["reconcile"]), Check::Reconcile, None));
        let a = args(&["compensate", SAGA]);
        processes.push(Action::run(a, Check::Compensate, None));
    }
    // `--wait` for a held lock on one process in five.
    for action in &mut processes {
        if let Action::Run { args, .. } = action
            && later.random_bool(0.2)
        {
            args.extend(["--wait".to_owned(), WAIT.to_owned()]);
        }
    }
    Workload {
        agents,
        streams,
        steps,
        processes,
    }
}

/// The agents of `load`, behind a fault layer drawing from `faults`.
pub fn world(load: &Workload, faults: Faults) -> World {
    let mut agents = Vec::new();
    let mut dedup = Vec::new();
    for (i, spec) in load.agents.iter().enumerate() {
        let base = agent_url(i);
        let cfg = AgentConfig {
            name: format!("sim-{i}"),
            dedup: spec.dedup,
            list_ignores_filters: spec.list_ignores_filters,
            refuse_context_id: spec.refuse_context_id,
            replace_context_id: spec.replace_context_id,
            tick: Duration::from_secs(1),
            ..AgentConfig::default()
        };
        let cfg = binding(cfg, &spec.binding);
        let agent = InProcessAgent::new(cfg, &base).unwrap_or_else(|e| panic!("agent: {e}"));
        agents.push((base, agent));
        dedup.push(spec.dedup);
    }
    let streams = StdRng::seed_from_u64(load.streams);
    let replays = super::replay::Replays::new(load.streams);
    World::new(agents, dedup, faults, streams, TIMEOUT, replays)
}

/// The agents' misbehaviours the run reached, by name: an agent that refuses or replaces
/// context ids and was sent a message, and each message answered directly (no task).
pub fn misbehaviours(world: &World, load: &Workload) -> Vec<(&'static str, u32)> {
    let mut out = Vec::new();
    for ((_, agent), spec) in world.agents.iter().zip(&load.agents) {
        let stats = agent.stats();
        let sent = !stats.messages.is_empty();
        if sent && spec.refuse_context_id {
            out.push(("context-refused", 1));
        }
        if sent && spec.replace_context_id {
            out.push(("context-replaced", 1));
        }
        let direct = stats
            .messages
            .iter()
            .filter(|m| m.text.starts_with("direct "))
            .count();
        if direct > 0 {
            out.push(("direct-answer", u32::try_from(direct).unwrap_or(u32::MAX)));
        }
    }
    out
}

/// The binding an agent serves, drawn per seed (`which` in 0..10): A2A v1.0 over JSON-RPC (half
/// the agents) or HTTP+JSON (three in ten), or A2A v0.3 over JSON-RPC (two in ten: it has no
/// ListTasks, so most lookups end `UNCERTAIN` there).
fn binding_name(which: u32) -> &'static str {
    match which {
        0..=4 => "jsonrpc",
        5..=7 => "http+json",
        _ => "v0.3",
    }
}

/// `cfg` serving the binding `name` names ([`binding_name`]).
fn binding(cfg: AgentConfig, name: &str) -> AgentConfig {
    match name {
        "http+json" => AgentConfig {
            binding: ServedBinding::HttpJson,
            ..cfg
        },
        "v0.3" => AgentConfig {
            protocol_v03: true,
            ..cfg
        },
        _ => cfg,
    }
}

/// The steps a seed draws: two plain workflows and a saga, over `agents` agents.
fn plan(rng: &mut StdRng, agents: usize) -> Vec<Planned> {
    let mut steps = Vec::new();
    for w in 0..3 {
        let saga = w == 2;
        let count = rng.random_range(if saga { 2..=3 } else { 1..=3 });
        for s in 0..count {
            let agent = agent_url(rng.random_range(0..agents));
            let text = if saga {
                format!("book room {s}")
            } else {
                match rng.random_range(0..4) {
                    0 => format!("hello {w}.{s}"),
                    1 => format!("work:{} {w}.{s}", rng.random_range(1..=4)),
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
    /// Runs one process of the workload under faults, and checks its exit against the journal
    /// (invariant 8).
    async fn under_faults(
        &mut self,
        args: &[String],
        check: Check,
        step: Option<&str>,
        kill: Kill,
    ) -> Result<(), String> {
        let crash = match kill {
            Kill::Drawn => self.world.faults.crash(),
            Kill::At(at) => at,
        };
        let exit = self.process(args, crash).await;
        let step = step.unwrap_or_default();
        match check {
            Check::Delegate => settled::delegate_exit(self, step, exit),
            Check::DelegateFollow => settled::follow_exit(self, step, exit)
                .or_else(|_| settled::delegate_exit(self, step, exit)),
            Check::Follow => settled::follow_exit(self, step, exit),
            Check::Reply => settled::reply_exit(self, step, exit),
            Check::Reconcile => settled::reconcile_exit(self, exit),
            Check::Compensate => settled::compensate_exit(self, exit),
        }
    }
}

/// Runs the workload `load`, then passes to a fixed point; `Err` names a liveness failure.
pub async fn drive(sim: &mut Sim, load: &Workload) -> Result<(), String> {
    sim.world.set_faults(false);
    let urls: Vec<String> = sim.world.agents.iter().map(|(u, _)| u.clone()).collect();
    for url in &urls {
        let exit = sim.process(&args(&["agents", "add", url]), None).await;
        if exit != Exit::Code(0) {
            return Err(format!("`agents add {url}` exited {exit:?}"));
        }
    }
    sim.world.set_faults(true);
    for action in &load.processes {
        match action {
            Action::Run {
                args,
                check,
                step,
                kill,
            } => {
                sim.under_faults(args, *check, step.as_deref(), *kill)
                    .await?;
            }
            Action::Resolve {
                decision,
                fallback,
                wait,
            } => sim.resolve(decision, fallback, *wait).await?,
            Action::Between => {
                schedule::forget(sim);
                schedule::step_clock(sim);
            }
            Action::Pause { secs } => sim.advance(Duration::from_secs(*secs)).await,
        }
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
