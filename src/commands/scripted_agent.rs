//! `scripted-agent`: the in-crate scripted A2A v1.0 agent, served on loopback.

use clap::Args;

use crate::context::Context;

/// Runs a scripted A2A v1.0 agent on loopback, for drills, the demo, tests and benchmarks.
#[derive(Debug, Args)]
pub struct ScriptedAgentArgs {
    /// Port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
}

/// Runs `scripted-agent`.
pub(crate) async fn run(_ctx: &Context, _args: &ScriptedAgentArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`scripted-agent` is not built yet")
}
