//! `compensate --dry-run`: what a real run would do, phase by phase; nothing sent or journaled.

use std::collections::BTreeMap;

use serde_json::json;

use super::{CompStage, FirstMove, Outcome, Pass, agent_shown, effect_attempt, first_move};
use crate::exit;
use crate::journal::{EffectState, StepRecord, WorkflowState};
use crate::plan_file::{Compensation, CompensationTarget};
use crate::sanitize::inert;

impl Pass<'_> {
    #[expect(
        clippy::too_many_lines,
        reason = "what a real run would do, phase by phase, as one listing"
    )]
    pub(super) fn dry_run(&mut self, state: WorkflowState) -> anyhow::Result<Outcome> {
        let workflow = self.workflow;
        let steps = self.journal.workflow_steps(workflow)?;
        let mut todo = 0usize;
        if state == WorkflowState::Compensated {
            self.say(
                None,
                "workflow",
                state.as_str(),
                &json!({"dryRun": true}),
                &format!("{workflow} is already COMPENSATED; nothing would be done."),
            )?;
        } else if state == WorkflowState::Active {
            self.say(
                None,
                "workflow",
                "COMPENSATING",
                &json!({"dryRun": true}),
                &format!("would mark {workflow} COMPENSATING (no more sends)."),
            )?;
        }
        let (main, comps): (Vec<&StepRecord>, Vec<&StepRecord>) = steps
            .iter()
            .partition(|r| r.step.compensates.is_none() && !r.step.spec.name.step.contains('~'));
        for r in &main {
            for a in &r.attempts {
                if a.state.has_task() && !a.state.is_finished() {
                    todo += 1;
                    let task = a.task_id.as_deref().unwrap_or("-");
                    self.say_step(
                        Some(&r.step.spec.name),
                        Some(a),
                        "cancel",
                        "would-cancel",
                        &json!({"taskId": task, "dryRun": true}),
                        &format!(
                            "would cancel {} task {} ({}), then read it again.",
                            r.step.spec.name,
                            inert(task),
                            a.state
                        ),
                    )?;
                }
            }
        }
        for r in main.iter().rev() {
            if r.step.spec.effect.is_none() {
                continue;
            }
            let Some(a) = effect_attempt(&r.attempts) else {
                continue;
            };
            let stage = match comps
                .iter()
                .find(|c| c.step.compensates == Some(r.step.id))
                .and_then(|c| c.latest())
            {
                None => CompStage::None,
                Some(c) if c.state.is_finished() => CompStage::Finished,
                Some(_) => CompStage::InFlight,
            };
            let n = &r.step.spec.name;
            let how = match r.step.spec.compensate.as_ref().map(Compensation::from_json) {
                Some(Ok(Compensation::Command(_))) => "its compensation command".to_owned(),
                Some(Ok(Compensation::Message { target: None, .. })) => format!(
                    "a compensation message to {}",
                    agent_shown(a.agent_url.as_deref().unwrap_or("-"))
                ),
                Some(Ok(Compensation::Message {
                    target: Some(CompensationTarget::Agent(u)),
                    ..
                })) => format!("a compensation message to {}", agent_shown(&u)),
                Some(Ok(Compensation::Message {
                    target: Some(CompensationTarget::Skill(s)),
                    ..
                })) => format!(
                    "a compensation message to an agent with skill `{}`",
                    inert(&s)
                ),
                _ => "an unreadable compensation recipe".to_owned(),
            };
            let first = first_move(a.effect, stage);
            let collided = match first {
                FirstMove::Skip => None,
                _ => self.collision(&r.step, a)?,
            };
            let (outcome, line) = match first {
                _ if let Some((what, c)) = &collided => (
                    "would-leave-unknown",
                    crate::a2a::error::one_line(&format!(
                        "would leave {n} unknown and run nothing: {what} not run: {c}"
                    )),
                ),
                FirstMove::Skip => (
                    "skip",
                    format!(
                        "{n}: {}; nothing would be done.",
                        a.effect.map_or("null", EffectState::as_str)
                    ),
                ),
                FirstMove::Verify => (
                    "would-verify",
                    format!("would verify {n}; if it exists or is unknown, undo it with {how}."),
                ),
                FirstMove::Resume => (
                    "would-resume",
                    format!("would resume {n}'s compensation, then verify it gone."),
                ),
                FirstMove::Recheck => (
                    "would-recheck",
                    format!("would verify {n} again; if it still exists, undo it with {how}."),
                ),
            };
            if outcome != "skip" {
                todo += 1;
            }
            self.say_step(
                Some(n),
                Some(a),
                "compensate",
                outcome,
                &json!({"effect": a.effect.map(EffectState::as_str), "dryRun": true}),
                &line,
            )?;
        }
        Ok(Outcome {
            workflow_state: state,
            exit_code: if todo == 0 {
                exit::OK
            } else {
                exit::WORK_REMAINS
            },
            effects: BTreeMap::new(),
            running: 0,
            outcomes: self.outcomes.take(),
        })
    }
}
