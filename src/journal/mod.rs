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
//! - Nothing from rusqlite leaves this module: methods speak in [`model`] types, so another
//!   backend (PostgreSQL, for several hosts) can implement the same interface.
//!
//! # Opening
//!
//! [`Journal::open`] creates missing directories 0700 and the file 0600, refuses a file that
//! is not SQLite or is truncated *before* any write (the file stays byte-for-byte as it was),
//! sets `journal_mode=WAL`, `synchronous=FULL`, `foreign_keys=ON` and `busy_timeout`, and
//! migrates. A journal whose schema is newer than this binary opens read-only: reads work,
//! writes fail with [`JournalError::NewerVersion`].

mod error;
mod file;
pub mod migrate;
pub mod model;
pub mod operator;
pub mod prune;
mod queries;
mod saga;
mod sends;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use serde_json::{Value, json};

pub use error::JournalError;
pub use model::*;
pub use operator::{AttemptResolution, Decided, Decision};
pub use prune::{PRUNE_BATCH, Storage};
pub use sends::{BatchClaim, SendOutcome, SendRecord};

use crate::a2a::{ArtifactUpdate, ArtifactView, TaskView, message_text};
use crate::clock::{Clock, SystemClock};
use queries::NewEvent;

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

/// A further attempt of an existing step (re-delegation, `resolve --as retry`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAttempt {
    /// The agent's card URL (`None` for a command step).
    pub agent_url: Option<String>,
    /// The credential variable's name (defaults to the step's, then to the registered agent's).
    pub token_env: Option<String>,
    /// A fresh messageId.
    pub message_id: String,
    /// A fresh contextId (dropped if the agent is known to refuse client context ids).
    pub context_id: Option<String>,
    /// The attempt this one follows.
    pub previous: Option<AttemptId>,
}

/// The endpoint an attempt is sent to (journaled before the send).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The JSON-RPC interface URL.
    pub interface_url: String,
    /// The interface's tenant.
    pub tenant: Option<String>,
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

/// A reconcile pass's walk over its rows in delegation order ([`Journal::pass_cursor`]).
pub struct PassCursor {
    window: queries::PassWindow,
    /// How many rows the walk had when it started.
    pub total: usize,
}

impl std::fmt::Debug for PassCursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PassCursor")
            .field("after", &self.window.after)
            .field("through", &self.window.through)
            .field("total", &self.total)
            .finish_non_exhaustive()
    }
}

/// An open journal. Cheap to share (`&Journal` is `Sync`); each method is one short
/// transaction.
pub struct Journal {
    conn: Mutex<Connection>,
    path: PathBuf,
    busy_timeout: Duration,
    access: Access,
    version: i64,
    warnings: Vec<String>,
    clock: Arc<dyn Clock>,
}

// A pass shares one `&Journal` between concurrent tasks.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Journal>();
};

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("path", &self.path)
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

/// What one observation of a batch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recorded {
    /// What changed.
    pub applied: Applied,
    /// The id of the event it appended (`None` when nothing changed).
    pub event: Option<i64>,
}

/// Which held artifacts a change reads.
#[derive(Debug, Clone, Copy)]
enum Wanted<'a> {
    /// Every artifact of the attempt.
    All,
    /// Only these artifact ids (none: no read at all).
    Only(&'a [&'a str]),
}

/// Returns the artifact ids a task view names (a snapshot replaces only those).
fn view_artifact_ids(view: &TaskView) -> Vec<&str> {
    view.artifacts
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(|a| a.artifact_id.as_str())
        .collect()
}

/// The artifacts a batch of stream updates touched, in the order first touched, each as it
/// stands after the updates so far (`None`: not held) and whether it must be written.
#[derive(Debug, Default)]
struct ArtifactCache {
    slots: Vec<(AttemptId, String, Option<Artifact>, bool)>,
}

impl ArtifactCache {
    fn position(&self, id: AttemptId, artifact_id: &str) -> Option<usize> {
        self.slots
            .iter()
            .position(|(a, art, _, _)| *a == id && art == artifact_id)
    }

    fn insert(&mut self, id: AttemptId, artifact_id: &str, held: Option<Artifact>) -> usize {
        self.slots.push((id, artifact_id.to_owned(), held, false));
        self.slots.len() - 1
    }

    /// Applies a stream update to a slot as [`merge_artifact_update`] does, appending in
    /// place; returns whether it changed anything.
    fn update(&mut self, slot: usize, u: &ArtifactUpdate) -> bool {
        let (_, _, held, dirty) = &mut self.slots[slot];
        let v = &u.artifact;
        let changed = match held {
            Some(old) if u.append => {
                if old.last_chunk {
                    return false;
                }
                let name = v.name.clone().or_else(|| old.name.clone());
                let description = v.description.clone().or_else(|| old.description.clone());
                let metadata = v.metadata.clone().or_else(|| old.metadata.clone());
                let added = v.parts.as_array().map_or(&[][..], Vec::as_slice);
                let changed = !added.is_empty()
                    || !old.parts.is_array()
                    || name != old.name
                    || description != old.description
                    || metadata != old.metadata
                    || u.last_chunk != old.last_chunk;
                if changed {
                    if let Value::Array(parts) = &mut old.parts {
                        parts.extend(added.iter().cloned());
                    } else {
                        old.parts = Value::Array(added.to_vec());
                    }
                    old.name = name;
                    old.description = description;
                    old.metadata = metadata;
                    old.last_chunk = u.last_chunk;
                }
                changed
            }
            _ => {
                let new = Artifact {
                    artifact_id: v.artifact_id.clone(),
                    name: v.name.clone(),
                    description: v.description.clone(),
                    parts: v.parts.clone(),
                    metadata: v.metadata.clone(),
                    last_chunk: u.last_chunk,
                };
                let changed = held.as_ref() != Some(&new);
                if changed {
                    *held = Some(new);
                }
                changed
            }
        };
        *dirty |= changed;
        changed
    }

    /// Writes the changed artifacts of one attempt and forgets that attempt's slots (a
    /// snapshot is about to read and replace them).
    fn write(
        &mut self,
        conn: &Connection,
        id: AttemptId,
        now: DateTimeUtc,
    ) -> rusqlite::Result<()> {
        for (a, _, held, dirty) in &self.slots {
            if *a == id
                && *dirty
                && let Some(artifact) = held
            {
                queries::upsert_artifact(conn, id, artifact, queries::ms(now))?;
            }
        }
        self.slots.retain(|(a, _, _, _)| *a != id);
        Ok(())
    }

    /// Writes every changed artifact, in the order first touched.
    fn write_all(&mut self, conn: &Connection, now: DateTimeUtc) -> rusqlite::Result<()> {
        for (id, _, held, dirty) in self.slots.drain(..) {
            if dirty && let Some(artifact) = held {
                queries::upsert_artifact(conn, id, &artifact, queries::ms(now))?;
            }
        }
        Ok(())
    }
}

type DateTimeUtc = chrono::DateTime<chrono::Utc>;

/// A pending change to one attempt, built by a closure in [`Journal::change`].
struct Change {
    /// The attempt after the change.
    next: Attempt,
    /// Artifacts to write.
    artifacts: Vec<Artifact>,
    /// The event's kind when the state does not change but data does.
    kind: &'static str,
    /// The event's details.
    detail: Value,
    /// Force an event even if no column changes (failures).
    force_event: bool,
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
fn retry_busy<T>(
    busy_timeout: Duration,
    mut open: impl FnMut(Duration) -> Result<T, JournalError>,
) -> Result<T, JournalError> {
    let deadline = std::time::Instant::now() + busy_timeout;
    let mut pause = Duration::from_millis(1);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match open(left.max(Duration::from_millis(1))) {
            Err(JournalError::Busy { path, .. }) => {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    return Err(JournalError::Busy {
                        path,
                        waited: busy_timeout,
                    });
                }
                std::thread::sleep(pause.min(left));
                pause = (pause * 2).min(Duration::from_millis(64));
            }
            done => return done,
        }
    }
}

