//! Following a task's stream so that it survives drops, restarts and the task finishing while
//! we were away.
//!
//! One follow is one attempt's task: `SubscribeToTask`, journal every event, stop by itself.
//!
//! - The first event of each stream is the current Task: it is applied as a snapshot
//!   ([`Journal::apply_task`]: it replaces state, status, question and the artifacts it holds),
//!   not merged. Later `statusUpdate` / `artifactUpdate` events are applied idempotently:
//!   artifacts by `artifactId` honouring `append` and `lastChunk`, a status strictly older than
//!   the one held is ignored, and a terminal state never goes back (the journal's
//!   [`transition`](crate::journal::transition) enforces both).
//! - Every event is journaled **before** it is shown, but not one commit per event: events are
//!   group-committed (`GroupCommit`, a `commit::Queue`). A follow reads ahead what its connection has already
//!   received and queues it; when its stream is quiet (or after an event that may stop it), it
//!   waits for the commit, and only then counts each event, fires the `after-event:N` crash
//!   point and calls the observer, in arrival order. All the follows of [`follow_many`] share
//!   one group commit, so the events that arrive together on many streams share one
//!   transaction. N counts the observations journaled by this follow (stream events and
//!   GetTask answers; the first snapshot is 1), per attempt, so `after-event:N:STEP` means that
//!   step's Nth event also inside [`follow_many`]; an armed crash point ends the read-ahead at
//!   its event, so the crash finds exactly N of the follow's events journaled and N−1 shown.
//! - It stops by itself at a terminal state (then reads the task once with `GetTask`, the
//!   authoritative artifacts) and at INPUT_REQUIRED / AUTH_REQUIRED, even when the server keeps
//!   the stream open.
//! - Any other end — a clean EOF, a reset, silence past the idle timeout, garbage — is followed
//!   by a resubscribe after a full-jitter backoff drawn from `[0, min(2^streak s, 30 s)]`.
//!   `streak` counts reconnects since the last event that brought something: it is reset by
//!   every stream event, except a snapshot that changed nothing in the journal (the JS server
//!   answers a task it cannot stream with a bare snapshot and closes; resetting on that would
//!   spin forever). At most `max_reconnects` reconnects in a row, then
//!   [`FollowEnd::ReconnectsSpent`]. A `Retry-After` (429, 503) is the least wait, up to the cap;
//!   one longer than the cap, or than the time left before the deadline, is not waited for:
//!   [`FollowEnd::Skipped`] (exit 3), as is a request the agent's not-before time skips
//!   (`a2a::Limits`).
//! - `UnsupportedOperationError` (-32004), `TaskNotFoundError` (-32001) or `MethodNotFound`
//!   (-32601) on subscribe → `GetTask`: terminal → recorded, stop; not terminal (the agent cannot
//!   stream) → poll `GetTask` with the same backoff, each poll counting as a reconnect (and a
//!   poll that changed something resetting the streak). -32001 from `GetTask` too → `LOST`.
//!   Over v0.3 HTTP+JSON, a subscription that breaks before its first event is read the same
//!   way (the a2a-sdk 0.3 REST server cuts the body of a subscribe on a terminal task).
//! - A definitive refusal (HTTP 401/403/404, -32600/-32602/-32009, any other A2A error code) or
//!   an answer over the size cap stops the follow with [`FollowEnd::Failed`]: retrying cannot
//!   help. Every failure is journaled ([`Journal::record_failure`]); a clean EOF is not a failure.
//! - The attempt's lease ([`Journal::claim`]) is held while following and renewed as events and
//!   reconnects go by; another live holder means [`FollowEnd::HeldElsewhere`] and nothing is read.
//!
//! Waits use `tokio::time` and the jitter comes from a seedable RNG
//! ([`FollowOptions::seed`]), so `#[tokio::test(start_paused = true)]` drives the backoff.
//! [`follow_many`] runs many follows concurrently inside one task (no spawning): 1,000 streams
//! cost 1,000 futures and their sockets (about 40 KB each, measured).
//!
//! Cost: a `synchronous=FULL` commit costs one fsync, whatever it holds. With the group commit a
//! fast stream or many busy streams pay one fsync per batch (at most `MAX_PENDING` events of
//! one follow), not per event; a quiet stream still pays one per event, as it must to show it
//! promptly. `examples/follow_bench.rs` measures events per second beside the bare wire.
//!
//! A signal drops the command at an await point: the group commit is only ever non-empty
//! within one poll, or while a follow yields to let its connection deliver the next event, and
//! dropping it commits what it holds, so everything read is journaled (if not shown).

