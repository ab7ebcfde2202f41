//! The rows the journal holds and returns: steps, attempts, agents, events, replies,
//! artifacts, the rows `inspect` and the passes see, and what a change did.

use std::fmt;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::{AttemptState, EffectState, ReplyState, Resolution, StepName, Target, WorkflowState};
use crate::model::{
    InterfaceChoice, ProtocolBinding, TaskView, message_data, message_said, parse_timestamp,
    parts_value,
};

/// The row id of a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReplyId(pub i64);

/// A reply to journal before it is sent (`reply`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewReply {
    /// A fresh messageId (UUIDv4), reused on every resend.
    pub message_id: String,
    /// The answer's text (empty for a data reply).
    pub text: String,
    /// The answer as one data part (`reply --data`), instead of text.
    pub data: Option<serde_json::Value>,
    /// The status timestamp of the question it answers, as the agent sent it.
    pub answers: Option<String>,
}

impl NewReply {
    /// The answer as records show it: `{"text": …}` or `{"data": …}`.
    pub fn answer(&self) -> serde_json::Value {
        answer_json(&self.text, self.data.as_ref())
    }
}

/// A reply's answer as records show it: `{"data": …}` for a data reply, else `{"text": …}`.
pub fn answer_json(text: &str, data: Option<&serde_json::Value>) -> serde_json::Value {
    match data {
        Some(data) => serde_json::json!({ "data": data }),
        None => serde_json::json!({ "text": text }),
    }
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
    /// Its text (empty for a data reply).
    pub text: String,
    /// Its data part, for a data reply.
    pub data: Option<serde_json::Value>,
    /// The status timestamp of the question it answers.
    pub answers: Option<String>,
    /// Its state.
    pub state: ReplyState,
    /// The last failure, one line.
    pub error: Option<String>,
    /// The named A2A error of the last failure, by its reason (`INVALID_PARAMS`): what reads
    /// decide on, never `error`'s words; `None` when it met none.
    pub error_kind: Option<String>,
    /// When it was committed.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

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
    /// The command printing the credential (`--token-cmd`; never its output). When set, it is
    /// the credential's source instead of `token_env`.
    pub token_cmd: Option<String>,
    /// The message's `metadata`.
    pub metadata: Option<Map<String, Value>>,
    /// The attempt budget across all agents.
    pub max_attempts: u32,
    /// Whether credentials may go to an interface on another origin than the card's.
    pub allow_cross_origin: bool,
    /// What the operator forced of the agent's interface (`--binding`, `--protocol`).
    pub interface: InterfaceChoice,
    /// The declared effect (`None` = none).
    pub effect: Option<Value>,
    /// The compensation recipe.
    pub compensate: Option<Value>,
    /// The verification recipe.
    pub verify: Option<Value>,
    /// The absolute directory commands run in.
    pub cwd: Option<String>,
    /// A data part the message carries beside its text (`delegate --data`, a plan step's
    /// `data`).
    pub data: Option<Value>,
}

