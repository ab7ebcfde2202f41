//! Events: appending and reading them, and what `prune` deletes.

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{json_member, json_opt, time, to_json};
use crate::journal::model::{AttemptId, Event, StepId};
use crate::journal::sql::{Arg, DbResult, Dialect, InsertId, Stmt, Tx, args, insert_id};

/// An event to append.
pub(in crate::journal) struct NewEvent<'a> {
    pub(in crate::journal) at: i64,
    pub(in crate::journal) workflow: Option<i64>,
    pub(in crate::journal) step: Option<StepId>,
    pub(in crate::journal) attempt: Option<AttemptId>,
    pub(in crate::journal) kind: &'a str,
    pub(in crate::journal) from: Option<&'a str>,
    pub(in crate::journal) to: Option<&'a str>,
    pub(in crate::journal) detail: Option<&'a Value>,
}

/// Appends an event; the workflow defaults to the step's. Returns its id.
pub(in crate::journal) fn insert_event(conn: &Tx, e: &NewEvent<'_>) -> DbResult<i64> {
    conn.insert_id(&INSERT_EVENT, &insert_event_stmt(e).args)
}

/// An event: its columns as [`EVENT_ARG_COLUMNS`] names them.
pub(super) const INSERT_EVENT: InsertId = insert_id!(
    "INSERT INTO events (at, workflow_id, step_id, attempt_id, kind, from_state, to_state,
             detail_json)
         VALUES (?1, COALESCE(?2, (SELECT workflow_id FROM steps WHERE id = ?3)), ?3, ?4, ?5,
             ?6, ?7, ?8)"
);

/// The columns of [`insert_event_stmt`]'s parameters, `?1` first (`workflow_id` defaults to
/// the step's).
pub(super) const EVENT_ARG_COLUMNS: [&str; 8] = [
    "at",
    "workflow_id",
    "step_id",
    "attempt_id",
    "kind",
    "from_state",
    "to_state",
    "detail_json",
];

/// [`insert_event`] as a statement to run later, without reading the event's id back.
pub(in crate::journal) fn insert_event_stmt<'a>(e: &NewEvent<'a>) -> Stmt<'a> {
    Stmt {
        sql: Cow::Borrowed(INSERT_EVENT.sql),
        args: vec![
            Arg::Int(e.at),
            e.workflow.into(),
            e.step.map(|s| s.0).into(),
            e.attempt.map(|a| a.0).into(),
            e.kind.into(),
            e.from.into(),
            e.to.into(),
            to_json(e.detail).into(),
        ],
        rows: false,
    }
}

/// Returns a step's events (its attempts' too), oldest first.
pub(in crate::journal) fn events_of_step(conn: &Tx, step: StepId) -> DbResult<Vec<Event>> {
    conn.rows(
        "SELECT e.id, e.at, w.name, s.name, a.number, e.kind, e.from_state, e.to_state,
             e.detail_json
         FROM events e
         LEFT JOIN workflows w ON w.id = e.workflow_id
         LEFT JOIN steps s ON s.id = e.step_id
         LEFT JOIN attempts a ON a.id = e.attempt_id
         WHERE e.step_id = ?1
         ORDER BY e.id",
        args![step.0],
        |r| {
            Ok(Event {
                id: r.get(0)?,
                at: time(r.get(1)?),
                workflow: r.get(2)?,
                step: r.get(3)?,
                attempt: r.get(4)?,
                kind: r.get(5)?,
                from: r.get(6)?,
                to: r.get(7)?,
                detail: json_opt(r, 8)?,
            })
        },
    )
}

/// Returns the number of events (for tests and measurements).
pub(in crate::journal) fn event_count(conn: &Tx) -> DbResult<i64> {
    conn.row("SELECT count(*) FROM events", args![], |r| r.get(0))
}

