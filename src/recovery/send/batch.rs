//! A batch send (`delegate --plan`): the send path of [`Sender::deliver`] for many never-sent
//! attempts at once, with its durable commits grouped instead of made one after another per
//! attempt.
//!
//! Order:
//! 1. [`Batch::claim`]: each agent's card is taken once (the registry's, else fetched once and
//!    stored); then ONE transaction claims the first [`FIRST_CLAIM`] attempts' leases, re-reads
//!    each under its lease and journals its endpoint (`Journal::claim_for_send`). The others
//!    are claimed the same way on the writer thread, in claims of growing size, one claim
//!    ahead of the sends (`claims.rs`): the sends start after a small commit instead of after
//!    one for the whole batch. From its claim's commit on, an attempt counts as possibly sent
//!    and is looked for before any resend; one not claimed yet is still never sent.
//! 2. [`Batch::send`] per attempt, concurrently: (an attempt claimed on the writer: once its
//!    claim is durable) crash point `after-intent`, `SendMessage`, crash point `after-send`
//!    (the answer arrived, nothing of it journaled), exactly as the one-attempt path does; nothing is journaled here (but an agent refusing our contextId,
//!    which is remembered before the message goes again).
//! 3. [`Batch::push`] each answer, then [`Batch::start_commit`] and [`Batch::finish`]: the
//!    caller hands over every answer that arrived while its previous group commit ran; they are
//!    journaled, each with the release of its lease, in ONE transaction
//!    (`Journal::record_sends`), made by `commit::Writer` on a connection of its own.
//!
//! Invariants: commit-before-send holds per attempt (ids at the intent, endpoint at the claim,
//! both durable before the send); answers received but not yet journaled are at most the sends in
//! flight, found after a crash by the look (bucket 1); a lease is never older than half its
//! time when its send starts (the waiting leases are renewed together, in one transaction, once
//! half their time is spent), so another process cannot break it and send too; a batch dropped
//! early (a signal) releases the leases it still holds, in one transaction.
//!
//! An attempt whose endpoint was already journaled (it may have been sent), or whose agent's
//! card cannot be read, is not sent by the batch: [`Ready::Deliver`] sends it through
//! [`Sender::deliver`], which looks first or reports the card's failure as it always did (one
//! found so by a later claim, [`Batch::send`] delivers that way itself).

use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, HashMap};
use std::future::Future as _;

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use serde_json::Value;

use super::claims::{FIRST_CLAIM, Later};
use super::{Answered, Outgoing, Sender, Sent, Stage};
use crate::a2a::TaskView;
use crate::a2a::{A2aError, ErrorClass, types};
use crate::journal::{
    self, Attempt, AttemptId, BatchClaim, FailureKind, Lease, SendOutcome, SendRecord, Source,
};
use crate::recovery::commit::{Committed, Records as _, Writer, WriterMode};
use crate::recovery::error::unusable_answer;
use crate::recovery::lookup;

/// One attempt of a batch: its id, its message and the step name its crash points use.
#[derive(Debug, Clone)]
pub struct BatchItem {
    /// The attempt (`INTENT`) as committed with its intent; it is re-read under its lease.
    pub attempt: Attempt,
    /// Its message and credential.
    pub out: Outgoing,
    /// `WORKFLOW/STEP`, for the crash points.
    pub step: String,
}

/// What claiming one item came to.
#[derive(Debug)]
pub enum Ready {
    /// Claimed, endpoint journaled: send it with [`Batch::send`].
    Send(Attempt),
    /// Nothing to send: what the one-attempt path would report (busy, settled meanwhile).
    Done(Sent),
    /// Not for the batch: send it with [`Sender::deliver`] (see the module docs).
    Deliver,
}

/// An answer (or a failed send) received and not yet journaled.
#[derive(Debug)]
pub struct Answer {
    attempt: Attempt,
    card_url: String,
    with_context: bool,
    result: Result<Answered, A2aError>,
}

