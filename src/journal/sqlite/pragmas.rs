//! The SQLite store's own statements: the probes and pragmas of opening a file, and what only
//! SQLite knows of a journal (its `data_version`, its pages). The PostgreSQL store answers
//! the same questions its own way (see [`super::Store`]'s methods).

use rusqlite::Connection;

/// What the first reads of a file say (none of them writes).
#[derive(Debug, Clone, Copy)]
pub(super) struct Probe {
    pub(super) user_version: i64,
    pub(super) application_id: i64,
    pub(super) objects: i64,
}

/// Returns the schema version (`PRAGMA user_version`).
pub(super) fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// Reads `user_version`, `application_id` and the schema size; parsing the schema catches a
/// damaged first page.
///
/// One statement, so one read transaction: read one by one, a process migrating a new journal
/// in between made it look half ours (version 0, but tables) and refused as foreign.
pub(super) fn probe(conn: &Connection) -> rusqlite::Result<Probe> {
    conn.query_row(
        "SELECT (SELECT user_version FROM pragma_user_version),
                (SELECT application_id FROM pragma_application_id),
                (SELECT count(*) FROM sqlite_schema)",
        [],
        |r| {
            Ok(Probe {
                user_version: r.get(0)?,
                application_id: r.get(1)?,
                objects: r.get(2)?,
            })
        },
    )
}

/// Sets the per-connection pragmas of a writable journal; returns the journal mode in force.
pub(super) fn configure_writable(conn: &Connection) -> rusqlite::Result<String> {
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // A WAL reset after a checkpoint is cut back to what a closing connection leaves.
    conn.pragma_update(None, "journal_size_limit", super::WAL_KEPT)?;
    Ok(mode)
}

/// Sets whether closing the last connection checkpoints the WAL into the journal file.
pub(super) fn set_checkpoint_on_close(conn: &Connection, on: bool) -> rusqlite::Result<()> {
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
        !on,
    )
    .map(drop)
}

/// Makes a connection refuse writes (for a journal from a newer version).
pub(super) fn configure_read_only(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "query_only", "ON")
}

/// Returns SQLite's `data_version` (changes when another connection commits).
pub(super) fn data_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached("PRAGMA data_version")?
        .query_row([], |r| r.get(0))
}

/// Returns the page size, the page count and the free-list length.
pub(super) fn page_counts(conn: &Connection) -> rusqlite::Result<(u64, u64, u64)> {
    let get = |pragma: &str| {
        conn.prepare_cached(&format!("PRAGMA {pragma}"))?
            .query_row([], |r| r.get::<_, i64>(0))
            .map(|v| u64::try_from(v).unwrap_or_default())
    };
    Ok((
        get("page_size")?,
        get("page_count")?,
        get("freelist_count")?,
    ))
}
