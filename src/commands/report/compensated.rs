//! What a compensation pass did ([`Said`]), as its `action` record (JSON) and its sentence
//! (human): the one place each [`Did`] gets its action and outcome words, its details and its
//! words for people.

use std::borrow::Cow;

use serde_json::{Value, json};

use super::human::agent_name;
use super::records::ActionRecord;
use crate::a2a::error::one_line;
use crate::clock::rfc3339;
use crate::exit;
use crate::journal::{AttemptState, EffectState, INTERFACE_GONE, NeedsHuman};
use crate::recovery::event::{CancelAnswer, Did, DryMove, EffectBy, Said, Undo};
use crate::recovery::send::Sent;
use crate::recovery::verify::{CommandRun, CommandStatus};
use crate::sanitize::inert;

/// The `action` record of what a compensation pass did.
pub(crate) fn record(s: &Said<'_>) -> Value {
    let outcome = outcome(&s.did);
    let detail = detail(&s.did);
    let step = s.step.map(|n| n.step.as_str());
    ActionRecord::about(
        s.workflow,
        step,
        s.attempt,
        action(&s.did),
        &outcome,
        &detail,
    )
    .to_value()
}

/// What was done: `workflow`, `cancel`, `look`, `wait`, `skip`, `verify`, `compensate`, ….
pub(crate) fn action(did: &Did<'_>) -> &'static str {
    match did {
        Did::NothingToUndo { .. }
        | Did::AlreadyCompensated { .. }
        | Did::WouldMark
        | Did::Marked { .. }
        | Did::WorkflowCompensated
        | Did::StaysCompensating { .. } => "workflow",
        Did::Failed { .. } => "error",
        Did::NeverSent
        | Did::CancelAskedBefore { .. }
        | Did::CancelGone { .. }
        | Did::Cancelled { .. }
        | Did::WouldCancel { .. } => "cancel",
        Did::LookInFlight { .. } | Did::BadTaskId { .. } | Did::LookFailed { .. } => "look",
        Did::StillRunning | Did::WaitsForNewer { .. } => "wait",
        Did::Resolved { .. } | Did::Skipped { .. } => "skip",
        Did::Effect {
            by: EffectBy::Verify,
            ..
        }
        | Did::StillThere { .. }
        | Did::Collided { .. } => "verify",
        Did::Effect {
            by: EffectBy::Compensate,
            ..
        }
        | Did::WouldCompensate { .. }
        | Did::CommandNotRun { .. }
        | Did::CommandRan { .. } => "compensate",
        Did::Resuming { .. } => "resume",
        Did::LeftoverRead { .. } => "read",
        Did::Sent { sent, .. } => match sent {
            Sent::Found(_) | Sent::Uncertain(..) | Sent::InFlight(..) => "look",
            _ => "compensate",
        },
    }
}

/// How it came out (the summary counts these).
pub(crate) fn outcome(did: &Did<'_>) -> Cow<'static, str> {
    Cow::Borrowed(match did {
        Did::NothingToUndo { .. } => "nothing-to-undo",
        Did::AlreadyCompensated { .. } | Did::WorkflowCompensated => "COMPENSATED",
        Did::WouldMark | Did::Marked { .. } | Did::StaysCompensating { .. } => "COMPENSATING",
        Did::Failed { .. } | Did::BadTaskId { .. } | Did::LookFailed { .. } => "error",
        Did::NeverSent => "never-sent",
        Did::LookInFlight { .. } => "in-flight",
        Did::CancelAskedBefore { state, .. }
        | Did::Cancelled {
            state: Some(state), ..
        }
        | Did::Resuming { state, .. }
        | Did::LeftoverRead { state, .. } => state.as_str(),
        Did::CancelGone { .. } => INTERFACE_GONE,
        Did::Cancelled { state: None, .. } => "unreadable",
        Did::WouldCancel { .. } => "would-cancel",
        Did::StillRunning => "running",
        Did::WaitsForNewer { .. } => "newer-undecided",
        Did::Resolved { .. } => "resolved",
        Did::Skipped { effect } => effect_word(*effect),
        Did::Effect { state, .. } => state.as_str(),
        Did::StillThere { .. } => "exists",
        Did::Collided { .. } => EffectState::Unknown.as_str(),
        Did::WouldCompensate { then, .. } => match then {
            DryMove::Skip => "skip",
            DryMove::LeaveUnknown { .. } => "would-leave-unknown",
            DryMove::Verify(_) => "would-verify",
            DryMove::Resume => "would-resume",
            DryMove::Recheck(_) => "would-recheck",
        },
        Did::CommandNotRun { .. } => "not-run",
        Did::CommandRan { .. } => "ran",
        Did::Sent { sent, .. } => return sent_outcome(sent),
    })
}

fn sent_outcome(sent: &Sent) -> Cow<'static, str> {
    match sent {
        Sent::Task(now) | Sent::Replied(now) | Sent::Settled(now) => {
            Cow::Borrowed(now.state.as_str())
        }
        Sent::Found(_) => Cow::Borrowed("found"),
        Sent::Refused(..) => Cow::Borrowed("REFUSED"),
        Sent::Uncertain(..) => Cow::Borrowed("UNCERTAIN"),
        Sent::InFlight(..) => Cow::Borrowed("in-flight"),
        Sent::Failed { stage, .. } | Sent::NeedsHuman { stage, .. } => {
            Cow::Owned(format!("{}-failed", stage.as_str()))
        }
        Sent::Busy(..) => Cow::Borrowed("busy"),
    }
}

/// An effect's name, `null` when it has none.
fn effect_word(effect: Option<EffectState>) -> &'static str {
    effect.map_or("null", EffectState::as_str)
}