/// A batch send in progress; releases the leases it still holds when dropped.
pub struct Batch<'s, 'a> {
    sender: &'s Sender<'a>,
    /// Leases this batch claimed and has not released yet.
    held: RefCell<BTreeSet<AttemptId>>,
    /// Claimed attempts whose send has not started.
    waiting: RefCell<BTreeSet<AttemptId>>,
    /// Attempts whose lease another process took while they waited (never sent).
    lost: RefCell<HashMap<AttemptId, Lease>>,
    /// When the waiting leases are renewed.
    renew_at: Cell<Option<DateTime<Utc>>>,
    /// When the waiting leases lapse if they are not renewed first.
    expires_at: Cell<Option<DateTime<Utc>>>,
    /// Attempts whose lease lapsed (or was settled) before their send: another process may
    /// have taken them meanwhile, so each goes the one-attempt way (claim, re-read, look first).
    relook: RefCell<BTreeSet<AttemptId>>,
    /// Answers received and not yet handed to a group commit.
    pending: RefCell<Vec<Answer>>,
    /// Where the group commits and the later claims are made: a thread with its own
    /// connection (started at the first job), so that sends go on while a commit waits for the
    /// disk.
    writer: Writer<'a>,
    /// The claims after the first, made on the writer one ahead of the sends.
    later: Option<Later>,
}

/// A group commit in progress: wait for it ([`Commit::poll_done`]), then hand it to
/// [`Batch::finish`].
pub struct Commit {
    answers: Vec<Answer>,
    broken: Vec<Option<anyhow::Error>>,
    ids: Vec<AttemptId>,
    reply: tokio::sync::oneshot::Receiver<Committed<SendRecord>>,
    /// What the writer answered, once it did (an error: it ended without answering).
    result: Option<Result<Committed<SendRecord>, tokio::sync::oneshot::error::RecvError>>,
}

impl Commit {
    /// Waits for the writer thread to commit.
    pub fn poll_done(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        if self.result.is_some() {
            return std::task::Poll::Ready(());
        }
        std::pin::Pin::new(&mut self.reply).poll(cx).map(|r| {
            self.result = Some(r);
        })
    }
}

impl Drop for Batch<'_, '_> {
    /// A batch dropped early (a signal) first lets the writer finish the commit in progress,
    /// then commits the answers received since, then releases the leases still held.
    fn drop(&mut self) {
        // A killed process runs no drop-time work (the simulator's crash).
        if crate::sim_seam::killed() {
            return;
        }
        self.writer.close();
        // Claims the writer committed that no send took over yet: their leases are ours.
        if let Some(later) = &self.later {
            self.held.get_mut().extend(later.take_claimed());
        }
        let pending = std::mem::take(self.pending.get_mut());
        if !pending.is_empty() {
            let records: Vec<SendRecord> = pending.iter().map(|a| Self::record_of(a).0).collect();
            match SendRecord::commit(self.sender.journal, &records) {
                Ok(_) => {
                    let held = self.held.get_mut();
                    for r in &records {
                        held.remove(&r.attempt);
                    }
                }
                Err(e) => tracing::warn!("failed to journal {} answers: {e}", records.len()),
            }
        }
        let held: Vec<AttemptId> = self.held.get_mut().iter().copied().collect();
        if let Err(e) = self.sender.journal.release_many(&held) {
            tracing::warn!(
                "failed to release the leases of {} attempts: {e}",
                held.len()
            );
        }
    }
}

impl<'s, 'a> Batch<'s, 'a> {
    /// Starts a batch that sends through `sender`.
    pub fn new(sender: &'s Sender<'a>) -> Self {
        Self {
            sender,
            held: RefCell::new(BTreeSet::new()),
            waiting: RefCell::new(BTreeSet::new()),
            lost: RefCell::new(HashMap::new()),
            renew_at: Cell::new(None),
            expires_at: Cell::new(None),
            relook: RefCell::new(BTreeSet::new()),
            pending: RefCell::new(Vec::new()),
            writer: Writer::new(sender.journal, WriterMode::Thread),
            later: None,
        }
    }

