//! What every section shares: the run's configuration, the scripted agent as a child process,
//! timed child processes with their peak RSS, bare JSON-RPC calls, medians, journal set-up.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use a2a_recover::a2a::TaskView;
use a2a_recover::journal::{
    AttemptId, IntentOutcome, Journal, NewIntent, Source, StepName, StepSpec,
};
use anyhow::{Context as _, bail};
use futures_util::StreamExt as _;
use serde_json::{Value, json};

/// The run's settings.
pub(crate) struct Cfg {
    /// `BENCH_QUICK=1`: smaller sizes, fewer repeats (a smoke run).
    pub(crate) quick: bool,
    /// The `a2a-recover` binary measured: the release binary cargo built for this bench, or
    /// `BENCH_BIN`.
    pub(crate) bin: PathBuf,
    /// The binary whose `scripted-agent` serves the measurements: always the one cargo built
    /// for this bench, so that a `BENCH_BIN` run meets the same agent.
    pub(crate) agent_bin: PathBuf,
    /// Where journals go (the system temporary directory: the same disk as the floors).
    pub(crate) tmp: PathBuf,
}

impl Cfg {
    /// Repeats of a measurement whose median is reported.
    pub(crate) fn repeats(&self) -> usize {
        if self.quick { 1 } else { 5 }
    }

    /// A fresh temporary directory for one measurement.
    pub(crate) fn tempdir(&self) -> anyhow::Result<tempfile::TempDir> {
        Ok(tempfile::Builder::new()
            .prefix("a2a-bench-")
            .tempdir_in(&self.tmp)?)
    }
}

/// Returns the median of `pairs[i].0 / pairs[i].1`: each figure over the floor measured just
/// before or after it.
pub(crate) fn median_ratio(pairs: &[(f64, f64)]) -> f64 {
    median(pairs.iter().map(|(x, floor)| x / floor).collect())
}

/// Returns the median of `xs` (the mean of the two middle values for an even count).
pub(crate) fn median(mut xs: Vec<f64>) -> f64 {
    assert!(!xs.is_empty(), "a median of nothing");
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        f64::midpoint(xs[n / 2 - 1], xs[n / 2])
    }
}

/// Returns a current-thread runtime, as `a2a-recover` itself uses.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

// ---------------------------------------------------------------------------------------------
// The scripted agent, in its own process
// ---------------------------------------------------------------------------------------------

/// `a2a-recover scripted-agent --port 0 …` as a child process; killed (by its pid) on drop.
pub(crate) struct Agent {
    child: Child,
    /// Its base URL (`http://127.0.0.1:PORT/`), also its JSON-RPC endpoint.
    pub(crate) url: String,
}

impl Agent {
    /// Starts the agent with `work` steps of one hour (tasks stay running) and `extra` flags.
    pub(crate) fn start(cfg: &Cfg, extra: &[&str]) -> anyhow::Result<Self> {
        let mut child = Command::new(&cfg.agent_bin)
            .args(["scripted-agent", "--port", "0", "--tick", "3600s"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("failed to start `{}`", cfg.agent_bin.display()))?;
        let stdout = child.stdout.take().context("the agent has no stdout")?;
        let mut agent = Self {
            child,
            url: String::new(),
        };
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line)?;
        line.trim()
            .strip_prefix("listening on ")
            .with_context(|| format!("the agent said {line:?}, not `listening on URL`"))?
            .clone_into(&mut agent.url);
        Ok(agent)
    }

    /// Returns its Agent Card URL.
    pub(crate) fn card(&self) -> String {
        format!("{}.well-known/agent-card.json", self.url)
    }

