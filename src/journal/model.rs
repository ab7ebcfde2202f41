//! The journal's model: states, names, observations, and the one pure transition function.
//!
//! State names are DESIGN.md §1's, exactly: they are stored as TEXT (with `CHECK` constraints
//! in the schema) and printed in JSON. [`AttemptState`] is a plain enum rather than the
//! data-carrying enum STYLE.md rule 10 sketches: the data (task id, refusal reason, question)
//! lives in [`Attempt`]'s columns, and a plain enum keeps [`transition`] exhaustively testable
//! over every (state, observation) pair.
//!
//! Invariants enforced by [`transition`]: a remote terminal state never goes back; a status
//! strictly older than the one held is ignored; only an operator's `resend` returns an attempt
//! to `INTENT`; an observation that changes nothing yields `None`.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::a2a::{RemoteState, TaskView, message_text, parse_timestamp, parts_text};

/// The state of one attempt (DESIGN.md §1, "Attempt states").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AttemptState {
    /// Ids committed, no task known.
    Intent,
    /// Task id known, state not yet read.
    Sent,
    /// The agent reports SUBMITTED.
    Submitted,
    /// The agent reports WORKING.
    Working,
    /// The agent asks a question (the status message is journaled).
    InputRequired,
    /// The agent needs authentication.
    AuthRequired,
    /// The agent reports COMPLETED (a claim, not proof of an effect).
    Completed,
    /// The agent reports FAILED.
    Failed,
    /// The agent reports CANCELED.
    Canceled,
    /// The agent reports REJECTED.
    Rejected,
    /// A direct Message answered; no task exists.
    Replied,
    /// The agent no longer knows a task we had recorded.
    Lost,
    /// A crash left the send's outcome unknown and the agent cannot be searched conclusively.
    Uncertain,
    /// The agent definitively refused the send; nothing was created.
    Refused,
    /// The agent reports a state this version does not know; treated as not finished.
    Unknown,
}

impl AttemptState {
    /// Every state, in DESIGN.md's order.
    pub const ALL: [Self; 15] = [
        Self::Intent,
        Self::Sent,
        Self::Submitted,
        Self::Working,
        Self::InputRequired,
        Self::AuthRequired,
        Self::Completed,
        Self::Failed,
        Self::Canceled,
        Self::Rejected,
        Self::Replied,
        Self::Lost,
        Self::Uncertain,
        Self::Refused,
        Self::Unknown,
    ];

    /// Returns the DESIGN.md name (`INPUT_REQUIRED`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Intent => "INTENT",
            Self::Sent => "SENT",
            Self::Submitted => "SUBMITTED",
            Self::Working => "WORKING",
            Self::InputRequired => "INPUT_REQUIRED",
            Self::AuthRequired => "AUTH_REQUIRED",
            Self::Completed => "COMPLETED",
            Self::Failed => "FAILED",
            Self::Canceled => "CANCELED",
            Self::Rejected => "REJECTED",
            Self::Replied => "REPLIED",
            Self::Lost => "LOST",
            Self::Uncertain => "UNCERTAIN",
            Self::Refused => "REFUSED",
            Self::Unknown => "UNKNOWN",
        }
    }

    /// Returns whether the state is final: a remote terminal state, `REPLIED` or `REFUSED`.
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed
                | Self::Failed
                | Self::Canceled
                | Self::Rejected
                | Self::Replied
                | Self::Refused
        )
    }

    /// Returns whether a pass has nothing more to read for it: terminal, or `LOST`.
    ///
    /// `UNCERTAIN` is not finished: it waits for an operator (or a conclusive look).
    pub const fn is_finished(self) -> bool {
        self.is_terminal() || matches!(self, Self::Lost)
    }

    /// Returns whether a task id is known in this state.
    pub const fn has_task(self) -> bool {
        !matches!(
            self,
            Self::Intent | Self::Uncertain | Self::Replied | Self::Refused
        )
    }

    /// Returns the attempt state a remote state puts an attempt in.
    pub const fn from_remote(state: RemoteState) -> Self {
        match state {
            RemoteState::Submitted => Self::Submitted,
            RemoteState::Working => Self::Working,
            RemoteState::InputRequired => Self::InputRequired,
            RemoteState::AuthRequired => Self::AuthRequired,
            RemoteState::Completed => Self::Completed,
            RemoteState::Failed => Self::Failed,
            RemoteState::Canceled => Self::Canceled,
            RemoteState::Rejected => Self::Rejected,
            RemoteState::Unknown => Self::Unknown,
        }
    }

    /// Parses a state as an operator types it: case-insensitive, `-` and `_` alike, with or
    /// without the `TASK_STATE_` prefix.
    pub fn parse_loose(s: &str) -> Option<Self> {
        let norm = s.trim().to_ascii_uppercase().replace('-', "_");
        let norm = norm.strip_prefix("TASK_STATE_").unwrap_or(&norm);
        Self::ALL.into_iter().find(|st| st.as_str() == norm)
    }
}

