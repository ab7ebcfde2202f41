//! The deterministic simulator (`--features sim`, `scripts/sim`; docs/reliability.md).
//!
//! One seed is one run: a few in-process scripted agents behind a fault layer ([`world`]), a
//! workload of `delegate`, `reconcile`, `reply` and `compensate` processes drawn from the seed
//! ([`workload`], or a kept case's), some with companions run beside them ([`overlap`]), each
//! run through the same entry point as the binary on a real SQLite journal in a temporary
//! directory, under tokio's paused clock (time is virtual, and jumps to the next timer when
//! everything waits), several at once interleaved as the seed says ([`together`]). A process may
//! be killed at a seeded exchange, before or after the agent processed it: its future is dropped
//! with the kill flag up, so no drop-time commit or lease release runs, and every process has a
//! lease identity of its own. Then faults stop, passes run to a fixed point, and the invariants
//! ([`invariants`]) are checked.

pub mod artifacts;
pub mod identity;
pub mod invariants;
pub mod overlap;
pub mod replay;
pub mod resolve;
pub mod schedule;
pub mod settled;
pub mod shrink;
pub mod streams;
pub mod together;
pub mod workload;
pub mod world;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rand::SeedableRng as _;
use rand::rngs::StdRng;

use crate::sim_seam::{self, Plant};

use self::schedule::{Entry, Faults};
use self::world::World;

/// The request timeout of every simulated process.
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// What one run did, and the first invariant it broke.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The broken invariant, if any.
    pub failure: Option<String>,
    /// The processes run.
    pub processes: u32,
    /// Where processes were killed (`METHOD#N:side`, per command).
    pub crash_points: BTreeSet<String>,
    /// Faults injected, by name.
    pub faults: BTreeMap<&'static str, u32>,
    /// The faults that happened, in order: replayed on the same seed, the same run.
    pub schedule: Vec<Entry>,
    /// The operator's decisions (`resolve --as …`) journaled, by decision.
    pub decided: BTreeMap<String, u32>,
    /// The workload it ran: with the schedule, the same run.
    pub workload: Option<workload::Workload>,
    /// The companions run (`overlap`; counted in `processes` too).
    pub companions: u32,
    /// The groups of processes run at once.
    pub groups: u32,
    /// The groups whose processes overlapped (one ran while another was in flight), by their
    /// commands (`delegate+reconcile`).
    pub overlaps: BTreeMap<String, u32>,
    /// What the run did, a line an event: two runs of one seed give the same lines.
    pub log: Vec<String>,
}

/// Runs seed `seed` (with `plant` planted), its faults drawn from the seed, and checks every
/// invariant.
pub fn run_seed(seed: u64, plant: Option<Plant>) -> Outcome {
    run_with(seed, plant, None, None)
}

