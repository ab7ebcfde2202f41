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

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use serde_json::{Value, json};

use crate::a2a::TaskView;
use crate::a2a::{
    A2aClient, A2aError, Credential, Endpoint, WELL_KNOWN_CARD_PATH, origin_of, redact_url,
    retry_read,
};
use crate::clock::Clock;
use crate::crash::{self, Point};
use crate::exit;
use crate::journal::Resolution;
use crate::journal::{
    Attempt, AttemptId, AttemptState, Binding, EffectState, FailureKind, INTERFACE_GONE,
    IntentOutcome, Journal, JournalError, NeedsHuman, NewAttempt, NewIntent, Source, Step,
    StepName, StepRecord, StepSpec, WorkflowState,
};
use crate::placeholders::{self, Fill, Values};
use crate::plan_file::{COMPENSATE_SUFFIX, Compensation, CompensationTarget, Verification};
use crate::recovery::error::{RecoveryError, Stopped};
use crate::recovery::event::{Event, Said, Sink};
use crate::recovery::lookup::{self, LookHow, Looked};
use crate::recovery::moved;
use crate::recovery::registry::pick_agent;
use crate::recovery::send::{Outgoing, SendKind, Sender, Sent};
use crate::recovery::verify::{self, Check, Found};
use crate::sanitize::inert;

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
    /// How many `action` records had each outcome.
    pub outcomes: BTreeMap<String, u32>,
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
        outcomes: std::cell::RefCell::default(),
        proven_absent: std::cell::RefCell::default(),
        gone: std::cell::Cell::new(false),
    };
    if state == WorkflowState::Active && nothing_to_undo(&journal.workflow_steps(workflow)?) {
        let would = if opts.dry_run { " would be" } else { " was" };
        pass.say(
            None,
            "workflow",
            "nothing-to-undo",
            &json!({"dryRun": opts.dry_run}),
            &format!(
                "{workflow} has no declared effect, no running attempt and no unsent intent: \
                 nothing to undo; nothing{would} changed (it stays ACTIVE)."
            ),
        )?;
        return Ok(Outcome {
            workflow_state: state,
            exit_code: exit::OK,
            effects: BTreeMap::new(),
            running: 0,
            outcomes: pass.outcomes.take(),
        });
    }
    if opts.dry_run {
        return pass.dry_run(state);
    }
    if state == WorkflowState::Compensated {
        pass.say(
            None,
            "workflow",
            state.as_str(),
            &json!({}),
            &format!("{workflow} is already COMPENSATED; nothing to do."),
        )?;
        return Ok(Outcome {
            workflow_state: state,
            exit_code: exit::OK,
            effects: BTreeMap::new(),
            running: 0,
            outcomes: pass.outcomes.take(),
        });
    }
    if journal.set_workflow_state(workflow, WorkflowState::Compensating)? {
        pass.say(
            None,
            "workflow",
            "COMPENSATING",
            &json!({"from": state.as_str()}),
            &format!("{workflow} is COMPENSATING: none of its steps is sent any more."),
        )?;
    }
    let steps = journal.workflow_steps(workflow)?;
    let (main, comps): (Vec<StepRecord>, Vec<StepRecord>) = steps
        .into_iter()
        .partition(|r| r.step.compensates.is_none() && !r.step.spec.name.step.contains('~'));
    let undecided = pass.cancel_phase(&main).await?;
    let effects = pass.effects_phase(&main, &comps, &undecided).await?;
    pass.finish(&effects)
}

