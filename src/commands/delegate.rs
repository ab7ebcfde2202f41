//! `delegate`: commit the intent, then send (DESIGN.md §3 `delegate`).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::cli::parse_duration;
use crate::context::Context;

/// Delegates a step to an agent: the intent is journaled first, then sent.
///
/// Idempotent per step: calling it again never creates a second intent; an attempt whose send
/// outcome is unknown is looked for on the agent first and resent (same messageId) only when
/// the look proves nothing was created.
#[derive(Debug, Args)]
pub struct DelegateArgs {
    /// The step, `WORKFLOW/STEP` (a bare name means `default/NAME`).
    #[arg(required_unless_present = "plan", conflicts_with = "plan")]
    pub step: Option<String>,
    /// The message text.
    #[arg(required_unless_present = "plan", conflicts_with = "plan")]
    pub text: Option<String>,
    /// The agent's base URL or Agent Card URL.
    #[arg(long, value_name = "URL", conflicts_with_all = ["skill", "plan"])]
    pub agent: Option<String>,
    /// Picks the first registered agent advertising this skill (`agents add`).
    #[arg(long, value_name = "ID", conflicts_with = "plan")]
    pub skill: Option<String>,
    /// The environment variable holding the agent's bearer token (only its name is journaled).
    #[arg(long, value_name = "VAR", conflicts_with = "plan")]
    pub token_env: Option<String>,
    /// JSON object sent as the message's `metadata`.
    #[arg(long, value_name = "JSON", conflicts_with = "plan")]
    pub metadata: Option<String>,
    /// Attempt budget for this step, across all agents.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_attempts: u32,
    /// The step has a side effect that `compensate` must undo and verify.
    #[arg(
        long,
        requires = "compensation",
        requires = "verification",
        conflicts_with = "plan"
    )]
    pub effect: bool,
    /// Compensation: a message sent to the step's agent.
    #[arg(long, value_name = "TEXT", group = "compensation", requires = "effect")]
    pub compensate: Option<String>,
    /// Compensation: a command run with `sh -c`.
    #[arg(long, value_name = "CMD", group = "compensation", requires = "effect")]
    pub compensate_cmd: Option<String>,
    /// Verification: a command (exit 0 = exists, 1 = absent, else unknown).
    #[arg(long, value_name = "CMD", group = "verification", requires = "effect")]
    pub verify_cmd: Option<String>,
    /// Verification: a URL (2xx = exists, 404 = absent, else unknown).
    #[arg(long, value_name = "URL", group = "verification", requires = "effect")]
    pub verify_url: Option<String>,
    /// Follows the task after sending, as `follow` does.
    #[arg(long)]
    pub follow: bool,
    /// Delegates a whole workflow from a TOML plan file.
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// Sends credentials to an interface on another origin than the card's.
    #[arg(long)]
    pub allow_cross_origin: bool,
    /// How far the agent's clock may be behind ours when searching by time.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub clock_skew: Duration,
    /// Timeout for compensation and verification commands.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub command_timeout: Duration,
}

/// Runs `delegate`.
pub(crate) async fn run(_ctx: &Context, _args: &DelegateArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`delegate` is not built yet")
}
