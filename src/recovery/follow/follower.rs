//! One follow's loop: the [`Follower`] subscribing, polling, backing off and reconnecting.

mod observe;

use std::collections::VecDeque;
use std::time::Duration;

use rand::SeedableRng as _;
use rand::rngs::StdRng;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::group_commit::{CommitResult, GroupCommit};
use super::remote::{Item, Remote, RemoteStream as _};
use super::{FollowEnd, FollowOptions, FollowOutcome, FollowTarget, Progress};
use crate::a2a::redact_url;
use crate::a2a::{A2aError, ErrorClass, ProtocolBinding, full_jitter};
use crate::journal::{
    AttemptState, Claim, FailureKind, Journal, JournalError, Source, is_over_limit,
};
use crate::recovery::commit::WriterMode;
use crate::recovery::event::{Event, Sink};
use crate::recovery::moved::{self, Rechosen};
use crate::sanitize::inert;

/// Runs one follow against any [`Remote`], with its own group commit.
pub(crate) async fn follow_with<R: Remote>(
    journal: &Journal,
    remote: &R,
    target: &FollowTarget,
    opts: &FollowOptions,
    sink: &dyn Sink,
) -> Result<FollowOutcome, JournalError> {
    let commit = GroupCommit::new(journal, WriterMode::Inline);
    commit
        .beside(follow_in(&commit, remote, target, opts, sink))
        .await
}

/// Runs one follow whose observations go through `commit` (shared with other follows).
pub(super) async fn follow_in<R: Remote>(
    commit: &GroupCommit<'_>,
    remote: &R,
    target: &FollowTarget,
    opts: &FollowOptions,
    sink: &dyn Sink,
) -> Result<FollowOutcome, JournalError> {
    let journal = commit.journal();
    let attempt = journal.attempt(target.attempt)?;
    let mut f = Follower {
        journal,
        commit,
        remote,
        target,
        opts,
        sink,
        rng: match opts.seed {
            Some(seed) => StdRng::seed_from_u64(seed ^ (target.attempt.0 as u64).rotate_left(32)),
            None => crate::sim_seam::jitter_rng(),
        },
        state: attempt.state,
        events: 0,
        changes: 0,
        reconnects: 0,
        streak: 0,
        last_snapshot: None,
        polls: 0,
        last_error: None,
        last_hint: None,
        leased_at: Instant::now(),
        pending: VecDeque::new(),
        pending_bytes: 0,
        step: target.step.to_string(),
        binding: target.endpoint.binding,
    };
    if attempt.state.is_terminal() {
        return f.outcome(FollowEnd::Terminal(attempt.state));
    }
    match journal.claim(target.attempt, opts.lease_ttl)? {
        Claim::Claimed(_) => {}
        Claim::HeldBy(lease) => return f.outcome(FollowEnd::HeldElsewhere(lease)),
    }
    let result = match opts.deadline {
        Some(deadline) => match tokio::time::timeout_at(deadline, f.run()).await {
            Ok(result) => result,
            // Dropped at an await point: what it read is queued, committed just below.
            Err(_) => Ok(FollowEnd::Deadline),
        },
        None => f.run().await,
    };
    // Whatever the follow read and had not settled is journaled (and shown) before it ends.
    commit.commit_now();
    let result = match (result, f.settle().await) {
        // Cut at the deadline while its last reads stopped it: it stopped.
        (Ok(FollowEnd::Deadline), Ok(Some(end))) | (Ok(end), Ok(_)) => Ok(end),
        (Err(e), _) | (Ok(_), Err(e)) => Err(e),
    };
    let released = journal.release(target.attempt);
    let end = result?;
    released?;
    f.outcome(end)
}

/// What one subscription or poll came to.
enum Round {
    /// Stop following.
    Stop(FollowEnd),
    /// Read again after a backoff; the next read is a poll when `poll` is set.
    Again {
        /// Why (one line).
        cause: String,
        /// Whether the agent cannot stream (poll GetTask from now on).
        poll: bool,
        /// The server's `Retry-After`, the least wait (at most the backoff cap).
        retry_after: Option<Duration>,
    },
}

