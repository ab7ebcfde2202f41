//! Session-level advisory locks: the PostgreSQL form of the pass locks.
//!
//! Keys are PostgreSQL's two-`int4` form `(k1, k2)`:
//!
//! - `k1` = FNV-1a (32 bits, as a signed `int4`) of the schema name: two journals in one
//!   database never share a lock;
//! - `k2` = 0 for the whole journal, else FNV-1a (32 bits) of the workflow's name, with 0 taken
//!   as 1 so that no workflow shares the whole journal's key.
//!
//! A workflow lock is the workflow's key taken exclusively *and* the whole journal's key taken
//! shared; the whole-journal lock takes that key exclusively: it thus excludes every workflow
//! lock, and workflow locks exclude only each other (two workflows whose names hash alike
//! exclude each other too: a spurious "held", never a missed one). A session lock lives until
//! it is released or the session ends (a killed process's locks go with its connection).
//!
//! Migrations use the one-`int8` form (a key space apart from the two-`int4` one), keyed by a
//! 64-bit FNV-1a of the schema, at transaction level ([`migration_key`]).

use super::conn::PgConn;
use crate::journal::sql::{Arg, Db, DbResult, Value};

/// FNV-1a over `bytes`, 32 bits.
fn fnv1a32(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in bytes {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// FNV-1a over `bytes`, 64 bits.
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The first key of every lock of the journal in `schema`.
pub(in crate::journal) fn journal_key(schema: &str) -> i64 {
    i64::from(fnv1a32(schema.as_bytes()) as i32)
}

/// The second key of `workflow`'s lock: never 0 (the whole journal's).
pub(in crate::journal) fn workflow_key(workflow: &str) -> i64 {
    // 0 is the whole journal's key and -1 the write lock's (`PgStore::transaction`).
    match fnv1a32(workflow.as_bytes()) as i32 {
        0 | -1 => 1,
        k => i64::from(k),
    }
}

/// The transaction-level key migrations of `schema` take.
pub(in crate::journal) fn migration_key(schema: &str) -> i64 {
    fnv1a64(format!("a2a-recover migrations {schema}").as_bytes()) as i64
}

fn one_bool(conn: &PgConn, sql: &str, args: &[Arg<'_>]) -> DbResult<bool> {
    let mut out = false;
    conn.each(sql, args, &mut |row| {
        out = matches!(row.0.value(0)?, Value::Int(1));
        Ok(())
    })?;
    Ok(out)
}

/// Takes the whole journal's lock unless another session holds it or any workflow lock.
pub(in crate::journal) fn try_lock_journal(conn: &PgConn, schema: &str) -> DbResult<bool> {
    one_bool(
        conn,
        "SELECT pg_try_advisory_lock(?1, 0)",
        &[Arg::Int(journal_key(schema))],
    )
}

/// Releases the whole journal's lock; returns whether this session held it.
pub(in crate::journal) fn unlock_journal(conn: &PgConn, schema: &str) -> DbResult<bool> {
    one_bool(
        conn,
        "SELECT pg_advisory_unlock(?1, 0)",
        &[Arg::Int(journal_key(schema))],
    )
}

/// Takes `workflow`'s lock unless another session holds it or the whole journal's.
pub(in crate::journal) fn try_lock_workflow(
    conn: &PgConn,
    schema: &str,
    workflow: &str,
) -> DbResult<bool> {
    let k1 = journal_key(schema);
    if !one_bool(
        conn,
        "SELECT pg_try_advisory_lock_shared(?1, 0)",
        &[Arg::Int(k1)],
    )? {
        return Ok(false);
    }
    let taken = one_bool(
        conn,
        "SELECT pg_try_advisory_lock(?1, ?2)",
        &[Arg::Int(k1), Arg::Int(workflow_key(workflow))],
    );
    if !matches!(taken, Ok(true)) {
        one_bool(
            conn,
            "SELECT pg_advisory_unlock_shared(?1, 0)",
            &[Arg::Int(k1)],
        )?;
    }
    taken
}

/// Releases `workflow`'s lock; returns whether this session held it.
pub(in crate::journal) fn unlock_workflow(
    conn: &PgConn,
    schema: &str,
    workflow: &str,
) -> DbResult<bool> {
    let k1 = journal_key(schema);
    let held = one_bool(
        conn,
        "SELECT pg_advisory_unlock(?1, ?2)",
        &[Arg::Int(k1), Arg::Int(workflow_key(workflow))],
    )?;
    if held {
        one_bool(
            conn,
            "SELECT pg_advisory_unlock_shared(?1, 0)",
            &[Arg::Int(k1)],
        )?;
    }
    Ok(held)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_lock_keys_are_stable_and_apart() {
        // FNV-1a-32 test vectors: "" and "a".
        assert_eq!(fnv1a32(b""), 0x811c_9dc5);
        assert_eq!(fnv1a32(b"a"), 0xe40c_292c);
        assert_eq!(journal_key("a"), i64::from(0xe40c_292c_u32 as i32));
        assert_ne!(workflow_key("default"), 0);
        assert_ne!(journal_key("a2a_recover"), journal_key("a2a_recover2"));
        assert_ne!(migration_key("a"), migration_key("b"));
    }
}
