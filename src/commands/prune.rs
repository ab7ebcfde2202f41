//! `prune`: deletes the journal's status refreshes older than an age, keeping everything a pass,
//! `compensate` or an operator needs (docs/journal.md "Pruning").
//!
//! Order: parse `--older-than` (a bad age exits 2); with no journal, say so and exit 0; take the
//! pass lock like `reconcile` (held by another pass: exit 3, nothing touched) and open the
//! journal; walk the events by id, [`PRUNE_BATCH`] ids per short transaction, yielding between
//! batches so SIGINT/SIGTERM stop it between two commits (every batch done stays done, and the
//! interrupted `summary` counts what they deleted); print a `summary` (JSON) or two lines. `--dry-run` opens the journal read-only, takes no lock and
//! counts what would go: it changes no byte.
//!
//! What goes and what stays is `journal::prune`'s module documentation. Freed pages stay in the
//! file and are reused by later writes; shrinking the file is `VACUUM`, which rewrites the whole
//! journal while holding it: not done here (docs/journal.md says when and how).

use std::time::Duration;

use chrono::TimeDelta;
use clap::Args;

use crate::duration::parse_age;
use serde_json::json;

use crate::clock::rfc3339;
use crate::context::Context;
use crate::exit;
use crate::journal::{PRUNE_BATCH, Storage};

/// Deletes status refreshes older than an age; keeps every state change, failure and decision.
///
/// A status refresh is an event recording a newer status of a task whose state did not change
/// (agents reporting progress). The newest event of each attempt, and everything any pass or
/// `compensate` reads, is kept. Freed space is reused by later writes; the file keeps its size.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  a2a-recover prune --older-than 30d --dry-run   count what would go
  a2a-recover prune --older-than 30d")]
