//! `reconcile`: one recovery pass over every unfinished attempt (DESIGN.md §3 `reconcile`, §4).
//!
//! Order: validate the flags; take the pass lock (`JOURNAL.lock`, non-blocking: a held lock
//! exits 3 naming its owner and touching nothing); open the journal; refuse unknown workflows
//! (exit 2); run the pass (`recovery::Pass`), printing `action` records (JSON) or the lines a
//! human must act on, then a `summary`. A `--dry-run` takes no lock and opens the journal
//! read-only: it reads agents but writes and sends nothing.

use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use serde_json::json;

use crate::a2a::{A2aClient, ClientConfig};
use crate::cli::parse_duration;
use crate::clock::rfc3339;
use crate::context::Context;
use crate::error::CliError;
use crate::exit;
use crate::journal::{self, Journal, check_name_part};
use crate::output::inert;
use crate::recovery::lock::{self, LockError};
use crate::recovery::{Action, Pass, PassConfig, Summary, send};

/// Runs one recovery pass over every unfinished attempt.
///
/// Looks before it resends, re-reads every non-terminal task, saves pending questions, records
/// outcomes and re-delegates failed steps within their budget. Never compensates on its own.
#[derive(Debug, Args)]
pub struct ReconcileArgs {
    /// Only these workflows (default: all).
    #[arg(value_name = "WORKFLOW")]
    pub workflows: Vec<String>,
    /// Requests in flight at once, overall and per agent.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub concurrency: u32,
    /// Reattaches to running tasks and follows them for up to this long.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub follow_for: Option<Duration>,
    /// Ends the pass cleanly after this long (exit 3).
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub deadline: Duration,
    /// Prints the actions it would take and changes nothing, locally or remotely.
    #[arg(long)]
    pub dry_run: bool,
    /// How far the agent's clock may be behind ours when searching by time.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub clock_skew: Duration,
    /// Timeout for verification commands.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub command_timeout: Duration,
}

fn validate(args: &ReconcileArgs) -> Result<(), CliError> {
    if args.follow_for.is_some() {
        return Err(CliError::usage("--follow-for is not supported yet").hint(
            "run `a2a-recover follow STEP` for a task you want to watch; reconcile reads each \
             task once per pass",
        ));
    }
    for w in &args.workflows {
        if let Err(reason) = check_name_part(w) {
            return Err(
                CliError::usage(format!("bad workflow name `{}`: {reason}", inert(w)))
                    .hint("give workflow names, e.g. `trip-42`, or none for all"),
            );
        }
    }
    Ok(())
}

fn unknown_workflow(name: &str) -> CliError {
    CliError::usage(format!("unknown workflow `{}`", inert(name)))
        .hint("list the journaled workflows with `a2a-recover inspect`")
}

/// Runs `reconcile`.
pub(crate) async fn run(ctx: &Context, args: &ReconcileArgs) -> anyhow::Result<u8> {
    validate(args)?;
    if !journal::exists(&ctx.journal_path) {
        // No journal: nothing was ever delegated. Create nothing.
        if let Some(w) = args.workflows.first() {
            return Err(unknown_workflow(w).into());
        }
        ctx.out.begin("reconcile")?;
        return finish(ctx, args, &Summary::default());
    }
    let (_lock, journal) = if args.dry_run {
        let j = Journal::open_read_only(&ctx.journal_path, ctx.timeout).with_context(|| {
            format!(
                "failed to open the journal at `{}` read-only",
                ctx.journal_path.display()
            )
        })?;
        (None, j)
    } else {
        let started = rfc3339(ctx.clock.now());
        let lock = match lock::acquire(&ctx.journal_path, std::process::id(), &started) {
            Ok(lock) => lock,
            Err(LockError::Held { path, owner }) => {
                return Err(CliError::with_code(
                    exit::WORK_REMAINS,
                    format!("another pass ({owner}) holds the journal lock"),
                )
                .hint(format!(
                    "nothing was touched; run again when it is done (lock file `{}`)",
                    path.display()
                ))
                .into());
            }
            Err(e) => return Err(e.into()),
        };
        (Some(lock), journal::open_for_command(ctx)?)
    };
    for w in &args.workflows {
        if !journal.workflow_exists(w)? {
            return Err(unknown_workflow(w).into());
        }
    }
    let client = A2aClient::new(ClientConfig::from_context(ctx))
        .context("failed to set up the HTTP client")?;
    ctx.out.begin("reconcile")?;
    let pass = Pass::new(
        &journal,
        &client,
        ctx.clock.as_ref(),
        PassConfig {
            workflows: args.workflows.clone(),
            concurrency: args.concurrency as usize,
            deadline: args.deadline,
            dry_run: args.dry_run,
            clock_skew: args.clock_skew,
            lease_ttl: send::lease_ttl_for(ctx.timeout),
            command_timeout: args.command_timeout,
        },
    );
    let bar = ctx.out.progress_allowed().then(|| {
        let bar =
            indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{spinner} reconcile {pos}/{len} {wide_bar}")
        {
            bar.set_style(style);
        }
        bar
    });
    let summary = pass
        .run(
            |total| {
                if let Some(b) = &bar {
                    b.set_length(total as u64);
                }
            },
            |action| print_action(ctx, bar.as_ref(), action),
            || {
                if let Some(b) = &bar {
                    b.inc(1);
                }
            },
        )
        .await?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    finish(ctx, args, &summary)
}

