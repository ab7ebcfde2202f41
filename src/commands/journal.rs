//! `journal init`: creates the journal a pass reads, so that a pass never creates one itself.
//!
//! Every pass command (`reconcile`, `follow`, `reply`, `compensate`, `resolve`, `inspect`,
//! `status`, `prune`) refuses a journal that does not exist (exit 1, naming the path and how it
//! was chosen): a cron job pointed at the wrong place must not check an empty journal for ever.
//! `delegate` and `agents add` still create a journal, as they always have. On PostgreSQL
//! `journal init` creates the schema and its tables (a DBA may run it once, with more
//! privileges than the passes need).

use clap::{Args, Subcommand};
use serde_json::json;

use crate::context::Context;
use crate::exit;
use crate::journal::Journal;

/// Manages the journal itself.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  a2a-recover journal init            create the journal a cron job's passes will use")]
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
  a2a-recover --journal 'postgres://ops@db.internal/ops?schema=a2a_recover' journal init")]
    Init,
}

/// Runs `journal`.
pub(crate) async fn run(ctx: &Context, args: &JournalArgs) -> anyhow::Result<u8> {
    match args.command {
        JournalCommand::Init => init(ctx),
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
