//! `journal init`: creates the journal a pass reads, so that a pass never creates one itself.
//!
//! Every pass command (`reconcile`, `follow`, `reply`, `compensate`, `resolve`, `inspect`,
//! `status`, `prune`) refuses a journal that does not exist (exit 1, naming the path and how it
//! was chosen): a cron job pointed at the wrong place must not check an empty journal for ever.
//! `delegate` and `agents add` still create a journal, as they always have. On PostgreSQL
//! `journal init` creates the schema and its tables (a DBA may run it once, with more
//! privileges than the passes need).
//!
//! `journal copy --from SOURCE --to TARGET` moves a journal between stores (a SQLite file, a
//! PostgreSQL URL): under the source's whole-journal lock, all or nothing, verified row by row
//! (`Journal::copy_into`); the source is then marked as moved, and every command refuses it.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Args, Subcommand};
use serde_json::json;

use crate::context::Context;
use crate::error::CliError;
use crate::exit;
use crate::journal::{Journal, Location, LockAttempt, LockScope};
use crate::recovery::lock;

/// Manages the journal itself.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  # create the journal a cron job's passes will use:
  a2a-recover journal init
  # move the journal to PostgreSQL:
  a2a-recover journal copy --from ~/.local/state/a2a-recover/journal.sqlite3 \\
      --to postgres://ops@db.internal/ops")]
pub struct JournalArgs {
    #[command(subcommand)]
    pub command: JournalCommand,
}

/// The `journal` subcommands.
#[derive(Debug, Subcommand)]
pub enum JournalCommand {
    /// Creates the journal (a SQLite file, mode 0600, or a PostgreSQL schema; schema
    /// current); an existing one is left as it is (migrated when older).
    #[command(after_help = "\
Examples:
  a2a-recover journal init
  a2a-recover --journal /var/lib/ops/journal.sqlite3 journal init
  a2a-recover --journal 'postgres://ops@db.internal/ops?schema=a2a_recover' \\
      journal init")]
    Init,
    /// Copies a journal into another store (a SQLite file, or a PostgreSQL URL), verified row
    /// by row, all or nothing, and marks the source as moved: every command then refuses it,
    /// naming the new location.
    #[command(after_help = "\
The target must hold no journal rows (two journals are never merged); it is created (a file,
or the URL's schema) and migrated when needed. The copy holds the source's whole-journal lock:
no pass runs on it meanwhile. Passwords come from the URL's environment (PGPASSWORD, the
password file) and are never shown.

Examples:
  a2a-recover journal copy --from journal.sqlite3 \\
      --to postgres://ops@db.internal/ops
  a2a-recover journal copy \\
      --from 'postgres://ops@db.internal/ops?schema=a2a_recover' \\
      --to /var/lib/ops/journal.sqlite3 --format json")]
    Copy(CopyArgs),
}

/// The arguments of `journal copy`.
#[derive(Debug, Args)]
pub struct CopyArgs {
    /// The journal to copy: a SQLite file, or a postgres:// URL.
    #[arg(long, value_name = "SOURCE")]
    pub from: PathBuf,
    /// Where to copy it: a new or empty SQLite file, or a postgres:// URL whose schema holds
    /// no journal rows.
    #[arg(long, value_name = "TARGET")]
    pub to: PathBuf,
}

/// Runs `journal`.
pub(crate) async fn run(ctx: &Context, args: &JournalArgs) -> anyhow::Result<u8> {
    match &args.command {
        JournalCommand::Init => init(ctx),
        JournalCommand::Copy(copy_args) => copy(ctx, copy_args),
    }
}

/// Runs `journal init`.
fn init(ctx: &Context) -> anyhow::Result<u8> {
    // A SQLite journal is its file; a PostgreSQL one its schema, created with its tables.
    let existed = ctx.journal_exists()?;
    let journal: Journal = ctx.open_journal()?;
    let version = journal.schema_version();
    let shown = ctx.journal.to_string();
    let (store, store_name) = if ctx.journal.is_postgres() {
        ("postgres", "PostgreSQL")
    } else {
        ("sqlite", "SQLite")
    };
    ctx.out.begin("journal init")?;
    if ctx.out.is_json() {
        ctx.out.record(&json!({
            "type": "summary",
            "command": "journal init",
            "created": !existed,
            "store": store,
            "schemaVersion": version,
            "chosenBy": ctx.journal_source.as_str(),
            "exitCode": exit::OK,
        }))?;
    } else if existed {
        ctx.out.line(&format!(
            "the journal at `{shown}` already exists ({store_name}, schema version {version}); \
             nothing was created."
        ))?;
    } else {
        ctx.out.line(&format!(
            "created the journal at `{shown}` ({store_name}, schema version {version}; chosen \
             by {}).",
            ctx.journal_source.describe()
        ))?;
    }
    Ok(exit::OK)
}

/// Reads `--from` or `--to`.
fn location(flag: &str, value: &Path) -> Result<Location, CliError> {
    Location::parse(value).map_err(|e| {
        CliError::usage(format!("{flag}: {e}"))
            .hint("give a file path, or a URL such as postgres://USER@HOST/DB")
    })
}

