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
        if let Some(insert) = insert_returning_id(sql) {
            let mut stmt = self.prepare_cached(insert)?;
            match stmt.execute(rusqlite::params_from_iter(args))? {
                0 => return Ok(()),
                1 => return f(&Row(&RowId(self.last_insert_rowid()))),
                // `VALUES (…), (…)`: write it with `RETURNING` read as rows in another way.
                n => {
                    return Err(DbError::Backend(
                        format!("{n} rows for one id: {sql}").into(),
                    ));
                }
            }
        }
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

/// Returns `sql` without its `RETURNING id` when it is a plain `INSERT INTO … VALUES (…)
/// RETURNING id` (no `ON CONFLICT`, not `INSERT … SELECT`): one row, whose `id` (every journal
/// table's `INTEGER PRIMARY KEY`, the rowid) SQLite reports as the connection's last inserted
/// rowid.
///
/// SQLite runs a `RETURNING` statement by collecting its rows in a temporary b-tree first,
/// built anew each time it runs: as costly as the insert itself (docs/performance.md).
fn insert_returning_id(sql: &str) -> Option<&str> {
    let insert = sql.trim_end().strip_suffix("RETURNING id")?;
    let plain = insert.trim_start().starts_with("INSERT INTO ")
        && insert.ends_with(char::is_whitespace)
        && insert.contains("VALUES")
        && !insert.contains("ON CONFLICT");
    plain.then_some(insert)
}

/// The one row of an insert's `RETURNING id`.
struct RowId(i64);

impl RawRow for RowId {
    fn value(&self, idx: usize) -> DbResult<Value<'_>> {
        match idx {
            0 => Ok(Value::Int(self.0)),
            _ => Err(DbError::conversion(idx, "no such column")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::sql::args;

    #[test]
    fn a_one_row_insert_returns_its_id_without_returning() {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, x INTEGER NOT NULL, y INTEGER UNIQUE);
             INSERT INTO t (id, x) VALUES (41, 0);",
        )
        .unwrap();
        let sql = "INSERT INTO t (x) VALUES ((SELECT COALESCE(MAX(x), 0) + 1 FROM t))
         RETURNING id";
        assert!(insert_returning_id(sql).is_some());
        let db: &dyn Db = &c;
        assert_eq!(db.row(sql, &[], |r| r.get::<i64>(0)).unwrap(), 42);
        assert_eq!(db.row(sql, &[], |r| r.get::<i64>(0)).unwrap(), 43);
        let with_y = db.row(
            "INSERT INTO t (x, y) VALUES (?1, 1) RETURNING id",
            args![1],
            |r| r.get::<i64>(0),
        );
        assert_eq!(with_y.unwrap(), 44);
        assert!(
            db.row(
                "INSERT INTO t (x, y) VALUES (?1, 1) RETURNING id",
                args![2],
                |r| { r.get::<i64>(0) }
            )
            .is_err(),
            "a constraint fails the insert as before"
        );
        for kept in [
            "INSERT INTO t (x) SELECT x FROM t RETURNING id",
            "INSERT INTO t (id, x) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET x = 2 RETURNING id",
            "INSERT OR IGNORE INTO t (x) VALUES (1) RETURNING id",
            "UPDATE t SET x = 1 RETURNING id",
            "INSERT INTO t (x) VALUES (1) RETURNING id, x",
        ] {
            assert_eq!(insert_returning_id(kept), None, "{kept}");
        }
        let upserted = db
            .rows(
                "INSERT INTO t (id, x) VALUES (42, 7) ON CONFLICT (id) DO UPDATE SET x = 7 \
                 RETURNING id",
                &[],
                |r| r.get::<i64>(0),
            )
            .unwrap();
        assert_eq!(upserted, [42]);
    }
}
