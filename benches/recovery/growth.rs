//! Issue 9 §6: journal growth. Bytes per attempt (its step, the attempt row, its `intent` event
//! and their index entries), bytes per change event (a running task's newer status: the attempt
//! row updated in place, one event appended), and what an unchanged observation writes (nothing:
//! not one WAL frame). From those, a year of a 5-minute cron `reconcile` over 1,000 open
//! attempts.
//!
//! Then pruning: a year of the worst case (every running task reports a newer status every
//! pass) scaled down in passes, not in attempts: 1,000 running attempts (quick: 200) refreshed
//! once per simulated day for 365 days (event times moved to their day, the last one today),
//! then `a2a-recover prune --older-than 30d` run as a child process, then a month more of
//! refreshes to see whether the freed pages are reused. A cron pass every 5 minutes makes 288
//! refreshes a day instead of one: the full-scale figures are the measured bytes per refresh
//! times 288 × 1,000 per day.

use std::time::Duration;

use a2a_recover::a2a::TaskView;
use a2a_recover::journal::{AttemptId, Journal, Source};
use anyhow::bail;
use serde_json::json;

use crate::report::{Row, Table, Value};
use crate::support::{Cfg, commit_intents, journal_bytes, run_child};

/// Passes of a 5-minute cron in a (365-day) year.
const PASSES_PER_YEAR: f64 = 365.0 * 24.0 * 12.0;
/// The open attempts the cron estimate is about.
const OPEN: f64 = 1_000.0;
/// Milliseconds in a day.
const DAY_MS: i64 = 86_400_000;
/// The age `prune` keeps, in days, and how often it runs (weekly), for the plateau estimate.
const KEEP_DAYS: f64 = 30.0;
const PRUNE_EVERY_DAYS: f64 = 7.0;

fn checkpoint(path: &std::path::Path) -> anyhow::Result<u64> {
    let conn = rusqlite::Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(30))?;
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
    drop(conn);
    Ok(journal_bytes(path))
}

/// A WORKING task snapshot of attempt `i` at status time `round`.
fn working(i: usize, context: &str, round: usize) -> anyhow::Result<TaskView> {
    let ts = chrono::DateTime::from_timestamp_micros(1_800_000_000_000_000 + round as i64 * 1_000)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let task = json!({"id": format!("task-{i:08}"), "contextId": context,
                      "status": {"state": "TASK_STATE_WORKING", "timestamp": ts,
                                 "message": {"messageId": format!("p-{i}-{round}"), "role": "ROLE_AGENT",
                                             "parts": [{"text": format!("{round}0 % done")}]}}});
    Ok(TaskView::from_value(&task, task.to_string())?)
}

/// Measures the growth of a journal of 10,000 attempts (quick: 2,000).
pub(crate) fn run(cfg: &Cfg, table: &mut Table) -> anyhow::Result<()> {
    let n = if cfg.quick { 2_000 } else { 10_000 };
    let rounds = 5;
    let dir = cfg.tempdir()?;
    let path = dir.path().join("journal.sqlite3");
    let journal = Journal::open(&path, Duration::from_secs(30))?;
    let empty = checkpoint(&path)?;
    let card = "http://127.0.0.1:9/.well-known/agent-card.json";
    let attempts = commit_intents(&journal, "grow", n, card, "work:100", true)?;
    let with_intents = checkpoint(&path)?;
    let per_attempt = (with_intents - empty) as f64 / n as f64;

    let views = |round: usize| -> anyhow::Result<Vec<(AttemptId, TaskView)>> {
        attempts
            .iter()
            .enumerate()
            .map(|(i, a)| {
                Ok((
                    a.id,
                    working(i, a.context_id.as_deref().unwrap_or("c"), round)?,
                ))
            })
            .collect()
    };
    // Round 0 records each task id and its first snapshot (the row grows); later rounds are
    // newer statuses of the same size: the row is rewritten in place, one event is appended.
    for chunk in views(0)?.chunks(1_000) {
        journal.apply_tasks(chunk, Source::GetTask)?;
    }
    let after_first = checkpoint(&path)?;
    let events_before = journal.event_count()?;
    for round in 1..=rounds {
        for chunk in views(round)?.chunks(1_000) {
            journal.apply_tasks(chunk, Source::GetTask)?;
        }
    }
    let events = journal.event_count()? - events_before;
    let after_changes = checkpoint(&path)?;
    if events != (n * rounds) as i64 {
        bail!("{events} events for {} changes", n * rounds);
    }
    let per_event = (after_changes - after_first) as f64 / events as f64;

    // The same observations again: nothing changes, nothing is written (not even to the WAL).
    let before = journal_bytes(&path);
    for chunk in views(rounds)?.chunks(1_000) {
        let applied = journal.apply_tasks(chunk, Source::GetTask)?;
        if applied.iter().any(|a| a.changed()) {
            bail!("an unchanged observation changed something");
        }
    }
    let unchanged = journal_bytes(&path).saturating_sub(before);

    let rows = [
        (
            format!("bytes per attempt (step + attempt + intent event + indexes), {n} attempts"),
            per_attempt,
        ),
        (
            format!("bytes per change event (newer status of a running task), {events} events"),
            per_event,
        ),
        (
            format!("bytes written by an unchanged observation of {n} running attempts"),
            unchanged as f64,
        ),
        (
            "a year of 5-min cron over 1,000 open attempts, unchanged between passes".to_owned(),
            unchanged as f64 / n as f64 * OPEN * PASSES_PER_YEAR,
        ),
        (
            "a year of 5-min cron over 1,000 open attempts, every status newer every pass \
             (worst case)"
                .to_owned(),
            per_event * OPEN * PASSES_PER_YEAR,
        ),
        (
            "a year of 1,000 open attempts turning over daily (365,000 attempts, 5 events each)"
                .to_owned(),
            OPEN * 365.0 * (per_attempt + 4.0 * per_event),
        ),
    ];
    for (what, bytes) in rows {
        table.add(Row {
            section: "growth",
            what,
            figure: Value::Bytes(bytes),
            floor: None,
            target: None,
            paired: None,
        });
    }
    prune_a_year(cfg, table, per_event)
}

