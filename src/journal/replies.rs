//! Replies to a waiting task: a reply's messageId committed before it is sent, its delivery
//! state, and the replies a pass must still deliver.

use serde_json::json;

use super::queries::{self, NewEvent};
use super::{AttemptId, Journal, JournalError, NewReply, Reply, ReplyId, ReplyState};

impl Journal {
    /// Commits a reply's messageId (state `INTENT`) before it is sent; a `reply-intent` event
    /// records it.
    pub fn create_reply(&self, attempt: AttemptId, new: &NewReply) -> Result<Reply, JournalError> {
        let now = self.now_ms();
        self.write("commit the reply", |tx| {
            let e = self.err("commit the reply");
            let held = queries::attempt_by_id(tx, attempt)
                .map_err(&e)?
                .ok_or(JournalError::UnknownAttempt(attempt.0))?;
            let id = queries::insert_reply(tx, attempt, new, now).map_err(&e)?;
            let detail = json!({
                "messageId": new.message_id,
                "answers": new.answers,
                "answer": new.answer(),
            });
            queries::insert_event(
                tx,
                &NewEvent {
                    at: now,
                    workflow: None,
                    step: Some(held.step_id),
                    attempt: Some(attempt),
                    kind: "reply-intent",
                    from: None,
                    to: Some(ReplyState::Intent.as_str()),
                    detail: Some(&detail),
                },
            )
            .map_err(&e)?;
            queries::reply_by_id(tx, id)
                .map_err(&e)?
                .ok_or(JournalError::UnknownAttempt(attempt.0))
        })
    }

    /// Returns the answer of each attempt's latest reply, as records show it (`lastAnswer`).
    pub fn last_answers(
        &self,
        attempts: &[AttemptId],
    ) -> Result<std::collections::HashMap<AttemptId, serde_json::Value>, JournalError> {
        self.read("read the replies", |c| {
            queries::last_answers(c, attempts).map(|v| v.into_iter().collect())
        })
    }

    /// Returns an attempt's replies, oldest first.
    pub fn replies(&self, attempt: AttemptId) -> Result<Vec<Reply>, JournalError> {
        self.read("read the replies", |c| queries::replies_of(c, attempt))
    }

    /// Returns every reply not known to be delivered (`INTENT`) on the latest attempt of a
    /// step outside COMPENSATED workflows; only in `workflows` if not empty.
    pub fn undelivered_replies(&self, workflows: &[String]) -> Result<Vec<Reply>, JournalError> {
        self.read("read the replies", |c| {
            queries::undelivered_replies(c, workflows)
        })
    }

    /// Sets a reply's state, error (one line) and the error's named kind (the A2A error's
    /// reason, `INVALID_PARAMS`; `None` for none); writes (with a `reply` event) only if one
    /// changed.
    pub fn set_reply_state(
        &self,
        id: ReplyId,
        state: ReplyState,
        error: Option<&str>,
        kind: Option<&str>,
    ) -> Result<bool, JournalError> {
        let now = self.now_ms();
        self.write("journal the reply", |tx| {
            let e = self.err("journal the reply");
            let held = queries::reply_by_id(tx, id)
                .map_err(&e)?
                .ok_or(JournalError::UnknownAttempt(id.0))?;
            if held.state == state
                && held.error.as_deref() == error
                && held.error_kind.as_deref() == kind
            {
                return Ok(false);
            }
            queries::set_reply_state(tx, id, state, (error, kind), now).map_err(&e)?;
            let step = queries::attempt_by_id(tx, held.attempt_id)
                .map_err(&e)?
                .map(|a| a.step_id);
            let detail = json!({"messageId": held.message_id, "error": error});
            queries::insert_event(
                tx,
                &NewEvent {
                    at: now,
                    workflow: None,
                    step,
                    attempt: Some(held.attempt_id),
                    kind: "reply",
                    from: Some(held.state.as_str()),
                    to: Some(state.as_str()),
                    detail: Some(&detail),
                },
            )
            .map_err(&e)?;
            Ok(true)
        })
    }
}
