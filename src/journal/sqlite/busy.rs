//! Waiting for a journal another connection holds locked (SQLite's "busy"): SQLite's own busy
//! handler inside each statement, and [`retry_busy`] around an open, which SQLite's handler
//! does not always cover.
//!
//! Both wait through `crate::sim_seam` (`instant_now`, `busy_wait`), so that a simulated run
//! reads no real time while it waits: there, every simulated process runs on one thread and
//! every transaction is synchronous, so no lock is ever held across an await point and a wait
//! would wait for nothing; a wait that happens anyway ends at once and fails the run.

use std::time::Duration;

use rusqlite::Connection;

use crate::journal::JournalError;

/// Makes `conn` wait up to `busy_timeout` for another connection's lock: SQLite's own busy
/// timeout, or in a simulated run the same pauses through the simulator's seam.
pub(super) fn set_busy_wait(conn: &mut Connection, busy_timeout: Duration) -> rusqlite::Result<()> {
    #[cfg(feature = "sim")]
    if crate::sim_seam::simulated() {
        sim::TIMEOUT_MS.store(
            u64::try_from(busy_timeout.as_millis()).unwrap_or(u64::MAX),
            std::sync::atomic::Ordering::Relaxed,
        );
        return conn.busy_handler(Some(sim::busy));
    }
    conn.busy_timeout(busy_timeout)
}

/// Runs `open` again while it fails with [`JournalError::Busy`], until `busy_timeout` has
/// passed; each try starts from a new connection and gets the time left, so that SQLite's own
/// waits inside it end by the same deadline.
///
/// SQLite's busy handler does not cover every lock ("the presence of a busy handler does not
/// guarantee that it will be invoked", `sqlite3_busy_handler`). Measured here: when processes
/// open a new journal at once, one that read the file before another switched it to WAL gets
/// `SQLITE_BUSY` from `PRAGMA journal_mode` at once, without waiting. Without this loop, four
/// threads opening new journals together failed about one open in 90, each saying the journal
/// had stayed busy for the whole timeout (`concurrent_first_opens_of_a_new_journal_all_succeed`).
pub(super) fn retry_busy<T>(
    busy_timeout: Duration,
    mut open: impl FnMut(Duration) -> Result<T, JournalError>,
) -> Result<T, JournalError> {
    let deadline = crate::sim_seam::instant_now() + busy_timeout;
    let mut pause = Duration::from_millis(1);
    loop {
        let left = deadline.saturating_duration_since(crate::sim_seam::instant_now());
        match open(left.max(Duration::from_millis(1))) {
            Err(JournalError::Busy { path, .. }) => {
                let left = deadline.saturating_duration_since(crate::sim_seam::instant_now());
                if left.is_zero() || !crate::sim_seam::busy_wait(pause.min(left)) {
                    return Err(JournalError::Busy {
                        path,
                        waited: busy_timeout,
                    });
                }
                pause = (pause * 2).min(Duration::from_millis(64));
            }
            done => return done,
        }
    }
}

/// SQLite's busy handler, through the simulator's seam (`--features sim`).
#[cfg(feature = "sim")]
mod sim {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    /// The busy timeout of the simulated run's connections, in ms (one `--timeout` for all).
    pub(super) static TIMEOUT_MS: AtomicU64 = AtomicU64::new(0);

    /// SQLite's own pauses (`sqliteDefaultBusyCallback`), in ms: the `count`th call pauses
    /// `DELAYS[count]` (100 past the table) until the pauses reach the timeout. Counted, not
    /// timed: no clock is read.
    const DELAYS: [u64; 12] = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100];

    /// Called by SQLite with the number of times it was already called for this lock; returns
    /// whether to try again.
    pub(super) fn busy(count: i32) -> bool {
        let count = usize::try_from(count).unwrap_or(0);
        let prior: u64 = DELAYS.iter().take(count).sum::<u64>()
            + 100 * u64::try_from(count.saturating_sub(DELAYS.len())).unwrap_or(0);
        let delay = DELAYS.get(count).copied().unwrap_or(100);
        let left = TIMEOUT_MS.load(Ordering::Relaxed).saturating_sub(prior);
        if left == 0 {
            return false;
        }
        crate::sim_seam::busy_wait(Duration::from_millis(delay.min(left)))
    }
}
