//! Replies whose send outcome is unknown: looked for in the task's history before any resend.

use anyhow::Context as _;
use serde_json::{Value, json};

use super::{Action, Pass, READ_ATTEMPTS, failure_code};
use crate::a2a::retry_read;
use crate::a2a::{TaskView, history_holds};
use crate::exit;
use crate::journal::{AttemptRow, FailureKind, Reply, ReplyState, Source, StepRecord};
use crate::recovery::decide::{self, ReplyCheck};
use crate::recovery::send::{self, ReplySent};

impl Pass<'_> {
    /// A reply whose outcome is unknown: looks for its messageId in the task's history, then
    /// records it delivered, resends it (same messageId), or marks it uncertain.
    #[expect(
        clippy::too_many_lines,
        reason = "one reply looked for in the history, then each outcome in turn"
    )]
    pub(super) async fn reconcile_reply(
        &self,
        row: &AttemptRow,
        rec: &StepRecord,
        reply: &Reply,
    ) -> anyhow::Result<Action> {
        let attempt = self.journal.attempt(reply.attempt_id)?;
        let out = match Self::outgoing(&rec.step.spec, &attempt, rec) {
            Ok(out) => out,
            Err(e) => return Ok(Self::credential_action(row, &e)),
        };
        let action = |outcome: &str, detail: Value, code: u8| {
            Self::action(row, attempt.number, "reply", outcome, detail, code)
        };
        let (Some(task_id), Ok(endpoint)) = (
            attempt.task_id.clone(),
            send::endpoint_of(
                &attempt,
                &out,
                send::journaled_binding(self.journal, &attempt)?,
            ),
        ) else {
            return Ok(action(
                "reply-failed",
                json!({"messageId": reply.message_id, "error": "no task to look in"}),
                exit::NEEDS_HUMAN,
            ));
        };
        let read = retry_read(READ_ATTEMPTS, || {
            self.client.get_task(&endpoint, &task_id, None)
        })
        .await;
        let task = match read {
            Ok(task) => task,
            Err(e) => {
                self.journal.record_failure(
                    attempt.id,
                    FailureKind::Read,
                    &format!("looking for reply {}: {}", reply.message_id, e.summary()),
                )?;
                return Ok(action(
                    "read-failed",
                    json!({"messageId": reply.message_id, "error": e.summary(), "hint": e.hint()}),
                    failure_code(&e),
                ));
            }
        };
        let view = TaskView::from_value(&task.raw, task.raw.to_string())
            .context("the agent's task has no id")?;
        let check = decide::check_reply(
            history_holds(&task.raw, &reply.message_id),
            history_holds(&task.raw, &attempt.message_id),
            view.state,
        );
        self.journal
            .apply_task(attempt.id, &view, Source::GetTask)?;
        match check {
            ReplyCheck::Delivered => {
                self.journal
                    .set_reply_state(reply.id, ReplyState::Delivered, None)?;
                Ok(action(
                    "DELIVERED",
                    json!({"messageId": reply.message_id, "found": true}),
                    exit::OK,
                ))
            }
            ReplyCheck::Uncertain(reason) => {
                self.journal
                    .set_reply_state(reply.id, ReplyState::Uncertain, Some(&reason))?;
                Ok(action(
                    "UNCERTAIN",
                    json!({"messageId": reply.message_id, "reason": reason}),
                    exit::NEEDS_HUMAN,
                ))
            }
            ReplyCheck::Resend => {
                if !decide::sends_allowed(row.workflow_state) {
                    return Ok(action(
                        "INTENT",
                        json!({"messageId": reply.message_id,
                               "reason": format!("the workflow is {}: no sends", row.workflow_state)}),
                        exit::WORK_REMAINS,
                    ));
                }
                let sent = self
                    .sender()
                    .deliver_reply(reply, &out, &row.step.to_string())
                    .await?;
                Ok(match sent {
                    ReplySent::Delivered(a) => action(
                        "DELIVERED",
                        json!({"messageId": reply.message_id, "resent": true,
                               "state": a.state.as_str()}),
                        exit::OK,
                    ),
                    ReplySent::Refused(e) => action(
                        "REFUSED",
                        json!({"messageId": reply.message_id, "error": e.summary()}),
                        exit::NEEDS_HUMAN,
                    ),
                    ReplySent::Failed(e) => action(
                        "reply-failed",
                        json!({"messageId": reply.message_id, "error": e.summary(), "hint": e.hint()}),
                        failure_code(&e),
                    ),
                    ReplySent::Busy(_) => action(
                        "busy",
                        json!({"messageId": reply.message_id}),
                        exit::WORK_REMAINS,
                    ),
                    ReplySent::Settled(r) => action(
                        r.state.as_str(),
                        json!({"messageId": reply.message_id, "settledElsewhere": true}),
                        exit::OK,
                    ),
                })
            }
        }
    }
}