use std::collections::VecDeque;
use std::time::Duration;

use futures_util::StreamExt as _;
use rand::SeedableRng as _;
use rand::rngs::StdRng;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::a2a::redact_url;
use crate::a2a::types;
use crate::a2a::{
    A2aClient, A2aError, Credential, Endpoint, ErrorClass, ProtocolBinding, full_jitter, origin_of,
};
use crate::a2a::{ArtifactUpdate, TaskView};
use crate::crash::{self, Point};
use crate::journal::{
    Applied, Attempt, AttemptId, AttemptState, Claim, FailureKind, Journal, JournalError, Lease,
    Recorded, Source, StepName, StreamObservation, is_over_limit,
};
use crate::recovery::commit::{Done, Queue};
use crate::recovery::event::{Event, Sink};
use crate::recovery::moved::{self, Rechosen};
use crate::recovery::send::JournaledWire;
use crate::sanitize::inert;

/// Reconnects allowed in a row without an event in between (`--max-reconnects`).
pub const DEFAULT_MAX_RECONNECTS: u32 = 8;
/// The first backoff ceiling: a reconnect right after an event waits at most this long.
pub const BACKOFF_BASE: Duration = Duration::from_secs(1);
/// The largest backoff ceiling.
pub const BACKOFF_CAP: Duration = Duration::from_secs(30);
/// The shortest lease a follow takes on its attempt.
pub const MIN_LEASE_TTL: Duration = Duration::from_secs(600);

/// How a follow behaves.
#[derive(Debug, Clone)]
pub struct FollowOptions {
    /// Reconnects (and polls) allowed in a row without an event that brought something.
    pub max_reconnects: u32,
    /// When to stop following a task that is still running ([`FollowEnd::Deadline`]).
    pub deadline: Option<Instant>,
    /// The backoff ceiling of the first reconnect after an event (doubles per reconnect).
    pub backoff_base: Duration,
    /// The largest backoff ceiling.
    pub backoff_cap: Duration,
    /// How long the attempt's lease lasts; renewed after a third of it. Keep it well above the
    /// stream idle timeout, so a silent stream never outlives the lease.
    pub lease_ttl: Duration,
    /// Seeds the jitter (each attempt gets its own generator derived from it); `None` draws a
    /// seed from the operating system.
    pub seed: Option<u64>,
    /// The stream idle timeout: a stream that sends only events that cannot apply to the task
    /// (another task's, unreadable ones) for longer is as good as silent, and is resubscribed.
    pub idle: Duration,
}

impl Default for FollowOptions {
    fn default() -> Self {
        Self {
            max_reconnects: DEFAULT_MAX_RECONNECTS,
            deadline: None,
            backoff_base: BACKOFF_BASE,
            backoff_cap: BACKOFF_CAP,
            lease_ttl: MIN_LEASE_TTL,
            seed: None,
            idle: Duration::from_mins(1),
        }
    }
}

impl FollowOptions {
    /// Returns the options for a client whose streams may stay silent for `idle`
    /// (`ClientConfig::stream_idle_timeout`): the lease outlives three idle timeouts.
    pub fn for_idle_timeout(idle: Duration) -> Self {
        Self {
            lease_ttl: MIN_LEASE_TTL.max(idle.saturating_mul(3)),
            idle,
            ..Self::default()
        }
    }
}