impl Journal {
    /// Opens (creating if needed) the journal at `path` for reading and writing.
    ///
    /// `busy_timeout` is the longest wait for another process's lock (`--timeout`). A journal
    /// from a newer a2a-recover opens read-only (see [`Journal::is_writable`]).
    pub fn open(path: &Path, busy_timeout: Duration) -> Result<Self, JournalError> {
        let warnings = file::prepare(path, true)?;
        file::check_header(path)?;
        let (conn, probe, access) = retry_busy(busy_timeout, |left| {
            let mut conn = Self::connect(path, left, false)?;
            let probe = Self::probe(&conn, path, busy_timeout)?;
            let sql = |action| move |e| JournalError::sqlite(action, path, busy_timeout, e);
            let access = if probe.user_version > migrate::LATEST {
                queries::configure_read_only(&conn).map_err(sql("open the journal read-only"))?;
                Access::Newer(probe.user_version)
            } else {
                queries::configure_writable(&conn).map_err(sql("configure the journal"))?;
                migrate::migrate(&mut conn).map_err(sql("migrate the journal"))?;
                Access::ReadWrite
            };
            queries::set_checkpoint_on_close(&conn, true).map_err(sql("configure the journal"))?;
            conn.busy_timeout(busy_timeout)
                .map_err(sql("set the busy timeout"))?;
            Ok((conn, probe, access))
        })?;
        Ok(Self {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
            busy_timeout,
            access,
            version: probe.user_version.max(migrate::LATEST),
            warnings,
            clock: Arc::new(SystemClock),
        })
    }

    /// Opens an existing journal for reading only; never creates, migrates or writes.
    ///
    /// A journal older than this binary is refused ([`JournalError::ReadOnly`]): it would need
    /// a migration, which is a write; open it with [`Journal::open`].
    pub fn open_read_only(path: &Path, busy_timeout: Duration) -> Result<Self, JournalError> {
        let warnings = file::prepare(path, false)?;
        if file::check_header(path)? == file::Header::Empty {
            return Err(JournalError::ReadOnly {
                path: path.to_path_buf(),
            });
        }
        let (conn, probe) = retry_busy(busy_timeout, |left| {
            let conn = Self::connect(path, left, true)?;
            let probe = Self::probe(&conn, path, busy_timeout)?;
            conn.busy_timeout(busy_timeout)
                .map_err(|e| JournalError::sqlite("set the busy timeout", path, busy_timeout, e))?;
            Ok((conn, probe))
        })?;
        if probe.user_version < migrate::LATEST {
            return Err(JournalError::ReadOnly {
                path: path.to_path_buf(),
            });
        }
        Ok(Self {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
            busy_timeout,
            access: Access::ReadOnly,
            version: probe.user_version,
            warnings,
            clock: Arc::new(SystemClock),
        })
    }

