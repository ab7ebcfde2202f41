//! `inspect`: the journal as a table or JSON Lines.

use clap::Args;

use crate::context::Context;

/// Shows the journal as a table (or JSON Lines with --format json).
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A workflow, or a step (`WORKFLOW/STEP`).
    pub target: Option<String>,
    /// Only attempts in these states (case-insensitive; `-` and `_` alike).
    #[arg(long, value_name = "STATE", num_args = 1..)]
    pub state: Vec<String>,
    /// Only what needs a human, each with the command that answers it.
    #[arg(long)]
    pub pending: bool,
    /// Adds the event history of the named step.
    #[arg(long)]
    pub events: bool,
    /// Most rows shown [default: 200 in tables, no limit in JSON].
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

/// Runs `inspect`.
pub(crate) async fn run(_ctx: &Context, _args: &InspectArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`inspect` is not built yet")
}