/// The record's `detail`.
fn detail(did: &Did<'_>) -> Value {
    match did {
        Did::NothingToUndo { dry_run } => json!({"dryRun": dry_run}),
        Did::AlreadyCompensated { dry_run: false }
        | Did::WorkflowCompensated
        | Did::NeverSent
        | Did::StillRunning
        | Did::Skipped { .. } => json!({}),
        Did::AlreadyCompensated { dry_run: true } | Did::WouldMark => json!({"dryRun": true}),
        Did::Marked { from } => json!({"from": from.as_str()}),
        Did::StaysCompensating { exit_code } => json!({"exitCode": exit_code}),
        Did::Failed { error } => json!({"error": format!("{error:#}")}),
        Did::LookInFlight { until } => json!({"until": rfc3339(*until)}),
        Did::BadTaskId { error } => json!({"error": error,
            "needsHuman": {"cause": NeedsHuman::BAD_TASK_ID, "reason": error}}),
        Did::LookFailed { error } => json!({"error": error}),
        Did::CancelAskedBefore { task, .. } => json!({"taskId": task, "alreadyRequested": true}),
        Did::CancelGone { task } => json!({"taskId": task}),
        Did::Cancelled { task, answer, .. } => {
            let cancel = match answer {
                CancelAnswer::Task => json!({"answer": "task"}),
                CancelAnswer::Error(e) => json!({"answer": e.summary(), "code": e.rpc_code()}),
            };
            json!({"taskId": task, "cancel": cancel})
        }
        Did::WouldCancel { task, .. } => {
            json!({"taskId": task.unwrap_or("-"), "dryRun": true})
        }
        Did::WaitsForNewer { newer } => json!({"newer": newer.to_string()}),
        Did::Resolved { effect, reason } => {
            json!({"effect": effect_word(*effect), "reason": reason})
        }
        Did::Effect { detail, .. } | Did::StillThere { detail } => json!({"detail": detail}),
        Did::Collided { why, artifacts } => json!({"detail": why, "collision": artifacts}),
        Did::WouldCompensate { effect, .. } => {
            json!({"effect": effect.map(EffectState::as_str), "dryRun": true})
        }
        Did::Resuming {
            compensation,
            attempt,
            ..
        } => json!({"compensation": compensation.to_string(), "attempt": attempt}),
        Did::CommandNotRun { compensation, run } | Did::CommandRan { compensation, run } => {
            json!({"compensation": compensation.to_string(), "status": run.summary()})
        }
        Did::LeftoverRead {
            compensation, task, ..
        } => json!({"compensation": compensation.to_string(), "taskId": task}),
        Did::Sent { compensation, sent } => {
            let now = sent.attempt();
            json!({"compensation": compensation.to_string(), "taskId": now.task_id,
                   "agent": now.agent_url, "error": now.error})
        }
    }
}

/// The sentence for people, inert.
pub(crate) fn line(s: &Said<'_>) -> String {
    inert(&sentence(s))
}

