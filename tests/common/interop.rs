//! Interop harness: agents on the official A2A SDKs, and our own scripted agent, as child processes
//! on loopback.
//!
//! Each agent binds `127.0.0.1:0` itself and prints `listening on http://127.0.0.1:PORT/` once its
//! socket listens, so no test sleeps to wait for readiness. The official SDKs come from
//! `scripts/test`, which installs them pinned and exports `A2A_RECOVER_INTEROP_PYTHON` (the venv's
//! python) and `A2A_RECOVER_INTEROP_JS_DIR` (`tests/interop/js` with its `node_modules`). Without
//! those variables the repository's default locations are used. A missing runtime is a failure,
//! never a skip: interop is only proven when it runs.
//!
//! Helpers are synchronous (they block on the child's ready line), so call them before entering
//! an async runtime or from a sync test.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use a2a_recover::a2a::{A2aClient, ClientConfig, Endpoint, ProtocolBinding, origin_of};
use tempfile::TempDir;

/// What to run when an SDK is missing; the README gives the same command.
pub const INSTALL_HINT: &str =
    "run `scripts/test` (it installs the pinned a2a-sdk and @a2a-js/sdk)";

/// How long an agent may take to print its ready line.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// How much of a child's stderr goes into a panic message.
const STDERR_TAIL_BYTES: u64 = 4000;

/// Returns our client with generous limits, for reading what an agent holds.
pub fn test_client() -> A2aClient {
    A2aClient::new(ClientConfig {
        timeout: Duration::from_secs(30),
        max_response_size: 16 * 1024 * 1024,
        stream_idle_timeout: Duration::from_secs(60),
        max_look_size: 64 * 1024 * 1024,
    })
    .expect("the client")
}

/// Returns the endpoint of an interface URL without a credential or tenant.
pub fn plain_endpoint(url: &str, binding: ProtocolBinding) -> Endpoint {
    Endpoint {
        url: url.to_owned(),
        tenant: None,
        binding,
        card_origin: origin_of(url).expect("an http URL"),
        credential: None,
        allow_cross_origin: false,
    }
}

/// A running agent process, killed when dropped.
pub struct InteropAgent {
    /// The base URL from the ready line, e.g. `http://127.0.0.1:41234/`.
    pub url: String,
    what: String,
    child: Child,
    stderr_log: PathBuf,
    _dir: TempDir,
}

impl InteropAgent {
    /// Returns the last few KiB of the agent's stderr, for failure messages.
    pub fn stderr_tail(&self) -> String {
        tail(&self.stderr_log)
    }

    /// Returns a line naming the agent and its stderr tail, to append to assertion messages.
    pub fn context(&self) -> String {
        format!(
            "{} at {}; its stderr ends with:\n{}",
            self.what,
            self.url,
            self.stderr_tail()
        )
    }
}

impl Drop for InteropAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Returns `tests/interop` in this repository.
pub fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop")
}

/// Returns the python of the venv holding the pinned a2a-sdk, or panics with [`INSTALL_HINT`].
pub fn interop_python() -> PathBuf {
    let python = std::env::var_os("A2A_RECOVER_INTEROP_PYTHON").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join(".interop/venv/bin/python"),
        PathBuf::from,
    );
    assert!(
        python.is_file(),
        "the Python interop runtime is missing: {} does not exist (A2A_RECOVER_INTEROP_PYTHON); \
         {INSTALL_HINT}",
        python.display()
    );
    python
}

/// Returns the directory holding `agent.mjs` and the pinned `@a2a-js/sdk`, or panics with
/// [`INSTALL_HINT`].
pub fn interop_js_dir() -> PathBuf {
    let dir = std::env::var_os("A2A_RECOVER_INTEROP_JS_DIR")
        .map_or_else(|| interop_dir().join("js"), PathBuf::from);
    let sdk = dir.join("node_modules/@a2a-js/sdk/package.json");
    assert!(
        sdk.is_file(),
        "the JS interop runtime is missing: {} does not exist (A2A_RECOVER_INTEROP_JS_DIR); \
         {INSTALL_HINT}",
        sdk.display()
    );
    dir
}

/// Starts `tests/interop/python/agent.py` on the official Python SDK.
pub fn start_python_agent() -> InteropAgent {
    start_python_agent_with(&[])
}

