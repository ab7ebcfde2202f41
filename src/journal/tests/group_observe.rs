//! A group commit of stream observations (`apply_observations`): each observation's event, as
//! it returns it, is the one it appended, in the batch's order across kinds, as when each is
//! applied on its own.

use super::group_commit::unstamped;
use super::*;

/// Two attempts, each sent (WORKING, task `t1` and `t2`).
fn two_working(j: &Journal) -> [AttemptId; 2] {
    let ids = ["w/a", "w/b"].map(|name| created(j, name).id);
    for (id, task) in ids.iter().zip(["t1", "t2"]) {
        let sent = task_json(task, "TASK_STATE_WORKING", "2026-11-30T01:00:00Z");
        j.apply_task(*id, &view(&sent), Source::Send).unwrap();
    }
    ids
}

/// What an observation returned, and the event it names (kind, state after, details).
type Told = Result<
    (
        Applied,
        bool,
        Option<(String, Option<String>, Option<String>)>,
    ),
    String,
>;

/// What each of `batch` returned, with the event each names, read back.
fn told(j: &Journal, recorded: Vec<Result<Recorded, JournalError>>) -> Vec<Told> {
    let all: Vec<Event> = ["w/a", "w/b"]
        .iter()
        .flat_map(|s| j.events_of_step(&StepName::parse(s).unwrap()).unwrap())
        .collect();
    recorded
        .into_iter()
        .map(|r| {
            let r = r.map_err(|e| e.to_string())?;
            let event = r.event.map(|id| {
                let e = all.iter().find(|e| e.id == id).expect("the event it names");
                (
                    e.kind.clone(),
                    e.to.clone(),
                    e.detail.as_ref().map(ToString::to_string),
                )
            });
            Ok((r.applied, r.over_limit, event))
        })
        .collect()
}

#[rstest]
fn a_group_commit_of_observations_names_each_event_it_appended(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let chunk = |task: &str, id: &str, text: &str, append: bool| {
        ArtifactUpdate::from_value(&serde_json::json!({
            "taskId": task, "append": append, "lastChunk": false,
            "artifact": {"artifactId": id, "parts": [{"text": text}]}
        }))
        .unwrap()
    };
    let snapshot = view(
        r#"{"id":"t1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING","timestamp":"2026-11-30T01:00:20Z"},"artifacts":[{"artifactId":"a1","parts":[{"text":"whole"}]}]}"#,
    );
    let task = |attempt, view| StreamObservation::Task {
        attempt,
        view,
        source: Source::Stream,
    };
    let art = |attempt, update| StreamObservation::Artifact { attempt, update };
    // Room for `b`'s first chunk, not for its second.
    let limits = SizeLimits {
        artifact: 64,
        task: SizeLimits::DEFAULT_TASK,
    };
    let (one_place, batch_place) = (Fresh::new(kind), Fresh::new(kind));
    let (one, batch) = (
        one_place.open().with_size_limits(limits),
        batch_place.open().with_size_limits(limits),
    );
    let [a, b] = two_working(&one);
    assert_eq!(two_working(&batch), [a, b]);
    let observations = vec![
        task(a, status_at("t1", "TASK_STATE_INPUT_REQUIRED", 5)),
        art(b, chunk("t2", "b1", "small", false)),
        // The same attempt again, decided against the row the batch left.
        task(a, status_at("t1", "TASK_STATE_WORKING", 6)),
        // Refused between two good ones.
        task(a, status_at("t-other", "TASK_STATE_WORKING", 7)),
        art(a, chunk("t1", "a1", "part ", false)),
        // Past the limit: the attempt's error and a `failed-for-good` event.
        art(b, chunk("t2", "b1", &"x".repeat(100), true)),
        task(b, status_at("t2", "TASK_STATE_WORKING", 8)),
        // Reads the artifacts and the attempt: what came before is written first.
        task(a, snapshot),
        art(a, chunk("t1", "a1", "more", true)),
        // As held: nothing.
        task(a, status_at("t1", "TASK_STATE_WORKING", 20)),
        task(b, status_at("t2", "TASK_STATE_COMPLETED", 9)),
    ];
    let single: Vec<Told> = observations
        .iter()
        .map(|o| {
            let r = one.apply_observations(std::slice::from_ref(o)).unwrap();
            told(&one, r).remove(0)
        })
        .collect();
    let recorded = batch.apply_observations(&observations).unwrap();
    // The events named are in the batch's order, each one once.
    let named: Vec<i64> = recorded
        .iter()
        .filter_map(|r| r.as_ref().ok()?.event)
        .collect();
    assert!(named.is_sorted_by(|x, y| x < y), "{named:?}");
    assert_eq!(named.len(), 9, "{named:?}");
    let batched = told(&batch, recorded);
    assert_eq!(batched, single);
    assert!(batched[3].as_ref().unwrap_err().contains("t-other"));
    assert!(matches!(&batched[5], Ok((_, true, Some((kind, _, _)))) if kind == "failed-for-good"));
    assert!(matches!(batched[9], Ok((Applied::Unchanged, false, None))));
    for id in [a, b] {
        let [x, y] = [&one, &batch].map(|j| {
            let mut row = unstamped(j.attempt(id).unwrap());
            row.context_id = None;
            row
        });
        assert_eq!(x, y);
    }
    let artifacts = batch.artifacts(a).unwrap();
    assert_eq!(
        artifacts.iter().map(Artifact::text).collect::<Vec<_>>(),
        ["wholemore"]
    );
}