/// Returns a file's path made absolute and free of `..` and links where it exists (its
/// directory, for a file not created yet), to tell whether two paths name one file.
fn same_file(a: &Path, b: &Path) -> bool {
    let canonical = |p: &Path| {
        p.canonicalize().ok().or_else(|| {
            let dir = p.parent().filter(|d| !d.as_os_str().is_empty())?;
            Some(dir.canonicalize().ok()?.join(p.file_name()?))
        })
    };
    match (canonical(a), canonical(b)) {
        (Some(a), Some(b)) => a == b,
        _ => a == b,
    }
}

/// Removes a SQLite journal this command created, with its WAL files.
fn remove_created(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
}

/// Takes the source's whole-journal lock when it is a file: its lock file, taken before
/// anything is opened. (A PostgreSQL source's is its advisory lock, taken through its
/// connection once it is open.)
fn lock_source(ctx: &Context, from: &Location) -> anyhow::Result<Option<lock::PassLock>> {
    let lock = match from.file_path() {
        Some(path) => Some(
            lock::acquire_scoped(
                path,
                lock::Scope::Journal,
                crate::sim_seam::pid(),
                &crate::clock::rfc3339(ctx.clock.now()),
            )
            .map_err(|e| match e {
                lock::LockError::Held { owner, path } => CliError::failure(format!(
                    "another pass ({owner}) holds the lock of `{from}`; nothing was copied"
                ))
                .hint(format!(
                    "run again when it is done (lock file `{}`)",
                    path.display()
                ))
                .into(),
                e @ (lock::LockError::Io { .. } | lock::LockError::Store(_)) => {
                    anyhow::Error::from(e)
                }
            })?,
        ),
        None => None,
    };
    Ok(lock)
}

/// Runs `journal copy`.
fn copy(ctx: &Context, args: &CopyArgs) -> anyhow::Result<u8> {
    let from = location("--from", &args.from)?;
    let to = location("--to", &args.to)?;
    let same = match (from.file_path(), to.file_path()) {
        (Some(a), Some(b)) => same_file(a, b),
        (None, None) => from.to_string() == to.to_string(),
        _ => false,
    };
    if same {
        return Err(
            CliError::failure(format!("--from and --to name the same journal `{from}`"))
                .hint("nothing was copied; name another file or schema as the target")
                .into(),
        );
    }
    if let Some(path) = from.file_path()
        && !crate::journal::exists(path)
    {
        return Err(
            CliError::failure(format!("no journal at `{from}`; nothing was copied"))
                .hint("--from names the journal to copy: check the path")
                .into(),
        );
    }
    let _lock = lock_source(ctx, &from)?;
    let source = Journal::open_at(&from, ctx.timeout)
        .with_context(|| format!("failed to open the source journal `{from}`"))?;
    // A PostgreSQL source's whole-journal lock: its advisory lock, held by its connection.
    let _store_lock = match source.try_lock(LockScope::Journal)? {
        Some(LockAttempt::Held(holder)) => {
            return Err(CliError::failure(format!(
                "another pass ({holder}) holds the lock of `{from}`; nothing was copied"
            ))
            .hint("run again when it is done")
            .into());
        }
        taken => taken,
    };
    let created = to
        .file_path()
        .filter(|p| !crate::journal::exists(p))
        .map(Path::to_path_buf);
    let outcome = Journal::open_at(&to, ctx.timeout)
        .with_context(|| format!("failed to open the target journal `{to}`"))
        .and_then(|target| {
            source
                .copy_into(&target)
                .with_context(|| format!("failed to copy `{from}` into `{to}`"))
        });
    let report = match outcome {
        Ok(report) => report,
        Err(e) => {
            if let Some(path) = &created {
                remove_created(path);
            }
            return Err(e);
        }
    };
    let rows: u64 = report.tables.iter().map(|(_, n)| n).sum();
    ctx.out.begin("journal copy")?;
    if ctx.out.is_json() {
        let tables: serde_json::Map<String, serde_json::Value> = report
            .tables
            .iter()
            .map(|(t, n)| (t.clone(), json!(n)))
            .collect();
        ctx.out.record(&json!({
            "type": "summary",
            "command": "journal copy",
            "from": from.to_string(),
            "to": to.to_string(),
            "journal": to.to_string(),
            "tables": tables,
            "rows": rows,
            "verified": true,
            "exitCode": exit::OK,
        }))?;
    } else {
        ctx.out.line(&format!(
            "copied {rows} rows in {} tables from `{from}` to `{to}`, verified row by row.",
            report.tables.len()
        ))?;
        for (t, n) in &report.tables {
            ctx.out.line(&format!("  {t:<16} {n:>9}"))?;
        }
        ctx.out.line(&format!(
            "`{from}` is marked as moved: every command now refuses it. Pass --journal {to} \
             (or set A2A_RECOVER_JOURNAL) from now on."
        ))?;
    }
    Ok(exit::OK)
}
