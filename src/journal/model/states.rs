//! The states an attempt, an effect, a workflow, a reply and an operator's resolution can be
//! in, with their names as stored (TEXT, `CHECK`ed by the schema) and printed.

use std::fmt;
use std::str::FromStr;

use crate::model::RemoteState;

/// The state of one attempt.
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
    /// Every state, in the documented order.
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

    /// Returns the documented name (`INPUT_REQUIRED`).
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

/// The state of a step's declared effect; `None` = no effect.
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

    /// Returns the documented name (`compensation-failed`).
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

/// The state of a workflow.
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

    /// Returns the documented name (`ACTIVE`).
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

    /// Returns the documented name (`done`).
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

#[cfg(test)]
mod tests {
    use super::*;
    use AttemptState as S;

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
}
