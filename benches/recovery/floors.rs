//! The machine's durable-write floors: SQLite commits in WAL mode with `synchronous=FULL`, on
//! the disk the journals of this run live on, with nothing of a2a-recover in the way.

use std::time::Instant;

use rusqlite::Connection;

use crate::report::{Row, Table, Value};
use crate::support::{Cfg, median};

/// Commit rates measured here, for other sections' floors.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Commits {
    /// Single-row durable commits per second.
    pub(crate) single: f64,
    /// Rows per second committed 100 to a transaction.
    pub(crate) batched_rows: f64,
}

pub(crate) fn open(path: &std::path::Path) -> anyhow::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, at INTEGER NOT NULL, v TEXT NOT NULL)",
    )?;
    Ok(conn)
}

/// Commits `txns` transactions of `rows` rows each; returns rows per second.
pub(crate) fn commit_rate(conn: &Connection, txns: usize, rows: usize) -> anyhow::Result<f64> {
    let payload = "x".repeat(200);
    let mut insert = conn.prepare("INSERT INTO t (at, v) VALUES (?1, ?2)")?;
    let started = Instant::now();
    for i in 0..txns {
        conn.execute_batch("BEGIN IMMEDIATE")?;
        for r in 0..rows {
            insert.execute(rusqlite::params![(i * rows + r) as i64, payload])?;
        }
        conn.execute_batch("COMMIT")?;
    }
    Ok((txns * rows) as f64 / started.elapsed().as_secs_f64())
}

/// Measures both commit floors.
pub(crate) fn run(cfg: &Cfg, table: &mut Table) -> anyhow::Result<Commits> {
    let dir = cfg.tempdir()?;
    let conn = open(&dir.path().join("floor.sqlite3"))?;
    let singles = if cfg.quick { 300 } else { 2_000 };
    let batches = if cfg.quick { 30 } else { 200 };
    let mut single = Vec::new();
    let mut batched = Vec::new();
    for _ in 0..cfg.repeats() {
        single.push(commit_rate(&conn, singles, 1)?);
        batched.push(commit_rate(&conn, batches, 100)?);
    }
    let commits = Commits {
        single: median(single),
        batched_rows: median(batched),
    };
    table.add(Row {
        section: "floor",
        what: format!("durable single-row commits (WAL, synchronous=FULL), {singles} in a row"),
        figure: Value::Rate(commits.single, "commits"),
        floor: None,
        target: None,
        paired: None,
    });
    table.add(Row {
        section: "floor",
        what: format!("durable commits of 100 rows, {batches} in a row"),
        figure: Value::Rate(commits.batched_rows, "rows"),
        floor: None,
        target: None,
        paired: None,
    });
    Ok(commits)
}
