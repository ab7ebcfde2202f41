//! The journal's part of a batch send (`delegate --plan`, reconcile's bucket 1): many attempts'
//! leases claimed and endpoints journaled in ONE transaction, many outcomes journaled with the
//! release of their leases in ONE transaction.
//!
//! Same invariants as the rest of the journal: each method is one short transaction, every
//! change goes through [`super::transition`] and appends an event in the same transaction. A
//! batch only groups writes that the one-attempt methods make one by one: what each attempt
//! ends up with is the same (`claim` + `set_endpoint`, then `apply_task` / `record_refusal` /
//! … + `release`).

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use super::change::{Change, Written};
use super::group::{Unwritten, as_stored, held_rows};
use super::sql::{DbError, Tx};
use super::{
    Artifact, Attempt, AttemptId, AttemptState, DateTimeUtc, FailureKind, Journal, JournalError,
    JournaledEndpoint, Lease, NeedsHuman, Source, Wanted, is_mine, my_lease, queries,
    view_artifact_ids,
};
use crate::model::TaskView;

/// What claiming one attempt of a batch found.
#[derive(Debug, Clone, PartialEq)]
pub enum BatchClaim {
    /// Claimed by this process: the attempt as journaled after the claim, and whether its
    /// endpoint was journaled by this claim (`false`: it had one, so it may have been sent).
    Claimed(Attempt, bool),
    /// Another live process holds the attempt's lease; nothing was written for it.
    HeldBy(Attempt, Lease),
    /// The attempt is no longer `INTENT` (another process settled it); nothing was written.
    Settled(Attempt),
}

/// What to journal of one attempt's send (or look), with the release of its lease.
#[derive(Debug, Clone)]
pub enum SendOutcome {
    /// The agent answered (or a look found) a task.
    Task(TaskView, Source),
    /// The agent answered with a direct Message (`REPLIED`).
    DirectReply {
        /// The message's JSON.
        message_json: String,
        /// The contextId it carried.
        context_id: Option<String>,
    },
    /// The agent definitively refused (`REFUSED`), with the error's summary.
    Refused(String),
    /// A failure that changes no state (an unknown outcome, a failed look), with its summary.
    Failed(FailureKind, String),
    /// A failure that changes no state but needs a human (an answer over the size cap).
    NeedsHuman(NeedsHuman),
    /// The look could not tell whether a previous send created anything (`UNCERTAIN`).
    Uncertain(String),
    /// Nothing to journal: only the lease is released.
    Release,
}

/// One attempt's outcome in [`Journal::record_sends`].
#[derive(Debug, Clone)]
pub struct SendRecord {
    /// The attempt.
    pub attempt: AttemptId,
    /// What to journal.
    pub outcome: SendOutcome,
    /// The card URL of an agent that just proved it accepts client-chosen context ids.
    pub accepts_context_id: Option<String>,
}

impl Journal {
    /// Claims many `INTENT` attempts for `ttl` and journals the endpoint of each that has none,
    /// all in ONE transaction; returns what each found, in order.
    ///
    /// An attempt leased by another live process, or no longer `INTENT`, is left untouched. An
    /// attempt that already has an endpoint keeps it (the first one journaled wins, as with
    /// [`Journal::set_endpoint`]); `None` journals no endpoint. An attempt whose endpoint this
    /// claim journals is about to be sent: it is stamped with the send's start and the request
    /// `send_timeout` (its in-flight horizon, [`Journal::send_horizon`]).
    pub fn claim_for_send(
        &self,
        items: &[(AttemptId, Option<JournaledEndpoint>)],
        ttl: Duration,
        send_timeout: Duration,
    ) -> Result<Vec<BatchClaim>, JournalError> {
        if items.is_empty() {
            return Ok(Vec::new());
        }
        let now = self.clock.now();
        let me = my_lease(now, ttl);
        let attempts: Vec<AttemptId> = items.iter().map(|(id, _)| *id).collect();
        self.write_attempts(&attempts, "claim the attempts", |tx| {
            let e = self.err("claim the attempts");
            let mut out = Vec::with_capacity(items.len());
            for (id, endpoint) in items {
                let held = queries::attempt_by_id(tx, *id)
                    .map_err(&e)?
                    .ok_or(JournalError::UnknownAttempt(id.0))?;
                if let Some(lease) = self.other_holder(&held, &me, now) {
                    out.push(BatchClaim::HeldBy(held, lease));
                    continue;
                }
                if held.state != AttemptState::Intent {
                    out.push(BatchClaim::Settled(held));
                    continue;
                }
                // An endpoint journaled now (none yet) is of a send about to start.
                let change = endpoint
                    .as_ref()
                    .and_then(|endpoint| Self::endpoint_change(&held, endpoint));
                let fresh = change.is_some();
                let after = if let Some(mut change) = change {
                    // The endpoint, the lease and the send's stamp in one UPDATE.
                    change.next.lease = Some(me.clone());
                    let send = queries::SendStamp {
                        at: now,
                        timeout: send_timeout,
                    };
                    Self::apply_change_stamped(tx, &e, now, &held, change, Some(send))?.2
                } else {
                    queries::set_lease(tx, *id, Some(&me)).map_err(&e)?;
                    let mut after = held;
                    after.lease = Some(me.clone());
                    after
                };
                out.push(BatchClaim::Claimed(after, fresh));
            }
            Ok(out)
        })
    }

