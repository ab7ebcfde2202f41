//! The pass locks a journal's store holds itself: on PostgreSQL, session-level advisory locks
//! on the journal's own connection (`postgres/locks.rs`), so that passes on several hosts
//! exclude each other. A SQLite journal's pass locks are files beside it
//! (`recovery/lock.rs`); there [`Journal::try_lock`] answers `None`.
//!
//! A lock lives as long as its [`StoreLock`] (released on drop) and never longer than the
//! connection: a killed process's locks go with its session.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};

use super::postgres::conn::PgConn;
use super::postgres::locks;
use super::store::Store;
use super::{Journal, JournalError, Location, host_label};

/// What a pass lock covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockScope<'a> {
    /// The whole journal, exclusive: no other pass runs (`prune`, `journal copy`).
    Journal,
    /// One workflow (beside the whole journal held shared): passes on other workflows run.
    Workflow(&'a str),
}

/// The outcome of [`Journal::try_lock`].
#[derive(Debug)]
pub enum LockAttempt {
    /// This process holds the lock until the [`StoreLock`] is dropped.
    Taken(StoreLock),
    /// Another process holds it: what it calls itself (`pid N on HOST since TIME`).
    Held(String),
}

/// A pass lock held on the journal's connection; released when dropped.
pub struct StoreLock {
    conn: Arc<Mutex<PgConn>>,
    schema: String,
    workflow: Option<String>,
}

impl std::fmt::Debug for StoreLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreLock")
            .field("workflow", &self.workflow)
            .finish_non_exhaustive()
    }
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        let conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        if !conn.is_usable() {
            return; // The session is gone or abandoned, and its locks with it.
        }
        // A failure leaves the lock to the session's end (the process's exit at the latest).
        let released = match &self.workflow {
            Some(w) => locks::unlock_workflow(&conn, &self.schema, w),
            None => locks::unlock_journal(&conn, &self.schema),
        };
        if let Err(e) = released {
            tracing::debug!("releasing a pass lock failed: {e}");
        }
    }
}

impl Journal {
    /// Takes a pass lock in the journal's own store without waiting: `None` when the store
    /// keeps no locks (SQLite: its pass locks are files beside it, `recovery/lock.rs`).
    ///
    /// On PostgreSQL the session is first named after this process (`a2a-recover pid N on
    /// HOST since TIME`), which is how another process's [`LockAttempt::Held`] and
    /// [`Journal::lock_holders`] name it.
    pub fn try_lock(&self, scope: LockScope<'_>) -> Result<Option<LockAttempt>, JournalError> {
        let Store::Postgres(store) = &self.store else {
            return Ok(None);
        };
        let schema = store.url().schema().to_owned();
        let e = self.err("take a pass lock");
        let conn = store.shared_conn();
        let guard = conn.lock().unwrap_or_else(PoisonError::into_inner);
        if !store.named.load(Ordering::Relaxed) {
            let since = self.clock.now().format("%Y-%m-%dT%H:%M:%SZ").to_string();
            locks::name_session(&guard, crate::sim_seam::pid(), host_label(), &since)
                .map_err(&e)?;
            store.named.store(true, Ordering::Relaxed);
        }
        let (taken, workflow) = match scope {
            LockScope::Journal => (locks::try_lock_journal(&guard, &schema).map_err(&e)?, None),
            LockScope::Workflow(w) => (
                locks::try_lock_workflow(&guard, &schema, w).map_err(&e)?,
                Some(w.to_owned()),
            ),
        };
        if !taken {
            let holder = locks::holder(&guard, &schema, workflow.as_deref())
                .map_err(&e)?
                .unwrap_or_else(|| "owner unknown, since released".to_owned());
            return Ok(Some(LockAttempt::Held(holder)));
        }
        drop(guard);
        Ok(Some(LockAttempt::Taken(StoreLock {
            conn,
            schema,
            workflow,
        })))
    }

    /// Returns who holds the journal's pass locks in its own store, as `("journal", holder)`
    /// for the whole journal and `(WORKFLOW, holder)` per workflow, or `None` when the store
    /// keeps no locks (SQLite). Takes no lock; this process's own locks are not listed.
    pub fn lock_holders(&self) -> Result<Option<Vec<(String, String)>>, JournalError> {
        let Store::Postgres(store) = &self.store else {
            return Ok(None);
        };
        let schema = store.url().schema();
        let held = store.read("read the pass locks", |c| locks::holders(c, schema))?;
        if held.is_empty() {
            return Ok(Some(Vec::new()));
        }
        let names = if held.iter().any(|(k2, _)| *k2 != 0) {
            store.read("read the workflows", |c| {
                let mut names = Vec::new();
                sql_names(c, &mut names)?;
                Ok(names)
            })?
        } else {
            Vec::new()
        };
        let mut out: Vec<(String, String)> = held
            .into_iter()
            .map(|(k2, holder)| {
                let what = if k2 == 0 {
                    "journal".to_owned()
                } else {
                    names
                        .iter()
                        .find(|n| locks::workflow_key(n) == k2)
                        .map_or_else(
                            || format!("a workflow (lock key {k2})"),
                            |n| crate::sanitize::inert(n).chars().take(128).collect(),
                        )
                };
                (what, holder)
            })
            .collect();
        out.sort();
        Ok(Some(out))
    }

    /// Returns whether a journal is at `location`: something at the file's path (as
    /// [`super::exists`]), or a PostgreSQL schema that holds one (a missing or empty schema
    /// holds none). Creates and writes nothing.
    pub fn exists_at(
        location: &Location,
        busy_timeout: std::time::Duration,
    ) -> Result<bool, JournalError> {
        match location.postgres() {
            Some(url) => super::postgres::PgStore::exists(url, busy_timeout),
            None => Ok(super::exists(&location.shown_path())),
        }
    }
}

/// Reads every workflow's name (to tell which workflow a held lock's key is).
fn sql_names(c: &PgConn, out: &mut Vec<String>) -> super::sql::DbResult<()> {
    use super::sql::Db as _;
    c.each("SELECT name FROM workflows", &[], &mut |r| {
        out.push(r.get(0)?);
        Ok(())
    })
}