impl fmt::Display for AttemptState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of the states of its kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} `{value}`")]
pub struct ParseStateError {
    /// Which kind of state ("attempt state", "effect state", …).
    pub kind: &'static str,
    /// The text given.
    pub value: String,
}

impl FromStr for AttemptState {
    type Err = ParseStateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| ParseStateError {
                kind: "attempt state",
                value: s.to_owned(),
            })
    }
}

/// The state of a step's declared effect (DESIGN.md §1, "Effect states"); `None` = no effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EffectState {
    /// The step completed; not yet verified.
    Claimed,
    /// The independent read says it exists.
    Verified,
    /// The read says it does not exist.
    Absent,
    /// The read could not tell.
    Unknown,
    /// Compensation sent, not yet verified.
    Compensating,
    /// Verified gone.
    Compensated,
    /// The compensation failed.
    CompensationFailed,
}

impl EffectState {
    /// Every effect state.
    pub const ALL: [Self; 7] = [
        Self::Claimed,
        Self::Verified,
        Self::Absent,
        Self::Unknown,
        Self::Compensating,
        Self::Compensated,
        Self::CompensationFailed,
    ];

    /// Returns the DESIGN.md name (`compensation-failed`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Claimed => "claimed",
            Self::Verified => "verified",
            Self::Absent => "absent",
            Self::Unknown => "unknown",
            Self::Compensating => "compensating",
            Self::Compensated => "compensated",
            Self::CompensationFailed => "compensation-failed",
        }
    }
}

impl fmt::Display for EffectState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EffectState {
    type Err = ParseStateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| ParseStateError {
                kind: "effect state",
                value: s.to_owned(),
            })
    }
}

/// The state of a workflow (DESIGN.md §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WorkflowState {
    /// Steps are sent and re-delegated.
    Active,
    /// `compensate` started: no sends, no re-delegation.
    Compensating,
    /// Every effect is compensated or absent.
    Compensated,
}

impl WorkflowState {
    /// Every workflow state.
    pub const ALL: [Self; 3] = [Self::Active, Self::Compensating, Self::Compensated];

    /// Returns the DESIGN.md name (`ACTIVE`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Active => "ACTIVE",
            Self::Compensating => "COMPENSATING",
            Self::Compensated => "COMPENSATED",
        }
    }
}

impl fmt::Display for WorkflowState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for WorkflowState {
    type Err = ParseStateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| ParseStateError {
                kind: "workflow state",
                value: s.to_owned(),
            })
    }
}

/// An operator's decision on a step (`resolve --as`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Resolution {
    /// Accept the step as finished.
    Done,
    /// Give it up; it counts as failed for compensation.
    Abandoned,
    /// A new attempt with fresh ids, budget permitting.
    Retry,
    /// Send an `UNCERTAIN` attempt again with the same messageId.
    Resend,
}

impl Resolution {
    /// Every resolution.
    pub const ALL: [Self; 4] = [Self::Done, Self::Abandoned, Self::Retry, Self::Resend];

    /// Returns the DESIGN.md name (`done`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Done => "done",
            Self::Abandoned => "abandoned",
            Self::Retry => "retry",
            Self::Resend => "resend",
        }
    }
}

impl FromStr for Resolution {
    type Err = ParseStateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| ParseStateError {
                kind: "resolution",
                value: s.to_owned(),
            })
    }
}

/// The state of a reply message (`reply`): id committed first, then sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplyState {
    /// Id committed, not known to be delivered.
    Intent,
    /// The agent accepted it.
    Delivered,
    /// The outcome is unknown and could not be settled by looking.
    Uncertain,
    /// The agent definitively refused it.
    Refused,
}

impl ReplyState {
    /// Every reply state.
    pub const ALL: [Self; 4] = [
        Self::Intent,
        Self::Delivered,
        Self::Uncertain,
        Self::Refused,
    ];

    /// Returns the stored name (`DELIVERED`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Intent => "INTENT",
            Self::Delivered => "DELIVERED",
            Self::Uncertain => "UNCERTAIN",
            Self::Refused => "REFUSED",
        }
    }
}

impl FromStr for ReplyState {
    type Err = ParseStateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| ParseStateError {
                kind: "reply state",
                value: s.to_owned(),
            })
    }
}

/// The row id of a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReplyId(pub i64);

/// A reply to journal before it is sent (`reply`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewReply {
    /// A fresh messageId (UUIDv4), reused on every resend.
    pub message_id: String,
    /// The answer's text.
    pub text: String,
    /// The status timestamp of the question it answers, as the agent sent it.
    pub answers: Option<String>,
}

/// A further message on an attempt's task, as journaled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// Its row id.
    pub id: ReplyId,
    /// The attempt whose task it goes to.
    pub attempt_id: AttemptId,
    /// Its messageId.
    pub message_id: String,
    /// Its text.
    pub text: String,
    /// The status timestamp of the question it answers.
    pub answers: Option<String>,
    /// Its state.
    pub state: ReplyState,
    /// The last failure, one line.
    pub error: Option<String>,
    /// When it was committed.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

// ---------------------------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------------------------

