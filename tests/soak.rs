//! The crash soak: many steps across every scenario, delegated to four scripted agents that do
//! not deduplicate, answer 503 before or after processing, drop streams and forget finished
//! tasks, while `delegate` (some with `--follow`), `reconcile` (some with `--follow-for`),
//! `follow`, `reply` and `compensate` child processes are SIGKILLed at random moments and run
//! again until the journal is quiet. Then the invariants:
//!
//! 1. exactly one remote task per journaled `messageId` (attempts and compensations; a `direct`
//!    answer creates none and may be sent twice, as documented), none for a message never
//!    sent, and no message on any agent that the journal does not hold;
//! 2. every attempt's state equals its task's state on the agent (or `LOST` for a forgotten
//!    task);
//! 3. no pending question lost: every task waiting for input is journaled with its question;
//! 4. no artifact duplicated: each artifact holds exactly what the agent produced, once;
//! 5. no compensation sent twice: one cancellation per booking, each verified gone;
//! 6. no reply sent twice: at most one user message per task after its first;
//! 7. the journal is consistent (integrity, foreign keys, event chains, per-state data).
//!
//! Finished tasks are forgotten through the agents' forget control rather than a
//! `forget_after` timer: the soak forgets a task only once its end is journaled (a timer could
//! fire while every pass that would journal it is being killed, and a forgotten task cannot be
//! found by the look before a resend). A few running tasks are forgotten too: they must end
//! `LOST`, never resent.
//!
//! Seeded (`rand::rngs::StdRng`): the seed is printed first and in every failure, and
//! `SOAK_SEED=N` replays the same choices (the kill moments and the agents' timing still vary).
//! Size: `SOAK_STEPS` (default 300) and `SOAK_KILLS` (default 30, kills that landed on a running
//! process). `scripts/soak` runs the full size (2,000 steps, 200 kills) and prints the figures.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::os::unix::process::ExitStatusExt as _;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use a2a_recover::scripted_agent::{AgentConfig, DropMode, FailMode, ScriptedAgent, Stats};
use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};
use serde_json::Value;

use crate::common::child::Guarded;
use crate::common::commands::{attempts, spawn, the_attempt};
use crate::common::journal::assert_consistent;
use crate::common::wait::{GUARD, wait_until};
use crate::common::{Background, TestEnv, agent, code, stderr};

/// The answer every reply gives to `two rooms or one?`.
const ANSWER: &str = "two";

/// What a child process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Kind {
    Delegate,
    Reconcile,
    Follow,
    Reply,
    Compensate,
}

/// One step of the soak's plan.
#[derive(Debug, Clone)]
struct Planned {
    /// `wN/sM`.
    name: String,
    /// Its workflow's index.
    workflow: usize,
    /// The message text (its first word is the scenario).
    text: String,
    /// `--agent URL` or `--skill soak`, then any further flags.
    args: Vec<String>,
    /// Whether the step waits for an answer that the soak gives (`ask` steps, every other one).
    answer: bool,
}

/// A child process being run, maybe with a SIGKILL scheduled.
struct Run {
    kind: Kind,
    label: String,
    child: Guarded,
    started: Instant,
    kill_at: Option<Instant>,
    killed: bool,
    log: PathBuf,
}

/// The soak's figures.
#[derive(Debug, Default)]
struct Figures {
    processes: BTreeMap<Kind, usize>,
    kills: BTreeMap<Kind, usize>,
    exits: BTreeMap<(Kind, i32), usize>,
    forgotten: usize,
    forgotten_running: usize,
    rounds: usize,
    checked: BTreeMap<&'static str, usize>,
}

impl Figures {
    fn total_kills(&self) -> usize {
        self.kills.values().sum()
    }
}

struct Soak {
    env: TestEnv,
    seed: u64,
    rng: StdRng,
    agents: Vec<Background<ScriptedAgent>>,
    plan: Vec<Planned>,
    /// Workflows whose effects the soak compensates.
    sagas: BTreeSet<usize>,
    kill_target: usize,
    /// Average run time of an unkilled child, per kind (ms), to aim the kills.
    typical: HashMap<Kind, f64>,
    figures: Figures,
    serial: usize,
    forgotten: BTreeSet<String>,
    /// Plan steps queued or being delegated: their workflow is not compensated meanwhile.
    pending: BTreeSet<usize>,
    /// The share of the plan journaled so far (1 while settling).
    progress: f64,
}

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|e| panic!("{name}={v} is not a number: {e}")),
        Err(_) => default,
    }
}