/// What one follow follows: a step's attempt, its task and where to read it.
#[derive(Debug, Clone)]
pub struct FollowTarget {
    /// The step (for messages and the `after-event:N:STEP` crash point).
    pub step: StepName,
    /// The attempt.
    pub attempt: AttemptId,
    /// The attempt's number within the step.
    pub number: u32,
    /// The remote task id.
    pub task_id: String,
    /// The agent's JSON-RPC endpoint, with the credential.
    pub endpoint: Endpoint,
}

/// Why an attempt cannot be followed.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The attempt has no task (INTENT, UNCERTAIN, REPLIED, REFUSED).
    #[error("attempt {number} of `{step}` has no task to follow (it is {state})")]
    NoTask {
        /// The step.
        step: String,
        /// The attempt number.
        number: u32,
        /// Its state.
        state: AttemptState,
    },
    /// The attempt has a task but no journaled endpoint or agent (a damaged row).
    #[error("attempt {number} of `{step}` has no journaled agent endpoint")]
    NoEndpoint {
        /// The step.
        step: String,
        /// The attempt number.
        number: u32,
    },
    /// The agent URL or the credential variable cannot be used.
    #[error(transparent)]
    Wire(#[from] A2aError),
}

impl FollowTarget {
    /// Builds the target of a journaled attempt: its task id, the endpoint it was sent to, and
    /// the credential from the variable named by its `token_env`.
    pub async fn new(
        step: &StepName,
        attempt: &Attempt,
        allow_cross_origin: bool,
        wire: JournaledWire,
    ) -> Result<Self, TargetError> {
        let task_id = attempt
            .current_task_id()
            .map(str::to_owned)
            .filter(|_| attempt.state.has_task())
            .ok_or_else(|| TargetError::NoTask {
                step: step.to_string(),
                number: attempt.number,
                state: attempt.state,
            })?;
        Ok(Self {
            step: step.clone(),
            attempt: attempt.id,
            number: attempt.number,
            task_id,
            endpoint: endpoint_of(step, attempt, allow_cross_origin, wire).await?,
        })
    }
}

/// Returns the endpoint a journaled attempt was sent to (always where it was first sent, called
/// as `wire` says: `send::journaled_wire`), with the credential its `token_env` / `token_cmd`
/// name (a token command runs on a blocking thread).
pub async fn endpoint_of(
    step: &StepName,
    attempt: &Attempt,
    allow_cross_origin: bool,
    wire: JournaledWire,
) -> Result<Endpoint, TargetError> {
    let no_endpoint = || TargetError::NoEndpoint {
        step: step.to_string(),
        number: attempt.number,
    };
    let url = attempt.interface_url.clone().ok_or_else(no_endpoint)?;
    let card = attempt.agent_url.as_deref().ok_or_else(no_endpoint)?;
    let credential =
        Credential::resolve(attempt.token_env.as_deref(), attempt.token_cmd.as_deref()).await?;
    Ok(Endpoint {
        url,
        tenant: attempt.tenant.clone(),
        binding: wire.binding,
        card_origin: origin_of(card)?,
        credential,
        placement: wire.placement,
        allow_cross_origin: attempt.may_cross_origin(allow_cross_origin),
    })
}

/// How a follow ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FollowEnd {
    /// The task is terminal (COMPLETED, FAILED, CANCELED, REJECTED), recorded.
    Terminal(AttemptState),
    /// The task waits for us (INPUT_REQUIRED, AUTH_REQUIRED); the question is journaled.
    Interrupted(AttemptState),
    /// The agent no longer knows the task (`LOST`).
    Lost,
    /// The deadline passed while the task was still running.
    Deadline,
    /// `max_reconnects` reconnects in a row brought nothing.
    ReconnectsSpent,
    /// Another live process holds the attempt's lease; nothing was read.
    HeldElsewhere(Lease),
    /// An artifact, or all of the task's, went past `--max-artifact-size` / `--max-task-size`
    /// (the error, as journaled): the remote state is kept as reported, the artifacts past the
    /// limit are not, and a human must look (the work probably happened).
    TooLarge(String),
    /// The task's interface left the agent's card, which offers nothing we speak: journaled
    /// as needing a human (the reason; the task may still run at the agent).
    InterfaceGone(String),
    /// The agent asked to wait (`Retry-After`) longer than the backoff cap or the time left
    /// before the deadline, or its not-before time is ahead: not waited for (why, and when it
    /// may be tried again; one inert line).
    Skipped(String),
    /// The agent refused to be read, or answered over the size cap; retrying cannot help.
    Failed {
        /// The error, one inert line.
        error: String,
        /// The exit code it maps to ([`A2aError::exit_code`]).
        code: u8,
    },
}

