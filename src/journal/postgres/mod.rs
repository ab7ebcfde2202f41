//! The PostgreSQL store: the only code of the journal that names tokio-postgres or rustls. A
//! journal on a server every host reaches (`--journal postgres://…`), with the same semantics as
//! the SQLite store beside it.
//!
//! - [`url`]: the journal URL, its password sources, TLS mode and schema; [`url::PgUrl::redacted`]
//!   is the only form of it that errors, logs and JSON may show.
//! - [`conn`]: one connection, driven synchronously from a thread of its own; [`conn::PgConn`]
//!   runs the shared `?N` SQL (the seam's `Db`).
//! - [`tls`]: rustls, always verifying the server's certificate.
//! - [`migrate`]: the schema, one migration per SQLite migration, in the journal's own schema.
//! - [`locks`]: session-level advisory locks for the pass locks.
//!
//! [`PgStore`] is the store: opening (connect, configure the session, migrate), `read` and
//! `transaction` (one `BEGIN … COMMIT`, rolled back when nothing changed), and the mapping of
//! SQLSTATEs to [`JournalError`].

pub(in crate::journal) mod conn;
pub(in crate::journal) mod locks;
pub(in crate::journal) mod migrate;
mod tls;
pub(in crate::journal) mod url;

#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use crate::journal::sql::{Db, DbError, DbResult};
use conn::{ClientTimeout, PgConn, SetupError};
use url::PgUrl;

use super::migrate::LATEST;
use super::{AttemptId, JournalError};

/// The margin the client gives the server past `statement_timeout` before it gives up on a
/// request (the server's own timeout answers first, with a clear error).
const CLIENT_MARGIN: Duration = Duration::from_secs(5);

/// The connection [`PgStore::exists`] made, kept with what it read of the schema for the open
/// that commonly follows it in the same process (a pass checks that its journal exists, then
/// opens it): one connect and one read of the schema, not two. A schema migrated in between
/// is no harm: the migration reads the version again under its lock.
static PROBED: Mutex<Option<Probed>> = Mutex::new(None);

/// A connection kept by [`PgStore::exists`], with what it was made for and what it read.
struct Probed {
    url: PgUrl,
    busy_timeout: Duration,
    conn: PgConn,
    found: migrate::Found,
}

/// Takes the connection [`PgStore::exists`] kept for `url`, if any (configured already), with
/// what it read of the schema.
fn take_probed(url: &PgUrl, busy_timeout: Duration) -> Option<(PgConn, migrate::Found)> {
    let mut slot = PROBED.lock().unwrap_or_else(PoisonError::into_inner);
    let same = slot
        .as_ref()
        .is_some_and(|p| p.url.same_as(url) && p.busy_timeout == busy_timeout);
    same.then(|| slot.take().map(|p| (p.conn, p.found)))
        .flatten()
}

/// An open PostgreSQL journal: its one connection, and what its errors name.
pub(in crate::journal) struct PgStore {
    /// Shared with the pass locks taken on it (`journal/pass_locks.rs`), which release
    /// themselves on this connection when dropped.
    conn: Arc<Mutex<PgConn>>,
    url: PgUrl,
    /// The URL without its password, as a path: what errors and records name the journal by.
    shown: PathBuf,
    /// The key every write transaction locks first (see [`PgStore::transaction`]).
    write_key: i64,
    busy_timeout: Duration,
    /// The schema's version when it is newer than this binary (then nothing is written).
    newer: Option<i64>,
    /// Whether the session has been named after this process (the first pass lock does it).
    pub(in crate::journal) named: std::sync::atomic::AtomicBool,
}

impl PgStore {
    /// Connects, creates or migrates the schema, and returns the store and the version the
    /// schema had (0 for a new one). A schema newer than this binary is left as it is and
    /// opened read-only: writes fail with [`JournalError::NewerVersion`].
    pub(in crate::journal) fn open(
        url: &PgUrl,
        busy_timeout: Duration,
    ) -> Result<(Self, i64), JournalError> {
        Self::open_as(url, busy_timeout, true)
    }

