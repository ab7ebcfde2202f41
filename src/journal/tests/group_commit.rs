//! A group commit of tasks (`apply_tasks`): what the same tasks do one by one, in the same
//! order of events, in a few statements.

use super::*;

/// Three attempts, each sent (SUBMITTED, task `t1`…`t3`).
fn three_submitted(fresh: &Fresh) -> (Journal, [AttemptId; 3]) {
    let j = fresh.open();
    let ids = ["w/s1", "w/s2", "w/s3"].map(|name| created(&j, name).id);
    for (i, id) in ids.iter().enumerate() {
        let task = format!("t{}", i + 1);
        let sent = task_json(&task, "TASK_STATE_SUBMITTED", "2026-11-30T01:00:00Z");
        j.apply_task(*id, &view(&sent), Source::Send).unwrap();
    }
    (j, ids)
}

/// An event as compared: its step, kind, state after, and details.
pub(super) type Seen = (Option<String>, String, Option<String>, Option<String>);

/// Every event of the three steps but their intents (which name random ids), oldest first,
/// without its id and time.
fn events(j: &Journal) -> Vec<Seen> {
    events_of(j, &["w/s1", "w/s2", "w/s3"])
}

/// Every event of `steps` but their intents, oldest first, without its id and time.
pub(super) fn events_of(j: &Journal, steps: &[&str]) -> Vec<Seen> {
    let mut all: Vec<Event> = steps
        .iter()
        .flat_map(|s| j.events_of_step(&StepName::parse(s).unwrap()).unwrap())
        .collect();
    all.sort_by_key(|e| e.id);
    all.into_iter()
        .filter(|e| e.kind != "intent")
        .map(|e| (e.step, e.kind, e.to, e.detail.map(|d| d.to_string())))
        .collect()
}

/// An attempt without its times and its (random) message id.
fn row(j: &Journal, id: AttemptId) -> Attempt {
    unstamped(j.attempt(id).unwrap())
}

/// An attempt without its times and its (random) message id.
pub(super) fn unstamped(mut a: Attempt) -> Attempt {
    a.created_at = DateTime::<Utc>::default();
    a.updated_at = DateTime::<Utc>::default();
    a.message_id.clear();
    a
}

#[rstest]
fn a_group_commit_of_tasks_does_what_they_do_one_by_one(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let with_artifact = view(
        r#"{"id":"t3","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING","timestamp":"2026-11-30T01:00:05Z"},"artifacts":[{"artifactId":"a1","parts":[{"text":"hi"}]}]}"#,
    );
    let (one_place, batch_place) = (Fresh::new(kind), Fresh::new(kind));
    let (one, [a, b, c]) = three_submitted(&one_place);
    let (batch, ids) = three_submitted(&batch_place);
    assert_eq!(ids, [a, b, c]);
    let tasks = vec![
        (a, status_at("t1", "TASK_STATE_WORKING", 5)),
        // As held: nothing.
        (b, status_at("t2", "TASK_STATE_SUBMITTED", 0)),
        // The same attempt again: decided against the row the batch left.
        (a, status_at("t1", "TASK_STATE_INPUT_REQUIRED", 6)),
        // Artifacts are read from the journal: what came before is written first.
        (c, with_artifact),
        (b, status_at("t2", "TASK_STATE_WORKING", 7)),
        // Older than what the batch wrote: nothing.
        (a, status_at("t1", "TASK_STATE_WORKING", 4)),
        (c, status_at("t3", "TASK_STATE_COMPLETED", 9)),
    ];
    let single: Vec<Applied> = tasks
        .iter()
        .map(|(id, v)| one.apply_task(*id, v, Source::GetTask).unwrap())
        .collect();
    let events_before = batch.event_count().unwrap();
    let batched = batch.apply_tasks(&tasks, Source::GetTask).unwrap();
    assert_eq!(batched, single);
    assert_eq!(batched[1], Applied::Unchanged);
    assert_eq!(batched[5], Applied::Unchanged);
    assert_eq!(batch.event_count().unwrap(), events_before + 5);
    assert_eq!(events(&batch), events(&one));
    for id in [a, b, c] {
        assert_eq!(row(&batch, id), row(&one, id));
    }
    assert_eq!(batch.attempt(a).unwrap().state, AttemptState::InputRequired);
    let texts: Vec<String> = batch
        .artifacts(c)
        .unwrap()
        .iter()
        .map(Artifact::text)
        .collect();
    assert_eq!(texts, ["hi"]);

    // Replayed, the batch changes nothing and writes nothing.
    let other = batch_place.open();
    let version = other.data_version().unwrap();
    let again = batch.apply_tasks(&tasks[4..], Source::GetTask).unwrap();
    assert!(again.iter().all(|x| *x == Applied::Unchanged), "{again:?}");
    assert_eq!(other.data_version().unwrap(), version);

    // One task of another attempt's id refuses the whole batch, and nothing of it is written.
    let events_before = batch.event_count().unwrap();
    let refused = batch.apply_tasks(
        &[
            (b, status_at("t2", "TASK_STATE_COMPLETED", 10)),
            (a, status_at("t-other", "TASK_STATE_COMPLETED", 10)),
        ],
        Source::GetTask,
    );
    assert!(
        matches!(refused, Err(JournalError::TaskMismatch { .. })),
        "{refused:?}"
    );
    assert_eq!(batch.event_count().unwrap(), events_before);
    assert_eq!(batch.attempt(b).unwrap().state, AttemptState::Working);
    let unknown = batch.apply_tasks(
        &[(
            AttemptId(a.0 + 1000),
            status_at("t1", "TASK_STATE_WORKING", 11),
        )],
        Source::GetTask,
    );
    assert!(
        matches!(unknown, Err(JournalError::UnknownAttempt(_))),
        "{unknown:?}"
    );
}

