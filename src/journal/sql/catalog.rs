//! The journal's tables as each store's catalogue describes them, and the generic statements
//! `journal copy` runs over any of them: pages of rows in primary-key order, multi-row inserts,
//! and (PostgreSQL) moving an identity counter past the highest id. Nothing here names a table
//! of the schema: a migration that adds a table or a column is copied without a change here.
//!
//! Identifiers come from the store's own catalogue and are quoted all the same. Text keys are
//! ordered bytewise on both stores (SQLite's `BINARY`, PostgreSQL's `"C"` collation), so that
//! both sides of a copy walk their rows in the same order.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{Arg, DbResult, Dialect, Row, Tx, Value, args};

/// Tables `journal copy` never copies: the moved mark (a journal's own history) and
/// PostgreSQL's version table (each store keeps its version its own way).
pub(in crate::journal) const NOT_COPIED: &[&str] = &["moved", "schema_migrations"];

/// One column of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::journal) struct Column {
    /// Its name.
    pub(in crate::journal) name: String,
    /// Whether it holds text (ordered bytewise when it is part of the key).
    pub(in crate::journal) text: bool,
    /// Whether the store numbers it itself (a PostgreSQL identity column).
    pub(in crate::journal) identity: bool,
    /// Whether it is SQLite's hidden `rowid` of a table without an `INTEGER PRIMARY KEY`,
    /// named `id` here: the insertion order some reads sort by, which the PostgreSQL schema
    /// keeps in an identity column `id` (`artifacts`).
    pub(in crate::journal) rowid: bool,
}

impl Column {
    /// Returns how a statement names it.
    fn sql(&self) -> String {
        if self.rowid {
            "rowid".to_owned()
        } else {
            quote(&self.name)
        }
    }
}

/// One table of the journal, as its store describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::journal) struct Table {
    /// Its name.
    pub(in crate::journal) name: String,
    /// Its columns, in the order they are read and written.
    pub(in crate::journal) columns: Vec<Column>,
    /// The indexes in `columns` of its primary key, in key order.
    pub(in crate::journal) key: Vec<usize>,
    /// The tables its foreign keys reference (itself excluded).
    pub(in crate::journal) references: Vec<String>,
}

/// A column value, owned: a row read from one store, to write to the other.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::journal) enum Owned {
    /// SQL NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

impl Owned {
    fn from_value(v: Value<'_>) -> Self {
        match v {
            Value::Null => Self::Null,
            Value::Int(i) => Self::Int(i),
            Value::Real(r) => Self::Real(r),
            Value::Text(t) => Self::Text(t.to_owned()),
            Value::Blob(b) => Self::Blob(b.to_vec()),
        }
    }

    /// Returns it as a statement's parameter.
    pub(in crate::journal) fn arg(&self) -> Arg<'_> {
        match self {
            Self::Null => Arg::Null,
            Self::Int(i) => Arg::Int(*i),
            Self::Real(r) => Arg::Real(*r),
            Self::Text(t) => Arg::Text(t.as_str().into()),
            Self::Blob(b) => Arg::Blob(b),
        }
    }

    /// Returns roughly how many bytes it holds (to size the next page).
    pub(in crate::journal) fn size(&self) -> usize {
        match self {
            Self::Null | Self::Int(_) | Self::Real(_) => 8,
            Self::Text(t) => t.len(),
            Self::Blob(b) => b.len(),
        }
    }

    /// Returns whether two stores hold the same value (an integer and a real of equal value
    /// are the same: a REAL column may hand back either).
    #[expect(
        clippy::cast_precision_loss,
        reason = "compared as SQLite compares them"
    )]
    pub(in crate::journal) fn same(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Real(a), Self::Real(b)) => a.total_cmp(b).is_eq(),
            (Self::Int(a), Self::Real(b)) | (Self::Real(b), Self::Int(a)) => {
                (*a as f64).total_cmp(b).is_eq()
            }
            (a, b) => a == b,
        }
    }
}

