//! `inspect --watch`: the view kept up to date, as `kubectl get --watch` and `watch(1)` do.
//!
//! The journal is read again every `--interval` (default 2 s) on SQLite and PostgreSQL alike:
//! a poll, which needs nothing of the store and sees every writer, on any host. On a terminal
//! (human format) each read redraws the whole view under a line saying what is watched. On a
//! pipe, or with `--format json`, the view is printed once, then only what changed: each
//! attempt whose record differs from the one printed last (a new attempt, a new state, a
//! question, an error, an answer), as an `attempt` record in JSON or one line in text
//! (`TIME WORKFLOW/STEP #N: FROM → TO`). An attempt that leaves the list (a `--pending` step
//! answered) is printed once more as it now is. Ctrl-C ends it with 130, as every command
//! (nothing is written: `inspect` only reads).

use std::collections::BTreeMap;

use serde_json::Value;

use super::{InspectArgs, Query, show};
use crate::clock::rfc3339;
use crate::commands::util::records::{Chain, attempt_record};
use crate::context::Context;
use crate::journal::{self, AttemptRow, InspectFilter, Target};
use crate::sanitize::{LIST_LINES, inert, inert_lines};

/// Clears a terminal and puts the cursor at its top left (ECMA-48 `ED` 2 and `CUP`).
const CLEAR: &str = "\x1b[H\x1b[2J";

/// An attempt, as the watch keys what it printed.
type Key = (String, String, u32);

/// Runs `inspect --watch` until interrupted.
pub(super) async fn run(
    ctx: &Context,
    journal: &journal::Journal,
    args: &InspectArgs,
    query: &Query,
) -> anyhow::Result<u8> {
    let redraw = !ctx.out.is_json() && ctx.out.stdout_is_tty();
    let mut seen: BTreeMap<Key, Value> = BTreeMap::new();
    let mut first = true;
    loop {
        if redraw {
            ctx.out.raw(CLEAR.as_bytes())?;
            ctx.out.line(&format!(
                "every {:?}: {}  (Ctrl-C ends)",
                args.interval,
                rfc3339(ctx.display_clock.now())
            ))?;
            ctx.out.line("")?;
            show(ctx, journal, args, query)?;
        } else {
            let records = current(ctx, journal, args, query)?;
            if first {
                show(ctx, journal, args, query)?;
            } else {
                print_changes(ctx, journal, &seen, &records)?;
            }
            seen = records;
        }
        first = false;
        tokio::time::sleep(args.interval).await;
    }
}

/// The `attempt` record of every row the view lists now, by attempt.
fn current(
    ctx: &Context,
    journal: &journal::Journal,
    args: &InspectArgs,
    query: &Query,
) -> anyhow::Result<BTreeMap<Key, Value>> {
    let rows = journal
        .inspect(&query.filter(args, ctx.display_clock.now()))?
        .rows;
    records_of(journal, &rows)
}

fn records_of(
    journal: &journal::Journal,
    rows: &[AttemptRow],
) -> anyhow::Result<BTreeMap<Key, Value>> {
    let chain = Chain::of(journal, rows)?;
    Ok(rows
        .iter()
        .map(|r| {
            let key = (
                r.step.workflow.clone(),
                r.step.step.clone(),
                r.attempt.number,
            );
            (key, attempt_record(r, &chain))
        })
        .collect())
}

/// Prints each attempt whose record differs from the one printed last, and each that left the
/// list as it now is.
fn print_changes(
    ctx: &Context,
    journal: &journal::Journal,
    before: &BTreeMap<Key, Value>,
    now: &BTreeMap<Key, Value>,
) -> anyhow::Result<()> {
    for (key, record) in now {
        let old = before.get(key);
        if old != Some(record) {
            print_change(ctx, old, record)?;
        }
    }
    for (key, old) in before.iter().filter(|(k, _)| !now.contains_key(*k)) {
        if let Some(record) = reread(journal, key)? {
            print_change(ctx, Some(old), &record)?;
        }
    }
    Ok(())
}

/// The record of one attempt as it now is, whatever the view's filter.
fn reread(journal: &journal::Journal, key: &Key) -> anyhow::Result<Option<Value>> {
    let step = journal::StepName::from_parts(key.0.clone(), key.1.clone());
    let rows = journal
        .inspect(&InspectFilter {
            target: Some(Target::Step(step)),
            ..InspectFilter::default()
        })?
        .rows;
    Ok(records_of(journal, &rows)?.remove(key))
}

/// One changed attempt: its record in JSON, a line in text.
fn print_change(ctx: &Context, old: Option<&Value>, record: &Value) -> anyhow::Result<()> {
    if ctx.out.is_json() {
        ctx.out.record(record)?;
        return Ok(());
    }
    let text = |v: &Value, k: &str| v[k].as_str().unwrap_or_default().to_owned();
    let state = text(record, "state");
    let moved = match old {
        Some(old) if text(old, "state") != state => format!("{} → {state}", text(old, "state")),
        Some(_) => state,
        None => format!("new, {state}"),
    };
    let mut line = format!(
        "{} {}/{} #{}: {moved}",
        rfc3339(ctx.display_clock.now()),
        inert(&text(record, "workflow")),
        inert(&text(record, "step")),
        record["attempt"],
    );
    let said = text(record, "outcome");
    if !said.is_empty() {
        line.push_str(": ");
        line.push_str(&inert_lines(&said, "  ", Some(LIST_LINES)));
    }
    ctx.out.line(&line)?;
    Ok(())
}