/// What a multi-row write carries in its rows (on PostgreSQL one JSON parameter per statement):
/// text that needs escaping, big text, a column set back to NULL, an attempt changed three
/// times in one batch, and attempts that change different columns in the same batch.
#[rstest]
fn a_group_commit_writes_odd_text_and_nulls_as_one_by_one(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let odd = format!(
        "quotes \" and \\ backslashes, ' \n\t, é ✓ 🦀, {}",
        "a long answer ".repeat(20_000)
    );
    let asked = |task: &str, second: u32| {
        let raw = serde_json::json!({
            "id": task, "contextId": "ctx-1",
            "status": {"state": "TASK_STATE_INPUT_REQUIRED",
                       "timestamp": format!("2026-11-30T01:00:{second:02}Z"),
                       "message": {"messageId": "q", "role": "ROLE_AGENT",
                                   "parts": [{"text": odd}]}}});
        view(&raw.to_string())
    };
    let (one_place, batch_place) = (Fresh::new(kind), Fresh::new(kind));
    let (one, [a, b, c]) = three_submitted(&one_place);
    let (batch, _) = three_submitted(&batch_place);
    let tasks = vec![
        (a, asked("t1", 1)),
        (b, status_at("t2", "TASK_STATE_WORKING", 1)),
        // The question answered: `pending_question` back to NULL, in the same batch.
        (a, status_at("t1", "TASK_STATE_WORKING", 2)),
        (c, asked("t3", 1)),
        (a, status_at("t1", "TASK_STATE_COMPLETED", 3)),
    ];
    let single: Vec<Applied> = tasks
        .iter()
        .map(|(id, v)| one.apply_task(*id, v, Source::GetTask).unwrap())
        .collect();
    let batched = batch.apply_tasks(&tasks, Source::GetTask).unwrap();
    assert_eq!(batched, single);
    assert!(batched.iter().all(|x| x.changed()), "{batched:?}");
    assert_eq!(events(&batch), events(&one));
    for id in [a, b, c] {
        assert_eq!(row(&batch, id), row(&one, id));
    }
    let a_row = batch.attempt(a).unwrap();
    assert_eq!(a_row.state, AttemptState::Completed);
    assert_eq!(a_row.pending_question, None);
    let question = batch.attempt(c).unwrap().pending_question.unwrap();
    let text = question.pointer("/parts/0/text").and_then(|t| t.as_str());
    assert!(text == Some(odd.as_str()), "the question's text differs");
    assert!(
        batch
            .attempt(c)
            .unwrap()
            .last_task_json
            .unwrap()
            .contains("a long answer a long answer")
    );
}

/// The events of a group commit spanning two workflows: each in the order of its change, and
/// each under its own step's workflow (the change names none; the multi-row insert of
/// PostgreSQL takes the step's, as the insert of one event does).
#[rstest]
fn a_group_commit_files_each_event_under_its_steps_workflow_in_order(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let place = Fresh::new(kind);
    let j = place.open();
    let ids: Vec<AttemptId> = ["w/s1", "v/s1", "w/s2", "v/s2"]
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let id = created(&j, name).id;
            let sent = task_json(
                &format!("t{i}"),
                "TASK_STATE_SUBMITTED",
                "2026-11-30T01:00:00Z",
            );
            j.apply_task(id, &view(&sent), Source::Send).unwrap();
            id
        })
        .collect();
    let tasks: Vec<(AttemptId, TaskView)> = ids
        .iter()
        .enumerate()
        .rev()
        .map(|(i, id)| {
            let raw = task_json(
                &format!("t{i}"),
                "TASK_STATE_WORKING",
                "2026-11-30T01:00:01Z",
            );
            (*id, view(&raw))
        })
        .collect();
    let before = j.event_count().unwrap();
    j.apply_tasks(&tasks, Source::GetTask).unwrap();
    // (attempt, its event's workflow, its step's workflow), in the order of the events' ids.
    let written: Vec<(i64, Option<i64>, i64)> = j
        .read("read the events", |db| {
            db.rows(
                "SELECT e.attempt_id, e.workflow_id, s.workflow_id FROM events e
                 JOIN steps s ON s.id = e.step_id WHERE e.kind = 'state' ORDER BY e.id",
                &[],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
        })
        .unwrap();
    assert_eq!(j.event_count().unwrap(), before + 4);
    // The sends' events come first; the batch's are the last four.
    let written = &written[written.len() - 4..];
    let changed: Vec<i64> = written.iter().map(|w| w.0).collect();
    let expected: Vec<i64> = tasks.iter().map(|(id, _)| id.0).collect();
    assert_eq!(changed, expected);
    for (attempt, event_workflow, step_workflow) in written {
        assert_eq!(*event_workflow, Some(*step_workflow), "attempt {attempt}");
    }
    let workflows: std::collections::BTreeSet<i64> = written.iter().map(|w| w.2).collect();
    assert_eq!(workflows.len(), 2);
}
