//! Workflows and steps: a workflow's state and an operator's resolution of a step, each with
//! its event.

use serde_json::json;

use super::queries::{self, NewEvent};
use super::{Journal, JournalError, Resolution, StepName, WorkflowState};

impl Journal {
    /// Sets a workflow's state; returns whether it changed (an event records it).
    pub fn set_workflow_state(
        &self,
        workflow: &str,
        state: WorkflowState,
    ) -> Result<bool, JournalError> {
        let now = self.now_ms();
        self.write("journal the workflow state", |tx| {
            let e = self.err("journal the workflow state");
            match queries::set_workflow_state(tx, workflow, state, now).map_err(&e)? {
                None => {
                    if queries::workflow_exists(tx, workflow).map_err(&e)? {
                        Ok(false)
                    } else {
                        Err(JournalError::UnknownWorkflow(workflow.to_owned()))
                    }
                }
                Some((wf, old)) => {
                    queries::insert_event(
                        tx,
                        &NewEvent {
                            at: now,
                            workflow: Some(wf),
                            step: None,
                            attempt: None,
                            kind: "workflow-state",
                            from: Some(old.as_str()),
                            to: Some(state.as_str()),
                            detail: None,
                        },
                    )
                    .map_err(&e)?;
                    Ok(true)
                }
            }
        })
    }

    /// Records an operator's decision on a step, with the reason (an event records it).
    pub fn resolve_step(
        &self,
        name: &StepName,
        resolution: Resolution,
        reason: &str,
    ) -> Result<(), JournalError> {
        let now = self.now_ms();
        self.write("journal the resolution", |tx| {
            let e = self.err("journal the resolution");
            let step = queries::step_by_name(tx, name)
                .map_err(&e)?
                .ok_or_else(|| JournalError::UnknownStep(name.to_string()))?;
            queries::set_resolution(tx, step.id, Some(resolution), Some(reason), now)
                .map_err(&e)?;
            let detail = json!({"resolution": resolution.as_str(), "reason": reason});
            queries::insert_event(
                tx,
                &NewEvent {
                    at: now,
                    workflow: None,
                    step: Some(step.id),
                    attempt: None,
                    kind: "resolved",
                    from: None,
                    to: None,
                    detail: Some(&detail),
                },
            )
            .map_err(&e)?;
            Ok(())
        })
    }
}
