//! Pruning: what `prune` deletes and what it never does.

use super::*;

#[rstest]
fn prune_takes_only_old_bare_refreshes_and_never_an_attempts_last_event(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let fresh = Fresh::new(kind);
    let j = fresh.open();
    let status = |id: AttemptId, state: &str, ts: &str, extra: &str| {
        let raw = format!(
            r#"{{"id":"t{}","contextId":"ctx-1","status":{{"state":"{state}","timestamp":"{ts}"{extra}}}}}"#,
            id.0
        );
        j.apply_task(id, &view(&raw), Source::GetTask).unwrap();
    };
    let working = "TASK_STATE_WORKING";
    let run = created(&j, "p/run");
    status(run.id, working, "2026-11-30T01:00:00Z", "");
    status(run.id, working, "2026-11-30T01:00:01Z", ""); // bare refresh: pruned
    let with_artifact = r#"},"artifacts":[{"artifactId":"a","parts":[{"text":"x"}]}],"x":{"#;
    status(run.id, working, "2026-11-30T01:00:02Z", with_artifact); // an artifact: kept
    status(run.id, working, "2026-11-30T01:00:03Z", ""); // bare refresh: pruned
    status(run.id, working, "2026-11-30T01:00:04Z", ""); // the newest: kept
    let ask = created(&j, "p/ask");
    let question =
        r#","message":{"role":"ROLE_AGENT","messageId":"q","parts":[{"text":"rooms?"}]}"#;
    let asking = "TASK_STATE_INPUT_REQUIRED";
    status(ask.id, asking, "2026-11-30T01:00:00Z", question);
    status(ask.id, asking, "2026-11-30T01:00:01Z", question); // carries the question: kept
    status(ask.id, asking, "2026-11-30T01:00:02Z", question);
    let kinds = |name: &str| -> Vec<String> {
        j.events_of_step(&StepName::parse(name).unwrap())
            .unwrap()
            .into_iter()
            .map(|e| e.kind)
            .collect()
    };
    let run_before = kinds("p/run");
    assert_eq!(
        run_before,
        [
            "intent", "state", "observed", "observed", "observed", "observed"
        ]
    );
    let (lo, hi) = j.event_id_range().unwrap().unwrap();
    // Nothing is older than a cutoff in the past.
    let past = crate::clock::system_now() - chrono::TimeDelta::days(1);
    assert_eq!(j.prune_events(past, lo, hi + 1, false).unwrap(), 0);
    let future = crate::clock::system_now() + chrono::TimeDelta::days(1);
    assert_eq!(
        j.prune_events(future, lo, hi + 1, true).unwrap(),
        2,
        "dry run"
    );
    assert_eq!(kinds("p/run"), run_before, "a dry run deletes nothing");
    // In two ranges, as the command walks them.
    let mid = lo + (hi - lo) / 2;
    let deleted = j.prune_events(future, lo, mid, false).unwrap()
        + j.prune_events(future, mid, hi + 1, false).unwrap();
    assert_eq!(deleted, 2);
    assert_eq!(kinds("p/run"), ["intent", "state", "observed", "observed"]);
    assert_eq!(kinds("p/ask").len(), 4, "question refreshes are kept");
    assert_eq!(j.prune_events(future, lo, hi + 1, false).unwrap(), 0);
    let s = j.storage().unwrap();
    assert!(
        s.pages > 0 && s.page_size >= 512 && s.free_pages <= s.pages,
        "{s:?}"
    );
}
