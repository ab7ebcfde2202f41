//! Intents: new steps and their `INTENT` attempts, committed before anything is sent
//! ([`Journal::create_intents`], [`Journal::add_attempt`]).

use std::collections::{HashMap, HashSet};

use serde_json::json;

use super::queries::{self, NewEvent};
use super::sql::Tx;
use super::{
    Attempt, AttemptState, CredentialSource, IntentOutcome, Journal, JournalError, NewAttempt,
    NewIntent, StepId, StepRecord, StepSpec,
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
            // A workflow this transaction created holds only the steps it inserted (their
            // names): no statement asks whether another step of it exists.
            let mut created: HashMap<i64, HashSet<&str>> = HashMap::new();
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
                    Some(wf)
                        if created
                            .get(&wf)
                            .is_some_and(|steps| !steps.contains(name.step.as_str())) =>
                    {
                        None
                    }
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
                    created.insert(wf, HashSet::new());
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
                if let Some(steps) = created.get_mut(&wf) {
                    steps.insert(&name.step);
                }
                let new = NewAttempt {
                    agent_url: intent.agent_url.clone(),
                    message_id: intent.message_id.clone(),
                    context_id: intent.context_id.clone(),
                    previous: None,
                };
                out.push(IntentOutcome::Created(self.insert_attempt_of(
                    tx,
                    (step, Some(wf)),
                    (1, &intent.spec),
                    &new,
                    agent.as_ref(),
                    now,
                )?));
            }
            Ok(out)
        })
    }

    /// Inserts attempt `number` of step `step` (defined by `spec`) and its `intent` event.
    pub(super) fn insert_attempt(
        &self,
        tx: &Tx,
        (step, spec): (StepId, &StepSpec),
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
        self.insert_attempt_of(tx, (step, None), (number, spec), new, agent.as_ref(), now)
    }

    /// Inserts an `INTENT` attempt and its `intent` event for a step (and its workflow's id
    /// when known); `agent` is the row of `new.agent_url`.
    ///
    /// The attempt's credential is chosen here, once, and every later call on the attempt uses
    /// it ([`CredentialSource::choose`]): the step's own credential goes only to the agent it
    /// was given for (its first attempt's); any other agent gets its registered credential
    /// (`agents add --token-env` / `--token-cmd`), or none.
    fn insert_attempt_of(
        &self,
        tx: &Tx,
        (step, workflow): (StepId, Option<i64>),
        (number, spec): (u32, &StepSpec),
        new: &NewAttempt,
        agent: Option<&queries::IntentAgent>,
        now: i64,
    ) -> Result<Attempt, JournalError> {
        let e = self.err("commit the intent");
        let for_owner = match agent {
            None => false,
            Some(_) if number == 1 => true,
            Some(a) => queries::first_attempt_agent(tx, step).map_err(&e)? == Some(a.id),
        };
        let (source, (token_env, token_cmd)) = CredentialSource::choose(
            (spec.token_env.clone(), spec.token_cmd.clone()),
            for_owner,
            agent.map_or((None, None), |a| {
                (
                    a.registered_token_env.clone(),
                    a.registered_token_cmd.clone(),
                )
            }),
        );
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
            credential_source: source,
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
            "credentialSource": source.as_str(),
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
            self.insert_attempt(tx, (step, &s.spec), number, new, now)
        })
    }
}