/// Starts `tests/interop/python/agent.py` with `args` (`--http-json-only`).
pub fn start_python_agent_with(args: &[&str]) -> InteropAgent {
    let mut cmd = Command::new(interop_python());
    cmd.arg(interop_dir().join("python/agent.py"))
        .args(args)
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    spawn_agent("the a2a-sdk (Python) agent", INSTALL_HINT, cmd)
}

/// Starts `tests/interop/js/agent.mjs` on the official JS SDK.
pub fn start_js_agent() -> InteropAgent {
    start_js_agent_with(&[])
}

/// Starts `tests/interop/js/agent.mjs` with `args` (`--http-json-only`).
pub fn start_js_agent_with(args: &[&str]) -> InteropAgent {
    let dir = interop_js_dir();
    let mut cmd = Command::new("node");
    cmd.arg(dir.join("agent.mjs")).args(args).current_dir(&dir);
    spawn_agent("the @a2a-js/sdk agent", INSTALL_HINT, cmd)
}

/// Starts `a2a-recover scripted-agent --port 0` with extra `args`.
pub fn start_scripted_agent(args: &[&str]) -> InteropAgent {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("a2a-recover"));
    cmd.args(["scripted-agent", "--port", "0"])
        .args(args)
        .env("NO_COLOR", "1");
    spawn_agent(
        "a2a-recover scripted-agent",
        "the binary itself failed to serve; see `src/scripted_agent`",
        cmd,
    )
}

/// Spawns `cmd`, waits (at most [`READY_TIMEOUT`]) for its `listening on URL` line, and returns it;
/// panics with `hint` and the child's stderr when it does not get there.
pub fn spawn_agent(what: &str, hint: &str, mut cmd: Command) -> InteropAgent {
    let dir = tempfile::tempdir().expect("tempdir for agent logs");
    let stderr_log = dir.path().join("stderr.log");
    let stderr = File::create(&stderr_log).expect("create agent stderr log");
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr));
    let mut child = cmd.spawn().unwrap_or_else(|e| {
        panic!(
            "cannot start {what} ({}): {e}; {hint}",
            cmd.get_program().display()
        )
    });

    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let mut seen = Vec::new();
        let mut sent = false;
        for line in lines.by_ref() {
            let Ok(line) = line else { break };
            if !sent {
                if let Some(url) = line.strip_prefix("listening on ") {
                    let _ = tx.send(Ok(url.trim().to_owned()));
                    sent = true;
                } else {
                    seen.push(line);
                }
            }
            // After the ready line, keep draining so the child never blocks on a full pipe.
        }
        if !sent {
            let _ = tx.send(Err(seen.join("\n")));
        }
    });

    let url = match rx.recv_timeout(READY_TIMEOUT) {
        Ok(Ok(url)) => url,
        Ok(Err(stdout)) => not_ready(
            (what, hint),
            &mut child,
            &stderr_log,
            &format!("it closed stdout without a `listening on` line (stdout: {stdout:?})"),
        ),
        Err(_) => not_ready(
            (what, hint),
            &mut child,
            &stderr_log,
            &format!("no `listening on` line within {READY_TIMEOUT:?}"),
        ),
    };
    if !(url.starts_with("http://127.0.0.1:") && url.ends_with('/')) {
        not_ready(
            (what, hint),
            &mut child,
            &stderr_log,
            &format!("unexpected ready URL {url:?}"),
        );
    }
    InteropAgent {
        url,
        what: what.to_owned(),
        child,
        stderr_log,
        _dir: dir,
    }
}

/// Kills `child` and panics with `why`, the hint and the child's stderr tail.
fn not_ready((what, hint): (&str, &str), child: &mut Child, stderr_log: &Path, why: &str) -> ! {
    let _ = child.kill();
    let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
    panic!(
        "{what} did not become ready: {why} ({status}); {hint}\n\
         --- its stderr ends with ---\n{}",
        tail(stderr_log)
    );
}

/// Returns the last [`STDERR_TAIL_BYTES`] of the file at `path`.
fn tail(path: &Path) -> String {
    let Ok(mut file) = File::open(path) else {
        return String::from("(no stderr log)");
    };
    let len = file.metadata().map_or(0, |m| m.len());
    let _ = file.seek(SeekFrom::Start(len.saturating_sub(STDERR_TAIL_BYTES)));
    let mut buf = Vec::new();
    let _ = file.read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}
