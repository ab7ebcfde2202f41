//! Unit tests of the journal against real SQLite files in temporary directories.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use rusqlite::{Connection, TransactionBehavior};

use super::*;
use crate::a2a::ArtifactView;
use crate::clock::FixedClock;

const T: Duration = Duration::from_secs(10);

fn tmp_journal() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state/journal.sqlite3");
    (dir, path)
}

fn intent(name: &str, text: &str, agent: &str) -> NewIntent {
    NewIntent {
        spec: StepSpec::to_agent(StepName::parse(name).unwrap(), text, agent),
        agent_url: Some(agent.to_owned()),
        message_id: uuid::Uuid::new_v4().to_string(),
        context_id: Some(uuid::Uuid::new_v4().to_string()),
    }
}

fn created(j: &Journal, name: &str) -> Attempt {
    match j
        .create_intents(&[intent(name, "book a room", "http://127.0.0.1:9/")])
        .unwrap()
        .remove(0)
    {
        IntentOutcome::Created(a) => a,
        IntentOutcome::Existing(_) => panic!("{name} existed"),
    }
}

fn task_json(id: &str, state: &str, ts: &str) -> String {
    format!(
        r#"{{"id":"{id}","contextId":"ctx-1","status":{{"state":"{state}","timestamp":"{ts}"}}}}"#
    )
}

fn view(raw: &str) -> TaskView {
    TaskView::from_raw(raw).unwrap()
}

fn bytes(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_default()
}

fn sizes(path: &Path) -> (u64, u64) {
    let len = |p: &Path| fs::metadata(p).map_or(0, |m| m.len());
    (len(path), len(&file::sibling(path, "-wal")))
}

// ---------------------------------------------------------------------------------------------
// Opening
// ---------------------------------------------------------------------------------------------

#[test]
fn open_creates_private_files_and_sets_pragmas() {
    let (dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
    assert!(j.is_writable());
    assert_eq!(j.schema_version(), migrate::LATEST);
    assert_eq!(
        fs::metadata(dir.path().join("state"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o700
    );
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    {
        let c = j.store.lock();
        let mode: String = c
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        let sync: i64 = c.query_row("PRAGMA synchronous", [], |r| r.get(0)).unwrap();
        let fk: i64 = c
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .unwrap();
        let v: i64 = c
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!((mode.as_str(), sync, fk, v), ("wal", 2, 1, migrate::LATEST));
    }
    created(&j, "w/s");
    // The WAL and shared-memory files inherit the journal's mode.
    for suffix in ["-wal", "-shm"] {
        let p = file::sibling(&path, suffix);
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600,
            "{suffix}"
        );
    }
    drop(j);
    let again = Journal::open(&path, T).unwrap();
    assert!(
        again
            .step(&StepName::parse("w/s").unwrap())
            .unwrap()
            .is_some()
    );
}

#[test]
fn an_existing_directory_keeps_its_mode() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    fs::create_dir(&shared).unwrap();
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o775)).unwrap();
    let j = Journal::open(&shared.join("j.sqlite3"), T).unwrap();
    assert_eq!(
        fs::metadata(&shared).unwrap().permissions().mode() & 0o777,
        0o775
    );
    assert_eq!(j.warnings().len(), 1, "{:?}", j.warnings());
}

fn assert_refused_untouched(path: &Path, check: impl Fn(&JournalError) -> bool) {
    let before = bytes(path);
    let err = Journal::open(path, T).unwrap_err();
    assert!(check(&err), "unexpected error: {err:?}");
    assert!(err.hint().is_some());
    assert_eq!(bytes(path), before, "the file was modified");
    assert!(
        !file::sibling(path, "-wal").exists()
            || fs::metadata(file::sibling(path, "-wal")).unwrap().len() == 0
    );
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_untouched() {
    let (_dir, path) = tmp_journal();
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, "name,amount\nhotel,120\n".repeat(300)).unwrap();
    assert_refused_untouched(&path, |e| matches!(e, JournalError::NotSqlite { .. }));
    assert!(!file::sibling(&path, "-wal").exists());
    assert!(!file::sibling(&path, "-shm").exists());
}

#[test]
fn a_truncated_journal_is_refused_untouched() {
    let (_dir, path) = tmp_journal();
    {
        let j = Journal::open(&path, T).unwrap();
        for i in 0..50 {
            created(&j, &format!("w/s{i}"));
        }
    }
    let full = bytes(&path);
    assert!(
        full.len() > 8192,
        "journal too small to truncate: {}",
        full.len()
    );
    // On a page boundary, and mid-page.
    for cut in [full.len() / 4096 / 2 * 4096, full.len() / 2 + 123, 60] {
        fs::write(&path, &full[..cut]).unwrap();
        assert_refused_untouched(&path, |e| {
            matches!(
                e,
                JournalError::Corrupt { .. } | JournalError::NotSqlite { .. }
            )
        });
    }
}

#[test]
fn a_damaged_schema_page_is_refused_untouched() {
    let (_dir, path) = tmp_journal();
    drop(Journal::open(&path, T).unwrap());
    let mut data = bytes(&path);
    // Scribble over page 1 after the header: the schema b-tree.
    for b in &mut data[100..4096] {
        *b = 0xa5;
    }
    fs::write(&path, &data).unwrap();
    assert_refused_untouched(&path, |e| {
        matches!(
            e,
            JournalError::Corrupt { .. } | JournalError::NotSqlite { .. }
        )
    });
}

#[test]
fn another_applications_database_is_refused_untouched() {
    let (_dir, path) = tmp_journal();
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    {
        let c = Connection::open(&path).unwrap();
        c.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');")
            .unwrap();
    }
    assert_refused_untouched(&path, |e| matches!(e, JournalError::NotAJournal { .. }));
}

