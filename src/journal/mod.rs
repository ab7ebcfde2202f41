//! The journal: a durable SQLite record of every delegation, behind one narrow interface.
//!
//! # Invariants
//!
//! - **Intent is committed before any network call.** `delegate` commits an `INTENT` attempt
//!   holding its `messageId` and `contextId` ([`Journal::create_intents`]) before fetching a
//!   card or sending; the endpoint is journaled ([`Journal::set_endpoint`]) before the send, so
//!   an attempt without an endpoint was provably never sent.
//! - **Every change goes through [`model::transition`] and appends an event in the same
//!   transaction.** An observation that changes nothing writes nothing: no row, no event, no
//!   WAL frame (a cron pass over unchanged work costs no disk).
//! - Every write is one short `BEGIN IMMEDIATE` transaction, never held across an `.await`;
//!   `synchronous=FULL` makes each commit durable before the method returns.
//! - Credentials never enter the journal: only the *name* of the variable that holds one.
//! - Nothing from rusqlite leaves `journal/sqlite/`: methods speak in [`model`] types, and
//!   every query is written against the store seam (`sql`), so another store (PostgreSQL, for
//!   several hosts) can sit behind the same face (docs/architecture.md, "The journal's face").
//!
//! # Opening
//!
//! [`Journal::open`] creates missing directories 0700 and the file 0600, refuses a file that
//! is not SQLite or is truncated *before* any write (the file stays byte-for-byte as it was),
//! sets `journal_mode=WAL`, `synchronous=FULL`, `foreign_keys=ON` and `busy_timeout`, and
//! migrates. A journal whose schema is newer than this binary opens read-only: reads work,
//! writes fail with [`JournalError::NewerVersion`].
//!
//! # Module map
//!
//! This file holds the [`Journal`] type, the types of its face and the few private helpers
//! every operation runs through (`read`, `write`, and `write_attempts` for writes confined to
//! some attempts). Each seam of the face is one file of `impl Journal`:
//!
//! - `open`: [`Journal::open`], [`Journal::open_read_only`], warnings, what the open allows.
//! - `intents`: new steps and `INTENT` attempts, committed before any send.
//! - `change`: the read-decide-write cycle of one attempt; the endpoint before a send.
//! - `observe`: remote Tasks and stream artifact updates merged in, alone or in batches.
//! - `outcomes`: a send's settled outcome, failures, effects, cancel requests.
//! - `sends`: a batch send's claims and group-committed outcomes.
//! - `leases`: [`Journal::claim`] and [`Journal::release`].
//! - `agents`: the agents table, cards and the registry; `health`: each agent's health
//!   (last answer, last failure, failing since) and what is stale.
//! - `replies`: replies to a waiting task.
//! - `workflows`, `saga`: workflow states, resolutions, compensation steps.
//! - [`operator`]: `resolve` decisions; [`prune`]: what `prune` deletes.
//! - `passes`: the rows a reconcile pass walks; `reads`: what `inspect` and the commands read.
//! - [`model`]: states, rows and the pure [`transition`]; [`migrate`]: schema versions.
//! - `sql`: the store seam (`Db`, `Row`, `Arg`, `DbError`: no store's types) and every query
//!   (`sql/queries/`, one file per seam), written once for every store, picking dialect-specific text (JSON
//!   functions) by `Db::dialect`.
//! - `store`: [`Journal`]'s store, one enum arm per engine: `read`, `transaction`, the error
//!   mapper, and what each engine answers its own way (`data_version`, page counts).
//! - `sqlite`: the SQLite store, the only code that names rusqlite: opening, pragmas,
//!   migrations, transactions, error mapping, `Db` for its connection. A second store goes
//!   beside it.

mod agents;
mod alerts;
mod change;
mod copy;
mod error;
mod file;
mod group;
mod health;
mod intents;
mod leases;
mod location;
pub mod migrate;
pub mod model;
mod observe;
mod observe_tasks;
mod open;
pub mod operator;
mod outcomes;
mod pass_locks;
mod passes;
mod postgres;
pub mod prune;
mod push;
mod push_tidy;
mod reads;
mod replies;
mod saga;
mod sends;
mod sql;
mod sqlite;
mod store;
mod workflows;

use std::path::Path;
use std::sync::Arc;

pub use alerts::AlertItem;
pub use copy::CopyReport;
pub use error::JournalError;
pub use health::{AgentHealth, AgentSeen, HEALTH_EVERY, Stale, Unheard, next_health};
pub use leases::{Note, host_label, host_name, owner_id};
pub use location::{Location, LocationError};
pub use model::*;
pub use operator::{AttemptResolution, Decided, Decision, Undone};
pub use pass_locks::{LockAttempt, LockScope, StoreLock};
pub use prune::{PRUNE_BATCH, Storage};
pub use push::{AgentPush, LISTENER_LAPSE, Listener, PushConfig, PushRecord};
pub use push_tidy::PushTidied;
pub use reads::{OldestUnfinished, Overview};
pub use sends::{BatchClaim, SendOutcome, SendRecord};

