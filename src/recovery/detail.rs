//! What an action tells beyond its action and outcome, as values: the task it is about, the
//! error it met, why, what a dry run would do next. The command layer writes them: the
//! `detail` object of an `action` record (`commands/report/records.rs`) and the words for
//! people (`commands/report/human.rs`).

use chrono::{DateTime, Utc};

use crate::a2a::{A2aError, ErrorKind, Hint, ProtocolBinding};
use crate::journal::{Attempt, AttemptState, EffectState, Lease, NeedsHuman, WorkflowState};

/// An action's details: each field is one key of its record's `detail` object, left out when
/// `None` (or `false`); a field that may be there with no value (`null`) is an
/// `Option<Option<_>>`, `Some(None)` being the `null`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Detail {
    /// The agent (its card URL) the action talked to, or would.
    pub agent: Option<Option<String>>,
    /// The task's context.
    pub context_id: Option<Option<String>>,
    /// The task the agent answered a reply with (`continuationTaskId`).
    pub continuation_task_id: Option<String>,
    /// The verified state of the step's effect.
    pub effect: Option<EffectState>,
    /// What the effect's verification found, in its words (`detail`).
    pub effect_detail: Option<String>,
    /// The error the action met (`error`: the command layer writes its line).
    pub error: Option<Met>,
    /// Whether a look found the message (`found: true`).
    pub found: bool,
    /// What the operator can do about the wire error met (`hint`: its words, else `null`).
    pub hint: Option<Option<Hint>>,
    /// Who holds the attempt's lease (`holder`: pid, host, owner).
    pub holder: Option<Lease>,
    /// The reply's interface left the card (`interfaceMoved: true`).
    pub interface_moved: bool,
    /// The attempt's state as journaled before a dry run's read (`journaled`).
    pub journaled: Option<AttemptState>,
    /// The message the action is about.
    pub message_id: Option<String>,
    /// The interface a dry run would move the attempt to (`from`, `to`).
    pub moved: Option<Move>,
    /// Why a human must act (`needsHuman`: cause and reason).
    pub needs_human: Option<NeedsHuman>,
    /// When a skipped agent may be tried again (`notBefore`).
    pub not_before: Option<DateTime<Utc>>,
    /// The task of the attempt a new one follows (`previousTaskId`).
    pub previous_task_id: Option<Option<String>>,
    /// The agent's pending question (`null`: none).
    pub question: Option<Option<String>>,
    /// Why: a reason the journal, the wire or a decision gave (`null`: none given).
    pub reason: Option<Option<String>>,
    /// Why, when the pass itself says it (written as `reason`).
    pub why: Option<Why>,
    /// The agent answered with a direct message, not a task (`reply: "direct"`).
    pub replied_directly: bool,
    /// The resend is approved by an operator (`resendApproved: true`).
    pub resend_approved: bool,
    /// The reply was sent again (`resent: true`).
    pub resent: bool,
    /// The state a dry run's read saw (`seen`).
    pub seen: Option<AttemptState>,
    /// Another pass settled the attempt first (`settledElsewhere: true`).
    pub settled_elsewhere: bool,
    /// The attempt's state.
    pub state: Option<AttemptState>,
    /// The task the action is about.
    pub task_id: Option<Option<String>>,
    /// What a dry run would do next (`then`).
    pub then: Option<Then>,
    /// Whether the agent is trusted to de-duplicate by messageId (`trustDedup`).
    pub trust_dedup: Option<bool>,
    /// When a send whose answer is unknown is looked for again (`until`).
    pub until: Option<DateTime<Utc>>,
}

/// Why, in the pass's own terms (`reason`: the command layer writes it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// The workflow takes no sends (it is compensating or compensated).
    NoSends(crate::journal::WorkflowState),
    /// Nothing was found yet, but the last send may still be in flight.
    MayBeInFlight,
    /// The agent's binding has no `ListTasks`: a send lost in a crash cannot be searched for.
    Unsearchable {
        /// The agent's card URL, redacted.
        agent: String,
        /// The binding it is spoken to over.
        binding: ProtocolBinding,
        /// Whether it is trusted to de-duplicate by messageId (the same messageId is resent).
        trusted: bool,
    },
    /// No look settles whether a reply reached its task: a human decides.
    ReplyDoubt(ReplyDoubt),
    /// The step failed for good.
    ForGood(ForGood),
    /// No look tells whether a send created a task: a human decides.
    Unprovable(crate::recovery::lookup::Unprovable),
}

