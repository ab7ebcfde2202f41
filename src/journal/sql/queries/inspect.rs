//! Attempt rows as `inspect` and `status` read them: pending, filtered, paged, summarised.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::attempts::{ATTEMPT_COLUMNS, ATTEMPT_WIDTH, attempt_from_row};
use super::passes::workflows_filter;
use super::row_facts::{STATE_CHANGED_AT, TEXT_REPLY_REFUSED};
use super::steps::binding_from;
use super::{json_items, json_member, ms, parse_col, parse_opt, time};
use crate::journal::model::{
    AttemptRow, AttemptState, InspectFilter, NeedsHuman, Resolution, StepName, Target,
    WorkflowSummary,
};
use crate::journal::sql::{Arg, DbError, DbResult, Dialect, Row, Tx, args};

pub(super) const ROW_FROM: &str = "FROM attempts a
     JOIN steps s ON s.id = a.step_id
     JOIN workflows w ON w.id = s.workflow_id
     LEFT JOIN agents ag ON ag.id = a.agent_id
     LEFT JOIN attempts prev ON prev.id = a.previous_attempt_id";

pub(super) const IS_LATEST: &str =
    "(a.number = (SELECT MAX(x.number) FROM attempts x WHERE x.step_id = a.step_id))";

/// The SQL twin of `AttemptRow::remedy`: the latest attempt of an unresolved step, outside a
/// COMPENSATED workflow, that needs a human. Keep the two in step (a test compares them).
pub(in crate::journal) const PENDING_SQL: &str =
    "(s.resolution IS NULL AND w.state <> 'COMPENSATED'
     AND (a.state IN ('INPUT_REQUIRED', 'AUTH_REQUIRED', 'UNCERTAIN', 'REFUSED', 'LOST')
          OR (a.state IN ('FAILED', 'REJECTED')
              AND (s.agent_url IS NOT NULL OR a.number >= s.max_attempts))
          OR (a.state = 'CANCELED' AND a.cancel_requested_at IS NULL)
          OR a.effect IN ('absent', 'unknown', 'compensation-failed')
          OR EXISTS (SELECT 1 FROM events fe
                     WHERE fe.attempt_id = a.id AND fe.kind = 'failed-for-good')
          OR (a.state = 'INTENT'
              AND (SELECT le.kind FROM events le WHERE le.attempt_id = a.id
                     AND le.kind NOT IN ('in-flight', 'dedup-trusted', 'duplicate-task', 'push-disagrees')
                   ORDER BY le.id DESC LIMIT 1) = 'needs-human')))";

/// The part of [`PENDING_SQL`] that reads the attempt row alone, widened to what an index can
/// hold (any FAILED or REJECTED attempt): word for word the WHERE clause of the partial index
/// `attempts_needing_human` (migration 0003), since SQLite uses a partial index only for a query
/// that repeats its WHERE clause. A test holds the two together. `=` and `OR` rather than
/// `IN (…)`: SQLite evaluates the index's clause on every UPDATE of these columns, and an `IN`
/// list of more than two values builds a temporary b-tree each time.
pub(in crate::journal) const PENDING_ATTEMPT_SQL: &str = "state = 'INPUT_REQUIRED' \
     OR state = 'AUTH_REQUIRED' OR state = 'UNCERTAIN' OR state = 'REFUSED' OR state = 'LOST' \
     OR state = 'FAILED' OR state = 'REJECTED' \
     OR (state = 'CANCELED' AND cancel_requested_at IS NULL) \
     OR effect = 'absent' OR effect = 'unknown' OR effect = 'compensation-failed'";

/// The rows `inspect --pending` starts from: every attempt [`PENDING_SQL`] can hold true for,
/// found through three small partial indexes (migrations 0003 and 0014) rather than by reading
/// every attempt. [`PENDING_SQL`] then decides on these rows only.
fn pending_from() -> String {
    format!(
        "WITH pending_candidates (id) AS (
             SELECT id FROM attempts WHERE {PENDING_ATTEMPT_SQL}
             UNION
             SELECT attempt_id FROM events WHERE kind = 'failed-for-good'
             UNION
             SELECT attempt_id FROM events WHERE kind = 'needs-human')"
    )
}

/// The pending candidates with their step and workflow (`CROSS JOIN` keeps the candidates the
/// outer loop): what the pending count reads.
const PENDING_FROM: &str = "FROM pending_candidates pc
     CROSS JOIN attempts a ON a.id = pc.id
     JOIN steps s ON s.id = a.step_id
     JOIN workflows w ON w.id = s.workflow_id";

