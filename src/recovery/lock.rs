//! The pass lock: an advisory `flock` on `JOURNAL.lock` (the journal path plus `.lock`).
//!
//! `reconcile` and `compensate` take it non-blocking and exclusive, so an overlapping cron run
//! learns at once who holds it and leaves everything untouched. The file
//! holds the owner's pid and start time, written only once the lock is ours; a process that finds
//! it held only reads it.
//!
//! Invariants: the lock is released when [`PassLock`] is dropped, or by the kernel when the process
//! dies (a crashed pass never leaves a stale lock behind); the file is created 0600 and never
//! removed (removing it would let two processes lock two different inodes). The lock file guards
//! whole passes only: row leases (`Journal::claim`) guard each send, also against processes that
//! never take this lock (`delegate`, `reply`).

use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, flock};

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it.
    #[error("another pass ({owner}) holds the journal lock `{}`", path.display())]
    Held {
        /// The lock file.
        path: PathBuf,
        /// What the file says about its owner (`pid 123, started …`).
        owner: String,
    },
    /// The lock file could not be opened, locked or written.
    #[error("failed to use the journal lock `{}`", path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The journal's store could not take or read its own lock (PostgreSQL).
    #[error("failed to take a pass lock of the journal")]
    Store(#[source] crate::journal::JournalError),
}

/// A pass lock: a lock file's `flock` (SQLite), or a lock the journal's store holds itself
/// (PostgreSQL: [`crate::journal::StoreLock`]); released on drop.
#[derive(Debug)]
pub struct PassLock {
    // Holding the open file holds the flock; closing it (drop) releases it. The store's lock
    // releases itself on drop too.
    _held: Held,
    path: PathBuf,
}

