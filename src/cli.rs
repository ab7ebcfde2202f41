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
    /// The journal file [default: $XDG_STATE_HOME/a2a-recover/journal.sqlite3].
    #[arg(long, global = true, env = env::JOURNAL, value_name = "PATH")]
    pub journal: Option<PathBuf>,
    /// Output format: tables and sentences for people, or JSON Lines for programs.
    #[arg(long, global = true, env = env::FORMAT, value_enum, default_value_t = Format::Human)]
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
    /// Most bytes of `ListTasks` answers one look before a resend reads (every page of a
    /// search); past it the look cannot tell, and nothing is resent.
    #[arg(long, global = true, env = env::MAX_LOOK_SIZE, value_name = "BYTES",
          default_value_t = 64 * 1024 * 1024)]
    pub max_look_size: u64,
    /// Print less (errors and data only).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print more; repeat for more detail (-vvv traces HTTP).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}
