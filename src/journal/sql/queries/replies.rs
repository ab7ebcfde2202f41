//! Replies to agents' questions.

use serde_json::Value;

use super::inspect::IS_LATEST;
use super::passes::workflows_filter;
use super::{json_items, parse_col, time};
use crate::journal::model::{AttemptId, NewReply, Reply, ReplyId, ReplyState};
use crate::journal::sql::{DbResult, Row, Tx, args, insert_id};

const REPLY_COLUMNS: &str = "r.id, r.attempt_id, r.message_id, r.text, r.answers, r.state, r.error, r.created_at, \
     r.updated_at, r.data_json, r.error_kind";

fn reply_from_row(r: &Row<'_>) -> DbResult<Reply> {
    Ok(Reply {
        id: ReplyId(r.get(0)?),
        attempt_id: AttemptId(r.get(1)?),
        message_id: r.get(2)?,
        text: r.get(3)?,
        answers: r.get(4)?,
        state: parse_col::<ReplyState>(r, 5)?,
        error: r.get(6)?,
        created_at: time(r.get(7)?),
        updated_at: time(r.get(8)?),
        data: r
            .get::<Option<String>>(9)?
            .and_then(|j| serde_json::from_str(&j).ok()),
        error_kind: r.get(10)?,
    })
}

/// Inserts an `INTENT` reply; returns its id.
pub(in crate::journal) fn insert_reply(
    conn: &Tx,
    attempt: AttemptId,
    new: &NewReply,
    now: i64,
) -> DbResult<ReplyId> {
    let insert = insert_id!(
        "INSERT INTO replies (attempt_id, message_id, text, answers, state, created_at, updated_at,
                              data_json)
         VALUES (?1, ?2, ?3, ?4, 'INTENT', ?5, ?5, ?6)"
    );
    let id = conn.insert_id(
        &insert,
        args![
            attempt.0,
            new.message_id,
            new.text,
            new.answers,
            now,
            new.data.as_ref().map(Value::to_string)
        ],
    )?;
    Ok(ReplyId(id))
}

/// Returns the answer of each attempt's latest reply (`{"text": …}` or `{"data": …}`), for
/// the attempts given.
pub(in crate::journal) fn last_answers(
    conn: &Tx,
    attempts: &[AttemptId],
) -> DbResult<Vec<(AttemptId, Value)>> {
    if attempts.is_empty() {
        return Ok(Vec::new());
    }
    let ids = Value::Array(attempts.iter().map(|a| Value::from(a.0)).collect()).to_string();
    let rows = conn.rows(
        &format!(
            "SELECT r.attempt_id, r.text, r.data_json FROM replies r
             WHERE r.attempt_id IN ({}) ORDER BY r.attempt_id, r.id",
            json_items(conn.dialect(), "?1", true)
        ),
        args![ids],
        |r| {
            let data: Option<String> = r.get(2)?;
            let data = data.and_then(|j| serde_json::from_str::<Value>(&j).ok());
            let text: String = r.get(1)?;
            Ok((
                AttemptId(r.get(0)?),
                crate::journal::model::answer_json(&text, data.as_ref()),
            ))
        },
    )?;
    // Oldest first: the last of each attempt wins.
    let mut last: Vec<(AttemptId, Value)> = Vec::new();
    for (id, answer) in rows {
        match last.last_mut() {
            Some((held, a)) if *held == id => *a = answer,
            _ => last.push((id, answer)),
        }
    }
    Ok(last)
}

/// Returns a reply by id.
pub(in crate::journal) fn reply_by_id(conn: &Tx, id: ReplyId) -> DbResult<Option<Reply>> {
    conn.opt_row(
        &format!("SELECT {REPLY_COLUMNS} FROM replies r WHERE r.id = ?1"),
        args![id.0],
        reply_from_row,
    )
}

/// Returns an attempt's replies, oldest first.
pub(in crate::journal) fn replies_of(conn: &Tx, attempt: AttemptId) -> DbResult<Vec<Reply>> {
    conn.rows(
        &format!("SELECT {REPLY_COLUMNS} FROM replies r WHERE r.attempt_id = ?1 ORDER BY r.id"),
        args![attempt.0],
        reply_from_row,
    )
}

/// Returns every reply still `INTENT` whose attempt is its step's latest, outside COMPENSATED
/// workflows, optionally only in some workflows, oldest first.
pub(in crate::journal) fn undelivered_replies(
    conn: &Tx,
    workflows: &[String],
) -> DbResult<Vec<Reply>> {
    conn.rows(
        &format!(
            "SELECT {REPLY_COLUMNS} FROM replies r
             JOIN attempts a ON a.id = r.attempt_id
             JOIN steps s ON s.id = a.step_id
             JOIN workflows w ON w.id = s.workflow_id
             WHERE r.state = 'INTENT' AND {IS_LATEST} AND w.state <> 'COMPENSATED'
               AND (CAST(?1 AS TEXT) IS NULL OR w.name IN ({}))
             ORDER BY r.id",
            json_items(conn.dialect(), "?1", false)
        ),
        args![workflows_filter(workflows)],
        reply_from_row,
    )
}

/// Sets a reply's state, error and the error's named kind.
pub(in crate::journal) fn set_reply_state(
    conn: &Tx,
    id: ReplyId,
    state: ReplyState,
    (error, kind): (Option<&str>, Option<&str>),
    now: i64,
) -> DbResult<()> {
    conn.exec(
        "UPDATE replies SET state = ?2, error = ?3, error_kind = ?4, updated_at = ?5 WHERE id = ?1",
        args![id.0, state.as_str(), error, kind, now],
    )?;
    Ok(())
}