/// The sentence, which may quote remote text ([`line()`] makes it inert).
fn sentence(s: &Said<'_>) -> String {
    let w = s.workflow;
    let n = s.step.map(ToString::to_string).unwrap_or_default();
    match &s.did {
        Did::NothingToUndo { dry_run } => {
            let would = if *dry_run { " would be" } else { " was" };
            format!(
                "{w} has no declared effect, no running attempt and no unsent intent: nothing to \
                 undo; nothing{would} changed (it stays ACTIVE)."
            )
        }
        Did::AlreadyCompensated { dry_run: true } => {
            format!("{w} is already COMPENSATED; nothing would be done.")
        }
        Did::AlreadyCompensated { dry_run: false } => {
            format!("{w} is already COMPENSATED; nothing to do.")
        }
        Did::WouldMark => format!("would mark {w} COMPENSATING (no more sends)."),
        Did::Marked { .. } => {
            format!("{w} is COMPENSATING: none of its steps is sent any more.")
        }
        Did::WorkflowCompensated => {
            format!("{w} is COMPENSATED: every effect is compensated or absent.")
        }
        Did::StaysCompensating { exit_code } => stays(w, *exit_code),
        Did::Failed { error } => format!("{n}: {error:#}"),
        Did::NeverSent => format!("{n}: never sent; it will not be sent now."),
        Did::LookInFlight { until } => format!(
            "{n}: its agent holds no task for it yet, but its send may still be in flight until \
             {}; run again later.",
            rfc3339(*until)
        ),
        Did::BadTaskId { .. } => format!(
            "{n}: its agent answered the send with a task id no URL can hold, so the task can be \
             neither read nor cancelled; a human decides (`a2a-recover resolve {n} --as \
             done|abandoned`)."
        ),
        Did::LookFailed { .. } => {
            format!("{n}: could not search the agent for its task; run again later.")
        }
        Did::CancelAskedBefore { task, state } => {
            format!("{n}: task {task} is {state} (cancel asked by an earlier run).")
        }
        Did::CancelGone { task } => format!(
            "{n}: task {task} cannot be canceled: its interface left the agent's card, which \
             offers nothing a2a-recover speaks; see `a2a-recover inspect {w} --pending`."
        ),
        Did::Cancelled {
            task, state: None, ..
        } => format!("{n}: cancel sent for task {task}, but the task could not be read."),
        Did::Cancelled {
            task,
            state: Some(state),
            ..
        } => cancelled(w, &n, task, *state),
        Did::WouldCancel { task, state } => format!(
            "would cancel {n} task {} ({state}), then read it again.",
            inert(task.unwrap_or("-"))
        ),
        Did::StillRunning => {
            format!("{n}: still running or unreadable; its effect is decided on the next run.")
        }
        Did::WaitsForNewer { newer } => {
            format!("{n}: waits for {newer}, newer and still undecided, to be undone first.")
        }
        Did::Resolved { effect, reason } => format!(
            "{n}: {}, resolved by an operator ({}); not compensated again.",
            effect_word(*effect),
            reason.unwrap_or("no reason")
        ),
        Did::Skipped { effect } => format!("{n}: {}; nothing to do.", effect_word(*effect)),
        Did::Effect { state, detail, .. } => format!("{n}: {state} ({detail})."),
        Did::StillThere { detail } => {
            format!("{n}: still there after its compensation ({detail}); compensating again.")
        }
        Did::Collided { why, .. } => format!(
            "{n}: unknown ({why}); neither verified nor compensated: a human compares the \
             artifacts, undoes the effect by hand if it exists, and resolves the step."
        ),
        Did::WouldCompensate { effect, then } => would_compensate(&n, *effect, then),
        Did::Resuming {
            compensation,
            attempt,
            state,
        } => {
            format!("{n}: resuming its compensation ({compensation}, attempt {attempt}: {state}).")
        }
        Did::CommandNotRun { run, .. } => format!("{n}: {}.", not_run(run)),
        Did::CommandRan { run, .. } => {
            format!("{n}: compensation command ran ({}).", run.summary())
        }
        Did::LeftoverRead {
            compensation,
            task,
            state,
        } => format!(
            "{n}: its compensation {compensation} (task {task}), still running when {w} was \
             compensated, is {state} now."
        ),
        Did::Sent { sent, .. } => sent_sentence(&n, sent),
    }
}