impl Soak {
    fn new() -> Self {
        let seed = env_number("SOAK_SEED", rand::rng().random());
        let steps = env_number("SOAK_STEPS", 300) as usize;
        let kill_target = env_number("SOAK_KILLS", 30) as usize;
        say(&format!(
            "soak: seed {seed} (replay with SOAK_SEED={seed}), {steps} steps, {kill_target} kills"
        ));
        let mut rng = StdRng::seed_from_u64(seed);
        let tick = Duration::from_millis(10);
        let skills = vec!["soak".to_owned()];
        let configs = [
            // 503 before processing (nothing created), streams cut cleanly.
            AgentConfig {
                name: "before".to_owned(),
                fail_rate: 0.2,
                fail_mode: FailMode::Before,
                drop_stream_after: Some(3),
                ..AgentConfig::default()
            },
            // 503 after processing (the task exists), streams reset mid-body.
            AgentConfig {
                name: "after".to_owned(),
                fail_rate: 0.2,
                fail_mode: FailMode::After,
                drop_stream_after: Some(2),
                drop_mode: DropMode::Reset,
                ..AgentConfig::default()
            },
            // Refuses client context ids: an INTENT is looked for by time and history.
            AgentConfig {
                name: "no-context".to_owned(),
                refuse_context_id: true,
                fail_rate: 0.15,
                fail_mode: FailMode::After,
                drop_stream_after: Some(4),
                ..AgentConfig::default()
            },
            // Streams one event at a time.
            AgentConfig {
                name: "terse".to_owned(),
                fail_rate: 0.1,
                fail_mode: FailMode::Before,
                drop_stream_after: Some(1),
                ..AgentConfig::default()
            },
        ];
        let agents: Vec<_> = configs
            .into_iter()
            .map(|cfg| {
                agent(AgentConfig {
                    tick,
                    skills: skills.clone(),
                    dedup: false,
                    seed: rng.random(),
                    ..cfg
                })
            })
            .collect();
        let mut soak = Self {
            env: TestEnv::new(),
            seed,
            rng,
            agents,
            plan: Vec::new(),
            sagas: BTreeSet::new(),
            kill_target,
            typical: HashMap::new(),
            figures: Figures::default(),
            serial: 0,
            forgotten: BTreeSet::new(),
            pending: BTreeSet::new(),
            progress: 0.0,
        };
        soak.make_plan(steps);
        soak
    }

    /// Fails the test with the seed in the message, keeping a copy of the journal and the
    /// children's stderr for a post-mortem.
    #[track_caller]
    fn fail(&self, what: &str) -> ! {
        let keep = std::env::temp_dir().join(format!("a2a-recover-soak-{}", self.seed));
        let _ = std::fs::create_dir_all(keep.join("logs"));
        for (from, to) in [
            (self.env.journal(), keep.join("journal.sqlite3")),
            (
                a2a_recover::recovery::lock::lock_path(&self.env.journal()),
                keep.join("journal.sqlite3.lock"),
            ),
        ] {
            let _ = std::fs::copy(from, to);
        }
        if let Ok(logs) = std::fs::read_dir(self.env.path().join("logs")) {
            for e in logs.flatten() {
                let _ = std::fs::copy(e.path(), keep.join("logs").join(e.file_name()));
            }
        }
        panic!(
            "soak seed {} (replay: SOAK_SEED={}): {what}\n(journal and logs kept in {})",
            self.seed,
            self.seed,
            keep.display()
        )
    }