use crate::clock::Clock;
use crate::model::{ArtifactUpdate, TaskView, message_said};
use change::Wanted;
use leases::{is_mine, my_lease};
use observe::view_artifact_ids;
use sql::{DbError, DbResult, Tx, queries};
use store::Store;

/// Why writes are refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    ReadWrite,
    /// Opened with [`Journal::open_read_only`].
    ReadOnly,
    /// The schema is newer than this binary.
    Newer(i64),
}

/// A first attempt to journal: the step's definition and the attempt's fresh ids.
#[derive(Debug, Clone, PartialEq)]
pub struct NewIntent {
    /// The step (created if the journal has no step of that name).
    pub spec: StepSpec,
    /// The card URL of the agent attempt 1 goes to (`None` for a command step).
    pub agent_url: Option<String>,
    /// A fresh messageId (UUIDv4).
    pub message_id: String,
    /// A fresh contextId (UUIDv4); dropped if the agent is known to refuse client context ids.
    pub context_id: Option<String>,
}

/// What [`Journal::create_intents`] did for one step.
#[derive(Debug, Clone, PartialEq)]
pub enum IntentOutcome {
    /// A new step and its `INTENT` attempt 1 were committed.
    Created(Attempt),
    /// The step already existed; nothing was written for it. The caller compares definitions.
    Existing(StepRecord),
}

/// A further attempt of an existing step (re-delegation, `resolve --as retry`). Its credential
/// is the journal's choice ([`CredentialSource::choose`]): the step's own at the agent it was
/// given for, else the agent's registered one, else none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewAttempt {
    /// The agent's card URL (`None` for a command step).
    pub agent_url: Option<String>,
    /// A fresh messageId.
    pub message_id: String,
    /// A fresh contextId (dropped if the agent is known to refuse client context ids).
    pub context_id: Option<String>,
    /// The attempt this one follows.
    pub previous: Option<AttemptId>,
}

/// The endpoint an attempt is sent to (journaled before the send).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournaledEndpoint {
    /// The interface URL.
    pub interface_url: String,
    /// The interface's tenant.
    pub tenant: Option<String>,
    /// The binding it speaks.
    pub binding: crate::model::ProtocolBinding,
}

/// A failure that changes no state but is recorded (an event and the attempt's `error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// A send whose outcome is unknown, or that was not sent (the attempt stays `INTENT`).
    Send,
    /// A read (GetTask, ListTasks, a stream) failed.
    Read,
    /// A look before a resend failed transiently.
    Lookup,
    /// The Agent Card could not be fetched.
    Card,
}

impl FailureKind {
    /// Returns its event kind.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Send => "send-failed",
            Self::Read => "read-failed",
            Self::Lookup => "lookup-failed",
            Self::Card => "card-failed",
        }
    }
}

/// The outcome of [`Journal::claim`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// This process holds the lease until the given time.
    Claimed(Lease),
    /// Another live process holds an unexpired lease.
    HeldBy(Lease),
}

/// A reconcile pass's walk over its rows in delegation order ([`Journal::pass_cursor`]); a
/// clone remembers where the walk was.
#[derive(Clone)]
pub struct PassCursor {
    window: queries::PassWindow,
    /// How many delegation positions the next read covers at most (see
    /// [`Journal::next_pass_rows`]).
    span: i64,
    /// How many rows the walk has returned so far.
    pub read: usize,
}

impl std::fmt::Debug for PassCursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PassCursor")
            .field("after", &self.window.after)
            .field("through", &self.window.through)
            .field("span", &self.span)
            .field("read", &self.read)
            .finish_non_exhaustive()
    }
}

/// An open journal. Cheap to share (`&Journal` is `Sync`); each method is one short
/// transaction.
pub struct Journal {
    store: Store,
    location: Location,
    access: Access,
    version: i64,
    warnings: Vec<String>,
    clock: Arc<dyn Clock>,
    limits: SizeLimits,
    /// Agents' rows read lately (`agents.rs`).
    agent_rows: agents::AgentRows,
}

/// How large the artifacts of one attempt may grow in the journal (`--max-artifact-size`,
/// `--max-task-size`), each measured as the bytes of its parts' JSON as journaled.
///
/// An observation that would take an artifact, or all of a task's, past a limit is journaled
/// without its artifacts; the attempt gets an `artifact-too-large` (or `task-too-large`) error
/// and a `failed-for-good` event, and no artifact of it is journaled any more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeLimits {
    /// The largest one artifact may grow to, its appends accumulated.
    pub artifact: u64,
    /// The largest all of a task's artifacts may grow to together.
    pub task: u64,
}

