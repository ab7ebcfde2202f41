//! The actions a pass reports: built from a row as it stands, with outcome, exit code, remedy.

use super::{Pass, SKIPPED};
use crate::a2a::{A2aError, ErrorClass, Skip};
use crate::journal::{
    ARTIFACT_TOO_LARGE, AttemptRow, INTERFACE_GONE, TASK_TOO_LARGE, is_interface_gone,
};
use crate::recovery::decide::{self};
use crate::recovery::detail::Detail;
use crate::recovery::event::{Action, ActionRemedy, Left, Told};
use crate::recovery::remedy::Remedy;

impl Pass<'_> {
    pub(super) fn action(
        row: &AttemptRow,
        attempt: u32,
        action: &'static str,
        outcome: impl Into<String>,
        detail: Detail,
        left: Left,
    ) -> Action {
        Action {
            workflow: row.step.workflow.clone(),
            step: row.step.step.clone(),
            attempt,
            action,
            outcome: outcome.into(),
            detail,
            left,
            remedy: None,
            unreached: None,
        }
    }

    /// An action describing where the attempt now stands, with its remedy if a human must act.
    pub(super) fn standing(
        &self,
        row: &AttemptRow,
        action: &'static str,
        detail: Detail,
    ) -> anyhow::Result<Action> {
        let row = self.refresh(row)?;
        Ok(Self::standing_of(&row, action, detail))
    }

    /// The action of [`Pass::standing`], from a row as it now stands.
    pub(super) fn standing_of(row: &AttemptRow, action: &'static str, detail: Detail) -> Action {
        let mut a = Self::action(
            row,
            row.attempt.number,
            action,
            row.attempt.state.as_str(),
            detail,
            decide::left_of(row),
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
    if action.left == Left::Work
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
    let detail = Detail {
        agent: Some(Some(skip.agent.clone())),
        not_before: skip.not_before,
        ..Detail::reason(Some(skip.reason.clone())).with_state(a.state)
    };
    Pass::action(
        row,
        a.number,
        if a.state.has_task() { "read" } else { "look" },
        SKIPPED,
        detail,
        Left::Work.worse(decide::left_of(row)),
    )
}

/// What a failed read or send leaves, by the error's class: unreachable or garbage → work (the
/// attempt is left as it was); over the size cap, a task id no URL can hold, a refusal or
/// another A2A error → a human.
pub(super) fn failure_left(e: &A2aError) -> Left {
    let answered_for_good =
        !e.is_transient() && matches!(e.class(), ErrorClass::Refused | ErrorClass::Remote);
    if answered_for_good || e.is_too_large() || e.is_bad_task_id() {
        Left::Human
    } else {
        Left::Work
    }
}

/// What a card that failed a never-sent attempt leaves ([`crate::recovery::send::card_failure_code`]): work,
/// or usage for a bad URL or credential.
pub(super) fn card_failure_left(e: &A2aError) -> Left {
    if e.is_bad_setup() {
        Left::Usage
    } else {
        Left::Work
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

/// Returns `action` with the hint of the wire error it met (its record's `hint`: the hint's
/// words, or `null`).
pub(super) fn hinted(mut action: Action, e: &A2aError) -> Action {
    action.detail.hint = Some(e.hint());
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::a2a::RpcError;

    const URL: &str = "http://127.0.0.1:9/";

    fn rpc(code: i64) -> A2aError {
        A2aError::Rpc {
            url: URL.to_owned(),
            method: "GetTask",
            error: RpcError {
                code,
                message: "no".to_owned(),
                data: None,
            },
        }
    }

    fn http(status: u16) -> A2aError {
        A2aError::Http {
            url: URL.to_owned(),
            method: "GetTask",
            status,
            retry_after: None,
            snippet: String::new(),
            rpc: None,
            reason: None,
            unattributed: false,
        }
    }

    /// What a failure leaves follows its class, as its exit code does: every error a human must
    /// see is one whose exit code says so (4), every other leaves work (3) and never usage.
    #[test]
    fn what_a_failure_leaves_follows_its_class() {
        let timeout = A2aError::Timeout {
            url: URL.to_owned(),
            method: "GetTask",
            after: Duration::from_secs(1),
            tries: None,
        };
        let too_large = A2aError::TooLarge {
            url: URL.to_owned(),
            method: "GetTask",
            limit: 10,
        };
        let bad_id = A2aError::Decode {
            url: URL.to_owned(),
            method: "SendMessage",
            kind: crate::a2a::DecodeKind::TaskId,
            detail: "..".to_owned(),
        };
        let bad_url = A2aError::InvalidUrl {
            url: "nope".to_owned(),
            reason: "no scheme".to_owned(),
        };
        let cases = [
            (rpc(-32001), Left::Human),
            (rpc(-32602), Left::Human),
            (rpc(-32099), Left::Human),
            (rpc(-32603), Left::Work),
            (http(401), Left::Human),
            (http(404), Left::Human),
            (http(503), Left::Work),
            (timeout, Left::Work),
            (too_large, Left::Human),
            (bad_id, Left::Human),
            (bad_url, Left::Work),
        ];
        for (e, left) in cases {
            assert_eq!(failure_left(&e), left, "{e}");
            let code = match left {
                Left::Human => crate::exit::NEEDS_HUMAN,
                _ if e.is_bad_setup() => crate::exit::USAGE,
                _ => crate::exit::WORK_REMAINS,
            };
            assert_eq!(e.exit_code(), code, "{e}");
        }
    }

    #[test]
    fn a_card_that_failed_leaves_usage_only_for_a_bad_setup() {
        let bad_var = A2aError::Credential {
            var: "TOK".to_owned(),
            problem: "is not set",
        };
        assert_eq!(card_failure_left(&bad_var), Left::Usage);
        assert_eq!(card_failure_left(&http(404)), Left::Work);
        assert_eq!(card_failure_left(&rpc(-32602)), Left::Work);
    }
}
