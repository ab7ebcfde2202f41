//! Inspect: filters and limits in SQL, the pending query and its indexes.

use super::*;

#[rstest]
fn inspect_filters_and_limits_in_sql(#[values(Kind::Sqlite, Kind::Postgres)] kind: Kind) {
    let fresh = Fresh::new(kind);
    let j = fresh.open();
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

#[rstest]
fn pending_in_sql_agrees_with_remedy(#[values(Kind::Sqlite, Kind::Postgres)] kind: Kind) {
    let fresh = Fresh::new(kind);
    let j = fresh.open();
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
    // Never sent, and pending while its latest event is a `needs-human` one.
    let why = NeedsHuman {
        cause: NeedsHuman::CARD_UNREACHABLE.to_owned(),
        reason: "unreachable for long".to_owned(),
    };
    let unreachable = created(&j, "p/unreachable");
    j.record_failure(unreachable.id, FailureKind::Card, "refused")
        .unwrap();
    j.record_needs_human(unreachable.id, &why).unwrap();
    let came_back = created(&j, "p/cameback");
    j.record_needs_human(came_back.id, &why).unwrap();
    j.record_failure(came_back.id, FailureKind::Send, "timed out")
        .unwrap();
    // A look's note after it changes nothing: still pending.
    let noted = created(&j, "p/noted");
    j.record_needs_human(noted.id, &why).unwrap();
    j.note_event(noted.id, Note::InFlight, &serde_json::json!({}))
        .unwrap();
    let too_large = created(&j, "p/toolarge");
    j.record_needs_human(
        too_large.id,
        &NeedsHuman {
            cause: NeedsHuman::ANSWER_TOO_LARGE.to_owned(),
            reason: "over the cap".to_owned(),
        },
    )
    .unwrap();
    let sent_later = created(&j, "p/sentlater");
    j.record_needs_human(sent_later.id, &why).unwrap();
    j.apply_task(
        sent_later.id,
        &view(&task_json("sl", "TASK_STATE_WORKING", ts)),
        Source::Send,
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
    expected.extend([
        "unsure",
        "refused",
        "effect",
        "gaveup",
        "unreachable",
        "noted",
        "toolarge",
    ]);
    assert_eq!(pending, expected);
    let held = all.iter().find(|r| r.step.step == "unreachable").unwrap();
    assert_eq!(held.needs_human.as_ref(), Some(&why));
    assert_eq!(held.remedy_kind(), Some(RemedyKind::CardUnreachable));
    let answer = all.iter().find(|r| r.step.step == "toolarge").unwrap();
    assert_eq!(answer.remedy_kind(), Some(RemedyKind::AnswerTooLarge));
    // The workflows' "needs a human" counts read the same rule.
    let (workflows, _) = j.workflow_summaries(None).unwrap();
    assert_eq!(workflows[0].needs_human, expected.len() as u64);
}

/// Both statements that pick an attempt's latest event for the pending rule look past exactly
/// the notes a look writes (which change nothing).
#[test]
fn the_pending_rule_looks_past_every_note_and_nothing_else() {
    let list: Vec<String> = Note::ALL
        .iter()
        .map(|n| format!("'{}'", n.as_str()))
        .collect();
    let clause = format!("le.kind NOT IN ({})", list.join(", "));
    for (name, sql) in [
        ("PENDING_SQL", queries::PENDING_SQL),
        ("NEEDS_HUMAN_DETAIL", queries::NEEDS_HUMAN_DETAIL),
    ] {
        assert!(one_line(sql).contains(&clause), "{name}: {sql}\n{clause}");
    }
}

/// Normalizes SQL whitespace, to compare an expression across files.
fn one_line(sql: &str) -> String {
    sql.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("( ", "(")
        .replace(" )", ")")
}

/// In both stores' migration 0003: a partial index serves only a query whose WHERE implies
/// the index's own.
#[test]
fn the_pending_index_repeats_the_query_word_for_word() {
    let expected = one_line(&format!(
        "CREATE INDEX attempts_needing_human ON attempts (id) WHERE {};",
        queries::PENDING_ATTEMPT_SQL
    ));
    let m = migrate::MIGRATIONS
        .iter()
        .find(|m| m.name == "0003_pending_and_prune")
        .unwrap();
    for sql in [m.sql, m.postgres] {
        let migration = one_line(sql);
        assert!(
            migration.contains(&expected),
            "migration 0003 and PENDING_ATTEMPT_SQL differ:\n{migration}\n{expected}"
        );
    }
}

#[test]
fn sqlite_a_state_change_builds_no_temporary_btree() {
    let (_dir, path) = tmp_journal();
    drop(Journal::open(&path, T).unwrap());
    let c = Connection::open(&path).unwrap();
    // SQLite evaluates a partial index's clause for the old and the new row of an UPDATE of its
    // columns; an `IN (…)` list there would open a temporary b-tree on every state change.
    let opens = |c: &Connection, sql: &str| -> usize {
        c.prepare(&format!("EXPLAIN {sql}"))
            .unwrap()
            .query_map([], |r| r.get::<_, String>(1))
            .unwrap()
            .filter(|op| op.as_deref() == Ok("OpenEphemeral"))
            .count()
    };
    let ephemeral = |c: &Connection| -> usize {
        opens(
            c,
            "UPDATE attempts SET state = 'WORKING', effect = 'claimed',
                 cancel_requested_at = NULL, updated_at = 1 WHERE id = 1",
        )
    };
    // Every check of a new step and attempt, too (a plan writes one of each per step).
    for insert in [
        "INSERT INTO steps (workflow_id, name, seq, text, agent_url, created_at, updated_at)
             VALUES (1, 's', 1, 't', 'u', 1, 1)",
        "INSERT INTO attempts (step_id, number, message_id, state, created_at, updated_at)
             VALUES (1, 1, 'm', 'INTENT', 1, 1)",
    ] {
        assert_eq!(opens(&c, insert), 0, "{insert}");
    }
    let with_index = ephemeral(&c);
    c.execute_batch("DROP INDEX attempts_needing_human")
        .unwrap();
    assert_eq!(with_index, ephemeral(&c));
    // Nor the CHECKs of `state` and `effect`: comparisons since schema 23, one `IN` list each
    // before.
    assert_eq!(
        with_index, 0,
        "a state change builds {with_index} temporary b-trees"
    );
}

#[test]
fn sqlite_inspect_pending_starts_from_its_partial_indexes() {
    let (_fresh, j) = Fresh::journal(Kind::Sqlite);
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
        for events in ["events_failed_for_good", "events_needing_human"] {
            assert!(
                text.contains(&format!("USING COVERING INDEX {events}")),
                "{name}:\n{text}"
            );
        }
        // Every other table is reached from a candidate by key, never scanned.
        let scans: Vec<&str> = plan
            .iter()
            .map(|l| l.trim())
            .filter(|l| l.starts_with("SCAN") && !l.starts_with("SCAN pc"))
            .filter(|l| !l.contains("attempts_needing_human") && !l.contains("json_each"))
            .filter(|l| !l.contains("events_failed_for_good"))
            .filter(|l| !l.contains("events_needing_human"))
            .collect();
        assert!(scans.is_empty(), "{name}: {scans:?}\n{text}");
    }
}

/// Each store explains both statements of `inspect`, filtered or not (the plans' words are
/// the store's own: SQLite's are checked above).
#[rstest]
fn explain_inspect_plans_both_statements(#[values(Kind::Sqlite, Kind::Postgres)] kind: Kind) {
    let (_fresh, j) = Fresh::journal(kind);
    created(&j, "w/s");
    for f in [
        InspectFilter::default(),
        InspectFilter {
            pending: true,
            limit: Some(20),
            ..InspectFilter::default()
        },
        InspectFilter {
            target: Some(Target::Workflow("w".into())),
            states: vec![AttemptState::Intent],
            since: Some(j.clock.now()),
            unresolved: true,
            ..InspectFilter::default()
        },
    ] {
        let plans = j.explain_inspect(&f).unwrap();
        let names: Vec<&str> = plans.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["count", "page"]);
        assert!(
            plans.iter().all(|(_, lines)| !lines.is_empty()),
            "{plans:?}"
        );
    }
}
