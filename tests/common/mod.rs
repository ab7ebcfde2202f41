//! The test harness: a hermetic environment for running the binary, agents served in the
//! background, and the helpers every test module shares. No test module imports another's.
//!
//! - [`TestEnv`]: the binary with an empty environment, a temporary HOME and journal, and the
//!   displayed clock pinned ([`PINNED_NOW`]); [`TestEnv::real_clock`] opts out.
//!   [`TestEnv::on`] picks the journal's [`Store`]: a SQLite file, or a fresh schema on the
//!   test run's PostgreSQL server ([`postgres`]).
//! - [`agent`]: [`agent::Background`] servers, scripted agents ([`fast`]) and a slow proxy.
//! - [`child`]: a child process killed and reaped when its handle drops (also on a panic).
//! - [`commands`]: the commands as tests run them (`delegate`, `reconcile`, `inspect` records).
//! - [`journal`]: reading a journal directly (consistency, artifacts).
//! - [`in_runtime`]: the same from inside a tokio test, next to agents served in-process.
//! - [`bookings`]: a tiny booking system, the independent read path of `compensate`.
//! - [`pty`]: the binary with its stdout on a real pseudo-terminal.
//! - [`running`]: a child read line by line as it runs, to wait for what it says.
//! - [`snapshot`]: a run as an insta snapshot (exit status, stdout, stderr), unstable values
//!   redacted.
//! - [`wait`]: waiting on a condition with a hang guard (the one poll loop; no fixed sleeps).

#![allow(dead_code, unreachable_pub)]

pub mod agent;
pub mod bindings;
pub mod bookings;
pub mod child;
pub mod commands;
pub mod cut_proxy;
pub mod hostile;
pub mod in_runtime;
pub mod interop;
pub mod journal;
pub mod journal_dump;
pub mod listen;
pub mod odd_ids;
pub mod postgres;
pub mod pty;
pub mod running;
pub mod snapshot;
pub mod tcp_cut_proxy;
pub mod transcript;
pub mod wait;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use a2a_recover::journal::{Journal, Location};
use a2a_recover::scripted_agent::AgentConfig;
use assert_cmd::Command;
use serde_json::Value;
use tempfile::TempDir;

pub use agent::{Background, agent};

/// The displayed "now" of every [`TestEnv`] unless [`TestEnv::real_clock`]: before any journal
/// time, so every age in a table reads `0s`. Through the binary's hidden `A2A_RECOVER_TEST_NOW`,
/// which pins only what is *displayed*: leases, deadlines, backoff and every time sent to an
/// agent or written to the journal keep the real clock.
pub const PINNED_NOW: &str = "2000-01-01T00:00:00Z";

/// Where a [`TestEnv`]'s journal lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// A SQLite file in the temporary directory.
    Sqlite,
    /// A fresh schema on the test run's PostgreSQL server (`A2A_RECOVER_TEST_PG_URL`; a missing
    /// server fails the test).
    Postgres,
}

/// A hermetic environment: empty env, temporary HOME and state dir, a journal (a file inside,
/// or a fresh PostgreSQL schema), and the displayed clock pinned to [`PINNED_NOW`].
pub struct TestEnv {
    pub dir: TempDir,
    pinned: bool,
    horizon: bool,
    /// The PostgreSQL journal's URL (password included), for [`Store::Postgres`].
    pg_url: Option<String>,
}

