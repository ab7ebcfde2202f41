//! The reconcile pass: one visit of every attempt that may need work, bounded in
//! concurrency and time, deciding with `decide` and sending with `send`.
//!
//! Each pass row (`Journal::pass_rows`: the latest attempt of each step still to settle, read a
//! page at a time as the pass reaches it, so memory stays flat in the number of rows) is one
//! item, handled on its own: undelivered replies first (looked for in the task's history before
//! any resend), then the attempt's bucket — an intent is looked for and resent only when proven
//! absent, a known task is re-read with `GetTask` (transient failures retried with full jitter,
//! honouring `Retry-After`), a terminal one is decided (effect claimed, re-delegated, or failed
//! for good). Items run concurrently on the current-thread runtime, at most `concurrency` at once
//! over all agents, each agent (interface URL + credential variable) at most its own limit, the
//! agents taken in turn (`schedule.rs`); an agent whose circuit opens (`a2a::Limits`:
//! consecutive timeouts or connection failures) has its remaining items skipped, unjournaled,
//! so one hung agent costs only its own timeouts.
//!
//! Invariants:
//! - Journal writes are short synchronous transactions between awaits, never across one; a pass
//!   cut anywhere (deadline, signal, SIGKILL) leaves every observation it made committed.
//! - Intents, resends and re-delegations keep commit-before-send (`send.rs`), under a lease.
//!   The leases of a page's intents to look for (bucket 1) are claimed in one transaction as the
//!   page is read; a task the look finds is group-committed with the release of its lease (lost
//!   in a crash, it is looked up again next pass); leases of rows not reached are released at
//!   the end, also on a signal.
//! - Reading unchanged remote work writes nothing (`Journal::apply_task` skips no-ops): a cron
//!   pass over running tasks costs no disk. Each agent's health is journaled at the end of a
//!   pass, on a transition (it stopped or started answering) or at most once a minute.
//! - A dry run opens the journal read-only and sends nothing: it reads (GetTask, ListTasks) and
//!   says what it would do.
//! - Workflows that are COMPENSATING get no sends and no re-delegation; COMPENSATED ones are not
//!   visited.
//!
//! - Once the items are done, the push configs of attempts that ended are deleted at their
//!   agents, best effort and once each (`recovery/push_tidy.rs`).
//!
//! Beside this file, which holds the pass's setup, its run loop and the triage of one item:
//! `reconcile/rows.rs` (the rows read a page at a time, and the page's lease claims),
//! `reconcile/intents.rs` (bucket 1, and what every send did), `reconcile/reads.rs` (bucket 2),
//! `reconcile/settle.rs` (bucket 3: effect claims, re-delegation, failure for good),
//! `reconcile/reply.rs` (undelivered replies), `reconcile/actions.rs` (the actions reported),
//! `reconcile/preview.rs` (the dry run).

mod actions;
mod intents;
mod preview;
mod reads;
mod reply;
mod rows;
mod settle;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::rc::Rc;
use std::time::Duration;

use self::actions::{failed_outcome, failure_left, hinted, remedy_line, skipped_action, unreached};
use self::rows::{Items, Rows, StepOf};
use crate::a2a::TaskView;
use crate::a2a::{A2aClient, Endpoint};
use crate::clock::Clock;
use crate::journal::{
    AgentSeen, Attempt, AttemptId, AttemptRow, AttemptState, BatchClaim, Journal, PassCursor,
    Reply, SendOutcome, SendRecord,
};
use crate::recovery::commit::{Queue, Writer, WriterMode};
use crate::recovery::decide::{self, Triage};
use crate::recovery::detail::{Detail, Why};
use crate::recovery::event::{Action, Event, Left, Sink};
use crate::recovery::schedule::{LOCKING_LOOKAHEAD, LOOKAHEAD, Schedule};
use crate::recovery::send::Sender;
use crate::recovery::{follow, lookup, not_before, push_tidy, send};
use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;

/// How many times a read is tried before the attempt is left as it was this pass.
const READ_ATTEMPTS: u32 = 4;
/// How many routine observations (a running task still running) are group-committed at once.
const BATCH: usize = 512;
/// The outcome of an item not tried because its agent's circuit is open, or its not-before time
/// is ahead.
pub const SKIPPED: &str = "skipped";