impl std::fmt::Display for Owned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Null => f.write_str("NULL"),
            Self::Int(i) => write!(f, "{i}"),
            Self::Real(r) => write!(f, "{r}"),
            Self::Text(t) if t.chars().count() > 60 => {
                let head: String = t.chars().take(60).collect();
                write!(f, "'{head}…' ({} bytes)", t.len())
            }
            Self::Text(t) => write!(f, "'{t}'"),
            Self::Blob(b) => write!(f, "a blob of {} bytes", b.len()),
        }
    }
}

/// A row read for a copy, its values in the table's column order.
pub(in crate::journal) type OwnedRow = Vec<Owned>;

/// Quotes an identifier.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn strings(db: &Tx, sql: &str, args: &[Arg<'_>]) -> DbResult<Vec<String>> {
    db.rows(sql, args, |r| r.get::<String>(0))
}

/// Returns the journal's tables (those `journal copy` copies, and `moved`), each with its
/// columns, key and references, in name order.
pub(in crate::journal) fn tables(db: &Tx) -> DbResult<Vec<Table>> {
    let names = match db.dialect() {
        Dialect::Sqlite => strings(
            db,
            "SELECT name FROM sqlite_schema WHERE type = 'table' \
             AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
            args![],
        )?,
        Dialect::Postgres => strings(
            db,
            "SELECT CAST(table_name AS TEXT) FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' \
             AND CAST(table_name AS TEXT) <> 'schema_migrations' ORDER BY 1",
            args![],
        )?,
    };
    names.into_iter().map(|n| describe(db, n)).collect()
}

fn describe(db: &Tx, name: String) -> DbResult<Table> {
    let (columns, key, references) = match db.dialect() {
        Dialect::Sqlite => describe_sqlite(db, &name)?,
        Dialect::Postgres => describe_postgres(db, &name)?,
    };
    let references = references.into_iter().filter(|r| *r != name).collect();
    Ok(Table {
        name,
        columns,
        key,
        references,
    })
}

type Described = (Vec<Column>, Vec<usize>, Vec<String>);

fn describe_sqlite(db: &Tx, name: &str) -> DbResult<Described> {
    let mut key = BTreeMap::new();
    let columns = db.rows(
        "SELECT name, pk, upper(type) = 'INTEGER' FROM pragma_table_info(?1) ORDER BY cid",
        args![name],
        |r| {
            Ok((
                Column {
                    name: r.get(0)?,
                    text: false,
                    identity: false,
                    rowid: false,
                },
                r.get::<i64>(1)?,
                r.get::<bool>(2)?,
            ))
        },
    )?;
    // A table whose key is not one INTEGER column (an alias of the rowid) keeps its
    // rowid apart: carried as a column `id` where no column has that name.
    let keys: Vec<bool> = columns
        .iter()
        .filter(|(_, pk, _)| *pk > 0)
        .map(|(_, _, int)| *int)
        .collect();
    let aliased = keys == [true];
    let has_rowid = db
        .opt_row(
            "SELECT wr FROM pragma_table_list WHERE name = ?1 AND schema = 'main'",
            args![name],
            |r| r.get::<bool>(0),
        )?
        .is_some_and(|without| !without);
    let hidden =
        (has_rowid && !aliased && !columns.iter().any(|(c, _, _)| c.name == "id")).then(|| {
            Column {
                name: "id".to_owned(),
                text: false,
                identity: false,
                rowid: true,
            }
        });
    let columns: Vec<Column> = columns
        .into_iter()
        .enumerate()
        .map(|(i, (c, pk, _))| {
            if pk > 0 {
                key.insert(pk, i);
            }
            c
        })
        .chain(hidden)
        .collect();
    let references = strings(
        db,
        "SELECT DISTINCT \"table\" FROM pragma_foreign_key_list(?1)",
        args![name],
    )?;
    Ok((columns, key.into_values().collect(), references))
}

