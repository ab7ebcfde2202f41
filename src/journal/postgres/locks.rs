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

/// Names this session in `pg_stat_activity` as a pass lock's holder (`a2a-recover pid N on
/// HOST since TIME`, what another process's "held" error and `status` show), unless it is named
/// so already. PostgreSQL keeps 63 bytes of it: a long host name is cut, the rest kept.
pub(in crate::journal) fn name_session(
    conn: &PgConn,
    pid: u32,
    host: &str,
    since: &str,
) -> DbResult<()> {
    const MAX: usize = 63;
    let fixed = format!("a2a-recover pid {pid} on  since {since}").len();
    let room = MAX.saturating_sub(fixed);
    let mut host: String = host
        .chars()
        .filter(char::is_ascii_graphic)
        .collect::<String>();
    host.truncate(room);
    let name = format!("a2a-recover pid {pid} on {host} since {since}");
    conn.exec(
        "SELECT set_config('application_name', ?1, false) \
         WHERE current_setting('application_name') NOT LIKE 'a2a-recover pid %'",
        &[Arg::Text(name.into())],
    )?;
    Ok(())
}

/// The advisory locks of the journal in `schema` that other sessions hold exclusively (or, with
/// `shared_too`, in any mode), as `(k2, holder)`: `k2` = 0 for the whole journal, else a
/// workflow's key. The holder is what its session calls itself ([`name_session`]), else its
/// server process id. Never this session's own locks, nor a write transaction's (`k2` = -1).
fn held(conn: &PgConn, schema: &str, shared_too: bool) -> DbResult<Vec<(i64, String)>> {
    let mut out = Vec::new();
    conn.each(
        "SELECT CAST(l.objid AS BIGINT), a.application_name, CAST(l.pid AS BIGINT) \
         FROM pg_catalog.pg_locks l \
         LEFT JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid \
         WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 \
           AND l.pid <> pg_backend_pid() \
           AND l.database = (SELECT oid FROM pg_catalog.pg_database \
                             WHERE datname = current_database()) \
           AND CAST(l.classid AS BIGINT) = ?1 \
           AND CAST(l.objid AS BIGINT) <> 4294967295 \
           AND (?2 = 1 OR l.mode = 'ExclusiveLock') \
         ORDER BY l.objid, l.pid",
        &[
            Arg::Int(i64::from(journal_key(schema) as i32 as u32)),
            Arg::Int(i64::from(shared_too)),
        ],
        &mut |row| {
            let objid: i64 = row.get(0)?;
            let name: Option<String> = row.get(1)?;
            let pid: i64 = row.get(2)?;
            let k2 = i64::from(objid as u32 as i32);
            out.push((k2, describe(name.as_deref(), pid)));
            Ok(())
        },
    )?;
    Ok(out)
}

/// What a holder is called: its session's name without the `a2a-recover ` prefix (`pid N on
/// HOST since TIME`), bounded and inert; else the server's process id.
fn describe(name: Option<&str>, server_pid: i64) -> String {
    match name.and_then(|n| n.strip_prefix("a2a-recover ")) {
        Some(n) if n.starts_with("pid ") => crate::sanitize::inert(n).chars().take(80).collect(),
        _ => format!("server process {server_pid}, not an a2a-recover pass"),
    }
}

/// Returns who keeps this session from taking the whole journal's lock (`workflow` = `None`)
/// or `workflow`'s: the whole journal's exclusive holder, else the workflow's (or, for the
/// whole journal, any pass over a workflow). `None` when nobody does any more.
pub(in crate::journal) fn holder(
    conn: &PgConn,
    schema: &str,
    workflow: Option<&str>,
) -> DbResult<Option<String>> {
    let held = held(conn, schema, workflow.is_none())?;
    let wanted = workflow.map(workflow_key);
    Ok(held
        .iter()
        .find(|(k2, _)| *k2 == 0)
        .or_else(|| held.iter().find(|(k2, _)| Some(*k2) == wanted))
        .map(|(_, h)| h.clone()))
}

/// Returns every exclusive holder of the journal's locks as `(k2, holder)` (see [`held`]).
pub(in crate::journal) fn holders(conn: &PgConn, schema: &str) -> DbResult<Vec<(i64, String)>> {
    held(conn, schema, false)
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