impl StepSpec {
    /// A step delegated to one agent with defaults for everything else.
    pub fn to_agent(name: StepName, text: impl Into<String>, card_url: impl Into<String>) -> Self {
        Self {
            name,
            text: text.into(),
            binding: Binding::Agent(card_url.into()),
            token_env: None,
            token_cmd: None,
            metadata: None,
            max_attempts: 3,
            allow_cross_origin: false,
            interface: InterfaceChoice::default(),
            effect: None,
            compensate: None,
            verify: None,
            cwd: None,
            data: None,
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
    /// The owner's random id (a UUIDv4 made once per process): the lease is "mine" only when
    /// it is this process's. `None` for a lease journaled before schema 12: nobody's.
    pub owner: Option<String>,
    /// The owner's process id.
    pub pid: u32,
    /// The owner's host identity: its host name and pid namespace (`crate::journal::host_name`).
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
    /// The binding it is (or was) sent over, journaled with `interface_url`; `None` while never
    /// sent, or when journaled before bindings were (`recovery::send::journaled_wire` then
    /// reads it from the agent's journaled card, else v1.0 JSON-RPC).
    pub binding: Option<ProtocolBinding>,
    /// The NAME of the credential's environment variable.
    pub token_env: Option<String>,
    /// The command printing the credential (`--token-cmd`; never its output).
    pub token_cmd: Option<String>,
    /// Whose credential `token_env` / `token_cmd` name: the step's own, its agent's registered
    /// one, or none ([`CredentialSource`]).
    pub credential_source: CredentialSource,
    /// Our messageId (UUIDv4), reused on every resend.
    pub message_id: String,
    /// The contextId: ours while `context_id_ours`, else the agent's.
    pub context_id: Option<String>,
    /// Whether `context_id` is the one we chose.
    pub context_id_ours: bool,
    /// The remote task id, once known.
    pub task_id: Option<String>,
    /// The task that continues it: an agent answered a reply with a new task in the same
    /// context. Every later read goes there ([`Attempt::current_task_id`]).
    pub continuation_task_id: Option<String>,
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

/// Whose credential an attempt carries, chosen when its intent is committed and used by every
/// later call on it (send, look, read, subscribe, cancel, reply, resend): never the token, only
/// where the attempt's `token_env` / `token_cmd` came from.
///
/// A step's own credential (`--token-env`, `--token-cmd`, a plan step's `token_env` /
/// `token_cmd`) belongs to the agent it was given for, the agent of the step's first attempt;
/// an attempt at any other agent (a re-delegation, a retry elsewhere) carries that agent's
/// registered credential (`agents add --token-env` / `--token-cmd`), or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CredentialSource {
    /// The step's own credential, at the agent it was given for.
    Step,
    /// The attempt's agent's registered credential.
    Agent,
    /// No credential.
    #[default]
    None,
}

impl CredentialSource {
    /// Every source.
    pub const ALL: [Self; 3] = [Self::Step, Self::Agent, Self::None];

    /// Returns the documented name (`step`, `agent`, `none`), as journaled and printed.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Step => "step",
            Self::Agent => "agent",
            Self::None => "none",
        }
    }

    /// Chooses an attempt's credential: the step's own (`step`: its `token_env`, `token_cmd`)
    /// when the attempt goes to the agent it was given for (`for_owner`), else the agent's
    /// registered one (`registered`), else none.
    pub fn choose(
        step: (Option<String>, Option<String>),
        for_owner: bool,
        registered: (Option<String>, Option<String>),
    ) -> (Self, (Option<String>, Option<String>)) {
        let named = |c: &(Option<String>, Option<String>)| c.0.is_some() || c.1.is_some();
        if for_owner && named(&step) {
            (Self::Step, step)
        } else if named(&registered) {
            (Self::Agent, registered)
        } else {
            (Self::None, (None, None))
        }
    }
}

impl fmt::Display for CredentialSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for CredentialSource {
    type Err = super::ParseStateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| super::ParseStateError {
                kind: "credential source",
                value: s.to_owned(),
            })
    }
}

/// How far ahead of our clock a remote status stamp may be and still order later reports.
pub const FUTURE_STAMP_TOLERANCE: chrono::TimeDelta = chrono::TimeDelta::seconds(60);

impl Attempt {
    /// Returns whether this attempt's credential may go to an interface on another origin than
    /// its card's: only where the step allows it (`--allow-cross-origin`) and the credential is
    /// the step's own (or there is none). A re-delegated attempt carries its agent's registered
    /// credential, which the step's allowance never covers.
    pub fn may_cross_origin(&self, step_allows: bool) -> bool {
        step_allows && self.credential_source != CredentialSource::Agent
    }

    /// Returns where its credential comes from: (`token_env`, `token_cmd`).
    pub fn token_source(&self) -> (Option<String>, Option<String>) {
        (self.token_env.clone(), self.token_cmd.clone())
    }

    /// Returns the task later reads go to: the continuation, if any, else the task.
    pub fn current_task_id(&self) -> Option<&str> {
        self.continuation_task_id
            .as_deref()
            .or(self.task_id.as_deref())
    }