    /// Connects to an existing journal for reading only (never creates or migrates).
    pub(in crate::journal) fn open_read_only(
        url: &PgUrl,
        busy_timeout: Duration,
    ) -> Result<(Self, i64), JournalError> {
        Self::open_as(url, busy_timeout, false)
    }

    /// Returns whether the schema holds a journal (or anything else, which opening then
    /// refuses): `false` for a schema that is missing or empty. Connects, reads the catalogue,
    /// and disconnects; writes nothing.
    pub(in crate::journal) fn exists(
        url: &PgUrl,
        busy_timeout: Duration,
    ) -> Result<bool, JournalError> {
        let e = |action| move |err| error(action, url, busy_timeout, &err);
        let conn = PgConn::connect(url, busy_timeout + CLIENT_MARGIN)
            .map_err(e("connect to the database server"))?;
        configure(&conn, url.schema(), busy_timeout).map_err(e("configure the session"))?;
        let found = migrate::probe(&conn, url.schema()).map_err(e("read the schema"))?;
        *PROBED.lock().unwrap_or_else(PoisonError::into_inner) = Some(Probed {
            url: url.clone(),
            busy_timeout,
            conn,
            found,
        });
        Ok(found != migrate::Found::Blank)
    }

    fn open_as(
        url: &PgUrl,
        busy_timeout: Duration,
        writable: bool,
    ) -> Result<(Self, i64), JournalError> {
        let e = |action| move |err| error(action, url, busy_timeout, &err);
        let (conn, found) = if let Some(probed) = take_probed(url, busy_timeout) {
            probed
        } else {
            let conn = PgConn::connect(url, busy_timeout + CLIENT_MARGIN)
                .map_err(e("connect to the database server"))?;
            configure(&conn, url.schema(), busy_timeout).map_err(e("configure the session"))?;
            let found = migrate::probe(&conn, url.schema()).map_err(e("read the schema"))?;
            (conn, found)
        };
        let version = match found {
            migrate::Found::Foreign => {
                return Err(JournalError::NotAJournal {
                    path: location(url),
                });
            }
            migrate::Found::Blank => 0,
            migrate::Found::Version(v) => v,
        };
        let newer = (version > LATEST).then_some(version);
        if newer.is_some() || !writable {
            conn.batch("SET default_transaction_read_only = on")
                .map_err(e("configure the session"))?;
        } else if version < LATEST {
            migrate::migrate(&conn, url.schema()).map_err(e("migrate the journal"))?;
        }
        Ok((
            Self {
                conn: Arc::new(Mutex::new(conn)),
                url: url.clone(),
                shown: location(url),
                write_key: locks::journal_key(url.schema()),
                busy_timeout,
                newer,
                named: std::sync::atomic::AtomicBool::new(false),
            },
            version,
        ))
    }

    /// Returns the journal's URL (its [`PgUrl::redacted`] form is the one to show).
    pub(in crate::journal) fn url(&self) -> &PgUrl {
        &self.url
    }

    /// Returns the URL without its password, as a path (what errors name the journal by).
    pub(in crate::journal) fn shown_path(&self) -> &std::path::Path {
        &self.shown
    }

    /// Returns a number that changes whenever any session commits a change to the journal's
    /// tables (tests use it to prove a no-op wrote nothing, as SQLite's `data_version` does
    /// there). Per table, its row count and the newest transaction id that wrote a live row:
    /// an insert or a delete changes the count, an update (a new row version) the id, so the
    /// pair changes with every write. The pairs are mixed, not added: a delete in the
    /// transaction right after the table's last write would otherwise cancel out.
    pub(in crate::journal) fn data_version(&self) -> Result<i64, JournalError> {
        let action = "read the data version";
        self.read(action, |c| {
            let mut tables = Vec::new();
            c.each(
                "SELECT table_name FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' \
                 ORDER BY table_name",
                &[],
                &mut |r| {
                    tables.push(r.get::<String>(0)?);
                    Ok(())
                },
            )?;
            let mut sum = 0i64;
            for t in tables {
                // Table names come from the catalogue of our own schema; quoted all the same.
                let sql = format!(
                    "SELECT count(*), COALESCE(max(CAST(CAST(xmin AS TEXT) AS BIGINT)), 0) \
                     FROM \"{}\"",
                    t.replace('"', "\"\"")
                );
                c.each(&sql, &[], &mut |r| {
                    for i in 0..2 {
                        sum = sum.wrapping_mul(1_000_003).wrapping_add(r.get::<i64>(i)?);
                    }
                    Ok(())
                })?;
            }
            Ok(sum)
        })
    }

