//! `compensate --dry-run`: what a real run would do, phase by phase; nothing sent or journaled.

use std::collections::BTreeMap;

use super::{CompStage, FirstMove, Outcome, Pass, effect_attempt, first_move, is_compensation};
use crate::exit;
use crate::journal::{Attempt, StepRecord, WorkflowState};
use crate::plan_file::{Compensation, CompensationTarget};
use crate::recovery::event::{Did, DryMove, Undo};

impl Pass<'_> {
    pub(super) fn dry_run(&mut self, state: WorkflowState) -> anyhow::Result<Outcome> {
        let steps = self.journal.workflow_steps(self.workflow)?;
        self.dry_mark(state)?;
        let (main, comps): (Vec<&StepRecord>, Vec<&StepRecord>) =
            steps.iter().partition(|r| !is_compensation(r));
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
        })
    }

    /// Phase 1: what the workflow's mark would become.
    fn dry_mark(&self, state: WorkflowState) -> anyhow::Result<()> {
        if state == WorkflowState::Compensated {
            self.say(Did::AlreadyCompensated { dry_run: true })?;
        } else if state == WorkflowState::Active {
            self.say(Did::WouldMark)?;
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
                    self.say_step(
                        &r.step.spec.name,
                        Some(a),
                        Did::WouldCancel {
                            task: a.task_id.as_deref(),
                            state: a.state,
                        },
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
        let how = undo_of(r, a);
        let first = first_move(a.effect, stage);
        let collided = match first {
            FirstMove::Skip => None,
            _ => self.collision(&r.step, a)?,
        };
        let then = match first {
            _ if let Some((recipe, collision)) = &collided => {
                DryMove::LeaveUnknown { recipe, collision }
            }
            FirstMove::Skip => DryMove::Skip,
            FirstMove::Verify => DryMove::Verify(how),
            FirstMove::Resume => DryMove::Resume,
            FirstMove::Recheck => DryMove::Recheck(how),
        };
        let todo = !matches!(then, DryMove::Skip);
        self.say_step(
            &r.step.spec.name,
            Some(a),
            Did::WouldCompensate {
                effect: a.effect,
                then,
            },
        )?;
        Ok(todo)
    }
}

/// How the compensation of `r` (whose effect attempt is `a`) would run.
fn undo_of(r: &StepRecord, a: &Attempt) -> Undo {
    match r.step.spec.compensate.as_ref().map(Compensation::from_json) {
        Some(Ok(Compensation::Command(_))) => Undo::Command,
        Some(Ok(Compensation::Message { target: None, .. })) => Undo::Message(a.agent_url.clone()),
        Some(Ok(Compensation::Message {
            target: Some(CompensationTarget::Agent(u)),
            ..
        })) => Undo::Message(Some(u)),
        Some(Ok(Compensation::Message {
            target: Some(CompensationTarget::Skill(s)),
            ..
        })) => Undo::Skill(s),
        _ => Undo::Unreadable,
    }
}
