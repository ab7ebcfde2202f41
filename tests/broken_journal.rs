//! Broken journals, end to end: a file that is not SQLite, one truncated mid-page (also beside a
//! crashed writer's WAL), a newer schema, an unsafe directory, a journal nobody may write (an
//! immutable file, or an unprivileged user), a write transaction held past `--timeout`, and an
//! I/O error during a commit (a full file system, or the file-size limit). Each is a clear error
//! with a hint and exit 1 (the unsafe directory only warns), leaves no partial state (the
//! journal opens and its rows are consistent), and once the cause is gone the next run succeeds.
//!
//! Tests run as root, so mode bits prove nothing for root itself: an unwritable journal is made
//! with `chattr +i` where the file system allows it, else the child runs as `nobody` through
//! `setpriv` (util-linux; `scripts/test` installs it when missing). A full disk is a small tmpfs
//! mounted in the test's directory where mounting is allowed, else `prlimit --fsize` with
//! SIGXFSZ ignored, so a write past the limit fails with `EFBIG` instead of killing the child.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use a2a_recover::scripted_agent::ScriptedAgent;

use crate::common::commands::{attempts, delegate};
use crate::common::journal::{artifacts_of, assert_consistent};
use crate::common::{Background, TestEnv, agent, code, fast, stderr, stdout};

/// The length and an FNV-1a hash of a file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fingerprint {
    len: usize,
    hash: u64,
}

fn fingerprint(bytes: &[u8]) -> Fingerprint {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    Fingerprint {
        len: bytes.len(),
        hash,
    }
}

/// The journal and its siblings, fingerprinted (a missing file reads as `None`).
fn files(journal: &Path) -> Vec<(String, Option<Fingerprint>)> {
    ["", "-wal", "-shm"]
        .iter()
        .map(|suffix| {
            let mut p = journal.as_os_str().to_owned();
            p.push(suffix);
            let bytes = std::fs::read(PathBuf::from(p)).ok();
            ((*suffix).to_owned(), bytes.as_deref().map(fingerprint))
        })
        .collect()
}

/// The journal file and its WAL, fingerprinted (the `-shm` index is rebuilt by any reader,
/// and an empty WAL, which a connection that cannot write leaves behind, holds nothing).
fn durable_files(journal: &Path) -> Vec<(String, Option<Fingerprint>)> {
    files(journal)
        .into_iter()
        .filter(|(suffix, _)| suffix != "-shm")
        .map(|(suffix, f)| (suffix, f.filter(|f| f.len > 0)))
        .collect()
}

/// How many messages the agent received whose text is `text` (the agent keeps the first
/// 16 KiB of each).
fn received(a: &Background<ScriptedAgent>, text: &str) -> usize {
    a.stats()
        .messages
        .iter()
        .filter(|m| m.text == text || (m.text.len() >= 16 * 1024 && text.starts_with(&m.text)))
        .count()
}

/// Asserts exit 1 with every `needle` in stderr and a hint.
#[track_caller]
fn assert_fails(out: &Output, needles: &[&str]) {
    let err = stderr(out);
    assert_eq!(code(out), 1, "stdout: {}\nstderr: {err}", stdout(out));
    for n in needles {
        assert!(err.contains(n), "`{n}` missing from:\n{err}");
    }
    assert!(err.contains("\nhint: "), "no hint in:\n{err}");
}

