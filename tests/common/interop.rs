//! Interop harness: agents on the official A2A SDKs, and our own scripted agent, as child processes
//! on loopback.
//!
//! Each agent binds `127.0.0.1:0` itself and prints `listening on http://127.0.0.1:PORT/` once its
//! socket listens (so its card is served from then on), so no test sleeps to wait for readiness.
//! The official SDKs come from `scripts/test`, which installs them pinned and exports
//! `A2A_RECOVER_INTEROP_PYTHON` (the 1.3.0 venv's python), `A2A_RECOVER_INTEROP_JS_DIR`
//! (`tests/interop/js` with its `node_modules`), and for the A2A v0.3 SDKs (a2a-sdk 0.3.26,
//! @a2a-js/sdk 0.3.14) `A2A_RECOVER_INTEROP_PYTHON03` and `A2A_RECOVER_INTEROP_JS03_DIR`. Without
//! those variables the repository's default locations are used. A missing runtime is a failure,
//! never a skip: interop is only proven when it runs.
//!
//! The v0.3 agents serve both bindings at once: JSON-RPC at the base URL and HTTP+JSON under
//! [`V03_REST_PATH`]; [`Transport`] chooses which one their card prefers.
//!
//! Helpers are synchronous (they block on the child's ready line), so call them before entering
//! an async runtime or from a sync test.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use a2a_recover::a2a::{A2aClient, ClientConfig, Endpoint, ProtocolBinding, origin_of};
use tempfile::TempDir;

use super::block_on;
use super::child::Guarded;

/// What to run when an SDK is missing; the README gives the same command.
pub const INSTALL_HINT: &str = "run `scripts/test` (it installs the pinned a2a-sdk and \
     @a2a-js/sdk, the LangGraph Agent Server and fasta2a)";

/// Where the v0.3 agents serve HTTP+JSON, under their base URL: `POST /rest/v1/message:send`.
pub const V03_REST_PATH: &str = "rest";

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
        max_card_size: a2a_recover::a2a::DEFAULT_MAX_CARD_SIZE,
    })
    .expect("the client")
}

/// Lists the tasks of a context with our client over `binding`, by id.
pub fn tasks_in_context(
    interface_url: &str,
    binding: ProtocolBinding,
    context_id: &str,
) -> Vec<String> {
    block_on(async {
        let client = test_client();
        let ep = plain_endpoint(interface_url, binding);
        let req: a2a_recover::a2a::types::ListTasksRequest =
            serde_json::from_value(serde_json::json!({"contextId": context_id})).unwrap();
        let page = client.list_tasks(&ep, &req).await.unwrap();
        page.tasks
            .into_iter()
            .map(|t| t.unwrap().value.id)
            .collect()
    })
}

/// Returns the endpoint of an interface URL without a credential or tenant.
pub fn plain_endpoint(url: &str, binding: ProtocolBinding) -> Endpoint {
    Endpoint {
        url: url.to_owned(),
        tenant: None,
        binding,
        card_origin: origin_of(url).expect("an http URL"),
        credential: None,
        placement: a2a_recover::a2a::Placement::Bearer,
        allow_cross_origin: false,
    }
}

/// A running agent process, killed when dropped.
pub struct InteropAgent {
    /// The base URL from the ready line, e.g. `http://127.0.0.1:41234/`.
    pub url: String,
    /// What the agent printed before its ready line (a gRPC agent's `grpc on HOST:PORT`).
    pub preamble: Vec<String>,
    what: String,
    _child: Guarded,
    stderr_log: PathBuf,
    _dir: TempDir,
}

impl InteropAgent {
    /// Returns the last few KiB of the agent's stderr, for failure messages.
    pub fn stderr_tail(&self) -> String {
        tail(&self.stderr_log)
    }