/// The workflow of steps delegated by a bare name.
pub const DEFAULT_WORKFLOW: &str = "default";

/// The longest workflow or step name accepted.
pub const MAX_NAME_LEN: usize = 128;

/// A step's full name, `WORKFLOW/STEP`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StepName {
    /// The workflow part.
    pub workflow: String,
    /// The step part.
    pub step: String,
}

/// A workflow or step name that breaks the naming rules.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad name `{name}`: {reason}")]
pub struct NameError {
    /// The name given (as typed).
    pub name: String,
    /// Which rule it breaks.
    pub reason: &'static str,
}

/// Checks one part of a name: 1–128 characters, no `/`, `~`, whitespace or control characters,
/// and no leading `-` (it would read as a flag).
pub fn check_name_part(part: &str) -> Result<(), &'static str> {
    if part.is_empty() {
        return Err("a name cannot be empty");
    }
    if part.chars().count() > MAX_NAME_LEN {
        return Err("a name has at most 128 characters");
    }
    if part.contains('/') {
        return Err("`/` separates WORKFLOW/STEP and cannot appear inside a name");
    }
    if part.contains('~') {
        return Err("`~` is reserved (compensation steps) and cannot appear in a name");
    }
    if part.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("a name cannot contain spaces or control characters");
    }
    if part.starts_with('-') {
        return Err("a name cannot start with `-`");
    }
    Ok(())
}

impl StepName {
    /// Parses `WORKFLOW/STEP`, or a bare `STEP` meaning `default/STEP`.
    pub fn parse(s: &str) -> Result<Self, NameError> {
        let err = |reason| NameError {
            name: s.to_owned(),
            reason,
        };
        let (workflow, step) = match s.split_once('/') {
            Some((w, st)) => (w, st),
            None => (DEFAULT_WORKFLOW, s),
        };
        check_name_part(workflow).map_err(err)?;
        check_name_part(step).map_err(err)?;
        Ok(Self {
            workflow: workflow.to_owned(),
            step: step.to_owned(),
        })
    }

    /// Builds a name from parts already stored in the journal (not re-validated).
    pub fn from_parts(workflow: impl Into<String>, step: impl Into<String>) -> Self {
        Self {
            workflow: workflow.into(),
            step: step.into(),
        }
    }
}

impl fmt::Display for StepName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.workflow, self.step)
    }
}

/// What `inspect` was asked about: a workflow (no `/`) or a step (with `/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Everything in one workflow.
    Workflow(String),
    /// One step.
    Step(StepName),
}

