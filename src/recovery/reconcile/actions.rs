//! The actions a pass reports: built from a row as it stands, with outcome, exit code, remedy.

use serde_json::{Value, json};

use super::{Pass, SKIPPED};
use crate::a2a::{A2aError, ErrorClass, Skip};
use crate::exit;
use crate::journal::{
    ARTIFACT_TOO_LARGE, AttemptRow, INTERFACE_GONE, TASK_TOO_LARGE, is_interface_gone,
};
use crate::recovery::decide::{self};
use crate::recovery::event::{Action, ActionRemedy, Told};
use crate::recovery::remedy::Remedy;

impl Pass<'_> {
    pub(super) fn action(
        row: &AttemptRow,
        attempt: u32,
        action: &'static str,
        outcome: impl Into<String>,
        detail: Value,
        code: u8,
    ) -> Action {
        Action {
            workflow: row.step.workflow.clone(),
            step: row.step.step.clone(),
            attempt,
            action,
            outcome: outcome.into(),
            detail,
            code,
            remedy: None,
            unreached: None,
            hint: None,
        }
    }

    /// An action describing where the attempt now stands, with its remedy if a human must act.
    pub(super) fn standing(
        &self,
        row: &AttemptRow,
        action: &'static str,
        detail: Value,
    ) -> anyhow::Result<Action> {
        let row = self.refresh(row)?;
        Ok(Self::standing_of(&row, action, detail))
    }

    /// The action of [`Pass::standing`], from a row as it now stands.
    pub(super) fn standing_of(row: &AttemptRow, action: &'static str, detail: Value) -> Action {
        let mut a = Self::action(
            row,
            row.attempt.number,
            action,
            row.attempt.state.as_str(),
            detail,
            decide::code_of(row),
        );
        a.remedy = remedy_line(row);
        if let Some(outcome) = failed_outcome(row) {
            outcome.clone_into(&mut a.outcome);
        }
        a
    }

    /// Re-reads a row's attempt (and whether it failed for good) after a change.
    pub(super) fn refresh(&self, row: &AttemptRow) -> anyhow::Result<AttemptRow> {
        let attempt = self.journal.attempt(row.attempt.id)?;
        let failed_for_good = self.journal.failed_for_good(attempt.id)?;
        Ok(AttemptRow {
            attempt,
            failed_for_good,
            ..row.clone()
        })
    }
}

/// Marks a failed action whose agent could not be reached (and no human is needed), with the
/// agent, so a reporter can say it once per agent.
pub(super) fn unreached(mut action: Action, row: &AttemptRow, e: &A2aError) -> Action {
    if action.code == exit::WORK_REMAINS
        && let (Some(why), Some(agent)) = (e.unreached(), row.attempt.agent_url.as_deref())
    {
        action.unreached = Some((agent.to_owned(), why));
    }
    action
}

/// The action of an item not tried because its agent's circuit is open, or its not-before time
/// is ahead (`notBefore`: when it may be tried again): nothing journaled of the attempt, exit 3
/// (a later pass tries again), or 4 when the attempt already needs a human (a pending question).
pub(super) fn skipped_action(row: &AttemptRow, skip: &Skip) -> Action {
    let a = &row.attempt;
    let mut detail = json!({"agent": skip.agent, "reason": skip.reason, "state": a.state.as_str()});
    if let Some(at) = skip.not_before {
        detail["notBefore"] = json!(crate::clock::rfc3339(at));
    }
    Pass::action(
        row,
        a.number,
        if a.state.has_task() { "read" } else { "look" },
        SKIPPED,
        detail,
        exit::worst(exit::WORK_REMAINS, decide::code_of(row)),
    )
}

/// The exit code of a failed read or send: unreachable or garbage → 3 (the attempt is left as
/// it was); over the size cap, a task id no URL can hold, a refusal or another JSON-RPC error →
/// 4.
pub(super) fn failure_code(e: &A2aError) -> u8 {
    if e.is_transient() || matches!(e.class(), ErrorClass::NotSent | ErrorClass::Ambiguous) {
        if e.is_too_large() || e.is_bad_task_id() {
            exit::NEEDS_HUMAN
        } else {
            exit::WORK_REMAINS
        }
    } else {
        e.exit_code()
    }
}

/// Returns the outcome of a row with a `failed-for-good` event: `failed-for-good` (its workflow
/// is then listed for `compensate`), or, for artifacts past a size limit, `artifact-too-large`
/// / `task-too-large` (the work probably happened: a human decides), or `interface-gone`.
pub(super) fn failed_outcome(row: &AttemptRow) -> Option<&'static str> {
    let reason = row.failed_for_good.as_deref()?;
    Some(if reason.starts_with(ARTIFACT_TOO_LARGE) {
        ARTIFACT_TOO_LARGE
    } else if reason.starts_with(TASK_TOO_LARGE) {
        TASK_TOO_LARGE
    } else if is_interface_gone(reason) {
        INTERFACE_GONE
    } else {
        "failed-for-good"
    })
}

/// Returns `action` with the hint of the wire error it met (its `detail` holds `"hint": null`).
pub(super) fn hinted(mut action: Action, e: &A2aError) -> Action {
    action.hint = e.hint();
    action
}

/// Returns what is wrong (with the question or reason) and the command that answers it, for a
/// row a human must act on.
pub(super) fn remedy_line(row: &AttemptRow) -> Option<ActionRemedy> {
    let remedy = Remedy::of(row)?;
    let told = match row.attempt.question_text() {
        Some(text) => Some(Told {
            text,
            question: true,
        }),
        None => row
            .failed_for_good
            .as_deref()
            .or(row.needs_human.as_ref().map(|n| n.reason.as_str()))
            .or(row.attempt.error.as_deref())
            .map(|why| Told {
                text: why.to_owned(),
                question: false,
            }),
    };
    Some(ActionRemedy::Row { remedy, told })
}
