//! `agents`: the registry of Agent Cards used by `--skill` and re-delegation.

use clap::{Args, Subcommand};

use crate::context::Context;

/// Manages the registry of agents used by --skill and re-delegation.
#[derive(Debug, Args)]
pub struct AgentsArgs {
    #[command(subcommand)]
    pub command: AgentsCommand,
}

/// The `agents` subcommands.
#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// Fetches, validates and stores an agent's card (again = refresh).
    Add {
        /// The agent's base URL or card URL.
        url: String,
        /// The environment variable holding its bearer token (only the name is stored).
        #[arg(long, value_name = "VAR")]
        token_env: Option<String>,
    },
    /// Lists registered agents in the order they are tried.
    List,
    /// Removes an agent from the registry.
    Remove {
        /// The agent's URL as registered.
        url: String,
    },
}

/// Runs `agents`.
pub(crate) async fn run(_ctx: &Context, _args: &AgentsArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`agents` is not built yet")
}
