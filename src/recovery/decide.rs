//! The pure decisions of a reconcile pass: journal state (and what a read
//! returned) in, what to do out. No I/O here; `recovery/reconcile.rs` carries the decisions out.
//!
//! - [`triage`]: which bucket an attempt falls in, before any network call.
//! - [`decide_settled`]: what a terminal (or otherwise settled) attempt calls for: nothing,
//!   claiming a declared effect (the hook where verification plugs in), a re-delegation to
//!   another agent, or "failed for good" with the reason journaled.
//! - [`left_of`]: what one attempt leaves to do (nothing, work, a human).
//! - [`check_reply`]: whether a reply whose send outcome is unknown reached the task.
//! - [`previous_attempt_text`] / [`previous_attempt_metadata`]: what a re-delegated message
//!   carries about its predecessor. Both are derived from the journal alone, so a resend of a
//!   re-delegated attempt (same messageId) sends the same message.

use serde_json::{Map, Value, json};

use crate::a2a::{RemoteState, message_said};
use crate::journal::model::{
    Agent, Attempt, AttemptRow, AttemptState, Binding, EffectState, RemedyKind, Resolution,
    StepSpec, WorkflowState,
};
use crate::recovery::detail::{ForGood, ReplyDoubt};
use crate::recovery::event::Left;

/// The bucket an attempt falls in, decided from the journal alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Triage {
    /// `INTENT` that was provably never sent (no endpoint journaled): send it.
    Send,
    /// `INTENT` whose send may have happened: look on the agent first (bucket 1).
    Look,
    /// A task is known and not terminal: read it (bucket 2).
    Read,
    /// Terminal, or otherwise settled: decide without the network (bucket 3).
    Settled,
    /// `UNCERTAIN`: reported; only an operator's `resolve --as resend` (which puts it back to
    /// `INTENT` with a one-shot approval) sends it again.
    Uncertain,
}

/// Returns the bucket of a pass row.
pub fn triage(row: &AttemptRow) -> Triage {
    let a = &row.attempt;
    match a.state {
        AttemptState::Intent if a.interface_url.is_none() => Triage::Send,
        AttemptState::Intent => Triage::Look,
        AttemptState::Uncertain => Triage::Uncertain,
        s if s.has_task() && !s.is_finished() => Triage::Read,
        _ => Triage::Settled,
    }
}

/// Returns whether a workflow in this state may receive sends (first sends, resends,
/// re-delegations): only `ACTIVE` ones.
pub const fn sends_allowed(state: WorkflowState) -> bool {
    matches!(state, WorkflowState::Active)
}

/// What a settled attempt calls for.
#[derive(Debug, Clone, PartialEq)]
pub enum Settlement {
    /// Nothing: done, or waiting for someone else (a cancel requested by `compensate`).
    Nothing,
    /// COMPLETED with a declared effect not verified yet (none, or `claimed`): claim it and run
    /// its verification (`verify::verify_effect`: `verified`, `absent` or `unknown`).
    ClaimEffect,
    /// Re-delegate to this agent (its card URL), with a fresh messageId and contextId.
    Redelegate(Agent),
    /// The step failed for good; the reason is journaled so `inspect` can say why.
    FailedForGood(ForGood),
    /// A human must act (a question, LOST, REFUSED, an effect); nothing to write.
    NeedsHuman,
}