fn describe_postgres(db: &Tx, name: &str) -> DbResult<Described> {
    let columns = db.rows(
        "SELECT CAST(column_name AS TEXT), \
         CAST(data_type AS TEXT) IN ('text', 'character varying', 'character'), \
         CAST(is_identity AS TEXT) = 'YES' \
         FROM information_schema.columns \
         WHERE table_schema = current_schema() AND CAST(table_name AS TEXT) = ?1 \
         ORDER BY ordinal_position",
        args![name],
        |r| {
            Ok(Column {
                name: r.get(0)?,
                text: r.get(1)?,
                identity: r.get(2)?,
                rowid: false,
            })
        },
    )?;
    let key_names = strings(
        db,
        "SELECT CAST(a.attname AS TEXT) FROM pg_catalog.pg_index i \
         JOIN pg_catalog.pg_class t ON t.oid = i.indrelid \
         JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace \
         JOIN pg_catalog.pg_attribute a ON a.attrelid = t.oid \
              AND a.attnum = ANY (i.indkey) \
         WHERE i.indisprimary AND n.nspname = current_schema() \
         AND CAST(t.relname AS TEXT) = ?1 \
         ORDER BY array_position(CAST(i.indkey AS int2[]), a.attnum)",
        args![name],
    )?;
    let key = key_names
        .iter()
        .filter_map(|k| columns.iter().position(|c| &c.name == k))
        .collect();
    let references = strings(
        db,
        "SELECT DISTINCT CAST(d.relname AS TEXT) FROM pg_catalog.pg_constraint c \
         JOIN pg_catalog.pg_class s ON s.oid = c.conrelid \
         JOIN pg_catalog.pg_class d ON d.oid = c.confrelid \
         JOIN pg_catalog.pg_namespace n ON n.oid = s.relnamespace \
         WHERE c.contype = 'f' AND n.nspname = current_schema() \
         AND CAST(s.relname AS TEXT) = ?1",
        args![name],
    )?;
    Ok((columns, key, references))
}

/// Returns whether `table` holds any row.
pub(in crate::journal) fn has_rows(db: &Tx, table: &str) -> DbResult<bool> {
    let sql = format!("SELECT 1 FROM {} LIMIT 1", quote(table));
    Ok(db.opt_row(&sql, args![], |_| Ok(()))?.is_some())
}

/// Returns the key column `c` as the ORDER BY and WHERE see it: bytewise for text.
fn key_expr(db: &Tx, c: &Column) -> String {
    match db.dialect() {
        Dialect::Postgres if c.text => format!("{} COLLATE \"C\"", quote(&c.name)),
        _ => quote(&c.name),
    }
}

/// Returns up to `limit` rows of `t` in key order, after the row whose key is `after`.
pub(in crate::journal) fn page(
    db: &Tx,
    t: &Table,
    after: Option<&[Owned]>,
    limit: usize,
) -> DbResult<Vec<OwnedRow>> {
    let columns: Vec<String> = t.columns.iter().map(Column::sql).collect();
    let keys: Vec<String> = t.key.iter().map(|&i| key_expr(db, &t.columns[i])).collect();
    let mut sql = format!("SELECT {} FROM {}", columns.join(", "), quote(&t.name));
    let mut params: Vec<Arg<'_>> = Vec::new();
    if let Some(after) = after {
        let marks: Vec<String> = (1..=after.len()).map(|i| format!("?{i}")).collect();
        if keys.len() == 1 {
            let _ = write!(sql, " WHERE {} > {}", keys[0], marks[0]);
        } else {
            let _ = write!(sql, " WHERE ({}) > ({})", keys.join(", "), marks.join(", "));
        }
        params.extend(after.iter().map(Owned::arg));
    }
    let _ = write!(
        sql,
        " ORDER BY {} LIMIT ?{}",
        keys.join(", "),
        params.len() + 1
    );
    params.push(Arg::from(limit));
    let width = t.columns.len();
    db.rows(&sql, &params, |r: &Row<'_>| {
        (0..width)
            .map(|i| r.0.value(i).map(Owned::from_value))
            .collect::<DbResult<OwnedRow>>()
    })
}