    #[track_caller]
    fn check(&self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.fail(&what());
        }
    }

    fn make_plan(&mut self, steps: usize) {
        let per_workflow = 10;
        for i in 0..steps {
            let workflow = i / per_workflow;
            let saga = workflow % 4 == 3;
            if saga {
                self.sagas.insert(workflow);
            }
            let name = format!("w{workflow}/s{i}");
            let a = self.rng.random_range(0..self.agents.len());
            let url = self.agents[a].url();
            let by_agent = vec!["--agent".to_owned(), url.clone()];
            let by_skill = vec!["--skill".to_owned(), "soak".to_owned()];
            let roll = self.rng.random_range(0..100);
            let (text, args, answer) = if saga {
                // A booking with a declared effect, undone by a message to its agent.
                let mut args = by_agent;
                args.extend([
                    "--effect".to_owned(),
                    "--compensate".to_owned(),
                    "cancel {task_id}".to_owned(),
                    "--verify-url".to_owned(),
                    format!("{url}_scripted/bookings/{{task_id}}"),
                ]);
                (format!("book room {i}"), args, false)
            } else {
                match roll {
                    0..30 => {
                        let args = if roll < 10 { by_skill } else { by_agent };
                        (format!("hello {i}"), args, false)
                    }
                    30..55 => {
                        let n = self.rng.random_range(1..=8);
                        let mut args = by_agent;
                        // Some are followed by the delegate itself.
                        if self.rng.random_bool(0.3) {
                            args.push("--follow".to_owned());
                        }
                        (format!("work:{n} step {i}"), args, false)
                    }
                    55..67 => ("ask".to_owned(), by_agent, i % 2 == 0),
                    67..75 => (format!("fail {i}"), by_skill, false),
                    75..82 => {
                        let args = if roll < 79 { by_skill } else { by_agent };
                        (format!("reject {i}"), args, false)
                    }
                    _ => (format!("direct {i}"), by_agent, false),
                }
            };
            self.plan.push(Planned {
                name,
                workflow,
                text,
                args,
                answer,
            });
        }
    }

    // -----------------------------------------------------------------------------------------
    // Children
    // -----------------------------------------------------------------------------------------

    /// Starts the binary; with `may_kill`, maybe schedules a SIGKILL at a random moment.
    fn start(&mut self, kind: Kind, args: &[String], may_kill: bool) -> Run {
        self.serial += 1;
        let log = self.env.path().join(format!("logs/{}.err", self.serial));
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        let child = Guarded::spawn(
            self.env
                .std_cmd()
                .args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).unwrap()),
            "a2a-recover",
        );
        *self.figures.processes.entry(kind).or_default() += 1;
        let p = self.kill_chance(kind);
        let kill_at = (may_kill && p > 0.0 && self.rng.random_bool(p)).then(|| {
            let typical = self.typical.get(&kind).copied().unwrap_or(40.0);
            let ms = self.rng.random_range(0.0..=typical * 1.2);
            Instant::now() + Duration::from_secs_f64(ms / 1000.0)
        });
        Run {
            kind,
            label: args.join(" "),
            child,
            started: Instant::now(),
            kill_at,
            killed: false,
            log,
        }
    }

    /// The chance that a child of this kind gets a SIGKILL: high while its kind has fewer kills
    /// than its share of the target (half for delegates, a fifth for passes, a tenth for each
    /// other kind), low once it has its share, nil once the target is met (or, for delegates,
    /// while the kills are ahead of the progress).
    fn kill_chance(&self, kind: Kind) -> f64 {
        let share = match kind {
            Kind::Delegate => self.kill_target / 2,
            Kind::Reconcile => self.kill_target / 5,
            Kind::Follow | Kind::Reply | Kind::Compensate => (self.kill_target / 10).max(1),
        };
        let had = self.figures.kills.get(&kind).copied().unwrap_or(0);
        // The rarer kinds get their share whenever they run (the target is a minimum).
        if had < share && kind != Kind::Delegate {
            return 0.6;
        }
        // The rest is spread over the run: at most the target's share of the progress so far.
        let allowed = (self.kill_target as f64 * (self.progress + 0.1)).ceil() as usize;
        if self.figures.total_kills() >= self.kill_target.min(allowed) {
            return 0.0;
        }
        if had < share { 0.3 } else { 0.1 }
    }

    /// Waits for every run (SIGKILLing those whose moment came), checks the exit codes, and
    /// returns the codes of those that exited (`None`: killed).
    fn finish(&mut self, mut runs: Vec<Run>) -> Vec<(Kind, String, Option<i32>)> {
        let guard = Instant::now() + Duration::from_secs(120);
        let mut done = Vec::new();
        while !runs.is_empty() {
            let now = Instant::now();
            let mut i = 0;
            while i < runs.len() {
                let run = &mut runs[i];
                if let Some(status) = run.child.try_wait().expect("wait") {
                    let run = runs.swap_remove(i);
                    done.push(self.exited(run, status));
                    continue;
                }
                if run.kill_at.is_some_and(|t| now >= t) && !run.killed {
                    run.killed = true;
                    let _ = run.child.kill();
                }
                i += 1;
            }
            if Instant::now() > guard {
                let labels: Vec<_> = runs.iter().map(|r| r.label.clone()).collect();
                for r in &mut runs {
                    let _ = r.child.kill();
                }
                self.fail(&format!("children hung for 120 s: {labels:?}"));
            }
            // The tick of a scheduler over many children (kills fall due by the clock).
            std::thread::sleep(Duration::from_millis(2));
        }
        done
    }

    fn exited(
        &mut self,
        run: Run,
        status: std::process::ExitStatus,
    ) -> (Kind, String, Option<i32>) {
        if status.signal() == Some(9) && run.killed {
            *self.figures.kills.entry(run.kind).or_default() += 1;
            return (run.kind, run.label, None);
        }
        let err = std::fs::read_to_string(&run.log).unwrap_or_default();
        let Some(c) = status.code() else {
            self.fail(&format!("`{}` died: {status:?}\n{err}", run.label));
        };
        *self.figures.exits.entry((run.kind, c)).or_default() += 1;
        let allowed: &[i32] = match run.kind {
            // A reply whose earlier copy was delivered meanwhile finds no question (exit 2).
            Kind::Reply => &[0, 2, 3, 4],
            _ => &[0, 3, 4],
        };
        self.check(allowed.contains(&c), || {
            format!("`{}` exited {c}:\n{err}", run.label)
        });
        if !run.killed {
            let ms = run.started.elapsed().as_secs_f64() * 1000.0;
            let t = self.typical.entry(run.kind).or_insert(ms);
            *t = 0.8 * *t + 0.2 * ms;
        }
        (run.kind, run.label, Some(c))
    }

    fn delegate_args(p: &Planned) -> Vec<String> {
        let mut args = vec!["delegate".to_owned(), p.name.clone()];
        args.extend(p.args.iter().cloned());
        args.push(p.text.clone());
        args
    }

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    // -----------------------------------------------------------------------------------------
    // The journal, read beside the children
    // -----------------------------------------------------------------------------------------

    fn db(&self) -> rusqlite::Connection {
        let conn = rusqlite::Connection::open(self.env.journal()).expect("open the journal");
        conn.busy_timeout(Duration::from_secs(30)).unwrap();
        conn
    }

    /// Every journaled attempt: (step name, attempt row).
    fn rows(&self) -> Vec<Row> {
        if !self.env.journal().exists() {
            return Vec::new();
        }
        let conn = self.db();
        let mut stmt = conn
            .prepare(
                "SELECT w.name || '/' || s.name, a.id, a.number, a.state, a.message_id, \
                 a.task_id, a.interface_url, a.pending_question, a.effect, w.state \
                 FROM attempts a JOIN steps s ON s.id = a.step_id \
                 JOIN workflows w ON w.id = s.workflow_id ORDER BY a.id",
            )
            .unwrap();
        stmt.query_map([], |r| {
            Ok(Row {
                step: r.get(0)?,
                id: r.get(1)?,
                number: r.get(2)?,
                state: r.get(3)?,
                message_id: r.get(4)?,
                task_id: r.get(5)?,
                interface_url: r.get(6)?,
                pending_question: r.get(7)?,
                effect: r.get(8)?,
                workflow_state: r.get(9)?,
            })
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    }

    /// What the journal holds, as one string: unchanged between two passes means quiet.
    fn digest(&self) -> String {
        let conn = self.db();
        let q = |sql: &str| -> String {
            conn.query_row(sql, [], |r| r.get::<_, Option<String>>(0))
                .unwrap()
                .unwrap_or_default()
        };
        [
            q("SELECT group_concat(id || state || ifnull(task_id, '') || ifnull(effect, ''), ',') \
               FROM (SELECT * FROM attempts ORDER BY id)"),
            q("SELECT group_concat(id || state, ',') FROM (SELECT * FROM replies ORDER BY id)"),
            q("SELECT group_concat(name || state, ',') FROM (SELECT * FROM workflows ORDER BY id)"),
        ]
        .join("|")
    }

    fn agent_of(&self, interface_url: Option<&str>) -> Option<usize> {
        let url = interface_url?;
        self.agents.iter().position(|a| a.url() == url)
    }

    // -----------------------------------------------------------------------------------------
    // The run
    // -----------------------------------------------------------------------------------------

    fn register_agents(&mut self) {
        for i in 0..self.agents.len() {
            let url = self.agents[i].url();
            let out = self.env.run(["agents", "add", &url]);
            assert_eq!(code(&out), 0, "{}", stderr(&out));
        }
    }

    /// The extra processes of a round: a pass, a follower, a reply, a compensation.
    fn extras(&mut self, rows: &[Row], may_kill: bool, runs: &mut Vec<Run>) {
        if self.rng.random_bool(0.6) {
            let mut args = Self::args(&["reconcile", "--concurrency", "4", "--deadline", "30s"]);
            // Some passes also follow what still runs.
            if self.rng.random_bool(0.3) {
                args.extend(Self::args(&["--follow-for", "1s"]));
            }
            runs.push(self.start(Kind::Reconcile, &args, may_kill));
        }
        let running: Vec<&Row> = rows
            .iter()
            .filter(|r| matches!(r.state.as_str(), "SUBMITTED" | "WORKING" | "SENT"))
            // `follow` takes the steps an operator named (`~compensate` steps are compensate's).
            .filter(|r| !r.step.contains('~'))
            .collect();
        if !running.is_empty() && self.rng.random_bool(0.4) {
            let r = running[self.rng.random_range(0..running.len())];
            let args = Self::args(&["follow", &r.step, "--until", "3s"]);
            runs.push(self.start(Kind::Follow, &args, may_kill));
        }
        let asked: Vec<&Row> = rows
            .iter()
            .filter(|r| r.state == "INPUT_REQUIRED")
            .filter(|r| self.plan.iter().any(|p| p.name == r.step && p.answer))
            .collect();
        if !asked.is_empty() && self.rng.random_bool(0.4) {
            let r = asked[self.rng.random_range(0..asked.len())];
            let args = Self::args(&["reply", &r.step, ANSWER]);
            runs.push(self.start(Kind::Reply, &args, may_kill));
        }
        let ready = self.sagas_ready(rows);
        if !ready.is_empty() && self.rng.random_bool(0.3) {
            let w = ready[self.rng.random_range(0..ready.len())];
            let args = Self::args(&["compensate", &format!("w{w}")]);
            runs.push(self.start(Kind::Compensate, &args, may_kill));
        }
    }

    /// Saga workflows whose steps are all journaled, none being delegated, and not yet
    /// COMPENSATED.
    fn sagas_ready(&self, rows: &[Row]) -> Vec<usize> {
        self.sagas
            .iter()
            .copied()
            .filter(|w| !self.pending.iter().any(|&i| self.plan[i].workflow == *w))
            .filter(|w| {
                let steps: Vec<&Planned> = self.plan.iter().filter(|p| p.workflow == *w).collect();
                steps.iter().all(|p| rows.iter().any(|r| r.step == p.name))
                    && rows
                        .iter()
                        .filter(|r| r.step.starts_with(&format!("w{w}/")))
                        .all(|r| r.workflow_state != "COMPENSATED")
            })
            .collect()
    }

    /// Forgets, on the agents, a few tasks whose terminal state is journaled (as `forget_after`
    /// would, but at a moment chosen so that the end is journaled by construction: a timer
    /// could fire before a killed pass had journaled it, and a forgotten task cannot be found
    /// by the look before a resend).
    fn forget_some(&mut self, rows: &[Row]) {
        let finished: Vec<(usize, String)> = rows
            .iter()
            .filter(|r| matches!(r.state.as_str(), "COMPLETED" | "FAILED" | "REJECTED"))
            .filter_map(|r| {
                Some((
                    self.agent_of(r.interface_url.as_deref())?,
                    r.task_id.clone()?,
                ))
            })
            .filter(|(_, t)| !self.forgotten.contains(t))
            .collect();
        for _ in 0..3 {
            if finished.is_empty() || !self.rng.random_bool(0.3) {
                break;
            }
            let (a, task) = finished[self.rng.random_range(0..finished.len())].clone();
            if self.forgotten.insert(task.clone()) && self.agents[a].get().forget_task(&task) {
                self.figures.forgotten += 1;
            }
        }
        // Now and then a retention gap: a task forgotten while the journal has it running. It
        // must end LOST, never be resent.
        let running: Vec<(usize, String)> = rows
            .iter()
            .filter(|r| matches!(r.state.as_str(), "SUBMITTED" | "WORKING"))
            .filter(|r| !r.step.contains('~'))
            .filter_map(|r| {
                Some((
                    self.agent_of(r.interface_url.as_deref())?,
                    r.task_id.clone()?,
                ))
            })
            .filter(|(_, t)| !self.forgotten.contains(t))
            .collect();
        if !running.is_empty() && self.rng.random_bool(0.15) {
            let (a, task) = running[self.rng.random_range(0..running.len())].clone();
            if self.forgotten.insert(task.clone()) && self.agents[a].get().forget_task(&task) {
                self.figures.forgotten_running += 1;
            }
        }
    }

    /// Phase 1: every step delegated (some several times, some killed), with passes, followers,
    /// replies and compensations running beside.
    fn delegate_all(&mut self) {
        let mut queue: Vec<usize> = (0..self.plan.len()).collect();
        self.pending = queue.iter().copied().collect();
        while !queue.is_empty() {
            self.progress = 1.0 - self.pending.len() as f64 / self.plan.len() as f64;
            self.figures.rounds += 1;
            let batch: Vec<usize> = queue.drain(..queue.len().min(5)).collect();
            let rows = self.rows();
            let mut runs = Vec::new();
            for &i in &batch {
                let args = Self::delegate_args(&self.plan[i]);
                runs.push(self.start(Kind::Delegate, &args, true));
            }
            self.extras(&rows, true, &mut runs);
            let results = self.finish(runs);
            let rows = self.rows();
            self.forget_some(&rows);
            // A step whose intent was never committed (killed first) is delegated again; one
            // whose send was cut short is delegated again or left to reconcile.
            for &i in &batch {
                let name = &self.plan[i].name;
                let journaled = rows.iter().any(|r| &r.step == name);
                // A workflow being compensated takes no sends: what is journaled is settled
                // by `compensate` and `reconcile` (a delegate would be refused, exit 2).
                let open = rows
                    .iter()
                    .find(|r| &r.step == name)
                    .is_none_or(|r| r.workflow_state == "ACTIVE");
                let unsettled = results.iter().any(|(k, label, c)| {
                    *k == Kind::Delegate
                        && label.split(' ').nth(1) == Some(name.as_str())
                        && *c != Some(0)
                });
                if !journaled || (open && unsettled && self.rng.random_bool(0.5)) {
                    queue.push(i);
                } else {
                    self.pending.remove(&i);
                }
            }
        }
    }

    /// Phase 2: passes (killed until the kill target is met) until the journal is quiet: a
    /// pass exits 0, or 4 with nothing changed since the previous quiet pass.
    fn settle(&mut self) {
        self.progress = 1.0;
        let mut last: Option<String> = None;
        for _ in 0..400 {
            self.figures.rounds += 1;
            let rows = self.rows();
            let killing = self.figures.total_kills() < self.kill_target;
            if killing {
                let mut runs = Vec::new();
                self.extras(&rows, true, &mut runs);
                if runs.is_empty() {
                    let args = Self::args(&["reconcile", "--concurrency", "4"]);
                    runs.push(self.start(Kind::Reconcile, &args, true));
                }
                self.finish(runs);
                continue;
            }
            // Answer the questions the plan answers, then an unkilled pass and compensations.
            let mut runs = Vec::new();
            for r in rows.iter().filter(|r| r.state == "INPUT_REQUIRED") {
                if self.plan.iter().any(|p| p.name == r.step && p.answer) {
                    let args = Self::args(&["reply", &r.step, ANSWER]);
                    runs.push(self.start(Kind::Reply, &args, false));
                }
            }
            self.finish(runs);
            let args = Self::args(&["reconcile", "--concurrency", "8"]);
            let run = self.start(Kind::Reconcile, &args, false);
            let mut codes: Vec<i32> = self
                .finish(vec![run])
                .into_iter()
                .filter_map(|(_, _, c)| c)
                .collect();
            for w in self.sagas_ready(&self.rows()) {
                let args = Self::args(&["compensate", &format!("w{w}")]);
                let run = self.start(Kind::Compensate, &args, false);
                codes.extend(self.finish(vec![run]).into_iter().filter_map(|(_, _, c)| c));
            }
            if codes.iter().all(|&c| c == 0 || c == 4) {
                let digest = self.digest();
                if codes.iter().all(|&c| c == 0) || last.as_ref() == Some(&digest) {
                    return;
                }
                last = Some(digest);
            } else {
                last = None;
                // Between rounds of a settle bounded by rounds, not by time (see `wait`).
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        self.fail("the journal is not quiet after 400 rounds");
    }

    // -----------------------------------------------------------------------------------------
    // The invariants
    // -----------------------------------------------------------------------------------------

    #[expect(
        clippy::too_many_lines,
        reason = "the numbered invariants, checked against one snapshot"
    )]
    fn verify(&mut self) {
        let attempts = assert_consistent(&self.env.journal());
        self.figures.checked.insert("journal consistent", attempts);
        let rows = self.rows();
        let stats: Vec<Stats> = self.agents.iter().map(Background::stats).collect();
        for s in &stats {
            self.check(s.messages_dropped == 0, || {
                "the agents dropped messages".into()
            });
        }
        let conn = self.db();
        let replies: Vec<(i64, String, String)> = conn
            .prepare("SELECT attempt_id, message_id, state FROM replies")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let mut journaled: BTreeSet<&str> = rows.iter().map(|r| r.message_id.as_str()).collect();
        journaled.extend(replies.iter().map(|r| r.1.as_str()));

        // 1. One task per journaled messageId; nothing on the agents the journal lacks.
        let mut one_task = 0;
        for r in &rows {
            let agent = self.agent_of(r.interface_url.as_deref());
            let tasks = agent.map_or(0, |a| {
                stats[a]
                    .tasks_per_message_id
                    .get(&r.message_id)
                    .copied()
                    .unwrap_or(0)
            });
            let want = match r.state.as_str() {
                "REPLIED" | "REFUSED" | "INTENT" => 0,
                // Every agent here lists tasks and keeps history: a look is always conclusive.
                "UNCERTAIN" => self.fail(&format!("{} attempt {} is UNCERTAIN", r.step, r.number)),
                _ => 1,
            };
            self.check(tasks == want, || {
                format!(
                    "{} attempt {} ({}) has {tasks} remote tasks",
                    r.step, r.number, r.state
                )
            });
            one_task += 1;
        }
        self.figures
            .checked
            .insert("one task per messageId", one_task);
        let mut unknown_messages = 0;
        for s in &stats {
            for m in &s.messages {
                self.check(journaled.contains(m.message_id.as_str()), || {
                    format!("a message the journal does not hold: {m:?}")
                });
                unknown_messages += 1;
            }
            for (mid, n) in &s.tasks_per_message_id {
                self.check(*n <= 1, || format!("messageId {mid} created {n} tasks"));
            }
        }
        self.figures
            .checked
            .insert("messages journaled first", unknown_messages);

        // 2. Every attempt's state is its task's state on the agent (or LOST when forgotten).
        let mut states = 0;
        for r in rows.iter().filter(|r| r.task_id.is_some()) {
            let a = self.agent_of(r.interface_url.as_deref()).unwrap();
            let task = r.task_id.as_deref().unwrap();
            let Some(t) = stats[a].tasks.iter().find(|t| t.id == task) else {
                self.fail(&format!("{} task {task} unknown to its agent", r.step));
            };
            let remote = serde_json::to_value(&t.state).unwrap();
            let remote = remote.as_str().unwrap().trim_start_matches("TASK_STATE_");
            self.check(
                r.state == remote || (r.state == "LOST" && t.forgotten),
                || {
                    format!(
                        "{} attempt {}: journal {}, agent {remote}",
                        r.step, r.number, r.state
                    )
                },
            );
            if r.state == "LOST" {
                *self
                    .figures
                    .checked
                    .entry("LOST, never resent")
                    .or_default() += 1;
            }
            // 3. No pending question lost (a task forgotten before it was read can lose none).
            if remote == "INPUT_REQUIRED" && r.state != "LOST" {
                self.check(
                    r.pending_question
                        .as_deref()
                        .is_some_and(|q| q.contains("two rooms or one?")),
                    || format!("{}: the question was lost", r.step),
                );
                *self.figures.checked.entry("questions kept").or_default() += 1;
            }
            states += 1;
        }
        self.figures
            .checked
            .insert("states equal the agent's", states);

        // 4. No artifact duplicated: each holds exactly what the agent produced.
        let mut artifacts = 0;
        for r in rows.iter().filter(|r| r.state == "COMPLETED") {
            let a = self.agent_of(r.interface_url.as_deref()).unwrap();
            let Some(sent) = stats[a]
                .messages
                .iter()
                .find(|m| m.message_id == r.message_id)
            else {
                self.fail(&format!("{}: the agent never received it", r.step));
            };
            let got = Self::artifacts(&conn, r.id);
            let want = expected_artifacts(&sent.text, &stats[a], r.task_id.as_deref().unwrap());
            self.check(got == want, || {
                format!("{} artifacts: journal {got:?}, expected {want:?}", r.step)
            });
            artifacts += got.len();
        }
        self.figures.checked.insert("artifacts exact", artifacts);

        // 5. No compensation sent twice; every booking of a compensated saga is gone.
        let mut cancels: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
        for s in &stats {
            for m in &s.messages {
                if let Some(task) = m.text.strip_prefix("cancel ") {
                    cancels
                        .entry(task.to_owned())
                        .or_default()
                        .insert(m.message_id.as_str());
                }
            }
        }
        for (task, ids) in &cancels {
            self.check(ids.len() == 1, || {
                format!("booking {task} was cancelled by {} messages", ids.len())
            });
        }
        let mut compensated = 0;
        let mut absent = 0;
        for r in rows.iter().filter(|r| r.effect.is_some()) {
            if r.workflow_state != "COMPENSATED" {
                continue;
            }
            match r.effect.as_deref() {
                // Undone by a cancellation of its own booking (LOST tasks included: their
                // booking was made before the agent forgot them).
                Some("compensated") => {
                    let task = r.task_id.as_deref().unwrap_or_default();
                    self.check(cancels.contains_key(task), || {
                        format!("{}: compensated without a cancellation", r.step)
                    });
                    compensated += 1;
                }
                // Verified absent, or never created (its send proven absent).
                Some("absent") => absent += 1,
                other => self.fail(&format!(
                    "{} ({}): effect {other:?} in a COMPENSATED workflow",
                    r.step, r.state
                )),
            }
        }
        self.figures.checked.insert("effects absent", absent);
        self.figures
            .checked
            .insert("compensations sent once", cancels.len());
        self.figures
            .checked
            .insert("effects compensated", compensated);
        for w in &self.sagas {
            let state = rows
                .iter()
                .find(|r| r.step.starts_with(&format!("w{w}/")))
                .map(|r| r.workflow_state.clone());
            self.check(state.as_deref() == Some("COMPENSATED"), || {
                format!("saga w{w} ended {state:?}")
            });
        }

        // 6. No reply sent twice: at most one message per task after its first.
        let mut per_task: HashMap<&str, usize> = HashMap::new();
        for s in &stats {
            for m in &s.messages {
                if let Some(t) = m.task_id.as_deref() {
                    *per_task.entry(t).or_default() += 1;
                }
            }
        }
        for (task, n) in &per_task {
            self.check(*n == 1, || format!("task {task} got {n} replies"));
        }
        self.figures
            .checked
            .insert("replies sent once", per_task.len());
        for (_, _, state) in &replies {
            self.check(state == "DELIVERED", || format!("a reply ended {state}"));
        }
    }

    /// The artifacts of an attempt, `name` → text: each artifact's own parts, then those of
    /// its appended chunks in order (docs/journal.md, version 4).
    fn artifacts(conn: &rusqlite::Connection, attempt: i64) -> BTreeMap<String, String> {
        conn.prepare(
            "SELECT artifact_id, parts_json, 0 FROM artifacts WHERE attempt_id = ?1
             UNION ALL
             SELECT artifact_id, parts_json, seq FROM artifact_chunks WHERE attempt_id = ?1
             ORDER BY 1, 3",
        )
        .unwrap()
        .query_map([attempt], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })
        .unwrap()
        .fold(BTreeMap::new(), |mut all, r| {
            let (id, parts) = r.unwrap();
            let parts: Value = serde_json::from_str(&parts).unwrap();
            all.entry(id)
                .or_insert_with(String::new)
                .push_str(&a2a_recover::a2a::parts_text(&parts));
            all
        })
    }
}

