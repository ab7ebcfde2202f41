//! The seams the deterministic simulator (`--features sim`, `scripts/sim`) reaches the real code
//! through: ids, "now", a process killed mid-pass, the wait for a busy journal, and the planted
//! defects.
//!
//! In the shipped binary (no `sim` feature) every function here is the plain thing: a random
//! UUIDv4, `false` for "killed". With the feature, a simulated process installs a seeded id
//! source, and the simulator marks the moment a pass's future is dropped as a kill (no drop-time
//! commit or release runs, as none would after SIGKILL). Planted defects exist only in that build.
//!
//! Invariant: nothing here changes behaviour unless the simulator installed it on this thread.

use uuid::Uuid;

/// Returns a new UUIDv4: random, or (in a simulated run) drawn from the run's seed.
pub fn new_uuid() -> Uuid {
    #[cfg(feature = "sim")]
    if let Some(id) = sim::next_uuid() {
        return id;
    }
    Uuid::new_v4()
}

/// Returns a generator for jitter: seeded from the system, or (in a simulated run) from the run's
/// seed.
pub fn jitter_rng() -> rand::rngs::StdRng {
    #[cfg(feature = "sim")]
    if let Some(id) = sim::next_uuid() {
        return rand::SeedableRng::seed_from_u64(id.as_u64_pair().0);
    }
    rand::make_rng()
}

/// Returns whether the simulated process is being killed: drop-time work (group commits, lease
/// releases) must not run, as none runs after SIGKILL. Always `false` in the shipped binary.
pub fn killed() -> bool {
    #[cfg(feature = "sim")]
    {
        sim::killed()
    }
    #[cfg(not(feature = "sim"))]
    {
        false
    }
}

/// Returns this process's pid: the OS's, or (in a simulated run) the simulated process's own.
pub fn pid() -> u32 {
    #[cfg(feature = "sim")]
    if let Some(pid) = sim::sim_pid() {
        return pid;
    }
    std::process::id()
}

/// Keys said once per process (warn-once sets), at most 1,024 of them. In a simulated run, each
/// simulated process starts with none, as a restarted process would, and keeps its own while
/// others run beside it.
pub struct OncePerProcess(std::sync::Mutex<Vec<(u64, Vec<String>)>>);

impl Default for OncePerProcess {
    fn default() -> Self {
        Self::new()
    }
}

/// The most processes whose sets are kept at once (more than ever run together in a simulated
/// run; the shipped binary is one process, number 0).
const PROCESSES_KEPT: usize = 8;

impl OncePerProcess {
    /// An empty set.
    pub const fn new() -> Self {
        Self(std::sync::Mutex::new(Vec::new()))
    }

    /// Returns whether `key` is new to this process (and remembers it); `false` once 1,024 keys
    /// are held.
    pub fn first(&self, key: &str) -> bool {
        let mut all = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let process = process_number();
        let i = if let Some(i) = all.iter().position(|(p, _)| *p == process) {
            i
        } else {
            if all.len() >= PROCESSES_KEPT {
                all.remove(0);
            }
            all.push((process, Vec::new()));
            all.len() - 1
        };
        let held = &mut all[i].1;
        if held.len() >= 1024 || held.iter().any(|k| k == key) {
            return false;
        }
        held.push(key.to_owned());
        true
    }
}

/// Returns "now" for a deadline of a wait: the monotonic clock, or (in a simulated run) the
/// virtual clock, so that no real time is read there.
pub fn instant_now() -> std::time::Instant {
    #[cfg(feature = "sim")]
    if sim::simulated() {
        return tokio::time::Instant::now().into_std();
    }
    std::time::Instant::now()
}

/// Pauses a wait for the journal another connection holds locked (SQLite's busy wait) for
/// `pause`; returns whether to try again.
///
/// In the shipped binary the thread sleeps. In a simulated run, on the simulation's thread, it
/// neither sleeps nor reads a clock, and gives up at once: every simulated process runs on that
/// one thread, so a lock another one holds cannot be released while this one waits. Such a
/// wait is counted ([`take_busy`]) and fails the run: it means a transaction was held across an
/// await point. On any other thread (a group-commit writer thread, were one used in a
/// simulated run) it sleeps, as that thread's waiting lets the simulation's go on.
pub fn busy_wait(pause: std::time::Duration) -> bool {
    #[cfg(feature = "sim")]
    if sim::simulated() {
        sim::note_busy();
        return false;
    }
    std::thread::sleep(pause);
    true
}