    fn connect(
        path: &Path,
        busy_timeout: Duration,
        read_only: bool,
    ) -> Result<Connection, JournalError> {
        let flags = if read_only {
            OpenFlags::SQLITE_OPEN_READ_ONLY
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE
        } | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let sql = |action| move |e| JournalError::sqlite(action, path, busy_timeout, e);
        let conn = Connection::open_with_flags(path, flags).map_err(sql("open the journal"))?;
        // Until the probe has read the journal, closing must not checkpoint: the last
        // connection to close copies the WAL into the file, and a damaged file must stay as it
        // was (with its WAL) for `.recover`. `open` turns checkpoints back on once it is sound.
        queries::set_checkpoint_on_close(&conn, false).map_err(sql("configure the journal"))?;
        conn.busy_timeout(busy_timeout)
            .map_err(sql("set the busy timeout"))?;
        conn.set_prepared_statement_cache_capacity(queries::STATEMENT_CACHE);
        // Plans that never depend on bound values: otherwise SQLite (STAT4 is compiled in) marks
        // a statement whose parameter it looked at as expiring on every rebind, and each use of
        // a cached statement parses it again (docs/performance.md).
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
            true,
        )
        .map_err(sql("configure the journal connection"))?;
        Ok(conn)
    }

    /// Reads before any write: a damaged or foreign database is refused here, untouched.
    fn probe(
        conn: &Connection,
        path: &Path,
        busy_timeout: Duration,
    ) -> Result<queries::Probe, JournalError> {
        let probe = queries::probe(conn).map_err(|e| match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::NotADatabase) => JournalError::NotSqlite {
                path: path.to_path_buf(),
            },
            _ => JournalError::sqlite("read the schema", path, busy_timeout, e),
        })?;
        let ours = probe.application_id == migrate::APPLICATION_ID;
        let blank = probe.application_id == 0 && probe.user_version == 0 && probe.objects == 0;
        if !ours && !blank {
            return Err(JournalError::NotAJournal {
                path: path.to_path_buf(),
            });
        }
        Ok(probe)
    }

    /// Replaces the clock used for journal times and leases (tests).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Returns the journal's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Returns warnings found while opening (an unsafe directory mode), for the caller to print.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Returns whether writes are allowed (false for a newer journal or a read-only open).
    pub fn is_writable(&self) -> bool {
        self.access == Access::ReadWrite
    }

    /// Returns the journal's schema version.
    pub fn schema_version(&self) -> i64 {
        self.version
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn writable(&self) -> Result<(), JournalError> {
        match self.access {
            Access::ReadWrite => Ok(()),
            Access::ReadOnly => Err(JournalError::ReadOnly {
                path: self.path.clone(),
            }),
            Access::Newer(found) => Err(JournalError::NewerVersion {
                path: self.path.clone(),
                found,
                known: migrate::LATEST,
            }),
        }
    }

    fn err(&self, action: &'static str) -> impl Fn(rusqlite::Error) -> JournalError + '_ {
        move |e| JournalError::sqlite(action, &self.path, self.busy_timeout, e)
    }

    fn now_ms(&self) -> i64 {
        queries::ms(self.clock.now())
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction and commits.
    fn write<T>(
        &self,
        action: &'static str,
        f: impl FnOnce(&Connection) -> Result<T, JournalError>,
    ) -> Result<T, JournalError> {
        self.write_if_changed(action, |tx, _, _| Ok((f(tx)?, true)))
    }

    /// Runs `f` in an IMMEDIATE transaction that is committed only when `f` says it changed
    /// something: an observation that changes nothing writes nothing, not even a WAL frame
    /// (DESIGN.md §2). `f` gets the transaction, the error mapper for `action` and the time.
    fn write_if_changed<T>(
        &self,
        action: &'static str,
        f: impl FnOnce(
            &Connection,
            &dyn Fn(rusqlite::Error) -> JournalError,
            DateTimeUtc,
        ) -> Result<(T, bool), JournalError>,
    ) -> Result<T, JournalError> {
        self.writable()?;
        let now = self.clock.now();
        let mut conn = self.lock();
        let e = self.err(action);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(&e)?;
        let (out, changed) = f(&tx, &e, now)?;
        if changed {
            tx.commit().map_err(&e)?;
        }
        // Otherwise dropping the transaction rolls it back; nothing reaches the disk.
        Ok(out)
    }

    /// Runs `f` on the connection (reads).
    fn read<T>(
        &self,
        action: &'static str,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, JournalError> {
        let conn = self.lock();
        f(&conn).map_err(self.err(action))
    }

    // -----------------------------------------------------------------------------------------
    // Intents and attempts
    // -----------------------------------------------------------------------------------------

    /// Commits new steps and their `INTENT` attempts 1, all in ONE transaction.
    ///
    /// A step that already exists is left untouched and returned as
    /// [`IntentOutcome::Existing`] (the caller compares its definition: same text means a
    /// re-run, different text is a usage error). Each new attempt appends an `intent` event.
    /// If the agent is known to refuse client context ids, the contextId is not stored.
    pub fn create_intents(
        &self,
        intents: &[NewIntent],
    ) -> Result<Vec<IntentOutcome>, JournalError> {
        let now = self.now_ms();
        self.write("commit the intent", |tx| {
            let e = self.err("commit the intent");
            // Per plan, not per step: each workflow's id and each agent's row are read once
            // (nothing else writes them inside this transaction).
            let mut workflows: HashMap<&str, Option<i64>> = HashMap::new();
            let mut agents: HashMap<&str, queries::IntentAgent> = HashMap::new();
            let mut out = Vec::with_capacity(intents.len());
            for intent in intents {
                let name = &intent.spec.name;
                let wf = if let Some(&wf) = workflows.get(name.workflow.as_str()) {
                    wf
                } else {
                    let wf = queries::workflow_id(tx, &name.workflow).map_err(&e)?;
                    workflows.insert(&name.workflow, wf);
                    wf
                };
                let existing = match wf {
                    Some(wf) => queries::step_id_in(tx, wf, &name.step).map_err(&e)?,
                    None => None,
                };
                if let Some(id) = existing {
                    let step = queries::step_by_id(tx, id)
                        .map_err(&e)?
                        .ok_or_else(|| JournalError::UnknownStep(name.to_string()))?;
                    let attempts = queries::attempts_of_step(tx, step.id).map_err(&e)?;
                    out.push(IntentOutcome::Existing(StepRecord { step, attempts }));
                    continue;
                }
                let wf = if let Some(wf) = wf {
                    wf
                } else {
                    let wf = queries::workflow_id_or_insert(tx, &name.workflow, now).map_err(&e)?;
                    workflows.insert(&name.workflow, Some(wf));
                    wf
                };
                let agent = match intent.agent_url.as_deref() {
                    Some(url) => Some(if let Some(found) = agents.get(url) {
                        found.clone()
                    } else {
                        let found = queries::intent_agent(tx, url, now).map_err(&e)?;
                        agents.insert(url, found.clone());
                        found
                    }),
                    None => None,
                };
                let step = queries::insert_step(tx, wf, &intent.spec, None, now).map_err(&e)?;
                let new = NewAttempt {
                    agent_url: intent.agent_url.clone(),
                    token_env: intent.spec.token_env.clone(),
                    message_id: intent.message_id.clone(),
                    context_id: intent.context_id.clone(),
                    previous: None,
                };
                out.push(IntentOutcome::Created(self.insert_attempt_of(
                    tx,
                    (step, Some(wf)),
                    1,
                    &new,
                    agent.as_ref(),
                    now,
                )?));
            }
            Ok(out)
        })
    }

    fn insert_attempt(
        &self,
        tx: &Connection,
        step: StepId,
        number: u32,
        new: &NewAttempt,
        now: i64,
    ) -> Result<Attempt, JournalError> {
        let agent = match &new.agent_url {
            Some(url) => {
                Some(queries::intent_agent(tx, url, now).map_err(self.err("commit the intent"))?)
            }
            None => None,
        };
        self.insert_attempt_of(tx, (step, None), number, new, agent.as_ref(), now)
    }

    /// Inserts an `INTENT` attempt and its `intent` event for a step (and its workflow's id
    /// when known); `agent` is the row of `new.agent_url`.
    fn insert_attempt_of(
        &self,
        tx: &Connection,
        (step, workflow): (StepId, Option<i64>),
        number: u32,
        new: &NewAttempt,
        agent: Option<&queries::IntentAgent>,
        now: i64,
    ) -> Result<Attempt, JournalError> {
        let e = self.err("commit the intent");
        let mut token_env = new.token_env.clone();
        // No variable named for the step: a registered agent's own one (`agents add
        // --token-env`) is what every send and look of this attempt uses.
        if token_env.is_none() {
            token_env = agent.and_then(|a| a.registered_token_env.clone());
        }
        let context_id = if agent.is_some_and(|a| a.refuses_context_id) {
            None
        } else {
            new.context_id.clone()
        };
        let row = queries::NewAttemptRow {
            step,
            number,
            agent: agent.map(|a| a.id),
            token_env: token_env.as_deref(),
            message_id: &new.message_id,
            context_id: context_id.as_deref(),
            previous: new.previous,
            now,
        };
        let id = queries::insert_attempt(tx, &row).map_err(&e)?;
        let detail = json!({
            "messageId": new.message_id,
            "contextId": context_id,
            "agent": new.agent_url,
            "previousAttempt": new.previous.map(|p| p.0),
        });
        queries::insert_event(
            tx,
            &NewEvent {
                at: now,
                workflow,
                step: Some(step),
                attempt: Some(id),
                kind: "intent",
                from: None,
                to: Some(AttemptState::Intent.as_str()),
                detail: Some(&detail),
            },
        )
        .map_err(&e)?;
        Ok(queries::inserted_attempt(id, &row, new.agent_url.clone()))
    }

    /// Commits a further `INTENT` attempt of a step (numbered after the last one).
    ///
    /// Fails with [`JournalError::BudgetSpent`] when the step has used its `max_attempts`.
    pub fn add_attempt(&self, step: StepId, new: &NewAttempt) -> Result<Attempt, JournalError> {
        let now = self.now_ms();
        self.write("commit the intent", |tx| {
            let e = self.err("commit the intent");
            let s = queries::step_by_id(tx, step)
                .map_err(&e)?
                .ok_or_else(|| JournalError::UnknownStep(format!("#{}", step.0)))?;
            let number = queries::max_attempt_number(tx, step).map_err(&e)? + 1;
            if number > s.spec.max_attempts {
                return Err(JournalError::BudgetSpent {
                    step: s.spec.name.to_string(),
                    max: s.spec.max_attempts,
                });
            }
            let mut new = new.clone();
            if new.token_env.is_none() {
                new.token_env.clone_from(&s.spec.token_env);
            }
            self.insert_attempt(tx, step, number, &new, now)
        })
    }

    /// Returns a step and all its attempts, or `None` if the journal has no such step.
    pub fn step(&self, name: &StepName) -> Result<Option<StepRecord>, JournalError> {
        self.read("read the step", |c| {
            let Some(step) = queries::step_by_name(c, name)? else {
                return Ok(None);
            };
            let attempts = queries::attempts_of_step(c, step.id)?;
            Ok(Some(StepRecord { step, attempts }))
        })
    }

    /// Returns one attempt.
    pub fn attempt(&self, id: AttemptId) -> Result<Attempt, JournalError> {
        self.read("read the attempt", |c| queries::attempt_by_id(c, id))?
            .ok_or(JournalError::UnknownAttempt(id.0))
    }

    /// Returns an attempt's journaled artifacts.
    pub fn artifacts(&self, id: AttemptId) -> Result<Vec<Artifact>, JournalError> {
        self.read("read the artifacts", |c| queries::artifacts_of(c, id))
    }

    /// Returns the events of a step and its attempts, oldest first (empty for an unknown step).
    pub fn events_of_step(&self, name: &StepName) -> Result<Vec<Event>, JournalError> {
        self.read("read the events", |c| {
            match queries::step_by_name(c, name)? {
                Some(step) => queries::events_of_step(c, step.id),
                None => Ok(Vec::new()),
            }
        })
    }

    /// Returns the rows `inspect` shows, filtered and limited in SQL, with the total count.
    pub fn inspect(&self, filter: &InspectFilter) -> Result<InspectPage, JournalError> {
        self.read("read the journal", |c| {
            let (rows, total) = queries::inspect(c, filter)?;
            Ok(InspectPage { rows, total })
        })
    }

    /// Returns each statement [`Journal::inspect`] runs for `filter` (`count`, `page`) with
    /// SQLite's plan for it (`EXPLAIN QUERY PLAN`), for `docs/performance.md` and the benchmarks.
    pub fn explain_inspect(
        &self,
        filter: &InspectFilter,
    ) -> Result<Vec<(String, Vec<String>)>, JournalError> {
        self.read("explain the inspect query", |c| {
            queries::explain_inspect(c, filter)
        })
    }

    /// Returns the latest attempt of every unresolved step that is not finished
    /// ([`AttemptState::is_finished`]), in delegation order; only in `workflows` if not empty.
    ///
    /// This is what a reconcile pass visits: `INTENT` (look, then send), task known and not
    /// terminal (read it), `UNCERTAIN` (report). Terminal attempts needing a decision
    /// (re-delegation, verification) are found with [`Journal::inspect`].
    pub fn unfinished_attempts(
        &self,
        workflows: &[String],
    ) -> Result<Vec<AttemptRow>, JournalError> {
        self.read("read the unfinished attempts", |c| {
            queries::unfinished(c, workflows)
        })
    }

    /// Returns a workflow's state, or `None` if it does not exist.
    pub fn workflow_state(&self, name: &str) -> Result<Option<WorkflowState>, JournalError> {
        self.read("read the workflow", |c| queries::workflow_state(c, name))
    }

    /// Returns whether a workflow exists.
    pub fn workflow_exists(&self, name: &str) -> Result<bool, JournalError> {
        self.read("read the workflow", |c| queries::workflow_exists(c, name))
    }

    // -----------------------------------------------------------------------------------------
    // Changes to an attempt
    // -----------------------------------------------------------------------------------------

    /// Applies a change to one attempt in one transaction: `f` builds the next row from the
    /// held one; if nothing differs, nothing is written (the transaction is rolled back).
    fn change(
        &self,
        id: AttemptId,
        action: &'static str,
        f: impl FnOnce(&Attempt, &[Artifact]) -> Result<Option<Change>, JournalError>,
    ) -> Result<Applied, JournalError> {
        self.write_if_changed(action, |tx, e, now| {
            let (applied, _) = Self::change_in(tx, &e, now, id, Wanted::All, f)?;
            let changed = applied.changed();
            Ok((applied, changed))
        })
    }

    /// The body of [`Journal::change`], inside a transaction the caller commits; returns what
    /// it did and the id of the event it appended.
    ///
    /// `wanted` says which held artifacts `f` needs: reading (and parsing) every artifact of an
    /// attempt for each stream event would cost a long stream time quadratic in its length.
    fn change_in(
        tx: &Connection,
        e: &impl Fn(rusqlite::Error) -> JournalError,
        now: chrono::DateTime<chrono::Utc>,
        id: AttemptId,
        wanted: Wanted<'_>,
        f: impl FnOnce(&Attempt, &[Artifact]) -> Result<Option<Change>, JournalError>,
    ) -> Result<(Applied, Option<i64>), JournalError> {
        let held = queries::attempt_by_id(tx, id)
            .map_err(e)?
            .ok_or(JournalError::UnknownAttempt(id.0))?;
        let held_artifacts = match wanted {
            Wanted::All => queries::artifacts_of(tx, id).map_err(e)?,
            Wanted::Only(ids) => {
                let mut found = Vec::with_capacity(ids.len());
                for artifact_id in ids {
                    found.extend(queries::artifact_of(tx, id, artifact_id).map_err(e)?);
                }
                found
            }
        };
        let Some(change) = f(&held, &held_artifacts)? else {
            return Ok((Applied::Unchanged, None));
        };
        Self::apply_change(tx, e, now, &held, change).map(|(applied, event, _)| (applied, event))
    }

    /// Writes a change of an attempt read in the same transaction (`held`): the row, its
    /// artifacts and the event; returns what it did, the event's id and the row as written.
    fn apply_change(
        tx: &Connection,
        e: &impl Fn(rusqlite::Error) -> JournalError,
        now: chrono::DateTime<chrono::Utc>,
        held: &Attempt,
        change: Change,
    ) -> Result<(Applied, Option<i64>, Attempt), JournalError> {
        let id = held.id;
        let row_changed = change.next != *held;
        if !row_changed && change.artifacts.is_empty() && !change.force_event {
            return Ok((Applied::Unchanged, None, held.clone()));
        }
        let mut next = change.next;
        next.updated_at = now;
        queries::update_attempt_from(tx, held, &next).map_err(e)?;
        for artifact in &change.artifacts {
            queries::upsert_artifact(tx, id, artifact, queries::ms(now)).map_err(e)?;
        }
        let state_changed = next.state != held.state;
        queries::insert_event(
            tx,
            &NewEvent {
                at: queries::ms(now),
                workflow: None,
                step: Some(held.step_id),
                attempt: Some(id),
                kind: if state_changed { "state" } else { change.kind },
                from: Some(held.state.as_str()),
                to: Some(next.state.as_str()),
                detail: Some(&change.detail),
            },
        )
        .map_err(e)?;
        let event = tx.last_insert_rowid();
        Ok((
            Applied::Changed {
                from: held.state,
                to: next.state,
            },
            Some(event),
            next,
        ))
    }

    fn transition_of(
        held: &Attempt,
        obs: Observation,
    ) -> Result<Option<AttemptState>, JournalError> {
        transition(held.state, &obs).map_err(|source| JournalError::Transition {
            attempt: held.id.0,
            source,
        })
    }

    /// Journals the endpoint an attempt is about to be sent to; call it before every send.
    ///
    /// The first endpoint journaled wins: an attempt is always resent (and looked for) where it
    /// was first sent, so the returned attempt's `interface_url`/`tenant` are the ones to use.
    pub fn set_endpoint(
        &self,
        id: AttemptId,
        endpoint: &Endpoint,
    ) -> Result<Attempt, JournalError> {
        self.change(id, "journal the endpoint", |held, _| {
            Ok(Self::endpoint_change(held, endpoint))
        })?;
        self.attempt(id)
    }

    /// What journaling an endpoint changes: nothing once one is journaled.
    fn endpoint_change(held: &Attempt, endpoint: &Endpoint) -> Option<Change> {
        if held.interface_url.is_some() {
            return None;
        }
        let mut next = held.clone();
        next.interface_url = Some(endpoint.interface_url.clone());
        next.tenant.clone_from(&endpoint.tenant);
        Some(Change {
            next,
            artifacts: Vec::new(),
            kind: "endpoint",
            detail: json!({"interfaceUrl": endpoint.interface_url, "tenant": endpoint.tenant}),
            force_event: false,
        })
    }

    /// Applies a remote Task (a send's answer, GetTask, ListTasks, a stream snapshot or status
    /// update) as an observation; writes only what changed.
    ///
    /// Records the task id (the first time), the agent's contextId, the state (through
    /// [`transition`]), the status timestamp at full precision, the pending question (the full
    /// status message of INPUT_REQUIRED / AUTH_REQUIRED), artifacts by `artifactId`, and the
    /// raw JSON. A status strictly older than the one held is ignored entirely; a terminal
    /// attempt only takes artifacts it did not have yet.
    pub fn apply_task(
        &self,
        id: AttemptId,
        view: &TaskView,
        source: Source,
    ) -> Result<Applied, JournalError> {
        let ids = view_artifact_ids(view);
        self.write_if_changed("journal the task", |tx, e, now| {
            let (applied, _) =
                Self::change_in(tx, &e, now, id, Wanted::Only(&ids), |held, artifacts| {
                    Self::task_change(held, artifacts, view, source)
                })?;
            let changed = applied.changed();
            Ok((applied, changed))
        })
    }

    /// Applies many remote Tasks as [`Journal::apply_task`] does, in ONE transaction (a
    /// reconcile pass group-commits its routine observations: one durable write for many).
    ///
    /// Only for observations that may be lost in a crash: they are re-read on the next pass.
    /// Returns what each did, in order.
    pub fn apply_tasks(
        &self,
        batch: &[(AttemptId, TaskView)],
        source: Source,
    ) -> Result<Vec<Applied>, JournalError> {
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        self.write_if_changed("journal the tasks", |tx, e, now| {
            let mut out = Vec::with_capacity(batch.len());
            for (id, view) in batch {
                let ids = view_artifact_ids(view);
                let (applied, _) =
                    Self::change_in(tx, &e, now, *id, Wanted::Only(&ids), |held, artifacts| {
                        Self::task_change(held, artifacts, view, source)
                    })?;
                out.push(applied);
            }
            let changed = out.iter().any(|a| a.changed());
            Ok((out, changed))
        })
    }

    /// What applying a remote Task to an attempt changes (see [`Journal::apply_task`]).
    fn task_change(
        held: &Attempt,
        held_artifacts: &[Artifact],
        view: &TaskView,
        source: Source,
    ) -> Result<Option<Change>, JournalError> {
        if let Some(t) = &held.task_id
            && *t != view.task_id
        {
            return Err(JournalError::TaskMismatch {
                attempt: held.id.0,
                held: t.clone(),
                seen: view.task_id.clone(),
            });
        }
        let freshness = Freshness::of(held.status_time(), view.timestamp.as_ref().map(|t| t.at));
        let obs = Observation::Remote {
            state: view.state,
            freshness,
        };
        let to = Self::transition_of(held, obs)?;
        let mut next = held.clone();
        let artifacts = merge_snapshot_artifacts(held_artifacts, view.artifacts.as_deref());
        if held.state.is_terminal() {
            if artifacts.is_empty() {
                return Ok(None);
            }
        } else if freshness == Freshness::Older && held.state.has_task() {
            return Ok(None);
        } else {
            next.task_id = Some(view.task_id.clone());
            if let Some(ctx) = &view.context_id
                && held.context_id.as_ref() != Some(ctx)
            {
                next.context_id = Some(ctx.clone());
                next.context_id_ours = false;
            }
            if let Some(state) = to {
                next.state = state;
                next.error = None;
            }
            next.remote_state = Some(view.remote_state.clone());
            if let Some(ts) = &view.timestamp {
                next.status_timestamp = Some(ts.text.clone());
            }
            next.pending_question = if view.state.is_interrupted() {
                if to.is_some() {
                    view.status_message.clone()
                } else {
                    view.status_message
                        .clone()
                        .or_else(|| held.pending_question.clone())
                }
            } else {
                None
            };
        }
        let data_changed = next != *held || !artifacts.is_empty();
        if data_changed && let Some(raw) = &view.raw_json {
            next.last_task_json = Some(raw.clone());
        }
        Ok(Some(Change {
            detail: json!({
                "source": source.as_str(),
                "taskId": view.task_id,
                "remoteState": view.remote_state,
                "statusTimestamp": view.timestamp.as_ref().map(|t| &t.text),
                "question": next.pending_question.as_ref().map(message_text),
                "artifacts": artifacts.iter().map(|a| &a.artifact_id).collect::<Vec<_>>(),
            }),
            next,
            artifacts,
            kind: "observed",
            force_event: false,
        }))
    }

    /// Applies a stream artifact update: `append` adds parts to the held artifact, otherwise it
    /// replaces it; `lastChunk` marks it complete. An append after the last chunk is ignored.
    pub fn apply_artifact_update(
        &self,
        id: AttemptId,
        update: &ArtifactUpdate,
    ) -> Result<Applied, JournalError> {
        self.write_if_changed("journal the artifact", |tx, e, now| {
            let (applied, _) = Self::artifact_change_in(tx, &e, now, id, update)?;
            let changed = applied.changed();
            Ok((applied, changed))
        })
    }

    /// The body of [`Journal::apply_artifact_update`], inside a transaction the caller commits.
    fn artifact_change_in(
        tx: &Connection,
        e: &impl Fn(rusqlite::Error) -> JournalError,
        now: chrono::DateTime<chrono::Utc>,
        id: AttemptId,
        update: &ArtifactUpdate,
    ) -> Result<(Applied, Option<i64>), JournalError> {
        let wanted = [update.artifact.artifact_id.as_str()];
        Self::change_in(
            tx,
            e,
            now,
            id,
            Wanted::Only(&wanted),
            |held, held_artifacts| {
                if held.task_id.as_deref() != Some(update.task_id.as_str()) {
                    return Err(JournalError::TaskMismatch {
                        attempt: held.id.0,
                        held: held.task_id.clone().unwrap_or_default(),
                        seen: update.task_id.clone(),
                    });
                }
                let existing = held_artifacts
                    .iter()
                    .find(|a| a.artifact_id == update.artifact.artifact_id);
                let merged = merge_artifact_update(existing, update);
                if merged.as_ref() == existing || merged.is_none() {
                    return Ok(None);
                }
                let merged = merged.into_iter().collect::<Vec<_>>();
                Ok(Some(Change {
                    next: held.clone(),
                    detail: json!({
                        "source": Source::Stream.as_str(),
                        "artifactId": update.artifact.artifact_id,
                        "append": update.append,
                        "lastChunk": update.last_chunk,
                    }),
                    artifacts: merged,
                    kind: "artifact",
                    force_event: false,
                }))
            },
        )
    }

    /// Applies a batch of stream observations (task snapshots, status and artifact updates,
    /// GetTask answers), in order, in ONE transaction: one durable commit for many events.
    ///
    /// The follow engine group-commits with it and shows an observation only once this has
    /// returned, so "journaled before shown" holds per event. An observation that does not
    /// apply (a task mismatch, an impossible transition) gets its own `Err` and writes nothing;
    /// the others still commit. A storage failure rolls the whole batch back (the outer `Err`).
    pub fn apply_observations(
        &self,
        batch: &[StreamObservation],
    ) -> Result<Vec<Result<Recorded, JournalError>>, JournalError> {
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        self.write_if_changed("journal the stream events", |tx, e, now| {
            let mut out = Vec::with_capacity(batch.len());
            // The artifacts that stream updates of this batch touched, as they stand, written once
            // at the end: appending chunk after chunk would otherwise read, parse and rewrite the
            // whole artifact for each chunk.
            let mut touched = ArtifactCache::default();
            for obs in batch {
                let done = match obs {
                    StreamObservation::Task {
                        attempt,
                        view,
                        source,
                    } => {
                        let ids = view_artifact_ids(view);
                        // A snapshot with artifacts reads them: write what the batch holds first.
                        if !ids.is_empty() {
                            touched.write(tx, *attempt, now).map_err(&e)?;
                        }
                        Self::change_in(tx, &e, now, *attempt, Wanted::Only(&ids), |held, arts| {
                            Self::task_change(held, arts, view, *source)
                        })
                    }
                    StreamObservation::Artifact { attempt, update } => {
                        Self::cached_artifact_change(tx, &e, now, *attempt, update, &mut touched)
                    }
                };
                match done {
                    Ok((applied, event)) => out.push(Ok(Recorded { applied, event })),
                    // Refused before anything of it was written: the rest of the batch goes on.
                    Err(
                        err @ (JournalError::TaskMismatch { .. }
                        | JournalError::Transition { .. }
                        | JournalError::UnknownAttempt(_)),
                    ) => out.push(Err(err)),
                    Err(err) => return Err(err),
                }
            }
            touched.write_all(tx, now).map_err(e)?;
            let changed = out
                .iter()
                .any(|r| r.as_ref().is_ok_and(|r| r.applied.changed()));
            Ok((out, changed))
        })
    }

    /// [`Journal::apply_artifact_update`] inside a batch: the artifact is read once into
    /// `touched`, updated there in place, and written by the caller at the end of the batch;
    /// the attempt's `updated_at` and the event are written now, as for a single update.
    fn cached_artifact_change(
        tx: &Connection,
        e: &impl Fn(rusqlite::Error) -> JournalError,
        now: chrono::DateTime<chrono::Utc>,
        id: AttemptId,
        update: &ArtifactUpdate,
        touched: &mut ArtifactCache,
    ) -> Result<(Applied, Option<i64>), JournalError> {
        let held = queries::attempt_by_id(tx, id)
            .map_err(e)?
            .ok_or(JournalError::UnknownAttempt(id.0))?;
        if held.task_id.as_deref() != Some(update.task_id.as_str()) {
            return Err(JournalError::TaskMismatch {
                attempt: held.id.0,
                held: held.task_id.clone().unwrap_or_default(),
                seen: update.task_id.clone(),
            });
        }
        let artifact_id = update.artifact.artifact_id.as_str();
        let slot = if let Some(i) = touched.position(id, artifact_id) {
            i
        } else {
            let held_artifact = queries::artifact_of(tx, id, artifact_id).map_err(e)?;
            touched.insert(id, artifact_id, held_artifact)
        };
        if !touched.update(slot, update) {
            return Ok((Applied::Unchanged, None));
        }
        let mut next = held.clone();
        next.updated_at = now;
        queries::update_attempt_from(tx, &held, &next).map_err(e)?;
        queries::insert_event(
            tx,
            &NewEvent {
                at: queries::ms(now),
                workflow: None,
                step: Some(held.step_id),
                attempt: Some(id),
                kind: "artifact",
                from: Some(held.state.as_str()),
                to: Some(held.state.as_str()),
                detail: Some(&json!({
                    "source": Source::Stream.as_str(),
                    "artifactId": update.artifact.artifact_id,
                    "append": update.append,
                    "lastChunk": update.last_chunk,
                })),
            },
        )
        .map_err(e)?;
        Ok((
            Applied::Changed {
                from: held.state,
                to: held.state,
            },
            Some(tx.last_insert_rowid()),
        ))
    }

    fn settle(
        &self,
        id: AttemptId,
        action: &'static str,
        obs: Observation,
        edit: impl FnOnce(&mut Attempt),
        detail: Value,
    ) -> Result<Applied, JournalError> {
        self.change(id, action, |held, _| {
            Self::settle_change(held, obs, edit, detail)
        })
    }

    /// What settling an attempt on an observation changes (see [`Journal::record_refusal`]).
    fn settle_change(
        held: &Attempt,
        obs: Observation,
        edit: impl FnOnce(&mut Attempt),
        detail: Value,
    ) -> Result<Option<Change>, JournalError> {
        let Some(to) = Self::transition_of(held, obs)? else {
            return Ok(None);
        };
        let mut next = held.clone();
        next.state = to;
        next.error = None;
        edit(&mut next);
        Ok(Some(Change {
            next,
            artifacts: Vec::new(),
            kind: "state",
            detail,
            force_event: false,
        }))
    }

    /// What recording a failure that changes no state writes (see [`Journal::record_failure`]).
    fn failure_change(held: &Attempt, kind: FailureKind, summary: &str) -> Change {
        let mut next = held.clone();
        next.error = Some(summary.to_owned());
        Change {
            next,
            artifacts: Vec::new(),
            kind: kind.as_str(),
            detail: json!({"error": summary}),
            force_event: true,
        }
    }

    /// Records that the send was answered by a direct Message (`REPLIED`; no task exists).
    pub fn record_direct_reply(
        &self,
        id: AttemptId,
        message_json: &str,
        context_id: Option<&str>,
    ) -> Result<Applied, JournalError> {
        self.change(id, "journal the reply", |held, _| {
            Self::direct_reply_change(held, message_json, context_id)
        })
    }

    /// What recording a direct reply changes (see [`Journal::record_direct_reply`]).
    fn direct_reply_change(
        held: &Attempt,
        message_json: &str,
        context_id: Option<&str>,
    ) -> Result<Option<Change>, JournalError> {
        let text = serde_json::from_str::<Value>(message_json)
            .map(|m| message_text(&m))
            .unwrap_or_default();
        Self::settle_change(
            held,
            Observation::DirectReply,
            |next| {
                next.outcome_json = Some(message_json.to_owned());
                if let Some(ctx) = context_id.filter(|c| !c.is_empty())
                    && next.context_id.as_deref() != Some(ctx)
                {
                    next.context_id = Some(ctx.to_owned());
                    next.context_id_ours = false;
                }
            },
            json!({"source": Source::Send.as_str(), "reply": text}),
        )
    }

    /// Records a definitive refusal (`REFUSED`): nothing was created remotely.
    pub fn record_refusal(&self, id: AttemptId, summary: &str) -> Result<Applied, JournalError> {
        self.change(id, "journal the refusal", |held, _| {
            Self::refusal_change(held, summary)
        })
    }

    /// What recording a refusal changes (see [`Journal::record_refusal`]).
    fn refusal_change(held: &Attempt, summary: &str) -> Result<Option<Change>, JournalError> {
        Self::settle_change(
            held,
            Observation::Refused,
            |next| next.error = Some(summary.to_owned()),
            json!({"error": summary}),
        )
    }

    /// Marks an attempt `UNCERTAIN`: the look could not prove whether the send created anything.
    pub fn mark_uncertain(&self, id: AttemptId, reason: &str) -> Result<Applied, JournalError> {
        self.settle(
            id,
            "journal the uncertainty",
            Observation::Unprovable,
            |next| next.error = Some(reason.to_owned()),
            json!({"reason": reason}),
        )
    }

    /// Marks a recorded task `LOST`: the agent answered TaskNotFound.
    pub fn mark_lost(&self, id: AttemptId, detail: &str) -> Result<Applied, JournalError> {
        self.settle(
            id,
            "journal the lost task",
            Observation::NotFound,
            |next| {
                next.error = Some(detail.to_owned());
                next.pending_question = None;
            },
            json!({"error": detail}),
        )
    }

    /// Puts an `UNCERTAIN` attempt back to `INTENT` on the operator's `resolve --as resend`.
    pub fn reopen_for_resend(&self, id: AttemptId, reason: &str) -> Result<Applied, JournalError> {
        self.settle(
            id,
            "journal the resend",
            Observation::Resend,
            |_| {},
            json!({"reason": reason}),
        )
    }

    /// Records a failure that changes no state (an unknown send outcome, a failed read): an
    /// event, and the attempt's `error`. Always writes.
    pub fn record_failure(
        &self,
        id: AttemptId,
        kind: FailureKind,
        summary: &str,
    ) -> Result<(), JournalError> {
        self.change(id, "journal the failure", |held, _| {
            Ok(Some(Self::failure_change(held, kind, summary)))
        })
        .map(|_| ())
    }

    /// Sets an attempt's effect state (verification, compensation); no-op if unchanged.
    pub fn set_effect(
        &self,
        id: AttemptId,
        effect: Option<EffectState>,
        detail: &Value,
    ) -> Result<Applied, JournalError> {
        self.change(id, "journal the effect", |held, _| {
            let mut next = held.clone();
            next.effect = effect;
            Ok(Some(Change {
                next,
                artifacts: Vec::new(),
                kind: "effect",
                detail: json!({"effect": effect.map(EffectState::as_str), "detail": detail}),
                force_event: false,
            }))
        })
    }

    /// Records that `compensate` asked the agent to cancel this attempt's task.
    pub fn mark_cancel_requested(&self, id: AttemptId) -> Result<Applied, JournalError> {
        let now = self.clock.now();
        self.change(id, "journal the cancel", |held, _| {
            if held.cancel_requested_at.is_some() {
                return Ok(None);
            }
            let mut next = held.clone();
            next.cancel_requested_at = Some(now);
            Ok(Some(Change {
                next,
                artifacts: Vec::new(),
                kind: "cancel-requested",
                detail: json!({}),
                force_event: false,
            }))
        })
    }

    // -----------------------------------------------------------------------------------------
    // Workflows and steps
    // -----------------------------------------------------------------------------------------

    /// Sets a workflow's state; returns whether it changed (an event records it).
    pub fn set_workflow_state(
        &self,
        workflow: &str,
        state: WorkflowState,
    ) -> Result<bool, JournalError> {
        let now = self.now_ms();
        self.write("journal the workflow state", |tx| {
            let e = self.err("journal the workflow state");
            match queries::set_workflow_state(tx, workflow, state, now).map_err(&e)? {
                None => {
                    if queries::workflow_exists(tx, workflow).map_err(&e)? {
                        Ok(false)
                    } else {
                        Err(JournalError::UnknownWorkflow(workflow.to_owned()))
                    }
                }
                Some((wf, old)) => {
                    queries::insert_event(
                        tx,
                        &NewEvent {
                            at: now,
                            workflow: Some(wf),
                            step: None,
                            attempt: None,
                            kind: "workflow-state",
                            from: Some(old.as_str()),
                            to: Some(state.as_str()),
                            detail: None,
                        },
                    )
                    .map_err(&e)?;
                    Ok(true)
                }
            }
        })
    }

    /// Records an operator's decision on a step, with the reason (an event records it).
    pub fn resolve_step(
        &self,
        name: &StepName,
        resolution: Resolution,
        reason: &str,
    ) -> Result<(), JournalError> {
        let now = self.now_ms();
        self.write("journal the resolution", |tx| {
            let e = self.err("journal the resolution");
            let step = queries::step_by_name(tx, name)
                .map_err(&e)?
                .ok_or_else(|| JournalError::UnknownStep(name.to_string()))?;
            queries::set_resolution(tx, step.id, Some(resolution), Some(reason), now)
                .map_err(&e)?;
            let detail = json!({"resolution": resolution.as_str(), "reason": reason});
            queries::insert_event(
                tx,
                &NewEvent {
                    at: now,
                    workflow: None,
                    step: Some(step.id),
                    attempt: None,
                    kind: "resolved",
                    from: None,
                    to: None,
                    detail: Some(&detail),
                },
            )
            .map_err(&e)
        })
    }

    // -----------------------------------------------------------------------------------------
    // Agents
    // -----------------------------------------------------------------------------------------

    /// Returns an agent by card URL.
    pub fn agent(&self, card_url: &str) -> Result<Option<Agent>, JournalError> {
        self.read("read the agent", |c| queries::agent_by_url(c, card_url))
    }

    /// Stores a fetched card (interface, tenant, skills, raw JSON) on the agent's row.
    pub fn record_agent_card(&self, card: &AgentCard) -> Result<Agent, JournalError> {
        let now = self.now_ms();
        self.write("journal the agent card", |tx| {
            let e = self.err("journal the agent card");
            queries::store_card(tx, card, now).map_err(&e)?;
            queries::agent_by_url(tx, &card.card_url)
                .map_err(&e)?
                .ok_or_else(|| JournalError::BadValue {
                    column: "agents.card_url",
                    detail: card.card_url.clone(),
                })
        })
    }

    /// Stores a card and puts the agent in the registry (`agents add`), after the others.
    pub fn register_agent(
        &self,
        card: &AgentCard,
        token_env: Option<&str>,
    ) -> Result<Agent, JournalError> {
        let now = self.now_ms();
        self.write("register the agent", |tx| {
            let e = self.err("register the agent");
            queries::store_card(tx, card, now).map_err(&e)?;
            queries::register_agent(tx, &card.card_url, token_env, now).map_err(&e)?;
            queries::agent_by_url(tx, &card.card_url)
                .map_err(&e)?
                .ok_or_else(|| JournalError::BadValue {
                    column: "agents.card_url",
                    detail: card.card_url.clone(),
                })
        })
    }

    /// Takes an agent out of the registry; returns whether it was registered.
    pub fn unregister_agent(&self, card_url: &str) -> Result<bool, JournalError> {
        let now = self.now_ms();
        self.write("unregister the agent", |tx| {
            queries::unregister_agent(tx, card_url, now).map_err(self.err("unregister the agent"))
        })
    }

    /// Returns the registry in registration order (first added, first tried).
    pub fn registered_agents(&self) -> Result<Vec<Agent>, JournalError> {
        self.read("read the registry", |c| queries::registered_agents(c, None))
    }

    /// Returns the registered agents whose card advertises `skill`, in registration order.
    pub fn agents_with_skill(&self, skill: &str) -> Result<Vec<Agent>, JournalError> {
        self.read("read the registry", |c| {
            queries::registered_agents(c, Some(skill))
        })
    }

    /// Records whether an agent accepts client-chosen context ids; returns whether it changed.
    pub fn set_accepts_context_id(
        &self,
        card_url: &str,
        accepts: bool,
    ) -> Result<bool, JournalError> {
        let now = self.now_ms();
        self.write("journal the agent", |tx| {
            queries::set_accepts_context_id(tx, card_url, accepts, now)
                .map_err(self.err("journal the agent"))
        })
    }

    // -----------------------------------------------------------------------------------------
    // Leases
    // -----------------------------------------------------------------------------------------

    /// Claims an attempt for this process for `ttl`, in one short transaction.
    ///
    /// Succeeds when the attempt has no lease, when its lease expired, when its owner is this
    /// process (a renewal), or when the owner's pid is dead on this host; otherwise returns the
    /// holder. Leases are coordination, not history: they append no event.
    pub fn claim(&self, id: AttemptId, ttl: Duration) -> Result<Claim, JournalError> {
        let now = self.clock.now();
        let me = Lease {
            pid: std::process::id(),
            host: host_name(),
            expires_at: now + chrono::Duration::from_std(ttl).unwrap_or(chrono::Duration::MAX),
        };
        self.write("claim the attempt", |tx| {
            let e = self.err("claim the attempt");
            let held = queries::attempt_by_id(tx, id)
                .map_err(&e)?
                .ok_or(JournalError::UnknownAttempt(id.0))?;
            if let Some(lease) = other_holder(&held, &me, now) {
                return Ok(Claim::HeldBy(lease));
            }
            queries::set_lease(tx, id, Some(&me)).map_err(&e)?;
            Ok(Claim::Claimed(me.clone()))
        })
    }

    /// Releases this process's lease on an attempt (a lease held by another is left alone).
    pub fn release(&self, id: AttemptId) -> Result<(), JournalError> {
        let (pid, host) = (std::process::id(), host_name());
        self.write("release the attempt", |tx| {
            let e = self.err("release the attempt");
            let held = queries::attempt_by_id(tx, id)
                .map_err(&e)?
                .ok_or(JournalError::UnknownAttempt(id.0))?;
            if held.lease.is_some_and(|l| l.pid == pid && l.host == host) {
                queries::set_lease(tx, id, None).map_err(&e)?;
            }
            Ok(())
        })
    }

    // -----------------------------------------------------------------------------------------
    // Recovery passes
    // -----------------------------------------------------------------------------------------

    /// Returns a step and all its attempts by row id, or `None` if there is no such step.
    pub fn step_by_id(&self, id: StepId) -> Result<Option<StepRecord>, JournalError> {
        self.read("read the step", |c| {
            let Some(step) = queries::step_by_id(c, id)? else {
                return Ok(None);
            };
            let attempts = queries::attempts_of_step(c, step.id)?;
            Ok(Some(StepRecord { step, attempts }))
        })
    }

    /// Returns the latest attempt of every step a reconcile pass visits, in delegation order;
    /// only in `workflows` if not empty.
    ///
    /// Beside [`Journal::unfinished_attempts`], these are terminal attempts still to decide
    /// (FAILED/REJECTED to re-delegate, CANCELED, LOST, REFUSED), completed attempts whose
    /// declared effect is not claimed yet, and effects a human must look at. Compensation and
    /// command steps, steps resolved `done`/`abandoned` and COMPENSATED workflows are left out;
    /// `resolve --as retry|resend` act through new or reopened `INTENT` attempts.
    pub fn pass_rows(&self, workflows: &[String]) -> Result<Vec<AttemptRow>, JournalError> {
        self.read("read the attempts to reconcile", |c| {
            queries::pass_rows(c, workflows)
        })
    }

    /// Starts a walk over [`Journal::pass_rows`] a page at a time, so a pass over many rows holds
    /// one page in memory, not all of them; `skip` leaves out attempts the pass visits otherwise.
    ///
    /// The walk covers the steps journaled when it starts (a step delegated meanwhile waits for
    /// the next pass), each row read as it is when its page is fetched.
    pub fn pass_cursor(
        &self,
        workflows: &[String],
        skip: &[AttemptId],
    ) -> Result<PassCursor, JournalError> {
        self.read("read the attempts to reconcile", |c| {
            let window = queries::PassWindow {
                workflows: queries::workflows_filter(workflows),
                skip: (!skip.is_empty())
                    .then(|| Value::Array(skip.iter().map(|id| json!(id.0)).collect()).to_string()),
                after: i64::MIN,
                through: queries::max_seq(c)?,
            };
            let total = queries::pass_count(c, &window)?;
            Ok(PassCursor {
                window,
                total: usize::try_from(total).unwrap_or(usize::MAX),
            })
        })
    }

    /// Returns the next page of at most `limit` rows of a walk (empty at its end).
    pub fn next_pass_rows(
        &self,
        cursor: &mut PassCursor,
        limit: usize,
    ) -> Result<Vec<AttemptRow>, JournalError> {
        let page = self.read("read the attempts to reconcile", |c| {
            queries::pass_page(c, &cursor.window, i64::try_from(limit).unwrap_or(i64::MAX))
        })?;
        if let Some((seq, _)) = page.last() {
            cursor.window.after = *seq;
        }
        Ok(page.into_iter().map(|(_, row)| row).collect())
    }

    /// Records that a step failed for good at this attempt, and why (a `failed-for-good`
    /// event, and the attempt's `error`); returns false, writing nothing, if already recorded.
    pub fn mark_failed_for_good(&self, id: AttemptId, reason: &str) -> Result<bool, JournalError> {
        let now = self.now_ms();
        self.write("journal the failure", |tx| {
            let e = self.err("journal the failure");
            if queries::failed_for_good(tx, id).map_err(&e)?.is_some() {
                return Ok(false);
            }
            let mut held = queries::attempt_by_id(tx, id)
                .map_err(&e)?
                .ok_or(JournalError::UnknownAttempt(id.0))?;
            held.error = Some(reason.to_owned());
            held.updated_at = self.clock.now();
            queries::update_attempt(tx, &held).map_err(&e)?;
            let detail = json!({"reason": reason});
            queries::insert_event(
                tx,
                &NewEvent {
                    at: now,
                    workflow: None,
                    step: Some(held.step_id),
                    attempt: Some(id),
                    kind: "failed-for-good",
                    from: Some(held.state.as_str()),
                    to: Some(held.state.as_str()),
                    detail: Some(&detail),
                },
            )
            .map_err(&e)?;
            Ok(true)
        })
    }

    /// Returns why a pass decided the step failed for good at this attempt, if it did.
    pub fn failed_for_good(&self, id: AttemptId) -> Result<Option<String>, JournalError> {
        self.read("read the attempt", |c| queries::failed_for_good(c, id))
    }

    // -----------------------------------------------------------------------------------------
    // Replies
    // -----------------------------------------------------------------------------------------

    /// Commits a reply's messageId (state `INTENT`) before it is sent; a `reply-intent` event
    /// records it.
    pub fn create_reply(&self, attempt: AttemptId, new: &NewReply) -> Result<Reply, JournalError> {
        let now = self.now_ms();
        self.write("commit the reply", |tx| {
            let e = self.err("commit the reply");
            let held = queries::attempt_by_id(tx, attempt)
                .map_err(&e)?
                .ok_or(JournalError::UnknownAttempt(attempt.0))?;
            let id = queries::insert_reply(tx, attempt, new, now).map_err(&e)?;
            let detail = json!({"messageId": new.message_id, "answers": new.answers});
            queries::insert_event(
                tx,
                &NewEvent {
                    at: now,
                    workflow: None,
                    step: Some(held.step_id),
                    attempt: Some(attempt),
                    kind: "reply-intent",
                    from: None,
                    to: Some(ReplyState::Intent.as_str()),
                    detail: Some(&detail),
                },
            )
            .map_err(&e)?;
            queries::reply_by_id(tx, id)
                .map_err(&e)?
                .ok_or(JournalError::UnknownAttempt(attempt.0))
        })
    }

    /// Returns an attempt's replies, oldest first.
    pub fn replies(&self, attempt: AttemptId) -> Result<Vec<Reply>, JournalError> {
        self.read("read the replies", |c| queries::replies_of(c, attempt))
    }

    /// Returns every reply not known to be delivered (`INTENT`) on the latest attempt of a
    /// step outside COMPENSATED workflows; only in `workflows` if not empty.
    pub fn undelivered_replies(&self, workflows: &[String]) -> Result<Vec<Reply>, JournalError> {
        self.read("read the replies", |c| {
            queries::undelivered_replies(c, workflows)
        })
    }

    /// Sets a reply's state and error; writes (with a `reply` event) only if either changed.
    pub fn set_reply_state(
        &self,
        id: ReplyId,
        state: ReplyState,
        error: Option<&str>,
    ) -> Result<bool, JournalError> {
        let now = self.now_ms();
        self.write("journal the reply", |tx| {
            let e = self.err("journal the reply");
            let held = queries::reply_by_id(tx, id)
                .map_err(&e)?
                .ok_or(JournalError::UnknownAttempt(id.0))?;
            if held.state == state && held.error.as_deref() == error {
                return Ok(false);
            }
            queries::set_reply_state(tx, id, state, error, now).map_err(&e)?;
            let step = queries::attempt_by_id(tx, held.attempt_id)
                .map_err(&e)?
                .map(|a| a.step_id);
            let detail = json!({"messageId": held.message_id, "error": error});
            queries::insert_event(
                tx,
                &NewEvent {
                    at: now,
                    workflow: None,
                    step,
                    attempt: Some(held.attempt_id),
                    kind: "reply",
                    from: Some(held.state.as_str()),
                    to: Some(state.as_str()),
                    detail: Some(&detail),
                },
            )
            .map_err(&e)?;
            Ok(true)
        })
    }

    // -----------------------------------------------------------------------------------------
    // Measurement hooks
    // -----------------------------------------------------------------------------------------

    /// Returns SQLite's `data_version` for this connection (changes when another connection
    /// commits); tests use it to prove a no-op wrote nothing.
    pub fn data_version(&self) -> Result<i64, JournalError> {
        self.read("read the data version", queries::data_version)
    }

    /// Returns the number of events in the journal.
    pub fn event_count(&self) -> Result<i64, JournalError> {
        self.read("count the events", queries::event_count)
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

/// Returns this host's name (for leases).
pub fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// Returns whether a process with this pid exists on this host.
/// Returns the lease another live process holds on an attempt, if any: a lease that is this
/// process's own, lapsed, or held by a dead pid on this host does not count.
fn other_holder(held: &Attempt, me: &Lease, now: chrono::DateTime<chrono::Utc>) -> Option<Lease> {
    let lease = held.lease.as_ref()?;
    let mine = lease.pid == me.pid && lease.host == me.host;
    let broken = lease.expires_at <= now || (lease.host == me.host && !process_alive(lease.pid));
    (!mine && !broken).then(|| lease.clone())
}

fn process_alive(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    let Some(pid) = rustix::process::Pid::from_raw(raw) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        // It exists but belongs to someone else.
        Err(e) => e == rustix::io::Errno::PERM,
    }
}

/// Returns the artifacts of a snapshot that differ from the held ones (a snapshot holds the
/// accumulated artifacts: it replaces; artifacts it lacks are kept).
fn merge_snapshot_artifacts(held: &[Artifact], seen: Option<&[ArtifactView]>) -> Vec<Artifact> {
    let Some(seen) = seen else {
        return Vec::new();
    };
    seen.iter()
        .filter_map(|v| {
            let old = held.iter().find(|a| a.artifact_id == v.artifact_id);
            let new = Artifact {
                artifact_id: v.artifact_id.clone(),
                name: v.name.clone(),
                description: v.description.clone(),
                parts: v.parts.clone(),
                metadata: v.metadata.clone(),
                last_chunk: old.is_some_and(|a| a.last_chunk),
            };
            (old != Some(&new)).then_some(new)
        })
        .collect()
}

/// Returns the artifact after a stream update, or `None` when the update is ignored.
fn merge_artifact_update(existing: Option<&Artifact>, u: &ArtifactUpdate) -> Option<Artifact> {
    let v = &u.artifact;
    match existing {
        Some(old) if u.append => {
            if old.last_chunk {
                return None;
            }
            let mut parts = old.parts.as_array().cloned().unwrap_or_default();
            parts.extend(v.parts.as_array().cloned().unwrap_or_default());
            Some(Artifact {
                artifact_id: old.artifact_id.clone(),
                name: v.name.clone().or_else(|| old.name.clone()),
                description: v.description.clone().or_else(|| old.description.clone()),
                parts: Value::Array(parts),
                metadata: v.metadata.clone().or_else(|| old.metadata.clone()),
                last_chunk: u.last_chunk,
            })
        }
        _ => Some(Artifact {
            artifact_id: v.artifact_id.clone(),
            name: v.name.clone(),
            description: v.description.clone(),
            parts: v.parts.clone(),
            metadata: v.metadata.clone(),
            last_chunk: u.last_chunk,
        }),
    }
}

#[cfg(test)]
mod tests;
