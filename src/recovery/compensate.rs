//! The compensation pass (`compensate WORKFLOW`): the saga's undo.
//!
//! Order, which is what makes it safe to run again after any crash:
//! 1. The workflow is marked `COMPENSATING` first: from then on nothing sends its steps.
//! 2. Every attempt still running gets `CancelTask`, journaled first
//!    (`Journal::mark_cancel_requested`). Whatever the answer — a CANCELED task, -32002 because
//!    it completed meanwhile, a timeout — the task is read again with `GetTask` and the journal
//!    decides from what it finds: a task that completed meanwhile has an effect to undo. An
//!    attempt whose cancel was already journaled is read first and cancelled again only if it
//!    still runs (a crash after the first cancel does not send a second one). An `INTENT`
//!    attempt that may have been sent is looked for first (`recovery::lookup`).
//! 3. Every step declared with an effect, in REVERSE order of delegation (`seq`: plan order for
//!    plans, first-intent order for steps delegated one by one), is verified; if the effect
//!    exists or is unknown, its compensation runs as the journaled step `STEP~compensate` (an
//!    A2A message or a command: intent committed, effect `compensating`, then sent), then it is
//!    verified again expecting it gone: `compensated`, else `compensation-failed` (still there
//!    after the compensation finished), `unknown`, or `compensating` (still in flight).
//! 4. All effects `compensated` or `absent`, nothing running → the workflow is `COMPENSATED`
//!    (exit 0); anything `compensating` or still running → exit 3; `compensation-failed` or
//!    `unknown` → exit 4 (4 wins).
//!
//! A second run skips what is `compensated` or `absent`, and resumes a `compensating` effect
//! from its journaled `~compensate` step: an `INTENT` there is looked for on the agent before
//! any resend, exactly like a delegation, so a crash at `after-compensate-send` never sends a
//! second compensation message. A compensation command that ran but was not recorded is
//! verified first and run again only if the effect is still there (commands should be
//! idempotent; docs/sagas.md says so).
//!
//! The decisions are pure functions ([`first_move`], [`after_verify`],
//! [`after_compensation`], [`after_recheck`], [`workflow_outcome`]) tested as tables; the pass
//! around them does the I/O. The caller holds the pass lock (`recovery::lock`); messages go
//! through the shared send path (`recovery::send`), under each attempt's lease.

mod cancel;
mod dry_run;
mod effects;
mod leftover;
mod sends;

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context as _;
use serde_json::Value;

use crate::a2a::TaskView;
use crate::a2a::{A2aClient, A2aError, Credential, Endpoint, origin_of};
use crate::clock::Clock;
use crate::exit;
use crate::journal::Resolution;
use crate::journal::{
    Attempt, AttemptId, AttemptState, EffectState, Journal, Source, StepName, StepRecord,
    WorkflowState,
};
use crate::plan_file::COMPENSATE_SUFFIX;
use crate::recovery::error::RecoveryError;
use crate::recovery::event::{Did, Event, Said, Sink};
use crate::recovery::lookup;
use crate::recovery::verify::Found;

/// How many times a transient read failure is retried.
const READ_ATTEMPTS: u32 = 3;

// ---------------------------------------------------------------------------------------------
// Pure decisions
// ---------------------------------------------------------------------------------------------

/// Where a step's journaled compensation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompStage {
    /// No `STEP~compensate` step yet.
    None,
    /// Its latest attempt is not finished (`INTENT`, running, `UNCERTAIN`).
    InFlight,
    /// Its latest attempt is finished (terminal, `REPLIED`, `REFUSED`, `LOST`).
    Finished,
}

/// What to do first for one effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirstMove {
    /// Nothing: `compensated` or `absent`.
    Skip,
    /// Verify; compensate if it exists or is unknown.
    Verify,
    /// Drive the journaled compensation to its end, then verify expecting it gone.
    Resume,
    /// A compensation finished without proving the effect gone: verify again, and compensate
    /// again (a new attempt, budget permitting) only if it definitely still exists.
    Recheck,
}

