//! Fault schedules as data: every fault a run injects, as a list that can be written down,
//! shrunk and replayed.
//!
//! A run's faults come from one of two sources. Drawn: a generator of their own, seeded from the
//! run's seed apart from the workload's, chooses each fault as the run reaches it. Given: a
//! schedule says which faults happen, and no other does. Either way every fault that happened is
//! kept, in order, as the run's schedule; replaying that schedule on the same seed runs the same
//! run. The workload (agents, steps, the order of the processes) is drawn from the seed alone
//! (or given by a kept case, [`super::workload::Workload`]), so removing faults from a schedule
//! never changes it.

use std::fmt;
use std::sync::{Mutex, MutexGuard, PoisonError};

use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};
use serde::{Deserialize, Serialize};

use super::Sim;
use super::workload::Workload;
use super::world::Fault;

/// One fault of a schedule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The process it hits (numbered from 1 in the run), or after which it happens.
    pub process: u32,
    /// The process's command (its first words), to tell a case whose workload changed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub command: String,
    /// The exchange of that process it hits (numbered from 1); none for a fault between
    /// processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exchange: Option<u64>,
    /// The fault.
    pub fault: Fault,
    /// The agent (an index) a fault between processes happens to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<usize>,
    /// The step whose task the agent forgets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// Which of that step's tasks on the agent (from 0, in attempt order).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub nth: usize,
    /// How far the agent's clock steps back, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secs: Option<u64>,
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Entry {
    /// A fault between processes, after the current one.
    pub fn between(fault: Fault, agent: usize) -> Self {
        Self {
            process: 0,
            command: String::new(),
            exchange: None,
            fault,
            agent: Some(agent),
            step: None,
            nth: 0,
            secs: None,
        }
    }
}

impl fmt::Display for Entry {
    /// `7#2:lost-after` (process 7's exchange 2), `9:forgotten(0,w0/s1)` (after process 9).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.process)?;
        if let Some(n) = self.exchange {
            write!(f, "#{n}")?;
        }
        write!(f, ":{}", self.fault.name())?;
        let mut args: Vec<String> = Vec::new();
        args.extend(self.agent.map(|a| a.to_string()));
        args.extend(self.step.as_ref().map(|s| match self.nth {
            0 => s.clone(),
            n => format!("{s}.{n}"),
        }));
        args.extend(self.secs.map(|s| format!("-{s}s")));
        if !args.is_empty() {
            write!(f, "({})", args.join(","))?;
        }
        Ok(())
    }
}

/// Where a run's faults come from.
enum Source {
    /// Drawn from this generator; `rate` per mille of exchanges get a fault.
    Drawn { rng: StdRng, rate: u32 },
    /// Only these happen.
    Given(Vec<Entry>),
}

struct State {
    source: Source,
    process: u32,
    command: String,
    happened: Vec<Entry>,
    drift: Option<String>,
}

/// A run's fault source, and the schedule of what happened.
pub struct Faults(Mutex<State>);

