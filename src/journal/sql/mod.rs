//! The store seam: what every query of the journal is written against, naming no store's
//! types, and all SQL of the journal ([`queries`]).
//!
//! A store (`journal/sqlite/`, and PostgreSQL beside it) implements [`Db`] on its connection:
//! it runs a statement with [`Arg`]s and hands each result row to the caller as borrowed
//! [`Value`]s through [`Row`], which converts them to Rust types ([`FromValue`]). Statements
//! number their parameters `?1`, `?2`…; a store whose engine spells them otherwise rewrites
//! them. Where the engines' SQL truly differs (JSON functions), a query picks its text by
//! [`Db::dialect`]. A store maps its own errors to [`DbError::Backend`] and back to
//! `JournalError`s (it alone knows what "busy" or "disk full" look like).

pub(in crate::journal) mod artifact_count;
pub(in crate::journal) mod catalog;
pub(in crate::journal) mod push;
pub(in crate::journal) mod push_tidy;
pub(in crate::journal) mod queries;

use std::borrow::Cow;
use std::fmt;

/// The SQL dialect a store speaks, for the few statements whose text differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::journal) enum Dialect {
    /// SQLite (bundled).
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

/// A column value of a result row, borrowed from the store's row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::journal) enum Value<'a> {
    /// SQL NULL.
    Null,
    /// An integer (booleans are stored as 0 and 1).
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(&'a str),
    /// Bytes.
    Blob(&'a [u8]),
}

impl Value<'_> {
    /// Names the value's kind, for conversion errors.
    fn kind(&self) -> &'static str {
        match self {
            Self::Null => "NULL",
            Self::Int(_) => "an integer",
            Self::Real(_) => "a real",
            Self::Text(_) => "text",
            Self::Blob(_) => "a blob",
        }
    }
}

/// What a statement fails with, before the store names what was being done.
#[derive(Debug)]
pub(in crate::journal) enum DbError {
    /// A statement expected to return a row returned none.
    NoRows,
    /// Column `idx` holds a value that does not convert to what was asked.
    Conversion {
        /// The column's index.
        idx: usize,
        /// What was found, and what was wanted.
        detail: String,
    },
    /// The store's own error (its store maps it: busy, corrupt, disk full…).
    Backend(Box<dyn std::error::Error + Send + Sync>),
}

