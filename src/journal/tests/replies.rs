//! A reply's failure keeps the named error it met, and reads decide on that kind: a text reply
//! refused as invalid parameters makes the attempt's remedy name a structured answer, whatever
//! the error's words; replies journaled before the kind existed get it from their line once,
//! when the journal is migrated.

use super::*;

/// An attempt waiting for an answer, with one text reply journaled as refused with `line` and
/// `kind`.
fn refused_reply(j: &Journal, name: &str, line: &str, kind: Option<&str>) -> AttemptId {
    let ask = created(j, name);
    let ts = "2026-11-30T01:00:00Z";
    let task = format!("t-{}", ask.id.0);
    j.apply_task(
        ask.id,
        &view(&task_json(&task, "TASK_STATE_INPUT_REQUIRED", ts)),
        Source::Send,
    )
    .unwrap();
    let reply = j
        .create_reply(
            ask.id,
            &NewReply {
                data: None,
                message_id: uuid::Uuid::new_v4().to_string(),
                text: "one room".to_owned(),
                answers: Some(ts.to_owned()),
            },
        )
        .unwrap();
    assert!(
        j.set_reply_state(reply.id, ReplyState::Refused, Some(line), kind)
            .unwrap()
    );
    ask.id
}

/// Whether each attempt's row (as the passes read it) says its text reply was refused as
/// invalid parameters.
fn refused_as_invalid(j: &Journal) -> Vec<(AttemptId, bool)> {
    let mut rows: Vec<(AttemptId, bool)> = j
        .pass_rows(&[])
        .unwrap()
        .into_iter()
        .map(|r| (r.attempt.id, r.text_reply_refused))
        .collect();
    rows.sort();
    rows
}

#[rstest]
fn a_reply_refused_as_invalid_params_is_told_by_its_kind_not_its_words(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let (_fresh, j) = Fresh::journal(kind);
    // Named by kind, in words that name no code: counted.
    let named = refused_reply(&j, "trip/a", "the agent said no", Some("INVALID_PARAMS"));
    // Words that name the code, but another kind (or none): not counted.
    let other = refused_reply(
        &j,
        "trip/b",
        "JSON-RPC error -32001: INVALID_PARAMS -32602",
        Some("TASK_NOT_FOUND"),
    );
    let unnamed = refused_reply(&j, "trip/c", "JSON-RPC error -32602: bad", None);
    assert_eq!(
        refused_as_invalid(&j),
        [(named, true), (other, false), (unnamed, false)]
    );
    let held = &j.replies(named).unwrap()[0];
    assert_eq!(held.error_kind.as_deref(), Some("INVALID_PARAMS"));
    assert_eq!(held.error.as_deref(), Some("the agent said no"));
    // The same state and line with another kind is a change, written once.
    let id = held.id;
    assert!(
        j.set_reply_state(id, ReplyState::Refused, Some("the agent said no"), None)
            .unwrap()
    );
    assert!(
        !j.set_reply_state(id, ReplyState::Refused, Some("the agent said no"), None)
            .unwrap()
    );
    assert_eq!(refused_as_invalid(&j)[0], (named, false));
}

#[rstest]
fn migration_22_names_the_invalid_params_refusals_journaled_before_it(
    #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
) {
    let fresh = Fresh::new(kind);
    let (rpc, http, other) = {
        let j = fresh.open();
        let rpc = refused_reply(
            &j,
            "trip/rpc",
            "agent at `http://127.0.0.1:9/` answered SendMessage with JSON-RPC error -32602: bad",
            None,
        );
        let http = refused_reply(
            &j,
            "trip/http",
            "`http://127.0.0.1:9/` answered SendMessage with HTTP 400: bad (INVALID_PARAMS)",
            None,
        );
        let other = refused_reply(
            &j,
            "trip/other",
            "`http://127.0.0.1:9/` answered SendMessage with HTTP 403",
            None,
        );
        // As a version-21 binary left it: no kind column.
        let old = "ALTER TABLE replies DROP COLUMN error_kind;";
        downgrade(&j, kind, old, 21);
        (rpc, http, other)
    };
    let j = fresh.open();
    assert_eq!(
        refused_as_invalid(&j),
        [(rpc, true), (http, true), (other, false)]
    );
    let kinds: Vec<Option<String>> = [rpc, http, other]
        .into_iter()
        .map(|a| j.replies(a).unwrap().remove(0).error_kind)
        .collect();
    assert_eq!(
        kinds,
        [
            Some("INVALID_PARAMS".to_owned()),
            Some("INVALID_PARAMS".to_owned()),
            None
        ]
    );
}