pub struct PruneArgs {
    /// Only events older than this: `30d`, `2w`, `12h` (units ms, s, m, h, d, w).
    #[arg(long, value_name = "DURATION", value_parser = parse_age)]
    pub older_than: Duration,
    /// Counts what would be deleted and changes nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Answers yes to the question asked on a terminal (without a terminal nothing is asked).
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// What a prune did.
#[derive(Debug, Default)]
struct Pruned {
    /// Events deleted (or, dry run, that would be).
    deleted: u64,
    /// Transactions (dry run: read batches).
    batches: u64,
    /// Pages before and after.
    before: Option<Storage>,
    after: Option<Storage>,
}

/// Runs `prune`.
pub(crate) async fn run(ctx: &Context, args: &PruneArgs) -> anyhow::Result<u8> {
    let age = TimeDelta::from_std(args.older_than).unwrap_or(TimeDelta::MAX);
    let cutoff = ctx
        .clock
        .now()
        .checked_sub_signed(age)
        .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
    // A dry run writes nothing: no lock file, no migration. A held lock stops it before `begin`.
    ctx.require_journal()?;
    if !args.dry_run
        && !ctx.out.confirm(
            &[format!(
                "prune {}: delete the status refreshes older than {} (before {}); every state \
                 change, failure and decision is kept (`--dry-run` counts them)",
                ctx.journal,
                humanize(args.older_than),
                rfc3339(cutoff)
            )],
            args.yes,
        )
    {
        return Err(super::util::flags::declined().into());
    }
    let (journal, _lock) = ctx
        .open_journal_for_pass(args.dry_run, crate::recovery::lock::Scope::Journal)
        .await?;
    ctx.out.begin("prune")?;
    let mut pruned = Pruned::default();
    {
        pruned.before = Some(journal.storage()?);
        if let Some((lo, hi)) = journal.event_id_range()? {
            let mut from = lo;
            while from <= hi {
                let to = from.saturating_add(PRUNE_BATCH).min(hi.saturating_add(1));
                let n = journal.prune_events(cutoff, from, to, args.dry_run)?;
                pruned.deleted += n;
                pruned.batches += 1;
                if n > 0 {
                    // What a summary cut short by a signal reports (`lib::run_until_signal`).
                    ctx.out.count_outcome(outcome(args.dry_run), n);
                }
                from = to;
                // Between two commits: where SIGINT/SIGTERM may stop the command.
                tokio::task::yield_now().await;
            }
        }
        pruned.after = Some(journal.storage()?);
    }
    report(ctx, args, &rfc3339(cutoff), &pruned)?;
    Ok(exit::OK)
}

/// Prints the `summary` record, or the human lines.
fn report(ctx: &Context, args: &PruneArgs, cutoff: &str, p: &Pruned) -> anyhow::Result<()> {
    let freed = match (p.before, p.after) {
        (Some(b), Some(a)) if !args.dry_run => Some(a.free_bytes().saturating_sub(b.free_bytes())),
        _ => None,
    };
    if ctx.out.is_json() {
        let outcomes = if p.deleted > 0 {
            json!({ outcome(args.dry_run): p.deleted })
        } else {
            json!({})
        };
        ctx.out.record(&json!({
            "type": "summary",
            "command": "prune",
            "olderThan": humanize(args.older_than),
            "cutoff": cutoff,
            "outcomes": outcomes,
            "deleted": p.deleted,
            "batches": p.batches,
            "freedBytes": freed,
            "freeBytes": p.after.map(|s| s.free_bytes()),
            "fileBytes": p.after.map(|s| s.file_bytes()),
            "dryRun": args.dry_run,
            "exitCode": exit::OK,
        }))?;
        return Ok(());
    }
    let what = format!(
        "{} status refresh(es) older than {} (before {cutoff})",
        p.deleted,
        humanize(args.older_than)
    );
    let Some(after) = p.after else {
        ctx.out
            .line("prune: no journal here; nothing was ever delegated, nothing to prune.")?;
        return Ok(());
    };
    if args.dry_run {
        ctx.out.line(&format!(
            "prune (dry run, nothing changed): would delete {what}."
        ))?;
        return Ok(());
    }
    ctx.out.line(&format!("prune: deleted {what}."))?;
    ctx.out.line(&format!(
        "{} freed inside the journal ({} free in all), reused by later writes; the file keeps \
         its {} (to shrink it, see docs/journal.md \"Pruning\").",
        bytes(freed.unwrap_or_default()),
        bytes(after.free_bytes()),
        bytes(after.file_bytes())
    ))?;
    Ok(())
}

/// The summary's outcome: the events deleted, or in a dry run those that would be.
fn outcome(dry_run: bool) -> &'static str {
    if dry_run { "would-delete" } else { "deleted" }
}

/// Renders an age the way it is typed, in its largest whole unit (`30d`, `12h`, `1500ms`).
fn humanize(d: Duration) -> String {
    let ms = d.as_millis();
    for (unit, per) in [
        ("w", 604_800_000),
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1_000),
    ] {
        if ms >= per && ms.is_multiple_of(per) {
            return format!("{}{unit}", ms / per);
        }
    }
    format!("{ms}ms")
}

/// Renders a byte count for people (`1.2 MB`).
fn bytes(n: u64) -> String {
    #[expect(clippy::cast_precision_loss, reason = "a size shown with one decimal")]
    let x = n as f64;
    if n >= 1_000_000_000 {
        format!("{:.1} GB", x / 1e9)
    } else if n >= 1_000_000 {
        format!("{:.1} MB", x / 1e6)
    } else if n >= 1_000 {
        format!("{:.1} kB", x / 1e3)
    } else {
        format!("{n} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_print_in_their_largest_whole_unit() {
        assert_eq!(humanize(Duration::from_secs(30 * 86_400)), "30d");
        assert_eq!(humanize(Duration::from_secs(14 * 86_400)), "2w");
        assert_eq!(humanize(Duration::from_secs(90)), "90s");
        assert_eq!(humanize(Duration::from_millis(1_500)), "1500ms");
        assert_eq!(humanize(Duration::ZERO), "0ms");
    }
}