    /// Returns the `HOST:PORT` an agent serves gRPC on (its `grpc on HOST:PORT` line).
    pub fn grpc_addr(&self) -> String {
        self.preamble
            .iter()
            .find_map(|l| l.strip_prefix("grpc on "))
            .map_or_else(
                || panic!("{} printed no `grpc on` line", self.what),
                |a| a.trim().to_owned(),
            )
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

/// Returns `tests/interop` in this repository.
pub fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop")
}

/// Returns the python of the venv holding the pinned a2a-sdk 1.3.0, or panics with
/// [`INSTALL_HINT`].
pub fn interop_python() -> PathBuf {
    venv_python("A2A_RECOVER_INTEROP_PYTHON", ".interop/venv", "Python")
}

/// Returns the python of the venv holding the pinned a2a-sdk 0.3.26, or panics with
/// [`INSTALL_HINT`].
pub fn interop_python03() -> PathBuf {
    venv_python(
        "A2A_RECOVER_INTEROP_PYTHON03",
        ".interop/venv03",
        "Python v0.3",
    )
}

/// What to run when a framework is missing; the README gives the same command.
pub const FRAMEWORKS_HINT: &str = "run `scripts/test` (it installs the pinned LangGraph Agent \
     Server and fasta2a; LangGraph needs Python 3.11 or newer)";

/// Starts `tests/interop/langgraph/serve.py`: `graph.py` on the LangGraph Agent Server
/// (langgraph-api 0.16.7, in-memory runtime) with no network. Its URL is the A2A agent's base,
/// `http://127.0.0.1:PORT/a2a/ASSISTANT/`.
pub fn start_langgraph_agent() -> InteropAgent {
    start_framework(
        ("A2A_RECOVER_INTEROP_LANGGRAPH_PYTHON", ".interop/langgraph"),
        "langgraph/serve.py",
        "the LangGraph Agent Server",
    )
}

/// Starts `tests/interop/fasta2a/agent.py`, a deterministic worker on fasta2a 2.1.1.
pub fn start_fasta2a_agent() -> InteropAgent {
    start_framework(
        ("A2A_RECOVER_INTEROP_FASTA2A_PYTHON", ".interop/fasta2a"),
        "fasta2a/agent.py",
        "the fasta2a agent",
    )
}

/// Starts `tests/interop/<script>` with the python of a framework's venv (`$var`, else `venv`).
fn start_framework((var, venv): (&str, &str), script: &str, what: &str) -> InteropAgent {
    let mut cmd = Command::new(venv_python(var, venv, what));
    cmd.arg(interop_dir().join(script))
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    spawn_agent(what, FRAMEWORKS_HINT, cmd)
}

/// Returns `$var`, or `venv/bin/python` in this repository, after checking that it exists.
fn venv_python(var: &str, venv: &str, what: &str) -> PathBuf {
    let python = std::env::var_os(var).map_or_else(
        || {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(venv)
                .join("bin/python")
        },
        PathBuf::from,
    );
    assert!(
        python.is_file(),
        "the {what} interop runtime is missing: {} does not exist ({var}); {INSTALL_HINT}",
        python.display()
    );
    python
}

/// Returns the directory holding `agent.mjs` and the pinned `@a2a-js/sdk` 1.3.0, or panics with
/// [`INSTALL_HINT`].
pub fn interop_js_dir() -> PathBuf {
    js_dir("A2A_RECOVER_INTEROP_JS_DIR", "js", "JS")
}

/// Returns the directory holding `agent.mjs` and the pinned `@a2a-js/sdk` 0.3.14, or panics with
/// [`INSTALL_HINT`].
pub fn interop_js03_dir() -> PathBuf {
    js_dir("A2A_RECOVER_INTEROP_JS03_DIR", "js03", "JS v0.3")
}

/// Returns `$var`, or `tests/interop/<default>`, after checking that the SDK is installed there.
fn js_dir(var: &str, default: &str, what: &str) -> PathBuf {
    let dir = std::env::var_os(var).map_or_else(|| interop_dir().join(default), PathBuf::from);
    let sdk = dir.join("node_modules/@a2a-js/sdk/package.json");
    assert!(
        sdk.is_file(),
        "the {what} interop runtime is missing: {} does not exist ({var}); {INSTALL_HINT}",
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

/// The binding a v0.3 agent's card prefers: its `url` and `preferredTransport`. Both bindings
/// are served either way, and `additionalInterfaces` lists both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// JSON-RPC 2.0 at the base URL (`preferredTransport: "JSONRPC"`).
    JsonRpc,
    /// HTTP+JSON under [`V03_REST_PATH`] (`preferredTransport: "HTTP+JSON"`).
    Rest,
}

impl Transport {
    /// The agent's `--preferred` value.
    fn flag(self) -> &'static str {
        match self {
            Transport::JsonRpc => "jsonrpc",
            Transport::Rest => "rest",
        }
    }

    /// The card's name for it (`preferredTransport`, `additionalInterfaces[].transport`).
    pub fn card_name(self) -> &'static str {
        match self {
            Transport::JsonRpc => "JSONRPC",
            Transport::Rest => "HTTP+JSON",
        }
    }