/// [`ROW_FROM`] starting from the pending candidates: what the pending page reads.
const PENDING_ROW_FROM: &str = "FROM pending_candidates pc
     CROSS JOIN attempts a ON a.id = pc.id
     JOIN steps s ON s.id = a.step_id
     JOIN workflows w ON w.id = s.workflow_id
     LEFT JOIN agents ag ON ag.id = a.agent_id
     LEFT JOIN attempts prev ON prev.id = a.previous_attempt_id";

pub(super) fn row_from(r: &Row<'_>) -> DbResult<AttemptRow> {
    let attempt = attempt_from_row(r)?;
    let o = ATTEMPT_WIDTH;
    Ok(AttemptRow {
        attempt,
        step: StepName::from_parts(r.get::<String>(o)?, r.get::<String>(o + 1)?),
        binding: binding_from(r.get(o + 2)?, r.get(o + 3)?, r.get(o + 4)?)?,
        max_attempts: r.get(o + 5)?,
        resolution: parse_opt::<Resolution>(r, o + 6)?,
        workflow_state: parse_col(r, o + 7)?,
        previous_task_id: r.get(o + 8)?,
        is_latest: r.get(o + 9)?,
        artifact_count: r.get(o + 10)?,
        failed_for_good: r.get(o + 11)?,
        allow_cross_origin: r.get(o + 12)?,
        needs_human: r.opt_str(o + 13)?.map(NeedsHuman::from_detail),
        state_changed_at: time(r.get(o + 14)?),
        text_reply_refused: r.get(o + 15)?,
    })
}

fn row_select(d: Dialect) -> String {
    row_select_with(d, "")
}

/// [`row_select`] with `extra` columns after the row's own (`", s.seq"`).
fn row_select_with(d: Dialect, extra: &str) -> String {
    row_select_from(d, extra, ROW_FROM)
}

/// The reason of the latest `failed-for-good` event of attempt `a` (`''` when it has none).
pub(super) fn failed_for_good_reason(d: Dialect) -> String {
    format!(
        "(SELECT COALESCE({}, '')
                FROM events fe WHERE fe.attempt_id = a.id AND fe.kind = 'failed-for-good'
                ORDER BY fe.id DESC LIMIT 1)",
        json_member(d, "fe.detail_json", "reason")
    )
}

/// The detail of the latest event of attempt `a` (notes aside: [`Note`](crate::journal::Note))
/// if it is a `needs-human` one and the attempt is still `INTENT` (NULL otherwise): why an
/// attempt still `INTENT` needs a human. [`PENDING_SQL`] reads the same latest event.
pub(in crate::journal) const NEEDS_HUMAN_DETAIL: &str = "CASE WHEN a.state = 'INTENT' THEN
         (SELECT CASE WHEN le.kind = 'needs-human' THEN le.detail_json END
            FROM events le WHERE le.attempt_id = a.id
              AND le.kind NOT IN ('in-flight', 'dedup-trusted', 'duplicate-task', 'push-disagrees')
            ORDER BY le.id DESC LIMIT 1) END";

/// [`row_select_with`] over `from` ([`ROW_FROM`] or [`PENDING_ROW_FROM`]).
fn row_select_from(d: Dialect, extra: &str, from: &str) -> String {
    format!(
        "SELECT {ATTEMPT_COLUMNS}, w.name, s.name, s.agent_url, s.skill, s.command,
             s.max_attempts, s.resolution, w.state, prev.task_id,
             CASE WHEN {IS_LATEST} THEN 1 ELSE 0 END,
             (SELECT count(*) FROM artifacts ar WHERE ar.attempt_id = a.id),
             {},
             s.allow_cross_origin, {NEEDS_HUMAN_DETAIL},
             {STATE_CHANGED_AT}, {TEXT_REPLY_REFUSED}{extra}
         {from}",
        failed_for_good_reason(d)
    )
}

