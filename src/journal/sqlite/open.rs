//! Opening the SQLite file: connect without checkpointing, probe before any write (a damaged
//! or foreign file stays as it was), configure (WAL, `synchronous=FULL`, foreign keys, the busy
//! wait: `busy`), migrate, and retry what SQLite's busy handler does not wait for.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use super::busy::{retry_busy, set_busy_wait};
use super::{Store, db, error, pragmas};
use crate::journal::sql::{Db, DbResult};
use crate::journal::{JournalError, file, migrate};
use migrate::{APPLICATION_ID, LATEST, MIGRATIONS};

impl Store {
    /// Opens (creating if needed) the file for reading and writing, configured and migrated;
    /// returns the store and the schema version the file had. A file newer than this binary
    /// is configured read-only and not migrated.
    pub(in crate::journal) fn open(
        path: &Path,
        busy_timeout: Duration,
    ) -> Result<(Self, i64), JournalError> {
        let wal_before = file::wal_identity(path);
        let (conn, user_version) = retry_busy(busy_timeout, |left| {
            let mut conn = Self::connect(path, left, false)?;
            let probe = Self::probe(&conn, path, busy_timeout)?;
            let sql = |action| move |e| error(action, path, busy_timeout, e);
            if probe.user_version > LATEST {
                pragmas::configure_read_only(&conn).map_err(sql("open the journal read-only"))?;
            } else {
                pragmas::configure_writable(&conn).map_err(sql("configure the journal"))?;
                // A journal already at this binary's version (the common case) is not
                // migrated: no write transaction at open.
                if probe.user_version < LATEST {
                    migrate(&mut conn)
                        .map_err(|e| error("migrate the journal", path, busy_timeout, e))?;
                }
            }
            // Sound: a close may checkpoint again, but only once the WAL has grown (see
            // `Store`'s `Drop`); a small WAL stays for the next process to append to.
            set_busy_wait(&mut conn, busy_timeout).map_err(sql("set the busy timeout"))?;
            Ok((conn, probe.user_version))
        })?;
        // SQLite is built without its own directory sync (`SQLITE_DISABLE_DIRSYNC`, set in
        // .cargo/config.toml), which would sync the directory in every process that opens the
        // WAL, new or not: the entry of a WAL this open created is made durable here, once,
        // before any commit goes into it.
        let wal_now = file::wal_identity(path);
        if wal_now.is_none() || wal_now != wal_before {
            file::sync_directory(path);
        }
        Ok((Self::new(conn, path, busy_timeout, true), user_version))
    }

    /// Opens an existing file for reading only (never creates, migrates or writes); returns
    /// the store and the file's schema version.
    pub(in crate::journal) fn open_read_only(
        path: &Path,
        busy_timeout: Duration,
    ) -> Result<(Self, i64), JournalError> {
        let (conn, user_version) = retry_busy(busy_timeout, |left| {
            let mut conn = Self::connect(path, left, true)?;
            let probe = Self::probe(&conn, path, busy_timeout)?;
            set_busy_wait(&mut conn, busy_timeout)
                .map_err(|e| error("set the busy timeout", path, busy_timeout, e))?;
            Ok((conn, probe.user_version))
        })?;
        Ok((Self::new(conn, path, busy_timeout, false), user_version))
    }

    fn new(conn: Connection, path: &Path, busy_timeout: Duration, checkpoints: bool) -> Self {
        Self {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
            busy_timeout,
            checkpoints,
        }
    }

    fn connect(
        path: &Path,
        busy_timeout: Duration,
        read_only: bool,
    ) -> Result<Connection, JournalError> {
        let flags = if read_only {
            OpenFlags::SQLITE_OPEN_READ_ONLY
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE
        } | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let sql = |action| move |e| error(action, path, busy_timeout, e);
        let mut conn = Connection::open_with_flags(path, flags).map_err(sql("open the journal"))?;
        // Until the probe has read the journal, closing must not checkpoint: the last
        // connection to close copies the WAL into the file, and a damaged file must stay as it
        // was (with its WAL) for `.recover`. `open` turns checkpoints back on once it is sound.
        pragmas::set_checkpoint_on_close(&conn, false).map_err(sql("configure the journal"))?;
        set_busy_wait(&mut conn, busy_timeout).map_err(sql("set the busy timeout"))?;
        conn.set_prepared_statement_cache_capacity(db::STATEMENT_CACHE);
        // Plans that never depend on bound values: otherwise SQLite (STAT4 is compiled in) marks
        // a statement whose parameter it looked at as expiring on every rebind, and each use of
        // a cached statement parses it again (docs/performance.md).
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
            true,
        )
        .map_err(sql("configure the journal connection"))?;
        Ok(conn)
    }

    /// Reads before any write: a damaged or foreign database is refused here, untouched.
    fn probe(
        conn: &Connection,
        path: &Path,
        busy_timeout: Duration,
    ) -> Result<pragmas::Probe, JournalError> {
        let probe = pragmas::probe(conn).map_err(|e| match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::NotADatabase) => JournalError::NotSqlite {
                path: path.to_path_buf(),
            },
            _ => error("read the schema", path, busy_timeout, e),
        })?;
        let ours = probe.application_id == APPLICATION_ID;
        let blank = probe.application_id == 0 && probe.user_version == 0 && probe.objects == 0;
        if !ours && !blank {
            return Err(JournalError::NotAJournal {
                path: path.to_path_buf(),
            });
        }
        Ok(probe)
    }
}

