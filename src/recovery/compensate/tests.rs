use super::*;
use EffectState as E;

#[test]
fn first_moves_follow_the_table() {
    use CompStage as C;
    use FirstMove as M;
    let cases = [
        (Some(E::Compensated), C::None, M::Skip),
        (Some(E::Compensated), C::InFlight, M::Skip),
        (Some(E::Absent), C::Finished, M::Skip),
        (None, C::None, M::Verify),
        (Some(E::Claimed), C::None, M::Verify),
        (Some(E::Verified), C::None, M::Verify),
        (Some(E::Unknown), C::None, M::Verify),
        (Some(E::Compensating), C::InFlight, M::Resume),
        // An intent journaled, then a crash before `compensating` was recorded.
        (Some(E::Verified), C::InFlight, M::Resume),
        (Some(E::Compensating), C::Finished, M::Resume),
        (Some(E::CompensationFailed), C::Finished, M::Recheck),
        (Some(E::Unknown), C::Finished, M::Recheck),
        (Some(E::Compensating), C::None, M::Verify),
    ];
    for (effect, comp, want) in cases {
        assert_eq!(first_move(effect, comp), want, "{effect:?} {comp:?}");
    }
}

#[test]
fn unknown_is_never_gone() {
    for finished in [false, true] {
        assert_ne!(after_compensation(Found::Unknown, finished), E::Compensated);
    }
    assert_eq!(after_verify(Found::Unknown), (E::Unknown, true));
    assert_eq!(after_verify(Found::Exists), (E::Verified, true));
    assert_eq!(after_verify(Found::Absent), (E::Absent, false));
    assert_eq!(after_compensation(Found::Absent, false), E::Compensated);
    assert_eq!(after_compensation(Found::Exists, false), E::Compensating);
    assert_eq!(
        after_compensation(Found::Exists, true),
        E::CompensationFailed
    );
    assert_eq!(after_compensation(Found::Unknown, true), E::Unknown);
    assert_eq!(
        after_recheck(Found::Absent, Some(E::Unknown)),
        Some(E::Compensated)
    );
    assert_eq!(after_recheck(Found::Exists, Some(E::Unknown)), None);
    assert_eq!(
        after_recheck(Found::Unknown, Some(E::CompensationFailed)),
        Some(E::CompensationFailed)
    );
    assert_eq!(
        after_recheck(Found::Unknown, Some(E::Unknown)),
        Some(E::Unknown)
    );
}

#[test]
fn the_workflow_is_compensated_only_when_everything_is_undone() {
    let done = [Some(E::Compensated), Some(E::Absent)];
    assert_eq!(
        workflow_outcome(&done, 0),
        (WorkflowState::Compensated, exit::OK)
    );
    assert_eq!(
        workflow_outcome(&[], 0),
        (WorkflowState::Compensated, exit::OK)
    );
    assert_eq!(
        workflow_outcome(&done, 1),
        (WorkflowState::Compensating, exit::WORK_REMAINS)
    );
    assert_eq!(
        workflow_outcome(&[Some(E::Compensated), Some(E::Compensating)], 0),
        (WorkflowState::Compensating, exit::WORK_REMAINS)
    );
    for bad in [E::CompensationFailed, E::Unknown, E::Verified, E::Claimed] {
        assert_eq!(
            workflow_outcome(&[Some(E::Compensating), Some(bad)], 1),
            (WorkflowState::Compensating, exit::NEEDS_HUMAN),
            "{bad}"
        );
    }
    assert_eq!(workflow_outcome(&[None], 0).1, exit::NEEDS_HUMAN);
}

#[test]
fn the_effect_attempt_is_the_one_that_completed() {
    let a = |n: u32, state, effect| Attempt::for_test(n, state).with_effect(effect);
    let list = [
        a(1, AttemptState::Rejected, None),
        a(2, AttemptState::Completed, None),
    ];
    assert_eq!(effect_attempt(&list).unwrap().number, 2);
    let list = [
        a(1, AttemptState::Completed, Some(E::Verified)),
        a(2, AttemptState::Failed, None),
    ];
    assert_eq!(effect_attempt(&list).unwrap().number, 1);
    let list = [
        a(1, AttemptState::Rejected, None),
        a(2, AttemptState::Working, None),
    ];
    assert_eq!(effect_attempt(&list).unwrap().number, 2);
    assert!(effect_attempt(&[]).is_none());
    assert_eq!(
        compensation_name(&StepName::from_parts("trip-42", "hotel")).to_string(),
        "trip-42/hotel~compensate"
    );
}