#[test]
fn a_newer_journal_opens_read_only() {
    let (_dir, path) = tmp_journal();
    {
        let j = Journal::open(&path, T).unwrap();
        created(&j, "trip/hotel");
        j.store
            .lock()
            .pragma_update(None, "user_version", migrate::LATEST + 1)
            .unwrap();
    }
    let before = bytes(&path);
    let j = Journal::open(&path, T).unwrap();
    assert!(!j.is_writable());
    let page = j.inspect(&InspectFilter::default()).unwrap();
    assert_eq!(page.rows.len(), 1);
    let err = j
        .create_intents(&[intent("trip/car", "x", "http://a/")])
        .unwrap_err();
    assert!(matches!(err, JournalError::NewerVersion { .. }), "{err:?}");
    assert!(
        err.hint()
            .unwrap()
            .contains("written by a newer a2a-recover")
    );
    let id = page.rows[0].attempt.id;
    assert!(matches!(
        j.record_failure(id, FailureKind::Send, "x"),
        Err(JournalError::NewerVersion { .. })
    ));
    drop(j);
    assert_eq!(bytes(&path), before);
}

#[test]
fn read_only_open_never_creates() {
    let (_dir, path) = tmp_journal();
    assert!(Journal::open_read_only(&path, T).is_err());
    assert!(!path.exists());
    assert!(!path.parent().unwrap().exists());
    drop(Journal::open(&path, T).unwrap());
    let j = Journal::open_read_only(&path, T).unwrap();
    assert!(!j.is_writable());
    assert!(matches!(
        j.create_intents(&[intent("a/b", "x", "http://a/")]),
        Err(JournalError::ReadOnly { .. })
    ));
}

/// Processes that open a new journal at once (two cron jobs, a plan and a pass) all get it:
/// SQLite answers one of them "busy" without waiting when another switches the file to WAL
/// under it, and `open` must wait that out like any other lock. Before the fix, about 1 open
/// in 90 failed here.
#[test]
fn concurrent_first_opens_of_a_new_journal_all_succeed() {
    for _ in 0..200 {
        let (_dir, path) = tmp_journal();
        let barrier = std::sync::Barrier::new(4);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    barrier.wait();
                    let j = Journal::open(&path, Duration::from_secs(30)).unwrap();
                    assert_eq!(j.schema_version(), migrate::LATEST);
                });
            }
        });
    }
}

/// Opening waits for another process's write lock up to the timeout, then says so.
#[test]
fn opening_a_journal_locked_past_the_timeout_waits_it_out_and_names_it() {
    let (_dir, path) = tmp_journal();
    drop(Journal::open(&path, Duration::from_secs(5)).unwrap());
    let mut other = Connection::open(&path).unwrap();
    let tx = other
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .unwrap();
    let started = std::time::Instant::now();
    let err = Journal::open(&path, Duration::from_millis(300)).unwrap_err();
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(
        matches!(err, JournalError::Busy { waited, .. } if waited == Duration::from_millis(300)),
        "{err:?}"
    );
    assert!(err.to_string().contains("stayed busy for 300ms"), "{err}");
    drop(tx);
    Journal::open(&path, Duration::from_millis(300)).unwrap();
}

#[test]
fn a_busy_journal_times_out_with_a_hint() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, Duration::from_millis(50)).unwrap();
    let mut other = Connection::open(&path).unwrap();
    let tx = other
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .unwrap();
    let err = j
        .create_intents(&[intent("a/b", "x", "http://a/")])
        .unwrap_err();
    assert!(matches!(err, JournalError::Busy { .. }), "{err:?}");
    assert!(err.hint().unwrap().contains("--timeout"));
    drop(tx);
}

// ---------------------------------------------------------------------------------------------
// Intents and observations
// ---------------------------------------------------------------------------------------------

#[test]
fn intents_commit_together_and_re_runs_find_them() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
    let agent = "http://127.0.0.1:9/";
    let plan: Vec<NewIntent> = ["flight", "hotel", "car"]
        .iter()
        .map(|s| intent(&format!("trip-42/{s}"), s, agent))
        .collect();
    let out = j.create_intents(&plan).unwrap();
    let seqs: Vec<i64> = ["flight", "hotel", "car"]
        .iter()
        .map(|s| {
            j.step(&StepName::parse(&format!("trip-42/{s}")).unwrap())
                .unwrap()
                .unwrap()
                .step
                .seq
        })
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    for (o, i) in out.iter().zip(&plan) {
        let IntentOutcome::Created(a) = o else {
            panic!("{o:?}")
        };
        assert_eq!(a.state, AttemptState::Intent);
        assert_eq!(a.number, 1);
        assert_eq!(a.message_id, i.message_id);
        assert_eq!(a.context_id, i.context_id);
        assert!(a.context_id_ours);
        assert_eq!(a.agent_url.as_deref(), Some(agent));
        assert_eq!(a.interface_url, None);
    }
    let again = j.create_intents(&plan[1..2]).unwrap();
    let IntentOutcome::Existing(rec) = &again[0] else {
        panic!("{again:?}")
    };
    assert_eq!(rec.attempts.len(), 1);
    assert_eq!(rec.step.spec.text, "hotel");
    assert_eq!(j.event_count().unwrap(), 3);
    assert_eq!(
        j.workflow_state("trip-42").unwrap(),
        Some(WorkflowState::Active)
    );
}

#[test]
fn a_failed_plan_commits_nothing() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
    let a = intent("trip/a", "x", "http://a/");
    let mut b = intent("trip/b", "y", "http://a/");
    // The same messageId twice violates UNIQUE in the middle of the transaction.
    b.message_id.clone_from(&a.message_id);
    assert!(j.create_intents(&[a, b]).is_err());
    assert!(!j.workflow_exists("trip").unwrap());
    assert_eq!(j.event_count().unwrap(), 0);
}

#[test]
fn an_agent_refusing_context_ids_gets_none() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
    let first = created(&j, "w/one");
    assert!(first.context_id.is_some());
    assert!(
        j.set_accepts_context_id("http://127.0.0.1:9/", false)
            .unwrap()
    );
    assert!(
        !j.set_accepts_context_id("http://127.0.0.1:9/", false)
            .unwrap()
    );
    let second = created(&j, "w/two");
    assert_eq!(second.context_id, None);
    assert_eq!(
        j.agent("http://127.0.0.1:9/")
            .unwrap()
            .unwrap()
            .accepts_context_id,
        Some(false)
    );
}

