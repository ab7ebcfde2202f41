//! The SQLite store: the only code of the journal that names rusqlite. It opens and checks the
//! file ([`open`]), holds the connection, runs each operation in one short transaction, maps
//! SQLite's errors to [`JournalError`], and keeps all SQL in [`queries`].
//!
//! A second store (PostgreSQL) goes beside this module, with its own connection, error mapping
//! and queries; the operation files (`journal/*.rs`) reach the store only through [`Store`],
//! [`Tx`] and `queries` (docs/architecture.md, "The journal's face").

mod open;
pub(super) mod queries;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use super::JournalError;

/// The connection a statement runs on: inside a write, the open transaction (a
/// `rusqlite::Transaction` derefs to it).
pub(super) type Tx = Connection;

/// What a statement fails with, before [`Store::err`] names what was being done.
pub(super) type SqlError = rusqlite::Error;

/// The result of one statement.
pub(super) type SqlResult<T> = rusqlite::Result<T>;

/// An open SQLite journal: its one connection, and what its errors name.
pub(super) struct Store {
    conn: Mutex<Connection>,
    path: PathBuf,
    busy_timeout: Duration,
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
    pub(super) fn err(&self, action: &'static str) -> impl Fn(SqlError) -> JournalError + '_ {
        move |e| error(action, &self.path, self.busy_timeout, e)
    }

    /// Runs `f` on the connection (reads).
    pub(super) fn read<T>(
        &self,
        action: &'static str,
        f: impl FnOnce(&Tx) -> SqlResult<T>,
    ) -> Result<T, JournalError> {
        let conn = self.lock();
        f(&conn).map_err(self.err(action))
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction, committed only when `f` says it changed
    /// something (otherwise dropping the transaction rolls it back: nothing reaches the disk).
    /// `f` gets the transaction and the error mapper for `action`.
    pub(super) fn transaction<T>(
        &self,
        action: &'static str,
        f: impl FnOnce(&Tx, &dyn Fn(SqlError) -> JournalError) -> Result<(T, bool), JournalError>,
    ) -> Result<T, JournalError> {
        let mut conn = self.lock();
        let e = self.err(action);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(&e)?;
        let (out, changed) = f(&tx, &e)?;
        if changed {
            tx.commit().map_err(&e)?;
        }
        Ok(out)
    }
}

/// Wraps an SQLite error, turning "busy" and "corrupt" into their own variants; the rest
/// becomes an opaque [`JournalError::Storage`].
fn error(
    action: &'static str,
    path: &Path,
    busy_timeout: Duration,
    source: SqlError,
) -> JournalError {
    use rusqlite::ErrorCode as C;
    match source.sqlite_error_code() {
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
            source: Box::new(source),
        },
    }
}
