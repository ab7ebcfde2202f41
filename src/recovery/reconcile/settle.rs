//! Bucket 3: settled attempts — an effect claimed and verified, a re-delegation, a failure
//! for good.

use super::Pass;
use crate::journal::{Attempt, AttemptRow, AttemptState, JournalError, NewAttempt, StepRecord};
use crate::recovery::decide::{self, Settlement};
use crate::recovery::detail::{Detail, ForGood};
use crate::recovery::event::{Action, Left};
use crate::recovery::verify;
use anyhow::Context as _;

impl Pass<'_> {
    /// Bucket 3, COMPLETED with a declared effect: claims it, runs its `verify` recipe and
    /// journals `verified`, `absent` or `unknown` (`verify::verify_effect`); the action's code
    /// follows (only `verified` is done).
    async fn verify_effect(&self, row: &AttemptRow, rec: &StepRecord) -> anyhow::Result<Action> {
        let attempt = self.journal.attempt(row.attempt.id)?;
        let verified = verify::verify_effect(
            self.journal,
            self.client,
            &rec.step,
            &attempt,
            self.cfg.command_timeout,
        )
        .await?;
        self.standing(
            row,
            "verify-effect",
            Detail {
                effect: Some(verified.effect),
                effect_detail: Some(verified.detail),
                ..Detail::default()
            },
        )
    }

    /// What a settled attempt calls for ([`decide::decide_settled`]), given every agent its
    /// step tried and the registered agents advertising its skill.
    pub(super) fn settlement(
        &self,
        row: &AttemptRow,
        rec: &StepRecord,
    ) -> anyhow::Result<Settlement> {
        let spec = &rec.step.spec;
        let tried: Vec<String> = rec
            .attempts
            .iter()
            .filter_map(|a| a.agent_url.clone())
            .collect();
        let candidates = match &spec.binding {
            crate::journal::Binding::Skill(skill) => self.journal.agents_with_skill(skill)?,
            _ => Vec::new(),
        };
        Ok(decide::decide_settled(row, spec, &tried, &candidates))
    }

    /// Journals that the row's step failed for good, and why.
    fn fail_for_good(&self, row: &AttemptRow, why: ForGood) -> anyhow::Result<Vec<Action>> {
        self.journal
            .mark_failed_for_good(row.attempt.id, &why.line())?;
        Ok(vec![self.standing(
            row,
            "failed-for-good",
            Detail::for_good(why),
        )?])
    }

    /// Bucket 3: decides a settled attempt.
    pub(super) async fn settle(
        &self,
        row: &AttemptRow,
        rec: &StepRecord,
    ) -> anyhow::Result<Vec<Action>> {
        match self.settlement(row, rec)? {
            Settlement::Nothing | Settlement::NeedsHuman => Ok(vec![self.standing(
                row,
                "record",
                Detail {
                    task_id: Some(row.attempt.task_id.clone()),
                    ..Detail::default()
                },
            )?]),
            Settlement::ClaimEffect => Ok(vec![self.verify_effect(row, rec).await?]),
            Settlement::FailedForGood(why) => self.fail_for_good(row, why),
            Settlement::Redelegate(agent) => {
                let new = NewAttempt {
                    // Its credential is the journal's choice: the agent's registered one, or
                    // none; never the step's, which belongs to the agent it was given for.
                    agent_url: Some(agent.card_url.clone()),
                    message_id: crate::sim_seam::new_uuid().to_string(),
                    context_id: Some(crate::sim_seam::new_uuid().to_string()),
                    previous: Some(row.attempt.id),
                };
                match self.journal.add_attempt(rec.step.id, &new) {
                    Ok(attempt) => self.send_new(row, attempt, "redelegate").await,
                    Err(JournalError::BudgetSpent { max, .. }) => {
                        self.fail_for_good(row, ForGood::BudgetSpent(row.attempt.state, max))
                    }
                    Err(e) => Err(e.into()),
                }
            }
        }
    }

    /// Sends a freshly committed attempt (re-delegation, retry) and reports both.
    async fn send_new(
        &self,
        row: &AttemptRow,
        attempt: Attempt,
        what: &'static str,
    ) -> anyhow::Result<Vec<Action>> {
        let rec = self
            .journal
            .step_by_id(attempt.step_id)?
            .context("the step vanished from the journal")?;
        let new_row = AttemptRow {
            attempt: attempt.clone(),
            previous_task_id: row.attempt.task_id.clone(),
            failed_for_good: None,
            needs_human: None,
            resolution: None,
            ..row.clone()
        };
        let mut actions = vec![Self::action(
            &new_row,
            attempt.number,
            what,
            AttemptState::Intent.as_str(),
            Detail {
                agent: Some(attempt.agent_url.clone()),
                context_id: Some(attempt.context_id.clone()),
                previous_task_id: Some(row.attempt.task_id.clone()),
                ..Detail::message(attempt.message_id.as_str())
            },
            Left::Work,
        )];
        let out = match self.outgoing_for(&rec.step.spec, &attempt, &rec).await? {
            Ok(out) => out,
            Err(e) => {
                actions.push(Self::credential_action(&new_row, &e));
                return Ok(actions);
            }
        };
        let sent = self
            .sender()
            .deliver(attempt.id, &out, &new_row.step.to_string())
            .await?;
        actions.push(self.sent_action(&new_row, "send", &sent)?);
        Ok(actions)
    }
}