#[test]
fn the_first_endpoint_wins() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
    let a = created(&j, "w/s");
    let ep = |u: &str| Endpoint {
        interface_url: u.to_owned(),
        tenant: Some("t1".to_owned()),
    };
    let after = j.set_endpoint(a.id, &ep("http://127.0.0.1:9/rpc")).unwrap();
    assert_eq!(
        after.interface_url.as_deref(),
        Some("http://127.0.0.1:9/rpc")
    );
    let events = j.event_count().unwrap();
    let again = j
        .set_endpoint(a.id, &ep("http://127.0.0.1:9/other"))
        .unwrap();
    assert_eq!(
        again.interface_url.as_deref(),
        Some("http://127.0.0.1:9/rpc")
    );
    assert_eq!(again.tenant.as_deref(), Some("t1"));
    assert_eq!(j.event_count().unwrap(), events);
}

#[test]
fn a_task_observation_records_everything_and_a_repeat_writes_nothing() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
    let a = created(&j, "trip/hotel");
    let raw = r#"{"id":"t-1","contextId":"ctx-agent","status":{"state":"TASK_STATE_INPUT_REQUIRED",
        "message":{"messageId":"q","role":"ROLE_AGENT","parts":[{"text":"two rooms or one?"}]},
        "timestamp":"2026-11-30T01:08:43.415935Z"},
        "artifacts":[{"artifactId":"a1","name":"quote","parts":[{"text":"120 EUR"}]}]}"#;
    let applied = j.apply_task(a.id, &view(raw), Source::Send).unwrap();
    assert_eq!(
        applied,
        Applied::Changed {
            from: AttemptState::Intent,
            to: AttemptState::InputRequired
        }
    );
    let got = j.attempt(a.id).unwrap();
    assert_eq!(got.task_id.as_deref(), Some("t-1"));
    assert_eq!(got.context_id.as_deref(), Some("ctx-agent"));
    assert!(!got.context_id_ours);
    assert_eq!(
        got.status_timestamp.as_deref(),
        Some("2026-11-30T01:08:43.415935Z")
    );
    assert_eq!(got.question_text().as_deref(), Some("two rooms or one?"));
    assert_eq!(got.last_task_json.as_deref(), Some(raw));
    assert_eq!(j.artifacts(a.id).unwrap()[0].text(), "120 EUR");

    // The same observation again (from another source, even): nothing at all is written.
    let events = j.event_count().unwrap();
    let other = Connection::open(&path).unwrap();
    let dv = |c: &Connection| -> i64 {
        c.query_row("PRAGMA data_version", [], |r| r.get(0))
            .unwrap()
    };
    let before = (
        sizes(&path),
        dv(&other),
        bytes(&file::sibling(&path, "-wal")),
    );
    for source in [Source::GetTask, Source::ListTasks, Source::Stream] {
        assert_eq!(
            j.apply_task(a.id, &view(raw), source).unwrap(),
            Applied::Unchanged
        );
    }
    // A snapshot without artifacts (ListTasks) changes nothing either.
    let listed = raw.replace(
        r#"        "artifacts":[{"artifactId":"a1","name":"quote","parts":[{"text":"120 EUR"}]}]"#,
        r#"        "history":[]"#,
    );
    assert_ne!(listed, raw);
    assert_eq!(
        j.apply_task(a.id, &view(&listed), Source::ListTasks)
            .unwrap(),
        Applied::Unchanged
    );
    let after = (
        sizes(&path),
        dv(&other),
        bytes(&file::sibling(&path, "-wal")),
    );
    assert_eq!(before, after);
    assert_eq!(j.event_count().unwrap(), events);
    assert_eq!(j.attempt(a.id).unwrap(), got);
}

#[test]
fn older_statuses_are_ignored_and_terminal_states_stay() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
    let a = created(&j, "w/s");
    let working = task_json("t", "TASK_STATE_WORKING", "2026-11-30T01:00:00.500Z");
    let older = task_json("t", "TASK_STATE_SUBMITTED", "2026-11-30T01:00:00.499999Z");
    let done = task_json("t", "TASK_STATE_COMPLETED", "2026-11-30T01:00:01Z");
    let late = task_json("t", "TASK_STATE_WORKING", "2026-11-30T01:00:02Z");
    j.apply_task(a.id, &view(&working), Source::Send).unwrap();
    assert_eq!(
        j.apply_task(a.id, &view(&older), Source::Stream).unwrap(),
        Applied::Unchanged
    );
    assert_eq!(j.attempt(a.id).unwrap().state, AttemptState::Working);
    assert!(
        j.apply_task(a.id, &view(&done), Source::GetTask)
            .unwrap()
            .changed()
    );
    assert_eq!(
        j.apply_task(a.id, &view(&late), Source::Stream).unwrap(),
        Applied::Unchanged
    );
    let got = j.attempt(a.id).unwrap();
    assert_eq!(got.state, AttemptState::Completed);
    assert_eq!(
        got.status_timestamp.as_deref(),
        Some("2026-11-30T01:00:01Z")
    );
    // Another task for the same attempt is a bug, refused.
    let stranger = task_json("other", "TASK_STATE_WORKING", "2026-11-30T01:00:03Z");
    assert!(matches!(
        j.apply_task(a.id, &view(&stranger), Source::GetTask),
        Err(JournalError::TaskMismatch { .. })
    ));
    // A completed task still takes artifacts it did not have (ListTasks omitted them).
    let with_art = r#"{"id":"t","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-11-30T01:00:01Z"},
        "artifacts":[{"artifactId":"b","parts":[{"text":"booking 77"}]}]}"#;
    assert!(
        j.apply_task(a.id, &view(with_art), Source::GetTask)
            .unwrap()
            .changed()
    );
    assert_eq!(j.artifacts(a.id).unwrap().len(), 1);
    assert_eq!(j.attempt(a.id).unwrap().state, AttemptState::Completed);
    let kinds: Vec<String> = j
        .events_of_step(&StepName::parse("w/s").unwrap())
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(kinds, ["intent", "state", "state", "observed"]);
}

