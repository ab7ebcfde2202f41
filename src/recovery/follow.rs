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
//! one follow, or about `MAX_PENDING_BYTES` of them: what a follow reads ahead is bounded in
//! memory too), not per event; a quiet stream still pays one per event, as it must to show it
//! promptly. `examples/follow_bench.rs` measures events per second beside the bare wire.
//!
//! A signal drops the command at an await point: the group commit is only ever non-empty
//! within one poll, or while a follow yields to let its connection deliver the next event, and
//! dropping it commits what it holds, so everything read is journaled (if not shown).
//!
//! This file holds the options, targets and outcomes and the entry points ([`follow_attempt`],
//! [`follow_many`]); beside it: `follow/follower.rs` (one follow's loop: subscribe, poll,
//! back off, reconnect), `follow/follower/observe.rs` (what a follow reads, queued and settled),
//! `follow/group_commit.rs` (the group commit), `follow/remote.rs` (the `Remote` seam and its
//! adapter over the wire; `follow/fake.rs` scripts it in tests).

mod follower;
mod group_commit;
mod remote;

use std::time::Duration;

use futures_util::StreamExt as _;
use tokio::time::Instant;

use crate::a2a::{A2aClient, A2aError, Credential, Endpoint, origin_of};
use crate::journal::{
    Applied, Attempt, AttemptId, AttemptState, Journal, JournalError, Lease, Source, StepName,
};
use crate::recovery::commit::WriterMode;
use crate::recovery::event::Sink;
use crate::recovery::send::JournaledWire;

use self::follower::follow_in;
pub(crate) use self::follower::follow_with;
pub(crate) use self::group_commit::GroupCommit;

use self::remote::Wire;

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
    pub last_hint: Option<crate::a2a::Hint>,
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
/// ([`crate::recovery::Event::Followed`]).
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
    // Many streams: the commits on a thread of their own, so that the streams are read on
    // while one is made.
    let commit = GroupCommit::new(journal, WriterMode::Thread);
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

/// A scripted `Remote` for tests: each subscribe takes the next scripted answer.
#[cfg(test)]
pub(crate) mod fake;

#[cfg(test)]
mod tests;
