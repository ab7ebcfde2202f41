//! The global flags (clap derive), accepted before or after any subcommand.
//!
//! The subcommand enum sits beside the dispatch `match` in `src/commands/mod.rs`, and each
//! subcommand's flags live in its own file there.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::duration::parse_duration;
use crate::env;
use crate::output::{ColorChoice, Format};

/// Flags accepted before or after any subcommand.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// The journal: a SQLite file, or a PostgreSQL URL (postgres://USER@HOST/DB?schema=NAME)
    /// [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3].
    // The variable's value may hold a password: help never shows it.
    #[arg(long, global = true, env = env::JOURNAL, hide_env_values = true, value_name = "PATH")]
    pub journal: Option<PathBuf>,
    /// Output format: tables and sentences for people, or JSON Lines for programs.
    #[arg(long, short = 'o', global = true, env = env::FORMAT, value_enum,
          default_value_t = Format::Human)]
    pub format: Format,
    /// When to use colors (`NO_COLOR` also turns them off in `auto`).
    #[arg(long, global = true, env = env::COLOR, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Per-request timeout; for streams the connect time, the longest wait for the next
    /// complete event (at least 60s) and the longest one event may take; also the longest
    /// wait for a busy journal.
    #[arg(long, global = true, env = env::TIMEOUT, value_name = "DURATION", default_value = "30s",
          value_parser = parse_duration)]
    pub timeout: Duration,
    /// Largest response body or single stream event accepted, in bytes (enforced while reading).
    #[arg(long, global = true, env = env::MAX_RESPONSE_SIZE, value_name = "BYTES",
          default_value_t = 16 * 1024 * 1024)]
    pub max_response_size: u64,
    /// Largest one artifact may grow to in the journal, its appended chunks, name, description
    /// and metadata together, in bytes; past it the attempt needs a human (exit 4) and is never
    /// re-delegated.
    #[arg(long, global = true, env = env::MAX_ARTIFACT_SIZE, value_name = "BYTES",
          default_value_t = 64 * 1024 * 1024)]
    pub max_artifact_size: u64,
    /// Largest all of a task's artifacts may grow to in the journal together, in bytes; past
    /// it the attempt needs a human (exit 4) and is never re-delegated.
    #[arg(long, global = true, env = env::MAX_TASK_SIZE, value_name = "BYTES",
          default_value_t = 256 * 1024 * 1024)]
    pub max_task_size: u64,
    /// Most bytes of `ListTasks` answers one look before a resend reads (every page of a
    /// search); past it the look cannot tell, and nothing is resent.
    #[arg(long, global = true, env = env::MAX_LOOK_SIZE, value_name = "BYTES",
          default_value_t = 64 * 1024 * 1024)]
    pub max_look_size: u64,
    /// Largest Agent Card accepted, in bytes (enforced while reading; the smaller of this and
    /// --max-response-size applies); a larger card is one a2a-recover cannot use: the step is
    /// REFUSED (exit 4), `agents add` exits 1.
    #[arg(long, global = true, env = env::MAX_CARD_SIZE, value_name = "BYTES",
          default_value_t = crate::a2a::DEFAULT_MAX_CARD_SIZE)]
    pub max_card_size: u64,
    /// How long a pass waits for a held lock (the journal's, or a workflow's) before it gives
    /// up on it (exit 3, or the workflow skipped); 0 = not at all.
    #[arg(long, global = true, env = env::WAIT, value_name = "DURATION", default_value = "0s",
          value_parser = parse_duration)]
    pub wait: Duration,
    /// Print less (errors and data only).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print more; repeat for more detail (-vvv traces HTTP).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// The most bytes a TEXT read from standard input may have (16 MiB).
const STDIN_TEXT_LIMIT: u64 = 16 * 1024 * 1024;

/// Parses a TEXT argument: `-` reads it from standard input (for long texts, or texts that
/// hold shell metacharacters), anything else is the text itself.
pub fn text_arg(s: &str) -> Result<String, String> {
    if s != "-" {
        return Ok(s.to_owned());
    }
    use std::io::Read as _;
    let mut text = String::new();
    std::io::stdin()
        .take(STDIN_TEXT_LIMIT + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read the text from standard input: {e}"))?;
    if text.len() as u64 > STDIN_TEXT_LIMIT {
        return Err("the text on standard input is larger than 16 MiB".to_owned());
    }
    // A trailing newline from `echo` or a heredoc is not part of the text.
    if text.ends_with('\n') {
        text.pop();
        if text.ends_with('\r') {
            text.pop();
        }
    }
    Ok(text)
}
