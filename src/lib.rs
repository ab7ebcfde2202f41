//! a2a-recover: crash-safe delegation to remote A2A agents.
//!
//! This library is the whole program; `src/main.rs` only calls [`main`]. It is **not** a
//! stable API: it exists so that tests and benchmarks can reach the logic below the binary.
//!
//! # Map
//!
//! - [`cli`] and [`commands`]: the command line; one file per subcommand, one dispatch `match`.
//! - [`context`]: global flags validated once into a [`context::Context`].
//! - [`journal`]: the journal; all SQL lives in `journal/sql/queries/`, run through a store
//!   seam by the SQLite store (`journal/sqlite/`).
//! - [`a2a`]: the A2A v1.0 JSON-RPC client (the wire): card, calls, SSE, errors, normalizer.
//! - [`recovery`]: the reconcile pass and its pure decision table.
//! - [`scripted_agent`]: an in-crate A2A agent for drills, the demo, tests and benchmarks.
//! - [`output`], [`error`], [`exit`]: printing, error rendering, exit codes.
//! - [`sanitize`], [`scrub`]: leaves everyone uses: remote text made inert, secrets taken out
//!   of what was sent back.
//!
//! # Invariant
//!
//! Ids are committed to the journal before anything is sent; see `journal/mod.rs`.

pub mod a2a;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod context;
pub mod crash;
pub mod duration;
pub mod env;
pub mod error;
pub mod exit;
pub mod journal;
pub mod model;
pub mod output;
pub mod paths;
pub mod placeholders;
pub mod plan_file;
pub mod recovery;
pub mod sanitize;
pub mod scripted_agent;
pub mod scrub;
#[cfg(feature = "sim")]
pub mod sim;
pub mod sim_seam;

use std::ffi::OsString;
use std::time::Duration;

use clap::parser::ValueSource;
use clap::{ArgMatches, FromArgMatches as _};

use crate::commands::Cli;
use crate::context::Context;

/// Runs a2a-recover with these arguments and returns the process exit code.
pub fn main(args: impl IntoIterator<Item = OsString>) -> u8 {
    // `--journal` is looked up before the matches are taken apart (`from_arg_matches_mut`
    // moves the values out instead of cloning every one of them).
    let parsed = commands::cli_command()
        .try_get_matches_from(args)
        .and_then(|mut matches| {
            let journal_flag = journal_flag_given(&matches);
            Cli::from_arg_matches_mut(&mut matches)
                .map(|cli| (cli, journal_flag))
                .map_err(|e| e.format(&mut commands::cli_command()))
        });
    let (cli, journal_flag) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            };
        }
    };
    init_tracing(&cli.global);
    raise_malloc_trim_threshold();
    let mut ctx = match Context::from_global(&cli.global) {
        Ok(ctx) => ctx,
        Err(e) => {
            let err = anyhow::Error::new(e);
            let c = error::classify(&err);
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                error::render(&err, &c.hints).as_bytes(),
            );
            return c.code;
        }
    };
    // Only the flag names the demo's journal: it ignores A2A_RECOVER_JOURNAL.
    ctx.journal_explicit = journal_flag;
    if ctx.journal_explicit {
        ctx.journal_source = paths::JournalSource::Flag;
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            ctx.out
                .error_report(&format!("error: failed to start the async runtime: {e}\n"));
            return exit::FAILURE;
        }
    };
    let result = runtime.block_on(run_until_signal(&ctx, &cli));
    // A signal may have dropped the command while a token command ran on a blocking thread.
    a2a::end_token_commands();
    // Pending HTTP connections must not delay the exit.
    runtime.shutdown_timeout(Duration::from_millis(100));
    match result {
        Ok(code) => code,
        Err(err) => {
            let c = error::classify(&err);
            if !c.broken_pipe {
                ctx.out.error_report(&error::render(&err, &c.hints));
            }
            c.code
        }
    }
}

/// Returns whether `--journal` was given on the command line (not taken from the environment),
/// before or after the subcommand.
fn journal_flag_given(matches: &ArgMatches) -> bool {
    let mut m = matches;
    loop {
        if m.value_source("journal") == Some(ValueSource::CommandLine) {
            return true;
        }
        match m.subcommand() {
            Some((_, sub)) => m = sub,
            None => return false,
        }
    }
}

/// Runs the command; SIGINT and SIGTERM drop it at its next await point.
///
/// Dropping is safe: no journal transaction is ever held across an await, and a reconcile pass
/// commits its group-committed observations when it is dropped, so every observation made so
/// far is committed and nothing is half-written.
async fn run_until_signal(ctx: &Context, cli: &Cli) -> anyhow::Result<u8> {
    use tokio::signal::unix::{SignalKind, signal};
    if matches!(cli.command, commands::Command::Listen(_)) {
        // `listen` stops on SIGTERM and SIGINT itself, once the pushes in flight are recorded,
        // and exits 0 (docs/exit-codes.md).
        return Box::pin(commands::run(ctx, &cli.command)).await;
    }
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    tokio::select! {
        result = commands::run(ctx, &cli.command) => result,
        _ = int.recv() => {
            ctx.out.status("interrupted; everything seen so far is journaled.");
            // A closed stdout must not turn the signal's exit code into 0.
            let _ = ctx.out.summary_after_signal("SIGINT", exit::SIGINT);
            Ok(exit::SIGINT)
        }
        _ = term.recv() => {
            ctx.out.status("terminated; everything seen so far is journaled.");
            let _ = ctx.out.summary_after_signal("SIGTERM", exit::SIGTERM);
            Ok(exit::SIGTERM)
        }
    }
}

/// Allocates and frees one 4 MiB block, so glibc keeps freed memory instead of returning it to
/// the kernel at once.
///
/// glibc raises its trim threshold to twice the size of the largest `mmap`ped block freed
/// (mallopt(3), dynamic threshold). SQLite allocates and frees a page cache for each temporary
/// b-tree a statement builds (every UPDATE of an attempt's state builds three); with the default
/// 128 KiB threshold each free shrank the heap and the next allocation faulted fresh pages in:
/// a first reconcile pass over 20,000 tasks spent 1.0 s in the kernel instead of 0.25 s
/// (docs/performance.md). Harmless with any other allocator.
fn raise_malloc_trim_threshold() {
    drop(std::hint::black_box(Vec::<u8>::with_capacity(4 << 20)));
}

/// Logs (`-v`) go to stderr, colored only where `--color` would color it: a terminal, and no
/// `NO_COLOR`, unless `--color always`; a log piped into a file carries no escape codes.
fn init_tracing(global: &cli::GlobalArgs) {
    use std::io::IsTerminal as _;
    let level = match (global.quiet, global.verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "info",
        (false, 2) => "debug",
        (false, _) => "trace",
    };
    // Only our own targets: reqwest's debug logs carry unredacted URLs (query secrets).
    let filter = tracing_subscriber::EnvFilter::new(format!("warn,a2a_recover={level}"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(output::wants_color(
            global.color,
            std::io::stderr().is_terminal(),
            output::no_color_env(),
        ))
        .with_target(false)
        .without_time()
        .try_init();
}