    /// Returns the journal's size as `prune` reports it: a page size of 8 KiB, the pages the
    /// schema's tables and indexes take, and no free pages (PostgreSQL reuses the space a
    /// delete frees after a `VACUUM`, which autovacuum runs; it never returns it to a list).
    pub(in crate::journal) fn page_counts(&self) -> Result<(u64, u64, u64), JournalError> {
        const PAGE: u64 = 8192;
        let bytes = self.read("read the journal's size", |c| {
            let mut bytes = 0i64;
            c.each(
                "SELECT CAST(COALESCE(sum(pg_total_relation_size(c.oid)), 0) AS BIGINT) \
                 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE n.nspname = current_schema() AND c.relkind = 'r'",
                &[],
                &mut |r| {
                    bytes = r.get(0)?;
                    Ok(())
                },
            )?;
            Ok(bytes)
        })?;
        Ok((PAGE, (bytes.max(0) as u64).div_ceil(PAGE), 0))
    }

    /// Returns the longest wait for another session's lock.
    pub(in crate::journal) fn busy_timeout(&self) -> Duration {
        self.busy_timeout
    }

    /// Returns the connection itself, for what outlives one operation (a pass lock).
    pub(in crate::journal) fn shared_conn(&self) -> Arc<Mutex<PgConn>> {
        Arc::clone(&self.conn)
    }

