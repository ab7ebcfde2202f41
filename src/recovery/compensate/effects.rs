//! Phase 3 of the compensation pass: verifying each effect, in reverse order, and compensating it.

use std::path::Path;

use anyhow::Context as _;
use serde_json::json;

use super::{
    CompStage, FirstMove, Pass, after_recheck, after_verify, created_nothing, effect_attempt,
    first_move,
};
use crate::journal::{Attempt, EffectState, Step, StepName, StepRecord};
use crate::placeholders::{self, Fill, Values};
use crate::plan_file::{Compensation, Verification};
use crate::recovery::event::{Did, EffectBy};
use crate::recovery::verify::{self, Check, Found};

impl Pass<'_> {
    /// Verifies and compensates one step's effect; returns its final state.
    pub(super) async fn compensate_step(
        &mut self,
        record: &StepRecord,
        comp_name: Option<&StepName>,
    ) -> anyhow::Result<Option<EffectState>> {
        let name = &record.step.spec.name;
        let Some(attempt) = effect_attempt(&record.attempts).cloned() else {
            return Ok(None);
        };
        let comp = match comp_name {
            Some(n) => self.journal.step(n)?,
            None => None,
        };
        let stage = match comp.as_ref().and_then(StepRecord::latest) {
            None => CompStage::None,
            Some(c) if c.state.is_finished() => CompStage::Finished,
            Some(_) => CompStage::InFlight,
        };
        match first_move(attempt.effect, stage) {
            FirstMove::Skip => {
                self.say_step(
                    name,
                    Some(&attempt),
                    Did::Skipped {
                        effect: attempt.effect,
                    },
                )?;
                Ok(attempt.effect)
            }
            FirstMove::Verify => {
                if record.attempts.iter().all(created_nothing) {
                    return self.set(
                        name,
                        &attempt,
                        EffectState::Absent,
                        EffectBy::Verify,
                        "never sent (or refused): nothing was created",
                    );
                }
                // A send whose outcome was unknown, proven absent above: nothing to undo (and
                // no task id for the verification or the compensation to name).
                let absent = self.proven_absent.borrow().clone();
                if record
                    .attempts
                    .iter()
                    .all(|a| created_nothing(a) || absent.contains(&a.id))
                {
                    return self.set(
                        name,
                        &attempt,
                        EffectState::Absent,
                        EffectBy::Verify,
                        "its send was looked for and proven absent: nothing was created",
                    );
                }
                if let Some((what, c)) = self.collision(&record.step, &attempt)? {
                    return self.collided(name, &attempt, what, &c);
                }
                let check = self.verify(&record.step, &attempt).await?;
                let (state, compensate) = after_verify(check.found);
                self.set(name, &attempt, state, EffectBy::Verify, &check.detail)?;
                if !compensate {
                    return Ok(Some(state));
                }
                let attempt = self.journal.attempt(attempt.id)?;
                self.start_compensation(record, &attempt, comp).await
            }
            FirstMove::Resume => {
                let comp = comp.context("no compensation step to resume")?;
                if let Some((what, c)) = self.collision(&record.step, &attempt)? {
                    return self.collided(name, &attempt, what, &c);
                }
                self.resume_compensation(record, &attempt, &comp).await
            }
            FirstMove::Recheck => {
                if let Some((what, c)) = self.collision(&record.step, &attempt)? {
                    return self.collided(name, &attempt, what, &c);
                }
                let check = self.verify(&record.step, &attempt).await?;
                if let Some(state) = after_recheck(check.found, attempt.effect) {
                    self.set(name, &attempt, state, EffectBy::Verify, &check.detail)
                } else {
                    self.say_step(
                        name,
                        Some(&attempt),
                        Did::StillThere {
                            detail: &check.detail,
                        },
                    )?;
                    self.start_compensation(record, &attempt, comp).await
                }
            }
        }
    }

    /// Journals an effect state and says so.
    pub(super) fn set(
        &self,
        name: &StepName,
        attempt: &Attempt,
        state: EffectState,
        by: EffectBy,
        detail: &str,
    ) -> anyhow::Result<Option<EffectState>> {
        self.journal
            .set_effect(attempt.id, Some(state), &json!({"detail": detail}))?;
        self.say_step(name, Some(attempt), Did::Effect { by, state, detail })?;
        Ok(Some(state))
    }

    /// Returns what two or more of the attempt's artifacts collide on, if the step's verify or
    /// compensate recipe reads it (a command reads every artifact variable; a URL or a text its
    /// own `{artifact:NAME}`s), and which recipe that is.
    pub(super) fn collision(
        &self,
        step: &Step,
        attempt: &Attempt,
    ) -> anyhow::Result<Option<(&'static str, placeholders::Collision)>> {
        let artifacts = self.journal.artifacts(attempt.id)?;
        let values = Values::of_attempt(&step.spec.name, attempt, &artifacts);
        let of_text = |t: &str, mode| match placeholders::fill(t, &values, mode) {
            Err(placeholders::FillError::Collision(c)) => Some(c),
            _ => None,
        };
        let verify = match step.spec.verify.as_ref().map(Verification::from_json) {
            Some(Ok(Verification::Command(_))) => values.env().err().map(|c| ("verify command", c)),
            Some(Ok(Verification::Url(t))) => of_text(&t, Fill::Url).map(|c| ("verify URL", c)),
            _ => None,
        };
        let compensate = || match step.spec.compensate.as_ref().map(Compensation::from_json) {
            Some(Ok(Compensation::Command(_))) => {
                values.env().err().map(|c| ("compensation command", c))
            }
            Some(Ok(Compensation::Message { text, .. })) => {
                of_text(&text, Fill::Text).map(|c| ("compensation text", c))
            }
            _ => None,
        };
        Ok(verify.or_else(compensate))
    }

    /// Leaves the effect `unknown` for a human, running nothing: two or more artifacts map to
    /// what `what` (a verify or compensate recipe) reads, so which value it would act on is the
    /// agent's choice. The attempt's error names them, and `inspect --pending` lists it.
    fn collided(
        &self,
        name: &StepName,
        attempt: &Attempt,
        what: &str,
        collision: &placeholders::Collision,
    ) -> anyhow::Result<Option<EffectState>> {
        let ids = collision.artifact_ids();
        let why = crate::a2a::error::one_line(&format!("{what} not run: {collision}"));
        self.journal.record_collision(attempt.id, &why, &ids)?;
        self.say_step(
            name,
            Some(attempt),
            Did::Collided {
                why: &why,
                artifacts: &ids,
            },
        )?;
        Ok(Some(EffectState::Unknown))
    }

    /// Runs the step's verification recipe with its attempt's values.
    pub(super) async fn verify(&self, step: &Step, attempt: &Attempt) -> anyhow::Result<Check> {
        let recipe = match step.spec.verify.as_ref().map(Verification::from_json) {
            Some(Ok(r)) => r,
            Some(Err(e)) => return Ok(Check::found(Found::Unknown, e.to_string())),
            None => {
                return Ok(Check::found(
                    Found::Unknown,
                    "the step declares an effect but no verify recipe".to_owned(),
                ));
            }
        };
        let artifacts = self.journal.artifacts(attempt.id)?;
        let values = Values::of_attempt(&step.spec.name, attempt, &artifacts);
        let cwd = step.spec.cwd.as_deref().map(Path::new);
        Ok(Box::pin(verify::check(
            self.client,
            &recipe,
            &values,
            cwd,
            self.opts.command_timeout,
        ))
        .await)
    }
}
