//! The seam on an SQLite connection: [`Db`] for `rusqlite::Connection` (a transaction derefs
//! to one), every statement through the connection's prepared-statement cache, every column
//! read borrowed from SQLite's row (no allocation per column).

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ToSql};

use crate::journal::sql::{Arg, Db, DbError, DbResult, Dialect, InsertId, RawRow, Row, Value};

/// How many prepared statements a connection keeps (every statement of the journal fits).
pub(super) const STATEMENT_CACHE: usize = 128;

#[cfg(test)]
thread_local! {
    /// The statements run through [`Db`] on this thread (tests count an operation's).
    pub(in crate::journal) static STATEMENTS: std::cell::Cell<u64> =
        const { std::cell::Cell::new(0) };
}

/// Counts a statement run (`STATEMENTS`; nothing outside tests).
fn counted() {
    #[cfg(test)]
    STATEMENTS.with(|n| n.set(n.get() + 1));
}

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
        counted();
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
        counted();
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

    /// Runs the insert without `RETURNING`; its row's `id` (every journal table's `INTEGER
    /// PRIMARY KEY`, the rowid) is the connection's last inserted rowid.
    fn insert_id(&self, insert: &InsertId, args: &[Arg<'_>]) -> DbResult<i64> {
        counted();
        match self
            .prepare_cached(insert.sql)?
            .execute(rusqlite::params_from_iter(args))?
        {
            1 => Ok(self.last_insert_rowid()),
            0 => Err(DbError::NoRows),
            n => Err(DbError::Backend(
                format!("{n} rows for one id: {}", insert.sql).into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::sql::{args, insert_id};

    #[test]
    fn a_one_row_insert_returns_its_id_without_returning() {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, x INTEGER NOT NULL, y INTEGER UNIQUE);
             INSERT INTO t (id, x) VALUES (41, 0);",
        )
        .unwrap();
        let db: &dyn Db = &c;
        let next = insert_id!("INSERT INTO t (x) VALUES ((SELECT COALESCE(MAX(x), 0) + 1 FROM t))");
        assert_eq!(db.insert_id(&next, &[]).unwrap(), 42);
        assert_eq!(db.insert_id(&next, &[]).unwrap(), 43);
        let with_y = insert_id!("INSERT INTO t (x, y) VALUES (?1, 1)");
        assert_eq!(db.insert_id(&with_y, args![1]).unwrap(), 44);
        assert!(
            db.insert_id(&with_y, args![2]).is_err(),
            "a constraint fails the insert as before"
        );
        // The id read is this insert's, not an earlier one's.
        db.exec("INSERT INTO t (id, x) VALUES (100, 0)", &[])
            .unwrap();
        assert_eq!(db.insert_id(&next, &[]).unwrap(), 101);
        let rows = db
            .rows(with_y.returning, args![3], |r| r.get::<i64>(0))
            .unwrap_err();
        assert!(rows.to_string().contains("UNIQUE"), "{rows}");
        assert_eq!(
            db.rows(next.returning, &[], |r| r.get::<i64>(0)).unwrap(),
            [102],
            "the form PostgreSQL runs returns the same id"
        );
    }
}
