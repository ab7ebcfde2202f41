//! The dry run (`reconcile --dry-run`): what a pass would do, reading but never writing or
//! sending.

use anyhow::Context as _;
use serde_json::{Value, json};

use super::{Action, Item, Pass, READ_ATTEMPTS, remedy_line};
use crate::a2a::retry_read;
use crate::a2a::{Endpoint, TaskView};
use crate::exit;
use crate::journal::{AttemptRow, AttemptState, INTERFACE_GONE, StepRecord};
use crate::recovery::decide::{self, Settlement, Triage};
use crate::recovery::moved::{self, Mode, Reread};
use crate::recovery::send;

impl Pass<'_> {
    /// Says what [`Pass::handle`] would do, reading but never writing or sending.
    pub(super) async fn preview(&self, item: Item) -> anyhow::Result<Vec<Action>> {
        let Item { row, replies } = item;
        let rec = self
            .journal
            .step_by_id(row.attempt.step_id)?
            .with_context(|| format!("step `{}` vanished from the journal", row.step))?;
        let a = &row.attempt;
        let would = |what: &'static str, outcome: &str, detail: Value| {
            Self::action(&row, a.number, what, outcome, detail, decide::code_of(&row))
        };
        let mut actions: Vec<Action> = replies
            .iter()
            .map(|r| {
                Self::action(
                    &row,
                    a.number,
                    "reply",
                    "would-look",
                    json!({"messageId": r.message_id}),
                    exit::WORK_REMAINS,
                )
            })
            .collect();
        let allowed = decide::sends_allowed(row.workflow_state);
        let act = match decide::triage(&row) {
            Triage::Send | Triage::Look if !allowed => would(
                "hold",
                a.state.as_str(),
                json!({"reason": format!("the workflow is {}: no sends", row.workflow_state)}),
            ),
            Triage::Send => would("send", "would-send", json!({"messageId": a.message_id})),
            Triage::Look => {
                let approved = self.journal.resend_approval(a.id)?.is_some();
                if approved {
                    would(
                        "send",
                        "would-resend",
                        json!({"messageId": a.message_id, "resendApproved": true}),
                    )
                } else {
                    would(
                        "look",
                        "would-look",
                        json!({"messageId": a.message_id, "then": "resend only if proven absent"}),
                    )
                }
            }
            Triage::Uncertain => {
                let mut x = would("report", a.state.as_str(), json!({"reason": a.error}));
                x.remedy = remedy_line(&row);
                x
            }
            Triage::Read => {
                let mut read = self.preview_read(&row, &rec).await?;
                let last = read.pop().context("a preview without an action")?;
                actions.append(&mut read);
                last
            }
            Triage::Settled => self.preview_settle(&row, &rec)?,
        };
        actions.push(act);
        // Every action names the agent it would talk to (a re-delegation names the new one).
        if let Some(agent) = &a.agent_url {
            for x in &mut actions {
                if let Some(detail) = x.detail.as_object_mut() {
                    detail
                        .entry("agent")
                        .or_insert_with(|| Value::String(agent.clone()));
                }
            }
        }
        Ok(actions)
    }

    /// What reading the task would do; a move of its interface comes first (`would-move`).
    async fn preview_read(
        &self,
        row: &AttemptRow,
        rec: &StepRecord,
    ) -> anyhow::Result<Vec<Action>> {
        let a = &row.attempt;
        let out = match Self::outgoing(&rec.step.spec, a, rec).await {
            Ok(out) => out,
            Err(e) => return Ok(vec![Self::credential_action(row, &e)]),
        };
        let wire = send::journaled_wire(self.journal, a)?;
        let endpoint = send::endpoint_of(a, &out, wire)?;
        let task_id = a.current_task_id().unwrap_or_default().to_owned();
        let tid = task_id.as_str();
        let get = |ep: Endpoint| async move {
            retry_read(READ_ATTEMPTS, || self.client.get_task(&ep, tid, Some(0))).await
        };
        let mut actions = Vec::new();
        let read =
            match moved::read(self.client, self.journal, a, &endpoint, Mode::DryRun, get).await? {
                Reread::Read { result, moved } => {
                    if let Some(to) = moved {
                        actions.push(Self::action(
                            row,
                            a.number,
                            "move",
                            "would-move-interface",
                            moved::move_detail(&endpoint, &to),
                            exit::OK,
                        ));
                    }
                    result
                }
                Reread::Gone(reason) => {
                    let mut x = Self::action(
                        row,
                        a.number,
                        "read",
                        format!("would-mark-{INTERFACE_GONE}"),
                        json!({"taskId": task_id, "error": reason}),
                        exit::NEEDS_HUMAN,
                    );
                    let mut gone = row.clone();
                    gone.failed_for_good = Some(moved::gone_reason(&reason));
                    x.remedy = remedy_line(&gone);
                    actions.push(x);
                    return Ok(actions);
                }
            };
        actions.push(match read {
            Ok(task) => {
                let view = TaskView::from_value(&task.raw, task.raw.to_string())
                    .context("the agent's task has no id")?;
                let seen = AttemptState::from_remote(view.state);
                let mut seen_row = row.clone();
                seen_row.attempt.state = seen;
                let mut x = Self::action(
                    row,
                    a.number,
                    "read",
                    format!("would-record-{seen}"),
                    json!({"taskId": task_id, "journaled": a.state.as_str(), "seen": seen.as_str()}),
                    decide::code_of(&seen_row),
                );
                if seen.is_terminal() {
                    let then = self.preview_settle(&seen_row, rec)?;
                    x.detail["then"] = json!({"action": then.action, "outcome": then.outcome});
                    x.code = exit::worst(x.code, then.code);
                }
                x
            }
            Err(e) if e.is_task_not_found() => Self::action(
                row,
                a.number,
                "read",
                "would-record-LOST",
                json!({"taskId": task_id}),
                exit::NEEDS_HUMAN,
            ),
            Err(e) => Self::read_failed(row, &task_id, &e),
        });
        Ok(actions)
    }

    fn preview_settle(&self, row: &AttemptRow, rec: &StepRecord) -> anyhow::Result<Action> {
        let a = &row.attempt;
        Ok(match self.settlement(row, rec)? {
            Settlement::Nothing | Settlement::NeedsHuman => {
                let mut x = Self::action(
                    row,
                    a.number,
                    "record",
                    a.state.as_str(),
                    json!({}),
                    decide::code_of(row),
                );
                x.remedy = remedy_line(row);
                x
            }
            Settlement::ClaimEffect => Self::action(
                row,
                a.number,
                "verify-effect",
                "would-verify",
                json!({}),
                exit::OK,
            ),
            Settlement::Redelegate(agent) => Self::action(
                row,
                a.number,
                "redelegate",
                "would-redelegate",
                json!({"agent": agent.card_url}),
                exit::WORK_REMAINS,
            ),
            Settlement::FailedForGood(reason) => Self::action(
                row,
                a.number,
                "failed-for-good",
                "would-fail-for-good",
                json!({"reason": reason}),
                exit::NEEDS_HUMAN,
            ),
        })
    }
}
