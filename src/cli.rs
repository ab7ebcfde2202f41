//! The command line: global flags and the subcommand enum (clap derive).
//!
//! Each subcommand's flags live in its own file under `src/commands/`; this file only lists them.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::commands;
use crate::env;

/// Crash-safe delegation to remote A2A agents.
///
/// Every delegation is written to a local SQLite journal before anything goes on the wire; each
/// subcommand is one recovery pass over that journal, run by hand after an incident or from cron.
#[derive(Debug, Parser)]
#[command(name = "a2a-recover", version, after_help = crate::exit::HELP)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Flags accepted before or after any subcommand.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// The journal file [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3].
    #[arg(long, global = true, env = env::JOURNAL, value_name = "PATH")]
    pub journal: Option<PathBuf>,
    /// Output format: tables and sentences for people, or JSON Lines for programs.
    #[arg(long, global = true, env = env::FORMAT, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// When to use colors (`NO_COLOR` also turns them off in `auto`).
    #[arg(long, global = true, env = env::COLOR, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Per-request timeout; for streams the connect time and longest silence (at least 60s);
    /// also the longest wait for a busy journal.
    #[arg(long, global = true, env = env::TIMEOUT, value_name = "DURATION", default_value = "30s",
          value_parser = parse_duration)]
    pub timeout: Duration,
    /// Largest response body or single stream event accepted, in bytes (enforced while reading).
    #[arg(long, global = true, env = env::MAX_RESPONSE_SIZE, value_name = "BYTES",
          default_value_t = 16 * 1024 * 1024)]
    pub max_response_size: u64,
    /// Print less (errors and data only).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print more; repeat for more detail (-vvv traces HTTP).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// The output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Tables and sentences.
    Human,
    /// JSON Lines, one record per line (docs/json-output.md).
    Json,
}

/// When to use colors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colors on a terminal, unless `NO_COLOR` is set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Delegates a step to an agent: the intent is journaled first, then sent.
    Delegate(commands::delegate::DelegateArgs),
    /// Runs one recovery pass over every unfinished attempt.
    Reconcile(commands::reconcile::ReconcileArgs),
    /// Follows a step's task stream, journaling every event.
    Follow(commands::follow::FollowArgs),
    /// Answers the pending question of an INPUT_REQUIRED step on the same task.
    Reply(commands::reply::ReplyArgs),
    /// Undoes a workflow's effects in reverse order and verifies them gone.
    Compensate(commands::compensate::CompensateArgs),
    /// Records an operator's decision on a step that needs a human.
    Resolve(commands::resolve::ResolveArgs),
    /// Shows the journal as a table (or JSON Lines).
    Inspect(commands::inspect::InspectArgs),
    /// Deletes status refreshes older than an age, keeping every state change and decision.
    Prune(commands::prune::PruneArgs),
    /// Manages the registry of agents used by --skill and re-delegation.
    Agents(commands::agents::AgentsArgs),
    /// Runs a scripted A2A v1.0 agent on loopback, for drills and tests.
    ScriptedAgent(commands::scripted_agent::ScriptedAgentArgs),
    /// Runs the worked example end to end with a real crash, and narrates each recovery.
    Demo(commands::demo::DemoArgs),
    /// Prints a shell completion script.
    Completions(commands::completions::CompletionsArgs),
    /// Prints the man page (roff).
    #[command(hide = true)]
    Man,
}

/// Parses a duration with a unit: `500ms`, `2s`, `5m`, `1h`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .ok_or_else(|| format!("`{s}` has no unit; write e.g. `500ms`, `2s`, `5m` or `1h`"))?;
    let (num, unit) = s.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` does not start with a number; write e.g. `30s`"))?;
    let secs = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(format!("unknown unit `{unit}` in `{s}`; use ms, s, m or h")),
    };
    if !secs.is_finite() || !(0.0..=1e9).contains(&secs) {
        return Err(format!("`{s}` is out of range"));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_valid() {
        Cli::command().debug_assert();
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert!(parse_duration("5").is_err());
        assert!(parse_duration("5d").is_err());
        assert!(parse_duration("-1s").is_err());
    }
}