    /// Returns the connection, for one operation (tests reach it directly).
    pub(in crate::journal) fn lock(&self) -> MutexGuard<'_, PgConn> {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Returns the mapper of a statement's error to a [`JournalError`] saying `action`.
    pub(in crate::journal) fn err(
        &self,
        action: &'static str,
    ) -> impl Fn(DbError) -> JournalError + '_ {
        move |e| error(action, &self.url, self.busy_timeout, &e)
    }

    /// Runs `f` on the connection (reads).
    pub(in crate::journal) fn read<T>(
        &self,
        action: &'static str,
        f: impl FnOnce(&PgConn) -> DbResult<T>,
    ) -> Result<T, JournalError> {
        let conn = self.lock();
        f(&conn).map_err(self.err(action))
    }

    /// Runs `f` in one transaction (`BEGIN … COMMIT`), committed only when `f` says it changed
    /// something; rolled back otherwise, and when `f` fails. `f` gets the connection and the
    /// error mapper for `action`. One such transaction at a time, as SQLite's `BEGIN
    /// IMMEDIATE` gives: every read-decide-write cycle of the journal relies on no other write
    /// landing between its read and its write.
    pub(in crate::journal) fn transaction<T>(
        &self,
        action: &'static str,
        f: impl FnOnce(&PgConn, &dyn Fn(DbError) -> JournalError) -> Result<(T, bool), JournalError>,
    ) -> Result<T, JournalError> {
        // The journal's write key, exclusively: it excludes every other write transaction. The
        // lock is the transaction's and goes with its COMMIT or ROLLBACK; its wait is bounded
        // by `lock_timeout`. Sent with the BEGIN, in one round trip (the key is a number of
        // ours).
        let begin = format!(
            "BEGIN; SELECT pg_advisory_xact_lock({}, -1)",
            self.write_key
        );
        self.transaction_after(&begin, action, f)
    }

    /// Runs `f` as [`PgStore::transaction`] does, for a transaction that changes only the rows
    /// of `attempts` (each attempt's row, and the artifacts, replies and events that belong to
    /// it) besides marks on agents' rows that only ever move one way (`accepts_context_id`):
    /// such transactions run side by side unless they share an attempt.
    ///
    /// The journal's write key is taken shared (no other-scoped write runs meanwhile), then the
    /// attempts' rows are locked in the order of their ids (two such transactions never wait
    /// for each other in a cycle); a row lock costs no entry in the server's lock table, so a
    /// group commit of hundreds of attempts is fine. Several hosts' passes then commit at once,
    /// and PostgreSQL flushes their commits together.
    pub(in crate::journal) fn attempts_transaction<T>(
        &self,
        attempts: &[AttemptId],
        action: &'static str,
        f: impl FnOnce(&PgConn, &dyn Fn(DbError) -> JournalError) -> Result<(T, bool), JournalError>,
    ) -> Result<T, JournalError> {
        use std::fmt::Write as _;
        let mut ids: Vec<i64> = attempts.iter().map(|a| a.0).collect();
        ids.sort_unstable();
        ids.dedup();
        let mut begin = format!(
            "BEGIN; SELECT pg_advisory_xact_lock_shared({}, -1)",
            self.write_key
        );
        if let Some((first, rest)) = ids.split_first() {
            // Ids are numbers of ours, written into the statement.
            let _ = write!(begin, "; SELECT 1 FROM attempts WHERE id IN ({first}");
            for id in rest {
                let _ = write!(begin, ",{id}");
            }
            begin.push_str(") ORDER BY id FOR NO KEY UPDATE");
        }
        self.transaction_after(&begin, action, f)
    }

    /// Runs `begin` (a `BEGIN` and the locks), then `f`, then COMMIT or ROLLBACK.
    fn transaction_after<T>(
        &self,
        begin: &str,
        action: &'static str,
        f: impl FnOnce(&PgConn, &dyn Fn(DbError) -> JournalError) -> Result<(T, bool), JournalError>,
    ) -> Result<T, JournalError> {
        if let Some(found) = self.newer {
            return Err(JournalError::NewerVersion {
                path: location(&self.url),
                found,
                known: LATEST,
            });
        }
        let conn = self.lock();
        let e = self.err(action);
        conn.began();
        if let Err(err) = conn.batch(begin) {
            conn.ended();
            let _ = conn.batch("ROLLBACK");
            return Err(e(err));
        }
        let out = f(&conn, &e);
        let failed = conn.ended();
        match out {
            Ok((out, true)) if !failed => {
                conn.batch("COMMIT").map_err(&e)?;
                Ok(out)
            }
            Ok((_, true)) => {
                conn.batch("ROLLBACK").map_err(&e)?;
                Err(e(DbError::Backend(Box::new(conn::Aborted))))
            }
            Ok((out, false)) => {
                conn.batch("ROLLBACK").map_err(&e)?;
                Ok(out)
            }
            Err(err) => {
                // The error that matters is `err`; a failed rollback leaves nothing committed.
                let _ = conn.batch("ROLLBACK");
                Err(err)
            }
        }
    }
}

/// Sets up a new session: the journal's schema first on the search path, durable commits, and
/// every wait bounded by the busy timeout.
fn configure(conn: &PgConn, schema: &str, busy_timeout: Duration) -> DbResult<()> {
    let ms = busy_timeout.as_millis().max(1);
    // The schema is a checked identifier (lowercase letters, digits and _). Every statement is
    // prepared once per connection and run with its parameters; a generic plan from the first
    // run spares the custom plans PostgreSQL otherwise makes for five runs each, which for a
    // pass's page (a window over every remaining row) sorted the whole window, 70-100 ms a
    // page against 2 ms (docs/performance.md).
    conn.batch(&format!(
        "SET search_path TO \"{schema}\"; \
         SET synchronous_commit TO on; \
         SET plan_cache_mode TO force_generic_plan; \
         SET statement_timeout TO {ms}; \
         SET lock_timeout TO {ms}; \
         SET idle_in_transaction_session_timeout TO {idle}",
        idle = ms.saturating_mul(4).max(60_000),
    ))
}

/// What errors name as the journal's location: the URL without its password.
fn location(url: &PgUrl) -> PathBuf {
    PathBuf::from(url.redacted())
}

/// Names an error's SQLSTATE class for the mapping below.
fn sqlstate(e: &DbError) -> Option<&str> {
    match e {
        DbError::Backend(b) => b
            .downcast_ref::<tokio_postgres::Error>()
            .and_then(tokio_postgres::Error::code)
            .map(tokio_postgres::error::SqlState::code),
        _ => None,
    }
}

