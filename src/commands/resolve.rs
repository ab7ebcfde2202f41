//! `resolve`: the operator's decision on a step that needs a human.
//!
//! The decision applies to the step's latest attempt and is journaled with its reason in one
//! transaction (`Journal::decide`, see `journal/operator.rs` for what each decision writes):
//!
//! - `done`: accept the step as finished; it leaves every pass and no longer counts toward
//!   exit 4.
//! - `abandoned`: give it up; it leaves every pass, no longer counts toward exit 4, and counts
//!   as failed for compensation.
//! - `retry`: a new `INTENT` attempt with fresh ids, linked to the decided one, budget
//!   permitting (else exit 2); the next `reconcile` sends it (it was never sent, so nothing needs
//!   looking for). A step bound to `--agent` retries that agent; a `--skill` step the first
//!   registered agent with the skill not yet tried for it, else the same agent (as a pass does).
//! - `resend`: only for `UNCERTAIN`: the attempt goes back to `INTENT` with its own messageId and
//!   one approved send without a look (the look could not prove anything); the next
//!   `reconcile` (or `delegate` re-run) sends it once.
//!
//! Nothing is sent here. A decision the journal's state does not allow (unknown step, `resend`
//! of an attempt that is not `UNCERTAIN`, `retry` of a running attempt (unless its interface is
//! gone) or past the budget, a
//! send in a compensating workflow) is a usage error (exit 2) that names the state and writes
//! nothing.

use clap::{Args, ValueEnum};
use serde_json::json;

use crate::commands::report::records::ActionRecord;
use crate::commands::util::hints::HintText as _;
use crate::context::Context;
use crate::error::CliError;
use crate::exit;
use crate::journal::{
    Attempt, AttemptState, Binding, Decided, Decision, EffectState, Journal, JournalError,
    NewAttempt, Resolution, StepName, StepRecord,
};
use crate::recovery::registry::{pick_agent, tried_agents};
use crate::sanitize::inert;

use super::util::flags::declined;

/// Records an operator's decision on a step that needs a human.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  a2a-recover resolve trip-42/car --as resend \\
      --reason \"the agent's log shows nothing arrived\"
  a2a-recover resolve trip-42/hotel --as done --reason \"booked by phone\"
  a2a-recover resolve trip-42/taxi --as retry --reason \"endpoint fixed\"")]
pub struct ResolveArgs {
    /// The step, `WORKFLOW/STEP`.
    pub step: String,
    /// The decision.
    #[arg(
        long = "as",
        value_enum,
        value_name = "DECISION",
        required_unless_present = "undo",
        conflicts_with = "undo"
    )]
    pub decision: Option<ResolveAs>,
    /// Why (journaled with the decision).
    #[arg(long, value_name = "TEXT", required_unless_present = "undo")]
    pub reason: Option<String>,
    /// Takes back the step's standing decision while nothing was sent for it (a retry's new
    /// attempt is deleted, a resend goes back to UNCERTAIN, done/abandoned are cleared).
    #[arg(long)]
    pub undo: bool,
    /// Allows `--as retry|resend` of a step that COMPLETED or whose effect is verified (it
    /// would run the work again).
    #[arg(long)]
    pub force: bool,
    /// Answers yes to the question asked on a terminal (without a terminal nothing is asked).
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// An operator's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ResolveAs {
    /// Accept the step as finished.
    Done,
    /// Give the step up; it counts as failed for compensation.
    Abandoned,
    /// A new attempt with fresh ids, budget permitting.
    Retry,
    /// For UNCERTAIN: send again with the same messageId, accepting the risk.
    Resend,
}

/// Returns the agent a `retry` goes to (`None` for a command step).
fn retry_agent(
    journal: &Journal,
    record: &StepRecord,
    latest: &Attempt,
) -> Result<Option<String>, JournalError> {
    Ok(match &record.step.spec.binding {
        Binding::Agent(url) => Some(url.clone()),
        Binding::Skill(skill) => pick_agent(journal, skill, &tried_agents(record))?
            .map(|a| a.card_url)
            .or_else(|| latest.agent_url.clone()),
        Binding::Command(_) => None,
    })
}

/// Shows a card URL as the agent's base URL, redacted and inert.
fn shown(card_url: &str) -> String {
    let base = card_url
        .strip_suffix(crate::a2a::WELL_KNOWN_CARD_PATH)
        .map_or_else(|| card_url.to_owned(), |b| format!("{b}/"));
    inert(&crate::a2a::redact_url(&base))
}

