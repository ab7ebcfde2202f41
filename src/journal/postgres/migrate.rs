//! The PostgreSQL schema: the same migrations as SQLite's (same numbers, names and order),
//! translated, embedded, and applied inside the journal's own schema.
//!
//! The version is the highest row of `schema_migrations` (SQLite keeps it in `user_version`).
//! Opening reads it first and touches nothing when it is current, so the passes need no right to
//! create anything. Otherwise, in ONE transaction under a transaction-level advisory lock keyed
//! by the schema ([`super::locks::migration_key`]: two hosts migrating at once take turns), the
//! schema and the version table are created if missing, the version is read again, and each
//! pending migration runs and is recorded. A schema newer than [`LATEST`] is never migrated.

use super::conn::PgConn;
use super::locks;
use crate::journal::migrate::{LATEST, MIGRATIONS};
use crate::journal::sql::{Arg, Db, DbResult, Value};

/// What the schema holds before any write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::journal) enum Found {
    /// No schema, or an empty one: a new journal.
    Blank,
    /// A journal at this version.
    Version(i64),
    /// Tables of something else.
    Foreign,
}

/// Reads what `schema` holds, without writing.
pub(in crate::journal) fn probe(conn: &PgConn, schema: &str) -> DbResult<Found> {
    let mut objects = 0;
    let mut has_versions = false;
    conn.each(
        "SELECT count(*), bool_or(c.relname = 'schema_migrations') \
         FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = ?1",
        &[Arg::Text(schema.into())],
        &mut |row| {
            objects = int(row.0.value(0)?);
            has_versions = int(row.0.value(1)?) == 1;
            Ok(())
        },
    )?;
    if objects == 0 {
        return Ok(Found::Blank);
    }
    if !has_versions {
        return Ok(Found::Foreign);
    }
    Ok(Found::Version(version(conn)?))
}

fn int(v: Value<'_>) -> i64 {
    match v {
        Value::Int(i) => i,
        _ => 0,
    }
}

/// Returns the version recorded in the (existing) version table, 0 when it is empty.
fn version(conn: &PgConn) -> DbResult<i64> {
    let mut v = 0;
    conn.each(
        "SELECT coalesce(max(version), 0) FROM schema_migrations",
        &[],
        &mut |row| {
            v = int(row.0.value(0)?);
            Ok(())
        },
    )?;
    Ok(v)
}

/// Brings `schema` up to [`LATEST`] in one transaction; returns the version it had. The
/// connection's search_path must already name `schema`.
pub(in crate::journal) fn migrate(conn: &PgConn, schema: &str) -> DbResult<i64> {
    conn.batch("BEGIN")?;
    conn.began();
    let out = migrate_in_transaction(conn, schema);
    let failed = conn.ended();
    match out {
        Ok(from) if !failed => {
            conn.batch("COMMIT")?;
            Ok(from)
        }
        Ok(_) => {
            conn.batch("ROLLBACK")?;
            Err(crate::journal::sql::DbError::Backend(Box::new(
                super::conn::Aborted,
            )))
        }
        Err(e) => {
            let _ = conn.batch("ROLLBACK");
            Err(e)
        }
    }
}

fn migrate_in_transaction(conn: &PgConn, schema: &str) -> DbResult<i64> {
    conn.exec(
        "SELECT pg_advisory_xact_lock(?1)",
        &[Arg::Int(locks::migration_key(schema))],
    )?;
    // The whole journal's pass lock, for this transaction: no pass (of an older binary) works
    // on the tables while they change; a pass still running makes this wait (`lock_timeout`).
    conn.exec(
        "SELECT pg_advisory_xact_lock(?1, 0)",
        &[Arg::Int(locks::journal_key(schema))],
    )?;
    // The schema is a checked identifier (lowercase letters, digits and _).
    let mut exists = false;
    conn.each(
        "SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = ?1",
        &[Arg::Text(schema.into())],
        &mut |_| {
            exists = true;
            Ok(())
        },
    )?;
    if !exists {
        conn.batch(&format!("CREATE SCHEMA \"{schema}\""))?;
    }
    conn.batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version    BIGINT PRIMARY KEY,
             name       TEXT   NOT NULL,
             applied_at BIGINT NOT NULL
         )",
    )?;
    let from = version(conn)?;
    for m in MIGRATIONS.iter().filter(|m| m.version > from) {
        conn.batch(m.postgres)?;
        conn.exec(
            "INSERT INTO schema_migrations (version, name, applied_at) \
             VALUES (?1, ?2, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)",
            &[Arg::Int(m.version), Arg::Text(m.name.into())],
        )?;
    }
    debug_assert!(from > LATEST || version(conn).is_ok_and(|v| v == LATEST));
    Ok(from)
}