/// The WHERE clause of inspect with its parameters (?1 workflow, ?2 step, ?3 states as a
/// JSON array or NULL), and the filters ?4 agent (card URL or NULL), ?5 updated at or after
/// (unix ms or NULL), ?6 unresolved steps only (0 or 1) and ?7 updated at or before (unix ms
/// or NULL). ?8 is the page's LIMIT, last so that the count takes ?1 to ?7 alone (PostgreSQL
/// types every parameter up to the highest).
/// A parameter tested for NULL is cast: PostgreSQL cannot type `?N IS NULL` by itself.
fn inspect_where(d: Dialect) -> String {
    format!(
        "WHERE (CAST(?1 AS TEXT) IS NULL OR w.name = ?1)
       AND (CAST(?2 AS TEXT) IS NULL OR s.name = ?2)
       AND (CAST(?3 AS TEXT) IS NULL OR a.state IN ({}))
       AND (CAST(?4 AS TEXT) IS NULL
            OR a.agent_id = (SELECT id FROM agents WHERE card_url = ?4))
       AND (CAST(?5 AS BIGINT) IS NULL OR a.updated_at >= ?5)
       AND (?6 = 0 OR s.resolution IS NULL)
       AND (CAST(?7 AS BIGINT) IS NULL OR a.updated_at <= ?7)",
        json_items(d, "?3", false)
    )
}

/// The two statements of `inspect` (the total count, then the page) and their parameters.
struct InspectSql {
    count: String,
    /// Whether `count` takes the filter's parameters (an unfiltered count takes none).
    count_filtered: bool,
    page: String,
    workflow: Option<String>,
    step: Option<String>,
    states: Option<String>,
    limit: i64,
    agent: Option<String>,
    since: Option<i64>,
    unresolved: bool,
    until: Option<i64>,
}

impl InspectSql {
    /// The parameters of the page, ?1 to ?8; the count takes ?1 to ?7 (all but the LIMIT).
    fn params(&self) -> [Arg<'_>; 8] {
        use crate::journal::sql::ToArg;
        [
            self.workflow.to_arg(),
            self.step.to_arg(),
            self.states.to_arg(),
            self.agent.to_arg(),
            self.since.to_arg(),
            self.unresolved.to_arg(),
            self.until.to_arg(),
            self.limit.to_arg(),
        ]
    }

