//! Push notifications in the journal: the config each attempt asked its agent for (one per
//! attempt, kept by every resend of its messageId), the hashes of the tokens sent with it (never
//! a token), and each agent's push registration.

use std::collections::{HashMap, HashSet};

use super::change::Wanted;
use super::sql::push::{self as sql, ConfigRow};
use super::sql::{DbError, Tx};
use super::{
    AttemptId, DateTimeUtc, Journal, JournalError, Note, SizeLimits, Source, StreamObservation,
    queries,
};
use crate::model::TaskView;

/// An attempt's push config as journaled (`attempt` records show `configId` and `url`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushConfig {
    /// The attempt.
    pub attempt: AttemptId,
    /// The config id: random, the last segment of its URL.
    pub config_id: String,
    /// The URL the agent was asked to push to (`BASE/push/CONFIG_ID`).
    pub url: String,
    /// When a listener last recorded a push for it.
    pub last_push_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl From<ConfigRow> for PushConfig {
    fn from(r: ConfigRow) -> Self {
        Self {
            attempt: r.attempt,
            config_id: r.config_id,
            url: r.url,
            last_push_at: r
                .last_push_at
                .and_then(chrono::DateTime::from_timestamp_millis),
        }
    }
}

impl PushConfig {
    /// The config as `attempt` records show it: `{configId, url}`.
    pub fn record(&self) -> serde_json::Value {
        serde_json::json!({"configId": self.config_id, "url": self.url})
    }
}

/// An agent's push registration (`agents add --push URL`, `--trust-push`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentPush {
    /// The listener's public base URL the agent is asked to push to.
    pub url: Option<String>,
    /// Whether a push may make a step terminal without a read-back.
    pub trusted: bool,
}

impl Journal {
    /// Right before a send: journals attempt `id`'s push config, unless it has one (a resend of
    /// its messageId keeps it), and adds the hash of the token this send carries, in one
    /// transaction. `config_id` and `url` are used only for a new config; returns the config
    /// the send must carry.
    pub fn register_push(
        &self,
        id: AttemptId,
        config_id: &str,
        url: &str,
        token_hash: &str,
    ) -> Result<PushConfig, JournalError> {
        let now = self.now_ms();
        let action = "journal the push config";
        self.write_attempts(&[id], action, |tx| {
            let e = self.err(action);
            let held = if let Some(held) = sql::config_of(tx, id).map_err(&e)? {
                held
            } else {
                sql::insert_config(tx, id, config_id, url, now).map_err(&e)?;
                ConfigRow {
                    attempt: id,
                    config_id: config_id.to_owned(),
                    url: url.to_owned(),
                    last_push_at: None,
                }
            };
            sql::insert_token_hash(tx, &held.config_id, token_hash, now).map_err(&e)?;
            Ok(held.into())
        })
    }

    /// Returns attempt `id`'s push config, if it asked for one.
    pub fn push_config(&self, id: AttemptId) -> Result<Option<PushConfig>, JournalError> {
        self.read("read the push config", |c| {
            sql::config_of(c, id).map(|r| r.map(Into::into))
        })
    }

    /// Returns the push configs of the attempts given, by attempt.
    pub fn push_configs(
        &self,
        ids: &[AttemptId],
    ) -> Result<HashMap<AttemptId, PushConfig>, JournalError> {
        self.read("read the push configs", |c| {
            sql::configs_of(c, ids).map(|rows| {
                rows.into_iter()
                    .map(|r| (r.attempt, PushConfig::from(r)))
                    .collect()
            })
        })
    }

    /// Returns the push config whose id is `config_id` and the hashes of the tokens sent with
    /// it, if there is one.
    pub fn push_config_by_id(
        &self,
        config_id: &str,
    ) -> Result<Option<(PushConfig, Vec<String>)>, JournalError> {
        self.read("read the push config", |c| {
            let Some(row) = sql::config_by_id(c, config_id)? else {
                return Ok(None);
            };
            let hashes = sql::token_hashes(c, config_id)?;
            Ok(Some((row.into(), hashes)))
        })
    }

    /// Returns an agent's push registration (the default when it is not journaled).
    pub fn agent_push(&self, card_url: &str) -> Result<AgentPush, JournalError> {
        self.read("read the agent", |c| sql::agent_push(c, card_url))
            .map(|r| {
                r.map(|(url, trusted)| AgentPush { url, trusted })
                    .unwrap_or_default()
            })
    }