impl DbError {
    /// A conversion error of column `idx`.
    pub(in crate::journal) fn conversion(idx: usize, detail: impl fmt::Display) -> Self {
        Self::Conversion {
            idx,
            detail: detail.to_string(),
        }
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // rusqlite's words, which this error replaced.
            Self::NoRows => f.write_str("Query returned no rows"),
            Self::Conversion { idx, detail } => {
                write!(f, "Conversion error at column index {idx}: {detail}")
            }
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

/// A Rust type a column converts to.
pub(in crate::journal) trait FromValue: Sized {
    /// Converts column `idx`'s value.
    fn from_value(v: Value<'_>, idx: usize) -> DbResult<Self>;
}

fn wrong<T>(v: Value<'_>, idx: usize, wanted: &str) -> DbResult<T> {
    Err(DbError::conversion(
        idx,
        format_args!("found {}, wanted {wanted}", v.kind()),
    ))
}

impl FromValue for i64 {
    fn from_value(v: Value<'_>, idx: usize) -> DbResult<Self> {
        match v {
            Value::Int(i) => Ok(i),
            _ => wrong(v, idx, "an integer"),
        }
    }
}

macro_rules! from_int {
    ($($t:ty),*) => {$(
        impl FromValue for $t {
            fn from_value(v: Value<'_>, idx: usize) -> DbResult<Self> {
                let i = i64::from_value(v, idx)?;
                <$t>::try_from(i).map_err(|_| {
                    DbError::conversion(
                        idx,
                        format_args!("{i} is out of range for {}", stringify!($t)),
                    )
                })
            }
        }
    )*};
}
from_int!(i32, u32, u64, usize);

impl FromValue for bool {
    fn from_value(v: Value<'_>, idx: usize) -> DbResult<Self> {
        i64::from_value(v, idx).map(|i| i != 0)
    }
}

impl FromValue for f64 {
    fn from_value(v: Value<'_>, idx: usize) -> DbResult<Self> {
        match v {
            Value::Real(r) => Ok(r),
            #[expect(
                clippy::cast_precision_loss,
                reason = "as SQLite reads an integer as real"
            )]
            Value::Int(i) => Ok(i as f64),
            _ => wrong(v, idx, "a real"),
        }
    }
}

impl FromValue for String {
    fn from_value(v: Value<'_>, idx: usize) -> DbResult<Self> {
        match v {
            Value::Text(s) => Ok(s.to_owned()),
            _ => wrong(v, idx, "text"),
        }
    }
}

impl FromValue for Vec<u8> {
    fn from_value(v: Value<'_>, idx: usize) -> DbResult<Self> {
        match v {
            Value::Blob(b) => Ok(b.to_vec()),
            Value::Text(s) => Ok(s.as_bytes().to_vec()),
            _ => wrong(v, idx, "a blob"),
        }
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: Value<'_>, idx: usize) -> DbResult<Self> {
        match v {
            Value::Null => Ok(None),
            v => T::from_value(v, idx).map(Some),
        }
    }
}

/// A statement's parameter.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::journal) enum Arg<'a> {
    /// SQL NULL.
    Null,
    /// An integer (booleans are 0 and 1).
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(Cow<'a, str>),
    /// Bytes.
    Blob(&'a [u8]),
}

/// A value that can be a statement's parameter, borrowed ([`args!`] takes each by reference).
pub(in crate::journal) trait ToArg {
    /// Returns it as a parameter.
    fn to_arg(&self) -> Arg<'_>;
}

impl ToArg for Arg<'_> {
    fn to_arg(&self) -> Arg<'_> {
        match self {
            Arg::Text(s) => Arg::Text(Cow::Borrowed(s)),
            Arg::Null => Arg::Null,
            Arg::Int(i) => Arg::Int(*i),
            Arg::Real(r) => Arg::Real(*r),
            Arg::Blob(b) => Arg::Blob(b),
        }
    }
}

impl<T: ToArg + ?Sized> ToArg for &T {
    fn to_arg(&self) -> Arg<'_> {
        (**self).to_arg()
    }
}

impl<T: ToArg> ToArg for Option<T> {
    fn to_arg(&self) -> Arg<'_> {
        self.as_ref().map_or(Arg::Null, ToArg::to_arg)
    }
}

impl ToArg for str {
    fn to_arg(&self) -> Arg<'_> {
        Arg::Text(Cow::Borrowed(self))
    }
}

impl ToArg for String {
    fn to_arg(&self) -> Arg<'_> {
        Arg::Text(Cow::Borrowed(self))
    }
}

impl ToArg for [u8] {
    fn to_arg(&self) -> Arg<'_> {
        Arg::Blob(self)
    }
}

impl ToArg for Vec<u8> {
    fn to_arg(&self) -> Arg<'_> {
        Arg::Blob(self)
    }
}

impl ToArg for bool {
    fn to_arg(&self) -> Arg<'_> {
        Arg::Int(i64::from(*self))
    }
}

impl ToArg for f64 {
    fn to_arg(&self) -> Arg<'_> {
        Arg::Real(*self)
    }
}

macro_rules! to_arg_int {
    ($($t:ty),*) => {$(
        impl ToArg for $t {
            fn to_arg(&self) -> Arg<'_> {
                Arg::Int(i64::from(*self))
            }
        }
        impl From<$t> for Arg<'_> {
            fn from(v: $t) -> Self {
                Arg::Int(i64::from(v))
            }
        }
    )*};
}
to_arg_int!(i64, i32, u32);

