//! What a human must do about a row that needs one, as a value: its kind, its step, and whether
//! its workflow is being compensated.
//!
//! Which rows need a human, and why, is the journal's ([`AttemptRow::remedy_kind`], twin of the
//! `inspect --pending` SQL). The words and the command lines are the command layer's
//! (`commands/util/remedy.rs`): nothing here writes text.

use crate::journal::{AttemptRow, RemedyKind, StepName, WorkflowState};

/// What a human must do about a row, and the command that does it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remedy {
    /// Why.
    pub kind: RemedyKind,
    /// The step.
    pub step: StepName,
    /// Whether its workflow is being compensated: nothing is sent for it any more, so a
    /// question or a failure is settled by finishing the compensation.
    pub compensating: bool,
    /// Whether the agent refused a text reply as invalid parameters: it may take only a
    /// structured answer, a data part shaped like its question (`reply --data`).
    pub text_refused: bool,
}

impl Remedy {
    /// Returns what a human must do about `row`, if anything (`inspect --pending`).
    pub fn of(row: &AttemptRow) -> Option<Self> {
        Some(Self {
            kind: row.remedy_kind()?,
            step: row.step.clone(),
            compensating: row.workflow_state == WorkflowState::Compensating,
            text_refused: row.text_reply_refused,
        })
    }

    /// Returns whether finishing the workflow's compensation is what answers it.
    pub fn finishes_compensation(&self) -> bool {
        self.compensating
            && matches!(
                self.kind,
                RemedyKind::Answer | RemedyKind::Authenticate | RemedyKind::FailedForGood
            )
    }
}