/// Decides the first move from the effect state and the compensation's stage.
pub fn first_move(effect: Option<EffectState>, comp: CompStage) -> FirstMove {
    match (effect, comp) {
        (Some(EffectState::Compensated | EffectState::Absent), _) => FirstMove::Skip,
        (_, CompStage::InFlight) | (Some(EffectState::Compensating), CompStage::Finished) => {
            FirstMove::Resume
        }
        (_, CompStage::Finished) => FirstMove::Recheck,
        (_, CompStage::None) => FirstMove::Verify,
    }
}

/// Decides after the first verification: `Some(state)` ends here, `None` means compensate
/// (after recording `verified` or `unknown`).
pub fn after_verify(found: Found) -> (EffectState, bool) {
    match found {
        Found::Absent => (EffectState::Absent, false),
        Found::Exists => (EffectState::Verified, true),
        Found::Unknown => (EffectState::Unknown, true),
    }
}

/// Decides the effect after a compensation: gone → `compensated`; otherwise `compensating`
/// while the compensation is still in flight, else `compensation-failed` (still there) or
/// `unknown` (cannot tell). Unknown is never read as gone.
pub fn after_compensation(found: Found, comp_finished: bool) -> EffectState {
    match (found, comp_finished) {
        (Found::Absent, _) => EffectState::Compensated,
        (Found::Exists | Found::Unknown, false) => EffectState::Compensating,
        (Found::Exists, true) => EffectState::CompensationFailed,
        (Found::Unknown, true) => EffectState::Unknown,
    }
}

/// Decides a recheck after a finished compensation: `Some(state)` records it, `None` means
/// the effect definitely still exists and the compensation is tried again.
pub fn after_recheck(found: Found, held: Option<EffectState>) -> Option<EffectState> {
    match found {
        Found::Absent => Some(EffectState::Compensated),
        Found::Exists => None,
        Found::Unknown => Some(match held {
            Some(EffectState::CompensationFailed) => EffectState::CompensationFailed,
            _ => EffectState::Unknown,
        }),
    }
}

/// Returns the exit code one effect contributes: 0 done, 3 in flight, 4 a human must act.
pub fn effect_exit(effect: Option<EffectState>) -> u8 {
    match effect {
        Some(EffectState::Compensated | EffectState::Absent) => exit::OK,
        Some(EffectState::Compensating) => exit::WORK_REMAINS,
        Some(
            EffectState::CompensationFailed
            | EffectState::Unknown
            | EffectState::Verified
            | EffectState::Claimed,
        )
        | None => exit::NEEDS_HUMAN,
    }
}

/// Decides the workflow's state and the exit code from every effect's final state and how many
/// attempts are still running (or could not be read): `COMPENSATED` only when all effects are
/// `compensated` or `absent` and nothing runs.
pub fn workflow_outcome(effects: &[Option<EffectState>], running: usize) -> (WorkflowState, u8) {
    let mut code = if running > 0 {
        exit::WORK_REMAINS
    } else {
        exit::OK
    };
    for e in effects {
        code = exit::worst(code, effect_exit(*e));
    }
    let state = if code == exit::OK {
        WorkflowState::Compensated
    } else {
        WorkflowState::Compensating
    };
    (state, code)
}

// ---------------------------------------------------------------------------------------------
// The pass
// ---------------------------------------------------------------------------------------------

/// Options of one compensation pass.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Print what would be done; change nothing, locally or remotely.
    pub dry_run: bool,
    /// Timeout of compensation and verification commands, and the longest wait for a
    /// compensation task to finish before it is verified.
    pub command_timeout: Duration,
    /// How far an agent's clock may be behind ours when searching by time.
    pub clock_skew: Duration,
}

/// What a pass did, for the `summary` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The workflow's state at the end.
    pub workflow_state: WorkflowState,
    /// The exit code.
    pub exit_code: u8,
    /// How many effects ended in each state (`null` for none).
    pub effects: BTreeMap<String, u32>,
    /// How many attempts were still running, or could not be read or cancelled.
    pub running: usize,
}

