//! `resolve`: the operator's decision on a step that needs a human.

use clap::{Args, ValueEnum};

use crate::context::Context;

/// Records an operator's decision on a step that needs a human.
#[derive(Debug, Args)]
pub struct ResolveArgs {
    /// The step, `WORKFLOW/STEP`.
    pub step: String,
    /// The decision.
    #[arg(long = "as", value_enum, value_name = "DECISION")]
    pub decision: Decision,
    /// Why (journaled with the decision).
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
}

/// An operator's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Decision {
    /// Accept the step as finished.
    Done,
    /// Give the step up; it counts as failed for compensation.
    Abandoned,
    /// A new attempt with fresh ids, budget permitting.
    Retry,
    /// For UNCERTAIN: send again with the same messageId, accepting the risk.
    Resend,
}

/// Runs `resolve`.
pub(crate) async fn run(_ctx: &Context, _args: &ResolveArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`resolve` is not built yet")
}