    /// Returns its resident memory now (KiB).
    pub(crate) fn rss_kib(&self) -> u64 {
        proc_status_kib(&format!("/proc/{}/status", self.child.id()), "VmRSS:")
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Returns a `/proc/…/status` field in KiB (0 if unreadable).
pub(crate) fn proc_status_kib(path: &str, field: &str) -> u64 {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

// ---------------------------------------------------------------------------------------------
// Timed child processes
// ---------------------------------------------------------------------------------------------

/// One finished child process.
pub(crate) struct Run {
    /// Wall time from spawn to exit.
    pub(crate) wall: Duration,
    /// Its peak resident set (KiB).
    pub(crate) peak_rss_kib: u64,
    /// Its exit code.
    pub(crate) code: i32,
    /// Its standard output.
    pub(crate) stdout: String,
}

/// Whether `/usr/bin/time -v` is there to report a child's peak RSS.
fn gnu_time() -> Option<&'static Path> {
    let p = Path::new("/usr/bin/time");
    p.is_file().then_some(p)
}

/// Runs `program args` to its end; its peak RSS comes from `/usr/bin/time -v` (the kernel's
/// `ru_maxrss` of the child), or, without it, from polling `/proc/PID/status` `VmHWM`.
pub(crate) fn run_child(program: &Path, args: &[&str]) -> anyhow::Result<Run> {
    let started = Instant::now();
    if let Some(time) = gnu_time() {
        let out = Command::new(time)
            .arg("-v")
            .arg(program)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("failed to run `{}`", program.display()))?;
        let wall = started.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let field = |name: &str| {
            stderr
                .lines()
                .find_map(|l| l.trim().strip_prefix(name))
                .map(|v| v.trim().to_owned())
        };
        let peak_rss_kib = field("Maximum resident set size (kbytes):")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let code = field("Exit status:")
            .and_then(|v| v.parse().ok())
            .unwrap_or(-1);
        return Ok(Run {
            wall,
            peak_rss_kib,
            code,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        });
    }
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("failed to run `{}`", program.display()))?;
    let status_path = format!("/proc/{}/status", child.id());
    let mut stdout = child.stdout.take().context("no stdout")?;
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
        s
    });
    let mut peak = 0;
    let status = loop {
        peak = peak.max(proc_status_kib(&status_path, "VmHWM:"));
        if let Some(status) = child.try_wait()? {
            break status;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Ok(Run {
        wall: started.elapsed(),
        peak_rss_kib: peak,
        code: status.code().unwrap_or(-1),
        stdout: reader.join().unwrap_or_default(),
    })
}

/// Spawns `program args` with no output and waits: the wall time of a process start.
pub(crate) fn spawn_wait(program: &Path, args: &[&str]) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let status = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .with_context(|| format!("failed to run `{}`", program.display()))?;
    let wall = started.elapsed();
    if !status.success() {
        bail!(
            "`{} {}` failed: {status}",
            program.display(),
            args.join(" ")
        );
    }
    Ok(wall)
}

/// Copies the closed SQLite journal `from` to `to`, its `-wal` included if there is one (a
/// closing process leaves a small WAL as it is).
pub(crate) fn copy_journal(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::copy(from, to)?;
    let wal = |p: &Path| PathBuf::from(format!("{}-wal", p.display()));
    if wal(from).exists() {
        std::fs::copy(wal(from), wal(to))?;
    }
    Ok(())
}

/// Returns the journal's bytes on disk (the database and its WAL).
pub(crate) fn journal_bytes(path: &Path) -> u64 {
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    [path, wal.as_path()]
        .iter()
        .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
        .sum()
}

// ---------------------------------------------------------------------------------------------
// Bare JSON-RPC with reqwest: the floors
// ---------------------------------------------------------------------------------------------

/// A plain reqwest client, as a floor uses it.
pub(crate) fn bare_client() -> reqwest::Client {
    reqwest::Client::new()
}

/// Posts one JSON-RPC request and returns its answer's bytes.
pub(crate) async fn rpc(
    http: &reqwest::Client,
    url: &str,
    id: usize,
    method: &str,
    params: Value,
) -> anyhow::Result<bytes::Bytes> {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let resp = http
        .post(url)
        .header("A2A-Version", "1.0")
        .header("Content-Type", "application/json")
        .body(body.to_string())
        .send()
        .await?;
    Ok(resp.bytes().await?)
}

/// Posts `params.len()` calls of `method`, at most `concurrency` at once; returns the wall time.
pub(crate) async fn rpc_many(
    http: &reqwest::Client,
    url: &str,
    method: &str,
    params: &[Value],
    concurrency: usize,
) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let mut calls = futures_util::stream::iter(params.iter().enumerate())
        .map(|(i, p)| rpc(http, url, i, method, p.clone()))
        .buffer_unordered(concurrency);
    while let Some(answer) = calls.next().await {
        let bytes = answer?;
        if bytes.windows(8).any(|w| w == b"\"error\":") {
            bail!(
                "{method} answered an error: {}",
                String::from_utf8_lossy(&bytes)
            );
        }
    }
    Ok(started.elapsed())
}

