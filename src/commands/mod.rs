//! One file per subcommand; this file lists them (the clap root [`Cli`] and the [`Command`]
//! enum) and holds the only dispatch `match`.

pub mod agents;
pub mod compensate;
pub mod completions;
pub mod delegate;
pub mod demo;
pub mod follow;
mod help;
pub mod inspect;
pub mod journal;
pub mod listen;
pub mod prune;
pub mod reconcile;
pub mod reply;
pub(crate) mod report;
pub mod resolve;
pub mod scripted_agent;
pub mod status;
pub(crate) mod util;

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
    /// Receives push notifications from agents into the journal.
    Listen(listen::ListenArgs),
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

pub use help::cli_command;

/// Runs one subcommand and returns its exit code.
pub(crate) async fn run(ctx: &Context, command: &Command) -> anyhow::Result<u8> {
    match command {
        // Boxed: their futures are the largest (a send's state and the lease it may meet; a
        // stream of any binding).
        Command::Delegate(args) => Box::pin(delegate::run(ctx, args)).await,
        Command::Reconcile(args) => reconcile::run(ctx, args).await,
        // Boxed too: a follow holds its group commit and its writer in its future.
        Command::Follow(args) => Box::pin(follow::run(ctx, args)).await,
        Command::Reply(args) => reply::run(ctx, args).await,
        Command::Compensate(args) => compensate::run(ctx, args).await,
        Command::Resolve(args) => resolve::run(ctx, args).await,
        Command::Inspect(args) => inspect::run(ctx, args).await,
        Command::Prune(args) => prune::run(ctx, args).await,
        Command::Status(args) => status::run(ctx, args).await,
        Command::Journal(args) => journal::run(ctx, args).await,
        Command::Listen(args) => listen::run(ctx, args).await,
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

    /// The modules this file declares (every command, and `util`).
    fn declared_modules() -> Vec<String> {
        include_str!("mod.rs")
            .lines()
            .filter_map(|l| {
                l.strip_prefix("pub mod ")
                    .or_else(|| l.strip_prefix("mod "))
            })
            .filter_map(|l| l.strip_suffix(';'))
            .map(str::to_owned)
            .collect()
    }

    /// The first segment of every path that follows `prefix` in `code` (each item of a
    /// `prefix{a::b, c}` group), where `prefix` is not the tail of a longer path.
    fn named_after(code: &str, prefix: &str) -> Vec<String> {
        let is_ident = |c: char| c.is_alphanumeric() || c == '_';
        let mut names = Vec::new();
        for (at, _) in code.match_indices(prefix) {
            if code[..at].ends_with(|c: char| is_ident(c) || c == ':') {
                continue;
            }
            let rest = &code[at + prefix.len()..];
            let items: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => {
                    let mut depth = 0;
                    let end = group
                        .find(|c| {
                            depth += i32::from(c == '{') - i32::from(c == '}');
                            depth < 0
                        })
                        .unwrap_or(group.len());
                    let mut top = Vec::new();
                    let (mut start, mut depth) = (0, 0);
                    for (i, c) in group[..end].char_indices() {
                        depth += i32::from(c == '{') - i32::from(c == '}');
                        if c == ',' && depth == 0 {
                            top.push(&group[start..i]);
                            start = i + 1;
                        }
                    }
                    top.push(&group[start..end]);
                    top
                }
                None => vec![rest],
            };
            for item in items {
                let name: String = item
                    .trim_start()
                    .chars()
                    .take_while(|&c| is_ident(c))
                    .collect();
                if !name.is_empty() {
                    names.push(name);
                }
            }
        }
        names
    }

    /// Every `.rs` file under `dir` with its depth below src/commands and its text, comments
    /// dropped.
    fn sources(dir: &std::path::Path, depth: usize) -> Vec<(std::path::PathBuf, usize, String)> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                out.extend(sources(&path, depth + 1));
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                let code: Vec<&str> = text
                    .lines()
                    .map(|l| l.split("//").next().unwrap())
                    .collect();
                out.push((path, depth, code.join("\n")));
            }
        }
        out
    }

    #[test]
    fn the_path_scanner_reads_single_paths_and_groups() {
        let code = "use crate::x::{a::B, c, d::{e, f}};\nlet g = crate::x::h(1); y::crate::x::i";
        assert_eq!(named_after(code, "crate::x::"), ["a", "c", "d", "h"]);
    }

    #[test]
    fn commands_never_import_each_other_only_the_shared_helpers() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/commands");
        let commands: Vec<String> = declared_modules()
            .into_iter()
            .filter(|m| m != "util")
            .collect();
        assert!(commands.len() > 10, "{commands:?}");
        let mut offenders = Vec::new();
        for (path, depth, code) in sources(&root, 0) {
            let rel = path.strip_prefix(&root).unwrap();
            if rel == std::path::Path::new("mod.rs") {
                continue; // the list of commands and the dispatch
            }
            let own = rel.iter().next().unwrap().to_string_lossy();
            let own = own.trim_end_matches(".rs");
            let up = format!("{}super::", "super::".repeat(depth));
            let root_path = format!("{}::commands::", "crate");
            for name in [named_after(&code, &root_path), named_after(&code, &up)].concat() {
                if name != own && commands.contains(&name) {
                    offenders.push(format!("{}: names `{name}`", rel.display()));
                }
            }
        }
        assert_eq!(
            offenders,
            Vec::<String>::new(),
            "shared helpers go in util/"
        );
    }
}