    /// Sets a journaled agent's push registration (`agents add`: a refresh without `--push`
    /// clears it, as it clears `--trust-dedup`).
    pub fn set_agent_push(&self, card_url: &str, push: &AgentPush) -> Result<(), JournalError> {
        self.agent_rows.clear();
        let now = self.now_ms();
        self.write("journal the agent", |tx| {
            sql::set_agent_push(tx, card_url, push.url.as_deref(), push.trusted, now)
                .map_err(self.err("journal the agent"))
        })
    }
}

/// A running `listen` process, as `status` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listener {
    /// Its host (name and pid namespace).
    pub host: String,
    /// Its pid.
    pub pid: i64,
    /// The address it receives pushes on.
    pub bind: String,
    /// When it started.
    pub started_at: chrono::DateTime<chrono::Utc>,
    /// When it last said it runs.
    pub heartbeat_at: chrono::DateTime<chrono::Utc>,
    /// When it last recorded a push.
    pub last_push_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// A push (or what reading one back found) to journal in a listener's group commit
/// ([`Journal::record_pushes`]).
#[derive(Debug, Clone)]
pub enum PushRecord {
    /// A push kept as a hint (`hint`: the push as received), read back before it counts.
    Hint {
        /// The attempt whose config it came for.
        attempt: AttemptId,
        /// The config it came for.
        config_id: String,
        /// The push as received.
        hint: String,
    },
    /// A push applied as it came: a status that needs no read-back, or a trusted agent's.
    Applied(StreamObservation),
    /// What reading a pushed task back found: the task as read (a `GetTask` answer), applied,
    /// then the attempt's hint cleared; with the pushed and read states when they disagree
    /// (a `push-disagrees` note, journaled first).
    ReadBack {
        /// The task as read.
        read: StreamObservation,
        /// The note's detail, when the push and the read disagree.
        disagrees: Option<serde_json::Value>,
    },
}

impl PushRecord {
    /// A read-back of attempt `attempt`'s pushed task: `view` as read.
    pub fn read_back(
        attempt: AttemptId,
        view: TaskView,
        disagrees: Option<serde_json::Value>,
    ) -> Self {
        Self::ReadBack {
            read: StreamObservation::Task {
                attempt,
                view,
                source: Source::GetTask,
            },
            disagrees,
        }
    }

    /// The attempt it is about.
    pub fn attempt(&self) -> AttemptId {
        match self {
            Self::Hint { attempt, .. } => *attempt,
            Self::Applied(o) | Self::ReadBack { read: o, .. } => o.attempt(),
        }
    }
}

/// How long a listener's row counts as running after its last heartbeat.
pub const LISTENER_LAPSE: std::time::Duration = std::time::Duration::from_secs(90);

fn ms_time(ms: i64) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

impl Journal {
    /// Journals pushes handled at once (a listener's concurrent requests) in ONE transaction:
    /// one durable commit for all of them, each acknowledged only after it returns.
    ///
    /// Each record leaves what it would leave committed on its own, in the batch's order: the
    /// observations are written together as [`Journal::apply_observations`] writes a batch
    /// (each decided against the row as the batch so far left it), and anything that must
    /// follow an observation of the same attempt (a hint, a read-back's `push-disagrees` note)
    /// waits until the observations before it are written, with the hints their read-backs
    /// settled cleared. An observation that does not apply (a task mismatch, an impossible
    /// transition) gets its own `Err` and clears no hint; the others still commit. A storage
    /// failure rolls the whole batch back (the outer `Err`); a batch that changes nothing
    /// commits nothing.
    pub fn record_pushes(
        &self,
        batch: &[PushRecord],
    ) -> Result<Vec<Result<(), JournalError>>, JournalError> {
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        let limits = self.limits;
        let attempts: Vec<AttemptId> = batch.iter().map(PushRecord::attempt).collect();
        self.write_attempts_if_changed(&attempts, "journal the pushes", |tx, e, now| {
            let at = queries::ms(now);
            let mut out: Vec<Result<(), JournalError>> = batch.iter().map(|_| Ok(())).collect();
            // Whether anything is written (else the transaction is rolled back: no commit).
            let mut wrote = false;
            let mut observed = Observed::default();
            for (i, record) in batch.iter().enumerate() {
                let follows = matches!(
                    record,
                    PushRecord::Hint { .. }
                        | PushRecord::ReadBack {
                            disagrees: Some(_),
                            ..
                        }
                );
                if follows && observed.attempts.contains(&record.attempt()) {
                    wrote |= observed.write(tx, e, now, limits, batch, &mut out)?;
                }
                match record {
                    PushRecord::Hint {
                        config_id, hint, ..
                    } => {
                        sql::record_push(tx, config_id, Some(hint), at).map_err(e)?;
                        wrote = true;
                    }
                    PushRecord::Applied(o) => observed.push(i, o),
                    PushRecord::ReadBack { read, disagrees } => {
                        if let Some(detail) = disagrees {
                            let noted = Self::change_in(
                                tx,
                                &e,
                                now,
                                read.attempt(),
                                Wanted::Only(&[]),
                                |held, _| Ok(Some(Note::PushDisagrees.change(held, detail))),
                            );
                            match noted {
                                Ok(_) => wrote = true,
                                // Refused before anything of it was written: the rest goes on.
                                Err(
                                    err @ (JournalError::TaskMismatch { .. }
                                    | JournalError::Transition { .. }
                                    | JournalError::UnknownAttempt(_)),
                                ) => {
                                    out[i] = Err(err);
                                    continue;
                                }
                                Err(err) => return Err(err),
                            }
                        }
                        observed.push(i, read);
                    }
                }
            }
            wrote |= observed.write(tx, e, now, limits, batch, &mut out)?;
            Ok((out, wrote))
        })
    }

