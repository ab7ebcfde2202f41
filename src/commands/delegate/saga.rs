//! The saga's part of `delegate`: `--plan FILE` and the effect flags of a single step.
//!
//! Kept apart from the single-step flow so both evolve without stepping on each other; it
//! reuses that flow's reporting (`Delegation::sent`) for every step, and its sends
//! (`Delegation::continue_with`) for re-runs.
//!
//! `--plan` order: read and validate the WHOLE file (every problem printed as
//! `FILE:LINE:COLUMN: …`, exit 2, nothing journaled); refuse a workflow that is no longer
//! `ACTIVE`; diff the plan against what is journaled for the workflow (a difference is refused
//! with the diff, exit 2); resolve skills to registered agents; commit ALL intents in ONE
//! transaction (`Journal::create_intents`); then send the new steps as one batch
//! (`recovery::send::Batch`: the first leases and endpoints in one small transaction, the
//! rest claimed on the writer thread ahead of their sends, at most [`PLAN_CONCURRENCY`] sends
//! at a time, answers group-committed). Running the same plan again
//! commits nothing new and resends only what is still `INTENT`, one step at a time through the
//! one-attempt path, after the look.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::task::Poll;

use anyhow::Context as _;
use futures_util::StreamExt as _;
use serde_json::json;

use super::{DelegateArgs, Delegation, Request};
use crate::a2a::{A2aClient, Credential};
use crate::commands::report::SendSteps;
use crate::commands::util::hints::HintText as _;
use crate::context::Context;
use crate::crash::{self, Point};
use crate::error::CliError;
use crate::exit;
use crate::journal::{
    Attempt, AttemptId, AttemptState, Binding, IntentOutcome, Journal, NewIntent, Step, StepSpec,
    WorkflowState,
};
use crate::plan_file::{self, Compensation, Verification};
use crate::recovery::registry::{credential_source, pick_agent};
use crate::recovery::send::{Batch, BatchItem, Commit, Ready, Sender, Sent};
use crate::sanitize::inert;

/// How many plan steps are sent at the same time.
pub(super) const PLAN_CONCURRENCY: usize = 8;

/// Fills a single step's effect, compensation and verification from the flags; commands run
/// in the current directory, journaled as an absolute path.
pub(super) fn apply_effect_flags(args: &DelegateArgs, spec: &mut StepSpec) -> Result<(), CliError> {
    if !args.effect {
        return Ok(());
    }
    let compensate = match (&args.compensate, &args.compensate_cmd) {
        (Some(text), None) if !text.trim().is_empty() => Compensation::Message {
            text: text.clone(),
            target: None,
        },
        (None, Some(cmd)) => {
            plan_file::check_command_text(cmd).map_err(|why| {
                CliError::usage(format!("--compensate-cmd: {why}"))
                    .hint("commands get the step's values as environment variables only")
            })?;
            Compensation::Command(cmd.clone())
        }
        _ => {
            return Err(CliError::usage("--effect needs one non-empty compensation")
                .hint("add --compensate TEXT (a message to the agent) or --compensate-cmd CMD"));
        }
    };
    let verify = match (&args.verify_cmd, &args.verify_url) {
        (Some(cmd), None) => {
            plan_file::check_command_text(cmd).map_err(|why| {
                CliError::usage(format!("--verify-cmd: {why}"))
                    .hint("commands get the step's values as environment variables only")
            })?;
            Verification::Command(cmd.clone())
        }
        (None, Some(url)) => {
            plan_file::check_url(url).map_err(|why| {
                CliError::usage(format!("--verify-url: {why}"))
                    .hint("give an http(s) URL; placeholders such as {task_id} are filled")
            })?;
            Verification::Url(url.clone())
        }
        _ => {
            return Err(CliError::usage("--effect needs one verification")
                .hint("add --verify-cmd CMD or --verify-url URL"));
        }
    };
    let has_command = matches!(compensate, Compensation::Command(_))
        || matches!(verify, Verification::Command(_));
    if has_command {
        let dir = std::env::current_dir()
            .and_then(|d| d.canonicalize())
            .map_err(|e| {
                CliError::usage(format!("cannot read the current directory: {e}"))
                    .hint("commands run in the directory delegate was started in")
            })?;
        spec.cwd = Some(dir.display().to_string());
    }
    spec.effect = Some(plan_file::effect_json());
    spec.compensate = Some(compensate.to_json());
    spec.verify = Some(verify.to_json());
    Ok(())
}