#[test]
fn artifact_updates_append_and_stop_at_the_last_chunk() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
    let a = created(&j, "w/s");
    j.apply_task(
        a.id,
        &view(&task_json(
            "t",
            "TASK_STATE_WORKING",
            "2026-11-30T01:00:00Z",
        )),
        Source::Stream,
    )
    .unwrap();
    let upd = |text: &str, append: bool, last: bool| {
        ArtifactUpdate::from_value(&serde_json::json!({
            "taskId": "t", "contextId": "ctx-1", "append": append, "lastChunk": last,
            "artifact": {"artifactId": "a1", "name": "report", "parts": [{"text": text}]}
        }))
        .unwrap()
    };
    assert!(
        j.apply_artifact_update(a.id, &upd("one ", false, false))
            .unwrap()
            .changed()
    );
    assert!(
        j.apply_artifact_update(a.id, &upd("two ", true, false))
            .unwrap()
            .changed()
    );
    assert!(
        j.apply_artifact_update(a.id, &upd("three", true, true))
            .unwrap()
            .changed()
    );
    // A replayed last chunk (or any append after it) changes nothing.
    assert_eq!(
        j.apply_artifact_update(a.id, &upd("three", true, true))
            .unwrap(),
        Applied::Unchanged
    );
    let arts = j.artifacts(a.id).unwrap();
    assert_eq!(arts.len(), 1);
    assert_eq!(arts[0].text(), "one two three");
    assert!(arts[0].last_chunk);
    // A non-append update replaces it.
    assert!(
        j.apply_artifact_update(a.id, &upd("fresh", false, true))
            .unwrap()
            .changed()
    );
    assert_eq!(j.artifacts(a.id).unwrap()[0].text(), "fresh");
    assert_eq!(
        j.apply_artifact_update(a.id, &upd("fresh", false, true))
            .unwrap(),
        Applied::Unchanged
    );
}

/// Two attempts with tasks `t1` and `t2`, WORKING.
fn two_working(path: &Path) -> (Journal, AttemptId, AttemptId) {
    let j = Journal::open(path, T).unwrap();
    let a = created(&j, "w/s1");
    let b = created(&j, "w/s2");
    for (id, task) in [(a.id, "t1"), (b.id, "t2")] {
        j.apply_task(
            id,
            &view(&task_json(
                task,
                "TASK_STATE_WORKING",
                "2026-11-30T01:00:00Z",
            )),
            Source::Send,
        )
        .unwrap();
    }
    (j, a.id, b.id)
}

#[test]
fn a_batch_of_observations_does_what_they_do_one_by_one_in_fewer_pages() {
    let status = |task: &str, state: &str, second: u32| {
        view(&format!(
            r#"{{"id":"{task}","contextId":"ctx-1","status":{{"state":"{state}","timestamp":"2026-11-30T01:00:{second:02}Z"}}}}"#
        ))
    };
    let chunk = |task: &str, text: &str, append: bool, last: bool| {
        ArtifactUpdate::from_value(&serde_json::json!({
            "taskId": task, "append": append, "lastChunk": last,
            "artifact": {"artifactId": "a1", "parts": [{"text": text}]}
        }))
        .unwrap()
    };
    let snapshot = |task: &str, text: &str| {
        view(&format!(
            r#"{{"id":"{task}","contextId":"ctx-1","status":{{"state":"TASK_STATE_WORKING","timestamp":"2026-11-30T01:00:30Z"}},"artifacts":[{{"artifactId":"a1","parts":[{{"text":"{text}"}}]}}]}}"#
        ))
    };
    let (_dir_one, one_path) = tmp_journal();
    let (_dir_batch, batch_path) = tmp_journal();
    let (one, a1, b1) = two_working(&one_path);
    let (batch, a2, b2) = two_working(&batch_path);
    assert_eq!((a1, b1), (a2, b2));
    let (a, b) = (a1, b1);
    let task = |attempt, view| StreamObservation::Task {
        attempt,
        view,
        source: Source::Stream,
    };
    let art = |attempt, update| StreamObservation::Artifact { attempt, update };
    let observations = vec![
        art(a, chunk("t1", "one ", false, false)),
        art(a, chunk("t1", "two ", true, false)),
        task(a, status("t1", "TASK_STATE_WORKING", 5)),
        art(b, chunk("t2", "b-one ", false, false)),
        // Another task's event is refused alone; the rest of the batch goes on.
        art(a, chunk("t-other", "x", true, false)),
        art(a, chunk("t1", "three ", true, false)),
        // A snapshot reads what the batch appended so far, and replaces it.
        task(a, snapshot("t1", "one two three four ")),
        art(a, chunk("t1", "five", true, true)),
        // After the last chunk an append changes nothing.
        art(a, chunk("t1", "six", true, false)),
        art(b, chunk("t2", "b-two", true, true)),
        task(b, status("t2", "TASK_STATE_COMPLETED", 9)),
    ];
    let wal_before = (sizes(&one_path).1, sizes(&batch_path).1);
    let single: Vec<Result<Applied, String>> = observations
        .iter()
        .map(|o| {
            match o {
                StreamObservation::Task {
                    attempt,
                    view,
                    source,
                } => one.apply_task(*attempt, view, *source),
                StreamObservation::Artifact { attempt, update } => {
                    one.apply_artifact_update(*attempt, update)
                }
            }
            .map_err(|e| e.to_string())
        })
        .collect();
    let batched: Vec<Result<Applied, String>> = batch
        .apply_observations(&observations)
        .unwrap()
        .into_iter()
        .map(|r| r.map(|r| r.applied).map_err(|e| e.to_string()))
        .collect();
    assert_eq!(batched, single);
    assert!(single[4].as_ref().unwrap_err().contains("t-other"));
    assert_eq!(single[8], Ok(Applied::Unchanged));
    for j in [&one, &batch] {
        let texts: Vec<(String, bool)> = [a, b]
            .iter()
            .flat_map(|id| j.artifacts(*id).unwrap())
            .map(|x| (x.text(), x.last_chunk))
            .collect();
        assert_eq!(
            texts,
            [
                ("one two three four five".to_owned(), true),
                ("b-one b-two".to_owned(), true)
            ]
        );
        assert_eq!(j.attempt(b).unwrap().state, AttemptState::Completed);
    }
    let kinds = |j: &Journal, step: &str| -> Vec<(String, Option<String>)> {
        j.events_of_step(&StepName::parse(step).unwrap())
            .unwrap()
            .into_iter()
            .map(|e| (e.kind, e.to))
            .collect()
    };
    assert_eq!(kinds(&batch, "w/s1"), kinds(&one, "w/s1"));
    assert_eq!(kinds(&batch, "w/s2"), kinds(&one, "w/s2"));
    // Each event appended its row; the batch wrote each page once.
    let grown = (
        sizes(&one_path).1 - wal_before.0,
        sizes(&batch_path).1 - wal_before.1,
    );
    assert!(
        grown.1 * 3 < grown.0,
        "WAL bytes one by one vs batched: {grown:?}"
    );
    // Replayed, the batch changes nothing and writes nothing.
    let wal = sizes(&batch_path).1;
    let again = batch.apply_observations(&observations[8..]).unwrap();
    assert!(again.iter().all(|r| {
        r.as_ref()
            .is_ok_and(|r| r.applied == Applied::Unchanged && r.event.is_none())
    }));
    assert_eq!(sizes(&batch_path).1, wal);
}

