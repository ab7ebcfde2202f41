//! Replies, alerts, agents' limits, the overview and the workflow summaries read back as
//! written (the aggregates and JSON reads each store answers its own way).

use super::*;

#[rstest]
fn replies_alerts_limits_and_summaries_read_back(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let (_fresh, j) = Fresh::journal(kind);
    let ask = created(&j, "trip/hotel");
    let ts = "2026-11-30T01:00:00Z";
    j.apply_task(
        ask.id,
        &view(&task_json("t", "TASK_STATE_INPUT_REQUIRED", ts)),
        Source::Send,
    )
    .unwrap();
    created(&j, "trip/car");
    let done = created(&j, "other/x");
    j.apply_task(
        done.id,
        &view(&task_json("d", "TASK_STATE_COMPLETED", ts)),
        Source::Send,
    )
    .unwrap();

    // Replies: committed, listed while undelivered, settled once.
    let reply = j
        .create_reply(
            ask.id,
            &NewReply {
                data: None,
                message_id: "r-1".to_owned(),
                text: "one room".to_owned(),
                answers: Some(ts.to_owned()),
            },
        )
        .unwrap();
    assert_eq!(reply.state, ReplyState::Intent);
    let undelivered = |w: &[String]| -> Vec<ReplyId> {
        j.undelivered_replies(w)
            .unwrap()
            .iter()
            .map(|r| r.id)
            .collect()
    };
    assert_eq!(undelivered(&[]), [reply.id]);
    assert_eq!(undelivered(&["trip".to_owned()]), [reply.id]);
    assert!(undelivered(&["other".to_owned()]).is_empty());
    assert!(
        j.set_reply_state(reply.id, ReplyState::Delivered, None, None)
            .unwrap()
    );
    assert!(
        !j.set_reply_state(reply.id, ReplyState::Delivered, None, None)
            .unwrap()
    );
    assert!(undelivered(&[]).is_empty());
    assert_eq!(j.replies(ask.id).unwrap()[0].state, ReplyState::Delivered);

    // Alerts: new until marked, then not.
    let name = StepName::parse("trip/hotel").unwrap();
    let item = j.alert_item(&name, 1, None).unwrap().unwrap();
    assert!(item.new);
    j.mark_alerted(std::slice::from_ref(&item)).unwrap();
    assert!(!j.alert_item(&name, 1, None).unwrap().unwrap().new);

    // An agent's own limits, a float and an integer.
    let card = AgentCard {
        binding: crate::model::ProtocolBinding::JsonRpcV1,
        card_url: "http://127.0.0.1:9/.well-known/agent-card.json".to_owned(),
        interface_url: "http://127.0.0.1:9/".to_owned(),
        protocol_version: Some("1.0".to_owned()),
        tenant: None,
        card_json: "{}".to_owned(),
        skills: vec!["rooms".to_owned()],
    };
    j.register_agent(&card, None, None, true).unwrap();
    j.set_agent_limits(&card.card_url, Some(3), Some(2.5))
        .unwrap();
    assert_eq!(
        j.limits_of_agent(&card.card_url).unwrap(),
        (Some(3), Some(2.5))
    );
    assert_eq!(j.agents_with_skill("rooms").unwrap().len(), 1);
    assert!(j.agents_with_skill("cars").unwrap().is_empty());
    assert!(j.registered_at(&card.card_url).unwrap().is_some());

    // The overview and the summaries: counts by state, the oldest unfinished, sums.
    let overview = j.overview().unwrap();
    let mut states = overview.states.clone();
    states.sort_by_key(|(s, _)| s.as_str());
    assert_eq!(
        states,
        [
            (AttemptState::Completed, 1),
            (AttemptState::InputRequired, 1),
            (AttemptState::Intent, 1)
        ]
    );
    let (oldest, number, state, _, _) = overview.oldest_unfinished.unwrap();
    assert_eq!(
        (oldest.to_string(), number, state),
        ("trip/hotel".to_owned(), 1, AttemptState::InputRequired)
    );
    let (summaries, total) = j.workflow_summaries(None).unwrap();
    assert_eq!(total, 2);
    let trip = summaries.iter().find(|s| s.name == "trip").unwrap();
    assert_eq!(trip.steps.values().sum::<u64>(), 2);
    assert_eq!(trip.needs_human, 1);
    assert_eq!(trip.resolved, 0);
    let (first, _) = j.workflow_summaries(Some(1)).unwrap();
    assert_eq!(first.len(), 1);
}