impl Target {
    /// Parses a WORKFLOW or a WORKFLOW/STEP.
    pub fn parse(s: &str) -> Result<Self, NameError> {
        if s.contains('/') {
            StepName::parse(s).map(Self::Step)
        } else {
            check_name_part(s).map_err(|reason| NameError {
                name: s.to_owned(),
                reason,
            })?;
            Ok(Self::Workflow(s.to_owned()))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Observations and the transition function
// ---------------------------------------------------------------------------------------------

/// How an incoming status timestamp compares with the one held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Freshness {
    /// Strictly newer than the held one.
    Newer,
    /// Equal to the held one.
    Same,
    /// Strictly older than the held one: ignored.
    Older,
    /// One side has no timestamp: cannot tell, so it is applied (stream events come in order).
    Unknown,
}

impl Freshness {
    /// Compares an incoming timestamp with the held one.
    pub fn of(held: Option<DateTime<Utc>>, incoming: Option<DateTime<Utc>>) -> Self {
        match (held, incoming) {
            (Some(h), Some(i)) if i > h => Self::Newer,
            (Some(h), Some(i)) if i < h => Self::Older,
            (Some(_), Some(_)) => Self::Same,
            _ => Self::Unknown,
        }
    }
}

/// Something learned about an attempt, fed to [`transition`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Observation {
    /// The remote task reports `state` (a send's answer, GetTask, ListTasks, a stream snapshot
    /// or status update), with its timestamp compared to the held one.
    Remote {
        /// The reported state.
        state: RemoteState,
        /// The timestamp against the held one.
        freshness: Freshness,
    },
    /// A task id became known without its state.
    TaskCreated,
    /// The send was answered by a direct Message (no task).
    DirectReply,
    /// The agent definitively refused the send.
    Refused,
    /// A look could not prove whether the send created anything.
    Unprovable,
    /// The agent answered TaskNotFound for the journaled task.
    NotFound,
    /// The operator decided to resend an `UNCERTAIN` attempt (`resolve --as resend`).
    Resend,
}

impl Observation {
    /// Every observation, with every freshness for remote ones (for exhaustive tests).
    pub fn all() -> Vec<Self> {
        let mut v = Vec::new();
        for state in RemoteState::ALL {
            for freshness in [
                Freshness::Newer,
                Freshness::Same,
                Freshness::Older,
                Freshness::Unknown,
            ] {
                v.push(Self::Remote { state, freshness });
            }
        }
        v.extend([
            Self::TaskCreated,
            Self::DirectReply,
            Self::Refused,
            Self::Unprovable,
            Self::NotFound,
            Self::Resend,
        ]);
        v
    }
}

/// An observation that cannot apply to an attempt in its state: a bug in the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{observation:?} does not apply to an attempt in state {from}")]
pub struct TransitionError {
    /// The attempt's state.
    pub from: AttemptState,
    /// The observation.
    pub observation: Observation,
}

/// Returns the attempt's next state for an observation: `Ok(None)` when nothing changes.
///
/// Pure; the journal calls it for every change. Rules (DESIGN.md §2, §4):
/// - `INTENT` goes to `SENT`, a remote state, `REPLIED`, `REFUSED` or `UNCERTAIN`.
/// - A status strictly older than the one held is ignored; a remote terminal state never
///   changes again (a later report, even terminal, is ignored: the first terminal wins).
/// - `TaskNotFound` on a recorded, unfinished task makes it `LOST`; a later status revives it.
/// - `UNCERTAIN` can still be settled by a conclusive observation, and goes back to `INTENT`
///   only on the operator's `resend`.
/// - Send outcomes (`DirectReply`, `Refused`, `Unprovable`) on an attempt whose send is
///   already settled are errors, except the same outcome again (idempotent).
#[expect(
    clippy::match_same_arms,
    reason = "one arm per rule reads as the table it is"
)]
pub fn transition(
    from: AttemptState,
    obs: &Observation,
) -> Result<Option<AttemptState>, TransitionError> {
    use AttemptState as S;
    use Observation as O;
    let err = || TransitionError {
        from,
        observation: *obs,
    };
    let to = |s: AttemptState| if s == from { None } else { Some(s) };
    Ok(match (from, *obs) {
        // Nothing sent or nothing known yet: the first conclusive observation decides.
        (S::Intent | S::Uncertain, O::Remote { state, .. }) => {
            Some(AttemptState::from_remote(state))
        }
        (S::Intent | S::Uncertain, O::TaskCreated) => Some(S::Sent),
        (S::Intent | S::Uncertain, O::DirectReply) => Some(S::Replied),
        (S::Intent | S::Uncertain, O::Refused) => Some(S::Refused),
        (S::Intent | S::Uncertain, O::Unprovable) => to(S::Uncertain),
        (S::Uncertain, O::Resend) => Some(S::Intent),
        (S::Intent, O::Resend) => None,
        (S::Intent | S::Uncertain, O::NotFound) => return Err(err()),

        // A task is known and not finished: newer (or undated) statuses move it.
        (
            S::Sent
            | S::Submitted
            | S::Working
            | S::InputRequired
            | S::AuthRequired
            | S::Unknown
            | S::Lost,
            O::Remote { state, freshness },
        ) => {
            if freshness == Freshness::Older {
                None
            } else {
                to(AttemptState::from_remote(state))
            }
        }
        (
            S::Sent | S::Submitted | S::Working | S::InputRequired | S::AuthRequired | S::Unknown,
            O::NotFound,
        ) => Some(S::Lost),
        (S::Lost, O::NotFound) => None,
        (
            S::Sent
            | S::Submitted
            | S::Working
            | S::InputRequired
            | S::AuthRequired
            | S::Unknown
            | S::Lost,
            O::TaskCreated,
        ) => None,

        // Remote terminal: nothing the agent says later changes it.
        (
            S::Completed | S::Failed | S::Canceled | S::Rejected,
            O::Remote { .. } | O::TaskCreated | O::NotFound,
        ) => None,

        // No task exists for these; only the same outcome again is accepted.
        (S::Replied, O::DirectReply) | (S::Refused, O::Refused) => None,

        // Everything else is a caller bug: a send outcome on a settled send, a resend of a
        // settled attempt, a task observation where no task can exist.
        (
            S::Sent
            | S::Submitted
            | S::Working
            | S::InputRequired
            | S::AuthRequired
            | S::Unknown
            | S::Lost
            | S::Completed
            | S::Failed
            | S::Canceled
            | S::Rejected,
            O::DirectReply | O::Refused | O::Unprovable | O::Resend,
        )
        | (
            S::Replied | S::Refused,
            O::Remote { .. } | O::TaskCreated | O::NotFound | O::Unprovable | O::Resend,
        )
        | (S::Replied, O::Refused)
        | (S::Refused, O::DirectReply) => return Err(err()),
    })
}

// ---------------------------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------------------------

/// The row id of an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AttemptId(pub i64);

/// The row id of a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StepId(pub i64);

/// The row id of an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AgentId(pub i64);

impl fmt::Display for AttemptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What a step is delegated to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    /// One agent, by its Agent Card URL (`--agent`); never re-delegated elsewhere.
    Agent(String),
    /// A skill of the registry (`--skill`); re-delegation picks another agent with it.
    Skill(String),
    /// A command run with `sh -c` (compensation commands).
    Command(String),
}