    /// Takes each agent's card once, then claims the first `FIRST_CLAIM` items' leases and
    /// journals their endpoints in one transaction; the rest are claimed on the writer thread
    /// (`claims.rs`), each before its send. Returns what each item came to, in order (an item
    /// not claimed yet is [`Ready::Send`]: [`Batch::send`] waits for its claim).
    pub async fn claim(&mut self, items: &[BatchItem]) -> anyhow::Result<Vec<Ready>> {
        let journal = self.sender.journal;
        // One card per agent, credential variable and forced interface: (card URL, variable,
        // choice) → endpoint, or `None` when it could not be read (those items go the
        // one-attempt way).
        type Key = (String, Option<String>, crate::a2a::InterfaceChoice);
        let mut cards: HashMap<Key, Option<journal::JournaledEndpoint>> = HashMap::new();
        let mut claims = Vec::with_capacity(items.len());
        let mut slots = Vec::with_capacity(items.len());
        for item in items {
            let attempt = &item.attempt;
            let Some(card_url) = attempt.agent_url.clone() else {
                slots.push(None);
                continue;
            };
            if !lookup::never_sent(attempt) {
                slots.push(None);
                continue;
            }
            let var = item
                .out
                .credential
                .as_ref()
                .map(crate::a2a::Credential::key);
            let key = (card_url, var, item.out.interface);
            let endpoint = if let Some(found) = cards.get(&key) {
                found.clone()
            } else {
                let found = self.sender.card_endpoint(&key.0, &item.out).await?.ok();
                cards.insert(key, found.clone());
                found
            };
            match endpoint {
                Some(endpoint) => {
                    self.sender.say_unsearchable(attempt, &endpoint)?;
                    slots.push(Some(claims.len()));
                    claims.push((attempt.id, Some(endpoint)));
                }
                None => slots.push(None),
            }
        }
        let ttl = self.sender.lease_ttl;
        let send_timeout = super::journaled_timeout(self.sender.client);
        let claimed_at = self.sender.clock.now();
        let rest = claims.split_off(claims.len().min(FIRST_CLAIM));
        let mut claimed = journal
            .claim_for_send(&claims, ttl, send_timeout)?
            .into_iter()
            .map(Some)
            .collect::<Vec<_>>();
        self.renew_at.set(Some(claimed_at + ttl / 2));
        self.expires_at.set(Some(claimed_at + ttl));
        if !rest.is_empty() {
            let later = Later::new(rest, ttl, send_timeout);
            // The second claim goes to the writer now: it commits while the first sends go.
            later.start(0, &self.writer);
            self.later = Some(later);
        }
        let mut out = Vec::with_capacity(items.len());
        for (slot, item) in slots.into_iter().zip(items) {
            let Some(i) = slot else {
                out.push(Ready::Deliver);
                continue;
            };
            let Some(claim) = claimed.get_mut(i) else {
                out.push(Ready::Send(item.attempt.clone()));
                continue;
            };
            out.push(match claim.take().context("a claim was read twice")? {
                BatchClaim::Claimed(attempt, true) => {
                    self.held.borrow_mut().insert(attempt.id);
                    self.waiting.borrow_mut().insert(attempt.id);
                    Ready::Send(attempt)
                }
                // Another process journaled its endpoint first: it may have been sent,
                // so the one-attempt path looks first (under the lease it renews).
                BatchClaim::Claimed(attempt, false) => {
                    self.held.borrow_mut().insert(attempt.id);
                    Ready::Deliver
                }
                BatchClaim::HeldBy(attempt, lease) => Ready::Done(Sent::Busy(attempt, lease)),
                BatchClaim::Settled(attempt) => Ready::Done(Sent::Settled(attempt)),
            });
        }
        Ok(out)
    }

    /// Renews the waiting leases (one transaction) once half their time is spent.
    fn renew_if_due(&self) -> anyhow::Result<()> {
        let now = self.sender.clock.now();
        if self.renew_at.get().is_some_and(|at| now < at) {
            return Ok(());
        }
        if self.waiting.borrow().is_empty() {
            return Ok(());
        }
        if self.expires_at.get().is_some_and(|at| now >= at) {
            // Renewed too late (a stalled commit or journal): the leases lapsed, and another
            // process may have taken, sent and released them meanwhile.
            let lapsed = std::mem::take(&mut *self.waiting.borrow_mut());
            tracing::debug!(
                attempts = lapsed.len(),
                "the waiting leases lapsed before their renewal: each is re-read and looked for"
            );
            self.relook.borrow_mut().extend(lapsed);
            return Ok(());
        }
        let ids: Vec<AttemptId> = self.waiting.borrow().iter().copied().collect();
        let renewed = self.sender.journal.claim_for_send(
            &ids.iter().map(|id| (*id, None)).collect::<Vec<_>>(),
            self.sender.lease_ttl,
            super::journaled_timeout(self.sender.client),
        )?;
        for (id, claim) in ids.into_iter().zip(renewed) {
            match claim {
                BatchClaim::Claimed(..) => {}
                BatchClaim::HeldBy(_, lease) => {
                    self.waiting.borrow_mut().remove(&id);
                    self.held.borrow_mut().remove(&id);
                    self.lost.borrow_mut().insert(id, lease);
                }
                BatchClaim::Settled(_) => {
                    self.waiting.borrow_mut().remove(&id);
                    self.relook.borrow_mut().insert(id);
                }
            }
        }
        self.renew_at.set(Some(now + self.sender.lease_ttl / 2));
        self.expires_at.set(Some(now + self.sender.lease_ttl));
        Ok(())
    }

