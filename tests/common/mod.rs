//! Test helpers: a hermetic environment for running the binary.

#![allow(dead_code, unreachable_pub)]

pub mod hostile;
pub mod interop;

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use tempfile::TempDir;

/// A hermetic environment: empty env, temporary HOME and state dir, a journal path inside.
pub struct TestEnv {
    pub dir: TempDir,
}

impl TestEnv {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The journal used by [`TestEnv::cmd`].
    pub fn journal(&self) -> PathBuf {
        self.dir.path().join("state/journal.sqlite3")
    }

    /// The binary with a cleared environment, `HOME` and `XDG_STATE_HOME` inside the temp dir,
    /// `--journal` pointing at [`TestEnv::journal`], `COLUMNS=100` and `NO_COLOR=1`.
    pub fn cmd(&self) -> Command {
        let mut cmd = Command::cargo_bin("a2a-recover").expect("binary");
        cmd.env_clear()
            .env("HOME", self.dir.path().join("home"))
            .env("XDG_STATE_HOME", self.dir.path().join("xdg-state"))
            .env("A2A_RECOVER_JOURNAL", self.journal())
            .env("COLUMNS", "100")
            .env("NO_COLOR", "1")
            .env("PATH", std::env::var_os("PATH").unwrap_or_default());
        cmd
    }

    /// Runs the binary and returns its output (never panics on a non-zero exit).
    #[must_use = "check the exit code and output"]
    pub fn run<I, S>(&self, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.cmd().args(args).output().expect("run binary")
    }
}

/// Returns stdout as a string.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Returns stderr as a string.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Returns the exit code (panics if killed by a signal).
pub fn code(o: &Output) -> i32 {
    o.status
        .code()
        .unwrap_or_else(|| panic!("killed by a signal: {o:?}"))
}
