//! What a recovery pass reports, and the errors it raises; the command layer prints the one and
//! maps the other to exit codes.

use serde_json::Value;

use crate::a2a::A2aError;
use crate::journal::NeedsHuman;
use crate::sanitize::inert;

/// Errors a recovery pass raises with their meaning (the command layer chooses the exit code).
#[derive(Debug, thiserror::Error)]
pub enum RecoveryError {
    /// The workflow named is not in the journal.
    #[error("unknown workflow `{}`", inert(.0))]
    UnknownWorkflow(String),
    /// The credential a journaled attempt was sent with cannot be read now: a human must
    /// restore it before that attempt can be read, cancelled or sent again.
    #[error(transparent)]
    CredentialGone(A2aError),
}

impl RecoveryError {
    /// Returns what the operator can do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            Self::UnknownWorkflow(_) => {
                Some("list workflows with `a2a-recover inspect`".to_owned())
            }
            Self::CredentialGone(e) => e.hint(),
        }
    }
}

/// The reader of a pass's report went away (stdout closed): the pass stops, commits what it
/// saw, and the command exits quietly.
#[derive(Debug, thiserror::Error)]
#[error("the reader of the output went away")]
pub struct Stopped;

/// One thing a pass did, or in a dry run would do, about a workflow, a step or an attempt: an
/// `action` record for programs, `line` for people.
#[derive(Debug, Clone, Copy)]
pub struct Said<'a> {
    /// The workflow.
    pub workflow: &'a str,
    /// The step (the part after `/`), if the action is about one.
    pub step: Option<&'a str>,
    /// The attempt number, if the action is about one.
    pub attempt: Option<u32>,
    /// What was done: `cancel`, `verify`, `compensate`, `workflow`, ….
    pub action: &'a str,
    /// How it came out.
    pub outcome: &'a str,
    /// Details for the record.
    pub detail: &'a Value,
    /// The sentence for people (may quote remote text; the printer makes it inert).
    pub line: &'a str,
}

/// Where a pass reports as it goes; the caller (the command layer) prints.
pub trait Report {
    /// Reports one action; [`Stopped`] when the reader went away.
    fn say(&self, said: &Said<'_>) -> Result<(), Stopped>;
    /// Reports an error that stopped the work on one attempt (the pass goes on).
    fn problem(&self, error: &anyhow::Error);
}

/// Why an `INTENT` attempt whose send or look (`what`: `send`, `look`) met `error` needs a
/// human, if that error is one a pass cannot get past on its own. The attempt stays `INTENT`
/// either way, and is never sent again without a human:
///
/// - an answer over `--max-response-size`: an answered send was received by the agent, and
///   nothing is resent while the look cannot read its answer;
/// - a task id no URL can hold (`.`, `..`, empty, or with a tab or a line break): the agent
///   received the send and created a task that no request can name (reading it would read
///   another resource), so no look can find it either.
pub fn unusable_answer(error: &A2aError, what: &str) -> Option<NeedsHuman> {
    if error.is_bad_task_id() {
        return Some(NeedsHuman {
            cause: NeedsHuman::BAD_TASK_ID.to_owned(),
            reason: format!(
                "{}; the agent received the send, so nothing is read, looked for or sent again \
                 without a human",
                error.summary()
            ),
        });
    }
    let (cause, then) = if what == "send" {
        (
            NeedsHuman::ANSWER_TOO_LARGE,
            "the agent received the send, so it is never sent again without a human; a look \
             finds the task it may have created once the answers fit",
        )
    } else {
        (
            NeedsHuman::LOOK_TOO_LARGE,
            "nothing is resent until a look can read its answer",
        )
    };
    error.is_too_large().then(|| NeedsHuman {
        cause: cause.to_owned(),
        reason: format!(
            "{}; the {what}'s answer is over --max-response-size: {then}",
            error.summary()
        ),
    })
}