/// One journaled attempt.
#[derive(Debug, Clone)]
struct Row {
    step: String,
    id: i64,
    number: i64,
    state: String,
    message_id: String,
    task_id: Option<String>,
    interface_url: Option<String>,
    pending_question: Option<String>,
    effect: Option<String>,
    workflow_state: String,
}

/// What the scripted agent's task for `text` holds once COMPLETED (see `scenario.rs`).
fn expected_artifacts(text: &str, stats: &Stats, task: &str) -> BTreeMap<String, String> {
    let word = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('['))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let one = |name: &str, value: String| BTreeMap::from([(name.to_owned(), value)]);
    if let Some(n) = word.strip_prefix("work:") {
        let n: u32 = n.parse().unwrap();
        let chunks: Vec<String> = (1..=n).map(|i| format!("chunk {i};")).collect();
        return one("result", chunks.concat());
    }
    match word.as_str() {
        "ask" => {
            let reply = stats
                .messages
                .iter()
                .find(|m| m.task_id.as_deref() == Some(task))
                .map_or_else(String::new, |m| m.text.clone());
            one("booking", format!("booked: {reply}"))
        }
        // The booking this cancellation undid (a second one would find nothing to cancel).
        "cancel" => one(
            "cancellation",
            format!("canceled: {}", text.trim_start_matches("cancel ").trim()),
        ),
        _ => one("echo", text.to_owned()),
    }
}