/// A step's definition, as given by the operator (flags or plan).
#[derive(Debug, Clone, PartialEq)]
pub struct StepSpec {
    /// The step's full name.
    pub name: StepName,
    /// The message text.
    pub text: String,
    /// What it is delegated to.
    pub binding: Binding,
    /// The NAME of the environment variable holding the credential (never the value).
    pub token_env: Option<String>,
    /// The message's `metadata`.
    pub metadata: Option<Map<String, Value>>,
    /// The attempt budget across all agents.
    pub max_attempts: u32,
    /// Whether credentials may go to an interface on another origin than the card's.
    pub allow_cross_origin: bool,
    /// The declared effect (`None` = none).
    pub effect: Option<Value>,
    /// The compensation recipe.
    pub compensate: Option<Value>,
    /// The verification recipe.
    pub verify: Option<Value>,
    /// The absolute directory commands run in.
    pub cwd: Option<String>,
}

impl StepSpec {
    /// A step delegated to one agent with defaults for everything else.
    pub fn to_agent(name: StepName, text: impl Into<String>, card_url: impl Into<String>) -> Self {
        Self {
            name,
            text: text.into(),
            binding: Binding::Agent(card_url.into()),
            token_env: None,
            metadata: None,
            max_attempts: 3,
            allow_cross_origin: false,
            effect: None,
            compensate: None,
            verify: None,
            cwd: None,
        }
    }
}

/// A step as journaled.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Its row id.
    pub id: StepId,
    /// Its definition.
    pub spec: StepSpec,
    /// Order of first intent across the journal.
    pub seq: i64,
    /// The step this one compensates (for `STEP~compensate`).
    pub compensates: Option<StepId>,
    /// The operator's decision, if any.
    pub resolution: Option<Resolution>,
    /// The operator's reason.
    pub resolution_reason: Option<String>,
    /// Its workflow's state.
    pub workflow_state: WorkflowState,
    /// When it was first journaled.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// A lease on an attempt held by one process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The owner's process id.
    pub pid: u32,
    /// The owner's host name.
    pub host: String,
    /// When the lease lapses.
    pub expires_at: DateTime<Utc>,
}

/// One attempt as journaled.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    /// Its row id.
    pub id: AttemptId,
    /// Its step's row id.
    pub step_id: StepId,
    /// 1, 2, … within the step.
    pub number: u32,
    /// The agent's card URL (`None` for command attempts).
    pub agent_url: Option<String>,
    /// The endpoint it is (or was) sent to; `None` means it was never sent.
    pub interface_url: Option<String>,
    /// The interface's tenant.
    pub tenant: Option<String>,
    /// The NAME of the credential's environment variable.
    pub token_env: Option<String>,
    /// Our messageId (UUIDv4), reused on every resend.
    pub message_id: String,
    /// The contextId: ours while `context_id_ours`, else the agent's.
    pub context_id: Option<String>,
    /// Whether `context_id` is the one we chose.
    pub context_id_ours: bool,
    /// The remote task id, once known.
    pub task_id: Option<String>,
    /// The local state.
    pub state: AttemptState,
    /// The remote state name as last reported.
    pub remote_state: Option<String>,
    /// The last applied status timestamp, as the agent sent it.
    pub status_timestamp: Option<String>,
    /// The full status message of INPUT_REQUIRED / AUTH_REQUIRED, while pending.
    pub pending_question: Option<Value>,
    /// The raw JSON of the last task snapshot that changed anything.
    pub last_task_json: Option<String>,
    /// The raw JSON of a direct reply, or a command's result.
    pub outcome_json: Option<String>,
    /// The last failure, one line.
    pub error: Option<String>,
    /// The effect state.
    pub effect: Option<EffectState>,
    /// When `compensate` asked for a cancel.
    pub cancel_requested_at: Option<DateTime<Utc>>,
    /// The attempt this one follows.
    pub previous_attempt: Option<AttemptId>,
    /// The current lease, if any (possibly expired).
    pub lease: Option<Lease>,
    /// When the intent was committed.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

impl Attempt {
    /// Returns the held status timestamp, parsed.
    pub fn status_time(&self) -> Option<DateTime<Utc>> {
        self.status_timestamp.as_deref().and_then(parse_timestamp)
    }

    /// Returns the text of the pending question (its text parts joined), if any.
    pub fn question_text(&self) -> Option<String> {
        self.pending_question.as_ref().map(message_text)
    }

    /// Returns whether applying `view` to this attempt would certainly change nothing (the same
    /// task, context, state, state spelling and status timestamp, no artifacts, no pending
    /// question held): a pass need not journal it. `false` when unsure; the journal then decides.
    pub fn unchanged_by(&self, view: &TaskView) -> bool {
        self.task_id.as_deref() == Some(view.task_id.as_str())
            && self.state.has_task()
            && !self.state.is_terminal()
            && !view.state.is_interrupted()
            && self.state == AttemptState::from_remote(view.state)
            && self.remote_state.as_deref() == Some(view.remote_state.as_str())
            && self.status_timestamp.as_deref() == view.timestamp.as_ref().map(|t| t.text.as_str())
            && view
                .context_id
                .as_ref()
                .is_none_or(|c| self.context_id.as_ref() == Some(c))
            && view.artifacts.as_ref().is_none_or(Vec::is_empty)
            && self.pending_question.is_none()
    }
}