impl Faults {
    /// Faults drawn from `seed` (apart from the workload's generator).
    pub fn drawn(seed: u64) -> Self {
        let mut rng = StdRng::seed_from_u64(!seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let rate = rng.random_range(0..250);
        Self::new(Source::Drawn { rng, rate })
    }

    /// Only the faults of `schedule`.
    pub fn given(schedule: Vec<Entry>) -> Self {
        Self::new(Source::Given(schedule))
    }

    fn new(source: Source) -> Self {
        Self(Mutex::new(State {
            source,
            process: 0,
            command: String::new(),
            happened: Vec::new(),
            drift: None,
        }))
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Process `process` starts, running `command`; a given schedule that expected another
    /// command there was made for another workload.
    pub fn start(&self, process: u32, command: &str) {
        let mut s = self.state();
        s.process = process;
        command.clone_into(&mut s.command);
        if s.drift.is_some() {
            return;
        }
        let drift = match &s.source {
            Source::Given(schedule) => schedule
                .iter()
                .find(|e| e.process == process && !e.command.is_empty() && e.command != command)
                .map(|e| {
                    format!(
                        "case drifted: process {process} runs `{command}`, the schedule says `{}` \
                         (the workload generator changed: find the case again, docs/reliability.md)",
                        e.command
                    )
                }),
            Source::Drawn { .. } => None,
        };
        s.drift = drift;
    }

    /// Makes process `process` (running `command`) the current one again: while several run at
    /// once, each poll is one's, and the faults it meets are its own.
    pub fn switch(&self, process: u32, command: &str) {
        let mut s = self.state();
        if s.process != process {
            s.process = process;
            command.clone_into(&mut s.command);
        }
    }

    /// What happens to exchange `n` of the current process: drawn by `draw` (from the
    /// generator, with the fault rate), or as the schedule says.
    pub fn exchange(
        &self,
        n: u64,
        draw: impl FnOnce(&mut StdRng, u32) -> Option<Fault>,
    ) -> Option<Fault> {
        let mut s = self.state();
        let process = s.process;
        let fault = match &mut s.source {
            Source::Drawn { rng, rate } => draw(rng, *rate),
            Source::Given(schedule) => schedule
                .iter()
                .find(|e| e.process == process && e.exchange == Some(n))
                .map(|e| e.fault),
        };
        if let Some(fault) = fault {
            let entry = Entry {
                exchange: Some(n),
                ..Entry::between(fault, 0)
            };
            s.keep(Entry {
                agent: None,
                ..entry
            });
        }
        fault
    }

    /// Where the next process is killed, when faults are drawn (a given schedule holds its kills
    /// as exchanges' faults).
    pub fn crash(&self) -> Option<(u64, bool)> {
        match &mut self.state().source {
            Source::Drawn { rng, .. } => rng
                .random_bool(0.3)
                .then(|| (rng.random_range(1..=4), rng.random_bool(0.5))),
            Source::Given(_) => None,
        }
    }

    /// A `fault` between processes, after the current one: drawn by `draw`, or the schedule's.
    /// It happens only if the caller then [keeps](Self::happened) it.
    pub fn between(
        &self,
        fault: Fault,
        draw: impl FnOnce(&mut StdRng) -> Option<Entry>,
    ) -> Option<Entry> {
        let mut s = self.state();
        let process = s.process;
        match &mut s.source {
            Source::Drawn { rng, .. } => draw(rng),
            Source::Given(schedule) => schedule
                .iter()
                .find(|e| e.process == process && e.exchange.is_none() && e.fault == fault)
                .cloned(),
        }
    }

    /// Keeps a fault between processes that happened.
    pub fn happened(&self, entry: Entry) {
        self.state().keep(entry);
    }

    /// The faults that happened, in order.
    pub fn schedule(&self) -> Vec<Entry> {
        self.state().happened.clone()
    }

    /// Why a given schedule does not fit this workload, if it does not.
    pub fn drift(&self) -> Option<String> {
        self.state().drift.clone()
    }
}

impl State {
    fn keep(&mut self, entry: Entry) {
        let entry = Entry {
            process: self.process,
            command: self.command.clone(),
            ..entry
        };
        self.happened.push(entry);
    }
}

/// The command a schedule names a process by: its first word, and the second unless a flag.
pub fn command_of(args: &[String]) -> String {
    let mut words = args.iter().take(2).filter(|w| !w.starts_with('-'));
    let mut out = words.next().cloned().unwrap_or_default();
    if let Some(second) = words.next() {
        out.push(' ');
        out.push_str(second);
    }
    out
}

/// An agent may forget one of its tasks whose id is journaled, as retention would (a task
/// forgotten before anyone learnt its id is one no client could ever find: not a fault to
/// recover from).
pub fn forget(sim: &Sim) {
    let rows = super::invariants::rows(sim).unwrap_or_default();
    let agents = &sim.world.agents;
    // The tasks of `step` on agent `a`, journaled, in attempt order.
    let tasks = |a: usize, step: Option<&str>| -> Vec<(String, String)> {
        let on_agent: Vec<String> = agents[a]
            .1
            .stats()
            .tasks
            .into_iter()
            .map(|t| t.id)
            .collect();
        rows.iter()
            .filter(|r| step.is_none_or(|s| r.step == s))
            .filter_map(|r| Some((r.step.clone(), r.task_id.clone()?)))
            .filter(|(_, t)| on_agent.contains(t))
            .collect()
    };
    let planned = sim.world.faults.between(Fault::Forgotten, |rng| {
        if !rng.random_bool(0.1) {
            return None;
        }
        let a = rng.random_range(0..agents.len());
        let known = tasks(a, None);
        if known.is_empty() {
            return None;
        }
        let (step, task) = &known[rng.random_range(0..known.len())];
        let nth = tasks(a, Some(step)).iter().position(|(_, t)| t == task);
        Some(Entry {
            step: Some(step.clone()),
            nth: nth.unwrap_or_default(),
            ..Entry::between(Fault::Forgotten, a)
        })
    });
    let Some(entry) = planned else {
        return;
    };
    let Some(a) = entry.agent.filter(|a| *a < agents.len()) else {
        return;
    };
    let of_step = tasks(a, entry.step.as_deref());
    if let Some((_, task)) = of_step.get(entry.nth)
        && agents[a].1.forget_task(task)
    {
        sim.world.count(Fault::Forgotten);
        sim.world.faults.happened(entry);
    }
}

/// An agent's clock may step back, between processes.
pub fn step_clock(sim: &Sim) {
    let agents = &sim.world.agents;
    let planned = sim.world.faults.between(Fault::ClockStepped, |rng| {
        rng.random_bool(0.15).then(|| Entry {
            secs: Some(rng.random_range(1..=120)),
            ..Entry::between(Fault::ClockStepped, rng.random_range(0..agents.len()))
        })
    });
    let Some(entry) = planned else {
        return;
    };
    if let (Some(a), Some(secs)) = (entry.agent.filter(|a| *a < agents.len()), entry.secs) {
        agents[a]
            .1
            .step_clock_back(std::time::Duration::from_secs(secs));
        sim.world.count(Fault::ClockStepped);
        sim.world.faults.happened(entry);
    }
}

/// A kept case (`tests/sim-cases/*.json`): a failing run's seed, plant and schedule, with what
/// it found and how it was fixed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Case {
    /// The run's seed (it draws the workload).
    pub seed: u64,
    /// The defect planted, if any.
    #[serde(default)]
    pub plant: Option<String>,
    /// The invariant it broke.
    #[serde(default)]
    pub invariant: String,
    /// What the run found.
    #[serde(default)]
    pub found: String,
    /// The fix.
    #[serde(default)]
    pub fix: String,
    /// How the run went, in prose.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub story: Vec<String>,
    /// Whether its run drew companions (processes run beside the workload's: `overlap`); a
    /// case from before they existed replays without them.
    #[serde(default)]
    pub overlap: bool,
    /// Its workload (absent: drawn from the seed, by the generator of the day).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<Workload>,
    /// Its faults.
    pub schedule: Vec<Entry>,
}

impl Case {
    /// The case as JSON, one schedule entry (and one agent, step or process of its workload) a
    /// line.
    pub fn to_json(&self) -> String {
        let story = if self.story.is_empty() {
            String::new()
        } else {
            format!("  \"story\": {},\n", lines(&self.story, "  "))
        };
        let workload = self.workload.as_ref().map_or_else(String::new, |w| {
            format!(
                "  \"workload\": {{\n    \"agents\": {},\n    \"streams\": {},\n    \"steps\": {},\n    \"processes\": {}\n  }},\n",
                lines(&w.agents, "    "),
                w.streams,
                lines(&w.steps, "    "),
                lines(&w.processes, "    "),
            )
        });
        format!(
            "{{\n  \"seed\": {},\n  \"plant\": {},\n  \"overlap\": {},\n  \"invariant\": {},\n  \"found\": {},\n  \"fix\": {},\n{story}{workload}  \"schedule\": {}\n}}\n",
            self.seed,
            json(&self.plant),
            self.overlap,
            json(&self.invariant),
            json(&self.found),
            json(&self.fix),
            lines(&self.schedule, "  "),
        )
    }
}

/// `items` as a JSON array, one item a line, the closing bracket indented by `indent`.
fn lines<T: Serialize>(items: &[T], indent: &str) -> String {
    if items.is_empty() {
        return "[]".to_owned();
    }
    let items: Vec<String> = items
        .iter()
        .map(|i| format!("{indent}  {}", json(i)))
        .collect();
    format!("[\n{}\n{indent}]", items.join(",\n"))
}

fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// A schedule in short: `7#2:lost-after 9:forgotten(0,w0/s1)`.
pub fn brief(schedule: &[Entry]) -> String {
    let all: Vec<String> = schedule.iter().map(ToString::to_string).collect();
    all.join(" ")
}