/// Runs seed `seed` (with `plant` planted), with the faults of `schedule` only when given (else
/// drawn from the seed) and the workload `load` when given (else drawn from the seed), and
/// checks every invariant.
pub fn run_with(
    seed: u64,
    plant: Option<Plant>,
    schedule: Option<Vec<Entry>>,
    load: Option<workload::Workload>,
) -> Outcome {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build();
    let runtime = match runtime {
        Ok(rt) => rt,
        Err(e) => {
            return Outcome {
                failure: Some(format!("failed to start a runtime: {e}")),
                ..Outcome::default()
            };
        }
    };
    // A memory-backed directory where there is one: the journal's fsyncs cost nothing there.
    let shm = Path::new("/dev/shm");
    let base = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let dir = base.join(format!("a2a-sim-{}-{seed}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let outcome = match std::fs::create_dir_all(&dir) {
        Ok(()) => runtime.block_on(run(seed, plant, schedule, load, &dir)),
        Err(e) => Outcome {
            failure: Some(format!("failed to create {}: {e}", dir.display())),
            ..Outcome::default()
        },
    };
    drop(runtime);
    sim_seam::clear();
    crate::a2a::sim_wire::install(None);
    // `A2A_SIM_KEEP=1` keeps a failed run's journal for `a2a-recover inspect`.
    if outcome.failure.is_some() && std::env::var_os("A2A_SIM_KEEP").is_some() {
        return Outcome {
            failure: outcome
                .failure
                .map(|f| format!("{f} (journal kept in {})", dir.display())),
            ..outcome
        };
    }
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

async fn run(
    seed: u64,
    plant: Option<Plant>,
    schedule: Option<Vec<Entry>>,
    load: Option<workload::Workload>,
    dir: &Path,
) -> Outcome {
    sim_seam::seed_ids(seed);
    sim_seam::set_plant(plant);
    let epoch = chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap_or_default();
    sim_seam::start_virtual_time(epoch);
    let load = load.unwrap_or_else(|| workload::draw(seed));
    let faults = schedule.map_or_else(|| Faults::drawn(seed), Faults::given);
    let world = Arc::new(workload::world(&load, faults));
    let exchange_world = Arc::clone(&world);
    crate::a2a::sim_wire::install(Some(Arc::new(move |req| {
        Box::pin(world::exchange(Arc::clone(&exchange_world), req))
    })));
    let mut sim = Sim {
        world,
        journal: dir.join("journal.db"),
        outcome: Outcome::default(),
        killed_owners: BTreeSet::new(),
        fixed_point: None,
        fleet: identity::Fleet::new(seed),
        overlap: StdRng::seed_from_u64(seed ^ 0x0FE2_1A95),
        interleave: StdRng::seed_from_u64(seed ^ 0x1E7E_2EAF),
        busy: 0,
        failure: None,
        ended: None,
    };
    let failure = workload::drive(&mut sim, &load).await.err();
    // A companion's exit, or a wait for a busy journal, failed first.
    let failure = sim.failure.take().or(failure).or_else(|| {
        (sim.busy > 0).then(|| {
            format!(
                "journal busy: {} wait(s) for a lock another simulated process held across an \
                 await point",
                sim.busy
            )
        })
    });
    let failure = match failure {
        Some(f) => Some(f),
        None => invariants::check(&sim)
            .and_then(|()| artifacts::check(&sim))
            .and_then(|()| settled::leases(&sim))
            .and_then(|()| settled::exits(&sim))
            .err(),
    };
    let mut outcome = std::mem::take(&mut sim.outcome);
    // A schedule made for another workload proves nothing, whatever the run did.
    outcome.failure = sim.world.faults.drift().or(failure);
    outcome.schedule = sim.world.faults.schedule();
    for (fault, n) in sim
        .world
        .injected
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
    {
        outcome.faults.insert(fault.name(), *n);
    }
    outcome.faults.extend(std::mem::take(&mut sim.fleet.kills));
    for (name, n) in workload::misbehaviours(&sim.world, &load) {
        *outcome.faults.entry(name).or_default() += n;
    }
    outcome.workload = Some(load);
    outcome.log = sim.world.take_log();
    outcome
}

/// One run's state.
pub struct Sim {
    /// The agents and the fault layer.
    pub world: Arc<World>,
    /// The journal file.
    pub journal: PathBuf,
    /// What the run did so far.
    pub outcome: Outcome,
    /// The lease owner ids of the processes that were killed.
    pub killed_owners: BTreeSet<String>,
    /// How the fixed point's `reconcile` and `compensate` exited, once reached.
    pub fixed_point: Option<(Exit, Exit)>,
    /// The processes' pids and hosts.
    pub fleet: identity::Fleet,
    /// The generator of the companions (`overlap`).
    pub overlap: StdRng,
    /// The generator of the interleaving: which process goes on when several can.
    pub interleave: StdRng,
    /// The waits for a busy journal seen so far (each a failure).
    pub busy: u32,
    /// The first failure found while the workload runs (a companion's exit).
    pub failure: Option<String>,
    /// The process that ended last.
    ended: Option<u32>,
}

/// How a simulated process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this code.
    Code(u8),
    /// It exited with this code, but another process ran beside it (at once, or after it
    /// before the workload looked): the journal is not the one it exited on, so its code is not
    /// checked against the journal.
    Beside(u8),
    /// It was killed.
    Killed,
}

impl Sim {
    /// Runs one process of `args` (after `a2a-recover --journal J`), killed at exchange
    /// `crash_at` if given, with the companions the run draws for it (`overlap`) beside it;
    /// process-wide state starts fresh, as in a new process. Returns how it ended.
    pub async fn process(&mut self, args: &[String], crash_at: Option<(u64, bool)>) -> Exit {
        let mut specs = vec![together::Spec {
            args: args.to_vec(),
            crash_at,
            delay: Duration::ZERO,
            companion: false,
        }];
        specs.extend(self.companions(args));
        self.together(specs)
            .await
            .first()
            .copied()
            .unwrap_or(Exit::Killed)
    }

    /// Lets virtual time pass.
    pub async fn advance(&self, by: Duration) {
        tokio::time::sleep(by).await;
    }
}