/// The number of the (simulated) process: always 0 in the shipped binary; in the simulator's
/// build it changes with every simulated process (`new_process`).
fn process_number() -> u64 {
    #[cfg(feature = "sim")]
    {
        sim::current_process()
    }
    #[cfg(not(feature = "sim"))]
    {
        0
    }
}

#[cfg(feature = "sim")]
pub use sim::*;

#[cfg(feature = "sim")]
mod sim {
    use std::cell::{Cell, RefCell};

    use rand::{RngExt as _, SeedableRng as _};
    use uuid::Uuid;

    /// A defect planted on purpose, to prove the simulator catches it (`scripts/sim --plant`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Plant {
        /// A possibly-sent attempt is resent without looking for the task it created.
        ResendWithoutLook,
        /// A look adopts a listed task whatever message it holds.
        AdoptAnyTask,
        /// A terminal status is dropped as stale like any older one.
        DropTerminalAsStale,
        /// A look that finds nothing resends inside the in-flight horizon.
        SkipHorizon,
        /// Compensations run oldest first.
        CompensateForward,
    }

    impl Plant {
        /// Every plant, with its `--plant` name.
        pub const ALL: [(&'static str, Plant); 5] = [
            ("resend-without-look", Plant::ResendWithoutLook),
            ("adopt-any-task", Plant::AdoptAnyTask),
            ("drop-terminal-as-stale", Plant::DropTerminalAsStale),
            ("skip-horizon", Plant::SkipHorizon),
            ("compensate-forward", Plant::CompensateForward),
        ];
    }

    thread_local! {
        static IDS: RefCell<Option<rand::rngs::StdRng>> = const { RefCell::new(None) };
        static KILLED: Cell<bool> = const { Cell::new(false) };
        static PLANT: Cell<Option<Plant>> = const { Cell::new(None) };
        static OWNER: RefCell<Option<&'static str>> = const { RefCell::new(None) };
        static EPOCH: Cell<Option<chrono::DateTime<chrono::Utc>>> = const { Cell::new(None) };
        static START: Cell<Option<tokio::time::Instant>> = const { Cell::new(None) };
        static SIM_PROCESS: RefCell<Option<SimProcess>> = const { RefCell::new(None) };
        static CURRENT: Cell<u64> = const { Cell::new(0) };
        static BUSY: Cell<u32> = const { Cell::new(0) };
    }

    /// The identity of the simulated process now running, and which simulated pids are alive.
    #[derive(Debug, Clone, Default)]
    pub struct SimProcess {
        /// Its pid.
        pub pid: u32,
        /// Its host identity, as leases name it.
        pub host: &'static str,
        /// The pids alive besides its own: the other simulated processes running, and those
        /// unrelated programs took again (shared with the simulator, which keeps it current).
        pub alive: std::sync::Arc<std::sync::Mutex<std::collections::BTreeSet<u32>>>,
    }

    /// What one simulated process installs on the thread while it runs: its lease owner id,
    /// its identity, and its number (its warn-once sets). When several run at once, each poll
    /// of one swaps its own in ([`swap_process`]) and the previous one back after.
    #[derive(Debug, Clone, Default)]
    pub struct ProcessContext {
        /// Its lease owner id.
        pub owner: Option<&'static str>,
        /// Its pid and host.
        pub process: Option<SimProcess>,
        /// Its number ([`new_process`]).
        pub number: u64,
    }

    /// Installs `ctx` on this thread; returns what was installed.
    pub fn swap_process(ctx: ProcessContext) -> ProcessContext {
        ProcessContext {
            owner: OWNER.with(|o| o.replace(ctx.owner)),
            process: SIM_PROCESS.with(|p| p.replace(ctx.process)),
            number: CURRENT.replace(ctx.number),
        }
    }

    pub(super) fn sim_pid() -> Option<u32> {
        SIM_PROCESS.with(|p| p.borrow().as_ref().map(|p| p.pid))
    }

    /// The simulated process's host identity, if one is installed.
    pub fn host() -> Option<&'static str> {
        SIM_PROCESS.with(|p| p.borrow().as_ref().map(|p| p.host))
    }

    /// Whether `pid` is alive in the simulated world, if one is installed: the running
    /// process's own pid, another simulated process's running beside it, or one an unrelated
    /// program took again.
    pub fn pid_alive(pid: u32) -> Option<bool> {
        SIM_PROCESS.with(|p| {
            p.borrow().as_ref().map(|p| {
                p.pid == pid
                    || p.alive
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .contains(&pid)
            })
        })
    }

    /// The last number given to a simulated process (never reset, so that no two share one).
    static PROCESS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

    /// A new simulated process starts: process-wide state ([`super::OncePerProcess`]) starts
    /// fresh, as after a restart. Returns its number, now this thread's current one.
    pub fn new_process() -> u64 {
        let n = PROCESS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        CURRENT.set(n);
        n
    }

    /// The number of the simulated process running on this thread.
    pub(super) fn current_process() -> u64 {
        CURRENT.get()
    }

    /// Notes that the journal was found locked by another connection (see
    /// [`super::busy_wait`]).
    pub(super) fn note_busy() {
        BUSY.set(BUSY.get().saturating_add(1));
    }

    /// How many times the journal was found locked on this thread since the last call; clears
    /// the count. In a simulated run every transaction is synchronous, so this stays 0 unless a
    /// transaction was held across an await point (another simulated process then finds it).
    pub fn take_busy() -> u32 {
        BUSY.replace(0)
    }

    /// Seeds the id source of this thread (a simulated run).
    pub fn seed_ids(seed: u64) {
        IDS.with(|ids| *ids.borrow_mut() = Some(rand::rngs::StdRng::seed_from_u64(seed)));
    }

    /// Returns whether this thread runs a simulation (its ids are seeded).
    pub fn simulated() -> bool {
        IDS.with(|ids| ids.borrow().is_some())
    }

    /// Removes everything installed on this thread.
    pub fn clear() {
        IDS.with(|ids| *ids.borrow_mut() = None);
        KILLED.set(false);
        PLANT.set(None);
        OWNER.with(|o| *o.borrow_mut() = None);
        EPOCH.set(None);
        START.set(None);
        SIM_PROCESS.with(|p| *p.borrow_mut() = None);
        CURRENT.set(0);
        BUSY.set(0);
    }

    pub(super) fn next_uuid() -> Option<Uuid> {
        IDS.with(|ids| {
            ids.borrow_mut().as_mut().map(|rng| {
                let bytes: [u8; 16] = rng.random();
                uuid::Builder::from_random_bytes(bytes).into_uuid()
            })
        })
    }

    /// Marks the simulated process killed (or alive again).
    pub fn set_killed(on: bool) {
        KILLED.set(on);
    }

    pub(super) fn killed() -> bool {
        KILLED.get()
    }

    /// Plants a defect (or none) on this thread.
    pub fn set_plant(plant: Option<Plant>) {
        PLANT.set(plant);
    }

    /// Returns whether `plant` is planted on this thread.
    pub fn planted(plant: Plant) -> bool {
        PLANT.get() == Some(plant)
    }

    /// The simulated process's lease owner id, if one is installed.
    pub fn owner() -> Option<&'static str> {
        OWNER.with(|o| *o.borrow())
    }

    /// Starts virtual wall time at `epoch`, advancing with tokio's (paused) clock.
    pub fn start_virtual_time(epoch: chrono::DateTime<chrono::Utc>) {
        EPOCH.set(Some(epoch));
        START.set(Some(tokio::time::Instant::now()));
    }

    /// The virtual wall time, when the simulator installed one.
    pub fn virtual_now() -> Option<chrono::DateTime<chrono::Utc>> {
        let (epoch, start) = (EPOCH.get()?, START.get()?);
        let elapsed = tokio::time::Instant::now().duration_since(start);
        Some(epoch + chrono::Duration::from_std(elapsed).unwrap_or_default())
    }
}