/// What a follow did.
#[derive(Debug, Clone)]
pub struct FollowOutcome {
    /// How it ended.
    pub end: FollowEnd,
    /// The attempt as journaled at the end.
    pub attempt: Attempt,
    /// Observations received and journaled (stream events and GetTask answers).
    pub events: u64,
    /// Observations that changed the journal.
    pub changes: u64,
    /// Reconnects, polls included.
    pub reconnects: u32,
    /// GetTask polls made because the agent could not stream.
    pub polls: u32,
    /// The last error seen, if any (one inert line).
    pub last_error: Option<String>,
    /// What to do about the last failure ([`A2aError::hint`]), if it had a hint.
    pub last_hint: Option<String>,
}

impl FollowOutcome {
    /// Returns the exit code of `follow` (docs/exit-codes.md): 0 terminal, 4 interrupted / LOST / a
    /// refusal, 3 still running (deadline, reconnects spent, lease held elsewhere).
    pub fn exit_code(&self) -> u8 {
        use crate::exit;
        match &self.end {
            FollowEnd::Terminal(_) => exit::OK,
            FollowEnd::Interrupted(_)
            | FollowEnd::Lost
            | FollowEnd::TooLarge(_)
            | FollowEnd::InterfaceGone(_) => exit::NEEDS_HUMAN,
            FollowEnd::Deadline
            | FollowEnd::ReconnectsSpent
            | FollowEnd::HeldElsewhere(_)
            | FollowEnd::Skipped(_) => exit::WORK_REMAINS,
            FollowEnd::Failed { code, .. } => *code,
        }
    }
}

/// What a follow reports as it goes (after the journal commit).
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// An observation was journaled; `applied` says whether it changed anything.
    Observed {
        /// Where it came from (a stream event or GetTask).
        source: Source,
        /// What it did.
        applied: Applied,
        /// The attempt's state after it.
        state: AttemptState,
        /// Observations so far in this follow.
        events: u64,
        /// The journal event it appended (`None` when nothing changed): everything up to it
        /// is committed.
        event: Option<i64>,
    },
    /// The follow waits before the next subscribe (or poll).
    Waiting {
        /// This reconnect's number in the whole follow (1 = the first).
        reconnect: u32,
        /// Reconnects in a row so far, before this one.
        streak: u32,
        /// The jittered delay.
        delay: Duration,
        /// Whether the next read is a GetTask poll (the agent cannot stream).
        polling: bool,
        /// Why (one inert line).
        cause: String,
    },
}

/// Follows one attempt's task until it stops by itself, the deadline passes, or reconnects are
/// spent; journals every observation and tells `sink` of each after its commit
/// ([`Event::Followed`]).
///
/// Only a journal failure is an `Err`; everything the agent does is a [`FollowEnd`]. The
/// attempt's lease is taken first and released at the end.
pub async fn follow_attempt(
    journal: &Journal,
    client: &A2aClient,
    target: &FollowTarget,
    opts: &FollowOptions,
    sink: &dyn Sink,
) -> Result<FollowOutcome, JournalError> {
    let wire = Wire::new(client, journal, target);
    follow_with(journal, &wire, target, opts, sink).await
}