/// What the "writes nothing" checks rely on: another connection's data version changes with
/// every committed insert, update and delete, and with nothing else.
#[rstest]
fn every_write_changes_the_data_version_another_connection_reads(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let (fresh, j) = Fresh::journal(kind);
    let other = fresh.open();
    let mut version = other.data_version().unwrap();
    let mut changed = |what: &str| {
        let now = other.data_version().unwrap();
        assert_ne!(now, version, "{what} left the data version as it was");
        version = now;
    };
    let a = created(&j, "w/s");
    changed("an insert");
    j.mark_uncertain(a.id, "x").unwrap();
    changed("an update");
    let (lo, hi) = j.event_id_range().unwrap().unwrap();
    j.store
        .transaction("delete an event", |tx, e| {
            let n = tx
                .exec(
                    "DELETE FROM events WHERE id = ?1",
                    &[sql::Arg::Int(hi.max(lo))],
                )
                .map_err(e)?;
            Ok(((), n > 0))
        })
        .unwrap();
    changed("a delete");
    j.inspect(&InspectFilter::default()).unwrap();
    assert_eq!(other.data_version().unwrap(), version, "a read");
}

/// The `COMPENSATING` workflows, in creation order, each with whether a compensation of it
/// failed; `ACTIVE` and `COMPENSATED` ones are not listed.
#[rstest]
fn compensating_workflows_say_whether_a_compensation_failed(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let (_fresh, j) = Fresh::journal(kind);
    for name in ["a/s", "b/s", "c/s", "d/s"] {
        created(&j, name);
    }
    let failed = created(&j, "b/t");
    assert!(j.compensating_workflows().unwrap().is_empty());
    for (w, state) in [
        ("a", WorkflowState::Compensating),
        ("b", WorkflowState::Compensating),
        ("c", WorkflowState::Compensated),
    ] {
        assert!(j.set_workflow_state(w, state).unwrap());
    }
    j.set_effect(
        failed.id,
        Some(EffectState::CompensationFailed),
        &serde_json::json!({}),
    )
    .unwrap();
    assert_eq!(
        j.compensating_workflows().unwrap(),
        [("a".to_owned(), false), ("b".to_owned(), true)]
    );
}

/// Agents' not-before times: read back while ahead, replaced per agent and credential, the
/// passed ones forgotten.
#[rstest]
fn not_before_times_read_back_while_ahead(#[values(Kind::Sqlite, Kind::Postgres)] kind: Kind) {
    let (_fresh, j) = Fresh::journal(kind);
    let now = crate::clock::system_now();
    let nb = |url: &str, credential: Option<&str>, ahead: i64, reason: &str| AgentNotBefore {
        interface_url: url.to_owned(),
        credential: credential.map(str::to_owned),
        not_before: now + chrono::Duration::seconds(ahead),
        reason: reason.to_owned(),
    };
    j.record_not_before(&nb("http://a/", None, 3600, "first"))
        .unwrap();
    j.record_not_before(&nb("http://a/", Some("env:TOK"), 60, "other credential"))
        .unwrap();
    j.record_not_before(&nb("http://b/", None, -1, "passed"))
        .unwrap();
    // The same agent again: replaced.
    j.record_not_before(&nb("http://a/", None, 7200, "second"))
        .unwrap();
    let got = j.not_befores().unwrap();
    let ms = |t: chrono::DateTime<chrono::Utc>| t.timestamp_millis();
    assert_eq!(
        got.iter()
            .map(|n| (
                n.interface_url.as_str(),
                n.credential.as_deref(),
                ms(n.not_before),
                n.reason.as_str()
            ))
            .collect::<Vec<_>>(),
        [
            ("http://a/", None, ms(now) + 7_200_000, "second"),
            (
                "http://a/",
                Some("env:TOK"),
                ms(now) + 60_000,
                "other credential"
            ),
        ]
    );
    let limits = j.not_before_limits().unwrap();
    assert!(limits.contains_key(&("http://a/".to_owned(), Some("env:TOK".to_owned()))));
    assert_eq!(limits.len(), 2);
}