/// Runs `resolve`.
pub(crate) async fn run(ctx: &Context, args: &ResolveArgs) -> anyhow::Result<u8> {
    let name = StepName::parse(&args.step).map_err(|e| {
        CliError::usage(e.to_string())
            .hint("write WORKFLOW/STEP (e.g. `trip-42/hotel`), or a bare STEP for `default/STEP`")
    })?;
    let reason = args.reason.as_deref().unwrap_or("").trim();
    if reason.is_empty() && !args.undo {
        return Err(CliError::usage("the --reason is empty")
            .hint("say why, e.g. --reason \"booked by phone\"; it is journaled with the decision")
            .into());
    }
    let unknown = || {
        CliError::usage(format!("no step `{name}` in the journal"))
            .hint("`a2a-recover inspect` lists the journaled steps")
    };
    ctx.require_journal()?;
    let journal = ctx.open_journal_for_writing()?;
    let record = journal.step(&name)?.ok_or_else(unknown)?;
    let latest = record
        .latest()
        .cloned()
        .ok_or_else(|| CliError::failure(format!("step `{name}` has no attempt")))?;
    let Some(decision_as) = args.decision else {
        return undo(ctx, args, &journal, &name, &latest, reason);
    };
    if matches!(decision_as, ResolveAs::Retry | ResolveAs::Resend) && !args.force {
        refuse_finished_work(&record, &name, decision_as)?;
    }
    let decision = match decision_as {
        ResolveAs::Done => Decision::Done,
        ResolveAs::Abandoned => Decision::Abandoned,
        ResolveAs::Resend => Decision::Resend,
        ResolveAs::Retry => Decision::Retry(NewAttempt {
            agent_url: retry_agent(&journal, &record, &latest)?,
            message_id: crate::sim_seam::new_uuid().to_string(),
            context_id: Some(crate::sim_seam::new_uuid().to_string()),
            previous: Some(latest.id),
        }),
    };
    if !ctx.out.confirm(
        &[format!(
            "resolve {name} (attempt {}, {}) as {}: {}",
            latest.number,
            latest.state,
            as_str(decision_as),
            consequence(decision_as)
        )],
        args.yes,
    ) {
        return Err(declined().into());
    }
    ctx.out.begin("resolve")?;
    let decided = journal
        .decide(latest.id, &decision, reason)
        .map_err(|e| -> anyhow::Error {
            if e.is_refused_decision() {
                let hint = e.hint_text().unwrap_or_default();
                CliError::usage(format!(
                    "cannot resolve `{name}` as {}: {e}",
                    as_str(decision_as)
                ))
                .hint(hint)
                .into()
            } else {
                anyhow::Error::new(e).context("failed to journal the decision")
            }
        })?;
    if ctx.out.is_json() {
        let detail = json!({
            "reason": reason,
            "from": latest.state.as_str(),
            "state": decided.attempt.state.as_str(),
            "newAttempt": decided.new_attempt.as_ref().map(|a| a.number),
            "agent": decided.new_attempt.as_ref().and_then(|a| a.agent_url.clone()),
        });
        let record = ActionRecord::new(
            &name.workflow,
            &name.step,
            latest.number,
            "resolve",
            as_str(decision_as),
            &detail,
        );
        ctx.out.record(&record.to_value())?;
        return Ok(exit::OK);
    }
    ctx.out
        .line(&resolved_line(decision_as, &name, &latest, &decided))?;
    if matches!(decision_as, ResolveAs::Done | ResolveAs::Abandoned)
        && !latest.state.is_finished()
        && latest.state.has_task()
    {
        ctx.out.warn(&format!(
            "attempt {} is still {} on the agent; nothing was cancelled there \
             (`a2a-recover compensate {}` cancels running tasks).",
            latest.number, latest.state, name.workflow
        ));
    }
    Ok(exit::OK)
}

