//! Pruning the journal (`a2a-recover prune`): deletes the events that no pass, no operator
//! command and no later decision reads, in bounded batches.
//!
//! # What is deleted
//!
//! Only **status refreshes**: `observed` events (an attempt's task reported a newer status of
//! the state it already had: the journal appends an event for every change, and a newer status
//! timestamp is a change) that
//!
//! - are older than the cutoff,
//! - record no artifact and no question (those say what arrived when, and what was asked),
//! - and are not the newest event of their attempt (the last word on an attempt always stays).
//!
//! Everything else stays: intents, endpoints, state transitions, send/read/lookup failures,
//! effects, cancellations, workflow states, decisions (`resolved`, `resend-approval-used`),
//! `failed-for-good`, replies and artifacts, and every row of every other table. What the passes
//! and `compensate` act on is the attempt row (state, ids, status timestamp, pending question,
//! last task snapshot, effect, error), the artifacts, the replies and the `failed-for-good`
//! events, none of which is touched: a pass after a prune does exactly what it would have done
//! before. `inspect --events` shows the same history without the refreshes.
//!
//! Task snapshots (`attempts.last_task_json`) are not pruned: there is one per attempt,
//! rewritten in place, so they do not grow with the number of passes; and `inspect` shows the
//! status message it holds.
//!
//! # How
//!
//! [`Journal::prune_events`] handles one range of event ids in ONE short `BEGIN IMMEDIATE`
//! transaction; the caller walks the ids a range at a time ([`PRUNE_BATCH`] ids), so a
//! concurrent `delegate` waits at most one batch for the journal. The ids are walked by primary
//! key: no index is needed (nor added: an index on `kind` would cost bytes on every event to
//! save a weekly job a scan). Deleted rows free whole pages only as pages empty; SQLite reuses
//! free pages for later writes and the file keeps its size ([`Storage`]).

use chrono::{DateTime, Utc};

use super::queries;
use super::{Journal, JournalError};

/// Event ids handled per transaction.
pub const PRUNE_BATCH: i64 = 10_000;

/// The journal file's pages, as SQLite counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Storage {
    /// Bytes per page.
    pub page_size: u64,
    /// Pages in the database (the file's size without its WAL).
    pub pages: u64,
    /// Pages on the free list: allocated in the file, reused by later writes.
    pub free_pages: u64,
}

impl Storage {
    /// Returns the database's size in bytes (the main file, once checkpointed).
    pub fn file_bytes(&self) -> u64 {
        self.pages * self.page_size
    }

    /// Returns the bytes of free pages.
    pub fn free_bytes(&self) -> u64 {
        self.free_pages * self.page_size
    }
}

impl Journal {
    /// Returns the lowest and highest event id, or `None` when there is no event.
    pub fn event_id_range(&self) -> Result<Option<(i64, i64)>, JournalError> {
        self.read("read the events", queries::event_id_range)
    }

    /// Deletes the status refreshes (module docs) with ids in `from..to` older than `before`,
    /// in one transaction; returns how many. With `dry_run`, counts them and writes nothing.
    pub fn prune_events(
        &self,
        before: DateTime<Utc>,
        from: i64,
        to: i64,
        dry_run: bool,
    ) -> Result<u64, JournalError> {
        let cutoff = queries::ms(before);
        if dry_run {
            return self.read("count the events to prune", |c| {
                queries::prunable_events(c, from, to, cutoff)
            });
        }
        self.write("prune the events", |tx| {
            queries::prune_events(tx, from, to, cutoff).map_err(self.err("prune the events"))
        })
    }

    /// Returns the journal's page counts.
    pub fn storage(&self) -> Result<Storage, JournalError> {
        let (page_size, pages, free_pages) = self.store.page_counts()?;
        Ok(Storage {
            page_size,
            pages,
            free_pages,
        })
    }
}
