//! Each agent's health, the attempts not heard from, and alerts.

use chrono::{DateTime, Utc};

use super::inspect::{IS_LATEST, PENDING_SQL};
use super::{ms, parse_col, time};
use crate::journal::health::{AgentHealth, Unheard};
use crate::journal::model::{AttemptId, AttemptState, StepName};
use crate::journal::sql::{DbResult, Row, Tx, args};

/// The columns of an agent's health, in [`health_from`]'s order.
const HEALTH_COLUMNS: &str = "g.card_url, g.fetched_at, g.last_success_at, g.last_failure_at, \
     g.failing_since, g.registered";

/// Whether agent `g` has an unfinished latest attempt of a step without a decision, outside a
/// COMPENSATED workflow: work waits on it.
const HAS_UNFINISHED: &str = "EXISTS (SELECT 1 FROM attempts a
         JOIN steps s ON s.id = a.step_id JOIN workflows w ON w.id = s.workflow_id
         WHERE a.agent_id = g.id
           AND a.state IN ('INTENT', 'SENT', 'SUBMITTED', 'WORKING', 'INPUT_REQUIRED',
                           'AUTH_REQUIRED', 'UNKNOWN', 'UNCERTAIN')
           AND s.resolution IS NULL AND w.state <> 'COMPENSATED'
           AND (a.number = (SELECT MAX(x.number) FROM attempts x WHERE x.step_id = a.step_id)))";

fn health_from(r: &Row<'_>) -> DbResult<AgentHealth> {
    let at =
        |i: usize| -> DbResult<Option<DateTime<Utc>>> { Ok(r.get::<Option<i64>>(i)?.map(time)) };
    Ok(AgentHealth {
        card_url: r.get(0)?,
        fetched_at: at(1)?,
        last_success_at: at(2)?,
        last_failure_at: at(3)?,
        failing_since: at(4)?,
        registered: r.get::<Option<i64>>(5)?.is_some(),
        waited_on: r.get::<i64>(6)? != 0,
    })
}

/// Returns every agent's health (`status`, the metrics): failing agents first, then by when
/// each was last reached (the later of its card's fetch and its last answer), newest first.
pub(in crate::journal) fn agents_health(conn: &Tx) -> DbResult<Vec<AgentHealth>> {
    conn.rows(
        &format!(
            "SELECT {HEALTH_COLUMNS}, CASE WHEN {HAS_UNFINISHED} THEN 1 ELSE 0 END
             FROM agents g
             ORDER BY CASE WHEN g.failing_since IS NULL THEN 1 ELSE 0 END,
                 CASE WHEN COALESCE(g.fetched_at, 0) >= COALESCE(g.last_success_at, 0)
                      THEN COALESCE(g.fetched_at, 0) ELSE g.last_success_at END DESC,
                 g.card_url"
        ),
        args![],
        health_from,
    )
}

/// Returns one agent's health, `None` for an agent the journal does not know.
pub(in crate::journal) fn agent_health(conn: &Tx, card_url: &str) -> DbResult<Option<AgentHealth>> {
    conn.opt_row(
        &format!(
            "SELECT {HEALTH_COLUMNS}, CASE WHEN {HAS_UNFINISHED} THEN 1 ELSE 0 END
             FROM agents g WHERE g.card_url = ?1"
        ),
        args![card_url],
        health_from,
    )
}

/// Writes an agent's health columns; returns whether its row exists.
pub(in crate::journal) fn set_agent_health(conn: &Tx, h: &AgentHealth) -> DbResult<bool> {
    let ms_of = |t: Option<DateTime<Utc>>| t.map(ms);
    Ok(conn.exec(
        "UPDATE agents SET last_success_at = ?2, last_failure_at = ?3, failing_since = ?4
         WHERE card_url = ?1",
        args![
            h.card_url,
            ms_of(h.last_success_at),
            ms_of(h.last_failure_at),
            ms_of(h.failing_since)
        ],
    )? > 0)
}

/// Returns the card URL of the agent a request URL belongs to: the agent whose card URL it is,
/// else one whose chosen interface it is.
pub(in crate::journal) fn card_url_of(conn: &Tx, url: &str) -> DbResult<Option<String>> {
    conn.opt_row(
        "SELECT card_url FROM agents WHERE card_url = ?1 OR interface_url = ?1
         ORDER BY CASE WHEN card_url = ?1 THEN 0 ELSE 1 END, id LIMIT 1",
        args![url],
        |r| r.get(0),
    )
}

