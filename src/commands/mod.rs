//! One file per subcommand; this file lists them (the clap root [`Cli`] and the [`Command`]
//! enum) and holds the only dispatch `match`.

pub mod agents;
pub mod compensate;
pub mod completions;
pub mod delegate;
pub mod demo;
pub mod follow;
pub mod inspect;
pub mod journal;
pub mod prune;
pub mod reconcile;
pub mod reply;
pub mod resolve;
pub mod scripted_agent;
pub mod status;
mod util;

use clap::{Parser, Subcommand};

use crate::cli::GlobalArgs;
use crate::context::Context;

/// Crash-safe delegation to remote A2A agents.
///
/// Every delegation is written to a journal (a local SQLite file, or PostgreSQL for several hosts)
/// before anything goes on the wire; each subcommand is one recovery pass over that journal, run
/// by hand after an incident or from cron.
#[derive(Debug, Parser)]
#[command(name = "a2a-recover", version, after_help = crate::exit::HELP)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Delegates a step to an agent: the intent is journaled first, then sent.
    Delegate(delegate::DelegateArgs),
    /// Runs one recovery pass over every unfinished attempt.
    Reconcile(reconcile::ReconcileArgs),
    /// Follows a step's task stream, journaling every event.
    Follow(follow::FollowArgs),
    /// Answers the pending question of an INPUT_REQUIRED step on the same task.
    Reply(reply::ReplyArgs),
    /// Undoes a workflow's effects in reverse order and verifies them gone.
    Compensate(compensate::CompensateArgs),
    /// Records an operator's decision on a step that needs a human.
    Resolve(resolve::ResolveArgs),
    /// Shows the journal as a table (or JSON Lines).
    Inspect(inspect::InspectArgs),
    /// Deletes status refreshes older than an age, keeping every state change and decision.
    Prune(prune::PruneArgs),
    /// Shows the journal in use, its lock, steps by state and what needs a human.
    Status(status::StatusArgs),
    /// Creates the journal (`journal init`); passes never create one.
    Journal(journal::JournalArgs),
    /// Manages the registry of agents used by --skill and re-delegation.
    Agents(agents::AgentsArgs),
    /// Runs a scripted A2A v1.0 agent on loopback, for drills and tests.
    ScriptedAgent(scripted_agent::ScriptedAgentArgs),
    /// Runs the worked example end to end with a real crash, and narrates each recovery.
    Demo(demo::DemoArgs),
    /// Prints a shell completion script.
    Completions(completions::CompletionsArgs),
    /// Prints the man page (roff).
    #[command(hide = true)]
    Man,
}

/// Runs one subcommand and returns its exit code.
pub(crate) async fn run(ctx: &Context, command: &Command) -> anyhow::Result<u8> {
    match command {
        // Boxed: their futures are the largest (a send's state and the lease it may meet; a
        // stream of any binding).
        Command::Delegate(args) => Box::pin(delegate::run(ctx, args)).await,
        Command::Reconcile(args) => reconcile::run(ctx, args).await,
        Command::Follow(args) => Box::pin(follow::run(ctx, args)).await,
        Command::Reply(args) => reply::run(ctx, args).await,
        Command::Compensate(args) => compensate::run(ctx, args).await,
        Command::Resolve(args) => resolve::run(ctx, args).await,
        Command::Inspect(args) => inspect::run(ctx, args).await,
        Command::Prune(args) => prune::run(ctx, args).await,
        Command::Status(args) => status::run(ctx, args).await,
        Command::Journal(args) => journal::run(ctx, args).await,
        Command::Agents(args) => agents::run(ctx, args).await,
        Command::ScriptedAgent(args) => scripted_agent::run(ctx, args).await,
        Command::Demo(args) => demo::run(ctx, args).await,
        Command::Completions(args) => completions::run(ctx, args),
        Command::Man => completions::man(ctx),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_valid() {
        Cli::command().debug_assert();
    }
}
