//! `follow`: a task's stream that survives drops (DESIGN.md §5).

use std::time::Duration;

use clap::Args;

use crate::cli::parse_duration;
use crate::context::Context;

/// Follows a step's latest task, journaling every event.
///
/// Exit 0 when the task is terminal, 4 when it waits for input or auth (or is LOST), 3 when it
/// is still running at --until or reconnects are spent.
#[derive(Debug, Args)]
pub struct FollowArgs {
    /// The step, `WORKFLOW/STEP`.
    pub step: String,
    /// Resubscriptions allowed without an event in between.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub max_reconnects: u32,
    /// Stops following after this long (exit 3 if still running).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub until: Option<Duration>,
}

/// Runs `follow`.
pub(crate) async fn run(_ctx: &Context, _args: &FollowArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`follow` is not built yet")
}