    /// The parameters of the count: the page's but the LIMIT; none when it is unfiltered.
    fn count_params<'a>(&self, params: &'a [Arg<'a>; 8]) -> &'a [Arg<'a>] {
        if self.count_filtered {
            &params[..7]
        } else {
            &[]
        }
    }
}

fn inspect_sql(d: Dialect, f: &InspectFilter) -> InspectSql {
    let inspect_where = inspect_where(d);
    let (workflow, step) = match &f.target {
        None => (None, None),
        Some(Target::Workflow(w)) => (Some(w.clone()), None),
        Some(Target::Step(s)) => (Some(s.workflow.clone()), Some(s.step.clone())),
    };
    let states = (!f.states.is_empty()).then(|| {
        Value::Array(
            f.states
                .iter()
                .map(|s| Value::String(s.as_str().to_owned()))
                .collect(),
        )
        .to_string()
    });
    // Unfiltered, every attempt is a row (each has its step and workflow): SQLite counts the
    // smallest index of `attempts` instead of joining every row to its step and workflow.
    // Pending, both statements start from the pending candidates (a few rows of two partial
    // indexes) and sort what passes the predicate, instead of reading every attempt.
    let count_filtered = f.target.is_some()
        || states.is_some()
        || f.pending
        || f.agent.is_some()
        || f.since.is_some()
        || f.until.is_some()
        || f.unresolved;
    let (mut count, mut page) = if f.pending {
        let with = pending_from();
        let pending = format!("{inspect_where} AND {IS_LATEST} AND {PENDING_SQL}");
        (
            format!("{with} SELECT count(*) {PENDING_FROM} {pending}"),
            format!(
                "{with} {} {pending} ORDER BY w.id, s.seq, a.number LIMIT ?8",
                row_select_from(d, "", PENDING_ROW_FROM)
            ),
        )
    } else if count_filtered {
        (
            format!("SELECT count(*) {ROW_FROM} {inspect_where}"),
            format!(
                "{} {inspect_where} ORDER BY w.id, s.seq, a.number LIMIT ?8",
                row_select(d)
            ),
        )
    } else {
        (
            "SELECT count(*) FROM attempts".to_owned(),
            format!(
                "{} {inspect_where} ORDER BY w.id, s.seq, a.number LIMIT ?8",
                row_select(d)
            ),
        )
    };
    if d == Dialect::Postgres {
        // `CROSS JOIN … ON` is SQLite's way to fix the join order; PostgreSQL plans its own.
        count = count.replace("CROSS JOIN", "JOIN");
        page = page.replace("CROSS JOIN", "JOIN");
    }
    InspectSql {
        count,
        count_filtered,
        page,
        workflow,
        step,
        states,
        // No limit is the largest (a negative LIMIT, SQLite's "none", is an error in
        // PostgreSQL).
        limit: f
            .limit
            .map_or(i64::MAX, |l| i64::try_from(l).unwrap_or(i64::MAX)),
        agent: f.agent.clone(),
        since: f.since.map(ms),
        unresolved: f.unresolved,
        until: f.until.map(ms),
    }
}

/// Returns inspect rows (ordered by workflow, delegation order, attempt) and the total count.
pub(in crate::journal) fn inspect(
    conn: &Tx,
    f: &InspectFilter,
) -> DbResult<(Vec<AttemptRow>, u64)> {
    let q = inspect_sql(conn.dialect(), f);
    let params = q.params();
    let total: i64 = conn.row(&q.count, q.count_params(&params), |r| r.get(0))?;
    let total = u64::try_from(total).unwrap_or_default();
    let rows = conn.rows(&q.page, &params, row_from)?;
    Ok((rows, total))
}

/// Returns each statement `inspect` runs for `f` with the store's plan for it, one line per
/// step (SQLite's `EXPLAIN QUERY PLAN` indented by depth, PostgreSQL's `EXPLAIN` as it is),
/// for `docs/performance.md` and the benchmarks.
pub(in crate::journal) fn explain_inspect(
    conn: &Tx,
    f: &InspectFilter,
) -> DbResult<Vec<(String, Vec<String>)>> {
    let d = conn.dialect();
    let q = inspect_sql(d, f);
    let params = q.params();
    let mut out = Vec::new();
    for (name, sql, args) in [
        ("count", &q.count, q.count_params(&params)),
        ("page", &q.page, &params[..]),
    ] {
        let lines = match d {
            Dialect::Sqlite => {
                let rows: Vec<(i64, i64, String)> =
                    conn.rows(&format!("EXPLAIN QUERY PLAN {sql}"), args, |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(3)?))
                    })?;
                let mut depth: HashMap<i64, usize> = HashMap::new();
                rows.into_iter()
                    .map(|(id, parent, detail)| {
                        let d = depth.get(&parent).map_or(0, |d| d + 1);
                        depth.insert(id, d);
                        format!("{}{detail}", "  ".repeat(d))
                    })
                    .collect()
            }
            Dialect::Postgres => conn.rows(&format!("EXPLAIN {sql}"), args, |r| r.get(0))?,
        };
        out.push((name.to_owned(), lines));
    }
    Ok(out)
}

/// Returns the latest attempt of every unresolved step that is not finished, optionally only
/// in some workflows, in delegation order.
pub(in crate::journal) fn unfinished(conn: &Tx, workflows: &[String]) -> DbResult<Vec<AttemptRow>> {
    let d = conn.dialect();
    conn.rows(
        &format!(
            "{} WHERE a.state IN ('INTENT', 'SENT', 'SUBMITTED', 'WORKING', 'INPUT_REQUIRED',
                     'AUTH_REQUIRED', 'UNKNOWN', 'UNCERTAIN')
               AND s.resolution IS NULL AND {IS_LATEST}
               AND (CAST(?1 AS TEXT) IS NULL OR w.name IN ({}))
             ORDER BY s.seq, a.number",
            row_select(d),
            json_items(d, "?1", false)
        ),
        args![workflows_filter(workflows)],
        row_from,
    )
}