/// Follows many attempts at once in this task, at most `concurrency` at a time, and returns
/// each target with its outcome, in the order given.
///
/// The sink is shared by all of them (told after each commit, from this task only).
/// The follows share one group commit: the events that arrive together on any of the streams
/// are journaled in one transaction.
pub async fn follow_many(
    journal: &Journal,
    client: &A2aClient,
    targets: Vec<FollowTarget>,
    opts: &FollowOptions,
    concurrency: usize,
    sink: &dyn Sink,
) -> Vec<(FollowTarget, Result<FollowOutcome, JournalError>)> {
    let commit = GroupCommit::new(journal);
    let commit = &commit;
    let work = futures_util::stream::iter(targets.into_iter().enumerate())
        .map(|(i, target)| async move {
            let wire = Wire::new(client, journal, &target);
            let outcome = follow_in(commit, &wire, &target, opts, sink).await;
            (i, target, outcome)
        })
        .buffer_unordered(concurrency.max(1))
        .collect::<Vec<_>>();
    let mut done = commit.beside(work).await;
    done.sort_unstable_by_key(|(i, _, _)| *i);
    done.into_iter().map(|(_, t, o)| (t, o)).collect()
}

// ---------------------------------------------------------------------------------------------
// The group commit
// ---------------------------------------------------------------------------------------------

/// What the group commit hands back for one observation.
type CommitResult = Done<StreamObservation>;

/// The observations the follows of one task have read and not yet journaled, and the commit
/// that journals them together: a [`Queue`] of stream observations that commits what it holds
/// when dropped.
///
/// A follow queues what it reads ([`Queue::submit`]) and, before it waits for anything else,
/// waits for their results. [`Queue::beside`] polls the follows first and then commits whatever
/// they queued, in ONE transaction (`Journal::apply_observations`), every time the task is
/// polled: so the events that arrive together — a burst of one fast stream, or one event on
/// each of many streams — share one durable commit, and nothing stays queued while the task
/// sleeps (a signal that drops the command finds the queue empty).
pub(crate) struct GroupCommit<'j>(Queue<'j, StreamObservation>);

impl<'j> GroupCommit<'j> {
    /// Returns an empty group commit on `journal`.
    pub(crate) fn new(journal: &'j Journal) -> Self {
        Self(Queue::new(journal))
    }

    /// Journals everything queued in one transaction and hands each observation its result.
    pub(crate) fn commit_now(&self) {
        // Every observation has a waiter: a failed commit went to them.
        let _ = self.0.commit();
    }
}

impl<'j> std::ops::Deref for GroupCommit<'j> {
    type Target = Queue<'j, StreamObservation>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

// ---------------------------------------------------------------------------------------------
// The remote side, abstracted so that the loop can be driven without a network in tests
// ---------------------------------------------------------------------------------------------

/// One stream item: a `StreamResponse` member and its raw JSON.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Item {
    /// `task`: a snapshot.
    Task(Value),
    /// `statusUpdate`.
    Status(Value),
    /// `artifactUpdate`.
    Artifact(Value),
    /// `message` (not expected on a task stream; ignored).
    Message,
}

/// Where a follow reads a task.
pub(crate) trait Remote {
    /// The event stream of one subscription.
    type Stream: RemoteStream;
    /// Sends `SubscribeToTask`.
    async fn subscribe(&self, task_id: &str) -> Result<Self::Stream, A2aError>;
    /// Sends `GetTask` and returns the task's raw JSON.
    async fn get_task(&self, task_id: &str) -> Result<Value, A2aError>;
    /// After `e`, re-chooses the interface if it left the agent's card ([`moved::rechoose`]):
    /// later calls go to the one it returns.
    async fn rechoose(&self, e: &A2aError) -> Result<Rechosen, JournalError>;
}

/// The events of one subscription.
pub(crate) trait RemoteStream {
    /// Returns the next item; `None` is a clean end; the stream ends after its first error.
    async fn next(&mut self) -> Option<Result<Item, A2aError>>;
}

/// The wire: an [`A2aClient`] and the attempt's endpoint (re-chosen when it leaves the card).
struct Wire<'a> {
    client: &'a A2aClient,
    journal: &'a Journal,
    attempt: AttemptId,
    endpoint: std::sync::Mutex<Endpoint>,
}

