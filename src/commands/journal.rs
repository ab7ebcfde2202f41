//! `journal init`: creates the journal a pass reads, so that a pass never creates one itself.
//!
//! Every pass command (`reconcile`, `follow`, `reply`, `compensate`, `resolve`, `inspect`,
//! `status`, `prune`) refuses a journal that does not exist (exit 1, naming the path and how it
//! was chosen): a cron job pointed at the wrong place must not check an empty journal for ever.
//! `delegate` and `agents add` still create a SQLite journal, as they always have.

use clap::{Args, Subcommand};
use serde_json::json;

use crate::context::Context;
use crate::exit;
use crate::journal::Journal;

/// Manages the journal itself.
#[derive(Debug, Args)]
pub struct JournalArgs {
    #[command(subcommand)]
    pub command: JournalCommand,
}

/// The `journal` subcommands.
#[derive(Debug, Subcommand)]
pub enum JournalCommand {
    /// Creates the journal (a SQLite file, mode 0600, schema current); an existing one is
    /// left as it is (migrated when older).
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
    // The store seam: a journal path is a SQLite file today. A PostgreSQL journal (a URL) would
    // create its schema here instead; `paths::journal_path` refuses URLs until then.
    let existed = crate::journal::exists(&ctx.journal_path);
    let journal: Journal = ctx.open_journal()?;
    let version = journal.schema_version();
    let shown = ctx.journal_path.display().to_string();
    ctx.out.begin("journal init")?;
    if ctx.out.is_json() {
        ctx.out.record(&json!({
            "type": "summary",
            "command": "journal init",
            "created": !existed,
            "store": "sqlite",
            "schemaVersion": version,
            "chosenBy": ctx.journal_source.as_str(),
            "exitCode": exit::OK,
        }))?;
    } else if existed {
        ctx.out.line(&format!(
            "the journal at `{shown}` already exists (SQLite, schema version {version}); \
             nothing was created."
        ))?;
    } else {
        ctx.out.line(&format!(
            "created the journal at `{shown}` (SQLite, schema version {version}; chosen by {}).",
            ctx.journal_source.describe()
        ))?;
    }
    Ok(exit::OK)
}