fn print_action(
    ctx: &Context,
    bar: Option<&indicatif::ProgressBar>,
    a: &Action,
) -> anyhow::Result<()> {
    if ctx.out.is_json() {
        ctx.out.record(&json!({
            "type": "action",
            "workflow": a.workflow,
            "step": a.step,
            "attempt": a.attempt,
            "action": a.action,
            "outcome": a.outcome,
            "detail": a.detail,
            "remedy": a.remedy.as_ref().map(|r| json!({"what": r.what, "command": r.command})),
        }))?;
        return Ok(());
    }
    let line = match &a.remedy {
        Some(remedy) if a.code == exit::NEEDS_HUMAN || a.code == exit::USAGE => {
            format!(
                "{}/{} (attempt {}): {remedy}",
                a.workflow, a.step, a.attempt
            )
        }
        _ => {
            // A failure this pass (unreachable, garbage: 3; over the size cap: 4) is one line
            // naming the step and the error, then what to do about it.
            if matches!(a.code, exit::WORK_REMAINS | exit::NEEDS_HUMAN)
                && let Some(err) = a.detail.get("error").and_then(|e| e.as_str())
            {
                let mut text = format!(
                    "{}/{} (attempt {}): {} {}: {}",
                    a.workflow,
                    a.step,
                    a.attempt,
                    a.action,
                    a.outcome,
                    inert(err)
                );
                if let Some(hint) = a.detail.get("hint").and_then(|h| h.as_str()) {
                    text.push_str("\n  hint: ");
                    text.push_str(&inert(hint));
                }
                match bar {
                    Some(b) => b.suspend(|| ctx.out.status(&text)),
                    None => ctx.out.status(&text),
                }
            }
            return Ok(());
        }
    };
    match bar {
        Some(b) => b.suspend(|| ctx.out.line(&line))?,
        None => ctx.out.line(&line)?,
    }
    Ok(())
}

fn finish(ctx: &Context, args: &ReconcileArgs, summary: &Summary) -> anyhow::Result<u8> {
    let code = summary.code;
    if ctx.out.is_json() {
        ctx.out.record(&json!({
            "type": "summary",
            "command": "reconcile",
            "outcomes": summary.outcomes,
            "visited": summary.visited,
            "unvisited": summary.unvisited,
            "dryRun": args.dry_run,
            "compensate": summary.compensate,
            "exitCode": code,
        }))?;
        return Ok(code);
    }
    for w in &summary.compensate {
        ctx.out.line(&format!(
            "workflow {w} has a step that failed for good; to undo what its steps did, run \
             `a2a-recover compensate {w}`"
        ))?;
    }
    let counts = if summary.outcomes.is_empty() {
        "nothing to do".to_owned()
    } else {
        summary
            .outcomes
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let verdict = match code {
        exit::OK => "done".to_owned(),
        exit::WORK_REMAINS => "work remains; run again later (exit 3)".to_owned(),
        exit::NEEDS_HUMAN => {
            "a human must act; see `a2a-recover inspect --pending` (exit 4)".to_owned()
        }
        other => format!("exit {other}"),
    };
    let prefix = if args.dry_run {
        "reconcile (dry run, nothing changed)"
    } else {
        "reconcile"
    };
    ctx.out.line(&format!(
        "{prefix}: {} attempt(s): {counts}; {verdict}.",
        summary.visited
    ))?;
    if summary.unvisited > 0 {
        ctx.out.line(&format!(
            "the deadline ended the pass with {} attempt(s) not visited; run again.",
            summary.unvisited
        ))?;
    }
    Ok(code)
}
