//! Issue 20: `reconcile` passes on a PostgreSQL journal beside the same passes on SQLite, in
//! one run, against the same agent.
//!
//! N running tasks are journaled in a SQLite file as the `reconcile` section does; before any
//! pass a copy of that file is moved into a fresh schema with `journal copy` (verified row by
//! row, its tables analyzed), so both journals hold the same rows. Then the first pass over
//! each (N changes journaled), and unchanged passes (nothing written) taken in turn on each
//! store. The ratio is PostgreSQL's time over SQLite's, the median of the ratios of passes run
//! back to back.

use std::path::Path;
use std::time::Instant;

use anyhow::bail;
use tokio::runtime::Runtime;

use crate::floors;
use crate::pg::{PgServer, Schema};
use crate::reconcile::{FIRST_PASS_RATIO, pass, peak_rss_row, sizes};
use crate::report::{Row, Table, Target, Value};
use crate::support::{
    Agent, Cfg, Run, bare_client, median, median_ratio, rpc_many, run_child, running_attempts,
};

/// Attempts in flight (`--concurrency` and `--agent-concurrency`).
const C: usize = 8;
/// The goal: an unchanged pass on PostgreSQL within 2× SQLite's.
const MAX_RATIO: f64 = 2.0;

/// Copies the SQLite journal `path` into a fresh schema with `journal copy` (which marks its
/// source moved: it copies a copy of the file, `NAME.sqlite3` beside it).
fn copy_in<'a>(
    cfg: &Cfg,
    pg: &'a PgServer,
    path: &Path,
    name: &str,
) -> anyhow::Result<(Schema<'a>, Run)> {
    let source = path.with_file_name(format!("{name}.sqlite3"));
    crate::support::copy_journal(path, &source)?;
    let schema = pg.schema();
    let copy = run_child(
        &cfg.bin,
        &[
            "journal",
            "copy",
            "--from",
            &source.display().to_string(),
            "--to",
            &schema.url(),
        ],
    )?;
    if copy.code != 0 {
        bail!("journal copy exited {}: {}", copy.code, copy.stdout);
    }
    Ok((schema, copy))
}

/// Seconds of one bare `GetTask` of each of `task_ids`, at the passes' concurrency.
fn bare_get_tasks(rt: &Runtime, agent: &Agent, task_ids: &[String]) -> anyhow::Result<f64> {
    let params: Vec<serde_json::Value> = task_ids
        .iter()
        .map(|id| serde_json::json!({"id": id, "historyLength": 0}))
        .collect();
    Ok(rt
        .block_on(rpc_many(&bare_client(), &agent.url, "GetTask", &params, C))?
        .as_secs_f64())
}

/// Measures durable single-row commits on PostgreSQL beside SQLite's (WAL, `synchronous=FULL`)
/// on the disk of this run's journals: every send of a pass commits before and after it.
fn commit_floors(cfg: &Cfg, pg: &PgServer, table: &mut Table) -> anyhow::Result<()> {
    let n = if cfg.quick { 300 } else { 2_000 };
    let dir = cfg.tempdir()?;
    let conn = floors::open(&dir.path().join("floor.sqlite3"))?;
    let mut pairs = Vec::new();
    for _ in 0..cfg.repeats() {
        let on_pg = pg.commit_rate(n)?;
        pairs.push((floors::commit_rate(&conn, n, 1)?, on_pg));
    }
    table.add(Row {
        section: "postgres",
        what: format!(
            "durable single-row commits on PostgreSQL (synchronous_commit on), {n} in a row"
        ),
        figure: Value::Rate(median(pairs.iter().map(|p| p.1).collect()), "commits"),
        floor: Some((
            "the same on SQLite (WAL, synchronous=FULL)".to_owned(),
            Value::Rate(median(pairs.iter().map(|p| p.0).collect()), "commits"),
        )),
        target: None,
        // Cost ratios: SQLite's rate over PostgreSQL's.
        paired: Some(median_ratio(&pairs)),
    });
    Ok(())
}