    /// Journals this process as a running listener on `bind`, or renews its heartbeat.
    pub fn listener_heartbeat(
        &self,
        bind: &str,
        started_at: chrono::DateTime<chrono::Utc>,
        last_push_at: Option<chrono::DateTime<chrono::Utc>>,
    ) -> Result<(), JournalError> {
        let row = sql::ListenerRow {
            owner: super::owner_id().to_owned(),
            host: super::host_name().to_owned(),
            pid: i64::from(crate::sim_seam::pid()),
            bind: bind.to_owned(),
            started_at: started_at.timestamp_millis(),
            heartbeat_at: self.now_ms(),
            last_push_at: last_push_at.map(|t| t.timestamp_millis()),
        };
        self.write("journal the listener", |tx| {
            sql::upsert_listener(tx, &row).map_err(self.err("journal the listener"))
        })
    }

    /// Deletes this process's listener row (it stops).
    pub fn listener_stopped(&self) -> Result<(), JournalError> {
        self.write("journal the listener", |tx| {
            sql::delete_listener(tx, super::owner_id()).map_err(self.err("journal the listener"))
        })
    }

    /// Returns the running listeners (a heartbeat within [`LISTENER_LAPSE`]).
    pub fn listeners(&self) -> Result<Vec<Listener>, JournalError> {
        let lapse = i64::try_from(LISTENER_LAPSE.as_millis()).unwrap_or(i64::MAX);
        let since = self.now_ms().saturating_sub(lapse);
        let rows = self.read("read the listeners", |c| sql::listeners(c, since))?;
        Ok(rows
            .into_iter()
            .map(|r| Listener {
                host: r.host,
                pid: r.pid,
                bind: r.bind,
                started_at: ms_time(r.started_at),
                heartbeat_at: ms_time(r.heartbeat_at),
                last_push_at: r.last_push_at.map(ms_time),
            })
            .collect())
    }
}

/// The observations of a group of pushes not written yet, in order, with the record each came
/// from ([`Journal::record_pushes`]).
#[derive(Default)]
struct Observed<'b> {
    observations: Vec<&'b StreamObservation>,
    /// The index in the batch of each.
    slots: Vec<usize>,
    /// The attempts they observe.
    attempts: HashSet<AttemptId>,
}

impl<'b> Observed<'b> {
    fn push(&mut self, slot: usize, observation: &'b StreamObservation) {
        self.attempts.insert(observation.attempt());
        self.observations.push(observation);
        self.slots.push(slot);
    }

    /// Writes them, then clears the hints their read-backs settled; gives each its result in
    /// `out` and returns whether anything was written.
    fn write(
        &mut self,
        tx: &Tx,
        e: &dyn Fn(DbError) -> JournalError,
        now: DateTimeUtc,
        limits: SizeLimits,
        batch: &[PushRecord],
        out: &mut [Result<(), JournalError>],
    ) -> Result<bool, JournalError> {
        if self.observations.is_empty() {
            return Ok(false);
        }
        let (results, mut wrote) = Journal::observe_in(tx, e, now, limits, &self.observations)?;
        for (i, result) in self.slots.drain(..).zip(results) {
            match (result, &batch[i]) {
                (Err(err), _) => out[i] = Err(err),
                (Ok(_), PushRecord::ReadBack { read, .. }) => {
                    wrote |= sql::clear_hint(tx, read.attempt()).map_err(e)?;
                }
                (Ok(_), _) => {}
            }
        }
        self.observations.clear();
        self.attempts.clear();
        Ok(wrote)
    }
}
