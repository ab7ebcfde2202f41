//! Issue 9 §3: bucket-1 lookups. 1,000 `INTENT` attempts after a crash: each intent and its
//! endpoint journaled, its message sent straight to the agent (so a task exists) and the answer
//! never journaled. A `reconcile` child process then finds each one with `ListTasks` by its
//! contextId; the floor is the same number of bare `ListTasks` calls at the same concurrency.
//!
//! Then the same crash with intents that carry no contextId of ours (as for an agent that
//! refuses client context ids): each look lists the agent's tasks since the intent (minus the
//! clock skew) until it meets its messageId, so N lookups list O(N²) tasks. Measured at growing
//! N to show that growth; there is no floor (a bare client would list the same pages).

use std::path::Path;
use std::time::Duration;

use a2a_recover::journal::Journal;
use anyhow::bail;
use serde_json::json;
use tokio::runtime::Runtime;

use crate::report::{Row, Table, Value};
use crate::support::{
    Agent, Cfg, bare_client, commit_intents, median, median_ratio, rpc_many, run_child, send_all,
    set_endpoints,
};

const CONCURRENCY: usize = 8;

/// Measures the lookups of 1,000 intents (quick: 200).
pub(crate) fn run(cfg: &Cfg, rt: &Runtime, table: &mut Table) -> anyhow::Result<()> {
    let n = if cfg.quick { 200 } else { 1_000 };
    let agent = Agent::start(cfg, &[])?;
    let dir = cfg.tempdir()?;
    let pristine = dir.path().join("pristine.sqlite3");
    let contexts = {
        let journal = Journal::open(&pristine, Duration::from_secs(30))?;
        let attempts = commit_intents(&journal, "look", n, &agent.card(), "work:100", true)?;
        set_endpoints(&pristine, &agent.url)?;
        // The crash: the agent created every task, the journal learned none of them.
        rt.block_on(send_all(&agent.url, &attempts, "work:100"))?;
        attempts
            .iter()
            .filter_map(|a| a.context_id.clone())
            .collect::<Vec<_>>()
    };
    let params: Vec<serde_json::Value> = contexts
        .iter()
        .map(|c| json!({"contextId": c, "pageSize": 100, "includeArtifacts": true}))
        .collect();
    let http = bare_client();
    let journal = dir.path().join("journal.sqlite3");
    let mut passes = Vec::new();
    let mut floors = Vec::new();
    for _ in 0..cfg.repeats() {
        floors.push(
            rt.block_on(rpc_many(
                &http,
                &agent.url,
                "ListTasks",
                &params,
                CONCURRENCY,
            ))?
            .as_secs_f64(),
        );
        let _ = std::fs::remove_file(format!("{}-wal", journal.display()));
        let _ = std::fs::remove_file(format!("{}-shm", journal.display()));
        crate::support::copy_journal(&pristine, &journal)?;
        passes.push(reconcile_finding_all(cfg, &journal, n)?.as_secs_f64());
    }
    let pairs: Vec<(f64, f64)> = passes.iter().copied().zip(floors.iter().copied()).collect();
    let per = median(passes) / n as f64;
    table.add(Row {
        section: "lookup",
        what: format!(
            "bucket 1: {n} intents found by ListTasks(contextId) in one reconcile, c={CONCURRENCY}: time per lookup"
        ),
        figure: Value::Secs(per),
        floor: Some((
            format!("bare ListTasks(contextId), c={CONCURRENCY}"),
            Value::Secs(median(floors) / n as f64),
        )),
        target: None,
        paired: Some(median_ratio(&pairs)),
    });
    by_time(cfg, rt, table)
}

/// Measures lookups by time at growing sizes: time per lookup, which grows with N.
fn by_time(cfg: &Cfg, rt: &Runtime, table: &mut Table) -> anyhow::Result<()> {
    let sizes: &[usize] = if cfg.quick { &[50] } else { &[100, 300, 1_000] };
    for &n in sizes {
        let agent = Agent::start(cfg, &[])?;
        let dir = cfg.tempdir()?;
        let journal = dir.path().join("journal.sqlite3");
        {
            let j = Journal::open(&journal, Duration::from_secs(30))?;
            let attempts = commit_intents(&j, "time", n, &agent.card(), "work:100", false)?;
            set_endpoints(&journal, &agent.url)?;
            rt.block_on(send_all(&agent.url, &attempts, "work:100"))?;
        }
        let wall = reconcile_finding_all(cfg, &journal, n)?;
        table.add(Row {
            section: "lookup",
            what: format!(
                "bucket 1 by time (no contextId of ours): {n} intents found by ListTasks(statusTimestampAfter) in one reconcile, c={CONCURRENCY}: time per lookup (once)"
            ),
            figure: Value::Secs(wall.as_secs_f64() / n as f64),
            floor: None,
            target: None,
            paired: None,
        });
    }
    Ok(())
}

/// Runs one `reconcile` child process over `journal`; checks that it found all `n` tasks and
/// returns its wall time.
fn reconcile_finding_all(cfg: &Cfg, journal: &Path, n: usize) -> anyhow::Result<Duration> {
    let run = run_child(
        &cfg.bin,
        &[
            "--journal",
            &journal.display().to_string(),
            "-q",
            "reconcile",
            "--concurrency",
            &CONCURRENCY.to_string(),
        ],
    )?;
    let found: i64 = rusqlite::Connection::open(journal)?.query_row(
        "SELECT count(*) FROM attempts WHERE task_id IS NOT NULL",
        [],
        |r| r.get(0),
    )?;
    if found != n as i64 {
        bail!(
            "reconcile exited {} and found {found} of {n} tasks: {:?}",
            run.code,
            run.stdout
        );
    }
    Ok(run.wall)
}