/// The most parameters one insert binds (SQLite's bundled limit is 32,766).
const MAX_PARAMS: usize = 30_000;

/// Inserts `rows` into `t` (values in `t`'s column order), as few multi-row statements as the
/// parameter limit allows; statements have 1, 2, 4… rows so that few distinct texts are
/// prepared.
pub(in crate::journal) fn insert(db: &Tx, t: &Table, rows: &[OwnedRow]) -> DbResult<()> {
    let width = t.columns.len().max(1);
    let most = (MAX_PARAMS / width).clamp(1, 64);
    let columns: Vec<String> = t.columns.iter().map(Column::sql).collect();
    let mut rest = rows;
    while !rest.is_empty() {
        // The largest power of two that fits what is left and the limit.
        let mut n = 1;
        while n * 2 <= rest.len().min(most) {
            n *= 2;
        }
        let (chunk, tail) = rest.split_at(n);
        let mut sql = format!(
            "INSERT INTO {} ({}) VALUES ",
            quote(&t.name),
            columns.join(", ")
        );
        for r in 0..n {
            sql.push_str(if r == 0 { "(" } else { ", (" });
            for c in 0..width {
                let _ = write!(
                    sql,
                    "{}?{}",
                    if c == 0 { "" } else { ", " },
                    r * width + c + 1
                );
            }
            sql.push(')');
        }
        let params: Vec<Arg<'_>> = chunk.iter().flatten().map(Owned::arg).collect();
        db.exec(&sql, &params)?;
        rest = tail;
    }
    Ok(())
}

/// Moves each identity counter of `t` past the highest value its column holds, so that the
/// store's next insert does not collide with a copied id (PostgreSQL; SQLite numbers an
/// `INTEGER PRIMARY KEY` from its highest row by itself).
pub(in crate::journal) fn move_counters(db: &Tx, t: &Table) -> DbResult<()> {
    if db.dialect() != Dialect::Postgres {
        return Ok(());
    }
    for c in t.columns.iter().filter(|c| c.identity) {
        let sql = format!(
            "SELECT setval(s, m + 1, false) FROM (SELECT pg_get_serial_sequence(?1, ?2) AS s, \
             CAST(COALESCE(max({col}), 0) AS BIGINT) AS m FROM {table}) x WHERE s IS NOT NULL",
            col = quote(&c.name),
            table = quote(&t.name),
        );
        db.rows(&sql, args![quote(&t.name), c.name], |_| Ok(()))?;
    }
    Ok(())
}

/// Gathers PostgreSQL's planner statistics of `t` (`ANALYZE`), inside the copy's transaction
/// (it samples its own rows). Without them a table filled in one go is planned as if empty
/// until autovacuum analyzes it, and each page of a pass scans the rest of its window
/// (docs/performance.md). SQLite: nothing (the journal never gathers statistics there).
pub(in crate::journal) fn analyze(db: &Tx, t: &Table) -> DbResult<()> {
    if db.dialect() != Dialect::Postgres {
        return Ok(());
    }
    db.exec(&format!("ANALYZE {}", quote(&t.name)), args![])?;
    Ok(())
}

/// Where a journal was moved to, and when (unix milliseconds), if it was.
pub(in crate::journal) fn moved(db: &Tx) -> DbResult<Option<(String, i64)>> {
    db.opt_row(
        "SELECT to_location, moved_at FROM moved WHERE id = 1",
        args![],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Marks a journal as moved to `to` (shown without its password) at `at`.
pub(in crate::journal) fn mark_moved(db: &Tx, to: &str, at: i64) -> DbResult<()> {
    db.exec(
        "INSERT INTO moved (id, to_location, moved_at) VALUES (1, ?1, ?2)",
        args![to, at],
    )
    .map(|_| ())
}