/// An agent whose items a pass skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkippedAgent {
    /// Why (the first skipped item's reason).
    pub reason: String,
    /// How many items were skipped.
    pub attempts: u32,
    /// When it may be tried again (RFC 3339), if it gave a not-before time; `None`: the next
    /// pass.
    pub not_before: Option<String>,
}

/// What a pass is asked to do.
#[derive(Debug, Clone)]
pub struct PassConfig {
    /// Only these workflows (empty: all).
    pub workflows: Vec<String>,
    /// Items in flight at once, over all agents (`--concurrency`); each agent's own limit is
    /// the client's (`a2a::Limits`, `--agent-concurrency`).
    pub concurrency: usize,
    /// When the pass ends cleanly (exit 3 if items remain).
    pub deadline: Duration,
    /// Say what would be done; write and send nothing.
    pub dry_run: bool,
    /// How far an agent's clock may be behind ours (the look by time).
    pub clock_skew: Duration,
    /// How long a lease on an attempt is held before another host may break it.
    pub lease_ttl: Duration,
    /// Timeout of effect verification commands (`--command-timeout`).
    pub command_timeout: Duration,
    /// How long an Agent Card that cannot be read or reached is waited out before an attempt
    /// needs a human.
    pub card_patience: Duration,
}

/// What a whole pass came to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// How many actions ended in each outcome (a read and the record that follows it are two).
    pub outcomes: BTreeMap<String, u32>,
    /// How many attempts ended in each outcome: the outcome of the last action on each attempt
    /// (an attempt a re-delegation created counts as one more).
    pub attempts: BTreeMap<String, u32>,
    /// How many items were visited.
    pub visited: usize,
    /// How many items the deadline left unvisited.
    pub unvisited: usize,
    /// Workflows with a step failed for good (print the `compensate` command).
    pub compensate: BTreeSet<String>,
    /// Workflows whose compensation has begun and not ended (`COMPENSATING`): a pass sends
    /// nothing for them, `compensate` finishes them (exit 3; 4 when a compensation failed).
    pub compensating: BTreeSet<String>,
    /// Agents whose remaining items were skipped (their circuit opened, or their not-before
    /// time is ahead), by redacted interface URL.
    pub skipped: BTreeMap<String, SkippedAgent>,
    /// The steps (`workflow/step`) an action said a human must act on.
    pub needs_human: BTreeSet<String>,
    /// How many workflows the pass left alone because another pass held their lock.
    pub held: usize,
}

impl Summary {
    /// Counts one item's attempts by how each ended: the outcome of its last action.
    fn count_attempts(&mut self, actions: &[Action]) {
        let mut last: BTreeMap<u32, &str> = BTreeMap::new();
        for a in actions {
            last.insert(a.attempt, &a.outcome);
        }
        for outcome in last.into_values() {
            *self.attempts.entry(outcome.to_owned()).or_default() += 1;
        }
    }

    /// Counts one action.
    fn count(&mut self, a: &Action) {
        *self.outcomes.entry(a.outcome.clone()).or_default() += 1;
        if a.left == Left::Human {
            self.needs_human
                .insert(format!("{}/{}", a.workflow, a.step));
        }
        if a.action == "failed-for-good" || a.outcome == "failed-for-good" {
            self.compensate.insert(a.workflow.clone());
        }
        if a.outcome == SKIPPED
            && let Some(Some(agent)) = &a.detail.agent
        {
            let entry = self
                .skipped
                .entry(agent.clone())
                .or_insert_with(|| SkippedAgent {
                    reason: a.detail.reason.clone().flatten().unwrap_or_default(),
                    attempts: 0,
                    not_before: a.detail.not_before.map(crate::clock::rfc3339),
                });
            entry.attempts += 1;
        }
    }
}

/// Takes each workflow's pass lock as a pass reaches it: a pass works only on the workflows
/// whose lock it holds, so passes on several hosts share a journal's workflows between them
/// instead of the first to start taking them all.
pub trait WorkflowLocks {
    /// Tries `workflow`'s lock once, without waiting: true when this pass holds it now (until
    /// the pass ends), false when another pass does (the implementation reports the holder).
    ///
    /// # Errors
    ///
    /// The lock could not be tried (its file, the journal's server).
    fn try_lock(&self, workflow: &str) -> anyhow::Result<bool>;
}