/// Brings the journal up to [`LATEST`]; returns the version it had.
///
/// Foreign keys are off while the migrations run, as SQLite's procedure for rebuilding a table
/// asks (dropping the old table must not touch the rows that refer to it; the pragma is a no-op
/// inside a transaction, so it is set around it), and every reference is checked before the
/// commit.
fn migrate(conn: &mut Connection) -> DbResult<i64> {
    conn.pragma_update(None, "foreign_keys", "OFF")?;
    let migrated = migrate_in_transaction(conn);
    conn.pragma_update(None, "foreign_keys", "ON")?;
    migrated
}

/// Runs the pending migrations and sets `user_version` in one transaction.
///
/// Re-reads `user_version` inside the write transaction, so two processes opening a new
/// journal at once migrate it once.
fn migrate_in_transaction(conn: &mut Connection) -> DbResult<i64> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let from = pragmas::user_version(&tx)?;
    if from >= LATEST {
        return Ok(from);
    }
    for m in MIGRATIONS.iter().filter(|m| m.version > from) {
        tracing::info!("applying journal migration {}", m.name);
        Db::batch(&*tx, m.sql)?;
        tx.pragma_update(None, "user_version", m.version)?;
    }
    if tx.prepare("PRAGMA foreign_key_check")?.exists([])? {
        return Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY),
            Some("a migration left a reference to a missing row".into()),
        )
        .into());
    }
    tx.commit()?;
    Ok(from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrating_twice_is_a_no_op() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), 0);
        assert_eq!(migrate(&mut conn).unwrap(), LATEST);
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, LATEST);
        let app: i64 = conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .unwrap();
        assert_eq!(app, APPLICATION_ID);
    }

    /// Migration 0023 rebuilds `steps` and `attempts`: the rows, the references to them and
    /// their checks stay as they were.
    #[test]
    fn rebuilding_the_tables_keeps_rows_references_and_checks() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("BEGIN").unwrap();
        for m in MIGRATIONS.iter().filter(|m| m.version < 23) {
            conn.execute_batch(m.sql).unwrap();
        }
        conn.execute_batch(
            "INSERT INTO workflows (name, created_at, updated_at) VALUES ('w', 1, 1);
             INSERT INTO steps (workflow_id, name, seq, text, agent_url, resolution,
                                created_at, updated_at)
                 VALUES (1, 's', 1, 't', 'http://127.0.0.1:1', 'retry', 1, 1);
             INSERT INTO attempts (step_id, number, message_id, state, effect,
                                   credential_source, created_at, updated_at)
                 VALUES (1, 1, 'm1', 'WORKING', 'claimed', 'step', 1, 1);
             INSERT INTO events (at, workflow_id, step_id, attempt_id, kind)
                 VALUES (1, 1, 1, 1, 'intent');
             PRAGMA user_version = 22;
             COMMIT;",
        )
        .unwrap();
        conn.pragma_update(None, "foreign_keys", "ON").unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), 22);
        let row: (String, String, String, String) = conn
            .query_row(
                "SELECT s.resolution, a.state, a.effect, a.credential_source
                 FROM attempts a JOIN steps s ON s.id = a.step_id
                 JOIN events e ON e.attempt_id = a.id",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        assert_eq!(
            row,
            (
                "retry".into(),
                "WORKING".into(),
                "claimed".into(),
                "step".into()
            )
        );
        let fk: bool = conn
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .unwrap();
        assert!(fk, "foreign keys are on again after the migration");
        for bad in [
            "UPDATE attempts SET state = 'working'",
            "UPDATE attempts SET effect = 'gone'",
            "UPDATE attempts SET resolution = 'later'",
            "UPDATE attempts SET credential_source = 'env'",
            "UPDATE steps SET resolution = 'later'",
            "UPDATE attempts SET step_id = 9",
        ] {
            assert!(conn.execute(bad, []).is_err(), "{bad}");
        }
        conn.execute(
            "UPDATE attempts SET effect = NULL, resolution = 'resend'",
            [],
        )
        .unwrap();
    }
}