impl<'a> Wire<'a> {
    fn new(client: &'a A2aClient, journal: &'a Journal, target: &FollowTarget) -> Self {
        Self {
            client,
            journal,
            attempt: target.attempt,
            endpoint: std::sync::Mutex::new(target.endpoint.clone()),
        }
    }

    fn endpoint(&self) -> Endpoint {
        self.endpoint
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl Remote for Wire<'_> {
    type Stream = crate::a2a::EventStream;

    async fn subscribe(&self, task_id: &str) -> Result<Self::Stream, A2aError> {
        self.client.subscribe(&self.endpoint(), task_id).await
    }

    async fn get_task(&self, task_id: &str) -> Result<Value, A2aError> {
        // No history: the status message (a question) is in `status`, and history can be long;
        // unless the agent keeps its answer or question only there.
        let endpoint = self.endpoint();
        let raw = self.client.get_task(&endpoint, task_id, Some(0)).await?.raw;
        if TaskView::from_value(&raw, String::new()).is_ok_and(|v| v.wants_history) {
            return self
                .client
                .get_task(&endpoint, task_id, None)
                .await
                .map(|t| t.raw);
        }
        Ok(raw)
    }

    async fn rechoose(&self, e: &A2aError) -> Result<Rechosen, JournalError> {
        let attempt = self.journal.attempt(self.attempt)?;
        let from = self.endpoint();
        let rechosen = moved::rechoose(self.client, self.journal, &attempt, &from, e).await?;
        if let Rechosen::Moved(to) = &rechosen {
            *self
                .endpoint
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = to.clone();
        }
        Ok(rechosen)
    }
}

impl RemoteStream for crate::a2a::EventStream {
    async fn next(&mut self) -> Option<Result<Item, A2aError>> {
        let event = match crate::a2a::EventStream::next(self).await? {
            Ok(event) => event,
            Err(e) => return Some(Err(e)),
        };
        let mut raw = event.raw;
        let mut take = |key: &str| raw.get_mut(key).map_or(Value::Null, Value::take);
        Some(Ok(match event.value {
            types::StreamResponse::Task(_) => Item::Task(take("task")),
            types::StreamResponse::StatusUpdate(_) => Item::Status(take("statusUpdate")),
            types::StreamResponse::ArtifactUpdate(_) => Item::Artifact(take("artifactUpdate")),
            types::StreamResponse::Message(_) => Item::Message,
        }))
    }
}

// ---------------------------------------------------------------------------------------------
// The loop
// ---------------------------------------------------------------------------------------------

impl Drop for GroupCommit<'_> {
    /// Journals what is still queued when the follows are dropped (a signal, a deadline):
    /// everything read is committed, though no longer shown.
    fn drop(&mut self) {
        self.commit_now();
    }
}

/// Runs one follow against any [`Remote`], with its own group commit.
pub(crate) async fn follow_with<R: Remote>(
    journal: &Journal,
    remote: &R,
    target: &FollowTarget,
    opts: &FollowOptions,
    sink: &dyn Sink,
) -> Result<FollowOutcome, JournalError> {
    let commit = GroupCommit::new(journal);
    commit
        .beside(follow_in(&commit, remote, target, opts, sink))
        .await
}