    /// Returns the held status timestamp, parsed.
    pub fn status_time(&self) -> Option<DateTime<Utc>> {
        self.status_timestamp.as_deref().and_then(parse_timestamp)
    }

    /// Returns the held status timestamp for ordering a newer report against it, or `None`
    /// when it cannot order anything: it was more than [`FUTURE_STAMP_TOLERANCE`] ahead of our
    /// own clock when it was journaled (an agent's clock far ahead, or a stamp decades off).
    /// Such a stamp would make every real status look older, and freeze the step.
    pub fn ordering_time(&self) -> Option<DateTime<Utc>> {
        self.status_time()
            .filter(|t| *t <= self.updated_at + FUTURE_STAMP_TOLERANCE)
    }

    /// Returns the pending question as one string (`pendingQuestion`), if any: its text parts
    /// joined, else its data part's string `value`, else that data as compact JSON.
    pub fn question_text(&self) -> Option<String> {
        self.pending_question.as_ref().map(message_said)
    }

    /// Returns the pending question's data part (`pendingQuestionData`), if it has one.
    pub fn question_data(&self) -> Option<&Value> {
        self.pending_question.as_ref().and_then(message_data)
    }

    /// Returns whether applying `view` to this attempt would certainly change nothing (the same
    /// task, context, state, state spelling and status timestamp, no artifacts, no pending
    /// question held): a pass need not journal it. `false` when unsure; the journal then decides.
    pub fn unchanged_by(&self, view: &TaskView) -> bool {
        self.current_task_id() == Some(view.task_id.as_str())
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
    /// The chosen interface's binding (`None` before its card was fetched).
    pub binding: Option<ProtocolBinding>,
    /// The interface's tenant.
    pub tenant: Option<String>,
    /// Whether the operator trusts it to de-duplicate by messageId (`agents add
    /// --trust-dedup`): a send window it cannot be searched for is then resent, same messageId.
    pub trust_dedup: bool,
    /// The NAME of the credential's environment variable (registry).
    pub token_env: Option<String>,
    /// The command printing the credential (`agents add --token-cmd`; never its output).
    pub token_cmd: Option<String>,
    /// The card as fetched (raw JSON).
    pub card_json: Option<String>,
    /// The card's skill ids.
    pub skills: Vec<String>,
    /// Whether it accepts a client-chosen contextId (`None`: not known yet).
    pub accepts_context_id: Option<bool>,
    /// The base URL of the push listener it was registered with (`agents add --push`).
    pub push_url: Option<String>,
    /// Its registration order (`agents add`), if registered.
    pub registered: Option<i64>,
    /// When the card was fetched.
    pub fetched_at: Option<DateTime<Utc>>,
    /// The recovery profile `agents probe` last measured (`None`: never probed, or a stored
    /// profile this binary cannot read).
    pub profile: Option<super::AgentProfile>,
}

/// An agent's not-before time (`agent_not_before`): no request to it before `not_before`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentNotBefore {
    /// The agent's interface URL.
    pub interface_url: String,
    /// Where its credential comes from (`env:VAR`, `cmd:COMMAND`), if it has one.
    pub credential: Option<String>,
    /// No request before this.
    pub not_before: DateTime<Utc>,
    /// Why, for a human: what the agent asked.
    pub reason: String,
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
    /// The chosen interface's binding.
    pub binding: ProtocolBinding,
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
    /// Why it needs a human although it is still `INTENT` and every pass tries it again (its
    /// latest event is a `needs-human` one), if it does.
    pub needs_human: Option<NeedsHuman>,
    /// When its state last changed (its creation if never): what AGE measures in every view.
    /// A failed read moves `updated_at`, never this.
    pub state_changed_at: DateTime<Utc>,
    /// Whether it waits for an answer and its latest reply was text the agent refused as
    /// invalid parameters: it may take only a structured answer (`reply --data`).
    pub text_reply_refused: bool,
}

