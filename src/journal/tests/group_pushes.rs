//! A group commit of a listener's pushes (`record_pushes`): hints, pushes applied as they
//! came and read-backs, in one transaction, leave what each leaves committed on its own.

use super::group_commit::{events_of, unstamped};
use super::*;

/// Three attempts, each sent (WORKING, task `t1`…`t3`) with a push config.
fn three_pushed(j: &Journal) -> [AttemptId; 3] {
    let ids = ["p/a", "p/b", "p/c"].map(|name| created(j, name).id);
    for (i, id) in ids.iter().enumerate() {
        let task = format!("t{}", i + 1);
        let sent = task_json(&task, "TASK_STATE_WORKING", "2026-11-30T01:00:00Z");
        j.apply_task(*id, &view(&sent), Source::Send).unwrap();
        let config = format!("{:032x}", i + 1);
        j.register_push(
            *id,
            &config,
            &format!("http://127.0.0.1:9/push/{config}"),
            "h",
        )
        .unwrap();
    }
    ids
}

/// Each push config's hint, and whether a push was recorded for it, in the attempts' order.
fn hints(j: &Journal) -> Vec<(Option<String>, bool)> {
    j.read("read the hints", |db| {
        db.rows(
            "SELECT hint_json, last_push_at FROM push_configs ORDER BY attempt_id",
            &[],
            |r| Ok((r.get(0)?, r.get::<Option<i64>>(1)?.is_some())),
        )
    })
    .unwrap()
}

