//! Where a journal lives: a local SQLite file (the default), or a schema on a PostgreSQL server
//! (`postgres://…` / `postgresql://…`), shared by every host that reaches it.
//!
//! A [`Location`] shows itself without a password: its [`Display`](std::fmt::Display) form is
//! the file's path or the URL as [`super::postgres`] redacts it, and it is the only form errors,
//! logs and JSON records may carry.

use std::fmt;
use std::path::{Path, PathBuf};

use super::postgres::url::{PgUrl, is_postgres_url};

/// Where a journal lives.
#[derive(Clone)]
pub struct Location(Where);

#[derive(Clone)]
enum Where {
    File(PathBuf),
    Postgres(Box<PgUrl>),
}

/// A journal URL that cannot be used: what is wrong, with the URL shown without its password.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the journal URL `{url}` {why}")]
pub struct LocationError {
    /// The URL, without its password.
    pub url: String,
    /// What is wrong with it.
    pub why: String,
}

impl Location {
    /// A journal in a local SQLite file.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        Self(Where::File(path.into()))
    }

    /// Reads `--journal` / `A2A_RECOVER_JOURNAL`: a `postgres://` or `postgresql://` URL
    /// selects PostgreSQL (its password from the URL, `PGPASSWORD` or the password file);
    /// anything else is a file path.
    pub fn parse(value: &Path) -> Result<Self, LocationError> {
        match value.to_str() {
            Some(s) if is_postgres_url(s) => PgUrl::parse(s)
                .map(|url| Self(Where::Postgres(Box::new(url))))
                .map_err(|e| LocationError {
                    url: e.url,
                    why: e.why,
                }),
            _ => Ok(Self::file(value)),
        }
    }

    /// Returns whether `value` is a URL that [`Location::parse`] reads as PostgreSQL.
    pub fn is_postgres_url(value: &str) -> bool {
        is_postgres_url(value)
    }

    /// Returns the file's path for a SQLite journal (`None` for PostgreSQL).
    pub fn file_path(&self) -> Option<&Path> {
        match &self.0 {
            Where::File(p) => Some(p),
            Where::Postgres(_) => None,
        }
    }

    /// Returns whether the journal is on a PostgreSQL server.
    pub fn is_postgres(&self) -> bool {
        matches!(self.0, Where::Postgres(_))
    }

    /// Returns the PostgreSQL URL (`None` for a file).
    pub(super) fn postgres(&self) -> Option<&PgUrl> {
        match &self.0 {
            Where::Postgres(u) => Some(u),
            Where::File(_) => None,
        }
    }

    /// Returns the form errors and records name the journal by, as a path: the file's own path,
    /// or the URL without its password.
    pub fn shown_path(&self) -> PathBuf {
        match &self.0 {
            Where::File(p) => p.clone(),
            Where::Postgres(u) => PathBuf::from(u.redacted()),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Where::File(p) => write!(f, "{}", p.display()),
            Where::Postgres(u) => f.write_str(u.redacted()),
        }
    }
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Where::File(p) => f.debug_tuple("File").field(p).finish(),
            Where::Postgres(u) => f.debug_tuple("Postgres").field(&u.redacted()).finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_locations_show_no_password() {
        let l = Location::parse(Path::new("postgres://u:secret@127.0.0.1:5432/db")).unwrap();
        assert!(l.is_postgres() && l.file_path().is_none());
        for shown in [
            l.to_string(),
            format!("{l:?}"),
            l.shown_path().display().to_string(),
        ] {
            assert!(!shown.contains("secret"), "{shown}");
            assert!(shown.contains("127.0.0.1:5432/db"), "{shown}");
        }
    }

    #[test]
    fn anything_else_is_a_file() {
        let l = Location::parse(Path::new("state/journal.sqlite3")).unwrap();
        assert_eq!(l.file_path(), Some(Path::new("state/journal.sqlite3")));
        assert_eq!(l.to_string(), "state/journal.sqlite3");
    }

    #[test]
    fn a_bad_postgres_url_is_an_error_without_its_password() {
        let e = Location::parse(Path::new(
            "postgres://u:secret@127.0.0.1/db?schema=Bad-Name",
        ))
        .unwrap_err();
        assert!(!e.to_string().contains("secret"), "{e}");
    }
}