/// Where an observation came from, and whether it is a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A stream's `task` event.
    StreamSnapshot,
    /// A stream's `statusUpdate` or `artifactUpdate`.
    StreamUpdate,
    /// A GetTask answer.
    Polled,
}

/// How many observations one follow reads ahead of their commit, at most.
const MAX_PENDING: usize = 1024;

/// How many bytes of observations ([`StreamObservation::held_bytes`]) one follow reads ahead
/// of their commit before it waits for it: a fast stream of large events (1,024 appended
/// chunks of 8 KiB would hold 8 MiB) holds about this much, plus the event that crossed it.
/// A commit then costs a few times this much memory, whatever the artifact's size: the
/// artifact its first batch creates is about this large, and each later batch writes only the
/// parts it appends (measured, 16 MiB of 8 KiB chunks: 4.4 MB of heap at its peak; 8.2 MB at
/// 1 MiB, 16.6 MB at 1,024 events).
///
/// [`StreamObservation::held_bytes`]: crate::journal::StreamObservation::held_bytes
const MAX_PENDING_BYTES: u64 = 256 * 1024;

/// An observation read and queued, waiting for its commit before it is counted and shown.
struct Pending {
    /// False for a snapshot or poll that repeats the last one but for its timestamps: even
    /// when it refreshes the journaled status, it is no progress.
    news: bool,
    source: Source,
    result: PendingResult,
}

enum PendingResult {
    /// In the group commit's queue.
    Queued(oneshot::Receiver<CommitResult>),
    /// Nothing to journal (a `message` on a task stream): counted as an event all the same.
    Nothing,
}

/// What reading one item did.
enum Read {
    /// Queued; `settle` says whether to wait for its commit before reading on (it may stop
    /// the follow, a crash point is armed for it, or enough is queued).
    Queued {
        /// Wait for the commit now.
        settle: bool,
    },
    /// It cannot apply to this task: journaled as a read failure, after what came before it.
    Ignore(String),
}

struct Follower<'a, R> {
    journal: &'a Journal,
    commit: &'a GroupCommit<'a>,
    remote: &'a R,
    target: &'a FollowTarget,
    opts: &'a FollowOptions,
    sink: &'a dyn Sink,
    rng: StdRng,
    /// The attempt's state as journaled (after the last observation settled).
    state: AttemptState,
    events: u64,
    changes: u64,
    reconnects: u32,
    /// Reconnects since the last event that brought something.
    streak: u32,
    /// What the last snapshot or poll said, its timestamps aside ([`content_signature`]).
    last_snapshot: Option<u64>,
    polls: u32,
    last_error: Option<String>,
    last_hint: Option<crate::a2a::Hint>,
    leased_at: Instant,
    /// Observations read and queued, oldest first, not yet settled.
    pending: VecDeque<Pending>,
    /// The bytes the observations of `pending` hold ([`MAX_PENDING_BYTES`]).
    pending_bytes: u64,
    /// `WORKFLOW/STEP`, for the crash point.
    step: String,
    /// The binding the task is read over (the target's, or the re-chosen interface's).
    binding: ProtocolBinding,
}

