//! A group commit of sends' outcomes (`record_sends`): what the same records do one at a time,
//! in the same order of events, each attempt returned as a read after the commit finds it.

use super::group_commit::{Seen, events_of, unstamped};
use super::leases::{other, set_lease};
use super::*;

const STEPS: [&str; 4] = ["w/a", "w/b", "w/c", "w/d"];

/// Four attempts, each claimed by this process (leased, `INTENT`).
fn four_claimed(fresh: &Fresh) -> (Journal, [AttemptId; 4]) {
    let j = fresh.open();
    let ids = STEPS.map(|name| created(&j, name).id);
    for id in ids {
        assert!(matches!(j.claim(id, T).unwrap(), Claim::Claimed(_)));
    }
    (j, ids)
}

/// A record of `outcome` for `attempt`.
fn record(attempt: AttemptId, outcome: SendOutcome) -> SendRecord {
    SendRecord {
        attempt,
        outcome,
        accepts_context_id: None,
    }
}

/// What a record returned, without times, message id and (random) context id.
fn seen(r: &Result<Attempt, JournalError>) -> Result<Attempt, String> {
    match r {
        Ok(a) => {
            let mut a = unstamped(a.clone());
            a.context_id = None;
            Ok(a)
        }
        Err(e) => Err(e.to_string()),
    }
}

#[rstest]
fn a_group_commit_of_answers_does_what_they_do_one_at_a_time(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let task = |id: &str, state: &str, second: u32| {
        let raw = task_json(id, state, &format!("2026-11-30T01:00:{second:02}Z"));
        SendOutcome::Task(view(&raw), Source::Send)
    };
    let with_artifact = SendOutcome::Task(
        view(
            r#"{"id":"t3","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING","timestamp":"2026-11-30T01:00:05Z"},"artifacts":[{"artifactId":"a1","parts":[{"text":"hi"}]}]}"#,
        ),
        Source::Send,
    );
    let (one_place, batch_place) = (Fresh::new(kind), Fresh::new(kind));
    let (one, [a, b, c, d]) = four_claimed(&one_place);
    let (batch, ids) = four_claimed(&batch_place);
    assert_eq!(ids, [a, b, c, d]);
    let mut first = record(a, task("t1", "TASK_STATE_SUBMITTED", 0));
    first.accepts_context_id = Some("http://127.0.0.1:9/card".into());
    let records = vec![
        first,
        record(b, SendOutcome::Refused("no such skill".into())),
        // Refused between two good records: its own error, the others go on.
        record(a, task("t-other", "TASK_STATE_WORKING", 1)),
        record(AttemptId(a.0 + 1000), SendOutcome::Refused("gone".into())),
        // Artifacts are written row by row, after what came before.
        record(c, with_artifact),
        // The same attempt again: decided against the row the batch left.
        record(a, task("t1", "TASK_STATE_WORKING", 5)),
        // A release after a change (the lease ended with it): nothing more.
        record(b, SendOutcome::Release),
        // A release alone, then a change of the same attempt.
        record(d, SendOutcome::Release),
        record(c, task("t3", "TASK_STATE_COMPLETED", 9)),
        record(
            d,
            SendOutcome::Failed(FailureKind::Send, "timed out".into()),
        ),
        // A transition the state refuses, after a change in the same batch.
        record(b, task("t2", "TASK_STATE_WORKING", 9)),
    ];
    let single: Vec<Result<Attempt, String>> = records
        .iter()
        .map(|r| seen(&one.record_sends(std::slice::from_ref(r)).unwrap()[0]))
        .collect();
    let batched = batch.record_sends(&records).unwrap();
    assert_eq!(batched.iter().map(seen).collect::<Vec<_>>(), single);
    assert!(single[2].as_ref().unwrap_err().contains("t-other"));
    assert!(matches!(batched[3], Err(JournalError::UnknownAttempt(_))));
    assert!(matches!(batched[10], Err(JournalError::Transition { .. })));
    assert_eq!(events_of(&batch, &STEPS), events_of(&one, &STEPS));
    let events: Vec<Seen> = events_of(&batch, &STEPS);
    assert_eq!(events.len(), 6, "{events:?}");
    // Each attempt's last row returned is the row a read after the commit finds, to the
    // millisecond; every lease ended.
    for id in [a, b, c, d] {
        let last = batched
            .iter()
            .zip(&records)
            .filter(|(_, r)| r.attempt == id)
            .filter_map(|(x, _)| x.as_ref().ok())
            .next_back()
            .unwrap();
        let read = batch.attempt(id).unwrap();
        assert_eq!(*last, read);
        assert_eq!(read.lease, None);
        assert_eq!(unstamped(one.attempt(id).unwrap()).lease, None);
    }
    let states = [a, b, c, d].map(|id| batch.attempt(id).unwrap().state);
    assert_eq!(
        states,
        [
            AttemptState::Working,
            AttemptState::Refused,
            AttemptState::Completed,
            AttemptState::Intent
        ]
    );
    let artifacts = batch.artifacts(c).unwrap();
    assert_eq!(
        artifacts.iter().map(Artifact::text).collect::<Vec<_>>(),
        ["hi"]
    );
}

/// Another process's lease is left alone, even by a change of the attempt; a batch of
/// releases only writes the leases that are this process's.
#[rstest]
fn a_group_commit_releases_only_this_process_leases(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let fresh = Fresh::new(kind);
    let (j, [a, b, c, _]) = four_claimed(&fresh);
    let theirs = other(
        Some("someone-else"),
        1,
        "elsewhere",
        DateTime::from_timestamp(4_000_000_000, 0).unwrap(),
    );
    set_lease(&j, b, &theirs);
    set_lease(&j, c, &theirs);
    let done = j
        .record_sends(&[
            record(a, SendOutcome::Release),
            record(b, SendOutcome::Release),
            record(c, SendOutcome::Refused("no".into())),
        ])
        .unwrap();
    let leases: Vec<Option<String>> = done
        .iter()
        .map(|r| {
            r.as_ref()
                .unwrap()
                .lease
                .as_ref()
                .and_then(|l| l.owner.clone())
        })
        .collect();
    assert_eq!(
        leases,
        [
            None,
            Some("someone-else".into()),
            Some("someone-else".into())
        ]
    );
    for (id, returned) in [a, b, c].iter().zip(&done) {
        assert_eq!(returned.as_ref().unwrap(), &j.attempt(*id).unwrap());
    }
    assert_eq!(j.attempt(c).unwrap().state, AttemptState::Refused);
}