/// Journals three steps: one completed, one still working, one waiting for input.
fn three_steps(env: &TestEnv, a: &Background<ScriptedAgent>) {
    for (step, text) in [
        ("w/echo", "hello"),
        ("w/work", "work:500"),
        ("w/ask", "ask"),
    ] {
        let out = delegate(env, step, &a.url(), text, &[]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let out = env.run(["reconcile"]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    assert_eq!(assert_consistent(&env.journal()), 3);
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_untouched_by_every_command() {
    let env = TestEnv::new();
    let a = agent(fast());
    std::fs::create_dir_all(env.journal().parent().unwrap()).unwrap();
    std::fs::write(env.journal(), b"my shopping list\n- eggs\n").unwrap();
    let before = files(&env.journal());
    for args in [
        vec!["delegate", "w/s", "--agent", &a.url(), "hello"],
        vec!["reconcile"],
        vec!["inspect"],
        vec!["reply", "w/s", "two"],
        vec!["resolve", "w/s", "--as", "done", "--reason", "r"],
    ] {
        let out = env.run(&args);
        assert_fails(
            &out,
            &["is not an SQLite database", "the file was left untouched"],
        );
        assert_eq!(files(&env.journal()), before, "{args:?} touched the files");
    }
    assert_eq!(
        received(&a, "hello"),
        0,
        "nothing is sent without a journal"
    );
    // The cause gone (the file moved away), the same command succeeds.
    std::fs::rename(env.journal(), env.path().join("list.txt")).unwrap();
    let out = delegate(&env, "w/s", &a.url(), "hello", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(received(&a, "hello"), 1);
    assert_eq!(assert_consistent(&env.journal()), 1);
}

#[test]
fn a_journal_truncated_mid_page_or_by_whole_pages_is_refused_untouched() {
    let env = TestEnv::new();
    let a = agent(fast());
    three_steps(&env, &a);
    let backup = std::fs::read(env.journal()).unwrap();
    assert!(
        files(&env.journal())[1].1.is_none(),
        "a clean close leaves no WAL"
    );
    let page = 4096;
    for (len, needle) in [
        (
            backup.len() - page / 2,
            "not a whole number of 4096-byte pages",
        ),
        (2 * page, "the header says"),
    ] {
        std::fs::write(env.journal(), &backup[..len]).unwrap();
        let before = files(&env.journal());
        for args in [
            vec!["delegate", "w/new", "--agent", &a.url(), "hello again"],
            vec!["reconcile"],
            vec!["inspect"],
        ] {
            let out = env.run(&args);
            assert_fails(&out, &["is corrupt", needle, "restore it from a backup"]);
            assert_eq!(files(&env.journal()), before, "{args:?} touched the files");
        }
    }
    assert_eq!(received(&a, "hello again"), 0);
    // Restored from the backup, every row is there and work goes on.
    std::fs::write(env.journal(), &backup).unwrap();
    let rows = attempts(&env, Some("w"));
    let states: Vec<&str> = rows.iter().map(|r| r["state"].as_str().unwrap()).collect();
    assert_eq!(states, ["COMPLETED", "WORKING", "INPUT_REQUIRED"]);
    let out = delegate(&env, "w/new", &a.url(), "hello again", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(received(&a, "hello again"), 1);
    assert_eq!(assert_consistent(&env.journal()), 4);
}

#[test]
fn a_truncated_journal_beside_a_crashed_writers_wal_is_left_untouched() {
    let env = TestEnv::new();
    let a = agent(fast());
    three_steps(&env, &a);
    // A delegate killed after committing its intent leaves its WAL behind.
    let out = env
        .cmd()
        .env("A2A_RECOVER_CRASH_AT", "after-intent")
        .args(["delegate", "w/crashed", "--agent", &a.url(), "crashed"])
        .output()
        .unwrap();
    assert_eq!(code_or_signal(&out), "signal 6", "{}", stderr(&out));
    let wal = files(&env.journal())[1].1;
    assert!(wal.is_some_and(|w| w.len > 0), "a WAL: {wal:?}");
    // With a WAL beside it the header cannot say how long the file should be; SQLite finds the
    // damage, and the file and its WAL must stay as they were for `.recover`.
    let main = std::fs::read(env.journal()).unwrap();
    std::fs::write(env.journal(), &main[..4096 + 2048]).unwrap();
    let before = durable_files(&env.journal());
    for args in [vec!["reconcile"], vec!["inspect"], vec!["reconcile"]] {
        let out = env.run(&args);
        assert_fails(&out, &["is corrupt", "the file was left untouched"]);
        assert_eq!(
            durable_files(&env.journal()),
            before,
            "{args:?} touched the journal or its WAL"
        );
    }
    // Restored (file and WAL), the crashed intent is found and sent once.
    std::fs::write(env.journal(), &main).unwrap();
    let out = env.run(["reconcile"]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    assert_eq!(received(&a, "crashed"), 1);
    assert_eq!(assert_consistent(&env.journal()), 4);
}

fn code_or_signal(out: &Output) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (out.status.code(), out.status.signal()) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => "unknown".to_owned(),
    }
}

/// Sets the journal's `user_version`.
fn set_user_version(journal: &Path, version: i64) {
    let conn = rusqlite::Connection::open(journal).unwrap();
    conn.pragma_update(None, "user_version", version).unwrap();
}

#[test]
fn a_journal_from_a_newer_version_refuses_every_write_and_still_reads() {
    let env = TestEnv::new();
    let a = agent(fast());
    three_steps(&env, &a);
    let newer = a2a_recover::journal::migrate::LATEST + 1;
    set_user_version(&env.journal(), newer);
    let before = durable_files(&env.journal());
    for args in [
        vec!["delegate", "w/new", "--agent", &a.url(), "hello again"],
        vec!["reconcile"],
        vec!["reply", "w/ask", "two"],
    ] {
        let out = env.run(&args);
        assert_fails(
            &out,
            &[
                &format!("has schema version {newer}"),
                "written by a newer a2a-recover",
            ],
        );
        assert_eq!(durable_files(&env.journal()), before, "{args:?} wrote");
    }
    assert_eq!(received(&a, "hello again"), 0);
    assert_eq!(received(&a, "two"), 0);
    assert_eq!(attempts(&env, Some("w")).len(), 3, "reads work");
    // The pass lock was released by every refused pass.
    assert!(a2a_recover::recovery::lock::acquire(&env.journal(), 1, "test").is_ok());
    // With the binary that wrote it (here: the version set back), work goes on.
    set_user_version(&env.journal(), a2a_recover::journal::migrate::LATEST);
    let out = env.run(["reply", "w/ask", "two"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(received(&a, "two"), 1);
    assert_eq!(assert_consistent(&env.journal()), 3);
}

/// A journal from a newer version is refused before any agent is asked anything: no card
/// fetched, no task read, by every command that would write to it.
#[test]
fn a_newer_journal_is_refused_before_any_network_read() {
    let env = TestEnv::new();
    let a = agent(fast());
    three_steps(&env, &a);
    let newer = a2a_recover::journal::migrate::LATEST + 1;
    set_user_version(&env.journal(), newer);
    let traffic = |a: &Background<ScriptedAgent>| {
        let stats = a.stats();
        (stats.card_fetches, stats.requests.values().sum::<u64>())
    };
    let before = traffic(&a);
    let url = a.url();
    for args in [
        vec!["reply", "w/ask", "two"],
        vec!["follow", "w/ask"],
        vec!["agents", "add", url.as_str()],
        vec!["delegate", "w/new", "--agent", url.as_str(), "hello again"],
        vec!["reconcile"],
        vec!["compensate", "w"],
        vec!["resolve", "w/ask", "--as", "done", "--reason", "by phone"],
    ] {
        let out = env.run(&args);
        assert_fails(
            &out,
            &[
                &format!("has schema version {newer}"),
                "written by a newer a2a-recover",
            ],
        );
        assert_eq!(traffic(&a), before, "{args:?} talked to the agent first");
    }
    // Reads still work.
    let out = env.run(["agents", "list"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn a_group_or_world_writable_directory_is_warned_about_and_still_works() {
    use std::os::unix::fs::PermissionsExt as _;
    let env = TestEnv::new();
    let a = agent(fast());
    let dir = env.journal().parent().unwrap().to_path_buf();
    std::fs::create_dir_all(&dir).unwrap();
    for (i, mode) in [0o770, 0o777, 0o1777].into_iter().enumerate() {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
        let step = format!("w/s{i}");
        let out = delegate(&env, &step, &a.url(), "hello", &["--format", "json"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert!(
            stderr(&out).contains("is writable by other users")
                && stderr(&out).contains(&format!("(mode {mode:04o})")),
            "{}",
            stderr(&out)
        );
        // Warnings go to stderr only: stdout stays JSON Lines.
        for line in stdout(&out).lines() {
            serde_json::from_str::<serde_json::Value>(line).expect("JSON line");
        }
        let meta = std::fs::metadata(&dir).unwrap();
        assert_eq!(meta.permissions().mode() & 0o7777, mode, "mode changed");
        let out = env.run(["reconcile"]);
        assert!(stderr(&out).contains("is writable by other users"));
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    assert_eq!(received(&a, "hello"), 3);
    assert_eq!(assert_consistent(&env.journal()), 3);
}

// ---------------------------------------------------------------------------------------------
// A journal nobody may write
// ---------------------------------------------------------------------------------------------

/// An immutable file (`chattr +i`), made mutable again on drop.
struct Immutable(PathBuf);

impl Immutable {
    /// Sets the attribute; `None` where the file system does not allow it (tmpfs) or `chattr`
    /// is missing.
    fn set(path: &Path) -> Option<Self> {
        let ok = Command::new("chattr")
            .arg("+i")
            .arg(path)
            .output()
            .is_ok_and(|o| o.status.success());
        ok.then(|| Self(path.to_path_buf()))
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// The binary as the unprivileged user `nobody` (uid and gid 65534) through `setpriv`, with
/// the test's environment.
fn as_nobody(env: &TestEnv) -> Command {
    let probe = Command::new("setpriv").arg("--version").output();
    assert!(
        probe.is_ok_and(|o| o.status.success()),
        "setpriv (util-linux) is required: scripts/test installs it"
    );
    let mut cmd = Command::new("setpriv");
    env.hermetic(&mut cmd)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(assert_cmd::cargo::cargo_bin("a2a-recover"));
    cmd
}

/// Runs `args` as `nobody` (see [`as_nobody`]).
fn run_as_nobody(env: &TestEnv, args: &[&str]) -> Output {
    as_nobody(env).args(args).output().expect("run setpriv")
}

/// Lets `nobody` reach the journal's directory and read (not write) the journal: the directory
/// belongs to `nobody` (so SQLite can make its `-wal` and `-shm` there), the journal stays
/// root's with mode 0644.
fn readable_by_nobody(env: &TestEnv) {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = env.journal().parent().unwrap().to_path_buf();
    std::fs::set_permissions(env.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::chown(&dir, Some(65534), None).unwrap();
    std::fs::set_permissions(env.journal(), std::fs::Permissions::from_mode(0o644)).unwrap();
    let _ = std::fs::remove_file(a2a_recover::recovery::lock::lock_path(&env.journal()));
    let _ = std::fs::remove_dir_all(a2a_recover::recovery::lock::workflow_lock_dir(
        &env.journal(),
    ));
}

/// Journals a step, then checks that with the journal unwritable (`run` runs the binary so)
/// every write fails with exit 1 and a hint, nothing is sent, reads work, and that once it is
/// writable again (`restore`) the same commands succeed.
fn unwritable_journal(
    env: &TestEnv,
    a: &Background<ScriptedAgent>,
    run: &dyn Fn(&[&str]) -> Output,
    restore: &dyn Fn(),
) {
    let before = durable_files(&env.journal());
    let url = a.url();
    for args in [
        vec!["delegate", "w/new", "--agent", url.as_str(), "hello again"],
        vec!["reconcile"],
        vec!["reply", "w/ask", "two"],
    ] {
        let out = run(&args);
        assert_fails(&out, &["readonly database"]);
        assert!(
            stderr(&out).contains("permissions"),
            "the hint names the cause: {}",
            stderr(&out)
        );
        assert_eq!(durable_files(&env.journal()), before, "{args:?} wrote");
    }
    assert_eq!(received(a, "hello again"), 0);
    assert_eq!(received(a, "two"), 0);
    let out = run(&["inspect", "w/ask", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("INPUT_REQUIRED"));
    restore();
    let out = run(&["delegate", "w/new", "--agent", &url, "hello again"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = run(&["reply", "w/ask", "two"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(received(a, "hello again"), 1);
    assert_eq!(received(a, "two"), 1);
    assert_eq!(assert_consistent(&env.journal()), 4);
}

#[test]
fn an_immutable_journal_refuses_writes_and_works_once_writable_again() {
    let env = TestEnv::new();
    let a = agent(fast());
    three_steps(&env, &a);
    if let Some(guard) = Immutable::set(&env.journal()) {
        let guard = std::cell::RefCell::new(Some(guard));
        unwritable_journal(&env, &a, &|args| env.run(args), &|| {
            drop(guard.borrow_mut().take());
        });
    } else {
        // tmpfs and some other file systems have no immutable attribute.
        unwritable_without_chattr(&env, &a);
    }
}

#[test]
fn a_journal_an_unprivileged_user_cannot_write_refuses_writes_cleanly() {
    let env = TestEnv::new();
    let a = agent(fast());
    three_steps(&env, &a);
    unwritable_without_chattr(&env, &a);
}

/// Makes the journal unwritable without `chattr`: as root, by running the binary as `nobody`
/// (mode bits do not stop root); otherwise by its mode.
fn unwritable_without_chattr(env: &TestEnv, a: &Background<ScriptedAgent>) {
    use std::os::unix::fs::PermissionsExt as _;
    if is_root() {
        readable_by_nobody(env);
        unwritable_journal(env, a, &|args| run_as_nobody(env, args), &|| {
            std::os::unix::fs::chown(env.journal(), Some(65534), None).unwrap();
        });
    } else {
        let journal = env.journal();
        std::fs::set_permissions(&journal, std::fs::Permissions::from_mode(0o400)).unwrap();
        unwritable_journal(env, a, &|args| env.run(args), &|| {
            std::fs::set_permissions(&journal, std::fs::Permissions::from_mode(0o600)).unwrap();
        });
    }
}

// ---------------------------------------------------------------------------------------------
// A busy journal
// ---------------------------------------------------------------------------------------------

#[test]
fn a_write_transaction_held_past_the_timeout_exits_1_with_the_busy_hint() {
    let env = TestEnv::new();
    let a = agent(fast());
    three_steps(&env, &a);
    let mut holder = rusqlite::Connection::open(env.journal()).unwrap();
    let tx = holder
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .unwrap();
    let busy = [
        "stayed busy for 1s",
        "another a2a-recover holds the journal; wait for it, or raise --timeout",
    ];
    let url = a.url();
    for args in [
        vec!["delegate", "w/new", "--agent", url.as_str(), "hello again"],
        vec!["reconcile"],
        vec!["reply", "w/ask", "two"],
        vec!["resolve", "w/work", "--as", "abandoned", "--reason", "r"],
    ] {
        let mut full = vec!["--timeout", "1s"];
        full.extend(&args);
        let out = env.run(&full);
        assert_fails(&out, &busy);
    }
    assert_eq!(received(&a, "hello again"), 0);
    assert_eq!(received(&a, "two"), 0);
    // Readers are not blocked by a writer (WAL).
    assert_eq!(attempts(&env, Some("w")).len(), 3);
    // A refused pass left the pass lock free.
    drop(a2a_recover::recovery::lock::acquire(&env.journal(), 1, "test").expect("lock free"));
    tx.rollback().unwrap();
    drop(holder);
    for args in [
        vec!["delegate", "w/new", "--agent", url.as_str(), "hello again"],
        vec!["reply", "w/ask", "two"],
    ] {
        let mut full = vec!["--timeout", "1s"];
        full.extend(&args);
        let out = env.run(&full);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
    }
    assert_eq!(received(&a, "hello again"), 1);
    assert_eq!(received(&a, "two"), 1);
    assert_eq!(assert_consistent(&env.journal()), 4);
}

// ---------------------------------------------------------------------------------------------
// An I/O error during a commit
// ---------------------------------------------------------------------------------------------

/// A tmpfs mounted on a directory; unmounted on drop.
struct Mount(PathBuf);

impl Mount {
    /// Mounts a tmpfs of `size` bytes on `dir`; `None` where mounting is not allowed.
    fn tmpfs(dir: &Path, size: u64) -> Option<Self> {
        std::fs::create_dir_all(dir).unwrap();
        let ok = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(dir)
            .output()
            .is_ok_and(|o| o.status.success());
        ok.then(|| Self(dir.to_path_buf()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// How the tests make a commit fail: a full file system, or the file-size limit.
enum Squeeze {
    /// A tmpfs holding the journal, filled but for `free` bytes by `filler`.
    Full { _mount: Mount, filler: PathBuf },
    /// `prlimit --fsize=BYTES` on the child, SIGXFSZ ignored.
    FileSize(u64),
}

impl Squeeze {
    /// Makes later writes fail: fills the tmpfs but for `free` bytes.
    fn full(mount: Mount, free: u64) -> Self {
        use std::io::Write as _;
        let filler = mount.0.join("filler");
        let mut f = std::fs::File::create(&filler).unwrap();
        let block = vec![0_u8; 4096];
        while f.write_all(&block).is_ok() {}
        drop(f);
        let len = std::fs::metadata(&filler).unwrap().len();
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&filler)
            .unwrap();
        f.set_len(len.saturating_sub(free)).unwrap();
        Self::Full {
            _mount: mount,
            filler,
        }
    }

    /// Runs the binary with the squeeze applied.
    fn run(&self, env: &TestEnv, args: &[&str]) -> Output {
        match self {
            Self::Full { .. } => env.run(args),
            Self::FileSize(bytes) => env
                .hermetic(&mut Command::new("sh"))
                // An ignored signal stays ignored across exec: a write past the limit then
                // fails with EFBIG instead of killing the process with SIGXFSZ.
                .args(["-c", "trap '' XFSZ; exec prlimit --fsize=\"$0\" -- \"$@\""])
                .arg(bytes.to_string())
                .arg(assert_cmd::cargo::cargo_bin("a2a-recover"))
                .args(args)
                .output()
                .expect("run prlimit"),
        }
    }

    /// Ends the squeeze: the filler is deleted (a `FileSize` squeeze ends with its child).
    fn release(&self) {
        if let Self::Full { filler, .. } = self {
            std::fs::remove_file(filler).unwrap();
        }
    }
}

/// A text big enough that its commit cannot fit in the room left: an echo of 64 KiB.
fn big_text(tag: &str) -> String {
    format!("{tag} {}", "x".repeat(64 * 1024))
}

/// Checks that with commits failing (`squeeze`), a delegate's intent and a reconcile's
/// observation fail with exit 1 and leave the journal consistent and unchanged, nothing is sent
/// before its intent is committed, and once the cause is gone both succeed.
fn commit_fails_cleanly(env: &TestEnv, a: &Background<ScriptedAgent>, squeeze: &Squeeze) {
    let run = |args: &[&str]| squeeze.run(env, args);
    let rows_before = attempts(env, None);
    let url = a.url();
    let new = big_text("new");
    let cause = match squeeze {
        Squeeze::Full { .. } => "the disk is full",
        Squeeze::FileSize(_) => "I/O error",
    };
    let out = run(&["delegate", "w/new", "--agent", &url, &new]);
    assert_fails(&out, &["failed to commit the intent", cause]);
    assert_eq!(received(a, &new), 0, "sent before its intent was committed");
    // The observation of `w/seen` (COMPLETED, with its 64 KiB echo) cannot be committed.
    let out = run(&["reconcile"]);
    assert_fails(&out, &[cause]);
    assert_eq!(assert_consistent(&env.journal()), rows_before.len());
    assert_eq!(
        attempts(env, None),
        rows_before,
        "a failed commit changed rows"
    );
    squeeze.release();
    let out = env.run(["delegate", "w/new", "--agent", &url, &new]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = env.run(["reconcile"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(received(a, &new), 1);
    let seen = attempts(env, Some("w/seen")).remove(0);
    assert_eq!(seen["state"], "COMPLETED");
    let arts = artifacts_of(&env.journal(), "w/seen");
    assert_eq!(arts.len(), 1, "{arts:?}");
    assert_eq!(arts[0].text(), big_text("seen"), "the echo is whole");
    assert_eq!(assert_consistent(&env.journal()), rows_before.len() + 1);
}

/// Journals one completed step and one whose completion (a 64 KiB echo) is not yet observed.
fn small_and_big(env: &TestEnv, a: &Background<ScriptedAgent>) {
    let out = delegate(env, "w/small", &a.url(), "hello", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = env.run(["reconcile"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = delegate(env, "w/seen", &a.url(), &big_text("seen"), &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(attempts(env, Some("w/seen"))[0]["state"], "SUBMITTED");
}

#[test]
fn a_commit_on_a_full_file_system_fails_cleanly_and_the_next_pass_succeeds() {
    let env = TestEnv::new();
    let a = agent(fast());
    // The journal's own directory is the small file system.
    let Some(mount) = Mount::tmpfs(env.journal().parent().unwrap(), 4 << 20) else {
        // Mounting needs CAP_SYS_ADMIN: inject the same write error through the file-size
        // limit instead.
        small_and_big(&env, &a);
        let size = std::fs::metadata(env.journal()).unwrap().len();
        commit_fails_cleanly(&env, &a, &Squeeze::FileSize(size.max(48 << 10)));
        return;
    };
    small_and_big(&env, &a);
    // Room for the WAL index (32 KiB) and a small commit, not for 64 KiB.
    let squeeze = Squeeze::full(mount, 48 << 10);
    let out = squeeze.run(&env, &["inspect"]);
    assert_eq!(code(&out), 0, "reads still work: {}", stderr(&out));
    commit_fails_cleanly(&env, &a, &squeeze);
}

#[test]
fn a_commit_past_the_file_size_limit_fails_cleanly_and_the_next_pass_succeeds() {
    let env = TestEnv::new();
    let a = agent(fast());
    small_and_big(&env, &a);
    // Every file the child writes is capped: the WAL index and a small commit fit, 64 KiB not.
    commit_fails_cleanly(&env, &a, &Squeeze::FileSize(48 << 10));
}

// ---------------------------------------------------------------------------------------------
// The pass lock
// ---------------------------------------------------------------------------------------------

#[test]
fn a_lock_file_that_cannot_be_opened_fails_cleanly_with_a_hint() {
    let env = TestEnv::new();
    let a = agent(fast());
    three_steps(&env, &a);
    // Something that is not a file sits where the lock file goes.
    let lock = a2a_recover::recovery::lock::lock_path(&env.journal());
    let _ = std::fs::remove_file(&lock);
    std::fs::create_dir(&lock).unwrap();
    let before = durable_files(&env.journal());
    for args in [vec!["reconcile"], vec!["compensate", "w"]] {
        let out = env.run(&args);
        assert_fails(&out, &["failed to use the journal lock", "lock file"]);
        assert_eq!(durable_files(&env.journal()), before, "{args:?} wrote");
    }
    std::fs::remove_dir(&lock).unwrap();
    let out = env.run(["reconcile"]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    assert_eq!(assert_consistent(&env.journal()), 3);
}