/// Returns the line that says what the decision did.
fn resolved_line(
    decision_as: ResolveAs,
    name: &StepName,
    latest: &Attempt,
    decided: &Decided,
) -> String {
    match decision_as {
        ResolveAs::Done => format!(
            "resolved {name} as done: attempt {} ({}) is accepted as finished; it no longer \
             counts toward exit 4.",
            latest.number, latest.state
        ),
        ResolveAs::Abandoned => format!(
            "resolved {name} as abandoned: it counts as failed for compensation \
             (`a2a-recover compensate {}`); it no longer counts toward exit 4.",
            name.workflow
        ),
        ResolveAs::Retry => {
            let new = decided.new_attempt.as_ref().unwrap_or(&decided.attempt);
            format!(
                "resolved {name} as retry: attempt {} to {} is journaled (INTENT, fresh ids, \
                 after attempt {}); `a2a-recover reconcile` sends it.",
                new.number,
                new.agent_url
                    .as_deref()
                    .map_or_else(|| "-".to_owned(), shown),
                latest.number
            )
        }
        ResolveAs::Resend => format!(
            "resolved {name} as resend: attempt {} is INTENT again with its own messageId; the \
             next `a2a-recover reconcile` sends it once, without looking.",
            latest.number
        ),
    }
}

/// Returns the decision's name as journaled (`done`).
fn as_str(decision_as: ResolveAs) -> &'static str {
    match decision_as {
        ResolveAs::Done => Resolution::Done,
        ResolveAs::Abandoned => Resolution::Abandoned,
        ResolveAs::Retry => Resolution::Retry,
        ResolveAs::Resend => Resolution::Resend,
    }
    .as_str()
}

/// What a decision will do, for the question asked on a terminal.
fn consequence(decision: ResolveAs) -> &'static str {
    match decision {
        ResolveAs::Done => "accepted as finished; it leaves every pass",
        ResolveAs::Abandoned => "given up; it counts as failed for compensation",
        ResolveAs::Retry => "a new attempt with fresh ids, sent by the next `reconcile`",
        ResolveAs::Resend => "sent again once with its own messageId, without a look",
    }
}

/// Refuses a `retry` or `resend` that would run finished work again: the step COMPLETED, or
/// one of its effects is verified to exist. `--force` skips this.
fn refuse_finished_work(
    record: &StepRecord,
    name: &StepName,
    decision: ResolveAs,
) -> Result<(), CliError> {
    let completed = record
        .attempts
        .iter()
        .rev()
        .find(|a| a.state == AttemptState::Completed);
    let verified = record
        .attempts
        .iter()
        .rev()
        .find(|a| a.effect == Some(EffectState::Verified));
    let why = match (completed, verified) {
        (Some(a), _) => format!("attempt {} COMPLETED", a.number),
        (None, Some(a)) => format!("the effect of attempt {} is verified", a.number),
        (None, None) => return Ok(()),
    };
    Err(CliError::usage(format!(
        "refusing to {} `{name}`: {why}, and a {} would run the work again",
        as_str(decision),
        as_str(decision)
    ))
    .hint(format!(
        "accept it with `a2a-recover resolve {name} --as done --reason \"…\"`; to run it again \
         anyway, add --force"
    )))
}

/// Runs `resolve --undo`: takes back the standing decision while nothing was sent for it.
fn undo(
    ctx: &Context,
    args: &ResolveArgs,
    journal: &Journal,
    name: &StepName,
    latest: &Attempt,
    reason: &str,
) -> anyhow::Result<u8> {
    if !ctx.out.confirm(
        &[format!(
            "take back the decision on {name} (attempt {}, {}), while nothing was sent for it",
            latest.number, latest.state
        )],
        args.yes,
    ) {
        return Err(declined().into());
    }
    ctx.out.begin("resolve")?;
    let undone = journal
        .undo_decision(latest.id, reason)
        .map_err(|e| -> anyhow::Error {
            if e.is_refused_decision() {
                let hint = e.hint_text().unwrap_or_default();
                CliError::usage(format!("cannot undo the decision on `{name}`: {e}"))
                    .hint(hint)
                    .into()
            } else {
                anyhow::Error::new(e).context("failed to journal taking the decision back")
            }
        })?;
    if ctx.out.is_json() {
        let detail = json!({
            "undid": undone.undid.as_str(),
            "reason": reason,
            "removedAttempt": undone.removed,
            "state": undone.attempt.state.as_str(),
        });
        let record = ActionRecord::new(
            &name.workflow,
            &name.step,
            undone.attempt.number,
            "resolve",
            "undone",
            &detail,
        );
        ctx.out.record(&record.to_value())?;
        return Ok(exit::OK);
    }
    let removed = undone
        .removed
        .map(|n| format!("; attempt {n}, never sent, is deleted"))
        .unwrap_or_default();
    ctx.out.line(&format!(
        "took back `{}` on {name}: attempt {} is {} again{removed}.",
        undone.undid.as_str(),
        undone.attempt.number,
        undone.attempt.state
    ))?;
    Ok(exit::OK)
}