/// Why a step failed for good (`reason`; the journal keeps [`ForGood::line`] as the attempt's
/// failed-for-good reason, for `inspect`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForGood {
    /// The agent failed (or rejected) it while the workflow takes no sends.
    NoSends {
        /// How the agent ended it.
        state: AttemptState,
        /// The workflow's state.
        workflow: WorkflowState,
    },
    /// The agent canceled the task itself.
    CanceledByAgent,
    /// The agent failed it, and the step is bound to that one agent.
    OneAgent(AttemptState),
    /// A command step failed.
    Command(AttemptState),
    /// The agent failed it, and the step's attempt budget (this many) is spent.
    BudgetSpent(AttemptState, u32),
    /// The agent failed it, and no other registered agent advertises the step's skill.
    NoOtherAgent(AttemptState, String),
}

impl ForGood {
    /// The line the journal keeps as the attempt's failed-for-good reason (`inspect` reads it).
    pub fn line(&self) -> String {
        match self {
            Self::NoSends { state, workflow } => {
                format!("{state} by the agent while the workflow is {workflow}; no re-delegation")
            }
            Self::CanceledByAgent => {
                "the agent canceled the task (not a2a-recover); not re-delegated".to_owned()
            }
            Self::OneAgent(state) => format!(
                "{state} by the agent, and the step is bound to one agent (--agent); not \
                 re-delegated"
            ),
            Self::Command(state) => format!("{state}; a command step"),
            Self::BudgetSpent(state, max) => {
                format!("{state} by the agent, and the attempt budget ({max}) is spent")
            }
            Self::NoOtherAgent(state, skill) => format!(
                "{state} by the agent, and no other registered agent advertises skill `{skill}`"
            ),
        }
    }
}

/// Why no look settles whether a reply reached its task (`reason`; the journal keeps
/// [`ReplyDoubt::line`] as the reply's error, for `inspect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyDoubt {
    /// The task's history is truncated: the reply may be among the missing messages.
    Truncated,
    /// The task moved on to this state without the reply.
    MovedOn(AttemptState),
    /// This many tasks of the context could not be read: the reply may be in one.
    Unreadable(usize),
    /// The context holds more than this many pages of tasks: the reply may be among them.
    TooManyPages(usize),
    /// The agent answers replies with new tasks, and has no `ListTasks` to search them.
    HiddenContinuation,
}

impl ReplyDoubt {
    /// The line the journal keeps as the reply's error (`replies.error`, read by `inspect`).
    pub fn line(self) -> String {
        match self {
            Self::Truncated => {
                "the task's history is truncated, so the reply may be among the missing messages"
                    .to_owned()
            }
            Self::MovedOn(state) => format!("the task moved on to {state} without our reply"),
            Self::Unreadable(n) => {
                format!("{n} task(s) of the context could not be read; the reply may be in one")
            }
            Self::TooManyPages(n) => format!(
                "the context holds more than {n} pages of tasks; the reply may be among them"
            ),
            Self::HiddenContinuation => {
                "the agent answers replies with new tasks and cannot be searched by context \
                 (no ListTasks), so the reply may be in a task we cannot see"
                    .to_owned()
            }
        }
    }
}

/// The error an action met, as a value: the command layer writes its line (`error`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Met {
    /// A wire error: the named A2A error the agent answered with (`None`: it named none, or
    /// did not answer), and the error's summary (one inert line).
    Wire {
        /// The named kind.
        kind: Option<ErrorKind>,
        /// Its summary.
        summary: String,
    },
    /// A reply's attempt has no task (or no interface) to look for it in.
    NoTaskToLookIn,
    /// `GetTask` answered with another task than the attempt's: that task's id.
    AnotherTask(String),
    /// The attempt's interface left the agent's card, which offers nothing we speak.
    InterfaceGone(crate::recovery::moved::Gone),
}