/// Why an `INTENT` attempt needs a human although every pass tries it again: the
/// detail of a `needs-human` event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeedsHuman {
    /// What holds it: [`NeedsHuman::CARD_UNREACHABLE`], [`NeedsHuman::ANSWER_TOO_LARGE`],
    /// [`NeedsHuman::LOOK_TOO_LARGE`] or [`NeedsHuman::BAD_TASK_ID`].
    pub cause: String,
    /// Why, in words (the error and since when).
    pub reason: String,
}

impl NeedsHuman {
    /// The agent's card has been unreachable for longer than `--card-patience`.
    pub const CARD_UNREACHABLE: &'static str = "card-unreachable";
    /// The agent answered the send with more than `--max-response-size`: it received the
    /// send, so the attempt is never sent again without a human; every pass looks for the
    /// task it may have created.
    pub const ANSWER_TOO_LARGE: &'static str = "answer-too-large";
    /// The agent answered the look for a possibly-sent attempt with more than
    /// `--max-response-size`: nothing is resent until a look can read its answer.
    pub const LOOK_TOO_LARGE: &'static str = "look-too-large";
    /// The agent answered the send with a task whose id no URL can hold (`.`, `..`, empty, or
    /// with a tab or a line break): it received the send, and no request can name the task
    /// (one that tried would read another resource), so the attempt is never read, looked for
    /// or sent again without a human.
    pub const BAD_TASK_ID: &'static str = "bad-task-id";

    /// Reads it from a `needs-human` event's detail (`{"cause": …, "reason": …}`); a detail it
    /// cannot read still needs a human, for the reason given as it is.
    pub fn from_detail(json: &str) -> Self {
        let detail: Value = serde_json::from_str(json).unwrap_or_default();
        let text = |key: &str| detail.get(key).and_then(Value::as_str).map(str::to_owned);
        Self {
            cause: text("cause").unwrap_or_else(|| Self::CARD_UNREACHABLE.to_owned()),
            reason: text("reason").unwrap_or_else(|| json.to_owned()),
        }
    }

    /// Returns the event's detail.
    pub fn detail(&self) -> Value {
        serde_json::json!({"cause": self.cause, "reason": self.reason})
    }
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
        if self.failed_for_good.as_deref().is_some_and(is_over_limit) {
            return Some(RemedyKind::TooLarge);
        }
        if self
            .failed_for_good
            .as_deref()
            .is_some_and(is_interface_gone)
        {
            return Some(RemedyKind::InterfaceGone);
        }
        if a.state == AttemptState::Intent
            && let Some(why) = &self.needs_human
        {
            return Some(match why.cause.as_str() {
                NeedsHuman::ANSWER_TOO_LARGE | NeedsHuman::LOOK_TOO_LARGE => {
                    RemedyKind::AnswerTooLarge
                }
                NeedsHuman::BAD_TASK_ID => RemedyKind::BadTaskId,
                _ => RemedyKind::CardUnreachable,
            });
        }
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
                Some(EffectState::Unknown)
                    if a.error
                        .as_deref()
                        .is_some_and(|e| e.starts_with(ARTIFACT_COLLISION)) =>
                {
                    RemedyKind::ArtifactCollision
                }
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
    /// An artifact, or all of a task's, went past `--max-artifact-size` / `--max-task-size`:
    /// the work probably happened, but the journal does not hold all of its result.
    TooLarge,
    /// The interface the attempt was sent to left its agent's card, and the card offers no
    /// interface a2a-recover speaks: the task may still run, but nothing can read it.
    InterfaceGone,
    /// Never sent: the agent's card has been unreachable for longer than `--card-patience`
    /// (every pass still tries it again, and sends it once the agent answers).
    CardUnreachable,
    /// `INTENT`: the agent answered its send, or the look for it, with more than
    /// `--max-response-size` (the send may have created a task; every pass looks for it before
    /// any resend).
    AnswerTooLarge,
    /// The effect stays `unknown`: two or more of its artifacts map to one variable or
    /// `{artifact:NAME}` its verify or compensate recipe reads, so nothing was run (the
    /// attempt's error names them).
    ArtifactCollision,
    /// `INTENT`: the agent answered its send with a task whose id no URL can hold; it received
    /// the send, and nothing can read, find or resend it (a human decides).
    BadTaskId,
}