    /// Opens a second connection to the same journal, with the same busy timeout and
    /// clock (a batch send's group commits run on it, on their own thread).
    pub fn reopen(&self) -> Result<Self, JournalError> {
        Ok(Self::open_at(&self.location, self.store.busy_timeout())?
            .with_clock(std::sync::Arc::clone(&self.clock))
            .with_size_limits(self.limits))
    }

    /// Returns the attempt as [`Journal::apply_task`] would leave it after `view` (its
    /// artifacts aside), without writing anything: what a group-committed observation reports
    /// before its commit.
    pub fn preview_task(
        held: &Attempt,
        view: &TaskView,
        source: Source,
    ) -> Result<Attempt, JournalError> {
        Ok(match Self::task_change(held, &[], view, source)? {
            Some(change) => change.next,
            None => held.clone(),
        })
    }

    /// Releases this process's leases on many attempts in ONE transaction (leases held by
    /// others are left alone).
    pub fn release_many(&self, ids: &[AttemptId]) -> Result<(), JournalError> {
        if ids.is_empty() {
            return Ok(());
        }
        self.write_attempts(ids, "release the attempts", |tx| {
            let e = self.err("release the attempts");
            for id in ids {
                Self::release_in(tx, &e, *id)?;
            }
            Ok(())
        })
    }

    /// What journaling one send's outcome changes (nothing for [`SendOutcome::Release`]).
    fn send_change(
        tx: &Tx,
        e: &impl Fn(DbError) -> JournalError,
        now: chrono::DateTime<chrono::Utc>,
        limits: super::SizeLimits,
        held: &Attempt,
        artifacts: &[Artifact],
        outcome: &SendOutcome,
    ) -> Result<Option<Change>, JournalError> {
        match outcome {
            SendOutcome::Task(view, source) => {
                let change = Self::task_change(held, artifacts, view, *source)?;
                Self::limit_change(tx, e, now, limits, held, change, &mut false)
            }
            SendOutcome::DirectReply {
                message_json,
                context_id,
            } => Self::direct_reply_change(held, message_json, context_id.as_deref()),
            SendOutcome::Refused(summary) => Self::refusal_change(held, summary),
            SendOutcome::Uncertain(reason) => Self::settle_change(
                held,
                super::Observation::Unprovable,
                |next| next.error = Some(reason.clone()),
                serde_json::json!({"reason": reason}),
            ),
            SendOutcome::Failed(kind, summary) => {
                Ok(Some(Self::failure_change(held, *kind, summary)))
            }
            SendOutcome::NeedsHuman(why) => Ok(Some(Self::needs_human_change(held, why))),
            SendOutcome::Release => Ok(None),
        }
    }

    fn release_in(
        tx: &Tx,
        e: &impl Fn(DbError) -> JournalError,
        id: AttemptId,
    ) -> Result<(), JournalError> {
        let Some(held) = queries::attempt_by_id(tx, id).map_err(e)? else {
            return Ok(());
        };
        if is_mine(held.lease.as_ref()) {
            queries::set_lease(tx, id, None).map_err(e)?;
        }
        Ok(())
    }