impl Met {
    /// The wire error `e`, by its named kind and summary.
    pub fn wire(e: &A2aError) -> Self {
        Self::Wire {
            kind: e.kind(),
            summary: e.summary(),
        }
    }
}

/// What a dry run would do after its action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Then {
    /// Resend only if the look proves the message absent.
    ResendIfAbsent,
    /// Settle the attempt with this action and outcome.
    Settle {
        /// The action.
        action: &'static str,
        /// Its outcome.
        outcome: String,
    },
}

/// Where a dry run would move an attempt's interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    /// The journaled interface.
    pub from: Side,
    /// The interface the card offers now.
    pub to: Side,
}

/// One interface of a [`Move`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Side {
    /// The interface URL.
    pub url: String,
    /// The binding it speaks.
    pub binding: ProtocolBinding,
}

impl Detail {
    /// The details of an action about a task.
    pub fn task(task_id: impl Into<String>) -> Self {
        Self {
            task_id: Some(Some(task_id.into())),
            ..Self::default()
        }
    }

    /// The details of an action about a message.
    pub fn message(message_id: impl Into<String>) -> Self {
        Self {
            message_id: Some(message_id.into()),
            ..Self::default()
        }
    }

    /// The details of a look that found the message (and its task, if it had one yet).
    pub fn found(task_id: Option<String>, message_id: impl Into<String>) -> Self {
        Self {
            found: true,
            task_id: Some(task_id),
            ..Self::message(message_id)
        }
    }

    /// The details of a send the agent answered with a task: the task, its context, the
    /// message.
    pub fn sent(a: &Attempt) -> Self {
        Self {
            task_id: Some(a.task_id.clone()),
            context_id: Some(a.context_id.clone()),
            ..Self::message(a.message_id.as_str())
        }
    }

    /// The details of a send the agent answered with a direct message, not a task.
    pub fn replied_directly() -> Self {
        Self {
            replied_directly: true,
            ..Self::default()
        }
    }

    /// The details of an action another pass settled first.
    pub fn settled_elsewhere() -> Self {
        Self {
            settled_elsewhere: true,
            ..Self::default()
        }
    }

    /// The details of an action that met an error.
    pub fn error(error: Met) -> Self {
        Self {
            error: Some(error),
            ..Self::default()
        }
    }

    /// The details of an action that met a wire error (no `hint`: see `hinted`).
    pub fn wire_error(error: &A2aError) -> Self {
        Self::error(Met::wire(error))
    }

    /// The details of an action with a reason.
    pub fn reason(reason: Option<String>) -> Self {
        Self {
            reason: Some(reason),
            ..Self::default()
        }
    }

    /// The details of a reply no look settles, and why.
    pub fn doubt(doubt: ReplyDoubt) -> Self {
        Self {
            why: Some(Why::ReplyDoubt(doubt)),
            ..Self::default()
        }
    }

    /// The details of a send no look settles, and why.
    pub fn unprovable(why: crate::recovery::lookup::Unprovable) -> Self {
        Self {
            why: Some(Why::Unprovable(why)),
            ..Self::default()
        }
    }

    /// The details of a step that failed for good, and why.
    pub fn for_good(why: ForGood) -> Self {
        Self {
            why: Some(Why::ForGood(why)),
            ..Self::default()
        }
    }

    /// With the task it is about.
    pub fn with_task(self, task_id: impl Into<String>) -> Self {
        Self {
            task_id: Some(Some(task_id.into())),
            ..self
        }
    }

    /// With the message it is about.
    pub fn with_message(self, message_id: impl Into<String>) -> Self {
        Self {
            message_id: Some(message_id.into()),
            ..self
        }
    }

    /// With the attempt's state.
    pub fn with_state(self, state: AttemptState) -> Self {
        Self {
            state: Some(state),
            ..self
        }
    }
}
