//! The store a journal keeps its rows in: one arm per engine, each running the shared queries
//! (`journal/sql/`) through the store seam. Every operation reaches its store through
//! [`Store::read`] and [`Store::transaction`]; what an engine answers its own way (SQLite's
//! `data_version` and pages) is a method here too.

use std::path::Path;
use std::time::Duration;

use super::postgres::PgStore;
use super::sql::{DbError, DbResult, Tx};
use super::sqlite;
use super::{AttemptId, JournalError};

/// An open store.
pub(super) enum Store {
    /// A local SQLite file (`journal/sqlite/`).
    Sqlite(sqlite::Store),
    /// A schema on a PostgreSQL server (`journal/postgres/`).
    Postgres(Box<PgStore>),
}

impl Store {
    /// Returns where the journal is (its file).
    pub(super) fn path(&self) -> &Path {
        match self {
            Self::Sqlite(s) => s.path(),
            Self::Postgres(s) => s.shown_path(),
        }
    }

    /// Returns the longest wait for another process's lock.
    pub(super) fn busy_timeout(&self) -> Duration {
        match self {
            Self::Sqlite(s) => s.busy_timeout(),
            Self::Postgres(s) => s.busy_timeout(),
        }
    }

    /// Returns the mapper of a statement's error to a [`JournalError`] saying `action`.
    pub(super) fn err(&self, action: &'static str) -> impl Fn(DbError) -> JournalError + '_ {
        move |e| match self {
            Self::Sqlite(s) => s.err(action)(e),
            Self::Postgres(s) => s.err(action)(e),
        }
    }

    /// Runs `f` on a connection (reads).
    pub(super) fn read<T>(
        &self,
        action: &'static str,
        f: impl FnOnce(&Tx) -> DbResult<T>,
    ) -> Result<T, JournalError> {
        match self {
            Self::Sqlite(s) => s.read(action, f),
            Self::Postgres(s) => s.read(action, |c| f(c)),
        }
    }

    /// Runs `f` in one write transaction, committed only when `f` says it changed something
    /// (otherwise it is rolled back: nothing reaches the disk). `f` gets the transaction and
    /// the error mapper for `action`.
    pub(super) fn transaction<T>(
        &self,
        action: &'static str,
        f: impl FnOnce(&Tx, &dyn Fn(DbError) -> JournalError) -> Result<(T, bool), JournalError>,
    ) -> Result<T, JournalError> {
        match self {
            Self::Sqlite(s) => s.transaction(action, f),
            Self::Postgres(s) => s.transaction(action, |c, e| f(c, e)),
        }
    }

    /// Runs `f` as [`Store::transaction`] does, for a transaction that changes only the rows
    /// of `attempts` (see [`PgStore::attempts_transaction`]): on PostgreSQL such transactions
    /// of different attempts run side by side; SQLite has one writer at a time all the same.
    pub(super) fn attempts_transaction<T>(
        &self,
        attempts: &[AttemptId],
        action: &'static str,
        f: impl FnOnce(&Tx, &dyn Fn(DbError) -> JournalError) -> Result<(T, bool), JournalError>,
    ) -> Result<T, JournalError> {
        match self {
            Self::Sqlite(s) => s.transaction(action, f),
            Self::Postgres(s) => s.attempts_transaction(attempts, action, |c, e| f(c, e)),
        }
    }

    /// Returns a number that changes when another connection commits (SQLite's
    /// `data_version`); tests use it to prove a no-op wrote nothing.
    pub(super) fn data_version(&self) -> Result<i64, JournalError> {
        match self {
            Self::Sqlite(s) => s.data_version(),
            Self::Postgres(s) => s.data_version(),
        }
    }

    /// Returns the store's page size, page count and free pages (`prune`'s storage report).
    pub(super) fn page_counts(&self) -> Result<(u64, u64, u64), JournalError> {
        match self {
            Self::Sqlite(s) => s.page_counts(),
            Self::Postgres(s) => s.page_counts(),
        }
    }

    /// Returns the PostgreSQL store (tests that reach the server directly).
    #[cfg(test)]
    pub(super) fn postgres(&self) -> &PgStore {
        match self {
            Self::Postgres(s) => s,
            Self::Sqlite(_) => panic!("a PostgreSQL-only step ran on a SQLite journal"),
        }
    }

    /// Returns the SQLite store (tests that look at SQLite's own state).
    #[cfg(test)]
    pub(super) fn sqlite(&self) -> &sqlite::Store {
        match self {
            Self::Sqlite(s) => s,
            Self::Postgres(_) => panic!("a SQLite-only test ran on a PostgreSQL journal"),
        }
    }
}