/// An error text with the password scrubbed out, kept as the opaque source.
#[derive(Debug)]
struct Scrubbed(String);

impl std::fmt::Display for Scrubbed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Scrubbed {}

/// Maps a statement's error to a [`JournalError`]: lock and statement timeouts become
/// [`JournalError::Busy`], data corruption [`JournalError::Corrupt`], and the rest an opaque
/// [`JournalError::Storage`] with a hint for the causes an operator can fix. The source keeps
/// the server's message (never the password: tokio-postgres never had it in a string, and the
/// text is scrubbed all the same).
fn error(
    action: &'static str,
    url: &PgUrl,
    busy_timeout: Duration,
    source: &DbError,
) -> JournalError {
    let code = sqlstate(source).map(str::to_owned);
    let path = location(url);
    match code.as_deref() {
        // lock_not_available (lock_timeout), query_canceled (statement_timeout).
        Some("55P03" | "57014") => {
            return JournalError::Busy {
                path,
                waited: busy_timeout,
            };
        }
        Some("XX001" | "XX002") => {
            return JournalError::Corrupt {
                path,
                detail: url.scrub(&full_text(source)),
            };
        }
        _ => {}
    }
    let hint = match code.as_deref() {
        Some("28P01" | "28000") => Some(
            "check the user and password: in the URL, PGPASSWORD, or the password file \
             (PGPASSFILE, else ~/.pgpass, mode 0600)",
        ),
        Some("40001" | "40P01") => Some(
            "another host changed the same rows at the same moment; nothing was written: \
             run again",
        ),
        Some("53100") => Some("the database server's disk is full; free some space and run again"),
        Some("53300") => Some(
            "the server has no connection slot left; raise max_connections or run fewer \
             processes at once",
        ),
        Some("42501") => Some(
            "the database role lacks a privilege; docs/journal.md lists what `journal init` \
             and the passes need",
        ),
        Some("3D000") => Some("the database named in the journal URL does not exist; create it"),
        Some("25006") => {
            Some("the server is read-only (a standby?); point the journal URL at the primary")
        }
        Some("57P01" | "57P02" | "57P03") => {
            Some("the database server is shutting down or starting; run again once it is up")
        }
        Some(_) => None,
        None => client_hint(source),
    };
    JournalError::Storage {
        action,
        hint,
        source: Box::new(Scrubbed(url.scrub(&format!(
            "{}: {}",
            url.redacted(),
            full_text(source)
        )))),
    }
}

/// The hint for an error that did not come from the server (no SQLSTATE).
fn client_hint(source: &DbError) -> Option<&'static str> {
    let DbError::Backend(b) = source else {
        return None;
    };
    if b.downcast_ref::<ClientTimeout>().is_some() {
        return Some(
            "the database server stopped answering; check that it is up and reachable, then \
             run again (nothing half-written was committed)",
        );
    }
    if b.downcast_ref::<SetupError>().is_some() {
        return Some("check sslrootcert in the journal URL");
    }
    let text = full_text(source);
    if text.contains("Connection refused") || text.contains("error connecting to server") {
        Some("is the database server running and reachable at the URL's host and port?")
    } else if text.contains("timeout") || text.contains("timed out") {
        Some("the database server did not answer in time (connect_timeout); is it reachable?")
    } else if text.contains("does not support TLS") {
        Some(
            "the server does not offer TLS; enable ssl on it, or set the URL's sslmode to \
             prefer or disable",
        )
    } else if text.contains("certificate") || text.contains("TLS") {
        Some(
            "TLS failed: the server's certificate must be valid for the URL's host and signed \
             by a CA in sslrootcert (else the Mozilla roots); sslmode=disable turns TLS off",
        )
    } else if text.contains("password missing") {
        Some("the server asks for a password: put it in PGPASSWORD or the password file")
    } else {
        None
    }
}

/// The error and its chain of sources, one line.
fn full_text(e: &DbError) -> String {
    let mut text = e.to_string();
    let mut source = match e {
        DbError::Backend(b) => b.source(),
        _ => None,
    };
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}
