//! `JournalError`: everything that can go wrong below the journal's interface.
//!
//! Every variant names the journal file (or the row) it concerns; the command layer
//! (`commands/util/hints.rs`) says what the operator can do. `src/error.rs` maps every variant to exit 1.

use std::path::PathBuf;

use crate::journal::model::TransitionError;

/// An error of the journal.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// A file-system operation on the journal or its directory failed.
    #[error("failed to {action} `{}`", path.display())]
    Io {
        /// What was being done, a lowercase fragment ("create the journal directory").
        action: &'static str,
        /// The path concerned.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The journal path is a symbolic link whose target does not exist.
    #[error("the journal `{}` is a broken symbolic link", path.display())]
    BrokenSymlink {
        /// The link.
        path: PathBuf,
    },
    /// The file exists but is not an SQLite database.
    #[error("`{}` is not an SQLite database", path.display())]
    NotSqlite {
        /// The file.
        path: PathBuf,
    },
    /// The file is an SQLite database of another application.
    #[error("`{}` is an SQLite database, but not an a2a-recover journal", path.display())]
    NotAJournal {
        /// The file.
        path: PathBuf,
    },
    /// The file is an SQLite database, but damaged (truncated, malformed).
    #[error("the journal `{}` is corrupt: {detail}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// `journal copy` copied this journal elsewhere and marked it: it is kept only as a record,
    /// and no command works on it any more (two live copies would send the same intents).
    #[error("the journal `{}` was moved to `{to}` on {at}", path.display())]
    Moved {
        /// The old journal.
        path: PathBuf,
        /// Where it was moved to (a path, or a URL without its password).
        to: String,
        /// When (RFC 3339).
        at: String,
    },
    /// `journal copy`'s target already holds a journal (two journals are never merged).
    #[error(
        "the target journal `{}` is not empty: its table `{table}` holds rows",
        path.display()
    )]
    TargetNotEmpty {
        /// The target.
        path: PathBuf,
        /// The first table found holding rows.
        table: String,
    },
    /// `journal copy`'s two journals do not hold the same tables and columns.
    #[error("cannot copy `{}` into `{}`: {detail}", from.display(), to.display())]
    CopySchema {
        /// The source.
        from: PathBuf,
        /// The target.
        to: PathBuf,
        /// What differs.
        detail: String,
    },
    /// `journal copy`'s verification found a row of the copy that differs from the source's.
    #[error(
        "the copy in `{}` differs from the source in table `{table}` at row {key}: {detail}",
        path.display()
    )]
    CopyMismatch {
        /// The target.
        path: PathBuf,
        /// The table.
        table: String,
        /// The row's primary key, as `(column=value, …)`.
        key: String,
        /// What differs.
        detail: String,
    },
    /// A write was attempted on a journal written by a newer a2a-recover.
    #[error(
        "the journal `{}` has schema version {found}; this a2a-recover knows up to {known}",
        path.display()
    )]
    NewerVersion {
        /// The file.
        path: PathBuf,
        /// The journal's `user_version`.
        found: i64,
        /// The newest version this binary knows.
        known: i64,
    },
    /// A write was attempted on a journal opened with [`crate::journal::Journal::open_read_only`].
    #[error(
        "the journal `{}` was opened read-only, and this needs a write (to create, migrate or \
         change it)",
        path.display()
    )]
    ReadOnly {
        /// The file.
        path: PathBuf,
    },
    /// Another process held the journal longer than the busy timeout.
    #[error("the journal `{}` stayed busy for {}", path.display(), humantime(*waited))]
    Busy {
        /// The file.
        path: PathBuf,
        /// How long we waited.
        waited: std::time::Duration,
    },
    /// The storage engine failed while doing `action`.
    #[error("failed to {action} in the journal")]
    Storage {
        /// What was being done, a lowercase fragment.
        action: &'static str,
        /// What the operator can do, when the engine's error says (disk full, permissions).
        hint: Option<&'static str>,
        /// The engine's error (kept opaque: no storage type leaks out of the journal).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A row holds a value this version cannot read (a state name, a JSON column).
    #[error("the journal holds an unreadable value in `{column}`: {detail}")]
    BadValue {
        /// The column.
        column: &'static str,
        /// What was found.
        detail: String,
    },
    /// No attempt with this id exists.
    #[error("no attempt {0} in the journal")]
    UnknownAttempt(i64),
    /// No step with this name exists.
    #[error("no step `{0}` in the journal")]
    UnknownStep(String),
    /// No workflow with this name exists.
    #[error("no workflow `{0}` in the journal")]
    UnknownWorkflow(String),
    /// An observation does not apply to the attempt's state (a bug in the caller).
    #[error("attempt {attempt} cannot take this observation")]
    Transition {
        /// The attempt.
        attempt: i64,
        /// Why.
        #[source]
        source: TransitionError,
    },
    /// A task observation names another task than the one journaled for the attempt.
    #[error("attempt {attempt} is journaled with task `{held}`, not `{seen}`")]
    TaskMismatch {
        /// The attempt.
        attempt: i64,
        /// The journaled task id.
        held: String,
        /// The observed task id.
        seen: String,
    },
    /// A new attempt would exceed the step's attempt budget.
    #[error("step `{step}` has used its {max} attempts")]
    BudgetSpent {
        /// The step.
        step: String,
        /// Its budget.
        max: u32,
    },
    /// A decision names an attempt that is no longer the step's latest (another process
    /// moved on meanwhile).
    #[error("attempt {attempt} of step `{step}` is no longer its latest (attempt {latest} is)")]
    NotLatest {
        /// The step.
        step: String,
        /// The attempt decided on.
        attempt: u32,
        /// The step's latest attempt now.
        latest: u32,
    },
    /// A decision that does not apply to the attempt's state (`resend` of an attempt that is
    /// not `UNCERTAIN`, `retry` of an attempt still running).
    #[error("attempt {attempt} of step `{step}` is {state}: {why}")]
    Undecidable {
        /// The step.
        step: String,
        /// The attempt.
        attempt: u32,
        /// Its state.
        state: crate::journal::model::AttemptState,
        /// The decision.
        resolution: crate::journal::model::Resolution,
        /// Why it does not apply, a lowercase fragment.
        why: &'static str,
    },
    /// A decision that would send, in a workflow that gets no sends.
    #[error("workflow `{workflow}` is {state}: it gets no sends")]
    WorkflowClosed {
        /// The workflow.
        workflow: String,
        /// Its state.
        state: crate::journal::model::WorkflowState,
    },
    /// `resolve --undo` with no decision to take back, or one whose send already happened.
    #[error("step `{step}`: {why}")]
    NotUndoable {
        /// The step.
        step: String,
        /// Why, a lowercase sentence.
        why: String,
    },
}

fn humantime(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

impl JournalError {
    /// Returns whether the operator asked for something the journal's state does not allow
    /// (a usage error, exit 2, rather than a failure of a2a-recover).
    pub fn is_refused_decision(&self) -> bool {
        matches!(
            self,
            Self::UnknownStep(_)
                | Self::BudgetSpent { .. }
                | Self::NotLatest { .. }
                | Self::Undecidable { .. }
                | Self::WorkflowClosed { .. }
                | Self::NotUndoable { .. }
        )
    }
}