macro_rules! to_arg_wide {
    ($($t:ty),*) => {$(
        impl ToArg for $t {
            fn to_arg(&self) -> Arg<'_> {
                Arg::from(*self)
            }
        }
        // Beyond i64 a value is clamped (as rusqlite refuses it, no journaled value gets there).
        impl From<$t> for Arg<'_> {
            fn from(v: $t) -> Self {
                Arg::Int(i64::try_from(v).unwrap_or(i64::MAX))
            }
        }
    )*};
}
to_arg_wide!(u64, usize);

impl From<bool> for Arg<'_> {
    fn from(v: bool) -> Self {
        Arg::Int(i64::from(v))
    }
}

impl From<f64> for Arg<'_> {
    fn from(v: f64) -> Self {
        Arg::Real(v)
    }
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(v: &'a str) -> Self {
        Arg::Text(Cow::Borrowed(v))
    }
}

impl<'a> From<&'a String> for Arg<'a> {
    fn from(v: &'a String) -> Self {
        Arg::Text(Cow::Borrowed(v))
    }
}

impl From<String> for Arg<'_> {
    fn from(v: String) -> Self {
        Arg::Text(Cow::Owned(v))
    }
}

impl<'a> From<&'a [u8]> for Arg<'a> {
    fn from(v: &'a [u8]) -> Self {
        Arg::Blob(v)
    }
}

impl<'a, T: Into<Arg<'a>>> From<Option<T>> for Arg<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Arg::Null, Into::into)
    }
}

/// A statement's parameters, `?1` first, each taken by reference (as `rusqlite::params!`):
/// `args![name, now]`.
macro_rules! args {
    () => {
        &[] as &[$crate::journal::sql::Arg<'_>]
    };
    ($($x:expr),+ $(,)?) => {
        &[$($crate::journal::sql::ToArg::to_arg(&$x)),+] as &[$crate::journal::sql::Arg<'_>]
    };
}
pub(in crate::journal) use args;

/// A store's result row: its column values, borrowed.
pub(in crate::journal) trait RawRow {
    /// Returns column `idx`'s value.
    fn value(&self, idx: usize) -> DbResult<Value<'_>>;
}

/// A result row, as a query reads it.
pub(in crate::journal) struct Row<'a>(pub(in crate::journal) &'a dyn RawRow);

impl Row<'_> {
    /// Returns column `idx` as a `T`.
    pub(in crate::journal) fn get<T: FromValue>(&self, idx: usize) -> DbResult<T> {
        T::from_value(self.0.value(idx)?, idx)
    }

    /// Returns text column `idx` borrowed, or `None` for NULL: what `get::<Option<String>>`
    /// reads, without the copy (a pass reads a dozen such columns a row only to parse them).
    pub(in crate::journal) fn opt_str(&self, idx: usize) -> DbResult<Option<&str>> {
        match self.0.value(idx)? {
            Value::Null => Ok(None),
            Value::Text(s) => Ok(Some(s)),
            v => wrong(v, idx, "text"),
        }
    }

    /// Returns text column `idx` borrowed: what `get::<String>` reads, without the copy.
    pub(in crate::journal) fn str(&self, idx: usize) -> DbResult<&str> {
        match self.0.value(idx)? {
            Value::Text(s) => Ok(s),
            v => wrong(v, idx, "text"),
        }
    }
}

/// A connection of a store, inside a transaction or not: what every query runs on.
pub(in crate::journal) trait Db {
    /// Returns the SQL dialect the store speaks.
    fn dialect(&self) -> Dialect;