    /// Sends one claimed attempt; journals nothing of the answer (hand it to
    /// [`Batch::push`]). An attempt whose lease another process took while it waited is not
    /// sent (`Err(Sent::Busy)`); one whose lease lapsed goes the one-attempt way, looking
    /// first, and its outcome (journaled) is `Err(sent)`.
    pub async fn send(
        &self,
        attempt: Attempt,
        item: &BatchItem,
    ) -> anyhow::Result<Result<Answer, Sent>> {
        let attempt = match self.claimed_later(attempt.id, item).await? {
            Some(Ok(attempt)) => attempt,
            Some(Err(sent)) => return Ok(Err(sent)),
            None => attempt,
        };
        self.renew_if_due()?;
        if let Some(lease) = self.lost.borrow_mut().remove(&attempt.id) {
            return Ok(Err(Sent::Busy(attempt, lease)));
        }
        if self.relook.borrow_mut().remove(&attempt.id) {
            self.held.borrow_mut().remove(&attempt.id);
            let sent = Box::pin(self.sender.deliver(attempt.id, &item.out, &item.step)).await?;
            return Ok(Err(sent));
        }
        self.waiting.borrow_mut().remove(&attempt.id);
        let prepared = self.sender.prepare(&attempt, &item.out)?;
        let (result, with_context) = self
            .sender
            .exchange(&attempt, &item.out, &item.step, &prepared)
            .await?;
        Ok(Ok(Answer {
            attempt,
            card_url: prepared.card_url,
            with_context,
            result,
        }))
    }

    /// Waits for the claim of an attempt claimed on the writer (`None`: claimed before the
    /// sends started): `Ok` the attempt claimed with its endpoint journaled now, to send;
    /// `Err` what the one-attempt path would report (busy, settled meanwhile), or what it did
    /// with an attempt whose endpoint another process journaled first (it looks first).
    async fn claimed_later(
        &self,
        id: AttemptId,
        item: &BatchItem,
    ) -> anyhow::Result<Option<Result<Attempt, Sent>>> {
        let Some(later) = &self.later else {
            return Ok(None);
        };
        let Some(claim) = later.wait(id, &self.writer).await else {
            return Ok(None);
        };
        let claimed = later.take_claimed();
        self.held.borrow_mut().extend(claimed.iter().copied());
        self.waiting.borrow_mut().extend(claimed);
        Ok(Some(match claim? {
            BatchClaim::Claimed(attempt, true) => Ok(attempt),
            BatchClaim::Claimed(attempt, false) => {
                self.held.borrow_mut().remove(&attempt.id);
                self.waiting.borrow_mut().remove(&attempt.id);
                let sent = Box::pin(self.sender.deliver(attempt.id, &item.out, &item.step));
                Err(sent.await?)
            }
            BatchClaim::HeldBy(attempt, lease) => Err(Sent::Busy(attempt, lease)),
            BatchClaim::Settled(attempt) => Err(Sent::Settled(attempt)),
        }))
    }

    /// Keeps an answer for the next group commit.
    pub fn push(&self, answer: Answer) {
        self.pending.borrow_mut().push(answer);
    }

    /// Hands every answer received so far to the writer thread as ONE group commit (each with
    /// the release of its lease); `None` when there is none. Without a writer thread (it could
    /// not start), the commit is made here and is done at once.
    pub fn start_commit(&self) -> anyhow::Result<Option<Commit>> {
        Ok(self.commit_pending(true))
    }

    /// As [`Batch::start_commit`], made here on the command's connection and done at once (a
    /// batch of one: a writer thread would cost a second connection).
    pub fn commit_here(&self) -> Option<Commit> {
        self.commit_pending(false)
    }