/// A pass over one journal.
pub struct Pass<'a> {
    journal: &'a Journal,
    client: &'a A2aClient,
    clock: &'a dyn Clock,
    cfg: PassConfig,
    /// Takes workflow locks as the pass reaches each workflow (none: the caller holds the
    /// locks of `cfg.workflows` already, or this is a dry run).
    locks: Option<&'a dyn WorkflowLocks>,
    /// Whether this pass holds each workflow's lock, for the workflows reached so far.
    mine: RefCell<foldhash::HashMap<String, bool>>,
    /// Rows left out because another pass holds their workflow's lock.
    held_rows: std::cell::Cell<usize>,
    /// Routine observations waiting for their group commit.
    reads: Queue<'a, (AttemptId, TaskView)>,
    /// The endpoints of the reads so far, by interface URL, each with the card URL it was
    /// built for: the card's origin is parsed and the credential read once per agent, not per
    /// item (docs/performance.md).
    endpoints: RefCell<foldhash::HashMap<String, (String, Rc<Endpoint>)>>,
    /// Bucket 1: what claiming a page's `INTENT` attempts in one transaction found, taken by
    /// each item as it is handled.
    claimed: RefCell<HashMap<AttemptId, BatchClaim>>,
    /// Bucket 1: the looks by time an intent's page shares (`lookup::Sweeps`), by attempt.
    sweep_of: RefCell<HashMap<AttemptId, Rc<lookup::Sweeps>>>,
    /// Bucket 1: found tasks (and lease releases) waiting for their group commit.
    found: Queue<'a, SendRecord>,
}

/// One item: a pass row and the undelivered replies on its attempt.
///
/// The row is boxed: an item is moved many times on its way from the page to its future (the
/// iterator, the schedule's queue, the future's state), and a row is about 800 bytes
/// (docs/performance.md).
struct Item {
    row: Box<AttemptRow>,
    replies: Vec<Reply>,
}

/// A pass dropped before its end (SIGINT or SIGTERM drop the command's future at an await
/// point, exit 130 / 143) still commits the routine observations it reported.
impl Drop for Pass<'_> {
    fn drop(&mut self) {
        // A killed process runs no drop-time work (the simulator's crash).
        if crate::sim_seam::killed() {
            return;
        }
        if std::thread::panicking()
            || (self.reads.is_empty() && self.found.is_empty() && self.claimed.get_mut().is_empty())
        {
            return;
        }
        self.release_unvisited();
        if let Err(e) = self.flush() {
            tracing::warn!("failed to journal the pass's last observations: {e:#}");
        }
    }
}

impl<'a> Pass<'a> {
    /// Prepares a pass.
    pub fn new(
        journal: &'a Journal,
        client: &'a A2aClient,
        clock: &'a dyn Clock,
        cfg: PassConfig,
    ) -> Self {
        Self::with_writer(journal, client, clock, cfg, WriterMode::Thread)
    }

    /// Prepares a pass whose group commits are made as `mode` says ([`Pass::new`]: on a
    /// thread of their own, so that requests go on while a commit is made).
    pub fn with_writer(
        journal: &'a Journal,
        client: &'a A2aClient,
        clock: &'a dyn Clock,
        cfg: PassConfig,
        mode: WriterMode,
    ) -> Self {
        let writer = std::rc::Rc::new(Writer::new(journal, mode));
        Self {
            journal,
            client,
            clock,
            cfg,
            locks: None,
            mine: RefCell::new(foldhash::HashMap::default()),
            held_rows: std::cell::Cell::new(0),
            reads: Queue::on(std::rc::Rc::clone(&writer)),
            endpoints: RefCell::new(foldhash::HashMap::default()),
            claimed: RefCell::new(HashMap::new()),
            sweep_of: RefCell::new(HashMap::new()),
            found: Queue::on(writer),
        }
    }

    /// Takes each workflow's lock as the pass reaches it, with `locks`, and works only on the
    /// workflows whose lock it got.
    #[must_use]
    pub fn with_locks(mut self, locks: &'a dyn WorkflowLocks) -> Self {
        self.locks = Some(locks);
        self
    }

