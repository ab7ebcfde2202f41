//! `follow`: a task's stream that survives drops.
//!
//! The step's latest attempt decides what happens first:
//! - a task is known (SENT … AUTH_REQUIRED, UNKNOWN, LOST): follow it with
//!   [`recovery::follow`](crate::recovery::follow), holding the attempt's lease;
//! - `INTENT`: look for the send first. Found:
//!   record the task and follow it. Proven absent: nothing was created, and resending is
//!   `reconcile`'s job (exit 3). Not provable: `UNCERTAIN` (exit 4). Never sent: exit 3;
//! - `REPLIED`, or already terminal: nothing to follow, exit 0; `UNCERTAIN`, `REFUSED`: exit 4.
//!
//! Exit: 0 terminal (recorded), 4 INPUT_REQUIRED / AUTH_REQUIRED (question journaled) or LOST
//! or a refusal, 3 still running at `--until` or reconnects spent (or another process follows).
//!
//! Output: every change is journaled before it is shown. With `--format json`, `begin`, then
//! one `event` record per journaled event (the shape of `inspect --events`), then a `summary`
//! with `exitCode`. On a terminal, a spinner on stderr shows the state, the artifact count and
//! the reconnects; otherwise state changes and reconnects are status lines on stderr. The final
//! line goes to stdout. Remote text (task ids, questions, errors) is made inert.

use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use serde_json::json;
use tokio::time::Instant;

use crate::a2a::{A2aClient, Limits};
use crate::context::Context;
use crate::duration::parse_duration;
use crate::error::CliError;
use crate::recovery::follow::FollowOptions;

use super::util::follow::follow_step;

mod workflow;

/// Follows a step's latest task, journaling every event.
///
/// Exit 0 when the task is terminal, 4 when it waits for input or auth (or is LOST), 3 when it
/// is still running at --until or reconnects are spent.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  a2a-recover follow trip-42/hotel
  a2a-recover follow trip-42/flight --until 10m --max-reconnects 5
  a2a-recover follow --workflow trip-42   # every unfinished step, at once")]
pub struct FollowArgs {
    /// The step, `WORKFLOW/STEP` (or a compensation step `WORKFLOW/STEP~compensate`).
    #[arg(required_unless_present = "workflow")]
    pub step: Option<String>,
    /// Follows every unfinished step of WORKFLOW at once, each state change on a line with
    /// its time (a bare STEP stays a step of `default`).
    #[arg(long, value_name = "WORKFLOW", conflicts_with = "step")]
    pub workflow: Option<String>,
    /// Resubscriptions allowed without an event in between.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub max_reconnects: u32,
    /// Stops following after this long (exit 3 if still running).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub until: Option<Duration>,
}

/// Runs `follow`.
pub(crate) async fn run(ctx: &Context, args: &FollowArgs) -> anyhow::Result<u8> {
    let started = Instant::now();
    let opts = FollowOptions {
        max_reconnects: args.max_reconnects,
        deadline: args.until.map(|d| started + d),
        ..FollowOptions::for_idle_timeout(ctx.stream_idle_timeout())
    };
    let step = match (&args.step, &args.workflow) {
        (Some(step), _) => step,
        (None, Some(workflow)) => return workflow::run(ctx, workflow, &opts).await,
        (None, None) => return Err(CliError::usage("give a STEP, or --workflow WORKFLOW").into()),
    };
    // A compensation step (`WORKFLOW/STEP~compensate`) is followed like any other.
    let name = crate::plan_file::parse_journaled_step(step).map_err(|e| {
        CliError::usage(e.to_string())
            .hint("write WORKFLOW/STEP (e.g. `trip-42/hotel`), or a bare STEP for `default/STEP`")
    })?;
    ctx.require_journal()?;
    let journal = ctx.open_journal_for_writing()?;
    let Some(record) = journal.step(&name)? else {
        let hint = "list the journaled steps with `a2a-recover inspect` (`--workflow WORKFLOW` \
                    follows every step of one)";
        let mut err = super::util::unknown_step(&journal, &name, hint)?;
        if name.workflow == "default" && journal.workflow_exists(&name.step)? {
            let all = format!(
                "; or follow them all: `a2a-recover follow --workflow {}`",
                crate::sanitize::inert(&name.step)
            );
            err.hint = err.hint.map(|h| h + &all);
        }
        return Err(err.into());
    };
    let client = client(ctx, &journal)?;
    ctx.out.begin("follow")?;
    let followed = follow_step(ctx, &journal, &client, &record, &opts).await?;
    if ctx.out.is_json() {
        let mut record = followed.record;
        record["exitCode"] = json!(followed.code);
        ctx.out.record(&record)?;
    } else {
        ctx.out.line(&followed.line)?;
    }
    Ok(followed.code)
}

/// The HTTP client of a follow: no request to an agent before the not-before time an earlier
/// command was given.
fn client(ctx: &Context, journal: &crate::journal::Journal) -> anyhow::Result<A2aClient> {
    let limits = Limits {
        not_before: journal.not_before_limits()?,
        ..Limits::default()
    };
    A2aClient::with_limits(ctx.client_config(), limits).context("failed to set up the HTTP client")
}