    fn commit_pending(&self, on_writer: bool) -> Option<Commit> {
        let answers = std::mem::take(&mut *self.pending.borrow_mut());
        if answers.is_empty() {
            return None;
        }
        let mut records = Vec::with_capacity(answers.len());
        let mut broken = Vec::with_capacity(answers.len());
        for answer in &answers {
            let (record, error) = Self::record_of(answer);
            records.push(record);
            broken.push(error);
        }
        let ids = records.iter().map(|r| r.attempt).collect();
        let (done, reply) = tokio::sync::oneshot::channel();
        let job = move |journal: &journal::Journal| {
            // The caller may be gone (a signal): the commit is made all the same.
            let _ = done.send(SendRecord::commit(journal, &records));
        };
        if on_writer {
            self.writer.run(job);
        } else {
            job(self.sender.journal);
        }
        Some(Commit {
            answers,
            broken,
            ids,
            reply,
            result: None,
        })
    }

    /// Returns what each send of a finished group commit did, by attempt. An answer that
    /// cannot be journaled (a task without id, a task id other than the one held) is that
    /// item's error.
    pub fn finish(&self, commit: Commit) -> anyhow::Result<Vec<(AttemptId, anyhow::Result<Sent>)>> {
        let Commit {
            answers,
            broken,
            ids,
            mut reply,
            result,
        } = commit;
        let journaled = match result {
            Some(answered) => answered.ok(),
            None => reply.try_recv().ok(),
        }
        .context("the group-commit thread ended before its commit")??;
        {
            let mut held = self.held.borrow_mut();
            for id in &ids {
                held.remove(id);
            }
        }
        let mut out = Vec::with_capacity(answers.len());
        for ((answer, error), now) in answers.into_iter().zip(broken).zip(journaled) {
            let id = answer.attempt.id;
            if let Some(error) = error {
                out.push((id, Err(error)));
                continue;
            }
            let now = match now {
                Ok(now) => now,
                Err(e) => {
                    out.push((
                        id,
                        Err(anyhow::Error::new(e).context("failed to journal the answer")),
                    ));
                    continue;
                }
            };
            out.push((
                id,
                Ok(match answer.result {
                    Ok(Answered {
                        value: types::SendMessageResponse::Task(_),
                        ..
                    }) => Sent::Task(now),
                    Ok(_) => Sent::Replied(now),
                    Err(error) if error.class() == ErrorClass::Refused => Sent::Refused(now, error),
                    Err(error) => Sent::failure(now, Stage::Send, error),
                }),
            ));
        }
        Ok(out)
    }

    /// The journal record of an answer, and the error if it cannot be journaled as such.
    fn record_of(answer: &Answer) -> (SendRecord, Option<anyhow::Error>) {
        let id = answer.attempt.id;
        let release = |e: anyhow::Error| {
            (
                SendRecord {
                    attempt: id,
                    outcome: SendOutcome::Release,
                    accepts_context_id: None,
                },
                Some(e),
            )
        };
        let (outcome, answered_context) = match &answer.result {
            Ok(answered) => match &answered.value {
                types::SendMessageResponse::Task(task) => {
                    let raw = answered.raw.get("task").unwrap_or(&Value::Null);
                    let view = match TaskView::from_value(raw, raw.to_string()) {
                        Ok(view) => view,
                        Err(e) => {
                            return release(
                                anyhow::Error::new(e).context("the agent's task has no id"),
                            );
                        }
                    };
                    (
                        SendOutcome::Task(view, Source::Send),
                        Some(task.context_id.clone()),
                    )
                }
                types::SendMessageResponse::Message(message) => {
                    let raw = answered.raw.get("message").unwrap_or(&Value::Null);
                    (
                        SendOutcome::DirectReply {
                            message_json: raw.to_string(),
                            context_id: message.context_id.clone(),
                        },
                        message.context_id.clone(),
                    )
                }
            },
            Err(error) if error.class() == ErrorClass::Refused => {
                (SendOutcome::Refused(error.summary()), None)
            }
            Err(error) => match unusable_answer(error, Stage::Send.as_str()) {
                Some(why) => (SendOutcome::NeedsHuman(why), None),
                None => (
                    SendOutcome::Failed(FailureKind::Send, error.summary()),
                    None,
                ),
            },
        };
        let accepted = answer.with_context
            && answered_context.is_some()
            && answered_context == answer.attempt.context_id;
        (
            SendRecord {
                attempt: id,
                outcome,
                accepts_context_id: accepted.then(|| answer.card_url.clone()),
            },
            None,
        )
    }
}
