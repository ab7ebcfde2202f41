//! Issue 9 §6: journal growth. Bytes per attempt (its step, the attempt row, its `intent` event
//! and their index entries), bytes per change event (a running task's newer status: the attempt
//! row updated in place, one event appended), and what an unchanged observation writes (nothing:
//! not one WAL frame). From those, a year of a 5-minute cron `reconcile` over 1,000 open
//! attempts.

use std::time::Duration;

use a2a_recover::journal::{AttemptId, Journal, Source, TaskView};
use anyhow::bail;
use serde_json::json;

use crate::report::{Row, Table, Value};
use crate::support::{Cfg, commit_intents, journal_bytes};

/// Passes of a 5-minute cron in a (365-day) year.
const PASSES_PER_YEAR: f64 = 365.0 * 24.0 * 12.0;
/// The open attempts the cron estimate is about.
const OPEN: f64 = 1_000.0;

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
        });
    }
    Ok(())
}