/// Returns whether compensating a workflow would change nothing but its state: no step
/// declares an effect, none has a compensation step yet, and every attempt is finished (none
/// running, none `UNCERTAIN`, no `INTENT` left unsent). Marking such a workflow COMPENSATED
/// would only refuse its later delegations for good.
pub fn nothing_to_undo(steps: &[StepRecord]) -> bool {
    steps.iter().all(|r| {
        r.step.compensates.is_none()
            && !r.step.spec.name.step.contains('~')
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

fn agent_shown(card_url: &str) -> String {
    let base = card_url
        .strip_suffix(WELL_KNOWN_CARD_PATH)
        .map_or_else(|| card_url.to_owned(), |b| format!("{b}/"));
    inert(&redact_url(&base))
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
    /// Actions per outcome, for the summary.
    outcomes: std::cell::RefCell<BTreeMap<String, u32>>,
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
        for record in main.iter().rev() {
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
                    Some(&fresh.step.spec.name),
                    effect_attempt(&fresh.attempts),
                    "wait",
                    "running",
                    &json!({}),
                    &format!(
                        "{}: still running or unreadable; its effect is decided on the next run.",
                        fresh.step.spec.name
                    ),
                )?;
                continue;
            }
            if settled_by_operator(&fresh) {
                let a = effect_attempt(&fresh.attempts);
                let e = a.and_then(|a| a.effect).map_or("null", EffectState::as_str);
                self.say_step(
                    Some(&fresh.step.spec.name),
                    a,
                    "skip",
                    "resolved",
                    &json!({"effect": e, "reason": fresh.step.resolution_reason}),
                    &format!(
                        "{}: {e}, resolved by an operator ({}); not compensated again.",
                        fresh.step.spec.name,
                        fresh
                            .step
                            .resolution_reason
                            .as_deref()
                            .unwrap_or("no reason")
                    ),
                )?;
                continue;
            }
            effects.push(self.compensate_step(&fresh, comp.as_ref()).await?);
        }
        Ok(effects)
    }

    /// Phase 4: the workflow's state and the exit code from every effect.
    fn finish(&self, effects: &[Option<EffectState>]) -> anyhow::Result<Outcome> {
        let workflow = self.workflow;
        let (new_state, mut code) = workflow_outcome(effects, self.running);
        if self.gone.get() {
            code = exit::worst(code, exit::NEEDS_HUMAN);
        }
        if new_state == WorkflowState::Compensated {
            self.journal
                .set_workflow_state(self.workflow, WorkflowState::Compensated)?;
            self.say(
                None,
                "workflow",
                "COMPENSATED",
                &json!({}),
                &format!("{workflow} is COMPENSATED: every effect is compensated or absent."),
            )?;
        } else {
            let what = if code == exit::NEEDS_HUMAN {
                format!(
                    "an effect is unverified or a compensation failed; see `a2a-recover inspect \
                     {workflow} --pending`"
                )
            } else {
                format!("work is in flight; run `a2a-recover compensate {workflow}` again later")
            };
            self.say(
                None,
                "workflow",
                "COMPENSATING",
                &json!({"exitCode": code}),
                &format!("{workflow} stays COMPENSATING: {what}."),
            )?;
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
            outcomes: self.outcomes.take(),
        })
    }

    /// Prints an `action` record (JSON) or a line (human).
    fn say(
        &self,
        attempt: Option<&Attempt>,
        action: &str,
        outcome: &str,
        detail: &Value,
        line: &str,
    ) -> anyhow::Result<()> {
        self.say_step(None, attempt, action, outcome, detail, line)
    }

    fn say_step(
        &self,
        step: Option<&StepName>,
        attempt: Option<&Attempt>,
        action: &str,
        outcome: &str,
        detail: &Value,
        line: &str,
    ) -> anyhow::Result<()> {
        *self
            .outcomes
            .borrow_mut()
            .entry(outcome.to_owned())
            .or_default() += 1;
        self.io.sink.event(Event::Compensated(&Said {
            workflow: self.workflow,
            step: step.map(|s| s.step.as_str()),
            attempt: attempt.map(|a| a.number),
            action,
            outcome,
            detail,
            line,
        }))
    }

    /// Applies a task the agent returned; returns the attempt as journaled now.
    fn apply(&self, a: &Attempt, raw: &Value, source: Source) -> anyhow::Result<Attempt> {
        let view =
            TaskView::from_value(raw, raw.to_string()).context("the agent's task has no id")?;
        self.journal.apply_task(a.id, &view, source)?;
        Ok(self.journal.attempt(a.id)?)
    }

    // -----------------------------------------------------------------------------------------
    // Phase 2: cancel what runs
    // -----------------------------------------------------------------------------------------

    /// Cancels every unfinished attempt of a step; returns false when one still runs (or could
    /// not be read), so its effect cannot be decided yet.
    async fn cancel_step(&mut self, record: &StepRecord) -> anyhow::Result<bool> {
        let mut decided = true;
        for a in &record.attempts {
            if a.state.is_finished() || a.state == AttemptState::Uncertain {
                continue;
            }
            let done = self
                .cancel_attempt(&record.step, a)
                .await
                .or_else(|e| self.problem(&record.step.spec.name, a, e))?;
            if !done {
                decided = false;
                self.running += 1;
            }
        }
        Ok(decided)
    }

    /// Reports an error that stops the work on one attempt (the pass goes on).
    fn problem(&self, step: &StepName, a: &Attempt, e: anyhow::Error) -> anyhow::Result<bool> {
        if e.downcast_ref::<Stopped>().is_some() || e.downcast_ref::<JournalError>().is_some() {
            return Err(e);
        }
        self.io.sink.event(Event::Problem(&e))?;
        self.say_step(
            Some(step),
            Some(a),
            "error",
            "error",
            &json!({"error": format!("{e:#}")}),
            &format!("{step}: {e:#}"),
        )?;
        Ok(false)
    }

    #[expect(
        clippy::too_many_lines,
        reason = "one attempt cancelled, read back and decided; each branch ends in its journaled outcome"
    )]
    async fn cancel_attempt(&self, step: &Step, a: &Attempt) -> anyhow::Result<bool> {
        let name = &step.spec.name;
        let mut a = a.clone();
        if a.state == AttemptState::Intent {
            if lookup::never_sent(&a) {
                self.say_step(
                    Some(name),
                    Some(&a),
                    "cancel",
                    "never-sent",
                    &json!({}),
                    &format!("{name}: never sent; it will not be sent now."),
                )?;
                return Ok(true);
            }
            let found = match self.look(&a, step.spec.allow_cross_origin).await? {
                Ok(found) => found,
                Err(Unlooked::InFlight(until)) => {
                    let until = crate::clock::rfc3339(until);
                    self.say_step(
                        Some(name),
                        Some(&a),
                        "look",
                        "in-flight",
                        &json!({"until": until}),
                        &format!(
                            "{name}: its agent holds no task for it yet, but its send may still \
                             be in flight until {until}; run again later."
                        ),
                    )?;
                    return Ok(false);
                }
                Err(Unlooked::Failed(e)) if e.is_bad_task_id() => {
                    // Its send was answered with a task no request can name: it can be neither
                    // found nor cancelled, and its effect is not decided here.
                    self.gone.set(true);
                    let a = self.journal.attempt(a.id)?;
                    self.say_step(
                        Some(name),
                        Some(&a),
                        "look",
                        "error",
                        &json!({"error": a.error,
                               "needsHuman": {"cause": NeedsHuman::BAD_TASK_ID,
                                              "reason": a.error}}),
                        &format!(
                            "{name}: its agent answered the send with a task id no URL can \
                             hold, so the task can be neither read nor cancelled; a human \
                             decides (`a2a-recover resolve {name} --as done|abandoned`)."
                        ),
                    )?;
                    return Ok(false);
                }
                Err(Unlooked::Failed(_)) => {
                    self.say_step(
                        Some(name),
                        Some(&a),
                        "look",
                        "error",
                        &json!({"error": a.error}),
                        &format!(
                            "{name}: could not search the agent for its task; run again later."
                        ),
                    )?;
                    return Ok(false);
                }
            };
            a = found;
            if a.state == AttemptState::Intent {
                self.proven_absent.borrow_mut().insert(a.id);
            }
            if a.state.is_finished() || a.state == AttemptState::Intent {
                return Ok(true);
            }
        }
        let task = a
            .current_task_id()
            .map(str::to_owned)
            .context("a running attempt has no task id")?;
        let mut ep = endpoint_of(self.journal, &a, step.spec.allow_cross_origin).await?;
        if a.cancel_requested_at.is_some() {
            // A previous run asked already: read first, ask again only if it still runs.
            match self.read_task(&a, &mut ep).await? {
                Some(now) if now.state.is_finished() => {
                    self.say_step(
                        Some(name),
                        Some(&now),
                        "cancel",
                        now.state.as_str(),
                        &json!({"taskId": task, "alreadyRequested": true}),
                        &format!(
                            "{name}: task {} is {} (cancel asked by an earlier run).",
                            task, now.state
                        ),
                    )?;
                    return Ok(true);
                }
                Some(now) => a = now,
                None => return Ok(false),
            }
        } else {
            self.journal.mark_cancel_requested(a.id)?;
        }
        let tid = task.as_str();
        let cancel = |ep: Endpoint| async move { self.client.cancel_task(&ep, tid).await };
        let Some(answer) = self.moving(&a, &mut ep, cancel).await? else {
            self.say_step(
                Some(name),
                Some(&a),
                "cancel",
                INTERFACE_GONE,
                &json!({"taskId": task}),
                &format!(
                    "{name}: task {task} cannot be canceled: its interface left the agent's \
                     card, which offers nothing a2a-recover speaks; see `a2a-recover inspect \
                     {} --pending`.",
                    name.workflow
                ),
            )?;
            return Ok(false);
        };
        let cancel_detail = match &answer {
            Ok(t) => {
                a = self.apply(&a, &t.raw, Source::Cancel)?;
                json!({"answer": "task"})
            }
            Err(e) => json!({"answer": e.summary(), "code": e.rpc_code()}),
        };
        // After any answer, read the task again and decide from what it says.
        let Some(now) = self.read_task(&a, &mut ep).await? else {
            self.say_step(
                Some(name),
                Some(&a),
                "cancel",
                "unreadable",
                &json!({"taskId": task, "cancel": cancel_detail}),
                &format!("{name}: cancel sent for task {task}, but the task could not be read."),
            )?;
            return Ok(false);
        };
        let finished = now.state.is_finished();
        let note = match now.state {
            AttemptState::Completed => {
                "; it completed first, so its effect is undone below".to_owned()
            }
            AttemptState::Canceled => String::new(),
            _ if finished => String::new(),
            _ => format!(
                "; it still runs, run `a2a-recover compensate {}` again later",
                name.workflow
            ),
        };
        self.say_step(
            Some(name),
            Some(&now),
            "cancel",
            now.state.as_str(),
            &json!({"taskId": task, "cancel": cancel_detail}),
            &format!("{name}: cancel task {task}: {}{note}.", now.state),
        )?;
        Ok(finished)
    }

    /// Reads a task with `GetTask` and journals it; `None` when it cannot be read now.
    /// The attempt's interface is re-chosen (`ep` with it) when it left the agent's card.
    async fn read_task(&self, a: &Attempt, ep: &mut Endpoint) -> anyhow::Result<Option<Attempt>> {
        let task = a
            .current_task_id()
            .map(str::to_owned)
            .context("no task id")?;
        let tid = task.as_str();
        let get = |ep: Endpoint| async move {
            retry_read(READ_ATTEMPTS, || self.client.get_task(&ep, tid, Some(0))).await
        };
        let Some(read) = self.moving(a, ep, get).await? else {
            return Ok(None);
        };
        match read {
            Ok(t) => Ok(Some(self.apply(a, &t.raw, Source::GetTask)?)),
            Err(e) if e.is_task_not_found() => {
                self.journal.mark_lost(a.id, &e.summary())?;
                Ok(Some(self.journal.attempt(a.id)?))
            }
            Err(e) => {
                self.journal
                    .record_failure(a.id, FailureKind::Read, &e.summary())?;
                Ok(None)
            }
        }
    }

    /// Runs `call` at the attempt's interface, re-chosen (and `ep` with it) when it left the
    /// agent's card; `None` when the card offers nothing we speak (journaled: a human decides).
    async fn moving<T, F, Fut>(
        &self,
        a: &Attempt,
        ep: &mut Endpoint,
        call: F,
    ) -> anyhow::Result<Option<Result<T, A2aError>>>
    where
        F: Fn(Endpoint) -> Fut,
        Fut: std::future::Future<Output = Result<T, A2aError>>,
    {
        Ok(
            match moved::read(self.client, self.journal, a, ep, moved::Mode::Journal, call).await? {
                moved::Reread::Read { result, moved } => {
                    if let Some(to) = moved {
                        *ep = to;
                    }
                    Some(result)
                }
                moved::Reread::Gone(reason) => {
                    moved::journal_gone(self.journal, a.id, &reason)?;
                    self.gone.set(true);
                    None
                }
            },
        )
    }

    /// Looks for what a possibly-sent `INTENT` created; `Err(Some(until))` when nothing is
    /// found yet but the last send may still be in flight until then, `Err(None)` when the
    /// look could not run.
    async fn look(
        &self,
        a: &Attempt,
        allow_cross_origin: bool,
    ) -> anyhow::Result<Result<Attempt, Unlooked>> {
        let ep = endpoint_of(self.journal, a, allow_cross_origin).await?;
        let how = LookHow {
            client: self.client,
            endpoint: &ep,
            clock: self.io.clock,
            clock_skew: self.opts.clock_skew,
            sweeps: None,
            no_id: "the agent's task has no id",
        };
        let found = lookup::journal_found(self.journal, a.id);
        Ok(
            match lookup::look_and_journal(self.journal, a, how, found).await? {
                Looked::Found((now, _)) | Looked::Uncertain(now, _) => Ok(now),
                Looked::Absent => Ok(a.clone()),
                // The last send may still be in flight: look again later.
                Looked::InFlight(until) => Err(Unlooked::InFlight(until)),
                Looked::Failed(e) => Err(Unlooked::Failed(e)),
            },
        )
    }

    // -----------------------------------------------------------------------------------------
    // Phase 3: verify and compensate each effect, in reverse order
    // -----------------------------------------------------------------------------------------

    /// Verifies and compensates one step's effect; returns its final state.
    async fn compensate_step(
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
                let e = attempt.effect.map_or("null", EffectState::as_str);
                self.say_step(
                    Some(name),
                    Some(&attempt),
                    "skip",
                    e,
                    &json!({}),
                    &format!("{name}: {e}; nothing to do."),
                )?;
                Ok(attempt.effect)
            }
            FirstMove::Verify => {
                if record.attempts.iter().all(created_nothing) {
                    return self.set(
                        name,
                        &attempt,
                        EffectState::Absent,
                        "verify",
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
                        "verify",
                        "its send was looked for and proven absent: nothing was created",
                    );
                }
                if let Some((what, c)) = self.collision(&record.step, &attempt)? {
                    return self.collided(name, &attempt, what, &c);
                }
                let check = self.verify(&record.step, &attempt).await?;
                let (state, compensate) = after_verify(check.found);
                self.set(name, &attempt, state, "verify", &check.detail)?;
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
                    self.set(name, &attempt, state, "verify", &check.detail)
                } else {
                    self.say_step(
                        Some(name),
                        Some(&attempt),
                        "verify",
                        "exists",
                        &json!({"detail": check.detail}),
                        &format!(
                            "{name}: still there after its compensation ({}); compensating \
                                 again.",
                            check.detail
                        ),
                    )?;
                    self.start_compensation(record, &attempt, comp).await
                }
            }
        }
    }

    /// Journals an effect state and says so.
    fn set(
        &self,
        name: &StepName,
        attempt: &Attempt,
        state: EffectState,
        action: &str,
        detail: &str,
    ) -> anyhow::Result<Option<EffectState>> {
        self.journal
            .set_effect(attempt.id, Some(state), &json!({"detail": detail}))?;
        self.say_step(
            Some(name),
            Some(attempt),
            action,
            state.as_str(),
            &json!({"detail": detail}),
            &format!("{name}: {state} ({detail})."),
        )?;
        Ok(Some(state))
    }

    /// Returns what two or more of the attempt's artifacts collide on, if the step's verify or
    /// compensate recipe reads it (a command reads every artifact variable; a URL or a text its
    /// own `{artifact:NAME}`s), and which recipe that is.
    fn collision(
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
            Some(name),
            Some(attempt),
            "verify",
            EffectState::Unknown.as_str(),
            &json!({"detail": why, "collision": ids}),
            &format!(
                "{name}: unknown ({why}); neither verified nor compensated: a human compares the \
                 artifacts, undoes the effect by hand if it exists, and resolves the step."
            ),
        )?;
        Ok(Some(EffectState::Unknown))
    }

    /// Runs the step's verification recipe with its attempt's values.
    async fn verify(&self, step: &Step, attempt: &Attempt) -> anyhow::Result<Check> {
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

    /// Starts a compensation: a new `~compensate` step, or a new attempt of it (budget
    /// permitting), then drives it and verifies.
    async fn start_compensation(
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
                    "compensate",
                    &why,
                );
            }
        };
        let comp_attempt = match comp {
            None => {
                let intent = NewIntent {
                    agent_url: plan.card_url.clone(),
                    message_id: uuid::Uuid::new_v4().to_string(),
                    context_id: plan
                        .card_url
                        .as_ref()
                        .map(|_| uuid::Uuid::new_v4().to_string()),
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
                    message_id: uuid::Uuid::new_v4().to_string(),
                    context_id: plan
                        .card_url
                        .as_ref()
                        .map(|_| uuid::Uuid::new_v4().to_string()),
                    previous: comp.latest().map(|a| a.id),
                };
                match self.journal.add_attempt(comp.step.id, &new) {
                    Ok(a) => a,
                    Err(JournalError::BudgetSpent { max, .. }) => {
                        return self.set(
                            name,
                            attempt,
                            EffectState::CompensationFailed,
                            "compensate",
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
    async fn resume_compensation(
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
            Some(&record.step.spec.name),
            Some(attempt),
            "resume",
            comp_attempt.state.as_str(),
            &json!({"compensation": comp.step.spec.name.to_string(), "attempt": comp_attempt.number}),
            &format!(
                "{}: resuming its compensation ({}, attempt {}: {}).",
                record.step.spec.name, comp.step.spec.name, comp_attempt.number, comp_attempt.state
            ),
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
                                "verify",
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
                            "compensate",
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
        self.set(name, attempt, state, "compensate", &detail)
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
                Some(name),
                Some(comp_attempt),
                "compensate",
                "not-run",
                &json!({"compensation": comp_step.spec.name.to_string(), "status": run.summary()}),
                &format!("{name}: {why}."),
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
            Some(name),
            Some(comp_attempt),
            "compensate",
            "ran",
            &json!({"compensation": comp_step.spec.name.to_string(), "status": run.summary()}),
            &format!("{name}: compensation command ran ({}).", run.summary()),
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
    #[expect(
        clippy::too_many_lines,
        reason = "the crash-safe send (intent, look, endpoint, send, record) in the order that makes it safe"
    )]
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
            credential,
            allow_cross_origin: plan.allow_cross_origin,
            reference_task_ids: plan.reference_task_ids.clone(),
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
        let agent = agent_shown(a.agent_url.as_deref().unwrap_or("-"));
        let sent = sender
            .deliver(a.id, &out, SendKind::LookFirst, &comp_full)
            .await?;
        let now = sent.attempt().clone();
        let task = inert(now.task_id.as_deref().unwrap_or("-"));
        let (action, outcome, line) = match &sent {
            Sent::Task(_) | Sent::Replied(_) => (
                "compensate",
                now.state.as_str().to_owned(),
                format!("{name}: compensation sent to {agent} ({}).", now.state),
            ),
            Sent::Found(_) => (
                "look",
                "found".to_owned(),
                format!(
                    "{name}: found the compensation sent before as task {task} ({}); nothing \
                     resent.",
                    now.state
                ),
            ),
            Sent::Settled(_) => (
                "compensate",
                now.state.as_str().to_owned(),
                format!(
                    "{name}: its compensation was settled meanwhile ({}).",
                    now.state
                ),
            ),
            Sent::Refused(_, e) => (
                "compensate",
                "REFUSED".to_owned(),
                format!("{name}: the compensation was refused: {}.", e.summary()),
            ),
            Sent::Uncertain(_, reason) => (
                "look",
                "UNCERTAIN".to_owned(),
                format!(
                    "{name}: cannot tell whether the compensation sent before arrived ({}); \
                     nothing resent.",
                    inert(reason)
                ),
            ),
            Sent::InFlight(_, until) => (
                "look",
                "in-flight".to_owned(),
                format!(
                    "{name}: its compensation sent before is not on the agent yet, but may \
                     still be in flight until {}; nothing resent, run again later.",
                    crate::clock::rfc3339(*until)
                ),
            ),
            Sent::Failed { stage, error, .. } => (
                "compensate",
                format!("{}-failed", stage.as_str()),
                format!(
                    "{name}: the compensation's {} failed ({}); it is looked for before any \
                     resend.",
                    stage.as_str(),
                    error.summary()
                ),
            ),
            Sent::NeedsHuman { stage, why, .. } => (
                "compensate",
                format!("{}-failed", stage.as_str()),
                format!(
                    "{name}: the compensation needs a human: {}.",
                    inert(&why.reason)
                ),
            ),
            Sent::Busy(_, lease) => (
                "compensate",
                "busy".to_owned(),
                format!(
                    "{name}: another process (pid {} on {}) is sending its compensation; run \
                     again later.",
                    lease.pid,
                    inert(&lease.host)
                ),
            ),
        };
        self.say_step(
            Some(name),
            Some(&now),
            action,
            &outcome,
            &json!({"compensation": comp_full, "taskId": now.task_id, "agent": now.agent_url,
                    "error": now.error}),
            &line,
        )?;
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Dry run
    // -----------------------------------------------------------------------------------------

    #[expect(
        clippy::too_many_lines,
        reason = "what a real run would do, phase by phase, as one listing"
    )]
    fn dry_run(&mut self, state: WorkflowState) -> anyhow::Result<Outcome> {
        let workflow = self.workflow;
        let steps = self.journal.workflow_steps(workflow)?;
        let mut todo = 0usize;
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
        let (main, comps): (Vec<&StepRecord>, Vec<&StepRecord>) = steps
            .iter()
            .partition(|r| r.step.compensates.is_none() && !r.step.spec.name.step.contains('~'));
        for r in &main {
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
        for r in main.iter().rev() {
            if r.step.spec.effect.is_none() {
                continue;
            }
            let Some(a) = effect_attempt(&r.attempts) else {
                continue;
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
            let how = match r.step.spec.compensate.as_ref().map(Compensation::from_json) {
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
            };
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
            if outcome != "skip" {
                todo += 1;
            }
            self.say_step(
                Some(n),
                Some(a),
                "compensate",
                outcome,
                &json!({"effect": a.effect.map(EffectState::as_str), "dryRun": true}),
                &line,
            )?;
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
            },
            card_url: None,
            allow_cross_origin: false,
            reference_task_ids: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests;