    /// Journals many sends' outcomes, each with the release of its lease, in ONE transaction
    /// (a group commit); returns each attempt as journaled afterwards, in order.
    ///
    /// An outcome the attempt's state refuses (a task id other than the one held, a transition
    /// the state machine forbids) is that record's error, written nothing but its lease
    /// release; the others are committed. A SQLite failure fails the whole batch.
    ///
    /// The attempts are read in one statement and each outcome is decided against the row as
    /// the records before it left it (`journal/group.rs`); the rows and events are written
    /// together, and the attempts returned as written. An answer that brings artifacts reads
    /// and writes them row by row, after what came before it.
    pub fn record_sends(
        &self,
        records: &[SendRecord],
    ) -> Result<Vec<Result<Attempt, JournalError>>, JournalError> {
        if records.is_empty() {
            return Ok(Vec::new());
        }
        let limits = self.limits;
        let attempts: Vec<AttemptId> = records.iter().map(|r| r.attempt).collect();
        // Always committed: every record releases its lease.
        self.write_attempts_if_changed(&attempts, "journal the answers", |tx, e, now| {
            let now = as_stored(now);
            let mut held = held_rows(tx, e, &attempts)?;
            let mut unwritten = Unwritten::default();
            let mut accepting = BTreeSet::new();
            let mut out = Vec::with_capacity(records.len());
            for record in records {
                let id = record.attempt;
                let applied = Self::send_in(tx, e, now, limits, &mut held, &mut unwritten, record);
                // A lease still held (a refusal, a change that writes nothing, a release) ends
                // on its own.
                if let Some(h) = held.get_mut(&id)
                    && is_mine(h.lease.as_ref())
                {
                    h.lease = None;
                    unwritten.release(id);
                }
                match applied {
                    Ok(()) => {
                        if let Some(card) = &record.accepts_context_id {
                            accepting.insert(card.as_str());
                        }
                        let row = held.get(&id).ok_or(JournalError::UnknownAttempt(id.0))?;
                        out.push(Ok(row.clone()));
                    }
                    Err(
                        err @ (JournalError::TaskMismatch { .. }
                        | JournalError::Transition { .. }
                        | JournalError::UnknownAttempt(_)),
                    ) => out.push(Err(err)),
                    Err(err) => return Err(err),
                }
            }
            unwritten.write(tx, e, now)?;
            for card in accepting {
                // Nearly always journaled already: a statement spared per answer.
                if self.agent_rows.accepts_context_id(card) == Some(true) {
                    continue;
                }
                if queries::set_accepts_context_id(tx, card, true, queries::ms(now)).map_err(e)? {
                    self.agent_rows.clear();
                }
            }
            Ok((out, true))
        })
    }

    /// Decides one record of [`Journal::record_sends`] against its attempt as the batch left
    /// it (`held`, updated): a change that writes the row releases the lease in the same
    /// write. Without artifacts the change joins `unwritten`; with them it is written now,
    /// after what is unwritten.
    fn send_in(
        tx: &Tx,
        e: &dyn Fn(DbError) -> JournalError,
        now: DateTimeUtc,
        limits: super::SizeLimits,
        held: &mut HashMap<AttemptId, Attempt>,
        unwritten: &mut Unwritten,
        record: &SendRecord,
    ) -> Result<(), JournalError> {
        let id = record.attempt;
        let outcome = &record.outcome;
        if matches!(outcome, SendOutcome::Release) {
            return Ok(());
        }
        // The lease ends in the UPDATE of a change that writes the row anyway.
        let decide = |h: &Attempt, arts: &[Artifact]| {
            let change = Self::send_change(tx, &e, now, limits, h, arts, outcome)?;
            Ok(change.map(|mut change| {
                if change.writes(h) && is_mine(h.lease.as_ref()) {
                    change.next.lease = None;
                }
                change
            }))
        };
        let ids = match outcome {
            SendOutcome::Task(view, _) => view_artifact_ids(view),
            _ => Vec::new(),
        };
        if ids.is_empty() {
            let h = held.get(&id).ok_or(JournalError::UnknownAttempt(id.0))?;
            if let Some(written) = decide(h, &[])?.and_then(|c| Written::of(h, c, now))
                && let Some(before) = held.insert(id, written.next.clone())
            {
                unwritten.push(before, written);
            }
        } else {
            unwritten.write(tx, e, now)?;
            let (_, _, row) = Self::change_in_written(tx, &e, now, id, Wanted::Only(&ids), decide)?;
            held.insert(id, row);
        }
        Ok(())
    }
}
