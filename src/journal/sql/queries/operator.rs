//! Operator decisions on attempts (`resolve`) and when steps were resolved or agents registered.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::inspect::IS_LATEST;
use super::{json_items, parse_col, parse_opt, time};
use crate::journal::model::{AttemptId, Resolution, StepId, Target};
use crate::journal::operator::AttemptResolution;
use crate::journal::sql::{Arg, DbResult, Dialect, Tx, args};

/// Records the operator's decision on one attempt.
pub(in crate::journal) fn set_attempt_resolution(
    conn: &Tx,
    id: AttemptId,
    resolution: Resolution,
    reason: &str,
    now: i64,
) -> DbResult<()> {
    conn.exec(
        "UPDATE attempts SET resolution = ?2, resolution_reason = ?3, resolved_at = ?4,
             updated_at = ?4
         WHERE id = ?1",
        args![id.0, resolution.as_str(), reason, now],
    )?;
    Ok(())
}

/// Returns the decision recorded on attempt `id` and whether its endpoint was ever journaled
/// for a send (`send_started_at`, stamped before every send): `resolve --undo` reads both.
pub(in crate::journal) fn attempt_decision(
    conn: &Tx,
    id: AttemptId,
) -> DbResult<(Option<Resolution>, bool)> {
    conn.row(
        "SELECT resolution, send_started_at IS NOT NULL FROM attempts WHERE id = ?1",
        args![id.0],
        |r| Ok((parse_opt::<Resolution>(r, 0)?, r.get(1)?)),
    )
}

/// Clears the decision recorded on attempt `id` (`resolve --undo`).
pub(in crate::journal) fn clear_attempt_resolution(
    conn: &Tx,
    id: AttemptId,
    now: i64,
) -> DbResult<()> {
    conn.exec(
        "UPDATE attempts SET resolution = NULL, resolution_reason = NULL, resolved_at = NULL,
             updated_at = ?2
         WHERE id = ?1",
        args![id.0, now],
    )?;
    Ok(())
}

/// Deletes attempt `id` and its events: only for an `INTENT` attempt a `retry` journaled and
/// nothing ever sent (`resolve --undo`); it has no task, reply or artifact.
pub(in crate::journal) fn delete_unsent_attempt(conn: &Tx, id: AttemptId) -> DbResult<()> {
    conn.exec("DELETE FROM events WHERE attempt_id = ?1", args![id.0])?;
    conn.exec("DELETE FROM alerts WHERE attempt_id = ?1", args![id.0])?;
    conn.exec(
        "DELETE FROM attempts WHERE id = ?1 AND state = 'INTENT' AND task_id IS NULL
             AND send_started_at IS NULL",
        args![id.0],
    )?;
    Ok(())
}

/// Returns when a step was resolved (its standing decision's time), if it is.
pub(in crate::journal) fn resolved_at(conn: &Tx, step: StepId) -> DbResult<Option<DateTime<Utc>>> {
    Ok(conn
        .opt_row(
            "SELECT resolved_at FROM steps WHERE id = ?1 AND resolution IS NOT NULL",
            args![step.0],
            |r| r.get::<Option<i64>>(0),
        )?
        .flatten()
        .map(time))
}

/// Returns whether `table` has `column`: a journal opened read-only may predate schema v2 (or be
/// an artificial "newer" one), and reads of v2 columns then find nothing rather than fail.
fn has_column(conn: &Tx, table: &str, column: &str) -> DbResult<bool> {
    let sql = match conn.dialect() {
        Dialect::Sqlite => {
            "SELECT CASE WHEN EXISTS (SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2)
                 THEN 1 ELSE 0 END"
        }
        Dialect::Postgres => {
            "SELECT CASE WHEN EXISTS (SELECT 1 FROM information_schema.columns
                 WHERE table_schema = current_schema() AND table_name = ?1
                   AND column_name = ?2) THEN 1 ELSE 0 END"
        }
    };
    conn.row(sql, args![table, column], |r| r.get(0))
}

/// Returns the decisions recorded on the attempts `filter` (a WHERE condition on `a`, `s`
/// and `w`, with `args`) keeps, in delegation order.
fn resolutions_where(
    conn: &Tx,
    filter: &str,
    args: &[Arg<'_>],
) -> DbResult<Vec<AttemptResolution>> {
    conn.rows(
        &format!(
            "SELECT a.id, a.resolution, a.resolution_reason, a.resolved_at,
                 CASE WHEN a.resolution = 'resend' AND a.state = 'INTENT'
                     AND s.resolution = 'resend' AND {IS_LATEST} THEN 1 ELSE 0 END
             FROM attempts a
             JOIN steps s ON s.id = a.step_id
             JOIN workflows w ON w.id = s.workflow_id
             WHERE {filter} AND a.resolution IS NOT NULL
             ORDER BY w.id, s.seq, a.number"
        ),
        args,
        |r| {
            Ok(AttemptResolution {
                attempt: AttemptId(r.get(0)?),
                resolution: parse_col::<Resolution>(r, 1)?,
                reason: r.get::<Option<String>>(2)?.unwrap_or_default(),
                resolved_at: time(r.get(3)?),
                resend_pending: r.get(4)?,
            })
        },
    )
}

/// Returns the decisions recorded on attempts, optionally of one workflow or step, in
/// delegation order.
pub(in crate::journal) fn attempt_resolutions(
    conn: &Tx,
    target: Option<&Target>,
) -> DbResult<Vec<AttemptResolution>> {
    if !has_column(conn, "attempts", "resolution")? {
        return Ok(Vec::new());
    }
    let (workflow, step) = match target {
        None => (None, None),
        Some(Target::Workflow(w)) => (Some(w.as_str()), None),
        Some(Target::Step(s)) => (Some(s.workflow.as_str()), Some(s.step.as_str())),
    };
    resolutions_where(
        conn,
        "(CAST(?1 AS TEXT) IS NULL OR w.name = ?1) AND (CAST(?2 AS TEXT) IS NULL OR s.name = ?2)",
        args![workflow, step],
    )
}

/// Returns the decisions recorded on the given attempts, in delegation order: an index lookup
/// per attempt, where [`attempt_resolutions`] of a whole journal reads every attempt.
pub(in crate::journal) fn resolutions_of(
    conn: &Tx,
    attempts: &[AttemptId],
) -> DbResult<Vec<AttemptResolution>> {
    if attempts.is_empty() || !has_column(conn, "attempts", "resolution")? {
        return Ok(Vec::new());
    }
    let ids = Value::Array(attempts.iter().map(|a| Value::from(a.0)).collect()).to_string();
    let filter = format!("a.id IN ({})", json_items(conn.dialect(), "?1", true));
    resolutions_where(conn, &filter, args![ids])
}

/// Returns when a registered agent was put in the registry.
pub(in crate::journal) fn registered_at(
    conn: &Tx,
    card_url: &str,
) -> DbResult<Option<DateTime<Utc>>> {
    if !has_column(conn, "agents", "registered_at")? {
        return Ok(None);
    }
    Ok(conn
        .opt_row(
            "SELECT registered_at FROM agents WHERE card_url = ?1 AND registered IS NOT NULL",
            args![card_url],
            |r| r.get::<Option<i64>>(0),
        )?
        .flatten()
        .map(time))
}
