//! The seam on an SQLite connection: [`Db`] for `rusqlite::Connection` (a transaction derefs
//! to one), every statement through the connection's prepared-statement cache, every column
//! read borrowed from SQLite's row (no allocation per column).

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ToSql};

use crate::journal::sql::{Arg, Db, DbError, DbResult, Dialect, RawRow, Row, Value};

/// How many prepared statements a connection keeps (every statement of the journal fits).
pub(super) const STATEMENT_CACHE: usize = 128;

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        match e {
            rusqlite::Error::QueryReturnedNoRows => Self::NoRows,
            e => Self::Backend(Box::new(e)),
        }
    }
}

impl ToSql for Arg<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Arg::Null => ValueRef::Null,
            Arg::Int(i) => ValueRef::Integer(*i),
            Arg::Real(r) => ValueRef::Real(*r),
            Arg::Text(s) => ValueRef::Text(s.as_bytes()),
            Arg::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

impl RawRow for rusqlite::Row<'_> {
    fn value(&self, idx: usize) -> DbResult<Value<'_>> {
        Ok(match self.get_ref(idx)? {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(i) => Value::Int(i),
            ValueRef::Real(r) => Value::Real(r),
            ValueRef::Text(t) => {
                Value::Text(std::str::from_utf8(t).map_err(|e| DbError::conversion(idx, e))?)
            }
            ValueRef::Blob(b) => Value::Blob(b),
        })
    }
}

/// `execute` and `query` through the connection's prepared-statement cache.
///
/// A reconcile pass runs the same few statements for every item; parsing and planning them
/// again each time cost more than running them (callgrind, a pass over 5,000 running tasks: 59 %
/// of all instructions were in `sqlite3_prepare`). See docs/performance.md.
impl Db for Connection {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn exec(&self, sql: &str, args: &[Arg<'_>]) -> DbResult<u64> {
        let n = self
            .prepare_cached(sql)?
            .execute(rusqlite::params_from_iter(args))?;
        Ok(n as u64)
    }

    fn each(
        &self,
        sql: &str,
        args: &[Arg<'_>],
        f: &mut dyn FnMut(&Row<'_>) -> DbResult<()>,
    ) -> DbResult<()> {
        let mut stmt = self.prepare_cached(sql)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(args))?;
        while let Some(r) = rows.next()? {
            f(&Row(r))?;
        }
        Ok(())
    }

    fn batch(&self, sql: &str) -> DbResult<()> {
        Ok(self.execute_batch(sql)?)
    }
}