impl Outcome {
    /// A pass that changed nothing: the workflow stays in `state`, exit 0.
    fn untouched(state: WorkflowState) -> Self {
        Self {
            workflow_state: state,
            exit_code: exit::OK,
            effects: BTreeMap::new(),
            running: 0,
        }
    }
}

/// Runs one compensation pass over `workflow` (the caller holds the journal lock), reporting
/// each action to `report`.
pub async fn run(
    io: &Io<'_>,
    journal: &Journal,
    client: &A2aClient,
    workflow: &str,
    opts: &Options,
) -> anyhow::Result<Outcome> {
    let Some(state) = journal.workflow_state(workflow)? else {
        return Err(RecoveryError::UnknownWorkflow(workflow.to_owned()).into());
    };
    let mut pass = Pass {
        io,
        journal,
        client,
        workflow,
        opts,
        running: 0,
        proven_absent: std::cell::RefCell::default(),
        gone: std::cell::Cell::new(false),
    };
    if state == WorkflowState::Active && nothing_to_undo(&journal.workflow_steps(workflow)?) {
        pass.say(Did::NothingToUndo {
            dry_run: opts.dry_run,
        })?;
        return Ok(Outcome::untouched(state));
    }
    if opts.dry_run {
        return pass.dry_run(state);
    }
    if state == WorkflowState::Compensated {
        pass.say(Did::AlreadyCompensated { dry_run: false })?;
        pass.read_leftover_compensations().await?;
        return Ok(Outcome::untouched(state));
    }
    if journal.set_workflow_state(workflow, WorkflowState::Compensating)? {
        pass.say(Did::Marked { from: state })?;
    }
    let steps = journal.workflow_steps(workflow)?;
    let (main, comps): (Vec<StepRecord>, Vec<StepRecord>) =
        steps.into_iter().partition(|r| !is_compensation(r));
    let undecided = pass.cancel_phase(&main).await?;
    let effects = pass.effects_phase(&main, &comps, &undecided).await?;
    pass.finish(&effects)
}

/// Whether a step is a compensation (a message or command that undoes another step).
fn is_compensation(record: &StepRecord) -> bool {
    record.step.compensates.is_some() || record.step.spec.name.step.contains('~')
}

/// Returns whether compensating a workflow would change nothing but its state: no step
/// declares an effect, none has a compensation step yet, and every attempt is finished (none
/// running, none `UNCERTAIN`, no `INTENT` left unsent). Marking such a workflow COMPENSATED
/// would only refuse its later delegations for good.
pub fn nothing_to_undo(steps: &[StepRecord]) -> bool {
    steps.iter().all(|r| {
        !is_compensation(r)
            && r.step.spec.effect.is_none()
            && r.attempts.iter().all(|a| a.state.is_finished())
    })
}

/// Returns the attempt that carries a step's effect: the latest with an effect state, else
/// the last COMPLETED one, else the latest.
pub fn effect_attempt(attempts: &[Attempt]) -> Option<&Attempt> {
    attempts
        .iter()
        .rev()
        .find(|a| a.effect.is_some())
        .or_else(|| {
            attempts
                .iter()
                .rev()
                .find(|a| a.state == AttemptState::Completed)
        })
        .or_else(|| attempts.last())
}

/// Returns whether an operator settled a step whose effect compensate could not undo or read
/// (`resolve --as done|abandoned` after `compensation-failed` or `unknown`): it is skipped and
/// does not count toward the exit code. Any other effect of a resolved step is still undone.
pub fn settled_by_operator(record: &StepRecord) -> bool {
    matches!(
        record.step.resolution,
        Some(Resolution::Done | Resolution::Abandoned)
    ) && matches!(
        effect_attempt(&record.attempts).and_then(|a| a.effect),
        Some(EffectState::CompensationFailed | EffectState::Unknown)
    )
}

/// Why a look for an `INTENT` attempt found nothing to go on.
enum Unlooked {
    /// The last send may still be in flight until then: look again later.
    InFlight(chrono::DateTime<chrono::Utc>),
    /// The look failed (journaled by it, or standing on the attempt's `needs-human` event).
    Failed(A2aError),
}