    /// The interface URL the card names for it, given the agent's base URL (ending in `/`).
    pub fn url(self, base: &str) -> String {
        match self {
            Transport::JsonRpc => base.to_owned(),
            Transport::Rest => format!("{base}{V03_REST_PATH}"),
        }
    }
}

/// An official SDK agent: the A2A v1.0 ones (1.3.0) or the v0.3 ones (0.3.26, 0.3.14).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sdk {
    /// `tests/interop/python/agent.py` on a2a-sdk 1.3.0.
    Python,
    /// `tests/interop/js/agent.mjs` on @a2a-js/sdk 1.3.0.
    Js,
    /// `tests/interop/python03/agent.py` on a2a-sdk 0.3.26, its card preferring `transport`.
    Python03 { transport: Transport },
    /// `tests/interop/js03/agent.mjs` on @a2a-js/sdk 0.3.14, its card preferring `transport`.
    Js03 { transport: Transport },
}

impl Sdk {
    /// Starts the agent on `127.0.0.1` with a free port; panics with [`INSTALL_HINT`] when its
    /// runtime is missing or it does not come up.
    pub fn start(self) -> InteropAgent {
        self.start_with(&[])
    }

    /// Starts the agent with extra `args` (`--push`), as [`Sdk::start`] does.
    pub fn start_with(self, args: &[&str]) -> InteropAgent {
        match self {
            Sdk::Python => start_python_agent_with(args),
            Sdk::Js => start_js_agent_with(args),
            Sdk::Python03 { transport } => start_python03_agent_with(transport, args),
            Sdk::Js03 { transport } => start_js03_agent_with(transport, args),
        }
    }
}

/// Starts `tests/interop/python03/agent.py` on the official Python SDK 0.3.26.
pub fn start_python03_agent(preferred: Transport) -> InteropAgent {
    start_python03_agent_with(preferred, &[])
}

/// Starts `tests/interop/python03/agent.py` with extra `args` (`--push`).
pub fn start_python03_agent_with(preferred: Transport, args: &[&str]) -> InteropAgent {
    let mut cmd = Command::new(interop_python03());
    cmd.arg(interop_dir().join("python03/agent.py"))
        .args(["--preferred", preferred.flag()])
        .args(args)
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    spawn_agent("the a2a-sdk 0.3.26 (Python) agent", INSTALL_HINT, cmd)
}

/// Starts `tests/interop/js03/agent.mjs` on the official JS SDK 0.3.14.
pub fn start_js03_agent(preferred: Transport) -> InteropAgent {
    start_js03_agent_with(preferred, &[])
}

/// Starts `tests/interop/js03/agent.mjs` with extra `args` (`--push`).
pub fn start_js03_agent_with(preferred: Transport, args: &[&str]) -> InteropAgent {
    let dir = interop_js03_dir();
    let mut cmd = Command::new("node");
    cmd.arg(dir.join("agent.mjs"))
        .args(["--preferred", preferred.flag()])
        .args(args)
        .current_dir(&dir);
    spawn_agent("the @a2a-js/sdk 0.3.14 agent", INSTALL_HINT, cmd)
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
    let mut child = Guarded::from(cmd.spawn().unwrap_or_else(|e| {
        panic!(
            "cannot start {what} ({}): {e}; {hint}",
            cmd.get_program().display()
        )
    }));

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
                    let _ = tx.send(Ok((url.trim().to_owned(), std::mem::take(&mut seen))));
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

    let (url, preamble) = match rx.recv_timeout(READY_TIMEOUT) {
        Ok(Ok(ready)) => ready,
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
        preamble,
        what: what.to_owned(),
        _child: child,
        stderr_log,
        _dir: dir,
    }
}

/// Kills `child` and panics with `why`, the hint and the child's stderr tail.
fn not_ready((what, hint): (&str, &str), child: &mut Guarded, stderr_log: &Path, why: &str) -> ! {
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
