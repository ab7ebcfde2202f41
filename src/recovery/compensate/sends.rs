//! Compensations sent (a message through the send path, or a local command): started,
//! resumed, driven to their end.

use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use serde_json::{Value, json};

use super::{Pass, after_compensation, compensation_name, endpoint_of};
use crate::a2a::Credential;
use crate::crash::{self, Point};
use crate::journal::{
    Attempt, AttemptState, Binding, EffectState, FailureKind, IntentOutcome, JournalError,
    NewAttempt, NewIntent, Step, StepName, StepRecord, StepSpec,
};
use crate::placeholders::{self, Fill, Values};
use crate::plan_file::{Compensation, CompensationTarget};
use crate::recovery::event::{Did, EffectBy};
use crate::recovery::lookup;
use crate::recovery::registry::pick_agent;
use crate::recovery::send::{Outgoing, Sender};
use crate::recovery::verify::{self, Found};
use crate::sanitize::inert;

impl Pass<'_> {
    /// Starts a compensation: a new `~compensate` step, or a new attempt of it (budget
    /// permitting), then drives it and verifies.
    pub(super) async fn start_compensation(
        &mut self,
        record: &StepRecord,
        attempt: &Attempt,
        comp: Option<StepRecord>,
    ) -> anyhow::Result<Option<EffectState>> {
        let name = &record.step.spec.name;
        let plan = match self.plan_compensation(record, attempt).await {
            Ok(p) => p,
            Err(why) => {
                return self.set(
                    name,
                    attempt,
                    EffectState::CompensationFailed,
                    EffectBy::Compensate,
                    &why,
                );
            }
        };
        let comp_attempt = match comp {
            None => {
                let intent = NewIntent {
                    agent_url: plan.card_url.clone(),
                    message_id: crate::sim_seam::new_uuid().to_string(),
                    context_id: plan
                        .card_url
                        .as_ref()
                        .map(|_| crate::sim_seam::new_uuid().to_string()),
                    spec: plan.spec.clone(),
                };
                match self
                    .journal
                    .create_compensation_intent(record.step.id, &intent)?
                {
                    IntentOutcome::Created(a) => a,
                    IntentOutcome::Existing(r) => r
                        .latest()
                        .cloned()
                        .context("compensation step without attempt")?,
                }
            }
            Some(comp) => {
                let new = NewAttempt {
                    agent_url: plan.card_url.clone(),
                    message_id: crate::sim_seam::new_uuid().to_string(),
                    context_id: plan
                        .card_url
                        .as_ref()
                        .map(|_| crate::sim_seam::new_uuid().to_string()),
                    previous: comp.latest().map(|a| a.id),
                };
                match self.journal.add_attempt(comp.step.id, &new) {
                    Ok(a) => a,
                    Err(JournalError::BudgetSpent { max, .. }) => {
                        return self.set(
                            name,
                            attempt,
                            EffectState::CompensationFailed,
                            EffectBy::Compensate,
                            &format!(
                                "still there, and its compensation's budget of {max} attempts \
                                 is spent"
                            ),
                        );
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        };
        let comp_name = compensation_name(name);
        crash::at(Point::AfterIntent, &comp_name.to_string());
        self.journal.set_effect(
            attempt.id,
            Some(EffectState::Compensating),
            &json!({"compensation": comp_name.to_string(), "attempt": comp_attempt.number}),
        )?;
        let comp_step = self
            .journal
            .step(&comp_name)?
            .context("the compensation step was just journaled")?;
        self.drive(record, attempt, &comp_step.step, comp_attempt, &plan, false)
            .await
    }

    /// Continues a journaled compensation from where it stands, then verifies.
    pub(super) async fn resume_compensation(
        &mut self,
        record: &StepRecord,
        attempt: &Attempt,
        comp: &StepRecord,
    ) -> anyhow::Result<Option<EffectState>> {
        let comp_attempt = comp
            .latest()
            .cloned()
            .context("compensation without attempt")?;
        let plan = Planned {
            spec: comp.step.spec.clone(),
            card_url: comp_attempt.agent_url.clone(),
            allow_cross_origin: record.step.spec.allow_cross_origin,
            reference_task_ids: references(attempt, comp_attempt.agent_url.as_deref()),
        };
        self.say_step(
            &record.step.spec.name,
            Some(attempt),
            Did::Resuming {
                compensation: &comp.step.spec.name,
                attempt: comp_attempt.number,
                state: comp_attempt.state,
            },
        )?;
        if attempt.effect != Some(EffectState::Compensating) {
            self.journal.set_effect(
                attempt.id,
                Some(EffectState::Compensating),
                &json!({"compensation": comp.step.spec.name.to_string()}),
            )?;
        }
        self.drive(record, attempt, &comp.step, comp_attempt, &plan, true)
            .await
    }

    /// Sends (or runs) the compensation attempt as far as it goes, waits for its task, then
    /// verifies expecting the effect gone.
    async fn drive(
        &mut self,
        record: &StepRecord,
        attempt: &Attempt,
        comp_step: &Step,
        comp_attempt: Attempt,
        plan: &Planned,
        resumed: bool,
    ) -> anyhow::Result<Option<EffectState>> {
        let name = &record.step.spec.name;
        let artifacts = self.journal.artifacts(attempt.id)?;
        let values = Values::of_attempt(name, attempt, &artifacts);
        let mut comp_attempt = comp_attempt;
        match &comp_step.spec.binding {
            Binding::Command(command) => {
                if comp_attempt.state == AttemptState::Intent {
                    if resumed {
                        // It may have run before a crash, unrecorded: run it again only if
                        // the effect is still there.
                        let check = self.verify(&record.step, attempt).await?;
                        if check.found == Found::Absent {
                            self.journal.record_command_result(
                                comp_attempt.id,
                                &json!({"command": command, "status": "unrecorded",
                                        "note": "a2a-recover stopped before recording a run; \
                                                 the effect was verified gone"}),
                            )?;
                            return self.set(
                                name,
                                attempt,
                                EffectState::Compensated,
                                EffectBy::Verify,
                                &check.detail,
                            );
                        }
                    }
                    let ran = self
                        .run_compensation_command(name, comp_step, &comp_attempt, command, &values)
                        .await?;
                    if let Err(why) = ran {
                        // Nothing ran: the attempt stays INTENT (the next run starts it again),
                        // and the effect, still there, needs a human now.
                        return self.set(
                            name,
                            attempt,
                            EffectState::CompensationFailed,
                            EffectBy::Compensate,
                            &why,
                        );
                    }
                }
            }
            Binding::Agent(_) | Binding::Skill(_) => {
                // A send whose outcome is unknown (a 503 or a timeout after the request left)
                // is looked for once more before deciding: found, its task is journaled (the
                // effect may well be gone because of it); proven absent, it is resent with the
                // same messageId. Otherwise a COMPENSATED workflow would keep an INTENT that
                // the agent ran, and no later pass reads a COMPENSATED workflow.
                for _ in 0..2 {
                    if let Err(e) = self
                        .send_compensation(name, comp_step, &comp_attempt, plan)
                        .await
                    {
                        self.problem(&comp_step.spec.name, &comp_attempt, e)?;
                    }
                    comp_attempt = self.journal.attempt(comp_attempt.id)?;
                    if comp_attempt.state != AttemptState::Intent
                        || lookup::never_sent(&comp_attempt)
                    {
                        break;
                    }
                }
                if comp_attempt.state.has_task() && !comp_attempt.state.is_finished() {
                    comp_attempt = self.wait_finished(&comp_attempt, plan).await?;
                }
            }
        }
        let comp_attempt = self.journal.attempt(comp_attempt.id)?;
        // An UNCERTAIN compensation is never resent on its own: decide now (a human acts).
        let finished =
            comp_attempt.state.is_finished() || comp_attempt.state == AttemptState::Uncertain;
        let check = self.verify(&record.step, attempt).await?;
        let state = after_compensation(check.found, finished);
        let detail = format!(
            "{}; compensation {} {}",
            check.detail, comp_step.spec.name.step, comp_attempt.state
        );
        self.set(name, attempt, state, EffectBy::Compensate, &detail)
    }

    /// Runs a compensation command with the effect attempt's values and journals the result;
    /// `Err(why)` when it could not be started: journaled as not run (the attempt stays
    /// `INTENT`), never as delivered.
    async fn run_compensation_command(
        &self,
        name: &StepName,
        comp_step: &Step,
        comp_attempt: &Attempt,
        command: &str,
        values: &Values,
    ) -> anyhow::Result<Result<(), String>> {
        let cwd = comp_step.spec.cwd.as_deref().map(Path::new);
        // Checked before the compensation started (`collision`); the artifacts are terminal.
        let env = values
            .env()
            .context("the artifacts collide; the compensation command is not run")?;
        let run = Box::pin(verify::run_command(
            command,
            cwd,
            &env,
            self.opts.command_timeout,
        ))
        .await;
        if let verify::CommandStatus::SpawnFailed(e) = &run.status {
            let why = crate::a2a::error::one_line(&format!(
                "compensation command could not start: {e}; nothing ran"
            ));
            self.journal
                .record_failure(comp_attempt.id, FailureKind::Send, &why)?;
            self.say_step(
                name,
                Some(comp_attempt),
                Did::CommandNotRun {
                    compensation: &comp_step.spec.name,
                    run: &run,
                },
            )?;
            return Ok(Err(why));
        }
        crash::at(Point::AfterSend, &comp_step.spec.name.to_string());
        crash::at(Point::AfterCompensateSend, &comp_step.spec.name.to_string());
        crash::at(Point::AfterCompensateSend, &name.to_string());
        let outcome = json!({
            "command": command,
            "exitCode": run.code(),
            "status": run.summary(),
            "stdout": crate::a2a::error::truncate_chars(&run.stdout, 2000),
            "stderr": crate::a2a::error::truncate_chars(&run.stderr, 2000),
        });
        self.journal
            .record_command_result(comp_attempt.id, &outcome)?;
        self.say_step(
            name,
            Some(comp_attempt),
            Did::CommandRan {
                compensation: &comp_step.spec.name,
                run: &run,
            },
        )?;
        Ok(Ok(()))
    }

    /// Polls a compensation task until it is finished or `--command-timeout` passes.
    async fn wait_finished(&self, a: &Attempt, plan: &Planned) -> anyhow::Result<Attempt> {
        let mut ep = endpoint_of(self.journal, a, plan.allow_cross_origin).await?;
        let deadline = tokio::time::Instant::now() + self.opts.command_timeout;
        let mut delay = Duration::from_millis(50);
        let mut now = a.clone();
        loop {
            match self.read_task(&now, &mut ep).await? {
                Some(read) => now = read,
                None => return Ok(now),
            }
            if now.state.is_finished()
                || matches!(
                    now.state,
                    AttemptState::InputRequired | AttemptState::AuthRequired
                )
                || tokio::time::Instant::now() + delay > deadline
            {
                return Ok(now);
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(2));
        }
    }

    /// Resolves where and what a compensation sends, before anything is journaled; an error
    /// says why it cannot be done (the effect becomes `compensation-failed`).
    async fn plan_compensation(
        &self,
        record: &StepRecord,
        attempt: &Attempt,
    ) -> Result<Planned, String> {
        let step = &record.step;
        let recipe = match step.spec.compensate.as_ref().map(Compensation::from_json) {
            Some(Ok(r)) => r,
            Some(Err(e)) => return Err(e.to_string()),
            None => return Err("the step declares an effect but no compensate recipe".to_owned()),
        };
        let comp_name = compensation_name(&step.spec.name);
        let metadata = json!({
            "compensates": {"step": step.spec.name.to_string(), "taskId": attempt.task_id}
        });
        match recipe {
            Compensation::Command(command) => Ok(Planned::command(step, comp_name, command)),
            Compensation::Message { text, target } => {
                let (card_url, (token_env, token_cmd), cross) = match target {
                    None => (
                        attempt
                            .agent_url
                            .clone()
                            .ok_or("the step's attempt has no agent to send to")?,
                        attempt.token_source(),
                        step.spec.allow_cross_origin,
                    ),
                    Some(CompensationTarget::Agent(url)) => {
                        let same = attempt.agent_url.as_deref() == Some(url.as_str());
                        let token = if same {
                            attempt.token_source()
                        } else {
                            (None, None)
                        };
                        (url, token, same && step.spec.allow_cross_origin)
                    }
                    Some(CompensationTarget::Skill(skill)) => {
                        let agent = pick_agent(self.journal, &skill, &[])
                            .map_err(|e| e.to_string())?
                            .ok_or_else(|| {
                            format!(
                                "no registered agent advertises skill `{}` for the compensation; \
                                 add one with `a2a-recover agents add URL`",
                                inert(&skill)
                            )
                        })?;
                        let token = (agent.token_env.clone(), agent.token_cmd.clone());
                        (agent.card_url.clone(), token, false)
                    }
                };
                // Checked now; the send reads the one journaled on its attempt.
                Credential::resolve(token_env.as_deref(), token_cmd.as_deref())
                    .await
                    .map_err(|e| e.to_string())?;
                let artifacts = self
                    .journal
                    .artifacts(attempt.id)
                    .map_err(|e| e.to_string())?;
                let values = Values::of_attempt(&step.spec.name, attempt, &artifacts);
                let filled = placeholders::fill(&text, &values, Fill::Text)
                    .map_err(|e| format!("compensation text: {e}"))?;
                let Value::Object(metadata) = metadata else {
                    return Err("metadata is not an object".to_owned());
                };
                Ok(Planned {
                    spec: StepSpec {
                        name: comp_name,
                        text: filled,
                        binding: Binding::Agent(card_url.clone()),
                        token_env,
                        token_cmd,
                        metadata: Some(metadata),
                        max_attempts: step.spec.max_attempts,
                        allow_cross_origin: cross,
                        interface: step.spec.interface,
                        effect: None,
                        compensate: None,
                        verify: None,
                        cwd: None,
                        data: None,
                    },
                    reference_task_ids: references(attempt, Some(&card_url)),
                    card_url: Some(card_url),
                    allow_cross_origin: cross,
                })
            }
        }
    }

    /// Sends a compensation message attempt through the shared send path
    /// (`recovery::send`): under the attempt's lease; an `INTENT` that may have been sent is
    /// looked for first and resent (same messageId) only when the look proves nothing was
    /// created. Crash points: `after-intent`, `after-send` (the `~compensate` step's name) and
    /// `after-compensate-send` (either name).
    async fn send_compensation(
        &self,
        name: &StepName,
        comp_step: &Step,
        a: &Attempt,
        plan: &Planned,
    ) -> anyhow::Result<()> {
        if a.state != AttemptState::Intent {
            return Ok(());
        }
        // The credential journaled on the attempt, chosen for its own agent when its intent
        // was committed.
        let credential =
            Credential::resolve(a.token_env.as_deref(), a.token_cmd.as_deref()).await?;
        let out = Outgoing {
            text: comp_step.spec.text.clone(),
            metadata: comp_step.spec.metadata.clone(),
            data: comp_step.spec.data.clone(),
            credential,
            allow_cross_origin: plan.allow_cross_origin,
            reference_task_ids: plan.reference_task_ids.clone(),
            push: None,
            interface: comp_step.spec.interface,
        };
        let sender = Sender {
            sink: &crate::recovery::Unheard,
            journal: self.journal,
            client: self.client,
            clock: self.io.clock,
            clock_skew: self.opts.clock_skew,
            lease_ttl: self.io.send_lease_ttl,
            sweeps: None,
            card_patience: crate::recovery::send::DEFAULT_CARD_PATIENCE,
        };
        let comp_full = comp_step.spec.name.to_string();
        let sent = sender.deliver(a.id, &out, &comp_full).await?;
        self.say_step(
            name,
            Some(sent.attempt()),
            Did::Sent {
                compensation: &comp_step.spec.name,
                sent: &sent,
            },
        )?;
        Ok(())
    }
}

/// Where and what a compensation sends, resolved before anything is journaled.
/// Returns the `referenceTaskIds` of a compensation message sent to `target`: the undone
/// attempt's task when it goes to that task's own agent, else none.
fn references(undone: &Attempt, target: Option<&str>) -> Vec<String> {
    match (&undone.task_id, target) {
        (Some(task), Some(url)) if undone.agent_url.as_deref() == Some(url) => vec![task.clone()],
        _ => Vec::new(),
    }
}

struct Planned {
    spec: StepSpec,
    card_url: Option<String>,
    allow_cross_origin: bool,
    /// The undone task, named in `referenceTaskIds` when the message goes to its own agent
    /// (another agent does not know that task).
    reference_task_ids: Vec<String>,
}

impl Planned {
    /// The plan of a compensation that runs `command` locally (no agent, no credential).
    fn command(step: &Step, name: StepName, command: String) -> Self {
        Self {
            spec: StepSpec {
                name,
                text: command.clone(),
                binding: Binding::Command(command),
                token_env: None,
                token_cmd: None,
                metadata: None,
                max_attempts: step.spec.max_attempts,
                allow_cross_origin: false,
                interface: crate::a2a::InterfaceChoice::default(),
                effect: None,
                compensate: None,
                verify: None,
                cwd: step.spec.cwd.clone(),
                data: None,
            },
            card_url: None,
            allow_cross_origin: false,
            reference_task_ids: Vec::new(),
        }
    }
}