    /// Tries the lock of each of `workflows` not reached before; true when one was taken now
    /// (rows read before that may be stale: the caller reads them again under the lock).
    fn lock_reached<'w>(
        &self,
        workflows: impl IntoIterator<Item = &'w str>,
    ) -> anyhow::Result<bool> {
        let Some(locks) = self.locks else {
            return Ok(false);
        };
        let mut taken = false;
        for w in workflows {
            if self.mine.borrow().contains_key(w) {
                continue;
            }
            let got = locks.try_lock(w)?;
            taken |= got;
            self.mine.borrow_mut().insert(w.to_owned(), got);
        }
        Ok(taken)
    }

    /// How many items the pass reads ahead of those running. A pass taking workflow locks as it
    /// goes reads little ahead, so that the workflows it locks are ones it is about to work on:
    /// passes on other hosts take the rest.
    fn lookahead(&self) -> usize {
        if self.locks.is_some() {
            (2 * self.cfg.concurrency).clamp(LOCKING_LOOKAHEAD, LOOKAHEAD)
        } else {
            LOOKAHEAD
        }
    }

    /// Whether the pass works on `workflow` (its lock is this pass's).
    fn is_mine(&self, workflow: &str) -> bool {
        self.locks.is_none() || self.mine.borrow().get(workflow).copied().unwrap_or(false)
    }

    /// Hands the routine observations gathered so far to the pass's writer as one group
    /// commit, and the found tasks with the release of their leases as another, and goes on;
    /// takes the results of those already made.
    fn flush(&self) -> anyhow::Result<()> {
        self.reads.hand_off();
        self.found.hand_off();
        self.reads.reap()?;
        Self::warn_unjournaled(self.found.reap()?);
        Ok(())
    }

    /// [`Pass::flush`], then waits for every group commit handed over.
    async fn flush_and_wait(&self) -> anyhow::Result<()> {
        self.flush()?;
        let reads = self.reads.settle().await;
        Self::warn_unjournaled(self.found.settle().await?);
        reads?;
        Ok(())
    }

    /// Says which found tasks could not be journaled.
    fn warn_unjournaled(found: Vec<(SendRecord, crate::recovery::commit::Done<SendRecord>)>) {
        for (record, done) in found {
            if let Err(e) = done {
                // Left INTENT: the next pass looks for it again.
                tracing::warn!(
                    "failed to journal the task found for attempt {}: {e}",
                    record.attempt
                );
            }
        }
    }

    /// Releases the leases of claimed intents the pass did not reach (its deadline, a signal),
    /// with the last group commit.
    fn release_unvisited(&self) {
        for (id, claim) in self.claimed.borrow_mut().drain() {
            if let BatchClaim::Claimed(..) = claim {
                self.found.push(SendRecord {
                    attempt: id,
                    outcome: SendOutcome::Release,
                    accepts_context_id: None,
                });
            }
        }
    }

    /// How many of an agent's items run at once (its `a2a::Limits`).
    fn agent_concurrency(&self, key: &AgentKey) -> usize {
        self.client.limits().of(&key.0).concurrency
    }

    fn sender(&self) -> Sender<'_> {
        Sender {
            sink: &crate::recovery::Unheard,
            journal: self.journal,
            client: self.client,
            clock: self.clock,
            clock_skew: self.cfg.clock_skew,
            lease_ttl: self.cfg.lease_ttl,
            sweeps: None,
            card_patience: self.cfg.card_patience,
        }
    }

    /// Returns the items of the attempts with undelivered replies (visited first, each with its
    /// replies) and a walk over every other pass row; with workflow locks taken as reached, only
    /// the workflows whose lock the pass got.
    fn collect(&self) -> anyhow::Result<(Vec<Item>, PassCursor)> {
        loop {
            let (mut items, skip) = self.reply_items()?;
            if self.lock_reached(items.iter().map(|i| i.row.step.workflow.as_str()))? {
                // Read again under the locks just taken.
                continue;
            }
            items.retain(|i| self.is_mine(&i.row.step.workflow));
            let cursor = self.journal.pass_cursor(&self.cfg.workflows, &skip)?;
            return Ok((items, cursor));
        }
    }

    /// Returns the items of the attempts with undelivered replies and their attempt ids.
    fn reply_items(&self) -> anyhow::Result<(Vec<Item>, Vec<AttemptId>)> {
        let mut replies: BTreeMap<i64, Vec<Reply>> = BTreeMap::new();
        for r in self.journal.undelivered_replies(&self.cfg.workflows)? {
            replies.entry(r.attempt_id.0).or_default().push(r);
        }
        let mut items = Vec::with_capacity(replies.len());
        let mut skip = Vec::with_capacity(replies.len());
        // A reply is looked for whether or not its attempt is still a pass row (it may have
        // completed meanwhile).
        for (id, rs) in replies {
            skip.push(AttemptId(id));
            if let Some(row) = self.row_of(self.journal.attempt(AttemptId(id))?)? {
                items.push(Item {
                    row: Box::new(row),
                    replies: rs,
                });
            }
        }
        Ok((items, skip))
    }

    /// Builds the pass row of an attempt from its step (for attempts outside `pass_rows`).
    fn row_of(&self, attempt: Attempt) -> anyhow::Result<Option<AttemptRow>> {
        let Some(rec) = self.journal.step_by_id(attempt.step_id)? else {
            return Ok(None);
        };
        let previous_task_id = attempt
            .previous_attempt
            .and_then(|p| rec.attempts.iter().find(|a| a.id == p))
            .and_then(|p| p.task_id.clone());
        Ok(Some(AttemptRow {
            is_latest: rec.latest().is_some_and(|l| l.id == attempt.id),
            step: rec.step.spec.name.clone(),
            binding: rec.step.spec.binding.clone(),
            max_attempts: rec.step.spec.max_attempts,
            resolution: rec.step.resolution,
            workflow_state: rec.step.workflow_state,
            previous_task_id,
            artifact_count: 0,
            failed_for_good: self.journal.failed_for_good(attempt.id)?,
            allow_cross_origin: rec.step.spec.allow_cross_origin,
            needs_human: None,
            // No pass shows an age, and it never answers a question.
            state_changed_at: attempt.updated_at,
            text_reply_refused: false,
            attempt,
        }))
    }

    /// Runs the pass, telling `sink` how many items it will visit if it asks
    /// ([`Event::Started`], [`Sink::counts_items`]), each
    /// action as it happens ([`Event::Acted`]) and each finished item ([`Event::ItemDone`]).
    pub async fn run(&self, sink: &dyn Sink) -> anyhow::Result<Summary> {
        let (first, cursor) = self.collect()?;
        let prepare = |page: &mut VecDeque<AttemptRow>| self.prepare_page(page);
        let prepare = (!self.cfg.dry_run).then_some(&prepare as &rows::PagePrep<'_>);
        let mut items = Items::new(
            first,
            Rows::new(self.journal, cursor, self.lookahead(), prepare),
        );
        if sink.counts_items() {
            sink.event(Event::Started {
                items: items.total()?,
            })?;
        }
        let mut schedule: Schedule<AgentKey, Item> = Schedule::new();
        let mut running = FuturesUnordered::new();
        let global = self.cfg.concurrency.max(1);
        let lookahead = self.lookahead();
        let start = |key: AgentKey, item: Item| async move {
            // Boxed, and the rare branches inside boxed too: the future of the common read
            // stays small, where moving a whole item's state machine cost 13 KB of memcpy per
            // item (docs/performance.md).
            let actions = if self.cfg.dry_run {
                Box::pin(self.preview(item)).await
            } else {
                Box::pin(self.handle(item)).await
            };
            (key, actions)
        };
        let mut summary = Summary::default();
        let deadline = tokio::time::Instant::now() + self.cfg.deadline;
        // An agent that asks to wait past the deadline is not waited for (`a2a::Limits`).
        self.client.set_deadline(Some(deadline));
        let mut exhausted = false;
        loop {
            while !exhausted && schedule.queued() < lookahead {
                match items.next() {
                    Some(item) => {
                        let item = item?;
                        schedule.push(agent_key(&item.row.attempt), item);
                    }
                    None => exhausted = true,
                }
            }
            // Items of an agent whose circuit is open are skipped without being started.
            let mut skipped = Vec::new();
            while running.len() < global {
                let Some((key, item)) = schedule.next(|k| self.agent_concurrency(k)) else {
                    break;
                };
                match self.client.skipped(&key.0, key.1.as_deref()) {
                    Some(skip) => {
                        schedule.done(&key);
                        skipped.push(vec![skipped_action(&item.row, &skip)]);
                    }
                    None => running.push(start(key, item)),
                }
            }
            let finished: Vec<anyhow::Result<Vec<Action>>> = if skipped.is_empty() {
                if running.is_empty() {
                    if exhausted && schedule.queued() == 0 {
                        break;
                    }
                    continue;
                }
                let next = tokio::time::timeout_at(deadline, running.next()).await;
                let Ok(next) = next else {
                    let total = items.total()?;
                    summary.unvisited =
                        total.saturating_sub(summary.visited + self.held_rows.get());
                    *summary.outcomes.entry("deadline".to_owned()).or_default() +=
                        u32::try_from(summary.unvisited).unwrap_or(u32::MAX);
                    break;
                };
                let Some((key, actions)) = next else { continue };
                schedule.done(&key);
                vec![actions]
            } else {
                skipped.into_iter().map(Ok).collect()
            };
            if self.reads.len() + self.found.len() >= BATCH {
                self.flush()?;
            }
            for actions in finished {
                summary.visited += 1;
                let actions = actions?;
                summary.count_attempts(&actions);
                for a in actions {
                    summary.count(&a);
                    sink.event(Event::Acted(&a))?;
                }
                sink.event(Event::ItemDone)?;
            }
        }
        drop(running);
        self.client.set_deadline(None);
        self.release_unvisited();
        self.flush_and_wait().await?;
        if !self.cfg.dry_run {
            self.after_items(summary.unvisited == 0, deadline).await?;
        }
        Ok(summary)
    }

    /// After the items: deletes the push configs of attempts that ended (best effort, within
    /// the pass's deadline, when it left no item unvisited; a config not deleted now is the next
    /// pass's), then journals the agents' not-before times and health.
    async fn after_items(
        &self,
        all_visited: bool,
        deadline: tokio::time::Instant,
    ) -> anyhow::Result<()> {
        if all_visited {
            let tidy = push_tidy::tidy(
                self.journal,
                self.client,
                &self.cfg.workflows,
                self.cfg.concurrency,
            );
            let _ = tokio::time::timeout_at(deadline, tidy).await;
        }
        not_before::journal_fresh(self.client, self.journal)?;
        self.record_health()
    }

    /// Journals what this pass's requests (and those made since the last pass in this process)
    /// said of each agent's health: a transition at once, a later answer at most once a minute
    /// (`Journal::record_health`), so a pass over unchanged work soon after another writes
    /// nothing.
    fn record_health(&self) -> anyhow::Result<()> {
        let mut by_agent: BTreeMap<String, crate::a2a::Reach> = BTreeMap::new();
        for (url, reach) in self.client.take_reach() {
            let known = self
                .endpoints
                .borrow()
                .get(&url)
                .map(|(card, _)| card.clone());
            let card = match known {
                Some(card) => card,
                None => match self.journal.card_url_of(&url)? {
                    Some(card) => card,
                    None => continue,
                },
            };
            by_agent
                .entry(card)
                .and_modify(|r| r.merge(&reach))
                .or_insert(reach);
        }
        let seen: Vec<(String, AgentSeen)> = by_agent
            .into_iter()
            .map(|(card, r)| {
                let seen = AgentSeen {
                    answered: r.answered,
                    failed: r.failed,
                    failing_since: r.failing_since,
                };
                (card, seen)
            })
            .collect();
        self.journal.record_health(&seen)?;
        Ok(())
    }

    /// Returns a follow target for every attempt still running now (`--follow-for`,
    /// the pass's second bucket, reattach): the latest attempt of each step the pass covers whose task is
    /// known and neither finished nor waiting for a human, in plan order.
    ///
    /// An attempt whose credential variable is unset is left out: the pass reports it.
    pub async fn running_targets(&self) -> anyhow::Result<Vec<follow::FollowTarget>> {
        let mut targets = Vec::new();
        for row in self.journal.pass_rows(&self.cfg.workflows)? {
            let state = row.attempt.state;
            let running = row.is_latest
                && state.has_task()
                && !state.is_finished()
                && !matches!(
                    state,
                    AttemptState::InputRequired | AttemptState::AuthRequired
                );
            if !running {
                continue;
            }
            let wire = send::journaled_wire(self.journal, &row.attempt)?;
            let target =
                follow::FollowTarget::new(&row.step, &row.attempt, row.allow_cross_origin, wire)
                    .await;
            match target {
                Ok(target) => targets.push(target),
                Err(e) => tracing::debug!(step = %row.step, error = %e, "not followed"),
            }
        }
        Ok(targets)
    }

    // -----------------------------------------------------------------------------------------
    // One item
    // -----------------------------------------------------------------------------------------

    async fn handle(&self, item: Item) -> anyhow::Result<Vec<Action>> {
        let Item { row, replies } = item;
        let rec = StepOf::new(self.journal, &row);
        let mut actions = Vec::new();
        for reply in &replies {
            let mut action = Box::pin(self.reconcile_reply(&row, rec.get()?, reply)).await?;
            // The reply of a step resolved done or abandoned (or of a compensated workflow) is
            // still settled, but leaves nothing a pass waits for: the step no longer counts.
            if decide::out_of_passes(&row) && matches!(action.left, Left::Work | Left::Human) {
                action.left = Left::Nothing;
            }
            actions.push(action);
        }
        let row = if replies.is_empty() {
            row
        } else {
            Box::new(self.refresh(&row)?)
        };
        if !row.is_latest {
            return Ok(actions);
        }
        if actions.is_empty() {
            // Most items: their attempt's actions as they are, not copied into a new list.
            return self.handle_attempt(&row, &rec).await;
        }
        actions.extend(self.handle_attempt(&row, &rec).await?);
        Ok(actions)
    }

    async fn handle_attempt(
        &self,
        row: &AttemptRow,
        rec: &StepOf<'_>,
    ) -> anyhow::Result<Vec<Action>> {
        let allowed = decide::sends_allowed(row.workflow_state);
        match decide::triage(row) {
            Triage::Send | Triage::Look if !allowed => Ok(vec![Self::action(
                row,
                row.attempt.number,
                "hold",
                row.attempt.state.as_str(),
                Detail {
                    why: Some(Why::NoSends(row.workflow_state)),
                    ..Detail::default()
                },
                Left::Work,
            )]),
            Triage::Look if self.claimed.borrow().contains_key(&row.attempt.id) => {
                Box::pin(self.look_claimed(row, rec)).await
            }
            Triage::Send | Triage::Look => {
                let rec = rec.get()?;
                let out = match self.outgoing_for(&rec.step.spec, &row.attempt, rec).await? {
                    Ok(out) => out,
                    Err(a) => return Ok(vec![Self::credential_action(row, &a)]),
                };
                let sender = self.sender();
                // The step's record, read for the message, holds the attempt: which way to
                // send it is decided from that copy, and the send reads it again under its lease.
                let current = match rec.attempts.iter().find(|a| a.id == row.attempt.id) {
                    Some(a) => a.clone(),
                    None => self.journal.attempt(row.attempt.id)?,
                };
                let step = row.step.to_string();
                let sent = Box::pin(sender.deliver_read(current, &out, &step)).await?;
                Ok(vec![self.sent_action(row, "send", &sent)?])
            }
            Triage::Uncertain => Ok(vec![self.standing(
                row,
                "report",
                Detail::reason(row.attempt.error.clone()),
            )?]),
            Triage::Read => self.read(row, rec).await,
            Triage::Settled => Box::pin(self.settle(row, rec.get()?)).await,
        }
    }
}

/// An agent as the pass schedules it: its interface URL (else, not yet known, its card URL)
/// and its credential variable.
type AgentKey = (String, Option<String>);

/// The scheduling key of an attempt's agent.
fn agent_key(a: &Attempt) -> AgentKey {
    (
        a.interface_url
            .clone()
            .or_else(|| a.agent_url.clone())
            .unwrap_or_default(),
        crate::a2a::source_key(a.token_env.as_deref(), a.token_cmd.as_deref()),
    )
}