/// The events of ids `?1 <= id < ?2`, older than `?3` (unix ms), that `prune` deletes: status
/// refreshes (`observed`) recording no artifact and no question, never the newest event of their
/// attempt. An event whose details are not JSON is kept (on PostgreSQL, whose `jsonb` cast
/// fails on one, the journal writes none).
fn prunable(d: Dialect) -> &'static str {
    match d {
        Dialect::Sqlite => {
            "e.id >= ?1 AND e.id < ?2 AND e.kind IN ('observed', 'push') AND e.at < ?3
     AND e.attempt_id IS NOT NULL
     AND CASE WHEN json_valid(e.detail_json)
              THEN json_array_length(e.detail_json, '$.artifacts') = 0
                   AND json_type(e.detail_json, '$.question') = 'null'
              ELSE 0 END
     AND e.id < (SELECT max(x.id) FROM events x WHERE x.attempt_id = e.attempt_id)"
        }
        // `json_array_length` is 0 for a member that is not an array, NULL for none.
        Dialect::Postgres => {
            "e.id >= ?1 AND e.id < ?2 AND e.kind IN ('observed', 'push') AND e.at < ?3
     AND e.attempt_id IS NOT NULL
     AND CASE WHEN jsonb_typeof(CAST(e.detail_json AS jsonb) -> 'artifacts') = 'array'
              THEN jsonb_array_length(CAST(e.detail_json AS jsonb) -> 'artifacts') = 0
              ELSE (CAST(e.detail_json AS jsonb) -> 'artifacts') IS NOT NULL END
     AND jsonb_typeof(CAST(e.detail_json AS jsonb) -> 'question') = 'null'
     AND e.id < (SELECT max(x.id) FROM events x WHERE x.attempt_id = e.attempt_id)"
        }
    }
}

/// Returns the lowest and highest event id, if there is an event.
pub(in crate::journal) fn event_id_range(conn: &Tx) -> DbResult<Option<(i64, i64)>> {
    conn.row("SELECT min(id), max(id) FROM events", args![], |r| {
        Ok(match (r.get(0)?, r.get(1)?) {
            (Some(lo), Some(hi)) => Some((lo, hi)),
            _ => None,
        })
    })
}

/// Counts the events [`prune_events`] would delete.
pub(in crate::journal) fn prunable_events(
    conn: &Tx,
    from: i64,
    to: i64,
    cutoff_ms: i64,
) -> DbResult<u64> {
    conn.row(
        &format!(
            "SELECT count(*) FROM events e WHERE {}",
            prunable(conn.dialect())
        ),
        args![from, to, cutoff_ms],
        |r| r.get::<i64>(0),
    )
    .map(|n| u64::try_from(n).unwrap_or_default())
}

/// Deletes the prunable events of ids `from..to` older than `cutoff_ms`; returns how many.
pub(in crate::journal) fn prune_events(
    conn: &Tx,
    from: i64,
    to: i64,
    cutoff_ms: i64,
) -> DbResult<u64> {
    conn.exec(
        &format!("DELETE FROM events AS e WHERE {}", prunable(conn.dialect())),
        args![from, to, cutoff_ms],
    )
}

/// Returns whether attempt `id` has a `needs-human` event of this `cause`.
pub(in crate::journal) fn needs_human_for(conn: &Tx, id: AttemptId, cause: &str) -> DbResult<bool> {
    let d = conn.dialect();
    conn.row(
        &format!(
            "SELECT EXISTS (SELECT 1 FROM events
                 WHERE attempt_id = ?1 AND kind = 'needs-human' AND {} = ?2)",
            json_member(d, "detail_json", "cause")
        ),
        args![id.0, cause],
        |r| r.get::<bool>(0),
    )
}

/// Returns when the first event of `kind` was appended for an attempt, if any.
pub(in crate::journal) fn first_event_at(
    conn: &Tx,
    id: AttemptId,
    kind: &str,
) -> DbResult<Option<DateTime<Utc>>> {
    conn.row(
        "SELECT MIN(at) FROM events WHERE attempt_id = ?1 AND kind = ?2",
        args![id.0, kind],
        |r| Ok(r.get::<Option<i64>>(0)?.map(time)),
    )
}