/// Why workflow `w` stays `COMPENSATING`, from the pass's exit code.
fn stays(w: &str, exit_code: u8) -> String {
    let what = if exit_code == exit::NEEDS_HUMAN {
        format!(
            "an effect is unverified or a compensation failed; see `a2a-recover inspect {w} \
             --pending`"
        )
    } else {
        format!("work is in flight; run `a2a-recover compensate {w}` again later")
    };
    format!("{w} stays COMPENSATING: {what}.")
}

/// What a cancel of `task` (step `n` of workflow `w`) came to: the task read afterwards is in
/// `state`.
fn cancelled(w: &str, n: &str, task: &str, state: AttemptState) -> String {
    let note = match state {
        AttemptState::Completed => "; it completed first, so its effect is undone below".to_owned(),
        _ if state.is_finished() => String::new(),
        _ => format!("; it still runs, run `a2a-recover compensate {w}` again later"),
    };
    format!("{n}: cancel task {task}: {state}{note}.")
}

/// Why a compensation command did not run, on one line.
fn not_run(run: &CommandRun) -> String {
    match &run.status {
        CommandStatus::SpawnFailed(e) => one_line(&format!(
            "compensation command could not start: {e}; nothing ran"
        )),
        _ => run.summary(),
    }
}

/// What a dry run would do to the effect of step `n`.
fn would_compensate(n: &str, effect: Option<EffectState>, then: &DryMove<'_>) -> String {
    match then {
        DryMove::LeaveUnknown { recipe, collision } => one_line(&format!(
            "would leave {n} unknown and run nothing: {recipe} not run: {collision}"
        )),
        DryMove::Skip => format!("{n}: {}; nothing would be done.", effect_word(effect)),
        DryMove::Verify(how) => format!(
            "would verify {n}; if it exists or is unknown, undo it with {}.",
            undo(how)
        ),
        DryMove::Resume => format!("would resume {n}'s compensation, then verify it gone."),
        DryMove::Recheck(how) => format!(
            "would verify {n} again; if it still exists, undo it with {}.",
            undo(how)
        ),
    }
}

/// How a compensation would run, in words.
fn undo(how: &Undo) -> String {
    match how {
        Undo::Command => "its compensation command".to_owned(),
        Undo::Message(agent) => format!(
            "a compensation message to {}",
            inert(&agent_name(agent.as_deref().unwrap_or("-")))
        ),
        Undo::Skill(s) => format!(
            "a compensation message to an agent with skill `{}`",
            inert(s)
        ),
        Undo::Unreadable => "an unreadable compensation recipe".to_owned(),
    }
}

/// What a compensation message's send did, for step `n`.
fn sent_sentence(n: &str, sent: &Sent) -> String {
    let now = sent.attempt();
    match sent {
        Sent::Task(_) | Sent::Replied(_) => format!(
            "{n}: compensation sent to {} ({}).",
            inert(&agent_name(now.agent_url.as_deref().unwrap_or("-"))),
            now.state
        ),
        Sent::Found(_) => format!(
            "{n}: found the compensation sent before as task {} ({}); nothing resent.",
            inert(now.task_id.as_deref().unwrap_or("-")),
            now.state
        ),
        Sent::Settled(_) => format!(
            "{n}: its compensation was settled meanwhile ({}).",
            now.state
        ),
        Sent::Refused(_, e) => format!("{n}: the compensation was refused: {}.", e.summary()),
        Sent::Uncertain(_, why) => format!(
            "{n}: cannot tell whether the compensation sent before arrived ({}); nothing resent.",
            inert(&super::records::unprovable_words(why))
        ),
        Sent::InFlight(_, until) => format!(
            "{n}: its compensation sent before is not on the agent yet, but may still be in \
             flight until {}; nothing resent, run again later.",
            rfc3339(*until)
        ),
        Sent::Failed { stage, error, .. } => format!(
            "{n}: the compensation's {} failed ({}); it is looked for before any resend.",
            stage.as_str(),
            error.summary()
        ),
        Sent::NeedsHuman { why, .. } => format!(
            "{n}: the compensation needs a human: {}.",
            inert(&why.reason)
        ),
        Sent::Busy(_, lease) => format!(
            "{n}: another process (pid {} on {}) is sending its compensation; run again later.",
            lease.pid,
            inert(&lease.host)
        ),
    }
}

#[cfg(test)]
mod tests;