/// Decides what a settled attempt calls for.
///
/// `tried` holds the card URLs of every agent already tried for this step; `candidates` the
/// registered agents advertising the step's skill, in registration order (empty for a step bound
/// to one agent).
pub fn decide_settled(
    row: &AttemptRow,
    spec: &StepSpec,
    tried: &[String],
    candidates: &[Agent],
) -> Settlement {
    let a = &row.attempt;
    // Its artifacts went past a size limit: the work probably happened, never re-delegate.
    if row.remedy_kind() == Some(RemedyKind::TooLarge) {
        return Settlement::NeedsHuman;
    }
    match a.state {
        AttemptState::Completed => {
            if spec.effect.is_some() && matches!(a.effect, None | Some(EffectState::Claimed)) {
                Settlement::ClaimEffect
            } else if matches!(
                a.effect,
                Some(EffectState::Absent | EffectState::Unknown | EffectState::CompensationFailed)
            ) {
                Settlement::NeedsHuman
            } else {
                Settlement::Nothing
            }
        }
        AttemptState::Failed | AttemptState::Rejected => {
            if row.failed_for_good.is_some() {
                return Settlement::NeedsHuman;
            }
            if !sends_allowed(row.workflow_state) {
                return Settlement::FailedForGood(ForGood::NoSends {
                    state: a.state,
                    workflow: row.workflow_state,
                });
            }
            redelegation(a, spec, tried, candidates)
        }
        AttemptState::Canceled => {
            if a.cancel_requested_at.is_some() {
                Settlement::Nothing
            } else if row.failed_for_good.is_some() {
                Settlement::NeedsHuman
            } else {
                Settlement::FailedForGood(ForGood::CanceledByAgent)
            }
        }
        AttemptState::Replied => Settlement::Nothing,
        _ => Settlement::NeedsHuman,
    }
}

fn redelegation(
    a: &Attempt,
    spec: &StepSpec,
    tried: &[String],
    candidates: &[Agent],
) -> Settlement {
    let state = a.state;
    match &spec.binding {
        Binding::Agent(_) => Settlement::FailedForGood(ForGood::OneAgent(state)),
        Binding::Command(_) => Settlement::FailedForGood(ForGood::Command(state)),
        Binding::Skill(skill) => {
            if a.number >= spec.max_attempts {
                return Settlement::FailedForGood(ForGood::BudgetSpent(state, spec.max_attempts));
            }
            match candidates.iter().find(|c| !tried.contains(&c.card_url)) {
                Some(agent) => Settlement::Redelegate(agent.clone()),
                None => Settlement::FailedForGood(ForGood::NoOtherAgent(state, skill.clone())),
            }
        }
    }
}

/// Whether an attempt's step no longer counts toward a pass's exit code: resolved `done` or
/// `abandoned`, or of a `COMPENSATED` workflow.
pub fn out_of_passes(row: &AttemptRow) -> bool {
    row.resolution
        .is_some_and(|r| matches!(r, Resolution::Done | Resolution::Abandoned))
        || row.workflow_state == WorkflowState::Compensated
}

/// Returns what an attempt in this state leaves to do: running → work; a question, LOST,
/// UNCERTAIN, REFUSED, failed for good or an effect to look at → a human; else nothing.
pub fn left_of(row: &AttemptRow) -> Left {
    if out_of_passes(row) {
        return Left::Nothing;
    }
    if row.remedy_kind().is_some() {
        return Left::Human;
    }
    let a = &row.attempt;
    match a.state {
        AttemptState::Intent
        | AttemptState::Sent
        | AttemptState::Submitted
        | AttemptState::Working
        | AttemptState::Unknown => Left::Work,
        // Not pending, not decided yet: a later pass re-delegates it.
        AttemptState::Failed | AttemptState::Rejected
            if row.failed_for_good.is_none() && sends_allowed(row.workflow_state) =>
        {
            Left::Work
        }
        _ => Left::Nothing,
    }
}

/// What the look for a reply whose outcome is unknown concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyCheck {
    /// The task's history holds the reply: it was delivered.
    Delivered,
    /// The history is complete, lacks the reply, and the task still waits: send it again
    /// (same messageId).
    Resend,
    /// Cannot resend safely; the doubt says why.
    Uncertain(ReplyDoubt),
}

/// Decides from the task read with its history: whether it holds the reply's messageId,
/// whether the history is complete (it holds the attempt's own first message), and the task's
/// state.
pub fn check_reply(holds_reply: bool, history_complete: bool, state: RemoteState) -> ReplyCheck {
    if holds_reply {
        ReplyCheck::Delivered
    } else if !history_complete {
        ReplyCheck::Uncertain(ReplyDoubt::Truncated)
    } else if state.is_interrupted() {
        ReplyCheck::Resend
    } else {
        ReplyCheck::Uncertain(ReplyDoubt::MovedOn(AttemptState::from_remote(state)))
    }
}

