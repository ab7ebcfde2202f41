//! `reply`: answer a pending question on the same task id.

use clap::Args;

use crate::context::Context;

/// Answers the pending question of an INPUT_REQUIRED (or resumes an AUTH_REQUIRED) step.
///
/// The reply's messageId is journaled first, then sent on the same task.
#[derive(Debug, Args)]
pub struct ReplyArgs {
    /// The step, `WORKFLOW/STEP`.
    pub step: String,
    /// The answer.
    pub text: String,
}

/// Runs `reply`.
pub(crate) async fn run(_ctx: &Context, _args: &ReplyArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`reply` is not built yet")
}
