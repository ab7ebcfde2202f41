//! `compensate`: the saga's undo, in reverse order of delegation.
//!
//! This file parses the flags, takes the journal lock, and prints the `begin` and `summary`
//! records; the pass itself is `recovery::compensate`. `--dry-run` opens the journal read-only,
//! takes no lock, sends and runs nothing, and prints what a real run would do.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use serde_json::json;

use crate::a2a::A2aClient;
use crate::commands::report::compensated;
use crate::context::Context;
use crate::duration::parse_duration;
use crate::error::CliError;
use crate::journal::{DEFAULT_WORKFLOW, WorkflowState, check_name_part};
use crate::output::{BrokenPipe, Printer};
use crate::recovery::compensate::{self, Options};
use crate::recovery::error::Stopped;
use crate::recovery::{Event, Sink};
use crate::sanitize::inert;

/// Undoes a workflow's effects in reverse order of delegation and verifies them gone.
///
/// Marks the workflow COMPENSATING first (no more sends), cancels what runs, then compensates
/// every effect not verified absent. Idempotent: run it again after a crash.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  a2a-recover compensate trip-42 --dry-run   what it would undo, newest first
  a2a-recover compensate trip-42")]
pub struct CompensateArgs {
    /// The workflow.
    pub workflow: String,
    /// Prints the actions it would take and changes nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Timeout for compensation and verification commands (also the longest wait for a
    /// compensation task to finish before it is verified).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub command_timeout: Duration,
    /// How far an agent's clock may be behind ours when searching for a send by time.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub clock_skew: Duration,
    /// Allows compensating `default` as a whole (the workflow of every step delegated by a
    /// bare name, which are usually unrelated).
    #[arg(long)]
    pub force: bool,
    /// Answers yes to the question asked on a terminal (without a terminal nothing is asked).
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// Runs `compensate`.
pub(crate) async fn run(ctx: &Context, args: &CompensateArgs) -> anyhow::Result<u8> {
    check_name_part(&args.workflow).map_err(|reason| {
        CliError::usage(format!(
            "bad workflow name `{}`: {reason}",
            inert(&args.workflow)
        ))
        .hint("give a workflow name such as `trip-42` (no `/`)")
    })?;
    if args.command_timeout.is_zero() {
        return Err(CliError::usage("--command-timeout must be more than zero")
            .hint("give a duration such as `--command-timeout 60s` (the default)")
            .into());
    }
    let unknown = || {
        CliError::usage(format!("unknown workflow `{}`", inert(&args.workflow)))
            .hint("list workflows with `a2a-recover inspect`")
    };
    if args.workflow == DEFAULT_WORKFLOW && !args.force && !args.dry_run {
        return Err(CliError::usage(
            "refusing to compensate `default` as a whole: it holds every step delegated by a \
             bare name, which are usually unrelated",
        )
        .hint(
            "give up one step with `a2a-recover resolve default/STEP --as abandoned --reason \
             \"…\"`; to undo every effect in `default` anyway, add --force (`--dry-run` shows \
             what it would do)",
        )
        .into());
    }
    ctx.require_journal()?;
    let opts = Options {
        dry_run: args.dry_run,
        command_timeout: args.command_timeout,
        clock_skew: args.clock_skew,
    };
    // A dry run writes nothing: no lock file, no migration.
    let (journal, _lock) = ctx
        .open_journal_for_pass(args.dry_run, crate::recovery::lock::Scope::Workflows)
        .await?;
    if !journal.workflow_exists(&args.workflow)? {
        return Err(unknown().into());
    }
    // The workflow's own lock: a pass on another workflow runs beside this one.
    let _workflow_lock = if args.dry_run {
        Vec::new()
    } else {
        let (locks, held) = ctx
            .lock_workflows(&journal, std::slice::from_ref(&args.workflow))
            .await?;
        if let Some((w, owner)) = held.first() {
            return Err(CliError::with_code(
                crate::exit::WORK_REMAINS,
                format!(
                    "another pass ({owner}) holds the lock of workflow `{}`",
                    inert(w)
                ),
            )
            .hint("nothing was touched; run again when it is done, or wait with --wait DURATION")
            .into());
        }
        locks
    };
    if !args.dry_run
        && journal.workflow_state(&args.workflow)? == Some(WorkflowState::Active)
        && !compensate::nothing_to_undo(&journal.workflow_steps(&args.workflow)?)
        && !ctx.out.confirm(
            &[format!(
                "compensate {}: mark it COMPENSATING (no more sends, for good), cancel what \
                 runs, and run the compensation of every effect not verified absent \
                 (`--dry-run` lists each)",
                args.workflow
            )],
            args.yes,
        )
    {
        return Err(super::util::flags::declined().into());
    }
    let client = A2aClient::new(ctx.client_config()).context("failed to set up the HTTP client")?;
    ctx.out.begin("compensate")?;
    let printed = Printed::new(&ctx.out);
    let io = compensate::Io {
        clock: ctx.clock.as_ref(),
        send_lease_ttl: ctx.send_lease_ttl,
        sink: &printed,
    };
    let outcome = compensate::run(&io, &journal, &client, &args.workflow, &opts).await?;
    if ctx.out.is_json() {
        ctx.out.record(&json!({
            "type": "summary",
            "command": "compensate",
            "workflow": args.workflow,
            "workflowState": outcome.workflow_state.as_str(),
            "effects": outcome.effects,
            "running": outcome.running,
            "outcomes": printed.outcomes.take(),
            "dryRun": args.dry_run,
            "exitCode": outcome.exit_code,
        }))?;
    }
    Ok(outcome.exit_code)
}

/// The pass's sink: each thing it did is an `action` record (JSON) or its sentence (human),
/// counted by outcome for the summary; each problem also goes to stderr with its hints.
struct Printed<'a> {
    out: &'a Printer,
    /// How many `action` records had each outcome.
    outcomes: RefCell<BTreeMap<String, u32>>,
}

impl<'a> Printed<'a> {
    fn new(out: &'a Printer) -> Self {
        Self {
            out,
            outcomes: RefCell::default(),
        }
    }
}

impl Sink for Printed<'_> {
    fn event(&self, event: Event<'_>) -> anyhow::Result<()> {
        let out = self.out;
        if let Event::Compensated(said) = event {
            *self
                .outcomes
                .borrow_mut()
                .entry(compensated::outcome(&said.did).into_owned())
                .or_default() += 1;
        }
        let printed = match event {
            Event::Compensated(said) if out.is_json() => out.record(&compensated::record(said)),
            Event::Compensated(said) => out.line(&compensated::line(said)),
            Event::Problem(error) => {
                let c = crate::error::classify(error);
                out.error_report(&crate::error::render(error, &c.hints));
                Ok(())
            }
            _ => Ok(()),
        };
        printed.map_err(|BrokenPipe| Stopped.into())
    }
}
