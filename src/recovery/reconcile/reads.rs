//! Bucket 2: known tasks read again with `GetTask`, recorded, and decided if they turned terminal.

use std::rc::Rc;

use super::rows::StepOf;
use super::{
    Pass, READ_ATTEMPTS, failed_outcome, failure_left, hinted, remedy_line, skipped_action,
    unreached,
};
use crate::a2a::TaskView;
use crate::a2a::{A2aError, Credential, Endpoint, Skip, retry_read};
use crate::a2a::{Raw, ViewError, types::Task};
use crate::journal::{AttemptRow, AttemptState, FailureKind, JournalError, Source};
use crate::recovery::decide::{self};
use crate::recovery::detail::{Detail, Met};
use crate::recovery::event::{Action, Left};
use crate::recovery::moved::{self, Mode, Reread};
use crate::recovery::send;
use crate::recovery::send::Outgoing;
use anyhow::Context as _;

/// A task read, with its view (an error: the answer names no task).
pub(super) type ReadTask = (Raw<Task>, Result<TaskView, ViewError>);

impl Pass<'_> {
    /// The action of a read that failed (the attempt is left as it was, and so is what it
    /// needs: a pending question still needs a human, and 4 wins over 3).
    pub(super) fn read_failed(row: &AttemptRow, task_id: &str, e: &A2aError) -> Action {
        let action = Self::action(
            row,
            row.attempt.number,
            "read",
            "read-failed",
            Detail::wire_error(e).with_task(task_id),
            failure_left(e),
        );
        let mut action = unreached(hinted(action, e), row, e);
        action.left = action.left.worse(decide::left_of(row));
        action
    }

    /// The action of a read that found the task still running: exit 3, unless a human must
    /// look (its artifacts passed a size limit).
    fn still_running(row: &AttemptRow, seen: AttemptState, task_id: &str) -> Action {
        let mut action = Self::action(
            row,
            row.attempt.number,
            "read",
            seen.as_str(),
            Detail {
                question: Some(None),
                ..Detail::task(task_id)
            },
            Left::Work.worse(decide::left_of(row)),
        );
        if let Some(outcome) = failed_outcome(row) {
            action.remedy = remedy_line(row);
            outcome.clone_into(&mut action.outcome);
        }
        action
    }

    /// Reads a task without its history, and again with it when the agent keeps its answer or
    /// question only there; returns it with its view, built once (docs/performance.md).
    pub(super) async fn get_task(
        &self,
        endpoint: &Endpoint,
        task_id: &str,
    ) -> Result<ReadTask, A2aError> {
        let task = retry_read(READ_ATTEMPTS, || {
            self.client.get_task(endpoint, task_id, Some(0))
        })
        .await?;
        let view = TaskView::from_value(&task.raw, String::new());
        if !view.as_ref().is_ok_and(|v| v.wants_history) {
            return Ok((task, view));
        }
        let task = retry_read(READ_ATTEMPTS, || {
            self.client.get_task(endpoint, task_id, None)
        })
        .await?;
        let view = TaskView::from_value(&task.raw, String::new());
        Ok((task, view))
    }

    /// Bucket 2: reads the task, records it, and decides if it became terminal.
    ///
    /// A read needs only the row (credential variable, endpoint, cross-origin permission): the
    /// step and its other attempts are read from the journal only if the task turned terminal.
    pub(super) async fn read(
        &self,
        row: &AttemptRow,
        rec: &StepOf<'_>,
    ) -> anyhow::Result<Vec<Action>> {
        let a = &row.attempt;
        let endpoint = match self.read_endpoint(row).await? {
            Ok(endpoint) => endpoint,
            Err(e) => return Ok(vec![Self::credential_action(row, &e)]),
        };
        let task_id = a
            .current_task_id()
            .map(str::to_owned)
            .context("a task-known attempt without task id")?;
        let tid = task_id.as_str();
        let get = |ep: Endpoint| async move { self.get_task(&ep, tid).await };
        let read =
            match moved::read(self.client, self.journal, a, &endpoint, Mode::Journal, get).await? {
                Reread::Read { result, .. } => result,
                Reread::Gone(gone) => return Ok(vec![self.nowhere(row, &task_id, &gone)?]),
            };
        match read {
            Ok((task, view)) => {
                // The raw JSON is serialized only for a view that will be journaled.
                let mut view = view.context("the agent's task has no id")?;
                let unchanged = a.unchanged_by(&view);
                if !unchanged {
                    view.raw_json = Some(task.raw.to_string());
                }
                let routine = view.task_id == task_id
                    && !view.state.is_terminal()
                    && !view.state.is_interrupted()
                    && !matches!(
                        a.state,
                        AttemptState::InputRequired | AttemptState::AuthRequired
                    )
                    // Past a size limit it needs a human: journaled now, reported as such.
                    && !self.journal.over_size_limits(a.id, &view)?;
                if routine {
                    // Still running: group-committed with others (re-read next pass anyway);
                    // nothing at all when it is the row as held (a cron pass over unchanged
                    // work neither writes nor reads the attempt again).
                    let seen = AttemptState::from_remote(view.state);
                    if !unchanged {
                        self.reads.push((a.id, view));
                    }
                    return Ok(vec![Self::still_running(row, seen, &task_id)]);
                }
                let now = match self.journal_read(row, &view)? {
                    Ok(now) => now,
                    Err(mismatch) => return Ok(vec![mismatch]),
                };
                if now.attempt.state.is_terminal() {
                    let mut actions = vec![Self::action(
                        &now,
                        a.number,
                        "read",
                        now.attempt.state.as_str(),
                        Detail::task(task_id.as_str()),
                        Left::Nothing,
                    )];
                    actions.extend(Box::pin(self.settle(&now, rec.get()?)).await?);
                    Ok(actions)
                } else {
                    let question = now.attempt.question_text();
                    Ok(vec![self.standing(
                        &now,
                        "read",
                        Detail {
                            question: Some(question),
                            ..Detail::task(task_id.as_str())
                        },
                    )?])
                }
            }
            Err(e) if e.is_task_not_found() => {
                self.journal.mark_lost(a.id, &e.summary())?;
                Ok(vec![self.standing(
                    row,
                    "read",
                    Detail::wire_error(&e).with_task(task_id.as_str()),
                )?])
            }
            Err(e @ A2aError::Skipped { .. }) => {
                Ok(vec![skipped_action(row, &Skip::of(&e).unwrap_or_default())])
            }
            Err(e) => {
                self.journal
                    .record_failure(a.id, FailureKind::Read, &e.summary())?;
                Ok(vec![Self::read_failed(row, &task_id, &e)])
            }
        }
    }

    /// Journals a task read that is not routine and returns the row as the write left it
    /// (nothing is read back), or the action of a read that answered with another task.
    fn journal_read(
        &self,
        row: &AttemptRow,
        view: &TaskView,
    ) -> anyhow::Result<Result<AttemptRow, Action>> {
        let a = &row.attempt;
        match self
            .journal
            .apply_task_standing(a.id, view, Source::GetTask)
        {
            Ok(standing) => Ok(Ok(AttemptRow {
                attempt: standing.attempt,
                failed_for_good: standing.failed_for_good,
                ..row.clone()
            })),
            Err(JournalError::TaskMismatch { seen, .. }) => {
                let summary = format!("GetTask answered with another task `{seen}`");
                self.journal
                    .record_failure(a.id, FailureKind::Read, &summary)?;
                Ok(Err(Self::action(
                    row,
                    a.number,
                    "read",
                    "read-failed",
                    Detail::error(Met::AnotherTask(seen)),
                    Left::Work,
                )))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Returns the endpoint to read a row's task at (where the attempt was sent), or the error
    /// of its unset credential variable; built once per interface, card and credential.
    async fn read_endpoint(
        &self,
        row: &AttemptRow,
    ) -> anyhow::Result<Result<Rc<Endpoint>, A2aError>> {
        let a = &row.attempt;
        let same = |card: &str, ep: &Endpoint| {
            a.agent_url.as_deref() == Some(card)
                && ep.tenant == a.tenant
                && a.binding.is_none_or(|b| b == ep.binding)
                && ep.allow_cross_origin == a.may_cross_origin(row.allow_cross_origin)
                && ep.credential.as_ref().map(Credential::key)
                    == crate::a2a::source_key(a.token_env.as_deref(), a.token_cmd.as_deref())
        };
        if let Some(url) = a.interface_url.as_deref()
            && let Some((card, ep)) = self.endpoints.borrow().get(url)
            && same(card, ep)
        {
            return Ok(Ok(Rc::clone(ep)));
        }
        let resolved = Credential::resolve(a.token_env.as_deref(), a.token_cmd.as_deref()).await;
        let credential = match resolved {
            Ok(credential) => credential,
            Err(e) => return Ok(Err(e)),
        };
        let out = Outgoing {
            text: String::new(),
            metadata: None,
            data: None,
            credential,
            allow_cross_origin: row.allow_cross_origin,
            reference_task_ids: Vec::new(),
            interface: crate::a2a::InterfaceChoice::default(),
            push: None,
        };
        let wire = send::journaled_wire(self.journal, a)?;
        let endpoint = Rc::new(send::endpoint_of(a, &out, wire)?);
        if let (Some(url), Some(card)) = (&a.interface_url, &a.agent_url) {
            self.endpoints
                .borrow_mut()
                .insert(url.clone(), (card.clone(), Rc::clone(&endpoint)));
        }
        Ok(Ok(endpoint))
    }
}