#[test]
fn send_outcomes_settle_an_intent_once() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
    let replied = created(&j, "w/replied");
    let msg =
        r#"{"messageId":"r","role":"ROLE_AGENT","contextId":"c9","parts":[{"text":"hello"}]}"#;
    assert!(
        j.record_direct_reply(replied.id, msg, Some("c9"))
            .unwrap()
            .changed()
    );
    assert_eq!(
        j.record_direct_reply(replied.id, msg, Some("c9")).unwrap(),
        Applied::Unchanged
    );
    let got = j.attempt(replied.id).unwrap();
    assert_eq!(got.state, AttemptState::Replied);
    assert_eq!(got.outcome_json.as_deref(), Some(msg));
    assert!(matches!(
        j.record_refusal(replied.id, "x"),
        Err(JournalError::Transition { .. })
    ));

    let refused = created(&j, "w/refused");
    j.record_failure(refused.id, FailureKind::Send, "connection refused")
        .unwrap();
    assert_eq!(j.attempt(refused.id).unwrap().state, AttemptState::Intent);
    j.record_refusal(refused.id, "HTTP 403").unwrap();
    let got = j.attempt(refused.id).unwrap();
    assert_eq!(
        (got.state, got.error.as_deref()),
        (AttemptState::Refused, Some("HTTP 403"))
    );

    let unsure = created(&j, "w/unsure");
    j.mark_uncertain(unsure.id, "ListTasks unsupported")
        .unwrap();
    assert_eq!(
        j.mark_uncertain(unsure.id, "again").unwrap(),
        Applied::Unchanged
    );
    j.reopen_for_resend(unsure.id, "operator").unwrap();
    assert_eq!(j.attempt(unsure.id).unwrap().state, AttemptState::Intent);

    let lost = created(&j, "w/lost");
    assert!(j.mark_lost(lost.id, "x").is_err());
    j.apply_task(
        lost.id,
        &view(&task_json(
            "t9",
            "TASK_STATE_WORKING",
            "2026-11-30T01:00:00Z",
        )),
        Source::Send,
    )
    .unwrap();
    j.mark_lost(lost.id, "TaskNotFound").unwrap();
    assert_eq!(j.attempt(lost.id).unwrap().state, AttemptState::Lost);

    let kinds: Vec<String> = j
        .events_of_step(&StepName::parse("w/refused").unwrap())
        .unwrap()
        .into_iter()
        .map(|e| format!("{}:{}", e.kind, e.to.unwrap_or_default()))
        .collect();
    assert_eq!(
        kinds,
        ["intent:INTENT", "send-failed:INTENT", "state:REFUSED"]
    );
}

#[test]
fn attempts_stay_within_the_budget() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
    let first = created(&j, "w/s");
    let next = |prev| NewAttempt {
        agent_url: Some("http://127.0.0.1:8/".to_owned()),
        token_env: None,
        message_id: uuid::Uuid::new_v4().to_string(),
        context_id: Some(uuid::Uuid::new_v4().to_string()),
        previous: Some(prev),
    };
    let second = j.add_attempt(first.step_id, &next(first.id)).unwrap();
    assert_eq!(
        (second.number, second.previous_attempt),
        (2, Some(first.id))
    );
    let third = j.add_attempt(first.step_id, &next(second.id)).unwrap();
    assert_eq!(third.number, 3);
    assert!(matches!(
        j.add_attempt(first.step_id, &next(third.id)),
        Err(JournalError::BudgetSpent { max: 3, .. })
    ));
}

#[test]
fn a_view_that_changes_nothing_is_one_the_journal_would_not_write() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
    let a = created(&j, "w/s");
    let working = view(&task_json(
        "t1",
        "TASK_STATE_WORKING",
        "2026-11-30T01:00:00.000001Z",
    ));
    // Before the task is known, and on the first sight of it, there is something to write.
    assert!(!j.attempt(a.id).unwrap().unchanged_by(&working));
    j.apply_task(a.id, &working, Source::GetTask).unwrap();
    let held = j.attempt(a.id).unwrap();
    let newer = view(&task_json(
        "t1",
        "TASK_STATE_WORKING",
        "2026-11-30T01:00:00.000002Z",
    ));
    let done = view(&task_json(
        "t1",
        "TASK_STATE_COMPLETED",
        "2026-11-30T01:00:00.000002Z",
    ));
    let mut with_artifact = working.clone();
    with_artifact.artifacts = Some(vec![ArtifactView {
        artifact_id: "r".to_owned(),
        name: None,
        description: None,
        parts: serde_json::json!([{"text": "x"}]),
        metadata: None,
    }]);
    for (v, nothing) in [
        (&working, true),
        (&newer, false),
        (&done, false),
        (&with_artifact, false),
    ] {
        assert_eq!(held.unchanged_by(v), nothing, "{v:?}");
        // Whenever the view says so, the journal agrees (the converse need not hold).
        if nothing {
            let events = j.event_count().unwrap();
            assert_eq!(
                j.apply_task(a.id, v, Source::GetTask).unwrap(),
                Applied::Unchanged
            );
            assert_eq!(j.event_count().unwrap(), events);
            assert_eq!(j.attempt(a.id).unwrap(), held);
        }
    }
}

