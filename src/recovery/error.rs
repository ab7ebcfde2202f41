//! What a recovery pass reports, and the errors it raises; the command layer prints the one and
//! maps the other to exit codes.

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

/// The reader of a pass's report went away (stdout closed): the pass stops, commits what it
/// saw, and the command exits quietly.
#[derive(Debug, thiserror::Error)]
#[error("the reader of the output went away")]
pub struct Stopped;

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
