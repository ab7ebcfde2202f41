//! Compensation tasks still running when their workflow became `COMPENSATED`.
//!
//! A step's effect can be verified gone while the compensation message that undid it is still
//! a running task on the agent (its reads failed, or it was slow): the workflow is
//! `COMPENSATED`, and no other pass reads that task again (`reconcile` leaves compensation
//! steps to `compensate`). Running `compensate` on the workflow again reads each such task once,
//! so the journal ends with the agent's word on it.

use crate::journal::StepName;
use crate::recovery::event::Did;

use super::{COMPENSATE_SUFFIX, Pass, endpoint_of, is_compensation};

impl Pass<'_> {
    /// Reads, once, each compensation task of the workflow the journal holds as running, and
    /// tells what changed.
    pub(super) async fn read_leftover_compensations(&self) -> anyhow::Result<()> {
        for record in self.journal.workflow_steps(self.workflow)? {
            if !is_compensation(&record) {
                continue;
            }
            let Some(a) = record.attempts.last() else {
                continue;
            };
            let Some(task) = a.current_task_id() else {
                continue;
            };
            if a.state.is_finished() {
                continue;
            }
            let name = &record.step.spec.name;
            let mut ep =
                match endpoint_of(self.journal, a, record.step.spec.allow_cross_origin).await {
                    Ok(ep) => ep,
                    Err(error) => {
                        self.say_step(name, Some(a), Did::Failed { error: &error })?;
                        continue;
                    }
                };
            if let Some(now) = self.read_task(a, &mut ep).await?
                && now.state != a.state
            {
                // Told about the step it undid, as the pass's other compensation records are.
                let undone = name.step.strip_suffix(COMPENSATE_SUFFIX).map_or_else(
                    || name.clone(),
                    |step| StepName::from_parts(name.workflow.clone(), step.to_owned()),
                );
                self.say_step(
                    &undone,
                    None,
                    Did::LeftoverRead {
                        compensation: name,
                        task,
                        state: now.state,
                    },
                )?;
            }
        }
        Ok(())
    }
}