/// Reads a scripted agent's `GET /_scripted/stats` (its counters and logs) as `T`.
pub(crate) async fn agent_stats<T: serde::de::DeserializeOwned>(url: &str) -> anyhow::Result<T> {
    let body = bare_client()
        .get(format!("{url}_scripted/stats"))
        .send()
        .await?
        .bytes()
        .await?;
    Ok(serde_json::from_slice(&body)?)
}

/// The `SendMessage` params of a `returnImmediately` send with our ids.
pub(crate) fn send_params(message_id: &str, context_id: Option<&str>, text: &str) -> Value {
    let mut message = json!({
        "messageId": message_id,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    });
    if let Some(c) = context_id {
        message["contextId"] = json!(c);
    }
    json!({"message": message, "configuration": {"returnImmediately": true}})
}

// ---------------------------------------------------------------------------------------------
// Journals with work in them
// ---------------------------------------------------------------------------------------------

/// Commits `n` `INTENT` attempts of `workflow/s0…` bound to `card`, in transactions of 10,000.
pub(crate) fn commit_intents(
    journal: &Journal,
    workflow: &str,
    n: usize,
    card: &str,
    text: &str,
    context_ids: bool,
) -> anyhow::Result<Vec<a2a_recover::journal::Attempt>> {
    let mut out = Vec::with_capacity(n);
    let mut i = 0;
    while i < n {
        let chunk: Vec<NewIntent> = (i..n.min(i + 10_000))
            .map(|k| NewIntent {
                spec: StepSpec::to_agent(
                    StepName::from_parts(workflow, format!("s{k}")),
                    text,
                    card,
                ),
                agent_url: Some(card.to_owned()),
                message_id: uuid::Uuid::new_v4().to_string(),
                context_id: context_ids.then(|| uuid::Uuid::new_v4().to_string()),
            })
            .collect();
        i += chunk.len();
        for o in journal.create_intents(&chunk)? {
            match o {
                IntentOutcome::Created(a) => out.push(a),
                IntentOutcome::Existing(_) => bail!("step already journaled"),
            }
        }
    }
    Ok(out)
}

/// Journals `url` as the endpoint of every attempt without one, in ONE transaction (what
/// `Journal::set_endpoint` does per attempt before a send, without its event).
pub(crate) fn set_endpoints(path: &Path, url: &str) -> anyhow::Result<()> {
    let conn = rusqlite::Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(30))?;
    conn.execute(
        "UPDATE attempts SET interface_url = ?1 WHERE interface_url IS NULL",
        [url],
    )?;
    Ok(())
}

/// Sends every attempt's message straight to the agent (bare, 32 at once); returns each
/// attempt's task as the agent answered it.
pub(crate) async fn send_all(
    url: &str,
    attempts: &[a2a_recover::journal::Attempt],
    text: &str,
) -> anyhow::Result<Vec<(AttemptId, TaskView)>> {
    let http = bare_client();
    let http = &http;
    let mut sends = futures_util::stream::iter(attempts.iter().enumerate())
        .map(|(i, a)| async move {
            let params = send_params(&a.message_id, a.context_id.as_deref(), text);
            let bytes = rpc(http, url, i, "SendMessage", params).await?;
            let v: Value = serde_json::from_slice(&bytes)?;
            let task = v["result"]["task"].clone();
            let view = TaskView::from_value(&task, task.to_string())
                .with_context(|| format!("SendMessage answered {v}"))?;
            anyhow::Ok((a.id, view))
        })
        .buffer_unordered(32);
    let mut out = Vec::with_capacity(attempts.len());
    while let Some(r) = sends.next().await {
        out.push(r?);
    }
    Ok(out)
}

/// Journals `n` attempts as sent to the agent and running (SUBMITTED, task id known), the
/// fast way: intents in big transactions, endpoints in one, bare sends, answers group-committed.
pub(crate) async fn running_attempts(
    path: &Path,
    url: &str,
    workflow: &str,
    n: usize,
) -> anyhow::Result<Vec<String>> {
    let journal = Journal::open(path, Duration::from_secs(30))?;
    let card = format!("{url}.well-known/agent-card.json");
    let attempts = commit_intents(&journal, workflow, n, &card, "work:100", true)?;
    set_endpoints(path, url)?;
    let sent = send_all(url, &attempts, "work:100").await?;
    let mut task_ids = Vec::with_capacity(n);
    for chunk in sent.chunks(2_000) {
        journal.apply_tasks(chunk, Source::Send)?;
        task_ids.extend(chunk.iter().map(|(_, v)| v.task_id.clone()));
    }
    Ok(task_ids)
}