/// The error (and `failed-for-good` reason) of an attempt an artifact took past
/// `--max-artifact-size`.
pub const ARTIFACT_TOO_LARGE: &str = "artifact-too-large";
/// The error (and `failed-for-good` reason) of an attempt whose artifacts together went past
/// `--max-task-size`.
pub const TASK_TOO_LARGE: &str = "task-too-large";

/// The `failed-for-good` reason (and error) of an attempt whose interface left its agent's card,
/// which offers nothing a2a-recover speaks any more.
pub const INTERFACE_GONE: &str = "interface-gone";

/// The start of the error of an attempt whose effect stays `unknown` because two or more of
/// its artifacts map to one variable or `{artifact:NAME}` a verify or compensate recipe reads
/// (`Journal::record_collision`): nothing was run, a human decides.
pub const ARTIFACT_COLLISION: &str = "artifact-collision";

/// Returns whether a `failed-for-good` reason says the attempt's interface is gone
/// ([`INTERFACE_GONE`]).
pub fn is_interface_gone(reason: &str) -> bool {
    reason.starts_with(INTERFACE_GONE)
}

/// Returns whether a `failed-for-good` reason (or an attempt's error) says its artifacts went
/// past a size limit ([`ARTIFACT_TOO_LARGE`], [`TASK_TOO_LARGE`]).
pub fn is_over_limit(reason: &str) -> bool {
    reason.starts_with(ARTIFACT_TOO_LARGE) || reason.starts_with(TASK_TOO_LARGE)
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
    /// Only attempts sent to this agent (its card URL, as journaled).
    pub agent: Option<String>,
    /// Only attempts changed at or after this time.
    pub since: Option<chrono::DateTime<chrono::Utc>>,
    /// Only attempts changed at or before this time.
    pub until: Option<chrono::DateTime<chrono::Utc>>,
    /// Only steps the operator has not resolved.
    pub unresolved: bool,
}

/// A workflow as `inspect` lists it with no argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowSummary {
    /// Its name.
    pub name: String,
    /// Its state.
    pub state: WorkflowState,
    /// How many steps are in each state, by their latest attempt (state names as journaled).
    pub steps: std::collections::BTreeMap<String, u64>,
    /// How many steps need a human (what `inspect --pending` lists).
    pub needs_human: u64,
    /// How many steps the operator resolved (`resolve`).
    pub resolved: u64,
    /// When it was created.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// When it, or the latest attempt of one of its steps, last changed.
    pub updated_at: chrono::DateTime<chrono::Utc>,
    /// When its state, or the state of one of its steps' latest attempts, last changed: its
    /// AGE, as an attempt's AGE is (a failed read moves `updated_at`, never this).
    pub state_changed_at: chrono::DateTime<chrono::Utc>,
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
    /// A push notification (`listen`).
    Push,
}

impl Source {
    /// Returns its name in events.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Send => "send",
            Self::GetTask => "get-task",
            Self::ListTasks => "list-tasks",
            Self::Stream => "stream",
            Self::Push => "push",
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
    /// Returns its value (of `{artifact:NAME}` and the artifact variables): its text parts and
    /// its data parts as compact JSON, in order.
    pub fn text(&self) -> String {
        parts_value(&self.parts)
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

/// What a write of a remote Task left ([`Journal::apply_task_standing`](crate::journal::Journal::apply_task_standing)).
#[derive(Debug, Clone)]
pub struct Standing {
    /// What the write did.
    pub applied: Applied,
    /// The attempt as the write left it.
    pub attempt: Attempt,
    /// Why the attempt failed for good, if it did.
    pub failed_for_good: Option<String>,
}

impl Applied {
    /// Returns whether anything was written.
    pub fn changed(self) -> bool {
        matches!(self, Self::Changed { .. })
    }
}