impl<R: Remote> Follower<'_, R> {
    /// Tells the sink what happened. A follow stops only on a journal failure: a reporter that
    /// cannot print (its reader went away) does not stop the journaling.
    fn tell(&self, progress: &Progress) {
        let told = self.sink.event(Event::Followed {
            target: self.target,
            progress,
        });
        if let Err(e) = told {
            tracing::debug!(attempt = %self.target.attempt, "follow progress not told: {e:#}");
        }
    }

    /// Returns [`FollowEnd::TooLarge`] if the attempt's artifacts went past a size limit.
    fn over_limit_end(&self) -> Result<Option<FollowEnd>, JournalError> {
        Ok(self
            .journal
            .failed_for_good(self.target.attempt)?
            .filter(|reason| is_over_limit(reason))
            .map(FollowEnd::TooLarge))
    }

    fn outcome(&self, end: FollowEnd) -> Result<FollowOutcome, JournalError> {
        // A terminal task whose artifacts went past a limit (read at the end, say) needs a
        // human all the same.
        let end = match end {
            FollowEnd::Terminal(_) => self.over_limit_end()?.unwrap_or(end),
            end => end,
        };
        Ok(FollowOutcome {
            end,
            attempt: self.journal.attempt(self.target.attempt)?,
            events: self.events,
            changes: self.changes,
            reconnects: self.reconnects,
            polls: self.polls,
            last_error: self.last_error.clone(),
            last_hint: self.last_hint.clone(),
        })
    }

    async fn run(&mut self) -> Result<FollowEnd, JournalError> {
        let mut poll = false;
        loop {
            let round = if poll {
                self.poll().await?
            } else {
                self.subscribe().await?
            };
            let (cause, retry_after) = match round {
                Round::Stop(end) => return Ok(end),
                Round::Again {
                    cause,
                    poll: p,
                    retry_after,
                } => {
                    poll = p;
                    (cause, retry_after)
                }
            };
            if let Some(end) = self.too_long(retry_after) {
                return Ok(end);
            }
            if self.streak >= self.opts.max_reconnects {
                return Ok(FollowEnd::ReconnectsSpent);
            }
            let jitter = full_jitter(
                self.streak,
                self.opts.backoff_base,
                self.opts.backoff_cap,
                &mut self.rng,
            );
            // A `Retry-After` (429, 503) is honoured as the least wait, up to the cap.
            let delay = retry_after.map_or(jitter, |r| jitter.max(r.min(self.opts.backoff_cap)));
            let waiting = Progress::Waiting {
                reconnect: self.reconnects + 1,
                streak: self.streak,
                delay,
                polling: poll,
                cause,
            };
            self.tell(&waiting);
            tokio::time::sleep(delay).await;
            self.streak += 1;
            self.reconnects += 1;
            if poll {
                self.polls += 1;
            }
            if let Some(end) = self.renew_lease()? {
                return Ok(end);
            }
        }
    }

    /// Returns [`FollowEnd::Skipped`] when the agent asked to wait longer than a follow waits:
    /// the backoff cap, or the time left before the deadline. (Past the cap, the client's
    /// limiter also gives the agent a not-before time, which the command journals.)
    fn too_long(&self, retry_after: Option<Duration>) -> Option<FollowEnd> {
        let asked = retry_after?;
        let cap = self.opts.backoff_cap;
        let left = self
            .opts
            .deadline
            .map_or(cap, |d| d.saturating_duration_since(Instant::now()));
        if asked <= cap.min(left) {
            return None;
        }
        let fmt = crate::a2a::error::fmt_duration;
        let what = format!("the agent asked to wait {} (Retry-After)", fmt(asked));
        Some(FollowEnd::Skipped(if left < cap {
            format!("{what}, longer than the {} left before --until", fmt(left))
        } else {
            // Clamped as the limiter clamps it: at most a day ahead, never overflowed.
            let ahead = chrono::Duration::from_std(asked.min(crate::a2a::LONGEST_NOT_BEFORE))
                .unwrap_or(chrono::Duration::zero());
            format!(
                "{what}, longer than {}; not tried again before {}",
                fmt(cap),
                crate::clock::rfc3339(crate::clock::system_now() + ahead)
            )
        }))
    }

    /// Renews the lease once a third of it has passed; another holder ends the follow.
    fn renew_lease(&mut self) -> Result<Option<FollowEnd>, JournalError> {
        if self.leased_at.elapsed() < self.opts.lease_ttl / 3 {
            return Ok(None);
        }
        self.leased_at = Instant::now();
        Ok(
            match self
                .journal
                .claim(self.target.attempt, self.opts.lease_ttl)?
            {
                Claim::Claimed(_) => None,
                Claim::HeldBy(lease) => Some(FollowEnd::HeldElsewhere(lease)),
            },
        )
    }

    /// Journals a failure (the attempt's `error` and a `read-failed` event).
    fn failed(&mut self, e: &A2aError) -> Result<String, JournalError> {
        let summary = e.summary();
        self.journal
            .record_failure(self.target.attempt, FailureKind::Read, &summary)?;
        self.last_error = Some(summary.clone());
        self.last_hint = e.hint();
        Ok(summary)
    }

    /// Decides what an error means: stop (refusal, size cap), read GetTask (the agent cannot
    /// stream this task, or does not know it), or try again.
    async fn on_error(&mut self, e: A2aError) -> Result<Round, JournalError> {
        if let Some(round) = self.skipped(&e) {
            return Ok(round);
        }
        // The a2a-sdk 0.3 server answers `tasks/resubscribe` on a terminal task with -32602
        // ("… is in terminal state"), where v1.0 says -32004.
        use crate::a2a::ErrorKind as K;
        let v03_terminal = e.kind() == Some(K::InvalidParams)
            && self.binding.version() == crate::a2a::ProtocolVersion::V0_3;
        if v03_terminal
            || matches!(
                e.kind(),
                Some(K::UnsupportedOperation | K::TaskNotFound | K::MethodNotFound)
            )
        {
            // An expected answer (a terminal task, or an agent that cannot stream), not a
            // failure: GetTask decides.
            self.last_error = Some(e.summary());
            return self.poll().await;
        }
        if let Some(round) = self.moved(&e).await? {
            return Ok(round);
        }
        let summary = self.failed(&e)?;
        if e.is_too_large()
            || e.is_bad_task_id()
            || matches!(e.class(), ErrorClass::Refused | ErrorClass::Remote)
        {
            return Ok(Round::Stop(FollowEnd::Failed {
                error: summary,
                code: e.exit_code(),
            }));
        }
        Ok(Round::Again {
            cause: summary,
            poll: false,
            retry_after: e.retry_after(),
        })
    }

    /// A request the client did not send (the agent's not-before time is ahead) stops the
    /// follow (exit 3), journaling nothing: the agent did not fail.
    fn skipped(&mut self, e: &A2aError) -> Option<Round> {
        let A2aError::Skipped { reason, .. } = e else {
            return None;
        };
        self.last_error = Some(e.summary());
        self.last_hint = e.hint();
        Some(Round::Stop(FollowEnd::Skipped(reason.clone())))
    }

    /// After a read failed with "not served here": when the interface left the agent's card,
    /// the next read goes to the re-chosen one at once (`Some(Again)`), or the follow stops
    /// for a human when the card offers nothing we speak; `None` when the interface stays.
    async fn moved(&mut self, e: &A2aError) -> Result<Option<Round>, JournalError> {
        if !e.is_not_served_here() {
            return Ok(None);
        }
        Ok(match self.remote.rechoose(e).await? {
            Rechosen::Stays => None,
            Rechosen::Moved(to) => {
                self.binding = to.binding;
                Some(Round::Again {
                    cause: format!(
                        "the interface left the agent's card; reading the task at `{}` ({} {})",
                        inert(&redact_url(&to.url)),
                        to.binding.wire().card_name(),
                        to.binding.version().as_str()
                    ),
                    poll: false,
                    retry_after: None,
                })
            }
            Rechosen::Nowhere(gone) => {
                let reason = gone.line();
                let journaled = moved::journal_gone(self.journal, self.target.attempt, &reason)?;
                self.last_error = Some(journaled);
                Some(Round::Stop(FollowEnd::InterfaceGone(reason)))
            }
        })
    }

    /// Stops the follow: a terminal task is read once more with GetTask first.
    async fn stop(&mut self, end: FollowEnd) -> Result<Round, JournalError> {
        if matches!(end, FollowEnd::Terminal(_)) {
            self.final_read().await?;
        }
        Ok(Round::Stop(end))
    }

    /// One subscription, read until it stops, ends or fails.
    ///
    /// Items already buffered are read ahead and queued without waiting; the follow waits for
    /// their group commit (and shows them) before it waits for the stream again, and at once
    /// after an item that may stop it.
    async fn subscribe(&mut self) -> Result<Round, JournalError> {
        let mut stream = match self.remote.subscribe(&self.target.task_id).await {
            Ok(stream) => stream,
            Err(e) => return self.on_error(e).await,
        };
        let mut first = true;
        // Since when every event has been one that cannot apply to this task.
        let mut stray_since: Option<Instant> = None;
        loop {
            let item = {
                let next = stream.next();
                let mut next = std::pin::pin!(next);
                match futures_util::poll!(next.as_mut()) {
                    std::task::Poll::Ready(item) => item,
                    std::task::Poll::Pending => {
                        // The HTTP connection hands over the next event already received only
                        // once this task lets it run: yield (twice at most) before deciding
                        // the stream is quiet, then journal and show what was read, and wait.
                        let mut ready = None;
                        if !self.pending.is_empty() {
                            for _ in 0..2 {
                                tokio::task::yield_now().await;
                                if let std::task::Poll::Ready(item) =
                                    futures_util::poll!(next.as_mut())
                                {
                                    ready = Some(item);
                                    break;
                                }
                            }
                        }
                        if let Some(item) = ready {
                            item
                        } else {
                            if let Some(end) = self.settle().await? {
                                return self.stop(end).await;
                            }
                            next.await
                        }
                    }
                }
            };
            let item = match item {
                None => {
                    if let Some(end) = self.settle().await? {
                        return self.stop(end).await;
                    }
                    return Ok(Round::Again {
                        cause: "the stream ended".to_owned(),
                        poll: false,
                        retry_after: None,
                    });
                }
                Some(Err(e)) => {
                    if let Some(end) = self.settle().await? {
                        return self.stop(end).await;
                    }
                    if first && self.binding == ProtocolBinding::HttpJsonV03 {
                        // The a2a-sdk 0.3 REST server answers a subscribe on a terminal task
                        // with 200 and then cuts the body before any event: GetTask decides.
                        self.last_error = Some(e.summary());
                        return self.poll().await;
                    }
                    return self.on_error(e).await;
                }
                Some(Ok(item)) => item,
            };
            let kind = if first && matches!(item, Item::Task(_)) {
                Kind::StreamSnapshot
            } else {
                Kind::StreamUpdate
            };
            first = false;
            match self.read(&item, kind) {
                Read::Queued { settle } => {
                    stray_since = None;
                    if settle && let Some(end) = self.settle().await? {
                        return self.stop(end).await;
                    }
                }
                Read::Ignore(why) => {
                    if let Some(end) = self.settle().await? {
                        return self.stop(end).await;
                    }
                    if let Some(round) = self.stray(&why, &mut stray_since)? {
                        return Ok(round);
                    }
                }
            }
            if let Some(end) = self.renew_lease()? {
                self.settle().await?;
                return Ok(Round::Stop(end));
            }
        }
    }

    /// Reads the task with GetTask (after -32004 / -32001 on subscribe, and each poll).
    async fn poll(&mut self) -> Result<Round, JournalError> {
        match self.remote.get_task(&self.target.task_id).await {
            Ok(task) => {
                if let Some(end) = self.observe_now(&Item::Task(task), Kind::Polled).await? {
                    return Ok(Round::Stop(end));
                }
                Ok(Round::Again {
                    cause: "the agent cannot stream this task; polling GetTask".to_owned(),
                    poll: true,
                    retry_after: None,
                })
            }
            Err(e) if e.is_task_not_found() => {
                let summary = e.summary();
                self.journal.mark_lost(self.target.attempt, &summary)?;
                self.last_error = Some(summary);
                self.state = AttemptState::Lost;
                Ok(Round::Stop(FollowEnd::Lost))
            }
            Err(e) => {
                if let Some(round) = self.skipped(&e) {
                    return Ok(round);
                }
                if let Some(round) = self.moved(&e).await? {
                    return Ok(round);
                }
                let summary = self.failed(&e)?;
                if e.is_transient() {
                    Ok(Round::Again {
                        cause: summary,
                        poll: true,
                        retry_after: e.retry_after(),
                    })
                } else {
                    Ok(Round::Stop(FollowEnd::Failed {
                        error: summary,
                        code: e.exit_code(),
                    }))
                }
            }
        }
    }
}

/// Returns a signature of a task snapshot without its status timestamp: two snapshots that
/// differ only in when the agent stamped them have the same signature.
fn content_signature(raw: &Value) -> u64 {
    use std::hash::{Hash as _, Hasher as _};
    let mut v = raw.clone();
    if let Some(status) = v.get_mut("status").and_then(Value::as_object_mut) {
        status.remove("timestamp");
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    v.to_string().hash(&mut h);
    h.finish()
}
