use super::*;
use crate::journal::{StepName, WorkflowState};

fn said<'a>(step: Option<&'a StepName>, did: Did<'a>) -> Said<'a> {
    Said {
        workflow: "trip",
        step,
        attempt: step.map(|_| 1),
        did,
    }
}

/// Each event as its record and its line, one pair a line each.
fn shown(events: &[Said<'_>]) -> String {
    events
        .iter()
        .map(|s| format!("{}\n{}", record(s), line(s)))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn workflow_events_read_as_they_always_did() {
    insta::assert_snapshot!(shown(&[
        said(None, Did::Marked { from: WorkflowState::Active }),
        said(None, Did::StaysCompensating { exit_code: exit::NEEDS_HUMAN }),
        said(None, Did::StaysCompensating { exit_code: exit::WORK_REMAINS }),
        said(None, Did::NothingToUndo { dry_run: true }),
        said(None, Did::WorkflowCompensated),
    ]), @r#"
    {"action":"workflow","attempt":null,"detail":{"from":"ACTIVE"},"outcome":"COMPENSATING","step":null,"type":"action","workflow":"trip"}
    trip is COMPENSATING: none of its steps is sent any more.
    {"action":"workflow","attempt":null,"detail":{"exitCode":4},"outcome":"COMPENSATING","step":null,"type":"action","workflow":"trip"}
    trip stays COMPENSATING: an effect is unverified or a compensation failed; see `a2a-recover inspect trip --pending`.
    {"action":"workflow","attempt":null,"detail":{"exitCode":3},"outcome":"COMPENSATING","step":null,"type":"action","workflow":"trip"}
    trip stays COMPENSATING: work is in flight; run `a2a-recover compensate trip` again later.
    {"action":"workflow","attempt":null,"detail":{"dryRun":true},"outcome":"nothing-to-undo","step":null,"type":"action","workflow":"trip"}
    trip has no declared effect, no running attempt and no unsent intent: nothing to undo; nothing would be changed (it stays ACTIVE).
    {"action":"workflow","attempt":null,"detail":{},"outcome":"COMPENSATED","step":null,"type":"action","workflow":"trip"}
    trip is COMPENSATED: every effect is compensated or absent.
    "#);
}

#[test]
fn step_events_read_as_they_always_did() {
    let hotel = StepName::from_parts("trip", "hotel");
    let comp = StepName::from_parts("trip", "hotel~compensate");
    let ids = vec!["a-1".to_owned(), "a-2".to_owned()];
    insta::assert_snapshot!(shown(&[
        said(Some(&hotel), Did::Cancelled { task: "t-1", answer: CancelAnswer::Task, state: Some(AttemptState::Working) }),
        said(Some(&hotel), Did::Cancelled { task: "t-1", answer: CancelAnswer::Task, state: None }),
        said(Some(&hotel), Did::Resolved { effect: None, reason: Some("done by hand\u{1b}[2J") }),
        said(Some(&hotel), Did::Effect { by: EffectBy::Compensate, state: EffectState::Compensated, detail: "exit 1; compensation hotel~compensate COMPLETED" }),
        said(Some(&hotel), Did::Collided { why: "verify URL not run: x", artifacts: &ids }),
        said(Some(&hotel), Did::WouldCompensate { effect: Some(EffectState::Claimed), then: DryMove::Verify(Undo::Message(Some("http://h:1/.well-known/agent-card.json".into()))) }),
        said(Some(&hotel), Did::Resuming { compensation: &comp, attempt: 2, state: AttemptState::Intent }),
    ]), @r#"
    {"action":"cancel","attempt":1,"detail":{"cancel":{"answer":"task"},"taskId":"t-1"},"outcome":"WORKING","step":"hotel","type":"action","workflow":"trip"}
    trip/hotel: cancel task t-1: WORKING; it still runs, run `a2a-recover compensate trip` again later.
    {"action":"cancel","attempt":1,"detail":{"cancel":{"answer":"task"},"taskId":"t-1"},"outcome":"unreadable","step":"hotel","type":"action","workflow":"trip"}
    trip/hotel: cancel sent for task t-1, but the task could not be read.
    {"action":"skip","attempt":1,"detail":{"effect":"null","reason":"done by hand\u001b[2J"},"outcome":"resolved","step":"hotel","type":"action","workflow":"trip"}
    trip/hotel: null, resolved by an operator (done by hand); not compensated again.
    {"action":"compensate","attempt":1,"detail":{"detail":"exit 1; compensation hotel~compensate COMPLETED"},"outcome":"compensated","step":"hotel","type":"action","workflow":"trip"}
    trip/hotel: compensated (exit 1; compensation hotel~compensate COMPLETED).
    {"action":"verify","attempt":1,"detail":{"collision":["a-1","a-2"],"detail":"verify URL not run: x"},"outcome":"unknown","step":"hotel","type":"action","workflow":"trip"}
    trip/hotel: unknown (verify URL not run: x); neither verified nor compensated: a human compares the artifacts, undoes the effect by hand if it exists, and resolves the step.
    {"action":"compensate","attempt":1,"detail":{"dryRun":true,"effect":"claimed"},"outcome":"would-verify","step":"hotel","type":"action","workflow":"trip"}
    would verify trip/hotel; if it exists or is unknown, undo it with a compensation message to http://h:1/.
    {"action":"resume","attempt":1,"detail":{"attempt":2,"compensation":"trip/hotel~compensate"},"outcome":"INTENT","step":"hotel","type":"action","workflow":"trip"}
    trip/hotel: resuming its compensation (trip/hotel~compensate, attempt 2: INTENT).
    "#);
}
