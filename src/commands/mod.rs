//! One file per subcommand; this file holds the only dispatch `match`.

pub mod agents;
pub mod compensate;
pub mod completions;
pub mod delegate;
pub mod demo;
pub mod follow;
pub mod inspect;
pub mod prune;
pub mod reconcile;
pub mod reply;
pub mod resolve;
pub mod scripted_agent;

use crate::cli::Command;
use crate::context::Context;

/// Runs one subcommand and returns its exit code (DESIGN.md §3).
pub(crate) async fn run(ctx: &Context, command: &Command) -> anyhow::Result<u8> {
    match command {
        Command::Delegate(args) => delegate::run(ctx, args).await,
        Command::Reconcile(args) => reconcile::run(ctx, args).await,
        Command::Follow(args) => follow::run(ctx, args).await,
        Command::Reply(args) => reply::run(ctx, args).await,
        Command::Compensate(args) => compensate::run(ctx, args).await,
        Command::Resolve(args) => resolve::run(ctx, args).await,
        Command::Inspect(args) => inspect::run(ctx, args).await,
        Command::Prune(args) => prune::run(ctx, args).await,
        Command::Agents(args) => agents::run(ctx, args).await,
        Command::ScriptedAgent(args) => scripted_agent::run(ctx, args).await,
        Command::Demo(args) => demo::run(ctx, args).await,
        Command::Completions(args) => completions::run(ctx, args),
        Command::Man => completions::man(ctx),
    }
}