/// Returns every workflow (in creation order, at most `limit`) with its steps counted by the
/// state of their latest attempt, how many of those need a human ([`PENDING_SQL`]) and how many
/// the operator resolved, and the total count of workflows.
pub(in crate::journal) fn workflow_summaries(
    conn: &Tx,
    limit: Option<u64>,
) -> DbResult<(Vec<WorkflowSummary>, u64)> {
    let total: i64 = conn.row("SELECT count(*) FROM workflows", args![], |r| r.get(0))?;
    let limit = limit.map_or(i64::MAX, |l| i64::try_from(l).unwrap_or(i64::MAX));
    let heads = conn.rows(
        "SELECT id, name, state, created_at, updated_at FROM workflows ORDER BY id LIMIT ?1",
        args![limit],
        |r| {
            Ok((
                r.get::<i64>(0)?,
                r.get::<String>(1)?,
                r.get::<String>(2)?,
                r.get::<i64>(3)?,
                r.get::<i64>(4)?,
            ))
        },
    )?;
    let counts = format!(
        "SELECT a.state, count(*),
                CAST(sum(CASE WHEN {PENDING_SQL} THEN 1 ELSE 0 END) AS BIGINT),
                CAST(sum(CASE WHEN s.resolution IS NOT NULL THEN 1 ELSE 0 END) AS BIGINT),
                max(a.updated_at), max({STATE_CHANGED_AT})
           FROM steps s
           JOIN workflows w ON w.id = s.workflow_id
           JOIN attempts a ON a.step_id = s.id AND {IS_LATEST}
          WHERE s.workflow_id = ?1
          GROUP BY a.state ORDER BY a.state"
    );
    let mut out = Vec::with_capacity(heads.len());
    for (id, name, state, created, updated) in heads {
        let mut summary = WorkflowSummary {
            name,
            state: state.parse().map_err(|e| DbError::conversion(2, e))?,
            steps: BTreeMap::new(),
            needs_human: 0,
            resolved: 0,
            created_at: time(created),
            updated_at: time(updated),
            state_changed_at: time(updated),
        };
        let rows = conn.rows(&counts, args![id], |r| {
            Ok((
                r.get::<String>(0)?,
                r.get::<i64>(1)?,
                r.get::<i64>(2)?,
                r.get::<i64>(3)?,
                r.get::<i64>(4)?,
                r.get::<i64>(5)?,
            ))
        })?;
        for (state, n, human, resolved, last, changed) in rows {
            let n = u64::try_from(n).unwrap_or_default();
            summary.steps.insert(state, n);
            summary.needs_human += u64::try_from(human).unwrap_or_default();
            summary.resolved += u64::try_from(resolved).unwrap_or_default();
            summary.updated_at = summary.updated_at.max(time(last));
            summary.state_changed_at = summary.state_changed_at.max(time(changed));
        }
        out.push(summary);
    }
    Ok((out, u64::try_from(total).unwrap_or_default()))
}

/// Returns whether a workflow exists.
pub(in crate::journal) fn workflow_exists(conn: &Tx, name: &str) -> DbResult<bool> {
    conn.row(
        "SELECT CASE WHEN EXISTS (SELECT 1 FROM workflows WHERE name = ?1) THEN 1 ELSE 0 END",
        args![name],
        |r| r.get(0),
    )
}

/// Returns how many latest attempts are in each state (`status`).
pub(in crate::journal) fn latest_state_counts(conn: &Tx) -> DbResult<Vec<(AttemptState, u64)>> {
    let sql =
        format!("SELECT a.state, COUNT(*) FROM attempts a WHERE {IS_LATEST} GROUP BY a.state");
    conn.rows(&sql, args![], |r| {
        Ok((
            parse_col::<AttemptState>(r, 0)?,
            r.get::<i64>(1)?.unsigned_abs(),
        ))
    })
}

/// A step, an attempt number, its state, when it was journaled and when its state last changed.
pub(in crate::journal) type Unfinished =
    (StepName, u32, AttemptState, DateTime<Utc>, DateTime<Utc>);

/// Returns the oldest latest attempt that is not finished, of a step without a decision
/// (`status`): its name, number, state and when it was journaled.
pub(in crate::journal) fn oldest_unfinished(conn: &Tx) -> DbResult<Option<Unfinished>> {
    let sql = format!(
        "SELECT w.name, s.name, a.number, a.state, a.created_at, {STATE_CHANGED_AT}
         FROM attempts a JOIN steps s ON s.id = a.step_id JOIN workflows w ON w.id = s.workflow_id
         WHERE {IS_LATEST} AND s.resolution IS NULL AND w.state <> 'COMPENSATED'
           AND a.state NOT IN ('COMPLETED', 'FAILED', 'CANCELED', 'REJECTED', 'REPLIED',
                               'REFUSED', 'LOST')
         ORDER BY a.created_at, a.id LIMIT 1"
    );
    conn.opt_row(&sql, args![], |r| {
        Ok((
            StepName::from_parts(r.get::<String>(0)?, r.get::<String>(1)?),
            r.get(2)?,
            parse_col::<AttemptState>(r, 3)?,
            time(r.get(4)?),
            time(r.get(5)?),
        ))
    })
}