/// A step with all its attempts (oldest first).
#[derive(Debug, Clone, PartialEq)]
pub struct StepRecord {
    /// The step.
    pub step: Step,
    /// Its attempts, by number.
    pub attempts: Vec<Attempt>,
}

impl StepRecord {
    /// Returns the latest attempt.
    pub fn latest(&self) -> Option<&Attempt> {
        self.attempts.last()
    }
}

/// An agent as journaled.
#[derive(Debug, Clone, PartialEq)]
pub struct Agent {
    /// Its row id.
    pub id: AgentId,
    /// Its Agent Card URL (the key).
    pub card_url: String,
    /// The chosen JSON-RPC interface.
    pub interface_url: Option<String>,
    /// The interface's protocol version.
    pub protocol_version: Option<String>,
    /// The interface's tenant.
    pub tenant: Option<String>,
    /// The NAME of the credential's environment variable (registry).
    pub token_env: Option<String>,
    /// The card as fetched (raw JSON).
    pub card_json: Option<String>,
    /// The card's skill ids.
    pub skills: Vec<String>,
    /// Whether it accepts a client-chosen contextId (`None`: not known yet).
    pub accepts_context_id: Option<bool>,
    /// Its registration order (`agents add`), if registered.
    pub registered: Option<i64>,
    /// When the card was fetched.
    pub fetched_at: Option<DateTime<Utc>>,
}

/// A fetched Agent Card, to store in `agents`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentCard {
    /// The card URL (the key).
    pub card_url: String,
    /// The chosen JSON-RPC interface URL.
    pub interface_url: String,
    /// Its protocol version.
    pub protocol_version: Option<String>,
    /// Its tenant.
    pub tenant: Option<String>,
    /// The card's raw JSON.
    pub card_json: String,
    /// The card's skill ids.
    pub skills: Vec<String>,
}

/// One journal event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Its id (monotonic).
    pub id: i64,
    /// When it was appended.
    pub at: DateTime<Utc>,
    /// The workflow.
    pub workflow: Option<String>,
    /// The step (the part after `/`).
    pub step: Option<String>,
    /// The attempt number.
    pub attempt: Option<u32>,
    /// What happened (`intent`, `state`, `send-failed`, …).
    pub kind: String,
    /// The state before.
    pub from: Option<String>,
    /// The state after.
    pub to: Option<String>,
    /// Details (JSON).
    pub detail: Option<Value>,
}

/// An attempt with what `inspect` and the passes show beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptRow {
    /// The attempt.
    pub attempt: Attempt,
    /// Its step's name.
    pub step: StepName,
    /// Its step's binding.
    pub binding: Binding,
    /// Its step's budget.
    pub max_attempts: u32,
    /// Its step's resolution.
    pub resolution: Option<Resolution>,
    /// Its workflow's state.
    pub workflow_state: WorkflowState,
    /// The previous attempt's task id.
    pub previous_task_id: Option<String>,
    /// Whether this is the step's latest attempt.
    pub is_latest: bool,
    /// How many artifacts are journaled for it.
    pub artifact_count: u32,
    /// Why a pass decided the step failed for good (a `failed-for-good` event), if it did.
    pub failed_for_good: Option<String>,
    /// Whether its step lets the credential go to an interface on another origin.
    pub allow_cross_origin: bool,
}

impl AttemptRow {
    /// Returns why a human must act on this row, if one must (`inspect --pending`); the
    /// command that answers it is written by `recovery::remedy`.
    ///
    /// Must agree with the SQL filter of `inspect --pending` (`queries::PENDING_SQL`).
    pub fn remedy_kind(&self) -> Option<RemedyKind> {
        if !self.is_latest
            || self.resolution.is_some()
            || self.workflow_state == WorkflowState::Compensated
        {
            return None;
        }
        let a = &self.attempt;
        let failed_for_good = matches!(a.state, AttemptState::Failed | AttemptState::Rejected)
            && (matches!(self.binding, Binding::Agent(_)) || a.number >= self.max_attempts)
            || (a.state == AttemptState::Canceled && a.cancel_requested_at.is_none())
            || self.failed_for_good.is_some();
        Some(match a.state {
            AttemptState::InputRequired => RemedyKind::Answer,
            AttemptState::AuthRequired => RemedyKind::Authenticate,
            AttemptState::Uncertain => RemedyKind::Uncertain,
            AttemptState::Refused => RemedyKind::Refused,
            AttemptState::Lost => RemedyKind::Lost,
            _ if failed_for_good => RemedyKind::FailedForGood,
            _ => match a.effect {
                Some(
                    EffectState::Absent | EffectState::Unknown | EffectState::CompensationFailed,
                ) => RemedyKind::Effect,
                _ => return None,
            },
        })
    }
}