/// Measures passes over 10,000 and 100,000 running tasks (quick: 1,000 and 5,000) on both
/// stores.
pub(crate) fn run(cfg: &Cfg, rt: &Runtime, pg: &PgServer, table: &mut Table) -> anyhow::Result<()> {
    commit_floors(cfg, pg, table)?;
    for n in sizes(cfg) {
        let agent = Agent::start(cfg, &[])?;
        let dir = cfg.tempdir()?;
        let path = dir.path().join("journal.sqlite3");
        let started = Instant::now();
        let task_ids = rt.block_on(running_attempts(&path, &agent.url, "bench", n))?;
        let sent = started.elapsed();
        let (schema, copy) = copy_in(cfg, pg, &path, "source")?;
        let url = schema.url();
        println!(
            "  (set-up: {n} running tasks sent and journaled in {:.1} s, copied into PostgreSQL \
             in {:.1} s)",
            sent.as_secs_f64(),
            copy.wall.as_secs_f64()
        );
        table.add(Row {
            section: "postgres",
            what: format!("journal copy of {n} running attempts, SQLite → PostgreSQL (once)"),
            figure: Value::Secs(copy.wall.as_secs_f64()),
            floor: None,
            target: None,
            paired: None,
        });

        let lite = path.display().to_string();
        let lite_first = pass(cfg, &lite, C, n)?;
        let pg_first = pass(cfg, &url, C, n)?;
        let floor = bare_get_tasks(rt, &agent, &task_ids)?;
        let mut peak = pg_first.peak_rss_kib;
        table.add(Row {
            section: "postgres",
            what: format!(
                "first pass on PostgreSQL, {n} tasks SUBMITTED→WORKING (N changes), c={C}, \
                 beside the wire's floor"
            ),
            figure: Value::Secs(pg_first.wall.as_secs_f64()),
            floor: Some((format!("{n} bare GetTask, c={C}"), Value::Secs(floor))),
            target: Some(Target::Ratio(FIRST_PASS_RATIO)),
            paired: None,
        });
        table.add(Row {
            section: "postgres",
            what: format!(
                "first pass on PostgreSQL, {n} tasks SUBMITTED→WORKING (N changes), c={C}"
            ),
            figure: Value::Secs(pg_first.wall.as_secs_f64()),
            floor: Some((
                "the same on SQLite".to_owned(),
                Value::Secs(lite_first.wall.as_secs_f64()),
            )),
            target: None,
            paired: None,
        });

        // Unchanged passes, each store first in turn.
        let mut pairs = Vec::new();
        for rep in 0..cfg.repeats() {
            let (pg_run, lite_run) = if rep % 2 == 0 {
                let l = pass(cfg, &lite, C, n)?;
                (pass(cfg, &url, C, n)?, l)
            } else {
                let p = pass(cfg, &url, C, n)?;
                (p, pass(cfg, &lite, C, n)?)
            };
            peak = peak.max(pg_run.peak_rss_kib);
            pairs.push((pg_run.wall.as_secs_f64(), lite_run.wall.as_secs_f64()));
        }
        let runs = pairs.len();
        let lite_median = median(pairs.iter().map(|p| p.1).collect());
        table.add(Row {
            section: "postgres",
            what: format!(
                "unchanged pass on PostgreSQL, {n} running tasks, c={C} (median of {runs})"
            ),
            figure: Value::Secs(median(pairs.iter().map(|p| p.0).collect())),
            floor: Some((
                format!("the same on SQLite (median of {runs})"),
                Value::Secs(lite_median),
            )),
            target: Some(Target::Ratio(MAX_RATIO)),
            paired: Some(median_ratio(&pairs)),
        });

        table.add(peak_rss_row(
            "postgres",
            format!("peak RSS of a pass on PostgreSQL over {n} rows (max of all passes)"),
            peak,
        ));
    }
    Ok(())
}
