//! Opening a journal: [`Journal::open`] (create, check, migrate) and
//! [`Journal::open_read_only`], the file checks before SQLite sees the file, the warnings
//! found on the way, and what the open allows (writes, the schema version).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::agents::AgentRows;
use super::postgres::PgStore;
use super::sqlite;
use super::store::Store;
use super::{Access, Journal, JournalError, Location, SizeLimits, file, migrate};
use crate::clock::{Clock, SystemClock};

impl Journal {
    /// Opens (creating if needed) the journal at `location` for reading and writing: a SQLite
    /// file as [`Journal::open`] opens it, or a schema on a PostgreSQL server, created and
    /// migrated when needed (a schema newer than this binary opens read-only, as a newer file
    /// does).
    pub fn open_at(location: &Location, busy_timeout: Duration) -> Result<Self, JournalError> {
        let Some(url) = location.postgres() else {
            return Self::open(&location.shown_path(), busy_timeout);
        };
        let (store, found) = PgStore::open(url, busy_timeout)?;
        Self {
            store: Store::Postgres(Box::new(store)),
            location: location.clone(),
            access: if found > migrate::LATEST {
                Access::Newer(found)
            } else {
                Access::ReadWrite
            },
            version: found.max(migrate::LATEST),
            warnings: Vec::new(),
            clock: Arc::new(SystemClock),
            limits: SizeLimits::default(),
            agent_rows: AgentRows::default(),
        }
        .check_not_moved()
    }

    /// Opens an existing journal at `location` for reading only, as
    /// [`Journal::open_read_only`] does for a file; a PostgreSQL schema that holds no journal
    /// yet, or an older one, is refused ([`JournalError::ReadOnly`]).
    pub fn open_read_only_at(
        location: &Location,
        busy_timeout: Duration,
    ) -> Result<Self, JournalError> {
        let Some(url) = location.postgres() else {
            return Self::open_read_only(&location.shown_path(), busy_timeout);
        };
        let (store, found) = PgStore::open_read_only(url, busy_timeout)?;
        if found < migrate::LATEST {
            return Err(JournalError::ReadOnly {
                path: location.shown_path(),
            });
        }
        Self {
            store: Store::Postgres(Box::new(store)),
            location: location.clone(),
            access: Access::ReadOnly,
            version: found,
            warnings: Vec::new(),
            clock: Arc::new(SystemClock),
            limits: SizeLimits::default(),
            agent_rows: AgentRows::default(),
        }
        .check_not_moved()
    }

    /// Returns where the journal is.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Opens (creating if needed) the journal at `path` for reading and writing.
    ///
    /// `busy_timeout` is the longest wait for another process's lock (`--timeout`). A journal
    /// from a newer a2a-recover opens read-only (see [`Journal::is_writable`]).
    pub fn open(path: &Path, busy_timeout: Duration) -> Result<Self, JournalError> {
        let warnings = file::prepare(path, true)?;
        file::check_header(path)?;
        let (store, found) = sqlite::Store::open(path, busy_timeout)?;
        Self {
            store: Store::Sqlite(store),
            location: Location::file(path),
            access: if found > migrate::LATEST {
                Access::Newer(found)
            } else {
                Access::ReadWrite
            },
            version: found.max(migrate::LATEST),
            warnings,
            clock: Arc::new(SystemClock),
            limits: SizeLimits::default(),
            agent_rows: AgentRows::default(),
        }
        .check_not_moved()
    }

    /// Opens an existing journal for reading only; never creates, migrates or writes.
    ///
    /// A journal older than this binary is refused ([`JournalError::ReadOnly`]): it would need
    /// a migration, which is a write; open it with [`Journal::open`].
    pub fn open_read_only(path: &Path, busy_timeout: Duration) -> Result<Self, JournalError> {
        let warnings = file::prepare(path, false)?;
        if file::check_header(path)? == file::Header::Empty {
            return Err(JournalError::ReadOnly {
                path: path.to_path_buf(),
            });
        }
        let (store, found) = sqlite::Store::open_read_only(path, busy_timeout)?;
        if found < migrate::LATEST {
            return Err(JournalError::ReadOnly {
                path: path.to_path_buf(),
            });
        }
        Self {
            store: Store::Sqlite(store),
            location: Location::file(path),
            access: Access::ReadOnly,
            version: found,
            warnings,
            clock: Arc::new(SystemClock),
            limits: SizeLimits::default(),
            agent_rows: AgentRows::default(),
        }
        .check_not_moved()
    }

    /// Replaces the clock used for journal times and leases (tests).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Replaces the artifact size limits (`--max-artifact-size`, `--max-task-size`).
    pub fn with_size_limits(mut self, limits: SizeLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Returns the artifact size limits observations are held to.
    pub fn size_limits(&self) -> SizeLimits {
        self.limits
    }

    /// Returns the journal's path.
    pub fn path(&self) -> &Path {
        self.store.path()
    }

    /// Returns warnings found while opening (an unsafe directory mode), for the caller to print.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Returns whether writes are allowed (false for a newer journal or a read-only open).
    pub fn is_writable(&self) -> bool {
        self.access == Access::ReadWrite
    }

    /// Returns the newest schema version this binary knows (and migrates to).
    pub fn known_schema_version() -> i64 {
        migrate::LATEST
    }

    /// Returns the journal's schema version.
    pub fn schema_version(&self) -> i64 {
        self.version
    }

    /// Fails unless writes are allowed ([`JournalError::NewerVersion`] for a journal written by
    /// a newer a2a-recover): what a command that will write checks before it talks to anyone.
    pub fn check_writable(&self) -> Result<(), JournalError> {
        self.writable()
    }

    /// Fails unless writes are allowed: the journal was opened read-only, or is newer.
    pub(super) fn writable(&self) -> Result<(), JournalError> {
        match self.access {
            Access::ReadWrite => Ok(()),
            Access::ReadOnly => Err(JournalError::ReadOnly {
                path: self.path().to_path_buf(),
            }),
            Access::Newer(found) => Err(JournalError::NewerVersion {
                path: self.path().to_path_buf(),
                found,
                known: migrate::LATEST,
            }),
        }
    }
}