/// The `summary` record of a `prune --format json` child.
fn prune_summary(cfg: &Cfg, path: &std::path::Path) -> anyhow::Result<(serde_json::Value, f64)> {
    let journal = path.display().to_string();
    let run = run_child(
        &cfg.bin,
        &[
            "--journal",
            &journal,
            "--format",
            "json",
            "prune",
            "--older-than",
            "30d",
        ],
    )?;
    if run.code != 0 {
        bail!("prune exited {}", run.code);
    }
    let last = run.stdout.lines().last().unwrap_or_default();
    Ok((serde_json::from_str(last)?, run.wall.as_secs_f64()))
}

/// Simulates a year of daily refreshes of running attempts, prunes it, and goes on a month.
#[expect(
    clippy::too_many_lines,
    reason = "a measurement script: a year simulated, pruned, then a month on"
)]
fn prune_a_year(cfg: &Cfg, table: &mut Table, per_event: f64) -> anyhow::Result<()> {
    let n = if cfg.quick { 200 } else { 1_000 };
    let days = 365;
    let dir = cfg.tempdir()?;
    let path = dir.path().join("journal.sqlite3");
    let journal = Journal::open(&path, Duration::from_secs(30))?;
    let card = "http://127.0.0.1:9/.well-known/agent-card.json";
    let attempts = commit_intents(&journal, "year", n, card, "work:100", true)?;
    let conn = rusqlite::Connection::open(&path)?;
    conn.busy_timeout(Duration::from_secs(30))?;
    let today = a2a_recover::clock::system_now().timestamp_millis();
    // Day `d` of the simulated year (0 = a year ago); later days continue past today.
    let refresh = |d: i64| -> anyhow::Result<()> {
        let first: i64 =
            conn.query_row("SELECT COALESCE(max(id), 0) FROM events", [], |r| r.get(0))?;
        let views = attempts
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let round = usize::try_from(d).unwrap_or_default();
                Ok((
                    a.id,
                    working(i, a.context_id.as_deref().unwrap_or("c"), round)?,
                ))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        for chunk in views.chunks(1_000) {
            journal.apply_tasks(chunk, Source::GetTask)?;
        }
        conn.execute(
            "UPDATE events SET at = ?1 WHERE id > ?2",
            rusqlite::params![today - (days - d) * DAY_MS, first],
        )?;
        Ok(())
    };
    let started = std::time::Instant::now();
    for d in 0..=days {
        refresh(d)?;
    }
    let refreshes = journal.event_count()?;
    let year_bytes = checkpoint(&path)?;
    println!(
        "  (a simulated year: {n} running attempts refreshed daily, {refreshes} events, {:.0} MB, \
         written in {:.1} s)",
        year_bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    let (summary, wall) = prune_summary(cfg, &path)?;
    let deleted = summary["deleted"].as_u64().unwrap_or_default();
    let freed = summary["freedBytes"].as_u64().unwrap_or_default();
    let free = summary["freeBytes"].as_u64().unwrap_or_default();
    let file = summary["fileBytes"].as_u64().unwrap_or_default();
    let pruned_file = checkpoint(&path)?;
    // A month more of refreshes: do they reuse the freed pages?
    for d in days + 1..=days + 30 {
        refresh(d)?;
    }
    let month_later = checkpoint(&path)?;
    println!(
        "  (prune --older-than 30d: {deleted} of {refreshes} events deleted in {wall:.2} s; \
         {freed} bytes freed; file {file} bytes, {free} free; a month later {month_later} bytes)"
    );
    let per_day_full = 288.0 * OPEN * per_event;
    let rows = [
        (
            format!(
                "a simulated year: {n} running attempts, a refresh a day each ({refreshes} events)"
            ),
            Value::Bytes(year_bytes as f64),
        ),
        (
            format!("… `prune --older-than 30d` deleted {deleted} events: pages freed"),
            Value::Bytes(freed as f64),
        ),
        (
            "… freed per deleted event".to_owned(),
            Value::Bytes(freed as f64 / deleted.max(1) as f64),
        ),
        (
            "… live bytes after the prune (file minus free pages)".to_owned(),
            Value::Bytes(file.saturating_sub(free) as f64),
        ),
        (
            "… the file after the prune (free pages stay in it)".to_owned(),
            Value::Bytes(pruned_file as f64),
        ),
        (
            "… the file after 30 more days of refreshes (reusing free pages)".to_owned(),
            Value::Bytes(month_later as f64),
        ),
        (
            format!("… the prune's wall time ({deleted} deletions)"),
            Value::Secs(wall),
        ),
        (
            "worst case at full scale (1,000 attempts, 288 refreshes a day): one day".to_owned(),
            Value::Bytes(per_day_full),
        ),
        (
            "… the file's plateau with a weekly `prune --older-than 30d` (37 days of refreshes)"
                .to_owned(),
            Value::Bytes(per_day_full * (KEEP_DAYS + PRUNE_EVERY_DAYS)),
        ),
        (
            "… the file's plateau with a daily `prune --older-than 7d` (8 days)".to_owned(),
            Value::Bytes(per_day_full * 8.0),
        ),
    ];
    for (what, figure) in rows {
        table.add(Row {
            section: "growth",
            what,
            figure,
            floor: None,
            target: None,
            paired: None,
        });
    }
    Ok(())
}
