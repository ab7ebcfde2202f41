//! The journal file before SQLite touches it: directory, permissions, and a header check.
//!
//! Invariants: missing directories are created 0700 and an existing directory's mode is never
//! changed; a new journal file is created 0600 by us (SQLite then creates `-wal` and `-shm`
//! with the same mode); a file that is not SQLite, or whose header shows it truncated, is
//! refused before any write or any pragma that writes, so it stays byte-for-byte untouched.

use std::fs;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::journal::error::JournalError;

const MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Makes the directory entries of `path`'s directory durable (a new journal file, a new WAL);
/// a file system that cannot sync a directory is not an error, as for SQLite itself.
pub(crate) fn sync_directory(path: &Path) {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
        && let Ok(dir) = fs::File::open(parent)
    {
        let _ = dir.sync_all();
    }
}

/// Returns the identity (device and inode) of `path`'s WAL, if it has one.
pub(crate) fn wal_identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt as _;
    fs::metadata(sibling(path, "-wal"))
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

/// Returns the path of a sibling file (`-wal`, `-shm`, `.lock`).
pub(crate) fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> JournalError {
    let path = path.to_path_buf();
    move |source| JournalError::Io {
        action,
        path,
        source,
    }
}

/// Makes sure the journal file exists (when `create`), and returns warnings about its safety.
///
/// Missing parent directories are created 0700; an existing parent that is group- or
/// world-writable, or an existing journal readable by others, gets a warning and is left as it
/// is. A broken symbolic link is refused.
pub(crate) fn prepare(path: &Path, create: bool) -> Result<Vec<String>, JournalError> {
    let mut warnings = Vec::new();
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() && fs::metadata(path).is_err() => {
            return Err(JournalError::BrokenSymlink {
                path: path.to_path_buf(),
            });
        }
        Ok(_) => {
            let meta = fs::metadata(path).map_err(io("read the journal", path))?;
            if !meta.is_file() {
                return Err(JournalError::Io {
                    action: "open the journal",
                    path: path.to_path_buf(),
                    source: std::io::Error::new(ErrorKind::InvalidInput, "not a regular file"),
                });
            }
            if meta.mode() & 0o077 != 0 {
                warnings.push(format!(
                    "the journal `{}` is accessible by other users (mode {:04o}); \
                     `chmod 600` it",
                    path.display(),
                    meta.mode() & 0o7777
                ));
            }
            check_parent(path, &mut warnings);
            return Ok(warnings);
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(io("read the journal", path)(e)),
    }
    if !create {
        return Err(JournalError::Io {
            action: "open the journal",
            path: path.to_path_buf(),
            source: std::io::Error::new(ErrorKind::NotFound, "no such file"),
        });
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.exists()
    {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(io("create the journal directory", parent))?;
    }
    check_parent(path, &mut warnings);
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(file) => {
            // Make the new (empty) file's directory entry durable before anything refers to it.
            file.sync_all().map_err(io("create the journal", path))?;
            sync_directory(path);
        }
        // Another process created it first: fine, it is checked like any existing file.
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io("create the journal", path)(e)),
    }
    Ok(warnings)
}

fn check_parent(path: &Path, warnings: &mut Vec<String>) {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if let Ok(meta) = fs::metadata(parent)
        && meta.mode() & 0o022 != 0
    {
        warnings.push(format!(
            "the journal's directory `{}` is writable by other users (mode {:04o}); \
             anyone who can write there can tamper with the journal: `chmod go-w` it, or \
             keep the journal elsewhere with --journal",
            parent.display(),
            meta.mode() & 0o7777
        ));
    }
}

/// What the header says about a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Header {
    /// A zero-length file: a new journal.
    Empty,
    /// An SQLite database whose header is consistent with its size.
    Sqlite,
}

/// Reads the first 100 bytes and checks them, without writing anything.
///
/// Refuses a file that is not SQLite, and an SQLite file shorter than its header says (a
/// truncated copy) when no write-ahead log could account for the difference.
pub(crate) fn check_header(path: &Path) -> Result<Header, JournalError> {
    let mut file = fs::File::open(path).map_err(io("read the journal", path))?;
    let len = file.metadata().map_err(io("read the journal", path))?.len();
    if len == 0 {
        return Ok(Header::Empty);
    }
    let mut header = [0_u8; 100];
    let mut filled = 0;
    while filled < header.len() {
        match file.read(&mut header[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(io("read the journal", path)(e)),
        }
    }
    if filled < MAGIC.len() || &header[..MAGIC.len()] != MAGIC {
        return Err(JournalError::NotSqlite {
            path: path.to_path_buf(),
        });
    }
    let corrupt = |detail: String| JournalError::Corrupt {
        path: path.to_path_buf(),
        detail,
    };
    if filled < header.len() {
        return Err(corrupt(format!(
            "the file holds {len} bytes, less than an SQLite header"
        )));
    }
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536_u64,
        n if n >= 512 && n.is_power_of_two() => u64::from(n),
        n => return Err(corrupt(format!("invalid page size {n}"))),
    };
    let be32 = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let wal_len = fs::metadata(sibling(path, "-wal")).map_or(0, |m| m.len());
    if wal_len == 0 {
        if len % page_size != 0 {
            return Err(corrupt(format!(
                "the file holds {len} bytes, not a whole number of {page_size}-byte pages \
                 (truncated?)"
            )));
        }
        let pages = u64::from(be32(28));
        let size_valid = pages > 0 && be32(24) == be32(92);
        if size_valid && len < pages * page_size {
            return Err(corrupt(format!(
                "the header says {pages} pages but the file holds {} (truncated?)",
                len / page_size
            )));
        }
    }
    Ok(Header::Sqlite)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn new_directories_are_0700_and_the_file_0600() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a/b/journal.sqlite3");
        let warnings = prepare(&path, true).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        for dir in [tmp.path().join("a"), tmp.path().join("a/b")] {
            let mode = fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", dir.display());
        }
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(check_header(&path).unwrap(), Header::Empty);
    }

    #[test]
    fn existing_directories_keep_their_mode_and_get_a_warning() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("shared");
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
        let path = dir.join("journal.sqlite3");
        let warnings = prepare(&path, true).unwrap();
        assert_eq!(
            fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o777
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("writable by other users"));
    }

    #[test]
    fn broken_symlinks_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let link = tmp.path().join("j.sqlite3");
        std::os::unix::fs::symlink(tmp.path().join("gone"), &link).unwrap();
        assert!(matches!(
            prepare(&link, true),
            Err(JournalError::BrokenSymlink { .. })
        ));
        assert!(!tmp.path().join("gone").exists());
    }

    #[test]
    fn non_sqlite_files_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("j");
        fs::write(&path, b"hello, this is not a database\n").unwrap();
        assert!(matches!(
            check_header(&path),
            Err(JournalError::NotSqlite { .. })
        ));
        fs::write(&path, b"SQLite format 3\0short").unwrap();
        assert!(matches!(
            check_header(&path),
            Err(JournalError::Corrupt { .. })
        ));
    }
}
