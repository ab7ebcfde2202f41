//! The journal's part of the saga (`delegate --plan`, `compensate`): compensation steps,
//! command results and a workflow's steps in delegation order.
//!
//! Same invariants as the rest of the journal: each method is one short transaction, every
//! change goes through [`super::transition`] and appends an event in the same transaction.

use serde_json::{Value, json};

use super::{
    Applied, AttemptId, InspectFilter, IntentOutcome, Journal, JournalError, NewAttempt, NewIntent,
    Observation, StepId, StepRecord, Target, queries,
};

impl Journal {
    /// Commits a compensation step (`STEP~compensate`, linked to the step it undoes) and its
    /// `INTENT` attempt 1 in one transaction.
    ///
    /// A step of that name that already exists is left untouched and returned as
    /// [`IntentOutcome::Existing`]: a second `compensate` run finds the first one's intent and
    /// looks before it resends, exactly like any other step.
    pub fn create_compensation_intent(
        &self,
        compensates: StepId,
        intent: &NewIntent,
    ) -> Result<IntentOutcome, JournalError> {
        let now = self.now_ms();
        self.write("commit the compensation intent", |tx| {
            let e = self.err("commit the compensation intent");
            if let Some(step) = queries::step_by_name(tx, &intent.spec.name).map_err(&e)? {
                let attempts = queries::attempts_of_step(tx, step.id).map_err(&e)?;
                return Ok(IntentOutcome::Existing(StepRecord { step, attempts }));
            }
            let wf =
                queries::workflow_id_or_insert(tx, &intent.spec.name.workflow, now).map_err(&e)?;
            let step =
                queries::insert_step(tx, wf, &intent.spec, Some(compensates), now).map_err(&e)?;
            let new = NewAttempt {
                agent_url: intent.agent_url.clone(),
                message_id: intent.message_id.clone(),
                context_id: intent.context_id.clone(),
                previous: None,
            };
            Ok(IntentOutcome::Created(self.insert_attempt(
                tx,
                (step, &intent.spec),
                1,
                &new,
                now,
            )?))
        })
    }

    /// Records that a command attempt ran (`INTENT` → `REPLIED`; a command creates no task),
    /// with its outcome (exit status, bounded output) as the attempt's `outcome_json`.
    pub fn record_command_result(
        &self,
        id: AttemptId,
        outcome: &Value,
    ) -> Result<Applied, JournalError> {
        self.settle(
            id,
            "journal the command result",
            Observation::DirectReply,
            |next| next.outcome_json = Some(outcome.to_string()),
            json!({"source": "command", "outcome": outcome}),
        )
    }

    /// Returns every step of a workflow with its attempts, in delegation order (`seq`),
    /// compensation steps included; empty for an unknown workflow.
    pub fn workflow_steps(&self, workflow: &str) -> Result<Vec<StepRecord>, JournalError> {
        self.read("read the workflow's steps", |c| {
            let filter = InspectFilter {
                target: Some(Target::Workflow(workflow.to_owned())),
                ..InspectFilter::default()
            };
            let (rows, _) = queries::inspect(c, &filter)?;
            let mut out: Vec<StepRecord> = Vec::new();
            for row in rows {
                if out.iter().any(|r| r.step.spec.name == row.step) {
                    continue;
                }
                if let Some(step) = queries::step_by_name(c, &row.step)? {
                    let attempts = queries::attempts_of_step(c, step.id)?;
                    out.push(StepRecord { step, attempts });
                }
            }
            Ok(out)
        })
    }
}