#[test]
fn a_pass_walks_its_rows_a_page_at_a_time() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
    let steps: Vec<Attempt> = (0..7).map(|i| created(&j, &format!("w/s{i}"))).collect();
    let done = &steps[2];
    j.apply_task(
        done.id,
        &view(&task_json(
            "td",
            "TASK_STATE_COMPLETED",
            "2026-11-30T01:00:00Z",
        )),
        Source::Send,
    )
    .unwrap();
    let ids = |rows: Vec<AttemptRow>| rows.into_iter().map(|r| r.attempt.id).collect::<Vec<_>>();
    let all = ids(j.pass_rows(&[]).unwrap());
    assert_eq!(all.len(), 6, "the completed step is not a pass row");
    // Pages of 2, one attempt left out: the same rows in the same order, minus that one.
    let skipped = steps[4].id;
    let mut cursor = j.pass_cursor(&[], &[skipped]).unwrap();
    assert_eq!(cursor.total, 5);
    // A step delegated after the walk began waits for the next pass.
    let late = created(&j, "w/late");
    let mut walked = Vec::new();
    loop {
        let page = j.next_pass_rows(&mut cursor, 2).unwrap();
        assert!(page.len() <= 2);
        if page.is_empty() {
            break;
        }
        walked.extend(ids(page));
    }
    let expected: Vec<AttemptId> = all.into_iter().filter(|id| *id != skipped).collect();
    assert_eq!(walked, expected);
    assert!(!walked.contains(&late.id));
    assert_eq!(
        j.pass_cursor(&["elsewhere".to_owned()], &[]).unwrap().total,
        0
    );
}

#[test]
fn unfinished_attempts_are_the_latest_unresolved_ones() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
    let a = created(&j, "w1/a");
    let b = created(&j, "w1/b");
    let c = created(&j, "w2/c");
    j.apply_task(
        b.id,
        &view(&task_json(
            "tb",
            "TASK_STATE_COMPLETED",
            "2026-11-30T01:00:00Z",
        )),
        Source::Send,
    )
    .unwrap();
    j.mark_uncertain(c.id, "no ListTasks").unwrap();
    let ids = |rows: Vec<AttemptRow>| rows.into_iter().map(|r| r.attempt.id).collect::<Vec<_>>();
    assert_eq!(ids(j.unfinished_attempts(&[]).unwrap()), vec![a.id, c.id]);
    assert_eq!(
        ids(j.unfinished_attempts(&["w2".to_owned()]).unwrap()),
        vec![c.id]
    );
    j.resolve_step(
        &StepName::parse("w2/c").unwrap(),
        Resolution::Abandoned,
        "gave up",
    )
    .unwrap();
    assert_eq!(ids(j.unfinished_attempts(&[]).unwrap()), vec![a.id]);
}

// ---------------------------------------------------------------------------------------------
// Inspect
// ---------------------------------------------------------------------------------------------

#[test]
fn inspect_filters_and_limits_in_sql() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
    for i in 0..5 {
        created(&j, &format!("big/s{i}"));
    }
    let hotel = created(&j, "trip/hotel");
    j.apply_task(
        hotel.id,
        &view(&task_json(
            "th",
            "TASK_STATE_WORKING",
            "2026-11-30T01:00:00Z",
        )),
        Source::Send,
    )
    .unwrap();
    let page = j
        .inspect(&InspectFilter {
            limit: Some(2),
            ..InspectFilter::default()
        })
        .unwrap();
    assert_eq!((page.rows.len(), page.total), (2, 6));
    assert_eq!(page.rows[0].step.to_string(), "big/s0");
    let trip = j
        .inspect(&InspectFilter {
            target: Some(Target::Workflow("trip".into())),
            ..InspectFilter::default()
        })
        .unwrap();
    assert_eq!(trip.total, 1);
    let working = j
        .inspect(&InspectFilter {
            states: vec![AttemptState::Working, AttemptState::Completed],
            ..InspectFilter::default()
        })
        .unwrap();
    assert_eq!(working.rows.len(), 1);
    assert_eq!(working.rows[0].attempt.task_id.as_deref(), Some("th"));
    let none = j
        .inspect(&InspectFilter {
            target: Some(Target::Step(StepName::parse("nope/x").unwrap())),
            ..InspectFilter::default()
        })
        .unwrap();
    assert_eq!((none.rows.len(), none.total), (0, 0));
}

