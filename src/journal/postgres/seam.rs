//! A private copy of the journal's backend-neutral SQL seam, so that the PostgreSQL driver can be
//! built and tested before the seam lands in `journal/`. **Deleted at the join**: the driver then
//! implements the seam's own types, which have exactly these names and shapes.
//!
//! The shared queries keep SQLite's `?N` placeholders; a backend runs them through [`Db`], reads
//! columns as [`Value`]s through [`Row`], and binds [`Arg`]s.

use std::borrow::Cow;
use std::fmt;

/// The SQL dialect of a backend, for the few statements that differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::journal) enum Dialect {
    /// SQLite (rusqlite).
    Sqlite,
    /// PostgreSQL (tokio-postgres).
    Postgres,
}

/// A borrowed column value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::journal) enum Value<'a> {
    /// SQL NULL.
    Null,
    /// An integer (booleans are 0 or 1).
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(&'a str),
    /// Bytes.
    Blob(&'a [u8]),
}

/// A statement's parameter.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::journal) enum Arg<'a> {
    /// SQL NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(Cow<'a, str>),
    /// Bytes.
    Blob(&'a [u8]),
}

/// One row of a result, as a backend holds it.
pub(in crate::journal) trait RawRow {
    /// Returns column `idx` (from 0).
    fn value(&self, idx: usize) -> DbResult<Value<'_>>;
}

/// What a statement fails with, before the store names what was being done.
#[derive(Debug)]
pub(in crate::journal) enum DbError {
    /// A query that must return a row returned none.
    NoRows,
    /// Column `idx` holds a value of another type than asked for.
    Conversion {
        /// The column (from 0).
        idx: usize,
        /// What was found.
        detail: String,
    },
    /// The backend's own error.
    Backend(Box<dyn std::error::Error + Send + Sync>),
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoRows => f.write_str("the query returned no rows"),
            Self::Conversion { idx, detail } => write!(f, "column {idx}: {detail}"),
            Self::Backend(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for DbError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Backend(e) => e.source(),
            _ => None,
        }
    }
}

/// The result of one statement.
pub(in crate::journal) type DbResult<T> = Result<T, DbError>;

/// A connection the shared SQL runs on.
pub(in crate::journal) trait Db {
    /// Returns the backend's dialect.
    fn dialect(&self) -> Dialect;
    /// Runs one statement; returns the number of rows it changed.
    fn exec(&self, sql: &str, args: &[Arg<'_>]) -> DbResult<u64>;
    /// Runs one query, calling `f` on each row in order.
    fn each(
        &self,
        sql: &str,
        args: &[Arg<'_>],
        f: &mut dyn FnMut(&Row<'_>) -> DbResult<()>,
    ) -> DbResult<()>;
    /// Runs several statements without parameters.
    fn batch(&self, sql: &str) -> DbResult<()>;
}

/// One row handed to a query's callback.
pub(in crate::journal) struct Row<'a>(pub &'a dyn RawRow);
