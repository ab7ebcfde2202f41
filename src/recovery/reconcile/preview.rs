//! The dry run (`reconcile --dry-run`): what a pass would do, reading but never writing or
//! sending.

use super::{Action, Item, Pass, READ_ATTEMPTS, remedy_line};
use crate::a2a::retry_read;
use crate::a2a::{Endpoint, TaskView};
use crate::journal::{AttemptRow, AttemptState, INTERFACE_GONE, StepRecord};
use crate::recovery::decide::{self, Settlement, Triage};
use crate::recovery::detail::{Detail, Move, Side, Then, Why};
use crate::recovery::event::Left;
use crate::recovery::moved::{self, Mode, Reread};
use crate::recovery::send;
use anyhow::Context as _;

impl Pass<'_> {
    /// Says what [`Pass::handle`] would do, reading but never writing or sending.
    pub(super) async fn preview(&self, item: Item) -> anyhow::Result<Vec<Action>> {
        let Item { row, replies } = item;
        let rec = self
            .journal
            .step_by_id(row.attempt.step_id)?
            .with_context(|| format!("step `{}` vanished from the journal", row.step))?;
        let a = &row.attempt;
        let would = |what: &'static str, outcome: &str, detail: Detail| {
            Self::action(&row, a.number, what, outcome, detail, decide::left_of(&row))
        };
        let mut actions: Vec<Action> = replies
            .iter()
            .map(|r| {
                Self::action(
                    &row,
                    a.number,
                    "reply",
                    "would-look",
                    Detail::message(r.message_id.as_str()),
                    Left::Work,
                )
            })
            .collect();
        let allowed = decide::sends_allowed(row.workflow_state);
        let act = match decide::triage(&row) {
            Triage::Send | Triage::Look if !allowed => would(
                "hold",
                a.state.as_str(),
                Detail {
                    why: Some(Why::NoSends(row.workflow_state)),
                    ..Detail::default()
                },
            ),
            Triage::Send => would("send", "would-send", Detail::message(a.message_id.as_str())),
            Triage::Look => {
                let approved = self.journal.resend_approval(a.id)?.is_some();
                if approved {
                    would(
                        "send",
                        "would-resend",
                        Detail {
                            resend_approved: true,
                            ..Detail::message(a.message_id.as_str())
                        },
                    )
                } else {
                    would(
                        "look",
                        "would-look",
                        Detail {
                            then: Some(Then::ResendIfAbsent),
                            ..Detail::message(a.message_id.as_str())
                        },
                    )
                }
            }
            Triage::Uncertain => {
                let mut x = would("report", a.state.as_str(), Detail::reason(a.error.clone()));
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
                x.detail.agent.get_or_insert_with(|| Some(agent.clone()));
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
                            Detail {
                                moved: Some(Move {
                                    from: Side {
                                        url: endpoint.url.clone(),
                                        binding: endpoint.binding,
                                    },
                                    to: Side {
                                        url: to.url.clone(),
                                        binding: to.binding,
                                    },
                                }),
                                ..Detail::default()
                            },
                            Left::Nothing,
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
                        Detail::error_line(reason.as_str()).with_task(task_id.as_str()),
                        Left::Human,
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
                    Detail {
                        journaled: Some(a.state),
                        seen: Some(seen),
                        ..Detail::task(task_id.as_str())
                    },
                    decide::left_of(&seen_row),
                );
                if seen.is_terminal() {
                    let then = self.preview_settle(&seen_row, rec)?;
                    x.detail.then = Some(Then::Settle {
                        action: then.action,
                        outcome: then.outcome.clone(),
                    });
                    x.left = x.left.worse(then.left);
                }
                x
            }
            Err(e) if e.is_task_not_found() => Self::action(
                row,
                a.number,
                "read",
                "would-record-LOST",
                Detail::task(task_id.as_str()),
                Left::Human,
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
                    Detail::default(),
                    decide::left_of(row),
                );
                x.remedy = remedy_line(row);
                x
            }
            Settlement::ClaimEffect => Self::action(
                row,
                a.number,
                "verify-effect",
                "would-verify",
                Detail::default(),
                Left::Nothing,
            ),
            Settlement::Redelegate(agent) => Self::action(
                row,
                a.number,
                "redelegate",
                "would-redelegate",
                Detail {
                    agent: Some(Some(agent.card_url)),
                    ..Detail::default()
                },
                Left::Work,
            ),
            Settlement::FailedForGood(reason) => Self::action(
                row,
                a.number,
                "failed-for-good",
                "would-fail-for-good",
                Detail::reason(Some(reason)),
                Left::Human,
            ),
        })
    }
}
