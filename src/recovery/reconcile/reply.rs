//! Replies whose send outcome is unknown: looked for in the task's history before any resend.

use super::{Action, Pass, READ_ATTEMPTS, failure_left};
use crate::a2a::{A2aError, Endpoint, TaskView, history_holds, retry_read, types};
use crate::journal::{Attempt, AttemptRow, FailureKind, Reply, ReplyState, Source, StepRecord};
use crate::recovery::decide::{self, ReplyCheck};
use crate::recovery::detail::{Detail, Met, Why};
use crate::recovery::event::Left;
use crate::recovery::moved::{self, Mode};
use crate::recovery::send::{self, Outgoing, ReplySent};
use anyhow::Context as _;

impl Pass<'_> {
    /// A reply whose outcome is unknown: looks for its messageId in the task's history, then
    /// records it delivered, resends it (same messageId), or marks it uncertain.
    pub(super) async fn reconcile_reply(
        &self,
        row: &AttemptRow,
        rec: &StepRecord,
        reply: &Reply,
    ) -> anyhow::Result<Action> {
        let attempt = self.journal.attempt(reply.attempt_id)?;
        let out = match Self::outgoing(&rec.step.spec, &attempt, rec).await {
            Ok(out) => out,
            Err(e) => return Ok(Self::credential_action(row, &e)),
        };
        let action = |outcome: &str, detail: Detail, left: Left| {
            Self::action(row, attempt.number, "reply", outcome, detail, left)
        };
        let (Some(task_id), Ok(endpoint)) = (
            attempt.current_task_id().map(str::to_owned),
            send::endpoint_of(
                &attempt,
                &out,
                send::journaled_wire(self.journal, &attempt)?,
            ),
        ) else {
            return Ok(action(
                "reply-failed",
                Detail::error(Met::NoTaskToLookIn).with_message(reply.message_id.as_str()),
                Left::Human,
            ));
        };
        // The look re-chooses an interface that left the card: a resend then goes where the
        // look looked (the re-chosen interface, journaled), never elsewhere.
        let tid = task_id.as_str();
        let get = |ep: Endpoint| async move {
            retry_read(READ_ATTEMPTS, || self.client.get_task(&ep, tid, None)).await
        };
        let (read, endpoint) = match moved::read(
            self.client,
            self.journal,
            &attempt,
            &endpoint,
            Mode::Journal,
            get,
        )
        .await?
        {
            moved::Reread::Read { result, moved } => (result, moved.unwrap_or(endpoint)),
            moved::Reread::Gone(reason) => {
                let mut gone = self.nowhere(row, &task_id, &reason)?;
                gone.action = "reply";
                gone.detail.message_id = Some(reply.message_id.clone());
                return Ok(gone);
            }
        };
        let task = match read {
            Ok(task) => task,
            Err(e) => {
                self.journal.record_failure(
                    attempt.id,
                    FailureKind::Read,
                    &format!("looking for reply {}: {}", reply.message_id, e.summary()),
                )?;
                let failed = action(
                    "read-failed",
                    Detail::wire_error(&e).with_message(reply.message_id.as_str()),
                    failure_left(&e),
                );
                return Ok(super::unreached(super::hinted(failed, &e), row, &e));
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
                    .set_reply_state(reply.id, ReplyState::Delivered, None, None)?;
                Ok(action(
                    "DELIVERED",
                    Detail {
                        found: true,
                        ..Detail::message(reply.message_id.as_str())
                    },
                    Left::Nothing,
                ))
            }
            ReplyCheck::Uncertain(reason) => {
                self.reply_uncertain(reply, &reason)?;
                Ok(action(
                    "UNCERTAIN",
                    Detail::reason(Some(reason)).with_message(reply.message_id.as_str()),
                    Left::Human,
                ))
            }
            ReplyCheck::Resend => {
                Box::pin(self.resend_reply(row, &attempt, (&task_id, &endpoint), reply, &out)).await
            }
        }
    }

    /// Journals a reply whose outcome no look settles: `UNCERTAIN`, with why (no named error).
    fn reply_uncertain(
        &self,
        reply: &Reply,
        reason: &str,
    ) -> Result<bool, crate::journal::JournalError> {
        self.journal
            .set_reply_state(reply.id, ReplyState::Uncertain, Some(reason), None)
    }

    /// A reply the task's history does not hold: looked for in the other tasks of its context
    /// first, then resent (same messageId) if the workflow still sends.
    async fn resend_reply(
        &self,
        row: &AttemptRow,
        attempt: &Attempt,
        (task_id, endpoint): (&str, &Endpoint),
        reply: &Reply,
        out: &Outgoing,
    ) -> anyhow::Result<Action> {
        let action = |outcome: &str, detail: Detail, left: Left| {
            Self::action(row, attempt.number, "reply", outcome, detail, left)
        };
        // Some agents answer a reply with a new task in the same context: look there
        // for the reply's messageId before any resend.
        match self
            .reply_elsewhere(attempt, task_id, endpoint, reply)
            .await?
        {
            Elsewhere::Found(view) => {
                self.journal
                    .apply_continuation(attempt.id, &view, Source::ListTasks)?;
                self.journal
                    .set_reply_state(reply.id, ReplyState::Delivered, None, None)?;
                return Ok(action(
                    "DELIVERED",
                    Detail {
                        found: true,
                        continuation_task_id: Some(view.task_id.clone()),
                        ..Detail::message(reply.message_id.as_str())
                    },
                    Left::Nothing,
                ));
            }
            Elsewhere::Absent => {}
            Elsewhere::Unsearchable(reason) => {
                self.reply_uncertain(reply, &reason)?;
                return Ok(action(
                    "UNCERTAIN",
                    Detail::reason(Some(reason)).with_message(reply.message_id.as_str()),
                    Left::Human,
                ));
            }
            Elsewhere::Failed(e) => {
                let failed = action(
                    "read-failed",
                    Detail::wire_error(&e).with_message(reply.message_id.as_str()),
                    failure_left(&e),
                );
                return Ok(super::unreached(super::hinted(failed, &e), row, &e));
            }
        }
        if !decide::sends_allowed(row.workflow_state) {
            return Ok(action(
                "INTENT",
                Detail {
                    why: Some(Why::NoSends(row.workflow_state)),
                    ..Detail::message(reply.message_id.as_str())
                },
                Left::Work,
            ));
        }
        let sent = self
            .sender()
            .deliver_reply(reply, out, &row.step.to_string())
            .await?;
        self.reply_sent(row, attempt, task_id, reply, sent)
    }

    /// The action for what resending a reply did.
    fn reply_sent(
        &self,
        row: &AttemptRow,
        attempt: &Attempt,
        task_id: &str,
        reply: &Reply,
        sent: ReplySent,
    ) -> anyhow::Result<Action> {
        let action = |outcome: &str, detail: Detail, left: Left| {
            Self::action(row, attempt.number, "reply", outcome, detail, left)
        };
        Ok(match sent {
            ReplySent::Delivered(a) => action(
                "DELIVERED",
                Detail {
                    resent: true,
                    ..Detail::message(reply.message_id.as_str()).with_state(a.state)
                },
                Left::Nothing,
            ),
            ReplySent::Refused(e) => action(
                "REFUSED",
                Detail::wire_error(&e).with_message(reply.message_id.as_str()),
                Left::Human,
            ),
            ReplySent::Failed(e) => super::hinted(
                action(
                    "reply-failed",
                    Detail::wire_error(&e).with_message(reply.message_id.as_str()),
                    failure_left(&e),
                ),
                &e,
            ),
            ReplySent::Moved(e, _) => action(
                "reply-failed",
                Detail {
                    interface_moved: true,
                    ..Detail::wire_error(&e).with_message(reply.message_id.as_str())
                },
                Left::Work,
            ),
            ReplySent::Gone(reason) => {
                let mut gone = self.nowhere(row, task_id, &reason)?;
                gone.action = "reply";
                gone.detail.message_id = Some(reply.message_id.clone());
                gone
            }
            ReplySent::Busy(_) => action(
                "busy",
                Detail::message(reply.message_id.as_str()),
                Left::Work,
            ),
            ReplySent::Settled(r) => action(
                r.state.as_str(),
                Detail::settled_elsewhere().with_message(reply.message_id.as_str()),
                Left::Nothing,
            ),
        })
    }

    /// Looks for a reply in the other tasks of the attempt's context (ListTasks by contextId,
    /// every page, bounded): an agent that answers a reply with a new task keeps it there.
    async fn reply_elsewhere(
        &self,
        attempt: &Attempt,
        task_id: &str,
        endpoint: &Endpoint,
        reply: &Reply,
    ) -> anyhow::Result<Elsewhere> {
        let Some(context_id) = attempt.context_id.clone() else {
            return Ok(Elsewhere::Absent);
        };
        let mut page_token = None;
        let mut unreadable = 0_usize;
        for _ in 0..MAX_PAGES {
            let req = types::ListTasksRequest {
                context_id: Some(context_id.clone()),
                status: None,
                page_size: Some(PAGE_SIZE),
                page_token: page_token.take(),
                history_length: None,
                status_timestamp_after: None,
                include_artifacts: Some(true),
                tenant: None,
            };
            let page =
                match retry_read(READ_ATTEMPTS, || self.client.list_tasks(endpoint, &req)).await {
                    Ok(page) => page,
                    Err(e) if e.is_unsupported_operation() => {
                        return Ok(self.unsearchable(attempt));
                    }
                    Err(e) => return Ok(Elsewhere::Failed(e)),
                };
            for task in page.tasks {
                let Ok(task) = task else {
                    unreadable += 1;
                    continue;
                };
                if task.value.id != task_id && history_holds(&task.raw, &reply.message_id) {
                    let view = TaskView::from_value(&task.raw, task.raw.to_string())
                        .context("the found task has no id")?;
                    if send::continues(attempt, task_id, &view) {
                        return Ok(Elsewhere::Found(view));
                    }
                }
            }
            if page.next_page_token.is_empty() {
                return Ok(if unreadable == 0 {
                    Elsewhere::Absent
                } else {
                    Elsewhere::Unsearchable(format!(
                        "{unreadable} task(s) of the context could not be read; the reply may \
                         be in one"
                    ))
                });
            }
            page_token = Some(page.next_page_token);
        }
        Ok(Elsewhere::Unsearchable(format!(
            "the context holds more than {MAX_PAGES} pages of tasks; the reply may be among them"
        )))
    }

    /// What a context that cannot be searched means: for an agent known to answer replies with
    /// new tasks, the reply may be in one (uncertain); for others, the task's own history,
    /// already read, is conclusive.
    fn unsearchable(&self, attempt: &Attempt) -> Elsewhere {
        let continues = attempt
            .agent_url
            .as_deref()
            .is_some_and(|url| self.journal.agent_continues_replies(url).unwrap_or(true));
        if continues {
            Elsewhere::Unsearchable(
                "the agent answers replies with new tasks and cannot be searched by context \
                 (no ListTasks), so the reply may be in a task we cannot see"
                    .to_owned(),
            )
        } else {
            Elsewhere::Absent
        }
    }
}

/// Where a reply not in its task's history was found.
enum Elsewhere {
    /// In another task of the context: the attempt's continuation.
    Found(TaskView),
    /// Nowhere in the context (or the task's own history is conclusive).
    Absent,
    /// The context cannot be searched for it, for this reason.
    Unsearchable(String),
    /// The search failed this pass.
    Failed(A2aError),
}

/// Most ListTasks pages read looking for a reply.
const MAX_PAGES: usize = 100;
/// Tasks per page.
const PAGE_SIZE: i32 = 100;
