//! The SQLite store: the only code of the journal that names rusqlite. It opens and checks the
//! file ([`open`]), holds the connection, runs the journal's queries on it through the store
//! seam ([`db`]: `Db` for `rusqlite::Connection`), runs each operation in one short
//! transaction, maps SQLite's errors to [`JournalError`], and answers what only SQLite knows
//! ([`pragmas`]: the probes of opening, `data_version`, the page counts).
//!
//! The queries themselves are the journal's, shared by every store (`journal/sql/`); a second
//! store (PostgreSQL) goes beside this module, with its own connection and error mapping
//! (docs/architecture.md, "The journal's face").

mod busy;
mod db;
mod open;
mod pragmas;

#[cfg(test)]
pub(in crate::journal) use db::STATEMENTS;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use super::JournalError;
use super::sql::{DbError, DbResult, Tx};

/// How large the WAL may be for a closing connection to leave it as it is (4 MiB, about
/// SQLite's own automatic checkpoint at 1,000 pages): a short-lived process (one `delegate`)
/// then neither checkpoints at close (two fsyncs) nor deletes the WAL, so that the next one
/// need not create it again (two more: its header and the directory). Every commit is durable
/// in the WAL all the same; docs/journal.md says how to back such a journal up. The next
/// process reads the whole WAL once to rebuild its index (about 0.35 M instructions per MiB);
/// a smaller size was measured and was no faster (docs/performance.md).
pub(super) const WAL_KEPT: u32 = 4 * 1024 * 1024;

/// An open SQLite journal: its one connection, and what its errors name.
pub(super) struct Store {
    conn: Mutex<Connection>,
    path: PathBuf,
    busy_timeout: Duration,
    /// Whether closing may checkpoint (a sound, writable journal).
    checkpoints: bool,
}

/// Closing checkpoints the WAL into the file (and deletes it, when no other connection is
/// open) only once it has grown past [`WAL_KEPT`].
impl Drop for Store {
    fn drop(&mut self) {
        if !self.checkpoints {
            return;
        }
        let wal = super::file::sibling(&self.path, "-wal");
        let grown = std::fs::metadata(wal).is_ok_and(|m| m.len() > u64::from(WAL_KEPT));
        let conn = self.conn.get_mut().unwrap_or_else(PoisonError::into_inner);
        if let Err(e) = pragmas::set_checkpoint_on_close(conn, grown) {
            tracing::debug!("failed to set the journal's checkpoint at close: {e}");
        }
    }
}

impl Store {
    /// Returns the journal file's path.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Returns the longest wait for another process's lock.
    pub(super) fn busy_timeout(&self) -> Duration {
        self.busy_timeout
    }

    /// Returns the connection, for one operation (tests reach it directly).
    pub(super) fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Returns the mapper of a statement's error to a [`JournalError`] saying `action`.
    pub(super) fn err(&self, action: &'static str) -> impl Fn(DbError) -> JournalError + '_ {
        move |e| error(action, &self.path, self.busy_timeout, e)
    }

    /// Runs `f` on the connection (reads).
    pub(super) fn read<T>(
        &self,
        action: &'static str,
        f: impl FnOnce(&Tx) -> DbResult<T>,
    ) -> Result<T, JournalError> {
        let conn = self.lock();
        f(&*conn).map_err(self.err(action))
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction, committed only when `f` says it changed
    /// something (otherwise dropping the transaction rolls it back: nothing reaches the disk).
    /// `f` gets the transaction and the error mapper for `action`.
    pub(super) fn transaction<T>(
        &self,
        action: &'static str,
        f: impl FnOnce(&Tx, &dyn Fn(DbError) -> JournalError) -> Result<(T, bool), JournalError>,
    ) -> Result<T, JournalError> {
        let mut conn = self.lock();
        let e = self.err(action);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|x| e(x.into()))?;
        let (out, changed) = f(&*tx, &e)?;
        if changed {
            tx.commit().map_err(|x| e(x.into()))?;
        }
        Ok(out)
    }

    /// Returns SQLite's `data_version` for this connection (it changes when another
    /// connection commits).
    pub(super) fn data_version(&self) -> Result<i64, JournalError> {
        pragmas::data_version(&self.lock())
            .map_err(|e| error("read the data version", &self.path, self.busy_timeout, e))
    }

    /// Returns the page size, the page count and the free-list length.
    pub(super) fn page_counts(&self) -> Result<(u64, u64, u64), JournalError> {
        pragmas::page_counts(&self.lock())
            .map_err(|e| error("read the journal's size", &self.path, self.busy_timeout, e))
    }
}

/// Wraps an SQLite error, turning "busy" and "corrupt" into their own variants; the rest
/// becomes an opaque [`JournalError::Storage`].
fn error(
    action: &'static str,
    path: &Path,
    busy_timeout: Duration,
    source: impl Into<DbError>,
) -> JournalError {
    use rusqlite::ErrorCode as C;
    let source = source.into();
    let code = match &source {
        DbError::Backend(e) => e
            .downcast_ref::<rusqlite::Error>()
            .and_then(rusqlite::Error::sqlite_error_code),
        _ => None,
    };
    match code {
        Some(C::DatabaseBusy | C::DatabaseLocked) => JournalError::Busy {
            path: path.to_path_buf(),
            waited: busy_timeout,
        },
        Some(C::DatabaseCorrupt | C::NotADatabase) => JournalError::Corrupt {
            path: path.to_path_buf(),
            detail: source.to_string(),
        },
        code => JournalError::Storage {
            action,
            hint: match code {
                Some(C::DiskFull) => Some("the disk is full; free some space and run again"),
                Some(C::ReadOnly | C::CannotOpen) => {
                    Some("check the permissions of the journal and its directory")
                }
                Some(C::SystemIoFailure) => Some(
                    "the journal's file system failed a read or write: check that it has \
                     space (`df`), is mounted writable and healthy (`dmesg`), and that no \
                     file-size limit applies (`ulimit -f`); nothing half-written was kept, \
                     so run again once it is fixed",
                ),
                _ => None,
            },
            // SQLite's own error as it is; a conversion error, or no row, as the seam says it.
            source: match source {
                DbError::Backend(e) => e,
                other => Box::new(other),
            },
        },
    }
}