#[derive(Debug)]
enum Held {
    File(#[allow(dead_code, reason = "held for its drop")] File),
    Store(#[allow(dead_code, reason = "held for its drop")] crate::journal::StoreLock),
}

impl PassLock {
    /// Wraps a lock the journal's store holds (`shown`: the journal as errors name it).
    pub fn in_store(lock: crate::journal::StoreLock, shown: PathBuf) -> Self {
        Self {
            _held: Held::Store(lock),
            path: shown,
        }
    }

    /// Returns the lock file's path (for a store's lock, the journal as shown).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Returns the lock file of a journal: the journal path plus `.lock`.
pub fn lock_path(journal: &Path) -> PathBuf {
    let mut s = journal.as_os_str().to_owned();
    s.push(".lock");
    PathBuf::from(s)
}

/// Takes the lock of `journal` without waiting, and writes `pid` and `started` (RFC 3339) into it.
///
/// When another process holds it, returns [`LockError::Held`] with what its file says, having
/// written nothing.
pub fn acquire(journal: &Path, pid: u32, started: &str) -> Result<PassLock, LockError> {
    lock_file(
        &lock_path(journal),
        FlockOperation::NonBlockingLockExclusive,
        Some(format!("pid {pid}\nstarted {started}\n")),
    )
}

/// Returns who holds the lock of `journal` (what its file says), or `None` when nobody does;
/// takes no lock itself, so it never disturbs a pass starting at that moment.
///
/// Reads the kernel's table of locks (`/proc/locks`) for a `flock` on the lock file's inode;
/// where that table cannot be read, says so instead of guessing.
pub fn holder(journal: &Path) -> Option<String> {
    let path = lock_path(journal);
    let text = std::fs::read_to_string(&path).ok()?;
    let meta = std::fs::metadata(&path).ok()?;
    let Ok(locks) = std::fs::read_to_string("/proc/locks") else {
        return Some("unknown (/proc/locks cannot be read)".to_owned());
    };
    held_in(&locks, meta.dev(), meta.ino()).then(|| describe_owner(&text))
}

/// Returns whether the kernel's lock table (`/proc/locks`) lists an exclusive `flock` on this
/// inode (shared holders, passes over workflows, are not "the holder").
fn held_in(locks: &str, dev: u64, ino: u64) -> bool {
    let id = format!(
        "{:02x}:{:02x}:{ino}",
        rustix::fs::major(dev),
        rustix::fs::minor(dev)
    );
    locks.lines().any(|l| {
        l.contains(" FLOCK ") && !l.contains("->") && l.split_whitespace().any(|f| f == id)
    })
}

/// Returns the directory of a journal's workflow locks: the journal path plus `.locks`.
pub fn workflow_lock_dir(journal: &Path) -> PathBuf {
    let mut s = journal.as_os_str().to_owned();
    s.push(".locks");
    PathBuf::from(s)
}

/// Returns the lock file of `workflow`: its name where that is a plain file name, else a
/// readable prefix and a hash (any workflow name is valid, `..` and `é` included).
pub fn workflow_lock_path(journal: &Path, workflow: &str) -> PathBuf {
    let plain = workflow.len() <= 128
        && !workflow.starts_with('.')
        && workflow
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    let name = if plain {
        format!("{workflow}.lock")
    } else {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for b in workflow.bytes() {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        let prefix: String = workflow
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(32)
            .collect();
        format!("~{prefix}-{hash:016x}.lock")
    };
    workflow_lock_dir(journal).join(name)
}

/// How a pass holds the journal's lock file: `prune` (and anything that must see no pass
/// running) holds it exclusive; a pass over workflows holds it shared, beside the exclusive
/// locks of the workflows it works on ([`acquire_workflow`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The whole journal, excluding every workflow lock.
    Journal,
    /// Shared: other passes on other workflows run beside it.
    Workflows,
}

/// Takes the journal's lock file in `scope` without waiting. Shared, it writes nothing into the
/// file (the file describes an exclusive holder); exclusive, as [`acquire`].
pub fn acquire_scoped(
    journal: &Path,
    scope: Scope,
    pid: u32,
    started: &str,
) -> Result<PassLock, LockError> {
    match scope {
        Scope::Journal => acquire(journal, pid, started),
        Scope::Workflows => lock_file(
            &lock_path(journal),
            FlockOperation::NonBlockingLockShared,
            None,
        ),
    }
}

/// Takes the lock of one workflow (exclusive, without waiting), writing `pid` and `started`
/// into its file; the caller holds the journal's lock shared ([`Scope::Workflows`]).
pub fn acquire_workflow(
    journal: &Path,
    workflow: &str,
    pid: u32,
    started: &str,
) -> Result<PassLock, LockError> {
    let path = workflow_lock_path(journal, workflow);
    if let Some(dir) = path.parent() {
        use std::os::unix::fs::DirBuilderExt as _;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|source| LockError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
    }
    lock_file(
        &path,
        FlockOperation::NonBlockingLockExclusive,
        Some(format!(
            "pid {pid}\nstarted {started}\nworkflow {workflow}\n"
        )),
    )
}

/// Opens (creating, 0600) and flocks `path` with `op`; once it is ours, writes `owner` into it
/// when given. Held by another: [`LockError::Held`] with what the file says.
fn lock_file(
    path: &Path,
    op: FlockOperation,
    owner: Option<String>,
) -> Result<PassLock, LockError> {
    let io = |source| LockError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .map_err(io)?;
    match flock(&file, op) {
        Ok(()) => {}
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            return Err(LockError::Held {
                owner: describe_owner(&text),
                path: path.to_path_buf(),
            });
        }
        Err(e) => return Err(io(e.into())),
    }
    if let Some(owner) = owner {
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.write_all(owner.as_bytes()).map_err(io)?;
        file.sync_data().map_err(io)?;
    }
    Ok(PassLock {
        _held: Held::File(file),
        path: path.to_path_buf(),
    })
}

/// Returns every held lock of `journal`: `("journal", holder)` for an exclusive holder of its
/// lock file, and `(WORKFLOW, holder)` per held workflow lock; takes no lock ([`holder`]).
pub fn holders(journal: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = holder(journal)
        .map(|h| ("journal".to_owned(), h))
        .into_iter()
        .collect();
    let Ok(locks) = std::fs::read_to_string("/proc/locks") else {
        return out;
    };
    let Ok(dir) = std::fs::read_dir(workflow_lock_dir(journal)) else {
        return out;
    };
    for entry in dir.flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        if !held_in(&locks, meta.dev(), meta.ino()) {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        let workflow = text
            .lines()
            .find_map(|l| l.strip_prefix("workflow "))
            .map_or_else(
                || entry.file_name().to_string_lossy().into_owned(),
                str::to_owned,
            );
        let workflow: String = crate::sanitize::inert(&workflow)
            .chars()
            .take(128)
            .collect();
        out.push((workflow, describe_owner(&text)));
    }
    out.sort();
    out
}

/// Reads `pid N` and `started T` lines/// Reads `pid N` and `started T` lines/// Reads `pid N` and `started T` lines into `pid N, started T` (bounded, inert).
fn describe_owner(text: &str) -> String {
    let field = |key: &str| {
        text.lines().find_map(|l| l.strip_prefix(key)).map(|v| {
            crate::sanitize::inert(v.trim())
                .chars()
                .take(64)
                .collect::<String>()
        })
    };
    match (field("pid "), field("started ")) {
        (Some(pid), Some(started)) => format!("pid {pid}, started {started}"),
        (Some(pid), None) => format!("pid {pid}"),
        _ => "owner unknown".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_with_the_owner_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("j.sqlite3");
        let first = acquire(&journal, 4242, "2026-11-30T01:00:00.000Z").unwrap();
        assert_eq!(first.path(), dir.path().join("j.sqlite3.lock"));
        // flock locks belong to the open file description: a second open in this process
        // conflicts just as another process would.
        match acquire(&journal, 1, "later") {
            Err(LockError::Held { owner, .. }) => {
                assert_eq!(owner, "pid 4242, started 2026-11-30T01:00:00.000Z");
            }
            other => panic!("expected Held, got {other:?}"),
        }
        let text = std::fs::read_to_string(first.path()).unwrap();
        assert_eq!(text, "pid 4242\nstarted 2026-11-30T01:00:00.000Z\n");
        drop(first);
        let again = acquire(&journal, 7, "now").unwrap();
        let text = std::fs::read_to_string(again.path()).unwrap();
        assert_eq!(text, "pid 7\nstarted now\n");
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(again.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn the_holder_is_read_from_the_kernel_without_taking_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("j.sqlite3");
        assert_eq!(holder(&journal), None, "no lock file: nobody");
        let held = acquire(&journal, 4242, "then").unwrap();
        assert_eq!(holder(&journal).as_deref(), Some("pid 4242, started then"));
        // Asking took nothing: the holder still holds it, and nobody else can take it.
        assert!(matches!(
            acquire(&journal, 1, "x"),
            Err(LockError::Held { .. })
        ));
        drop(held);
        assert_eq!(
            holder(&journal),
            None,
            "released: nobody, though the file stays"
        );
        assert!(held_in(
            "1: FLOCK  ADVISORY  WRITE 9 fe:01:77 0 EOF\n",
            rustix::fs::makedev(0xfe, 1),
            77
        ));
        assert!(!held_in(
            "1: FLOCK  ADVISORY  WRITE 9 fe:01:770 0 EOF\n",
            rustix::fs::makedev(0xfe, 1),
            77
        ));
    }

    #[test]
    fn the_owner_text_is_bounded_and_inert() {
        assert_eq!(describe_owner(""), "owner unknown");
        assert_eq!(describe_owner("pid 12\n"), "pid 12");
        assert_eq!(
            describe_owner("pid 1\u{1b}[31m2\nstarted x\n"),
            "pid 12, started x"
        );
    }
}