#[rstest]
fn a_group_commit_of_pushes_does_what_they_do_one_by_one(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let (one_place, batch_place) = (Fresh::new(kind), Fresh::new(kind));
    let (one, batch) = (one_place.open(), batch_place.open());
    let [a, b, c] = three_pushed(&one);
    assert_eq!(three_pushed(&batch), [a, b, c]);
    let hint = |attempt: AttemptId, n: usize, text: &str| PushRecord::Hint {
        attempt,
        config_id: format!("{n:032x}"),
        hint: text.to_owned(),
    };
    let pushes = vec![
        hint(a, 1, r#"{"pushed":"a"}"#),
        PushRecord::Applied(StreamObservation::Task {
            attempt: b,
            view: status_at("t2", "TASK_STATE_WORKING", 5),
            source: Source::Push,
        }),
        hint(c, 3, r#"{"pushed":"c"}"#),
        // Read back, disagreeing with what was pushed: the note, the task, the hint cleared.
        PushRecord::read_back(
            c,
            status_at("t3", "TASK_STATE_COMPLETED", 6),
            Some(serde_json::json!({"taskId": "t3", "pushed": "TASK_STATE_FAILED"})),
        ),
        // Read back another task: refused, and `a`'s hint stays.
        PushRecord::read_back(a, status_at("t-other", "TASK_STATE_COMPLETED", 7), None),
        PushRecord::Applied(StreamObservation::Artifact {
            attempt: b,
            update: ArtifactUpdate::from_value(&serde_json::json!({
                "taskId": "t2", "append": false, "lastChunk": true,
                "artifact": {"artifactId": "b1", "parts": [{"text": "done"}]}
            }))
            .unwrap(),
        }),
    ];
    let single: Vec<Result<(), String>> = pushes
        .iter()
        .map(|p| {
            let mut r = one.record_pushes(std::slice::from_ref(p)).unwrap();
            r.remove(0).map_err(|e| e.to_string())
        })
        .collect();
    let batched: Vec<Result<(), String>> = batch
        .record_pushes(&pushes)
        .unwrap()
        .into_iter()
        .map(|r| r.map_err(|e| e.to_string()))
        .collect();
    assert_eq!(batched, single);
    assert!(batched[4].as_ref().unwrap_err().contains("t-other"));
    assert_eq!(batched.iter().filter(|r| r.is_err()).count(), 1);
    for (id, step) in [(a, "p/a"), (b, "p/b"), (c, "p/c")] {
        assert_eq!(
            events_of(&batch, &[step]),
            events_of(&one, &[step]),
            "{step}"
        );
        let [x, y] = [&one, &batch].map(|j| unstamped(j.attempt(id).unwrap()));
        assert_eq!(x, y, "{step}");
    }
    let kinds: Vec<String> = events_of(&batch, &["p/c"])
        .into_iter()
        .map(|e| e.1)
        .collect();
    assert_eq!(kinds, ["state", "push-disagrees", "state"], "{kinds:?}");
    assert_eq!(batch.attempt(c).unwrap().state, AttemptState::Completed);
    assert_eq!(hints(&batch), hints(&one));
    assert_eq!(
        hints(&batch),
        [
            (Some(r#"{"pushed":"a"}"#.to_owned()), true),
            (None, false),
            (None, true),
        ]
    );
    assert_eq!(
        batch
            .artifacts(b)
            .unwrap()
            .iter()
            .map(Artifact::text)
            .collect::<Vec<_>>(),
        ["done"]
    );
}

#[rstest]
fn what_follows_an_observation_in_a_group_follows_it_in_the_journal(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let (one_place, batch_place) = (Fresh::new(kind), Fresh::new(kind));
    let (one, batch) = (one_place.open(), batch_place.open());
    let [a, b, c] = three_pushed(&one);
    assert_eq!(three_pushed(&batch), [a, b, c]);
    let pushes = vec![
        // A read-back of `a`, then a new hint for it: the hint stays.
        PushRecord::read_back(a, status_at("t1", "TASK_STATE_WORKING", 5), None),
        PushRecord::Hint {
            attempt: a,
            config_id: format!("{:032x}", 1),
            hint: "later".to_owned(),
        },
        // A push applied to `c`, then a read-back that disagrees: push, note, read.
        PushRecord::Applied(StreamObservation::Task {
            attempt: c,
            view: status_at("t3", "TASK_STATE_WORKING", 6),
            source: Source::Push,
        }),
        PushRecord::read_back(
            c,
            status_at("t3", "TASK_STATE_INPUT_REQUIRED", 7),
            Some(serde_json::json!({"taskId": "t3", "pushed": "TASK_STATE_COMPLETED"})),
        ),
        // A note whose read is refused: the note stays.
        PushRecord::read_back(
            b,
            status_at("t-other", "TASK_STATE_COMPLETED", 8),
            Some(serde_json::json!({"taskId": "t2", "pushed": "TASK_STATE_FAILED"})),
        ),
    ];
    for p in &pushes {
        one.record_pushes(std::slice::from_ref(p)).unwrap();
    }
    let batched = batch.record_pushes(&pushes).unwrap();
    assert!(batched[4].is_err(), "{batched:?}");
    for step in ["p/a", "p/b", "p/c"] {
        assert_eq!(
            events_of(&batch, &[step]),
            events_of(&one, &[step]),
            "{step}"
        );
    }
    let kinds = |step| -> Vec<String> {
        events_of(&batch, &[step])
            .into_iter()
            .map(|e| e.1)
            .collect()
    };
    assert_eq!(kinds("p/c"), ["state", "push", "push-disagrees", "state"]);
    assert_eq!(kinds("p/b"), ["state", "push-disagrees"]);
    assert_eq!(hints(&batch), hints(&one));
    assert_eq!(hints(&batch)[0], (Some("later".to_owned()), true));
}

#[rstest]
fn a_group_commits_only_what_changes_the_journal(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let fresh = Fresh::new(kind);
    let j = fresh.open();
    let [a, b, _] = three_pushed(&j);
    let other = fresh.open();
    let working = |attempt, second| {
        PushRecord::Applied(StreamObservation::Task {
            attempt,
            view: status_at(
                if attempt == a { "t1" } else { "t2" },
                "TASK_STATE_WORKING",
                second,
            ),
            source: Source::Push,
        })
    };
    j.record_pushes(&[working(a, 5), working(b, 5)]).unwrap();
    // The same again, and a read-back of what is held with no hint to clear: no commit.
    let version = other.data_version().unwrap();
    j.record_pushes(&[
        working(a, 5),
        PushRecord::read_back(b, status_at("t2", "TASK_STATE_WORKING", 5), None),
    ])
    .unwrap();
    assert_eq!(other.data_version().unwrap(), version);
    // A read-back of what is held clears a hint: a commit.
    j.record_pushes(&[PushRecord::Hint {
        attempt: b,
        config_id: format!("{:032x}", 2),
        hint: "h".to_owned(),
    }])
    .unwrap();
    let version = other.data_version().unwrap();
    j.record_pushes(&[PushRecord::read_back(
        b,
        status_at("t2", "TASK_STATE_WORKING", 5),
        None,
    )])
    .unwrap();
    assert_ne!(other.data_version().unwrap(), version);
    assert_eq!(hints(&j)[1].0, None);
    // A note whose read is refused: a commit.
    let version = other.data_version().unwrap();
    let refused = PushRecord::read_back(
        a,
        status_at("t-other", "TASK_STATE_WORKING", 9),
        Some(serde_json::json!({"taskId": "t1"})),
    );
    assert!(j.record_pushes(&[refused]).unwrap()[0].is_err());
    assert_ne!(other.data_version().unwrap(), version);
}