/// The longest failure summary carried to the next agent, in characters.
const SUMMARY_CHARS: usize = 200;

/// Returns a one-line, inert summary of why an attempt failed: its last status message, else its
/// error, else its state.
pub fn failure_summary(a: &Attempt) -> String {
    let from_task = a
        .last_task_json
        .as_deref()
        .and_then(|raw| serde_json::from_str::<Value>(raw).ok())
        .and_then(|t| {
            t.get("status")
                .and_then(|s| s.get("message"))
                .map(message_said)
        })
        .filter(|t| !t.trim().is_empty());
    let text = from_task
        .or_else(|| a.error.clone())
        .unwrap_or_else(|| a.state.as_str().to_owned());
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let inert = crate::sanitize::inert(&one_line);
    match inert.char_indices().nth(SUMMARY_CHARS) {
        Some((i, _)) => format!("{}…", &inert[..i]),
        None => inert,
    }
}

/// Returns the text of a message following `previous`: a one-line prefix
/// `[previous attempt: task <id> <STATE>: <summary>]`, a newline, then the original text.
/// Without a previous task, the original text.
pub fn previous_attempt_text(original: &str, previous: Option<&Attempt>) -> String {
    match previous {
        Some(p) if p.task_id.is_some() => format!(
            "[previous attempt: task {} {}: {}]\n{original}",
            crate::sanitize::inert(p.task_id.as_deref().unwrap_or_default()),
            p.state,
            failure_summary(p)
        ),
        _ => original.to_owned(),
    }
}

