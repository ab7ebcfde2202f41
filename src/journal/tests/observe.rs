//! Intents and observations: commits before sends, tasks and artifacts merged in, batches, settled outcomes, pass walks.

use super::*;

#[rstest]
fn intents_commit_together_and_re_runs_find_them(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let fresh = Fresh::new(kind);
    let j = fresh.open();
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

#[rstest]
fn a_failed_plan_commits_nothing(#[values(Kind::Sqlite, Kind::Postgres)] kind: Kind) {
    let fresh = Fresh::new(kind);
    let j = fresh.open();
    let a = intent("trip/a", "x", "http://a/");
    let mut b = intent("trip/b", "y", "http://a/");
    // The same messageId twice violates UNIQUE in the middle of the transaction.
    b.message_id.clone_from(&a.message_id);
    assert!(j.create_intents(&[a, b]).is_err());
    assert!(!j.workflow_exists("trip").unwrap());
    assert_eq!(j.event_count().unwrap(), 0);
}

#[rstest]
fn an_agent_refusing_context_ids_gets_none(#[values(Kind::Sqlite, Kind::Postgres)] kind: Kind) {
    let fresh = Fresh::new(kind);
    let j = fresh.open();
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

#[rstest]
fn an_agents_row_read_again_shows_every_change_once_due(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let fresh = Fresh::new(kind);
    let j = fresh.open();
    let url = "http://127.0.0.1:9/";
    created(&j, "w/one");
    let accepts = |j: &Journal| j.agent(url).unwrap().unwrap().accepts_context_id;
    assert_eq!(accepts(&j), None);
    // This journal's own write is seen at once, though the row was just read.
    assert!(j.set_accepts_context_id(url, false).unwrap());
    assert_eq!(accepts(&j), Some(false));
    // Another process's write, once the reuse window has passed.
    let other = fresh.open();
    assert!(other.set_accepts_context_id(url, true).unwrap());
    std::thread::sleep(super::agents::AGENT_REUSE + Duration::from_millis(100));
    assert_eq!(accepts(&j), Some(true));
}

#[rstest]
fn the_first_endpoint_wins(#[values(Kind::Sqlite, Kind::Postgres)] kind: Kind) {
    let fresh = Fresh::new(kind);
    let j = fresh.open();
    let a = created(&j, "w/s");
    let ep = |u: &str| JournaledEndpoint {
        binding: crate::model::ProtocolBinding::JsonRpcV1,
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

#[rstest]
fn a_task_observation_records_everything_and_a_repeat_writes_nothing(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let fresh = Fresh::new(kind);
    let j = fresh.open();
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
    // Another connection sees any commit in its data version; on SQLite, the files too.
    let other = fresh.open();
    let files = || {
        fresh
            .sqlite_path()
            .map(|p| (sizes(p), bytes(&file::sibling(p, "-wal"))))
    };
    let before = (other.data_version().unwrap(), files());
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
    let after = (other.data_version().unwrap(), files());
    assert_eq!(before, after);
    assert_eq!(j.event_count().unwrap(), events);
    assert_eq!(j.attempt(a.id).unwrap(), got);
}

#[rstest]
fn older_statuses_are_ignored_and_terminal_states_stay(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let fresh = Fresh::new(kind);
    let j = fresh.open();
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

#[rstest]
fn artifact_updates_append_and_stop_at_the_last_chunk(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let fresh = Fresh::new(kind);
    let j = fresh.open();
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
fn two_working(fresh: &Fresh) -> (Journal, AttemptId, AttemptId) {
    let j = fresh.open();
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

#[rstest]
fn a_batch_of_observations_does_what_they_do_one_by_one_in_fewer_pages(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
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
    let (one_place, batch_place) = (Fresh::new(kind), Fresh::new(kind));
    let (one, a1, b1) = two_working(&one_place);
    let (batch, a2, b2) = two_working(&batch_place);
    // SQLite: the WAL's length, what the batch saves.
    let wal = |f: &Fresh| f.sqlite_path().map(|p| sizes(p).1);
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
    let wal_before = (wal(&one_place), wal(&batch_place));
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
    if let (Some(one_before), Some(batch_before)) = wal_before {
        let grown = (
            wal(&one_place).unwrap() - one_before,
            wal(&batch_place).unwrap() - batch_before,
        );
        assert!(
            grown.1 * 3 < grown.0,
            "WAL bytes one by one vs batched: {grown:?}"
        );
    }
    // Replayed, the batch changes nothing and writes nothing.
    let other = batch_place.open();
    let before = (other.data_version().unwrap(), wal(&batch_place));
    let again = batch.apply_observations(&observations[8..]).unwrap();
    assert!(again.iter().all(|r| {
        r.as_ref()
            .is_ok_and(|r| r.applied == Applied::Unchanged && r.event.is_none())
    }));
    assert_eq!((other.data_version().unwrap(), wal(&batch_place)), before);
}

#[rstest]
fn send_outcomes_settle_an_intent_once(#[values(Kind::Sqlite, Kind::Postgres)] kind: Kind) {
    let fresh = Fresh::new(kind);
    let j = fresh.open();
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

#[rstest]
fn attempts_stay_within_the_budget(#[values(Kind::Sqlite, Kind::Postgres)] kind: Kind) {
    let fresh = Fresh::new(kind);
    let j = fresh.open();
    let first = created(&j, "w/s");
    let next = |prev| NewAttempt {
        agent_url: Some("http://127.0.0.1:8/".to_owned()),
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

#[rstest]
fn a_view_that_changes_nothing_is_one_the_journal_would_not_write(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let fresh = Fresh::new(kind);
    let j = fresh.open();
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

#[rstest]
fn a_pass_walks_its_rows_a_page_at_a_time(#[values(Kind::Sqlite, Kind::Postgres)] kind: Kind) {
    let fresh = Fresh::new(kind);
    let j = fresh.open();
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
    assert_eq!(j.pass_rows_left(&cursor).unwrap(), 5);
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
        j.pass_rows_left(&j.pass_cursor(&["elsewhere".to_owned()], &[]).unwrap())
            .unwrap(),
        0
    );
}

#[rstest]
fn a_walk_over_a_sparse_journal_returns_full_pages_in_order(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let fresh = Fresh::new(kind);
    let j = fresh.open();
    // 90 steps: a dense run of 12 unfinished ones, then one unfinished in every 9, then 5
    // unfinished at the end; the rest completed (not pass rows).
    for i in 0..90 {
        let a = created(&j, &format!("w{}/s{i}", i / 10));
        if (12..85).contains(&i) && i % 9 != 0 {
            let done = task_json(
                &format!("t{i}"),
                "TASK_STATE_COMPLETED",
                "2026-11-30T01:00:00Z",
            );
            j.apply_task(a.id, &view(&done), Source::Send).unwrap();
        }
    }
    let ids = |rows: Vec<AttemptRow>| rows.into_iter().map(|r| r.attempt.id).collect::<Vec<_>>();
    let all = ids(j.pass_rows(&[]).unwrap());
    assert_eq!(all.len(), 12 + 8 + 5);
    for limit in [1, 3, 7, 256] {
        let mut cursor = j.pass_cursor(&[], &[]).unwrap();
        assert_eq!(j.pass_rows_left(&cursor).unwrap(), all.len());
        let mut pages = Vec::new();
        loop {
            let page = ids(j.next_pass_rows(&mut cursor, limit).unwrap());
            // What was read and what is left make the walk, wherever it stands.
            let left = j.pass_rows_left(&cursor).unwrap();
            assert_eq!(cursor.read + left, all.len(), "limit {limit}");
            if page.is_empty() {
                assert_eq!(left, 0);
                break;
            }
            pages.push(page);
        }
        // A short page says the walk is over: only the last may be one.
        let (last, full) = pages.split_last().unwrap();
        assert!(full.iter().all(|p| p.len() == limit), "limit {limit}");
        assert!(!last.is_empty() && last.len() <= limit);
        assert_eq!(pages.concat(), all, "limit {limit}");
    }
}

#[rstest]
fn unfinished_attempts_are_the_latest_unresolved_ones(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let fresh = Fresh::new(kind);
    let j = fresh.open();
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

/// Appends are held to `--max-artifact-size` to the byte (the size journaled, its parts'
/// JSON), one by one and in a batch alike: the chunks that fit are kept, the one past the
/// limit and every later one are not, the attempt carries `artifact-too-large` and a
/// `failed-for-good` event, and its state goes on as reported.
#[rstest]
fn appends_past_the_artifact_limit_are_refused_to_the_byte(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let chunk = |text: &str, append: bool| {
        ArtifactUpdate::from_value(&serde_json::json!({
            "taskId": "t1", "append": append, "lastChunk": false,
            "artifact": {"artifactId": "a1", "parts": [{"text": text}]}
        }))
        .unwrap()
    };
    let texts = ["one ", "two ", "three ", "four ", "five"];
    // Exactly the first three chunks fit.
    let parts: Vec<serde_json::Value> = texts[..3]
        .iter()
        .map(|t| serde_json::json!({"text": t}))
        .collect();
    // An artifact's size is its parts' JSON and its head: here only its id, `a1`.
    let limit = serde_json::Value::Array(parts).to_string().len() as u64 + 2;
    let limits = SizeLimits {
        artifact: limit,
        task: SizeLimits::DEFAULT_TASK,
    };
    let done = view(&task_json(
        "t1",
        "TASK_STATE_COMPLETED",
        "2026-11-30T01:00:09Z",
    ));
    // One by one, in one batch, and each in its own batch (appends then go to chunks, sized
    // from the journal without reading the parts).
    for (batched, each) in [(false, false), (true, false), (true, true)] {
        let fresh = Fresh::new(kind);
        let (j, a, _) = two_working(&fresh);
        let j = j.with_size_limits(limits);
        let updates: Vec<ArtifactUpdate> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| chunk(t, i > 0))
            .collect();
        let over: Vec<bool> = if batched {
            let mut obs: Vec<StreamObservation> = updates
                .into_iter()
                .map(|update| StreamObservation::Artifact { attempt: a, update })
                .collect();
            obs.push(StreamObservation::Task {
                attempt: a,
                view: done.clone(),
                source: Source::Stream,
            });
            if each {
                obs.into_iter()
                    .map(|o| {
                        j.apply_observations(&[o]).unwrap()[0]
                            .as_ref()
                            .unwrap()
                            .over_limit
                    })
                    .collect()
            } else {
                j.apply_observations(&obs)
                    .unwrap()
                    .into_iter()
                    .map(|r| r.unwrap().over_limit)
                    .collect()
            }
        } else {
            for u in &updates {
                j.apply_artifact_update(a, u).unwrap();
            }
            j.apply_task(a, &done, Source::Stream).unwrap();
            Vec::new()
        };
        if batched {
            assert_eq!(over, [false, false, false, true, false, false]);
        }
        let arts = j.artifacts(a).unwrap();
        assert_eq!(
            arts[0].text(),
            "one two three ",
            "batched: {batched}, each: {each}"
        );
        let held = j.attempt(a).unwrap();
        assert_eq!(held.state, AttemptState::Completed, "the state as reported");
        let error = held.error.unwrap_or_default();
        assert!(error.starts_with(ARTIFACT_TOO_LARGE), "{error}");
        assert!(is_over_limit(&j.failed_for_good(a).unwrap().unwrap()));
    }
}

/// A snapshot read before the task ended and journaled after its end (another process's
/// read, committed later) changes nothing: before, its artifacts replaced the final ones, one
/// chunk short (found by the crash soak).
#[rstest]
fn a_snapshot_older_than_the_end_does_not_put_back_older_artifacts(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let (j, a, _) = two_working(&Fresh::new(kind));
    let snapshot = |state: &str, ts: &str, chunks: usize| {
        let parts: Vec<String> = (1..=chunks)
            .map(|i| format!(r#"{{"text":"chunk {i};"}}"#))
            .collect();
        view(&format!(
            r#"{{"id":"t1","contextId":"ctx-1","status":{{"state":"{state}","timestamp":"{ts}"}},"artifacts":[{{"artifactId":"result","parts":[{}]}}]}}"#,
            parts.join(",")
        ))
    };
    let done = snapshot("TASK_STATE_COMPLETED", "2026-11-30T01:00:09Z", 5);
    assert!(j.apply_task(a, &done, Source::GetTask).unwrap().changed());
    let events = j.event_count().unwrap();
    let earlier = snapshot("TASK_STATE_WORKING", "2026-11-30T01:00:08Z", 4);
    assert_eq!(
        j.apply_task(a, &earlier, Source::GetTask).unwrap(),
        Applied::Unchanged
    );
    assert_eq!(
        j.apply_tasks(&[(a, earlier)], Source::GetTask).unwrap(),
        vec![Applied::Unchanged]
    );
    assert_eq!(j.event_count().unwrap(), events);
    let held = j.artifacts(a).unwrap();
    assert_eq!(held.len(), 1);
    assert_eq!(
        held[0].parts.as_array().unwrap().len(),
        5,
        "{}",
        held[0].parts
    );
    // An artifact that arrives with (or after) the end is still taken.
    let later = snapshot("TASK_STATE_COMPLETED", "2026-11-30T01:00:09Z", 6);
    assert!(j.apply_task(a, &later, Source::GetTask).unwrap().changed());
    assert_eq!(
        j.artifacts(a).unwrap()[0].parts.as_array().unwrap().len(),
        6
    );
}

/// Artifacts each under `--max-artifact-size` but together over `--max-task-size`, in one
/// snapshot: none of them is journaled, the state is, and the attempt carries `task-too-large`.
#[rstest]
fn a_snapshot_past_the_task_limit_keeps_its_state_not_its_artifacts(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let (j, a, _) = two_working(&Fresh::new(kind));
    let j = j.with_size_limits(SizeLimits {
        artifact: 1024,
        task: 1500,
    });
    let text = "x".repeat(900);
    let done = view(&format!(
        r#"{{"id":"t1","contextId":"ctx-1","status":{{"state":"TASK_STATE_COMPLETED","timestamp":"2026-11-30T01:00:09Z"}},"artifacts":[{{"artifactId":"a1","parts":[{{"text":"{text}"}}]}},{{"artifactId":"a2","parts":[{{"text":"{text}"}}]}}]}}"#
    ));
    assert!(j.over_size_limits(a, &done).unwrap());
    assert!(j.apply_task(a, &done, Source::GetTask).unwrap().changed());
    assert!(j.artifacts(a).unwrap().is_empty());
    let held = j.attempt(a).unwrap();
    assert_eq!(held.state, AttemptState::Completed);
    assert!(held.error.unwrap_or_default().starts_with(TASK_TOO_LARGE));
    // Read again: nothing changes, the error stays.
    assert_eq!(
        j.apply_task(a, &done, Source::GetTask).unwrap(),
        Applied::Unchanged
    );
    assert!(j.over_size_limits(a, &done).unwrap());
}

/// The size limits count an artifact's head (id, name, description, metadata) with its parts:
/// an agent that puts the bulk in names or metadata is held to them as one that puts it in the
/// parts (found by a review: 30 MB journaled under a 1 MiB `--max-task-size`).
#[rstest]
fn the_size_limits_count_names_and_metadata_too(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let limits = SizeLimits {
        artifact: 1024,
        task: 3000,
    };
    let bulk = "m".repeat(900);
    let update = |id: &str, append: bool, extra: serde_json::Value| {
        let mut artifact = serde_json::json!({"artifactId": id, "parts": [{"text": "x"}]});
        if let (Some(a), Some(x)) = (artifact.as_object_mut(), extra.as_object()) {
            a.extend(x.clone());
        }
        ArtifactUpdate::from_value(&serde_json::json!({
            "taskId": "t1", "append": append, "lastChunk": false, "artifact": artifact
        }))
        .unwrap()
    };
    // Streamed: new artifacts of one tiny part each, a 900-byte name each: the fourth would
    // take the task past 3,000 bytes.
    let (j, a, _) = two_working(&Fresh::new(kind));
    let j = j.with_size_limits(limits);
    let obs: Vec<StreamObservation> = (0..5)
        .map(|i| StreamObservation::Artifact {
            attempt: a,
            update: update(&format!("n{i}"), false, serde_json::json!({"name": bulk})),
        })
        .collect();
    let over: Vec<bool> = j
        .apply_observations(&obs)
        .unwrap()
        .into_iter()
        .map(|r| r.unwrap().over_limit)
        .collect();
    assert_eq!(over, [false, false, false, true, false]);
    assert_eq!(j.artifacts(a).unwrap().len(), 3);
    assert_eq!(
        j.artifact_count(a).unwrap(),
        3,
        "counted without reading them"
    );
    let error = j.attempt(a).unwrap().error.unwrap_or_default();
    assert!(error.starts_with(TASK_TOO_LARGE), "{error}");
    // Streamed: an append whose metadata takes its artifact past 1,024 bytes.
    let (j, a, _) = two_working(&Fresh::new(kind));
    let j = j.with_size_limits(limits);
    let first = StreamObservation::Artifact {
        attempt: a,
        update: update("m1", false, serde_json::json!({})),
    };
    let padded = StreamObservation::Artifact {
        attempt: a,
        update: update(
            "m1",
            true,
            serde_json::json!({"metadata": {"pad": bulk, "more": bulk}}),
        ),
    };
    assert!(
        !j.apply_observations(&[first]).unwrap()[0]
            .as_ref()
            .unwrap()
            .over_limit
    );
    assert!(
        j.apply_observations(&[padded]).unwrap()[0]
            .as_ref()
            .unwrap()
            .over_limit
    );
    let held = j.artifacts(a).unwrap();
    assert_eq!((held.len(), held[0].metadata.as_ref()), (1, None));
    let error = j.attempt(a).unwrap().error.unwrap_or_default();
    assert!(error.starts_with(ARTIFACT_TOO_LARGE), "{error}");
    // In a snapshot: one artifact whose description is past 1,024 bytes.
    let (j, a, _) = two_working(&Fresh::new(kind));
    let j = j.with_size_limits(limits);
    let long = "d".repeat(1100);
    let done = view(&format!(
        r#"{{"id":"t1","contextId":"ctx-1","status":{{"state":"TASK_STATE_COMPLETED","timestamp":"2026-11-30T01:00:09Z"}},"artifacts":[{{"artifactId":"a1","description":"{long}","parts":[{{"text":"x"}}]}}]}}"#
    ));
    assert!(j.over_size_limits(a, &done).unwrap());
    assert!(j.apply_task(a, &done, Source::GetTask).unwrap().changed());
    assert!(j.artifacts(a).unwrap().is_empty());
    let held = j.attempt(a).unwrap();
    assert_eq!(held.state, AttemptState::Completed);
    assert!(
        held.error
            .unwrap_or_default()
            .starts_with(ARTIFACT_TOO_LARGE)
    );
}

/// Bytes this process has written (`wchar` of `/proc/self/io`: every `write`/`pwrite`, the
/// journal's pages and WAL frames included). nextest runs each test in its own process.
fn bytes_written() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("wchar: "))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Appending a chunk writes about the chunk, not the whole artifact: 400 appends of 4 KiB,
/// each in its own commit (a stream whose events arrive one at a time), to a 1.6 MiB artifact.
/// Rewriting the artifact on each append wrote its size every time (about 330 MB here).
#[test]
fn sqlite_an_append_writes_the_chunk_not_the_artifact() {
    let (j, a, _) = two_working(&Fresh::new(Kind::Sqlite));
    let text = "c".repeat(4096);
    let chunks = 400;
    let before = bytes_written();
    for i in 0..chunks {
        let update = ArtifactUpdate::from_value(&serde_json::json!({
            "taskId": "t1", "append": i > 0, "lastChunk": i + 1 == chunks,
            "artifact": {"artifactId": "a1", "parts": [{"text": text}]}
        }))
        .unwrap();
        j.apply_observations(&[StreamObservation::Artifact { attempt: a, update }])
            .unwrap();
    }
    let written = bytes_written() - before;
    let artifact = j.artifacts(a).unwrap();
    assert_eq!(artifact[0].text().len(), 4096 * chunks);
    assert!(artifact[0].last_chunk);
    // Measured: about 38 KB per append (the chunk, its index entry, the attempt's row and its
    // event, as WAL frames and checkpointed pages), 15 MB in all; rewriting the artifact on
    // each append wrote 505 MB here, and grows with the square of the appends.
    assert!(
        written < chunks as u64 * 64 * 1024,
        "{chunks} appends of 4 KiB wrote {written} bytes"
    );
}

/// Appends committed one group at a time go to chunks; read back, the artifact is exactly the
/// one a whole rewrite on each update gives (parts, name, description, metadata, `lastChunk`),
/// through a replace after appends in the same batch, a snapshot that replaces it, and an
/// append after the last chunk.
#[rstest]
fn chunked_appends_read_back_as_whole_rewrites_do(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let upd = |v: serde_json::Value| ArtifactUpdate::from_value(&v).unwrap();
    let chunk = |parts: serde_json::Value, append: bool, last: bool, extra: serde_json::Value| {
        let mut artifact = serde_json::json!({"artifactId": "a1", "parts": parts});
        if let (Some(a), Some(x)) = (artifact.as_object_mut(), extra.as_object()) {
            a.extend(x.clone());
        }
        upd(
            serde_json::json!({"taskId": "t1", "append": append, "lastChunk": last,
                               "artifact": artifact}),
        )
    };
    let none = serde_json::json!({});
    let art = |update| StreamObservation::Artifact {
        attempt: AttemptId(1),
        update,
    };
    let batches: Vec<Vec<StreamObservation>> = vec![
        vec![art(chunk(
            serde_json::json!([{"text": "one "}]),
            false,
            false,
            serde_json::json!({"name": "r1"}),
        ))],
        vec![art(chunk(
            serde_json::json!([{"text": "two "}]),
            true,
            false,
            serde_json::json!({"metadata": {"k": 1}}),
        ))],
        vec![art(chunk(
            serde_json::json!([{"text": "three "}, {"data": {"n": 1.5}}]),
            true,
            false,
            none.clone(),
        ))],
        vec![art(chunk(
            serde_json::json!([]),
            true,
            false,
            serde_json::json!({"description": "d"}),
        ))],
        vec![
            art(chunk(
                serde_json::json!([{"text": "x"}]),
                true,
                false,
                none.clone(),
            )),
            art(chunk(
                serde_json::json!([{"text": "fresh "}]),
                false,
                false,
                none.clone(),
            )),
            art(chunk(
                serde_json::json!([{"text": "y "}]),
                true,
                false,
                none.clone(),
            )),
        ],
        vec![art(chunk(
            serde_json::json!([{"text": "again "}]),
            true,
            false,
            none.clone(),
        ))],
        vec![StreamObservation::Task {
            attempt: AttemptId(1),
            view: view(
                r#"{"id":"t1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING","timestamp":"2026-11-30T01:00:05Z"},"artifacts":[{"artifactId":"a1","parts":[{"text":"snap "}]}]}"#,
            ),
            source: Source::Stream,
        }],
        vec![art(chunk(
            serde_json::json!([{"text": "more "}]),
            true,
            false,
            none.clone(),
        ))],
        vec![art(chunk(
            serde_json::json!([{"text": "last"}]),
            true,
            true,
            none.clone(),
        ))],
        vec![art(chunk(
            serde_json::json!([{"text": "after"}]),
            true,
            false,
            none.clone(),
        ))],
    ];
    let (p1, p2) = (Fresh::new(kind), Fresh::new(kind));
    let (chunked, a, _) = two_working(&p1);
    let (whole, a2, _) = two_working(&p2);
    assert_eq!((a, a2), (AttemptId(1), AttemptId(1)));
    for (i, batch) in batches.iter().enumerate() {
        let got: Vec<Applied> = chunked
            .apply_observations(batch)
            .unwrap()
            .into_iter()
            .map(|r| r.unwrap().applied)
            .collect();
        let want: Vec<Applied> = batch
            .iter()
            .map(|o| match o {
                StreamObservation::Artifact { attempt, update } => {
                    whole.apply_artifact_update(*attempt, update).unwrap()
                }
                StreamObservation::Task {
                    attempt,
                    view,
                    source,
                } => whole.apply_task(*attempt, view, *source).unwrap(),
            })
            .collect();
        assert_eq!(got, want, "batch {i}");
        assert_eq!(
            chunked.artifacts(a).unwrap(),
            whole.artifacts(a).unwrap(),
            "batch {i}"
        );
    }
    assert_eq!(chunked.artifacts(a).unwrap()[0].text(), "snap more last");
}