impl TestEnv {
    /// An environment whose journal is a SQLite file.
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("tempdir"),
            pinned: true,
            horizon: false,
            pg_url: None,
        }
    }

    /// An environment whose journal is on `store`.
    pub fn on(store: Store) -> Self {
        let mut env = Self::new();
        if store == Store::Postgres {
            env.pg_url = Some(postgres::pg_url());
        }
        env
    }

    /// Returns the store the journal is on.
    pub fn store(&self) -> Store {
        if self.pg_url.is_some() {
            Store::Postgres
        } else {
            Store::Sqlite
        }
    }

    /// Returns the journal's [`Location`], as the binary reads it.
    pub fn location(&self) -> Location {
        Location::parse(&self.journal()).expect("the test journal's location")
    }

    /// Opens the journal through the library (either store), creating it if needed.
    pub fn open_journal(&self) -> Journal {
        Journal::open_at(&self.location(), Duration::from_secs(10)).expect("open the journal")
    }

    /// Opts in to the real in-flight horizon of sends (twice the journaled `--timeout`). By
    /// default a test journals a send timeout of 0 s (`A2A_RECOVER_TEST_SEND_TIMEOUT`), so that
    /// a crash test may look again, and resend, at once.
    pub fn in_flight_horizon(mut self) -> Self {
        self.horizon = true;
        self
    }

    /// Opts out of the pinned display clock: ages in tables are measured against real time.
    pub fn real_clock(mut self) -> Self {
        self.pinned = false;
        self
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The journal used by [`TestEnv::cmd`]: the SQLite file's path, or the PostgreSQL URL
    /// (with its password) as a path, what `--journal` takes. Only a SQLite journal is a file
    /// (`exists()`, its bytes).
    pub fn journal(&self) -> PathBuf {
        match &self.pg_url {
            Some(url) => PathBuf::from(url),
            None => self.dir.path().join("state/journal.sqlite3"),
        }
    }

    /// The SQLite journal's file (panics on PostgreSQL: a test of file bytes is SQLite-only).
    pub fn journal_file(&self) -> PathBuf {
        assert!(
            self.pg_url.is_none(),
            "a SQLite-only helper ran on a PostgreSQL journal"
        );
        self.journal()
    }

    /// Gives `cmd` this environment: a cleared environment, `HOME` and `XDG_STATE_HOME` inside
    /// the temp dir, `A2A_RECOVER_JOURNAL` = [`TestEnv::journal`], `COLUMNS=100`, `NO_COLOR=1`,
    /// `PATH`, and (unless [`TestEnv::real_clock`]) `A2A_RECOVER_TEST_NOW` = [`PINNED_NOW`].
    /// For commands that run the binary through another program (`setpriv`, `script`, …).
    pub fn hermetic<'c>(
        &self,
        cmd: &'c mut std::process::Command,
    ) -> &'c mut std::process::Command {
        cmd.env_clear()
            .env("HOME", self.dir.path().join("home"))
            .env("XDG_STATE_HOME", self.dir.path().join("xdg-state"))
            .env("A2A_RECOVER_JOURNAL", self.journal())
            .env("COLUMNS", "100")
            .env("NO_COLOR", "1")
            .env("PATH", std::env::var_os("PATH").unwrap_or_default());
        if self.pinned {
            cmd.env("A2A_RECOVER_TEST_NOW", PINNED_NOW);
        }
        if !self.horizon {
            cmd.env("A2A_RECOVER_TEST_SEND_TIMEOUT", "0s");
        }
        cmd
    }

    /// The binary as a std [`std::process::Command`] in this environment (one that can spawn).
    pub fn std_cmd(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("a2a-recover"));
        self.hermetic(&mut cmd);
        cmd
    }

    /// The binary in this environment (see [`TestEnv::hermetic`]).
    pub fn cmd(&self) -> Command {
        Command::from_std(self.std_cmd())
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

/// Runs `f` to its end on a runtime of its own, from a test that is not async (a request to an
/// agent with our client).
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(f)
}

/// Returns stdout as a string.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Returns stderr as a string.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A run's exit status, stdout and stderr, for an assertion's message.
pub fn explain(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        stdout(o),
        stderr(o)
    )
}

/// Returns the exit code (panics if killed by a signal).
pub fn code(o: &Output) -> i32 {
    o.status
        .code()
        .unwrap_or_else(|| panic!("killed by a signal: {o:?}"))
}

/// Parses stdout as JSON Lines.
pub fn json_lines(out: &Output) -> Vec<Value> {
    json_lines_of(&stdout(out))
}

/// The last line of a command's JSON Lines, a `summary` of `command` whose `exitCode` is the
/// process's (the first line its `begin`).
pub fn summary_of(o: &Output, command: &str) -> Value {
    let all = json_lines(o);
    assert_eq!(all[0]["type"], "begin", "{all:?}");
    assert_eq!(all[0]["command"], command);
    let last = all.last().unwrap().clone();
    assert_eq!(last["type"], "summary", "{all:?}");
    assert_eq!(last["command"], command);
    assert_eq!(i64::from(code(o)), last["exitCode"].as_i64().unwrap());
    last
}

/// The `summary` record of a `--format json` run (the last one); panics showing the run when it
/// printed none.
pub fn summary_record(o: &Output) -> Value {
    json_lines(o)
        .into_iter()
        .rfind(|r| r["type"] == "summary")
        .unwrap_or_else(|| panic!("no summary: {}", explain(o)))
}

/// The `action` records of a run's JSON Lines.
pub fn actions(o: &Output) -> Vec<Value> {
    json_lines(o)
        .into_iter()
        .filter(|r| r["type"] == "action")
        .collect()
}

/// Parses `text` as JSON Lines.
pub fn json_lines_of(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// A scripted agent that works in 20 ms ticks.
pub fn fast() -> AgentConfig {
    AgentConfig {
        tick: Duration::from_millis(20),
        ..AgentConfig::default()
    }
}

/// [`fast`], advertising these skills on its card.
pub fn fast_with_skills(skills: &[&str]) -> AgentConfig {
    AgentConfig {
        skills: skills.iter().map(|s| (*s).to_owned()).collect(),
        ..fast()
    }
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}