/// Returns the metadata of a message following `previous`: the step's metadata plus
/// `previousTaskId` and `previousFailure` (`STATE: summary`).
pub fn previous_attempt_metadata(
    step: Option<&Map<String, Value>>,
    previous: Option<&Attempt>,
) -> Option<Map<String, Value>> {
    let mut out = step.cloned();
    if let Some(p) = previous
        && let Some(task) = &p.task_id
    {
        let m = out.get_or_insert_with(Map::new);
        m.insert("previousTaskId".to_owned(), json!(task));
        m.insert(
            "previousFailure".to_owned(),
            json!(format!("{}: {}", p.state, failure_summary(p))),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;
    use crate::journal::model::{AgentId, StepName};

    fn attempt(state: AttemptState, number: u32) -> Attempt {
        let a = Attempt::for_test(number, state)
            .with_agent("http://a/.well-known/agent-card.json", "http://a/")
            .with_ids("m", "c")
            .at(crate::clock::system_now());
        if state.has_task() {
            a.with_task("t-1")
        } else {
            a
        }
    }

    fn row(a: Attempt, binding: Binding, max: u32) -> AttemptRow {
        AttemptRow {
            state_changed_at: a.updated_at,
            text_reply_refused: false,
            attempt: a,
            step: StepName::from_parts("w", "s"),
            binding,
            max_attempts: max,
            resolution: None,
            workflow_state: WorkflowState::Active,
            previous_task_id: None,
            is_latest: true,
            artifact_count: 0,
            failed_for_good: None,
            allow_cross_origin: false,
            needs_human: None,
        }
    }

    fn spec(binding: Binding, max: u32) -> StepSpec {
        StepSpec {
            max_attempts: max,
            binding,
            ..StepSpec::to_agent(StepName::from_parts("w", "s"), "book", "x")
        }
    }

    fn agent(n: i64) -> Agent {
        Agent {
            binding: None,
            trust_dedup: false,
            id: AgentId(n),
            card_url: format!("http://agent{n}/.well-known/agent-card.json"),
            interface_url: None,
            protocol_version: None,
            tenant: None,
            token_env: None,
            token_cmd: None,
            card_json: None,
            skills: vec!["book".into()],
            accepts_context_id: None,
            push_url: None,
            registered: Some(n),
            fetched_at: None,
            profile: None,
        }
    }

    #[rstest]
    #[case::never_sent(AttemptState::Intent, false, Triage::Send)]
    #[case::maybe_sent(AttemptState::Intent, true, Triage::Look)]
    #[case::sent(AttemptState::Sent, true, Triage::Read)]
    #[case::working(AttemptState::Working, true, Triage::Read)]
    #[case::question(AttemptState::InputRequired, true, Triage::Read)]
    #[case::auth(AttemptState::AuthRequired, true, Triage::Read)]
    #[case::unknown(AttemptState::Unknown, true, Triage::Read)]
    #[case::uncertain(AttemptState::Uncertain, true, Triage::Uncertain)]
    #[case::lost(AttemptState::Lost, true, Triage::Settled)]
    #[case::failed(AttemptState::Failed, true, Triage::Settled)]
    #[case::completed(AttemptState::Completed, true, Triage::Settled)]
    #[case::refused(AttemptState::Refused, true, Triage::Settled)]
    fn triage_table(#[case] state: AttemptState, #[case] endpoint: bool, #[case] expected: Triage) {
        let mut a = attempt(state, 1);
        if !endpoint {
            a.interface_url = None;
        }
        let r = row(a, Binding::Skill("book".into()), 3);
        assert_eq!(triage(&r), expected);
    }

    #[test]
    fn redelegation_picks_the_first_untried_agent_in_registration_order() {
        let r = row(
            attempt(AttemptState::Rejected, 1),
            Binding::Skill("book".into()),
            3,
        );
        let s = spec(Binding::Skill("book".into()), 3);
        let agents = [agent(1), agent(2), agent(3)];
        let tried = [agents[0].card_url.clone()];
        assert_eq!(
            decide_settled(&r, &s, &tried, &agents),
            Settlement::Redelegate(agents[1].clone())
        );
        let tried = [agents[0].card_url.clone(), agents[1].card_url.clone()];
        assert_eq!(
            decide_settled(&r, &s, &tried, &agents),
            Settlement::Redelegate(agents[2].clone())
        );
    }

    #[rstest]
    #[case::budget_spent(AttemptState::Failed, 2, 2, Binding::Skill("book".into()), 1, "budget (2) is spent")]
    #[case::no_alternative(AttemptState::Rejected, 1, 3, Binding::Skill("book".into()), 3, "no other registered agent")]
    #[case::bound_to_agent(AttemptState::Failed, 1, 3, Binding::Agent("x".into()), 0, "bound to one agent")]
    #[case::canceled_by_agent(AttemptState::Canceled, 1, 3, Binding::Skill("book".into()), 1, "the agent canceled")]
    fn failed_for_good_names_the_reason(
        #[case] state: AttemptState,
        #[case] number: u32,
        #[case] max: u32,
        #[case] binding: Binding,
        #[case] tried: usize,
        #[case] reason: &str,
    ) {
        let r = row(attempt(state, number), binding.clone(), max);
        let s = spec(binding, max);
        let agents = [agent(1), agent(2), agent(3)];
        let tried: Vec<String> = agents[..tried].iter().map(|a| a.card_url.clone()).collect();
        match decide_settled(&r, &s, &tried, &agents) {
            Settlement::FailedForGood(why) => assert!(why.line().contains(reason), "{why:?}"),
            other => panic!("expected FailedForGood, got {other:?}"),
        }
    }

    #[test]
    fn compensating_workflows_get_no_redelegation_and_completed_steps_claim_effects() {
        let mut r = row(
            attempt(AttemptState::Failed, 1),
            Binding::Skill("book".into()),
            3,
        );
        r.workflow_state = WorkflowState::Compensating;
        let s = spec(Binding::Skill("book".into()), 3);
        assert!(matches!(
            decide_settled(&r, &s, &[], &[agent(2)]),
            Settlement::FailedForGood(_)
        ));
        let done = row(
            attempt(AttemptState::Completed, 1),
            Binding::Agent("x".into()),
            3,
        );
        let mut with_effect = spec(Binding::Agent("x".into()), 3);
        assert_eq!(
            decide_settled(&done, &with_effect, &[], &[]),
            Settlement::Nothing
        );
        with_effect.effect = Some(json!({}));
        assert_eq!(
            decide_settled(&done, &with_effect, &[], &[]),
            Settlement::ClaimEffect
        );
        let mut canceled = attempt(AttemptState::Canceled, 1);
        canceled.cancel_requested_at = Some(crate::clock::system_now());
        let canceled = row(canceled, Binding::Agent("x".into()), 3);
        assert_eq!(
            decide_settled(&canceled, &with_effect, &[], &[]),
            Settlement::Nothing
        );
    }

    #[rstest]
    #[case::running(AttemptState::Working, None, Left::Work)]
    #[case::intent(AttemptState::Intent, None, Left::Work)]
    #[case::question(AttemptState::InputRequired, None, Left::Human)]
    #[case::lost(AttemptState::Lost, None, Left::Human)]
    #[case::uncertain(AttemptState::Uncertain, None, Left::Human)]
    #[case::completed(AttemptState::Completed, None, Left::Nothing)]
    #[case::failed_undecided(AttemptState::Failed, None, Left::Work)]
    #[case::failed_for_good(AttemptState::Failed, Some("why"), Left::Human)]
    fn codes(#[case] state: AttemptState, #[case] ffg: Option<&str>, #[case] left: Left) {
        let mut r = row(attempt(state, 1), Binding::Skill("book".into()), 3);
        r.failed_for_good = ffg.map(str::to_owned);
        assert_eq!(left_of(&r), left);
        r.resolution = Some(Resolution::Done);
        assert_eq!(left_of(&r), Left::Nothing);
    }

    #[rstest]
    #[case::found(true, true, RemoteState::Completed, ReplyCheck::Delivered)]
    #[case::found_truncated(true, false, RemoteState::InputRequired, ReplyCheck::Delivered)]
    #[case::absent_waiting(false, true, RemoteState::InputRequired, ReplyCheck::Resend)]
    #[case::absent_auth(false, true, RemoteState::AuthRequired, ReplyCheck::Resend)]
    fn reply_checks(
        #[case] holds: bool,
        #[case] complete: bool,
        #[case] state: RemoteState,
        #[case] expected: ReplyCheck,
    ) {
        assert_eq!(check_reply(holds, complete, state), expected);
    }

    #[test]
    fn replies_are_never_resent_blindly() {
        assert!(matches!(
            check_reply(false, false, RemoteState::InputRequired),
            ReplyCheck::Uncertain(_)
        ));
        assert!(matches!(
            check_reply(false, true, RemoteState::Completed),
            ReplyCheck::Uncertain(_)
        ));
    }

    #[test]
    fn a_redelegated_message_carries_its_predecessor() {
        let mut prev = attempt(AttemptState::Rejected, 1);
        prev.last_task_json = Some(
            json!({"id": "t-1", "status": {"state": "TASK_STATE_REJECTED",
                "message": {"parts": [{"text": "no\n availability\u{1b}[31m"}]}}})
            .to_string(),
        );
        assert_eq!(
            previous_attempt_text("book a room", Some(&prev)),
            "[previous attempt: task t-1 REJECTED: no availability]\nbook a room"
        );
        let mut step = Map::new();
        step.insert("trip".into(), json!(42));
        let m = previous_attempt_metadata(Some(&step), Some(&prev)).unwrap();
        assert_eq!(m["trip"], json!(42));
        assert_eq!(m["previousTaskId"], json!("t-1"));
        assert_eq!(m["previousFailure"], json!("REJECTED: no availability"));
        assert_eq!(previous_attempt_text("x", None), "x");
        assert_eq!(previous_attempt_metadata(None, None), None);
        let long = "y".repeat(500);
        prev.last_task_json = None;
        prev.error = Some(long);
        assert_eq!(failure_summary(&prev).chars().count(), SUMMARY_CHARS + 1);
    }
}