impl SizeLimits {
    /// The default of `--max-artifact-size`: 64 MiB.
    pub const DEFAULT_ARTIFACT: u64 = 64 * 1024 * 1024;
    /// The default of `--max-task-size`: 256 MiB.
    pub const DEFAULT_TASK: u64 = 256 * 1024 * 1024;
}

impl Default for SizeLimits {
    fn default() -> Self {
        Self {
            artifact: Self::DEFAULT_ARTIFACT,
            task: Self::DEFAULT_TASK,
        }
    }
}

// A pass shares one `&Journal` between concurrent tasks.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Journal>();
};

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("path", &self.path())
            .field("access", &self.access)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// One stream observation for [`Journal::apply_observations`].
#[derive(Debug, Clone, PartialEq)]
pub enum StreamObservation {
    /// A Task (a stream snapshot, a GetTask answer) or a stream status update.
    Task {
        /// The attempt observed.
        attempt: AttemptId,
        /// What was seen.
        view: TaskView,
        /// Where it came from.
        source: Source,
    },
    /// A stream artifact update.
    Artifact {
        /// The attempt observed.
        attempt: AttemptId,
        /// The update.
        update: ArtifactUpdate,
    },
}

impl StreamObservation {
    /// The attempt observed.
    pub fn attempt(&self) -> AttemptId {
        match self {
            Self::Task { attempt, .. } | Self::Artifact { attempt, .. } => *attempt,
        }
    }
}

/// What one observation of a batch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recorded {
    /// What changed.
    pub applied: Applied,
    /// The id of the event it appended (`None` when nothing changed).
    pub event: Option<i64>,
    /// Whether it took an artifact or the task past a [`SizeLimits`] limit (its artifacts
    /// were not journaled; the attempt now needs a human).
    pub over_limit: bool,
}

type DateTimeUtc = chrono::DateTime<chrono::Utc>;

// The store as every operation file reaches it: each method is one short transaction.
impl Journal {
    /// Returns the mapper of a statement's error to a [`JournalError`] saying `action`.
    fn err(&self, action: &'static str) -> impl Fn(DbError) -> JournalError + '_ {
        self.store.err(action)
    }

    fn now_ms(&self) -> i64 {
        queries::ms(self.clock.now())
    }

    /// Runs `f` in one write transaction and commits: SQLite's `BEGIN IMMEDIATE`; on
    /// PostgreSQL the journal's write lock, excluding every other write.
    fn write<T>(
        &self,
        action: &'static str,
        f: impl FnOnce(&Tx) -> Result<T, JournalError>,
    ) -> Result<T, JournalError> {
        self.writable()?;
        self.store.transaction(action, |tx, _| Ok((f(tx)?, true)))
    }

    /// Runs `f` in a write transaction that changes only the rows of `attempts` (each one's row,
    /// and its artifacts, replies and events) and marks on agents' rows that only move one way;
    /// committed only when `f` says it changed something (an observation that changes nothing
    /// writes nothing, not even a WAL frame). `f` gets the transaction, the error mapper for
    /// `action` and the time. On PostgreSQL, several hosts' such transactions run side by side
    /// when they share no attempt: `f` must read-decide-write nothing else.
    fn write_attempts_if_changed<T>(
        &self,
        attempts: &[AttemptId],
        action: &'static str,
        f: impl FnOnce(
            &Tx,
            &dyn Fn(DbError) -> JournalError,
            DateTimeUtc,
        ) -> Result<(T, bool), JournalError>,
    ) -> Result<T, JournalError> {
        self.writable()?;
        let now = self.clock.now();
        self.store
            .attempts_transaction(attempts, action, |tx, e| f(tx, e, now))
    }

    /// Runs `f` as [`Journal::write`] does (always committed), scoped to `attempts` as
    /// [`Journal::write_attempts_if_changed`] is.
    fn write_attempts<T>(
        &self,
        attempts: &[AttemptId],
        action: &'static str,
        f: impl FnOnce(&Tx) -> Result<T, JournalError>,
    ) -> Result<T, JournalError> {
        self.write_attempts_if_changed(attempts, action, |tx, _, _| Ok((f(tx)?, true)))
    }

    /// Runs `f` on the connection (reads).
    fn read<T>(
        &self,
        action: &'static str,
        f: impl FnOnce(&Tx) -> DbResult<T>,
    ) -> Result<T, JournalError> {
        self.store.read(action, f)
    }
}

/// Returns whether anything is at the journal path — a file, or a symbolic link even if broken.
///
/// Commands that must not create a journal (`inspect`, `reconcile`, `agents list`) treat "nothing
/// there" as "nothing was ever delegated". A broken link is *not* nothing: it is usually an
/// unmounted volume, and opening it gives a clear error (exit 1) instead of a quiet exit 0 that
/// would look healthy to cron.
pub fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

#[cfg(test)]
mod tests;

/// A fresh journal of either store, for the tests of the modules above the journal.
#[cfg(test)]
pub(crate) mod test_store {
    pub(crate) use super::tests::{Fresh, Kind};
}
