//! `compensate`: the saga's undo, in reverse order of delegation.

use std::time::Duration;

use clap::Args;

use crate::cli::parse_duration;
use crate::context::Context;

/// Undoes a workflow's effects in reverse order of delegation and verifies them gone.
///
/// Marks the workflow COMPENSATING first (no more sends), cancels what runs, then compensates
/// every effect not verified absent. Idempotent: run it again after a crash.
#[derive(Debug, Args)]
pub struct CompensateArgs {
    /// The workflow.
    pub workflow: String,
    /// Prints the actions it would take and changes nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Timeout for compensation and verification commands.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub command_timeout: Duration,
}

/// Runs `compensate`.
pub(crate) async fn run(_ctx: &Context, _args: &CompensateArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`compensate` is not built yet")
}