/// Refuses a re-run whose effect, compensation or verification differs from the journaled one
/// (the directory commands run in is the journaled one and is not compared).
pub(super) fn check_same_effect(journaled: &Step, req: &StepSpec) -> Result<(), CliError> {
    let j = &journaled.spec;
    let differs = if j.effect.is_some() != req.effect.is_some() {
        Some("--effect")
    } else if j.compensate != req.compensate {
        Some("compensation")
    } else if j.verify != req.verify {
        Some("verification")
    } else {
        None
    };
    match differs {
        None => Ok(()),
        Some(what) => Err(CliError::usage(format!(
            "step `{}` is already journaled with a different {what}",
            j.name
        ))
        .hint(format!(
            "a journaled step keeps its definition; use a new step name, or see it with \
             `a2a-recover inspect {}`",
            j.name
        ))),
    }
}

/// Refuses to send anything for a workflow that is `COMPENSATING` or `COMPENSATED`.
pub(super) fn refuse_if_not_active(journal: &Journal, workflow: &str) -> anyhow::Result<()> {
    match journal.workflow_state(workflow)? {
        None | Some(WorkflowState::Active) => Ok(()),
        Some(state) => Err(CliError::usage(format!(
            "workflow `{workflow}` is {state}: nothing is sent for it any more"
        ))
        .hint("a compensated workflow stays undone; delegate under a new workflow name")
        .into()),
    }
}