/// Runs one follow whose observations go through `commit` (shared with other follows).
async fn follow_in<R: Remote>(
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
            None => rand::make_rng(),
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
    last_hint: Option<String>,
    leased_at: Instant,
    /// Observations read and queued, oldest first, not yet settled.
    pending: VecDeque<Pending>,
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
            Rechosen::Nowhere(reason) => {
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

    /// Reads the task once more after a stream reported it terminal: GetTask holds the
    /// authoritative artifacts. A failure here changes nothing (the terminal state is recorded).
    async fn final_read(&mut self) -> Result<(), JournalError> {
        match self.remote.get_task(&self.target.task_id).await {
            Ok(task) => {
                self.observe_now(&Item::Task(task), Kind::Polled).await?;
            }
            Err(e) => {
                tracing::debug!(error = %e.summary(), "the final GetTask after a terminal event failed");
            }
        }
        Ok(())
    }

    /// Journals one observation (waiting for its commit), shows it, and says whether to stop.
    async fn observe_now(
        &mut self,
        item: &Item,
        kind: Kind,
    ) -> Result<Option<FollowEnd>, JournalError> {
        match self.read(item, kind) {
            Read::Queued { .. } => self.settle().await,
            Read::Ignore(why) => {
                if let Some(end) = self.settle().await? {
                    return Ok(Some(end));
                }
                self.ignore(&why)?;
                Ok(None)
            }
        }
    }

    /// Queues one observation for the group commit; says whether to wait for it now.
    fn read(&mut self, item: &Item, kind: Kind) -> Read {
        let attempt = self.target.attempt;
        let source = if kind == Kind::Polled {
            Source::GetTask
        } else {
            Source::Stream
        };
        let mut news = true;
        let (obs, may_stop) = match item {
            Item::Task(raw) | Item::Status(raw) => {
                let view = match item {
                    Item::Task(_) => TaskView::from_value(raw, raw.to_string()),
                    _ => TaskView::from_status_update(raw),
                };
                match view {
                    Ok(view) if view.task_id == self.target.task_id => {
                        if matches!(item, Item::Task(_)) {
                            let sig = content_signature(raw);
                            news = self.last_snapshot != Some(sig);
                            self.last_snapshot = Some(sig);
                        }
                        let may_stop = view.state.is_terminal() || view.state.is_interrupted();
                        let obs = StreamObservation::Task {
                            attempt,
                            view,
                            source,
                        };
                        (Some(obs), may_stop)
                    }
                    Ok(view) => {
                        return Read::Ignore(format!(
                            "an event for another task `{}`",
                            view.task_id
                        ));
                    }
                    Err(e) => return Read::Ignore(e.to_string()),
                }
            }
            Item::Artifact(raw) => match ArtifactUpdate::from_value(raw) {
                Ok(update) if update.task_id == self.target.task_id => {
                    (Some(StreamObservation::Artifact { attempt, update }), false)
                }
                Ok(update) => {
                    return Read::Ignore(format!("an event for another task `{}`", update.task_id));
                }
                Err(e) => return Read::Ignore(e.to_string()),
            },
            Item::Message => (None, false),
        };
        let result = match obs {
            Some(obs) => PendingResult::Queued(self.commit.submit(obs)),
            None => PendingResult::Nothing,
        };
        self.pending.push_back(Pending {
            news,
            source,
            result,
        });
        // A crash point armed for this event's number ends the read-ahead here: the crash
        // then finds exactly that many of this follow's events journaled.
        let number = self.events + self.pending.len() as u64;
        let crash_here = crash::armed(Point::AfterEvent(number), &self.step);
        Read::Queued {
            settle: may_stop || crash_here || self.pending.len() >= MAX_PENDING,
        }
    }

    /// Waits for the group commit of every queued observation, then, in order: counts it,
    /// fires the `after-event:N` crash point (journaled, not yet shown), tells the observer,
    /// and says whether to stop. Observations after one that stops the follow are journaled
    /// but not shown.
    async fn settle(&mut self) -> Result<Option<FollowEnd>, JournalError> {
        if self
            .pending
            .iter()
            .any(|p| matches!(p.result, PendingResult::Queued(_)))
        {
            self.commit.request();
        }
        let mut end = None;
        let mut unchanged = false;
        while let Some(p) = self.pending.pop_front() {
            let recorded = match p.result {
                PendingResult::Nothing => Recorded {
                    applied: Applied::Unchanged,
                    event: None,
                    over_limit: false,
                },
                PendingResult::Queued(rx) => match rx.await {
                    Ok(result) => result?,
                    Err(_) => return Err(commit_dropped()),
                },
            };
            unchanged |= !recorded.applied.changed();
            if end.is_none() {
                end = self.settled(p.news, p.source, recorded);
                // Past a size limit the rest of the stream is of no use: stop reading it.
                if recorded.over_limit {
                    end = Some(self.over_limit_end()?.unwrap_or(FollowEnd::TooLarge(
                        crate::journal::ARTIFACT_TOO_LARGE.to_owned(),
                    )));
                }
            }
        }
        // An observation that changed nothing may have found the journal already moved on by
        // another process (a pass that journaled the task's end first): the journal decides,
        // else a follow of a finished task would poll until its reconnects are spent.
        if end.is_none() && unchanged {
            let now = self.journal.attempt(self.target.attempt)?.state;
            if now != self.state {
                self.state = now;
                end = end_for(now);
            }
        }
        Ok(end)
    }

    /// Counts, shows and judges one committed observation.
    fn settled(&mut self, news: bool, source: Source, recorded: Recorded) -> Option<FollowEnd> {
        let applied = recorded.applied;
        self.events += 1;
        if let Applied::Changed { to, .. } = applied {
            self.changes += 1;
            self.state = to;
        }
        // Only an event that changed something is progress: one ignored as stale, repeated
        // or already journaled does not reset the streak (else an agent that repeats itself,
        // or stamps its statuses in the future, would keep a follow reconnecting for ever),
        // nor does a snapshot that repeats the last one but for its timestamps (a stream that
        // sends its snapshot and closes, again and again, is bounded like any other end).
        if applied.changed() && news {
            self.streak = 0;
        }
        crash::at(Point::AfterEvent(self.events), &self.step);
        let progress = Progress::Observed {
            source,
            applied,
            state: self.state,
            events: self.events,
            event: recorded.event,
        };
        self.tell(&progress);
        end_for(self.state)
    }

    /// Skips an event of a subscription that cannot apply to this task: the first of a run
    /// (`since`: when the run began) is journaled and logged; a flood of them writes no more,
    /// and once the run is longer than the idle timeout the stream counts as silent
    /// (`Some`: resubscribe).
    fn stray(
        &mut self,
        why: &str,
        since: &mut Option<Instant>,
    ) -> Result<Option<Round>, JournalError> {
        match *since {
            None => {
                *since = Some(Instant::now());
                self.ignore(why)?;
                Ok(None)
            }
            Some(began) if began.elapsed() >= self.opts.idle => {
                let cause = format!(
                    "the stream sent only events that cannot apply to this task for {}",
                    crate::a2a::error::fmt_duration(self.opts.idle)
                );
                self.last_error = Some(cause.clone());
                Ok(Some(Round::Again {
                    cause,
                    poll: false,
                    retry_after: None,
                }))
            }
            Some(_) => Ok(None),
        }
    }

    /// Skips an event that cannot apply to this task (logged and journaled as a read failure).
    fn ignore(&mut self, why: &str) -> Result<(), JournalError> {
        let summary = crate::a2a::error::one_line(&format!("ignored a stream event: {why}"));
        tracing::warn!("{summary}");
        self.journal
            .record_failure(self.target.attempt, FailureKind::Read, &summary)?;
        self.last_error = Some(summary);
        Ok(())
    }
}

/// Returns how a follow ends at this journaled state, if it does.
fn end_for(state: AttemptState) -> Option<FollowEnd> {
    match state {
        s if s.is_terminal() => Some(FollowEnd::Terminal(s)),
        s @ (AttemptState::InputRequired | AttemptState::AuthRequired) => {
            Some(FollowEnd::Interrupted(s))
        }
        AttemptState::Lost => Some(FollowEnd::Lost),
        _ => None,
    }
}

/// The error of a group commit that went away without answering (a bug).
fn commit_dropped() -> JournalError {
    JournalError::Storage {
        action: "journal the stream events",
        hint: None,
        source: Box::new(std::io::Error::other(
            "the group commit ended before journaling a queued event",
        )),
    }
}

/// A scripted [`Remote`] for tests: each subscribe takes the next scripted answer.
#[cfg(test)]
pub(crate) mod fake;

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

#[cfg(test)]
mod tests;