#[expect(clippy::print_stderr, reason = "the soak reports its seed and figures")]
fn say(line: &str) {
    eprintln!("{line}");
}

#[test]
fn soak_sigkill_at_random_moments_loses_nothing_and_duplicates_nothing() {
    let started = Instant::now();
    let mut soak = Soak::new();
    soak.register_agents();
    soak.delegate_all();
    soak.settle();
    soak.verify();
    let f = &soak.figures;
    let kills = f.total_kills();
    soak.check(kills >= soak.kill_target, || {
        format!("only {kills} of {} kills landed", soak.kill_target)
    });
    say(&format!(
        "soak figures: seed {}, {} steps, {} SIGKILLs survived {:?}, {} processes {:?}, \
         {} rounds, {} finished tasks forgotten, {} running tasks forgotten (LOST), \
         exits {:?}, checked {:?}, {:.1} s",
        soak.seed,
        soak.plan.len(),
        kills,
        f.kills,
        f.processes.values().sum::<usize>(),
        f.processes,
        f.rounds,
        f.forgotten,
        f.forgotten_running,
        f.exits,
        f.checked,
        started.elapsed().as_secs_f64()
    ));
}

// ---------------------------------------------------------------------------------------------
// What the soak found, pinned as deterministic tests
// ---------------------------------------------------------------------------------------------