/// Why a row needs a human.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemedyKind {
    /// INPUT_REQUIRED: answer the question.
    Answer,
    /// AUTH_REQUIRED: authenticate, then resume.
    Authenticate,
    /// UNCERTAIN: decide whether to resend.
    Uncertain,
    /// REFUSED: retry or abandon.
    Refused,
    /// LOST: decide from the verified effects.
    Lost,
    /// Failed with no re-delegation left.
    FailedForGood,
    /// An effect unverified or a compensation failed.
    Effect,
}

/// What `inspect` lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InspectFilter {
    /// Only this workflow or step.
    pub target: Option<Target>,
    /// Only attempts in these states (empty: all).
    pub states: Vec<AttemptState>,
    /// Only the latest attempts that need a human.
    pub pending: bool,
    /// At most this many rows.
    pub limit: Option<u64>,
}

/// A page of `inspect` rows and the total count before the limit.
#[derive(Debug, Clone, PartialEq)]
pub struct InspectPage {
    /// The rows, by workflow, step order, attempt number.
    pub rows: Vec<AttemptRow>,
    /// How many rows matched in all.
    pub total: u64,
}

/// Where an observation came from (recorded in events).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The answer to SendMessage.
    Send,
    /// GetTask.
    GetTask,
    /// ListTasks (a look).
    ListTasks,
    /// A stream event.
    Stream,
    /// CancelTask's answer.
    Cancel,
}

impl Source {
    /// Returns its name in events.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Send => "send",
            Self::GetTask => "get-task",
            Self::ListTasks => "list-tasks",
            Self::Stream => "stream",
            Self::Cancel => "cancel",
        }
    }
}

/// A journaled artifact.
#[derive(Debug, Clone, PartialEq)]
pub struct Artifact {
    /// Its id.
    pub artifact_id: String,
    /// Its name.
    pub name: Option<String>,
    /// Its description.
    pub description: Option<String>,
    /// Its parts (JSON array).
    pub parts: Value,
    /// Its metadata.
    pub metadata: Option<Value>,
    /// Whether the last chunk arrived.
    pub last_chunk: bool,
}

impl Artifact {
    /// Returns its text parts joined (the value of `{artifact:NAME}` placeholders).
    pub fn text(&self) -> String {
        parts_text(&self.parts)
    }
}

/// What a change did: the state before and after (equal when only data changed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// Nothing changed; nothing was written.
    Unchanged,
    /// The attempt changed (data, state, or both).
    Changed {
        /// The state before.
        from: AttemptState,
        /// The state after.
        to: AttemptState,
    },
}

