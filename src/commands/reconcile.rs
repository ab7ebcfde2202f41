//! `reconcile`: one recovery pass over every unfinished attempt (DESIGN.md §4).

use std::time::Duration;

use clap::Args;

use crate::cli::parse_duration;
use crate::context::Context;

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

/// Runs `reconcile`.
pub(crate) async fn run(_ctx: &Context, _args: &ReconcileArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`reconcile` is not built yet")
}