#[test]
fn pending_in_sql_agrees_with_remedy() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
    let ts = "2026-11-30T01:00:00Z";
    let cases = [
        ("p/ask", Some("TASK_STATE_INPUT_REQUIRED"), true),
        ("p/auth", Some("TASK_STATE_AUTH_REQUIRED"), true),
        ("p/work", Some("TASK_STATE_WORKING"), false),
        ("p/done", Some("TASK_STATE_COMPLETED"), false),
        ("p/fail", Some("TASK_STATE_FAILED"), true),
        ("p/reject", Some("TASK_STATE_REJECTED"), true),
        ("p/cancel", Some("TASK_STATE_CANCELED"), true),
        ("p/intent", None, false),
    ];
    for (name, state, _) in cases {
        let a = created(&j, name);
        if let Some(state) = state {
            j.apply_task(a.id, &view(&task_json(name, state, ts)), Source::Send)
                .unwrap();
        }
    }
    let unsure = created(&j, "p/unsure");
    j.mark_uncertain(unsure.id, "x").unwrap();
    let refused = created(&j, "p/refused");
    j.record_refusal(refused.id, "x").unwrap();
    let effect = created(&j, "p/effect");
    j.apply_task(
        effect.id,
        &view(&task_json("e", "TASK_STATE_COMPLETED", ts)),
        Source::Send,
    )
    .unwrap();
    j.set_effect(
        effect.id,
        Some(EffectState::Unknown),
        &serde_json::json!({}),
    )
    .unwrap();
    let verified = created(&j, "p/verified");
    j.apply_task(
        verified.id,
        &view(&task_json("v", "TASK_STATE_COMPLETED", ts)),
        Source::Send,
    )
    .unwrap();
    j.set_effect(
        verified.id,
        Some(EffectState::Verified),
        &serde_json::json!({}),
    )
    .unwrap();
    // Pending through its `failed-for-good` event alone (the attempt row is COMPLETED).
    let gave_up = created(&j, "p/gaveup");
    j.apply_task(
        gave_up.id,
        &view(&task_json("g", "TASK_STATE_COMPLETED", ts)),
        Source::Send,
    )
    .unwrap();
    assert!(j.mark_failed_for_good(gave_up.id, "no agent left").unwrap());
    let resolved = created(&j, "p/resolved");
    j.mark_uncertain(resolved.id, "x").unwrap();
    j.resolve_step(
        &StepName::parse("p/resolved").unwrap(),
        Resolution::Done,
        "ok",
    )
    .unwrap();

    let all = j.inspect(&InspectFilter::default()).unwrap().rows;
    let by_remedy: Vec<String> = all
        .iter()
        .filter(|r| r.remedy_kind().is_some())
        .map(|r| r.step.step.clone())
        .collect();
    let pending: Vec<String> = j
        .inspect(&InspectFilter {
            pending: true,
            ..InspectFilter::default()
        })
        .unwrap()
        .rows
        .iter()
        .map(|r| r.step.step.clone())
        .collect();
    assert_eq!(pending, by_remedy);
    let mut expected: Vec<&str> = cases
        .iter()
        .filter(|c| c.2)
        .map(|c| c.0.trim_start_matches("p/"))
        .collect();
    expected.extend(["unsure", "refused", "effect", "gaveup"]);
    assert_eq!(pending, expected);
}

/// Normalizes SQL whitespace, to compare an expression across files.
fn one_line(sql: &str) -> String {
    sql.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("( ", "(")
        .replace(" )", ")")
}

#[test]
fn the_pending_index_repeats_the_query_word_for_word() {
    let migration = one_line(
        migrate::MIGRATIONS
            .iter()
            .find(|m| m.name == "0003_pending_and_prune")
            .unwrap()
            .sql,
    );
    let expected = one_line(&format!(
        "CREATE INDEX attempts_needing_human ON attempts (id) WHERE {};",
        queries::PENDING_ATTEMPT_SQL
    ));
    assert!(
        migration.contains(&expected),
        "migration 0003 and PENDING_ATTEMPT_SQL differ:\n{migration}\n{expected}"
    );
}

#[test]
fn the_pending_index_costs_a_state_change_no_temporary_btree() {
    let (_dir, path) = tmp_journal();
    drop(Journal::open(&path, T).unwrap());
    let c = Connection::open(&path).unwrap();
    // SQLite evaluates a partial index's clause for the old and the new row of an UPDATE of its
    // columns; an `IN (…)` list there would open a temporary b-tree on every state change.
    let ephemeral = |c: &Connection| -> usize {
        c.prepare(
            "EXPLAIN UPDATE attempts SET state = 'WORKING', effect = 'claimed',
                 cancel_requested_at = NULL, updated_at = 1 WHERE id = 1",
        )
        .unwrap()
        .query_map([], |r| r.get::<_, String>(1))
        .unwrap()
        .filter(|op| op.as_deref() == Ok("OpenEphemeral"))
        .count()
    };
    let with_index = ephemeral(&c);
    c.execute_batch("DROP INDEX attempts_needing_human")
        .unwrap();
    assert_eq!(with_index, ephemeral(&c));
    // What is left are the CHECKs of `state` and `effect` (schema 1): one each.
    assert_eq!(
        with_index, 2,
        "a state change builds {with_index} temporary b-trees"
    );
}

#[test]
fn inspect_pending_starts_from_its_partial_indexes() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
    for i in 0..50 {
        created(&j, &format!("w/s{i}"));
    }
    let plans = j
        .explain_inspect(&InspectFilter {
            pending: true,
            limit: Some(20),
            ..InspectFilter::default()
        })
        .unwrap();
    assert_eq!(plans.len(), 2);
    for (name, plan) in plans {
        let text = plan.join("\n");
        assert!(
            text.contains("USING INDEX attempts_needing_human"),
            "{name}:\n{text}"
        );
        assert!(
            text.contains("USING COVERING INDEX events_failed_for_good"),
            "{name}:\n{text}"
        );
        // Every other table is reached from a candidate by key, never scanned.
        let scans: Vec<&str> = plan
            .iter()
            .map(|l| l.trim())
            .filter(|l| l.starts_with("SCAN") && !l.starts_with("SCAN pc"))
            .filter(|l| !l.contains("attempts_needing_human") && !l.contains("json_each"))
            .filter(|l| !l.contains("events_failed_for_good"))
            .collect();
        assert!(scans.is_empty(), "{name}: {scans:?}\n{text}");
    }
}

// ---------------------------------------------------------------------------------------------
// Leases
// ---------------------------------------------------------------------------------------------

#[test]
fn leases_are_claimed_renewed_and_broken() {
    let (_dir, path) = tmp_journal();
    let now: DateTime<Utc> = "2026-11-30T01:00:00Z".parse().unwrap();
    let j = Journal::open(&path, T)
        .unwrap()
        .with_clock(Arc::new(FixedClock(now)));
    let a = created(&j, "w/s");
    let Claim::Claimed(mine) = j.claim(a.id, Duration::from_secs(60)).unwrap() else {
        panic!("not claimed")
    };
    assert_eq!(mine.pid, std::process::id());
    // Renewing our own lease works.
    assert!(matches!(
        j.claim(a.id, Duration::from_secs(60)).unwrap(),
        Claim::Claimed(_)
    ));
    let events = j.event_count().unwrap();

    let set = |pid: u32, host: &str, expires: DateTime<Utc>| {
        queries::set_lease(
            &j.store.lock(),
            a.id,
            Some(&Lease {
                pid,
                host: host.to_owned(),
                expires_at: expires,
            }),
        )
        .unwrap();
    };
    let later = now + chrono::Duration::minutes(5);
    // A live process on this host (pid 1 always exists) holds it.
    set(1, &host_name(), later);
    assert!(
        matches!(j.claim(a.id, Duration::from_secs(60)).unwrap(), Claim::HeldBy(l) if l.pid == 1)
    );
    // Another host's unexpired lease holds, whatever its pid.
    set(999_999_999, "elsewhere", later);
    assert!(matches!(
        j.claim(a.id, Duration::from_secs(60)).unwrap(),
        Claim::HeldBy(_)
    ));
    // Expired: broken.
    set(1, "elsewhere", now - chrono::Duration::seconds(1));
    assert!(matches!(
        j.claim(a.id, Duration::from_secs(60)).unwrap(),
        Claim::Claimed(_)
    ));
    // A dead owner on this host: broken.
    let dead = {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    };
    set(dead, &host_name(), later);
    assert!(matches!(
        j.claim(a.id, Duration::from_secs(60)).unwrap(),
        Claim::Claimed(_)
    ));
    j.release(a.id).unwrap();
    assert_eq!(j.attempt(a.id).unwrap().lease, None);
    assert_eq!(j.event_count().unwrap(), events, "leases append no events");
}