impl Applied {
    /// Returns whether anything was written.
    pub fn changed(self) -> bool {
        matches!(self, Self::Changed { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AttemptState as S;

    /// The expected table, written independently of `transition`'s match.
    fn expected(from: S, obs: Observation) -> Result<Option<S>, ()> {
        let remote_live = matches!(
            from,
            S::Sent | S::Submitted | S::Working | S::InputRequired | S::AuthRequired | S::Unknown
        );
        match obs {
            Observation::Remote { state, freshness } => {
                let target = AttemptState::from_remote(state);
                if matches!(from, S::Intent | S::Uncertain) {
                    Ok(Some(target))
                } else if remote_live || from == S::Lost {
                    if freshness == Freshness::Older || target == from {
                        Ok(None)
                    } else {
                        Ok(Some(target))
                    }
                } else if from.is_terminal() && from.has_task() {
                    Ok(None)
                } else {
                    Err(())
                }
            }
            Observation::TaskCreated => match from {
                S::Intent | S::Uncertain => Ok(Some(S::Sent)),
                S::Replied | S::Refused => Err(()),
                _ => Ok(None),
            },
            Observation::DirectReply => match from {
                S::Intent | S::Uncertain => Ok(Some(S::Replied)),
                S::Replied => Ok(None),
                _ => Err(()),
            },
            Observation::Refused => match from {
                S::Intent | S::Uncertain => Ok(Some(S::Refused)),
                S::Refused => Ok(None),
                _ => Err(()),
            },
            Observation::Unprovable => match from {
                S::Intent => Ok(Some(S::Uncertain)),
                S::Uncertain => Ok(None),
                _ => Err(()),
            },
            Observation::NotFound => {
                if remote_live {
                    Ok(Some(S::Lost))
                } else if from == S::Lost || (from.is_terminal() && from.has_task()) {
                    Ok(None)
                } else {
                    Err(())
                }
            }
            Observation::Resend => match from {
                S::Uncertain => Ok(Some(S::Intent)),
                S::Intent => Ok(None),
                _ => Err(()),
            },
        }
    }

    #[test]
    fn transition_matches_the_table_for_every_pair() {
        let mut pairs = 0;
        for from in S::ALL {
            for obs in Observation::all() {
                pairs += 1;
                let got = transition(from, &obs).map_err(|_| ());
                assert_eq!(got, expected(from, obs), "{from} + {obs:?}");
            }
        }
        assert_eq!(pairs, 15 * (9 * 4 + 6));
    }

    #[test]
    fn invariants_hold_for_every_pair() {
        for from in S::ALL {
            for obs in Observation::all() {
                let Ok(result) = transition(from, &obs) else {
                    continue;
                };
                if let Some(to) = result {
                    assert_ne!(to, from, "a change must change: {from} + {obs:?}");
                    // A remote terminal state never changes again.
                    assert!(
                        !(from.is_terminal()),
                        "terminal {from} moved to {to} on {obs:?}"
                    );
                    // Only the operator's resend goes back to INTENT.
                    if to == S::Intent {
                        assert_eq!((from, obs), (S::Uncertain, Observation::Resend));
                    }
                }
                // Strictly older statuses never change a task we know.
                if let Observation::Remote {
                    freshness: Freshness::Older,
                    ..
                } = obs
                    && from.has_task()
                {
                    assert_eq!(result, None, "{from} + {obs:?}");
                }
            }
        }
    }

    #[test]
    fn intent_reaches_every_first_outcome() {
        let i = S::Intent;
        assert_eq!(transition(i, &Observation::TaskCreated), Ok(Some(S::Sent)));
        assert_eq!(
            transition(i, &Observation::DirectReply),
            Ok(Some(S::Replied))
        );
        assert_eq!(transition(i, &Observation::Refused), Ok(Some(S::Refused)));
        assert_eq!(
            transition(i, &Observation::Unprovable),
            Ok(Some(S::Uncertain))
        );
        for state in RemoteState::ALL {
            let obs = Observation::Remote {
                state,
                freshness: Freshness::Unknown,
            };
            assert_eq!(
                transition(i, &obs),
                Ok(Some(AttemptState::from_remote(state)))
            );
        }
    }

    #[test]
    fn unknown_is_not_finished() {
        assert!(!S::Unknown.is_finished());
        assert!(!S::Uncertain.is_finished());
        assert!(S::Lost.is_finished());
        let obs = Observation::Remote {
            state: RemoteState::Completed,
            freshness: Freshness::Newer,
        };
        assert_eq!(transition(S::Unknown, &obs), Ok(Some(S::Completed)));
    }

    #[test]
    fn freshness_compares_timestamps() {
        let t = |s| parse_timestamp(s);
        let a = t("2026-11-30T01:00:00.123456Z");
        let b = t("2026-11-30T01:00:00.123457Z");
        assert_eq!(Freshness::of(a, b), Freshness::Newer);
        assert_eq!(Freshness::of(b, a), Freshness::Older);
        assert_eq!(Freshness::of(a, a), Freshness::Same);
        // Different precision, same instant.
        assert_eq!(
            Freshness::of(
                t("2026-11-30T01:00:00.1Z"),
                t("2026-11-30T01:00:00.100000Z")
            ),
            Freshness::Same
        );
        assert_eq!(Freshness::of(None, a), Freshness::Unknown);
        assert_eq!(Freshness::of(a, None), Freshness::Unknown);
    }

    #[test]
    fn state_names_round_trip() {
        for s in S::ALL {
            assert_eq!(s.as_str().parse::<S>(), Ok(s));
            assert_eq!(
                S::parse_loose(&s.as_str().to_lowercase().replace('_', "-")),
                Some(s)
            );
        }
        assert_eq!(S::parse_loose("task_state_working"), Some(S::Working));
        assert_eq!(S::parse_loose("input-Required"), Some(S::InputRequired));
        assert_eq!(S::parse_loose("nope"), None);
        assert!("working".parse::<S>().is_err());
        for e in EffectState::ALL {
            assert_eq!(e.as_str().parse::<EffectState>(), Ok(e));
        }
        assert_eq!(
            "compensation-failed".parse::<EffectState>(),
            Ok(EffectState::CompensationFailed)
        );
        for w in WorkflowState::ALL {
            assert_eq!(w.as_str().parse::<WorkflowState>(), Ok(w));
        }
        for r in Resolution::ALL {
            assert_eq!(r.as_str().parse::<Resolution>(), Ok(r));
        }
        for r in ReplyState::ALL {
            assert_eq!(r.as_str().parse::<ReplyState>(), Ok(r));
        }
    }

    #[test]
    fn step_names_follow_the_rules() {
        assert_eq!(
            StepName::parse("trip-42/hotel").unwrap(),
            StepName::from_parts("trip-42", "hotel")
        );
        assert_eq!(
            StepName::parse("hotel").unwrap(),
            StepName::from_parts("default", "hotel")
        );
        for bad in [
            "",
            "/",
            "a/",
            "/b",
            "a/b/c",
            "a~b",
            "w/a~b",
            "a b",
            "-x",
            "a\tb",
            "w/\u{1b}[31m",
        ] {
            assert!(StepName::parse(bad).is_err(), "{bad:?} accepted");
        }
        assert!(StepName::parse(&"x".repeat(129)).is_err());
        assert!(StepName::parse(&"x".repeat(128)).is_ok());
        assert_eq!(
            Target::parse("trip-42").unwrap(),
            Target::Workflow("trip-42".into())
        );
        assert_eq!(
            Target::parse("trip-42/car").unwrap(),
            Target::Step(StepName::from_parts("trip-42", "car"))
        );
    }
}