/// The attempts `status --stale` weighs: the latest attempt of each step without a decision,
/// outside a COMPENSATED workflow, unfinished and not needing a human ([`PENDING_SQL`]), each
/// with when it was last heard of: the later of its last state change or observed change
/// (`state`, `observed` and `artifact` events; its creation before any) and its agent's last
/// answer. A failed read moves neither.
fn heard_sql() -> String {
    format!(
        "SELECT t.wn, t.sn, t.number, t.state, t.card_url,
             CASE WHEN COALESCE(t.ok, 0) > t.changed THEN t.ok ELSE t.changed END AS heard
         FROM (SELECT w.name AS wn, s.name AS sn, a.number AS number, a.state AS state,
                   ag.card_url AS card_url, ag.last_success_at AS ok,
                   COALESCE((SELECT MAX(e.at) FROM events e WHERE e.attempt_id = a.id
                               AND e.kind IN ('state', 'observed', 'artifact')),
                            a.created_at) AS changed
               FROM attempts a
               JOIN steps s ON s.id = a.step_id
               JOIN workflows w ON w.id = s.workflow_id
               LEFT JOIN agents ag ON ag.id = a.agent_id
               WHERE a.state IN ('INTENT', 'SENT', 'SUBMITTED', 'WORKING', 'INPUT_REQUIRED',
                                 'AUTH_REQUIRED', 'UNKNOWN', 'UNCERTAIN')
                 AND {IS_LATEST}
                 -- Not `NOT`: the pending test is NULL, not false, for an attempt without an
                 -- effect.
                 AND CASE WHEN {PENDING_SQL} THEN 0 ELSE 1 END = 1) t"
    )
}

/// Returns the unfinished attempts not needing a human last heard of before `before` (unix
/// ms), the longest unheard first, at most `limit`, and how many there are in all.
pub(in crate::journal) fn unheard_attempts(
    conn: &Tx,
    before: i64,
    limit: u64,
) -> DbResult<(Vec<Unheard>, u64)> {
    let heard = heard_sql();
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = conn.rows(
        &format!(
            "SELECT h.wn, h.sn, h.number, h.state, h.card_url, h.heard FROM ({heard}) h
             WHERE h.heard < ?1 ORDER BY h.heard, h.wn, h.sn LIMIT ?2"
        ),
        args![before, limit],
        |r| {
            Ok(Unheard {
                step: StepName::from_parts(r.get::<String>(0)?, r.get::<String>(1)?),
                attempt: r.get(2)?,
                state: parse_col::<AttemptState>(r, 3)?,
                agent: r.get(4)?,
                heard: time(r.get(5)?),
            })
        },
    )?;
    let total: i64 = conn.row(
        &format!("SELECT count(*) FROM ({heard}) h WHERE h.heard < ?1"),
        args![before],
        |r| r.get(0),
    )?;
    Ok((rows, u64::try_from(total).unwrap_or(0)))
}

/// Returns the agents failing since before `before` (unix ms) that work waits on (an
/// unfinished attempt), the longest failing first.
pub(in crate::journal) fn failing_agents(
    conn: &Tx,
    before: i64,
) -> DbResult<Vec<(String, DateTime<Utc>)>> {
    conn.rows(
        &format!(
            "SELECT g.card_url, g.failing_since FROM agents g
             WHERE g.failing_since IS NOT NULL AND g.failing_since < ?1 AND {HAS_UNFINISHED}
             ORDER BY g.failing_since, g.card_url"
        ),
        args![before],
        |r| Ok((r.get(0)?, time(r.get(1)?))),
    )
}

/// Returns what `reconcile --alert new` recorded for attempt `id`: the state and status
/// timestamp (`''` for none) it reported, and when.
pub(in crate::journal) fn alert_of(
    conn: &Tx,
    id: AttemptId,
) -> DbResult<Option<(String, String, DateTime<Utc>)>> {
    conn.opt_row(
        "SELECT state, status_timestamp, reported_at FROM alerts WHERE attempt_id = ?1",
        args![id.0],
        |r| Ok((r.get(0)?, r.get(1)?, time(r.get(2)?))),
    )
}

/// Records that attempt `id` was reported in this state and status timestamp, at `now`.
pub(in crate::journal) fn upsert_alert(
    conn: &Tx,
    id: AttemptId,
    state: &str,
    status_timestamp: &str,
    now: i64,
) -> DbResult<()> {
    conn.exec(
        "INSERT INTO alerts (attempt_id, state, status_timestamp, reported_at)
         VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (attempt_id) DO UPDATE SET state = excluded.state,
             status_timestamp = excluded.status_timestamp, reported_at = excluded.reported_at",
        args![id.0, state, status_timestamp, now],
    )?;
    Ok(())
}