/// Runs `delegate --plan FILE`.
pub(super) async fn run_plan(
    ctx: &Context,
    args: &DelegateArgs,
    file: &Path,
) -> anyhow::Result<u8> {
    refuse_plan_flags(args)?;
    let shown = file.display().to_string();
    let plan = read_plan(ctx, file, &shown)?;
    let journal = ctx.open_journal_for_writing()?;
    refuse_if_not_active(&journal, &plan.workflow)?;
    refuse_if_plan_differs(ctx, &journal, &plan, &shown)?;
    // Everything that can be refused is refused before the one commit.
    let mut planned = Vec::with_capacity(plan.steps.len());
    for spec in &plan.steps {
        planned.push(resolve_step(&journal, spec, &shown).await?);
    }
    let intents: Vec<NewIntent> = planned
        .iter()
        .map(|(spec, card_url, _)| NewIntent {
            spec: spec.clone(),
            agent_url: Some(card_url.clone()),
            message_id: crate::sim_seam::new_uuid().to_string(),
            context_id: Some(crate::sim_seam::new_uuid().to_string()),
        })
        .collect();
    let outcomes = journal
        .create_intents(&intents)
        .context("failed to commit the plan's intents")?;
    let client = A2aClient::new(ctx.client_config()).context("failed to set up the HTTP client")?;
    ctx.out.begin("delegate")?;
    // Every intent is committed and nothing is sent yet.
    for (intent, outcome) in intents.iter().zip(&outcomes) {
        if matches!(outcome, IntentOutcome::Created(_)) {
            crash::at(Point::AfterIntent, &intent.spec.name.to_string());
        }
    }
    // `--push` wins over a step's `push`.
    let flag = args.push.as_deref().map(super::push_arg).transpose()?;
    let push = plan
        .push
        .iter()
        .map(|p| match &flag {
            Some(f) => Ok(Some(f.clone())),
            None => p.as_deref().map(super::push_arg).transpose(),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let requests = requests_for(args, planned, outcomes, push).await?;
    let Tally {
        code,
        totals,
        first_error,
    } = send_requests(ctx, &journal, &client, args, &requests).await?;
    // An agent that asked to wait longer than we do: later passes skip it until then.
    crate::recovery::not_before::journal_fresh(&client, &journal)?;
    if let Some(e) = first_error {
        return Err(e);
    }
    if ctx.out.is_json() {
        ctx.out.record(&json!({
            "type": "summary",
            "command": "delegate",
            "workflow": plan.workflow,
            "plan": PathBuf::from(file).display().to_string(),
            "outcomes": totals,
            "exitCode": code,
        }))?;
    }
    Ok(code)
}

/// Refuses the single-step flags that `--plan` cannot honour.
fn refuse_plan_flags(args: &DelegateArgs) -> Result<(), CliError> {
    if args.follow {
        return Err(
            CliError::usage("--follow cannot be combined with --plan").hint(
                "follow the whole workflow afterwards with `a2a-recover reconcile WORKFLOW \
             --follow-for DURATION`, or one step with `a2a-recover follow WORKFLOW/STEP`",
            ),
        );
    }
    if args.allow_cross_origin {
        return Err(
            CliError::usage("--allow-cross-origin cannot be combined with --plan")
                .hint("delegate that step on its own with --agent and --allow-cross-origin"),
        );
    }
    Ok(())
}

/// Reads and validates the whole plan file, printing every problem as `FILE:LINE:COLUMN: …`.
fn read_plan(ctx: &Context, file: &Path, shown: &str) -> anyhow::Result<plan_file::Plan> {
    let source = fs_err::read_to_string(file).map_err(|e| {
        CliError::usage(format!("cannot read the plan: {e}")).hint("give the path of a TOML plan")
    })?;
    let dir = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .canonicalize()
        .map_err(|e| CliError::usage(format!("cannot resolve the plan's directory: {e}")))?;
    match plan_file::parse(&source, &dir, &|var| std::env::var(var).ok()) {
        Ok(plan) => Ok(plan),
        Err(issues) => {
            for issue in &issues {
                ctx.out
                    .error_report(&format!("{}:{}\n", inert(shown), inert(&issue.to_string())));
            }
            Err(CliError::usage(format!(
                "invalid plan `{shown}`: {} problem(s); nothing was journaled",
                issues.len()
            ))
            .hint("fix each problem at the line and column shown, then run again")
            .into())
        }
    }
}

/// Refuses a plan that differs from the steps already journaled for its workflow, printing
/// the differences.
fn refuse_if_plan_differs(
    ctx: &Context,
    journal: &Journal,
    plan: &plan_file::Plan,
    shown: &str,
) -> anyhow::Result<()> {
    let journaled: Vec<StepSpec> = journal
        .workflow_steps(&plan.workflow)?
        .into_iter()
        .map(|r| r.step.spec)
        .collect();
    let has_steps = journaled
        .iter()
        .any(|s| !plan_file::is_compensation_step(&s.name));
    if !has_steps {
        return Ok(());
    }
    let lines = plan_file::diff(plan, &journaled);
    if lines.is_empty() {
        return Ok(());
    }
    for line in &lines {
        ctx.out.error_report(&format!("  {}\n", inert(line)));
    }
    Err(CliError::usage(format!(
        "the plan `{shown}` differs from what is journaled for workflow `{}` ({} \
         difference(s) above); nothing was changed",
        plan.workflow,
        lines.len()
    ))
    .hint(
        "a journaled workflow keeps its definition: run the plan as journaled, or use a \
         new workflow name",
    )
    .into())
}

/// Pairs each planned step with its intent's outcome as a request to send.
async fn requests_for(
    args: &DelegateArgs,
    planned: Vec<(StepSpec, String, Option<Credential>)>,
    outcomes: Vec<IntentOutcome>,
    push: Vec<Option<String>>,
) -> anyhow::Result<Vec<(Request, IntentOutcome)>> {
    let mut requests = Vec::with_capacity(outcomes.len());
    for (((spec, card_url, credential), outcome), push) in
        planned.into_iter().zip(outcomes).zip(push)
    {
        // An existing step goes on with the agent of its latest attempt (re-delegation may
        // have moved it) and the credential journaled on that attempt: the step's own only at
        // the agent it was given for.
        let (card_url, credential) = match &outcome {
            IntentOutcome::Created(_) => (card_url, credential),
            IntentOutcome::Existing(record) => match record.latest() {
                Some(latest) => {
                    let url = latest.agent_url.clone().unwrap_or(card_url);
                    let credential = credential_of(
                        (latest.token_env.as_deref(), latest.token_cmd.as_deref()),
                        &spec,
                    )
                    .await?;
                    (url, credential)
                }
                None => (card_url, credential),
            },
        };
        requests.push((
            Request {
                spec,
                card_url,
                credential,
                clock_skew: args.clock_skew,
                card_patience: args.card_patience,
                push,
                no_push: args.no_push,
            },
            outcome,
        ));
    }
    Ok(requests)
}

/// Sends every request: new steps through the batch send (grouped commits); re-runs, and the
/// new steps the batch leaves to the one-attempt path, one by one.
async fn send_requests(
    ctx: &Context,
    journal: &Journal,
    client: &A2aClient,
    args: &DelegateArgs,
    requests: &[(Request, IntentOutcome)],
) -> anyhow::Result<Tally> {
    let mut tally = Tally::default();
    let mut fresh = Vec::new();
    let mut one_by_one = Vec::new();
    for (req, outcome) in requests {
        match outcome {
            IntentOutcome::Created(attempt) => fresh.push((req, attempt.clone())),
            IntentOutcome::Existing(_) => one_by_one.push((req, Work::Continue(outcome.clone()))),
        }
    }
    for (req, attempt) in send_batch(ctx, journal, client, args, &fresh, &mut tally).await? {
        one_by_one.push((req, Work::Send(attempt)));
    }
    let results: Vec<anyhow::Result<(u8, BTreeMap<String, u32>)>> =
        futures_util::stream::iter(one_by_one.into_iter().map(|(req, work)| async move {
            let mut d = Delegation {
                ctx,
                journal,
                client,
                req,
                outcomes: BTreeMap::new(),
                in_plan: true,
            };
            let code = match work {
                Work::Continue(outcome) => d.continue_with(outcome).await?,
                Work::Send(attempt) => d.leased(attempt, false).await?,
            };
            Ok((code, d.outcomes))
        }))
        .buffer_unordered(PLAN_CONCURRENCY)
        .collect()
        .await;
    for r in results {
        tally.add(r);
    }
    Ok(tally)
}

/// What is left to do for a step after the batch: continue from its intent's outcome (a
/// re-run), or send its new attempt through the one-attempt path.
enum Work {
    Continue(IntentOutcome),
    Send(Attempt),
}

/// The exit code, the outcome counts and the first error of the steps done so far.
#[derive(Default)]
struct Tally {
    code: u8,
    totals: BTreeMap<String, u32>,
    first_error: Option<anyhow::Error>,
}

impl Tally {
    fn add(&mut self, r: anyhow::Result<(u8, BTreeMap<String, u32>)>) {
        match r {
            Ok((c, outcomes)) => {
                self.code = exit::worst(self.code, c);
                for (k, v) in outcomes {
                    *self.totals.entry(k).or_default() += v;
                }
            }
            Err(e) => {
                self.first_error.get_or_insert(e);
            }
        }
    }
}

/// Sends the plan's new steps as one batch (`recovery::send::Batch`): each lease claimed and
/// each endpoint journaled in a commit durable before its send (the first few in one
/// transaction here, the rest on the writer thread), at most [`PLAN_CONCURRENCY`] sends at a time,
/// and the answers that arrived while a group commit ran journaled together in the next one.
/// Each step's records are printed once its outcome is journaled. Returns the steps the batch
/// leaves to the one-attempt path (an endpoint journaled by another process, an unreadable
/// card).
async fn send_batch<'r>(
    ctx: &Context,
    journal: &Journal,
    client: &A2aClient,
    args: &DelegateArgs,
    fresh: &[(&'r Request, Attempt)],
    tally: &mut Tally,
) -> anyhow::Result<Vec<(&'r Request, Attempt)>> {
    if fresh.is_empty() {
        return Ok(Vec::new());
    }
    let delegation = |req| Delegation {
        ctx,
        journal,
        client,
        req,
        outcomes: BTreeMap::new(),
        in_plan: true,
    };
    let (items, by_id) = batch_items(fresh, delegation).await?;
    let steps = by_id
        .iter()
        .map(|(&id, &i)| (id, &fresh[i].0.spec.name))
        .collect();
    let sink = SendSteps::new(&ctx.out, steps);
    let sender = Sender {
        sink: &sink,
        journal,
        client,
        clock: ctx.clock.as_ref(),
        clock_skew: args.clock_skew,
        lease_ttl: ctx.send_lease_ttl,
        sweeps: None,
        card_patience: args.card_patience,
    };
    let mut batch = Batch::new(&sender);
    let mut left = Vec::new();
    let mut to_send = Vec::new();
    for (i, ready) in batch.claim(&items).await?.into_iter().enumerate() {
        match ready {
            Ready::Send(attempt) => to_send.push((i, attempt)),
            Ready::Deliver => left.push((fresh[i].0, fresh[i].1.clone())),
            Ready::Done(sent) => settle(delegation(fresh[i].0), Ok(sent), tally).await,
        }
    }
    let (batch, items) = (&batch, &items);
    let mut sends = futures_util::stream::iter(to_send)
        .map(|(i, attempt)| async move { (i, batch.send(attempt, &items[i]).await) })
        .buffer_unordered(PLAN_CONCURRENCY);
    // The group commit in progress (on the writer thread): sends go on while it waits for the
    // disk, and every answer that arrives meanwhile goes into the next one.
    let mut commit: Option<Commit> = None;
    let mut sending = true;
    loop {
        if commit.is_none() {
            commit = batch.start_commit()?;
        }
        if commit.is_none() && !sending {
            break;
        }
        let event = std::future::poll_fn(|cx| {
            if let Some(c) = commit.as_mut()
                && c.poll_done(cx).is_ready()
            {
                return Poll::Ready(None);
            }
            if sending && let Poll::Ready(next) = sends.poll_next_unpin(cx) {
                return Poll::Ready(Some(next));
            }
            Poll::Pending
        })
        .await;
        let done = match event {
            Some(Some((i, sent))) => match sent {
                Ok(Ok(answer)) => {
                    batch.push(answer);
                    continue;
                }
                Ok(Err(sent)) => vec![(i, Ok(sent))],
                Err(e) => vec![(i, Err(e))],
            },
            Some(None) => {
                sending = false;
                continue;
            }
            None => {
                let finished = commit.take().context("a group commit vanished")?;
                batch
                    .finish(finished)?
                    .into_iter()
                    .filter_map(|(id, sent)| by_id.get(&id).map(|&i| (i, sent)))
                    .collect()
            }
        };
        for (i, sent) in done {
            settle(delegation(fresh[i].0), sent, tally).await;
        }
    }
    Ok(left)
}

/// Reports one step's journaled outcome (or its error) and adds it to the tally.
async fn settle(mut d: Delegation<'_>, sent: anyhow::Result<Sent>, tally: &mut Tally) {
    let r = match sent {
        Ok(sent) => d.sent(sent).await.map(|code| (code, d.outcomes)),
        Err(e) => Err(e),
    };
    tally.add(r);
}

/// Prints each new step's intent and returns its batch item, with each attempt's index in
/// `fresh` by its id.
async fn batch_items<'c>(
    fresh: &[(&'c Request, Attempt)],
    delegation: impl Fn(&'c Request) -> Delegation<'c>,
) -> anyhow::Result<(Vec<BatchItem>, HashMap<AttemptId, usize>)> {
    let mut by_id = HashMap::with_capacity(fresh.len());
    let mut items = Vec::with_capacity(fresh.len());
    // The push configs of every new attempt, in one statement rather than one per step.
    let mut configs = match fresh.first() {
        Some((req, _)) if fresh.iter().any(|(r, _)| !r.no_push) => {
            let ids: Vec<AttemptId> = fresh.iter().map(|(_, a)| a.id).collect();
            delegation(req).journal.push_configs(&ids)?
        }
        _ => HashMap::new(),
    };
    for (i, (req, attempt)) in fresh.iter().enumerate() {
        let d = delegation(req);
        d.action(
            attempt,
            "intent",
            AttemptState::Intent.as_str(),
            &json!({"messageId": attempt.message_id, "contextId": attempt.context_id}),
        )?;
        items.push(BatchItem {
            attempt: attempt.clone(),
            out: d
                .outgoing_held(attempt, configs.remove(&attempt.id).as_ref())
                .await?,
            step: d.step().to_string(),
        });
        by_id.insert(attempt.id, i);
    }
    Ok((items, by_id))
}

/// Returns the credential of a step's (`token_env`, `token_cmd`) (or the agent's), read or
/// run now (on a blocking thread).
async fn credential_of(
    (var, cmd): (Option<&str>, Option<&str>),
    spec: &StepSpec,
) -> Result<Option<Credential>, CliError> {
    Credential::resolve(var, cmd).await.map_err(|e| {
        let hint = e.hint_text().unwrap_or_default();
        CliError::usage(format!("step `{}`: {e}", spec.name)).hint(hint)
    })
}

/// Resolves a plan step's agent: its `agent`, or the first registered agent with its `skill`
/// (whose registered credential variable is used unless the step names one).
async fn resolve_step(
    journal: &Journal,
    spec: &StepSpec,
    plan_file: &str,
) -> anyhow::Result<(StepSpec, String, Option<Credential>)> {
    match &spec.binding {
        Binding::Agent(url) => {
            // The credential its attempt will be journaled with: the step's, else the agent's
            // registered one.
            let credential = match journal.agent(url)? {
                Some(agent) => credential_of(credential_source(spec, &agent), spec).await?,
                None => {
                    credential_of((spec.token_env.as_deref(), spec.token_cmd.as_deref()), spec)
                        .await?
                }
            };
            Ok((spec.clone(), url.clone(), credential))
        }
        Binding::Skill(skill) => {
            // A journaled step keeps the agent it was given; only new steps pick one.
            if let Some(record) = journal.step(&spec.name)?
                && let Some(url) = record.latest().and_then(|a| a.agent_url.clone())
            {
                return Ok((spec.clone(), url, None));
            }
            let Some(agent) = pick_agent(journal, skill, &[])? else {
                return Err(CliError::usage(format!(
                    "{}: step `{}`: no registered agent advertises skill `{}`",
                    inert(plan_file),
                    spec.name.step,
                    inert(skill)
                ))
                .hint("register one with `a2a-recover agents add URL`; nothing was journaled")
                .into());
            };
            let credential = credential_of(credential_source(spec, &agent), spec).await?;
            Ok((spec.clone(), agent.card_url.clone(), credential))
        }
        Binding::Command(_) => Err(CliError::usage("a plan step cannot be a command").into()),
    }
}
