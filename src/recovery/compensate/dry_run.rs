//! `compensate --dry-run`: what a real run would do, phase by phase; nothing sent or journaled.

use std::collections::BTreeMap;

use serde_json::json;

use super::{CompStage, FirstMove, Outcome, Pass, agent_shown, effect_attempt, first_move};
use crate::exit;
use crate::journal::{Attempt, EffectState, StepRecord, WorkflowState};
use crate::plan_file::{Compensation, CompensationTarget};
use crate::sanitize::inert;

impl Pass<'_> {
    pub(super) fn dry_run(&mut self, state: WorkflowState) -> anyhow::Result<Outcome> {
        let steps = self.journal.workflow_steps(self.workflow)?;
        self.dry_mark(state)?;
        let (main, comps): (Vec<&StepRecord>, Vec<&StepRecord>) = steps
            .iter()
            .partition(|r| r.step.compensates.is_none() && !r.step.spec.name.step.contains('~'));
        let mut todo = self.dry_cancel(&main)?;
        for r in main.iter().rev() {
            if self.dry_compensate(r, &comps)? {
                todo += 1;
            }
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

    /// Phase 1: what the workflow's mark would become.
    fn dry_mark(&self, state: WorkflowState) -> anyhow::Result<()> {
        let workflow = self.workflow;
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
        Ok(())
    }

    /// Phase 2: the running attempts that would be cancelled; returns how many.
    fn dry_cancel(&self, main: &[&StepRecord]) -> anyhow::Result<usize> {
        let mut todo = 0usize;
        for r in main {
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
        Ok(todo)
    }

    /// Phase 3, one step's effect: what would be done to it; returns whether anything would.
    fn dry_compensate(&self, r: &StepRecord, comps: &[&StepRecord]) -> anyhow::Result<bool> {
        if r.step.spec.effect.is_none() {
            return Ok(false);
        }
        let Some(a) = effect_attempt(&r.attempts) else {
            return Ok(false);
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
        let how = compensation_shown(r, a);
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
        self.say_step(
            Some(n),
            Some(a),
            "compensate",
            outcome,
            &json!({"effect": a.effect.map(EffectState::as_str), "dryRun": true}),
            &line,
        )?;
        Ok(outcome != "skip")
    }
}

/// How the compensation of `r` (whose effect attempt is `a`) would run, in words.
fn compensation_shown(r: &StepRecord, a: &Attempt) -> String {
    match r.step.spec.compensate.as_ref().map(Compensation::from_json) {
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
    }
}