    /// Runs a statement that returns no rows; returns how many rows it changed.
    fn exec(&self, sql: &str, args: &[Arg<'_>]) -> DbResult<u64>;

    /// Runs a query, calling `f` on each row in order.
    fn each(
        &self,
        sql: &str,
        args: &[Arg<'_>],
        f: &mut dyn FnMut(&Row<'_>) -> DbResult<()>,
    ) -> DbResult<()>;

    /// Runs statements separated by `;`, without parameters.
    fn batch(&self, sql: &str) -> DbResult<()>;

    /// Runs a one-row insert ([`InsertId`]) and returns the new row's `id`. SQLite runs it
    /// without `RETURNING` and reads the connection's last inserted rowid (the `id`): it runs a
    /// `RETURNING` statement by collecting its rows in a temporary b-tree first, as costly as
    /// the insert itself. PostgreSQL runs it with `RETURNING id`.
    fn insert_id(&self, insert: &InsertId, args: &[Arg<'_>]) -> DbResult<i64>;

    /// Runs `stmts` in order, as [`Db::exec`] or (those that return rows) [`Db::each`] would
    /// one after the other, handing `f` each row with its statement's index; stops at the
    /// first failure. A store that can sends them all before it waits for an answer
    /// (PostgreSQL: one round trip for a group commit's writes, not one per statement); the
    /// others run them one by one.
    fn pipeline(
        &self,
        stmts: &[Stmt<'_>],
        f: &mut dyn FnMut(usize, &Row<'_>) -> DbResult<()>,
    ) -> DbResult<()> {
        for (i, s) in stmts.iter().enumerate() {
            if s.rows {
                self.each(&s.sql, &s.args, &mut |r| f(i, r))?;
            } else {
                self.exec(&s.sql, &s.args)?;
            }
        }
        Ok(())
    }
}

/// An `INSERT INTO … VALUES (…)` of one row into a table whose `id` is its `INTEGER PRIMARY
/// KEY`, in both forms a store may run ([`Db::insert_id`]); [`insert_id!`] builds it.
#[derive(Debug)]
pub(in crate::journal) struct InsertId {
    /// The statement as written, returning no row.
    pub(in crate::journal) sql: &'static str,
    /// The same statement followed by `RETURNING id`.
    pub(in crate::journal) returning: &'static str,
}

/// An [`InsertId`] from the text of its insert (a literal), without `RETURNING`:
/// `insert_id!("INSERT INTO t (x) VALUES (?1)")`.
macro_rules! insert_id {
    ($sql:literal) => {
        $crate::journal::sql::InsertId {
            sql: $sql,
            returning: concat!($sql, "\n RETURNING id"),
        }
    };
}
pub(in crate::journal) use insert_id;

/// A statement and its parameters, built to be run later ([`Db::pipeline`]).
#[derive(Debug)]
pub(in crate::journal) struct Stmt<'a> {
    /// The SQL (`?N` parameters).
    pub(in crate::journal) sql: Cow<'static, str>,
    /// Its parameters, `?1` first.
    pub(in crate::journal) args: Vec<Arg<'a>>,
    /// Whether it returns rows (`SELECT`, `RETURNING`): run as a query, not executed.
    pub(in crate::journal) rows: bool,
}

impl dyn Db + '_ {
    /// Returns `f` of the query's first row; [`DbError::NoRows`] when it has none.
    pub(in crate::journal) fn row<T>(
        &self,
        sql: &str,
        args: &[Arg<'_>],
        f: impl FnOnce(&Row<'_>) -> DbResult<T>,
    ) -> DbResult<T> {
        self.opt_row(sql, args, f)?.ok_or(DbError::NoRows)
    }

    /// Returns `f` of the query's first row, `None` when it has none.
    pub(in crate::journal) fn opt_row<T>(
        &self,
        sql: &str,
        args: &[Arg<'_>],
        f: impl FnOnce(&Row<'_>) -> DbResult<T>,
    ) -> DbResult<Option<T>> {
        let mut f = Some(f);
        let mut out = None;
        self.each(sql, args, &mut |r| {
            if let Some(f) = f.take() {
                out = Some(f(r)?);
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// Returns `f` of every row of the query, in order.
    pub(in crate::journal) fn rows<T>(
        &self,
        sql: &str,
        args: &[Arg<'_>],
        mut f: impl FnMut(&Row<'_>) -> DbResult<T>,
    ) -> DbResult<Vec<T>> {
        let mut out = Vec::new();
        self.each(sql, args, &mut |r| {
            out.push(f(r)?);
            Ok(())
        })?;
        Ok(out)
    }
}

/// The connection a statement runs on: inside a write, the open transaction.
pub(super) type Tx = dyn Db;

#[cfg(test)]
pub(in crate::journal) mod tests;
