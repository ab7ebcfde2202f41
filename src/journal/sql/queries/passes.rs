//! The rows the recovery passes visit, by window and page.

use serde_json::Value;

use super::attempts::{ATTEMPT_COLUMNS, ATTEMPT_WIDTH};
use super::inspect::{IS_LATEST, ROW_FROM, failed_for_good_reason, row_from};
use super::row_facts::TEXT_REPLY_REFUSED;
use super::{json_items, json_member};
use crate::journal::model::{AttemptId, AttemptRow};
use crate::journal::sql::{DbResult, Dialect, Tx, args};

/// The pass rows' columns: `inspect::row_select_with`'s, but `is_latest` is the constant 1
/// (the pass WHERE keeps only latest attempts, so a second correlated `MAX()` per row would
/// only repeat it), `artifact_count` 0 (no decision of a pass reads it; `Pass::row_of` builds its rows
/// the same way), `needs_human` NULL (a pass tries an `INTENT` attempt again, and says what
/// it needs from that try) and `state_changed_at` the row's `updated_at` (no pass shows an
/// age). Three index searches fewer per row (docs/performance.md).
fn pass_select(d: Dialect) -> String {
    format!(
        "SELECT {ATTEMPT_COLUMNS}, w.name, s.name, s.agent_url, s.skill, s.command,
             s.max_attempts, s.resolution, w.state, prev.task_id, 1, 0,
             {},
             s.allow_cross_origin, CAST(NULL AS TEXT), a.updated_at, {TEXT_REPLY_REFUSED},
             s.seq
         {ROW_FROM}",
        failed_for_good_reason(d)
    )
}

/// Returns the latest attempt of every step a reconcile pass visits, in delegation order.
///
/// That is every delegated step (not a compensation or command step) outside a COMPENSATED
/// workflow, not resolved `done`/`abandoned`, whose latest attempt is unfinished, terminal but
/// not yet decided (FAILED, REJECTED, CANCELED, LOST, REFUSED), completed with a declared effect
/// not yet claimed, or has an effect a human must look at. A step resolved `resend` is visited:
/// its `INTENT` attempt is sent once without a look (`Journal::take_resend_approval`).
pub(in crate::journal) fn pass_rows(conn: &Tx, workflows: &[String]) -> DbResult<Vec<AttemptRow>> {
    let all = PassWindow {
        workflows: workflows_filter(workflows),
        skip: None,
        after: i64::MIN,
        through: i64::MAX,
    };
    Ok(pass_page(conn, &all, i64::MAX)?
        .into_iter()
        .map(|(_, row)| row)
        .collect())
}

/// What a pass visits (see [`pass_rows`]), with the parameters ?1 (workflows as a JSON array or
/// NULL), ?2 (attempt ids visited otherwise, a JSON array or NULL) and ?3, ?4 (the steps' `seq`
/// window, `?3 < seq <= ?4`).
fn pass_where(d: Dialect) -> String {
    format!(
        "WHERE s.seq > ?3 AND s.seq <= ?4 AND {IS_LATEST}
       AND w.state <> 'COMPENSATED'
       AND s.compensates_step_id IS NULL AND s.command IS NULL
       AND (s.resolution IS NULL OR s.resolution = 'resend')
       AND (a.state NOT IN ('COMPLETED', 'REPLIED')
            OR (a.state = 'COMPLETED' AND s.effect_json IS NOT NULL
                AND (a.effect IS NULL OR a.effect = 'claimed'))
            OR (a.state = 'COMPLETED'
                AND EXISTS (SELECT 1 FROM events fe
                            WHERE fe.attempt_id = a.id AND fe.kind = 'failed-for-good'))
            OR a.effect IN ('absent', 'unknown', 'compensation-failed'))
       AND (CAST(?1 AS TEXT) IS NULL OR w.name IN ({}))
       AND (CAST(?2 AS TEXT) IS NULL OR a.id NOT IN ({}))",
        json_items(d, "?1", false),
        json_items(d, "?2", true)
    )
}

/// A window of a pass's rows: the workflows and attempts it covers and its `seq` bounds.
#[derive(Clone)]
pub(in crate::journal) struct PassWindow {
    /// The workflows (a JSON array), or all.
    pub(in crate::journal) workflows: Option<String>,
    /// Attempt ids left out (a JSON array), or none.
    pub(in crate::journal) skip: Option<String>,
    /// Rows of steps after this delegation position…
    pub(in crate::journal) after: i64,
    /// …up to and including this one.
    pub(in crate::journal) through: i64,
}

/// Returns a workflow filter as the JSON array the pass queries take (NULL for all).
pub(in crate::journal) fn workflows_filter(workflows: &[String]) -> Option<String> {
    (!workflows.is_empty())
        .then(|| Value::Array(workflows.iter().cloned().map(Value::String).collect()).to_string())
}

/// Returns the last delegation position of the journal (0 when it has no step).
pub(in crate::journal) fn max_seq(conn: &Tx) -> DbResult<i64> {
    conn.row("SELECT COALESCE(max(seq), 0) FROM steps", args![], |r| {
        r.get(0)
    })
}

/// Counts the pass rows in a window.
pub(in crate::journal) fn pass_count(conn: &Tx, w: &PassWindow) -> DbResult<u64> {
    let n: i64 = conn.row(
        &format!("SELECT count(*) {ROW_FROM} {}", pass_where(conn.dialect())),
        args![w.workflows, w.skip, w.after, w.through],
        |r| r.get(0),
    )?;
    Ok(u64::try_from(n).unwrap_or_default())
}

/// Returns at most `limit` pass rows of a window (all for a negative limit) in delegation order,
/// each with its step's `seq`.
///
/// A negative limit is SQLite's "none", an error in PostgreSQL: it becomes the largest.
pub(in crate::journal) fn pass_page(
    conn: &Tx,
    w: &PassWindow,
    limit: i64,
) -> DbResult<Vec<(i64, AttemptRow)>> {
    let d = conn.dialect();
    let limit = if limit < 0 { i64::MAX } else { limit };
    conn.rows(
        &format!(
            "{} {} ORDER BY s.seq, a.number LIMIT ?5",
            pass_select(d),
            pass_where(d)
        ),
        args![w.workflows, w.skip, w.after, w.through, limit],
        |r| Ok((r.get(ATTEMPT_WIDTH + 16)?, row_from(r)?)),
    )
}

/// Returns the reason of an attempt's `failed-for-good` event, if it has one.
pub(in crate::journal) fn failed_for_good(conn: &Tx, id: AttemptId) -> DbResult<Option<String>> {
    conn.opt_row(
        &format!(
            "SELECT COALESCE({}, '') FROM events
             WHERE attempt_id = ?1 AND kind = 'failed-for-good' ORDER BY id DESC LIMIT 1",
            json_member(conn.dialect(), "detail_json", "reason")
        ),
        args![id.0],
        |r| r.get(0),
    )
}