/// Delegates a booking with a declared effect undone by `cancel {task_id}` to `a`.
fn booking(env: &TestEnv, a: &Background<ScriptedAgent>, step: &str) -> std::process::Output {
    let url = a.url();
    env.run([
        "delegate",
        step,
        "--agent",
        &url,
        "--effect",
        "--compensate",
        "cancel {task_id}",
        "--verify-url",
        &format!("{url}_scripted/bookings/{{task_id}}"),
        "book a room",
    ])
}

fn attempt_rows(env: &TestEnv, target: &str) -> Vec<Value> {
    attempts(env, Some(target))
}

#[test]
fn a_compensation_answered_503_after_processing_is_found_not_left_intent() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        fail_mode: FailMode::After,
        ..AgentConfig::default()
    });
    assert_eq!(code(&booking(&env, &a, "trip/hotel")), 0);
    let out = env.run(["reconcile"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // The agent cancels the booking, then answers 503.
    a.get().fail_next(1);
    let out = env.run(["compensate", "trip"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let comp = attempt_rows(&env, "trip/hotel~compensate").remove(0);
    assert_eq!(comp["state"], "COMPLETED", "{comp}");
    let stats = a.stats();
    let mid = comp["messageId"].as_str().unwrap();
    assert_eq!(stats.tasks_per_message_id.get(mid), Some(&1));
    let cancels = stats
        .messages
        .iter()
        .filter(|m| m.text.starts_with("cancel "))
        .count();
    assert_eq!(cancels, 1);
    assert_eq!(attempt_rows(&env, "trip/hotel")[0]["effect"], "compensated");
    assert_consistent(&env.journal());
}

#[test]
fn an_effect_whose_send_was_refused_before_processing_is_absent_not_failed() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        fail_mode: FailMode::Before,
        ..AgentConfig::default()
    });
    // The send's outcome is unknown to the client: the attempt stays INTENT (exit 3).
    a.get().fail_next(1);
    assert_eq!(code(&booking(&env, &a, "trip/hotel")), 3);
    let out = env.run(["compensate", "trip"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let row = attempt_rows(&env, "trip/hotel").remove(0);
    assert_eq!(row["state"], "INTENT");
    assert_eq!(row["effect"], "absent", "{row}");
    assert_eq!(row["workflowState"], "COMPENSATED");
    assert!(
        a.stats().messages.is_empty(),
        "nothing was sent or cancelled"
    );
    assert_consistent(&env.journal());
}

#[test]
fn follow_stops_when_another_process_journaled_the_end_first() {
    let env = TestEnv::new();
    // An agent that cannot stream: follow polls GetTask.
    let a = agent(AgentConfig {
        no_streaming: true,
        tick: Duration::from_millis(20),
        ..AgentConfig::default()
    });
    let out = env.run(["delegate", "w/long", "--agent", &a.url(), "work:10000"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let task = the_attempt(&env, "w/long")["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let follow = spawn(
        &env,
        &[
            "follow",
            "w/long",
            "--max-reconnects",
            "3",
            "--format",
            "json",
        ],
    );
    // The follower has read the task running; then it ends and another pass journals that.
    wait_until("follow to read the task running", GUARD, || {
        attempt_rows(&env, "w/long")[0]["state"] == "WORKING"
    });
    assert!(a.get().complete_task(&task));
    let out = env.run(["reconcile"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(attempt_rows(&env, "w/long")[0]["state"], "COMPLETED");
    // The follower's next poll finds it terminal: it stops with exit 0, not "reconnects spent".
    let out = follow.wait_with_output().unwrap();
    assert_eq!(
        code(&out),
        0,
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        stderr(&out)
    );
}