/// Returns whether an attempt provably created nothing remotely: never sent, or refused.
fn created_nothing(a: &Attempt) -> bool {
    (a.state == AttemptState::Intent && lookup::never_sent(a)) || a.state == AttemptState::Refused
}

/// Returns the compensation step's name, `WORKFLOW/STEP~compensate`.
pub fn compensation_name(step: &StepName) -> StepName {
    StepName::from_parts(
        step.workflow.clone(),
        format!("{}{COMPENSATE_SUFFIX}", step.step),
    )
}

/// Builds the endpoint of a journaled attempt (where it was sent) with its credential (a
/// token command runs on a blocking thread).
async fn endpoint_of(
    journal: &Journal,
    a: &Attempt,
    allow_cross_origin: bool,
) -> anyhow::Result<Endpoint> {
    let url = a
        .interface_url
        .clone()
        .context("the attempt has no journaled endpoint")?;
    let card = a.agent_url.clone().context("the attempt has no agent")?;
    let credential = Credential::resolve(a.token_env.as_deref(), a.token_cmd.as_deref())
        .await
        .map_err(RecoveryError::CredentialGone)?;
    let wire = crate::recovery::send::journaled_wire(journal, a)?;
    Ok(Endpoint {
        url,
        tenant: a.tenant.clone(),
        binding: wire.binding,
        card_origin: origin_of(&card)?,
        credential,
        placement: wire.placement,
        allow_cross_origin: a.may_cross_origin(allow_cross_origin),
    })
}

/// What a compensation pass works with besides the journal and the client.
pub struct Io<'a> {
    /// The real clock, for journal times and looks by time.
    pub clock: &'a dyn Clock,
    /// How long a send's lease is held before another process may break it.
    pub send_lease_ttl: Duration,
    /// Where the pass tells what it does.
    pub sink: &'a dyn Sink,
}

struct Pass<'a> {
    io: &'a Io<'a>,
    journal: &'a Journal,
    client: &'a A2aClient,
    workflow: &'a str,
    opts: &'a Options,
    /// Attempts still running, unreadable, or not cancellable this pass.
    running: usize,
    /// `INTENT` attempts that may have been sent, proven absent on their agent this pass: they
    /// created nothing, and the workflow sends nothing any more.
    proven_absent: std::cell::RefCell<std::collections::HashSet<AttemptId>>,
    /// An attempt needs a human that this pass cannot help: its interface left its agent's
    /// card, which offers nothing we speak, or its send was answered with a task id no URL can
    /// hold (both journaled as such); the pass exits 4.
    gone: std::cell::Cell<bool>,
}