#[test]
fn a_batch_claim_skips_held_and_settled_attempts_and_its_records_release_the_leases() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
    let free = created(&j, "w/free");
    let held = created(&j, "w/held");
    let settled = created(&j, "w/settled");
    let other = Lease {
        pid: 1,
        host: host_name(),
        expires_at: j.clock.now() + chrono::Duration::minutes(5),
    };
    queries::set_lease(&j.store.lock(), held.id, Some(&other)).unwrap();
    j.record_refusal(settled.id, "no").unwrap();
    let endpoint = Endpoint {
        interface_url: "http://127.0.0.1:9/".into(),
        tenant: None,
    };
    let items: Vec<_> = [free.id, held.id, settled.id]
        .into_iter()
        .map(|id| (id, Some(endpoint.clone())))
        .collect();
    let claims = j.claim_for_send(&items, Duration::from_secs(60)).unwrap();
    let BatchClaim::Claimed(claimed, true) = &claims[0] else {
        panic!("{claims:?}")
    };
    assert_eq!(
        claimed.interface_url.as_deref(),
        Some("http://127.0.0.1:9/")
    );
    assert_eq!(
        claimed.lease.as_ref().map(|l| l.pid),
        Some(std::process::id())
    );
    assert!(matches!(&claims[1], BatchClaim::HeldBy(_, l) if l.pid == 1));
    assert_eq!(
        j.attempt(held.id).unwrap().interface_url,
        None,
        "held: untouched"
    );
    assert!(matches!(&claims[2], BatchClaim::Settled(a) if a.state == AttemptState::Refused));
    // Claimed again (a renewal): the endpoint was there before, so it may have been sent.
    let again = j
        .claim_for_send(&items[..1], Duration::from_secs(60))
        .unwrap();
    assert!(
        matches!(&again[0], BatchClaim::Claimed(_, false)),
        "{again:?}"
    );

    let raw = task_json("t-1", "TASK_STATE_SUBMITTED", "2026-11-30T01:00:00Z");
    let done = j
        .record_sends(&[
            SendRecord {
                attempt: free.id,
                outcome: SendOutcome::Task(view(&raw), Source::Send),
                accepts_context_id: Some("http://127.0.0.1:9/card".into()),
            },
            SendRecord {
                attempt: held.id,
                outcome: SendOutcome::Release,
                accepts_context_id: None,
            },
        ])
        .unwrap();
    let now = done[0].as_ref().unwrap();
    assert_eq!(now.state, AttemptState::Submitted);
    assert_eq!(now.task_id.as_deref(), Some("t-1"));
    assert_eq!(now.lease, None, "released with its answer");
    assert_eq!(
        j.attempt(held.id).unwrap().lease.map(|l| l.pid),
        Some(1),
        "another's lease is left alone"
    );
}

// ---------------------------------------------------------------------------------------------
// Compatibility and measurement
// ---------------------------------------------------------------------------------------------

#[test]
fn the_v1_fixture_opens_with_the_current_code() {
    let (_dir, path) = tmp_journal();
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/journals/v1.sql");
    {
        let c = Connection::open(&path).unwrap();
        c.execute_batch(&fs::read_to_string(fixture).unwrap())
            .unwrap();
    }
    let j = Journal::open(&path, T).unwrap();
    assert!(j.is_writable());
    let page = j.inspect(&InspectFilter::default()).unwrap();
    assert!(page.total >= 3, "{}", page.total);
    let hotel = j
        .step(&StepName::parse("trip-42/hotel").unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(hotel.latest().unwrap().state, AttemptState::InputRequired);
    assert!(hotel.latest().unwrap().question_text().is_some());
    assert!(!j.events_of_step(&hotel.step.spec.name).unwrap().is_empty());
    // And it still takes writes.
    created(&j, "trip-42/later");
}

/// Measures durable intent commits per second (printed; not asserted: the machine is shared).
///
/// Run: `cargo test --release --lib journal::tests::durable_intent_commit_rate -- --nocapture`
#[test]
fn durable_intent_commit_rate() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
    let n = 200;
    let start = std::time::Instant::now();
    for i in 0..n {
        created(&j, &format!("bench/s{i}"));
    }
    let single = start.elapsed();
    let plan: Vec<NewIntent> = (0..n)
        .map(|i| intent(&format!("plan/s{i}"), "x", "http://127.0.0.1:9/"))
        .collect();
    let start = std::time::Instant::now();
    j.create_intents(&plan).unwrap();
    let batched = start.elapsed();
    drop(j);
    let j = Journal::open(&path, T).unwrap();
    assert_eq!(j.inspect(&InspectFilter::default()).unwrap().total, 2 * n);
    #[expect(clippy::print_stderr, reason = "the measurement is the output")]
    {
        eprintln!(
            "durable intent commits: {:.0}/s one per transaction ({n} in {single:?}); \
             {n} in one transaction in {batched:?}",
            f64::from(n as u32) / single.as_secs_f64()
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Pruning
// ---------------------------------------------------------------------------------------------

#[test]
fn prune_takes_only_old_bare_refreshes_and_never_an_attempts_last_event() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
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
