//! Intents: new steps and their `INTENT` attempts, committed before anything is sent
//! ([`Journal::create_intents`], [`Journal::add_attempt`]).

use std::collections::HashMap;

use serde_json::json;

use super::queries::{self, NewEvent};
use super::sql::Tx;
use super::{
    Attempt, AttemptState, IntentOutcome, Journal, JournalError, NewAttempt, NewIntent, StepId,
    StepRecord,
};

impl Journal {
    /// Commits new steps and their `INTENT` attempts 1, all in ONE transaction.
    ///
    /// A step that already exists is left untouched and returned as
    /// [`IntentOutcome::Existing`] (the caller compares its definition: same text means a
    /// re-run, different text is a usage error). Each new attempt appends an `intent` event.
    /// If the agent is known to refuse client context ids, the contextId is not stored.
    pub fn create_intents(
        &self,
        intents: &[NewIntent],
    ) -> Result<Vec<IntentOutcome>, JournalError> {
        let now = self.now_ms();
        self.write("commit the intent", |tx| {
            let e = self.err("commit the intent");
            // Per plan, not per step: each workflow's id and each agent's row are read once
            // (nothing else writes them inside this transaction).
            let mut workflows: HashMap<&str, Option<i64>> = HashMap::new();
            let mut agents: HashMap<&str, queries::IntentAgent> = HashMap::new();
            let mut out = Vec::with_capacity(intents.len());
            for intent in intents {
                let name = &intent.spec.name;
                let wf = if let Some(&wf) = workflows.get(name.workflow.as_str()) {
                    wf
                } else {
                    let wf = queries::workflow_id(tx, &name.workflow).map_err(&e)?;
                    workflows.insert(&name.workflow, wf);
                    wf
                };
                let existing = match wf {
                    Some(wf) => queries::step_id_in(tx, wf, &name.step).map_err(&e)?,
                    None => None,
                };
                if let Some(id) = existing {
                    let step = queries::step_by_id(tx, id)
                        .map_err(&e)?
                        .ok_or_else(|| JournalError::UnknownStep(name.to_string()))?;
                    let attempts = queries::attempts_of_step(tx, step.id).map_err(&e)?;
                    out.push(IntentOutcome::Existing(StepRecord { step, attempts }));
                    continue;
                }
                let wf = if let Some(wf) = wf {
                    wf
                } else {
                    let wf = queries::workflow_id_or_insert(tx, &name.workflow, now).map_err(&e)?;
                    workflows.insert(&name.workflow, Some(wf));
                    wf
                };
                let agent = match intent.agent_url.as_deref() {
                    Some(url) => Some(if let Some(found) = agents.get(url) {
                        found.clone()
                    } else {
                        let found = queries::intent_agent(tx, url, now).map_err(&e)?;
                        agents.insert(url, found.clone());
                        found
                    }),
                    None => None,
                };
                let step = queries::insert_step(tx, wf, &intent.spec, None, now).map_err(&e)?;
                let new = NewAttempt {
                    agent_url: intent.agent_url.clone(),
                    token_env: intent.spec.token_env.clone(),
                    token_cmd: intent.spec.token_cmd.clone(),
                    message_id: intent.message_id.clone(),
                    context_id: intent.context_id.clone(),
                    previous: None,
                };
                out.push(IntentOutcome::Created(self.insert_attempt_of(
                    tx,
                    (step, Some(wf)),
                    1,
                    &new,
                    agent.as_ref(),
                    now,
                )?));
            }
            Ok(out)
        })
    }

    pub(super) fn insert_attempt(
        &self,
        tx: &Tx,
        step: StepId,
        number: u32,
        new: &NewAttempt,
        now: i64,
    ) -> Result<Attempt, JournalError> {
        let agent = match &new.agent_url {
            Some(url) => {
                Some(queries::intent_agent(tx, url, now).map_err(self.err("commit the intent"))?)
            }
            None => None,
        };
        self.insert_attempt_of(tx, (step, None), number, new, agent.as_ref(), now)
    }

    /// Inserts an `INTENT` attempt and its `intent` event for a step (and its workflow's id
    /// when known); `agent` is the row of `new.agent_url`.
    fn insert_attempt_of(
        &self,
        tx: &Tx,
        (step, workflow): (StepId, Option<i64>),
        number: u32,
        new: &NewAttempt,
        agent: Option<&queries::IntentAgent>,
        now: i64,
    ) -> Result<Attempt, JournalError> {
        let e = self.err("commit the intent");
        let mut token_env = new.token_env.clone();
        let mut token_cmd = new.token_cmd.clone();
        // No credential named for the step: a registered agent's own one (`agents add
        // --token-env` / `--token-cmd`) is what every send and look of this attempt uses.
        if token_env.is_none() && token_cmd.is_none() {
            token_env = agent.and_then(|a| a.registered_token_env.clone());
            token_cmd = agent.and_then(|a| a.registered_token_cmd.clone());
        }
        let context_id = if agent.is_some_and(|a| a.refuses_context_id) {
            None
        } else {
            new.context_id.clone()
        };
        let row = queries::NewAttemptRow {
            step,
            number,
            agent: agent.map(|a| a.id),
            token_env: token_env.as_deref(),
            token_cmd: token_cmd.as_deref(),
            message_id: &new.message_id,
            context_id: context_id.as_deref(),
            previous: new.previous,
            now,
        };
        let id = queries::insert_attempt(tx, &row).map_err(&e)?;
        let detail = json!({
            "messageId": new.message_id,
            "contextId": context_id,
            "agent": new.agent_url,
            "previousAttempt": new.previous.map(|p| p.0),
        });
        queries::insert_event(
            tx,
            &NewEvent {
                at: now,
                workflow,
                step: Some(step),
                attempt: Some(id),
                kind: "intent",
                from: None,
                to: Some(AttemptState::Intent.as_str()),
                detail: Some(&detail),
            },
        )
        .map_err(&e)?;
        Ok(queries::inserted_attempt(id, &row, new.agent_url.clone()))
    }

    /// Commits a further `INTENT` attempt of a step (numbered after the last one).
    ///
    /// Fails with [`JournalError::BudgetSpent`] when the step has used its `max_attempts`.
    pub fn add_attempt(&self, step: StepId, new: &NewAttempt) -> Result<Attempt, JournalError> {
        let now = self.now_ms();
        self.write("commit the intent", |tx| {
            let e = self.err("commit the intent");
            let s = queries::step_by_id(tx, step)
                .map_err(&e)?
                .ok_or_else(|| JournalError::UnknownStep(format!("#{}", step.0)))?;
            let number = queries::max_attempt_number(tx, step).map_err(&e)? + 1;
            if number > s.spec.max_attempts {
                return Err(JournalError::BudgetSpent {
                    step: s.spec.name.to_string(),
                    max: s.spec.max_attempts,
                });
            }
            let mut new = new.clone();
            if new.token_env.is_none() && new.token_cmd.is_none() {
                new.token_env.clone_from(&s.spec.token_env);
                new.token_cmd.clone_from(&s.spec.token_cmd);
            }
            self.insert_attempt(tx, step, number, &new, now)
        })
    }
}