impl Pass<'_> {
    /// Phase 2: cancels every step's running attempts; returns the steps whose effect cannot
    /// be decided yet (still running, or unreadable).
    async fn cancel_phase(
        &mut self,
        main: &[StepRecord],
    ) -> anyhow::Result<Vec<crate::journal::StepId>> {
        let mut undecided = Vec::new();
        for record in main {
            if !self.cancel_step(record).await? {
                undecided.push(record.step.id);
            }
        }
        Ok(undecided)
    }

    /// Phase 3: every declared effect, newest step first: verified, compensated, verified gone.
    async fn effects_phase(
        &mut self,
        main: &[StepRecord],
        comps: &[StepRecord],
        undecided: &[crate::journal::StepId],
    ) -> anyhow::Result<Vec<Option<EffectState>>> {
        let mut effects = Vec::new();
        #[cfg_attr(
            not(feature = "sim"),
            expect(unused_mut, reason = "a plant reorders it")
        )]
        let mut order: Vec<&StepRecord> = main.iter().rev().collect();
        // A defect planted for the simulator only (`scripts/sim --plant compensate-forward`).
        #[cfg(feature = "sim")]
        if crate::sim_seam::planted(crate::sim_seam::Plant::CompensateForward) {
            order.reverse();
        }
        // A newer step whose effect is not decided yet: older effects wait for it, so that
        // effects are undone newest first even when it turns out to have one.
        let mut newer_undecided: Option<StepName> = None;
        for record in order {
            if record.step.spec.effect.is_none() {
                continue;
            }
            // Re-read: the cancel phase may have changed the attempts.
            let fresh = self
                .journal
                .step(&record.step.spec.name)?
                .with_context(|| format!("step `{}` vanished", record.step.spec.name))?;
            let comp = comps
                .iter()
                .find(|c| c.step.compensates == Some(fresh.step.id))
                .map(|c| c.step.spec.name.clone());
            if undecided.contains(&fresh.step.id) {
                // Still running (or unreadable): its effect may yet appear. `running` makes the
                // exit 3 and keeps the workflow COMPENSATING.
                self.say_step(
                    &fresh.step.spec.name,
                    effect_attempt(&fresh.attempts),
                    Did::StillRunning,
                )?;
                newer_undecided.get_or_insert_with(|| fresh.step.spec.name.clone());
                continue;
            }
            if let Some(newer) = &newer_undecided
                && !settled_by_operator(&fresh)
            {
                self.say_step(
                    &fresh.step.spec.name,
                    effect_attempt(&fresh.attempts),
                    Did::WaitsForNewer { newer },
                )?;
                continue;
            }
            if settled_by_operator(&fresh) {
                let a = effect_attempt(&fresh.attempts);
                self.say_step(
                    &fresh.step.spec.name,
                    a,
                    Did::Resolved {
                        effect: a.and_then(|a| a.effect),
                        reason: fresh.step.resolution_reason.as_deref(),
                    },
                )?;
                continue;
            }
            effects.push(self.compensate_step(&fresh, comp.as_ref()).await?);
        }
        Ok(effects)
    }

    /// Phase 4: the workflow's state and the exit code from every effect.
    fn finish(&self, effects: &[Option<EffectState>]) -> anyhow::Result<Outcome> {
        let (new_state, mut code) = workflow_outcome(effects, self.running);
        if self.gone.get() {
            code = exit::worst(code, exit::NEEDS_HUMAN);
        }
        if new_state == WorkflowState::Compensated {
            self.journal
                .set_workflow_state(self.workflow, WorkflowState::Compensated)?;
            self.say(Did::WorkflowCompensated)?;
        } else {
            self.say(Did::StaysCompensating { exit_code: code })?;
        }
        let mut counts = BTreeMap::new();
        for e in effects {
            *counts
                .entry(e.map_or("null", EffectState::as_str).to_owned())
                .or_default() += 1;
        }
        Ok(Outcome {
            workflow_state: new_state,
            exit_code: code,
            effects: counts,
            running: self.running,
        })
    }

    /// Tells the sink what the pass did about its workflow.
    fn say(&self, did: Did<'_>) -> anyhow::Result<()> {
        self.tell(None, None, did)
    }

    /// Tells the sink what the pass did about a step (and the attempt, if any).
    fn say_step(
        &self,
        step: &StepName,
        attempt: Option<&Attempt>,
        did: Did<'_>,
    ) -> anyhow::Result<()> {
        self.tell(Some(step), attempt, did)
    }

    fn tell(
        &self,
        step: Option<&StepName>,
        attempt: Option<&Attempt>,
        did: Did<'_>,
    ) -> anyhow::Result<()> {
        self.io.sink.event(Event::Compensated(&Said {
            workflow: self.workflow,
            step,
            attempt: attempt.map(|a| a.number),
            did,
        }))
    }

    /// Applies a task the agent returned; returns the attempt as journaled now.
    fn apply(&self, a: &Attempt, raw: &Value, source: Source) -> anyhow::Result<Attempt> {
        let view =
            TaskView::from_value(raw, raw.to_string()).context("the agent's task has no id")?;
        self.journal.apply_task(a.id, &view, source)?;
        Ok(self.journal.attempt(a.id)?)
    }
}

#[cfg(test)]
mod tests;
