//! Issue 9 §1: a `reconcile` pass over N running tasks (bucket 2: one `GetTask` each), run as a
//! child process against the scripted agent in its own process, beside N bare `GetTask` calls
//! with reqwest at the same concurrency against the same agent; and the pass's peak RSS.
//!
//! The first pass finds every task moved from SUBMITTED (the send's answer) to WORKING and
//! journals N changes (group-committed); later passes find nothing changed and write nothing.

use std::time::Instant;

use anyhow::bail;
use serde_json::json;
use tokio::runtime::Runtime;

use crate::report::{Row, Table, Target, Value};
use crate::support::{
    Agent, Cfg, Run, bare_client, journal_bytes, median, median_ratio, rpc_many, run_child,
    running_attempts,
};

const CONCURRENCY: [usize; 3] = [1, 8, 32];
/// The goal of the first pass after a batch of sends, on either store (issue 36).
pub(crate) const FIRST_PASS_RATIO: f64 = 1.2;
/// The memory target at 100,000 rows (and below).
const MAX_RSS_KIB: u64 = 64 * 1024;

/// The row of a pass's peak RSS, beside the memory target.
pub(crate) fn peak_rss_row(section: &'static str, what: String, peak_kib: u64) -> Row {
    Row {
        section,
        what,
        figure: Value::Kib(peak_kib),
        floor: None,
        target: Some(Target::MaxKib(MAX_RSS_KIB)),
        paired: None,
    }
}

/// Runs one pass as a child process on `journal` (a file or a PostgreSQL URL) and checks it
/// visited every attempt.
pub(crate) fn pass(cfg: &Cfg, journal: &str, concurrency: usize, n: usize) -> anyhow::Result<Run> {
    let run = run_child(
        &cfg.bin,
        &[
            "--journal",
            journal,
            "reconcile",
            "--concurrency",
            &concurrency.to_string(),
            // One agent: its own limit is the pass's (as `--concurrency` was before issue 19).
            "--agent-concurrency",
            &concurrency.to_string(),
        ],
    )?;
    // The summary line (`-q` would print nothing: no human is needed).
    let expected = format!("{n} attempt(s) visited");
    // Attempts by how they ended, as the summary line counts them.
    let counts = format!(": {n} WORKING;");
    if run.code != 3 || !run.stdout.contains(&expected) || !run.stdout.contains(&counts) {
        bail!(
            "reconcile exited {} saying {:?}; expected exit 3, {expected:?} and {counts:?}",
            run.code,
            run.stdout
        );
    }
    Ok(run)
}

/// The journal sizes of the passes: 10,000 and 100,000 (quick: 1,000 and 5,000).
pub(crate) fn sizes(cfg: &Cfg) -> [usize; 2] {
    if cfg.quick {
        [1_000, 5_000]
    } else {
        [10_000, 100_000]
    }
}

/// Measures passes over 10,000 and 100,000 running tasks (quick: 1,000 and 5,000).
pub(crate) fn run(cfg: &Cfg, rt: &Runtime, table: &mut Table) -> anyhow::Result<()> {
    for n in sizes(cfg) {
        let agent = Agent::start(cfg, &[])?;
        let dir = cfg.tempdir()?;
        let path = dir.path().join("journal.sqlite3");
        let journal = path.display().to_string();
        let started = Instant::now();
        let task_ids = rt.block_on(running_attempts(&path, &agent.url, "bench", n))?;
        println!(
            "  (set-up: {n} running tasks sent and journaled in {:.1} s; agent RSS {:.0} MiB)",
            started.elapsed().as_secs_f64(),
            agent.rss_kib() as f64 / 1024.0
        );
        let params: Vec<serde_json::Value> = task_ids
            .iter()
            .map(|id| json!({"id": id, "historyLength": 0}))
            .collect();
        let http = bare_client();
        let floor = |c: usize| -> anyhow::Result<f64> {
            Ok(rt
                .block_on(rpc_many(&http, &agent.url, "GetTask", &params, c))?
                .as_secs_f64())
        };
        let mut peak = 0;

        let first = pass(cfg, &journal, 8, n)?;
        peak = peak.max(first.peak_rss_kib);
        let floor8 = floor(8)?;
        table.add(Row {
            section: "reconcile",
            what: format!("first pass, {n} tasks SUBMITTED→WORKING (N changes), c=8"),
            figure: Value::Secs(first.wall.as_secs_f64()),
            floor: Some((format!("{n} bare GetTask, c=8"), Value::Secs(floor8))),
            target: Some(Target::Ratio(FIRST_PASS_RATIO)),
            paired: Some(first.wall.as_secs_f64() / floor8),
        });

        let before = journal_bytes(&path);
        // At 100,000 and concurrency 1 a pass takes tens of seconds: once is enough there.
        let mut passes: Vec<Vec<f64>> = vec![Vec::new(); CONCURRENCY.len()];
        let mut floors: Vec<Vec<f64>> = vec![Vec::new(); CONCURRENCY.len()];
        for rep in 0..cfg.repeats() {
            for (k, &c) in CONCURRENCY.iter().enumerate() {
                if rep > 0 && c == 1 && n >= 100_000 {
                    continue;
                }
                floors[k].push(floor(c)?);
                let run = pass(cfg, &journal, c, n)?;
                peak = peak.max(run.peak_rss_kib);
                passes[k].push(run.wall.as_secs_f64());
            }
        }
        let written = journal_bytes(&path).saturating_sub(before);
        for (k, &c) in CONCURRENCY.iter().enumerate() {
            let runs = passes[k].len();
            table.add(Row {
                section: "reconcile",
                what: format!(
                    "unchanged pass, {n} running tasks, c={c} (median of {runs}; {written} B written)"
                ),
                figure: Value::Secs(median(passes[k].clone())),
                floor: Some((
                    format!("{n} bare GetTask, c={c}"),
                    Value::Secs(median(floors[k].clone())),
                )),
                target: (c >= 8).then_some(Target::Ratio(1.5)),
                paired: Some(median_ratio(
                    &passes[k]
                        .iter()
                        .copied()
                        .zip(floors[k].iter().copied())
                        .collect::<Vec<_>>(),
                )),
            });
        }
        table.add(peak_rss_row(
            "reconcile",
            format!("peak RSS of a pass over {n} rows (max of all passes)"),
            peak,
        ));
    }
    Ok(())
}
