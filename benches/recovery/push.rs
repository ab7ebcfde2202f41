//! `listen`: pushes per second into the journal, and the latency from an agent's POST to the
//! committed row, beside two floors measured in the same run: bare durable commits of the rows
//! one push writes (an event inserted, an attempt updated, WAL with `synchronous=FULL`), and a
//! bare HTTP server (axum) answering the same posts. Status-only pushes are journaled before
//! their 2xx with no read-back: the answer's arrival is the row's commit. Terminal pushes are
//! read back (GetTask) after their 202; their latency runs until the journal holds the state.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use futures_util::StreamExt as _;
use serde_json::{Value, json};

use crate::report::{Row, Table, Target, Value as Figure};
use crate::support::{Agent, Cfg, agent_stats, median};

/// Pushes posted at once.
const CONCURRENCY: usize = 8;

/// One attempt asked to push: where, with which token, about which task.
struct Pushed {
    path: String,
    token: String,
    task: String,
}

/// `a2a-recover listen` on free ports, its timer off; killed on drop.
struct Listen {
    child: Child,
    addr: String,
}

impl Listen {
    fn start(cfg: &Cfg, journal: &Path) -> anyhow::Result<Self> {
        let mut child = Command::new(&cfg.bin)
            .args([
                "listen",
                "--bind",
                "127.0.0.1:0",
                "--metrics-bind",
                "127.0.0.1:0",
            ])
            .args(["--reconcile-every", "0", "--agent-rate", "1000000"])
            .env("A2A_RECOVER_JOURNAL", journal)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()?;
        let err = child.stderr.take().context("no stderr")?;
        let mut lines = std::io::BufRead::lines(std::io::BufReader::new(err));
        let addr = loop {
            let line = lines.next().context("listen ended before it listened")??;
            if let Some(rest) = line.strip_prefix("listening for pushes on ") {
                break rest
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_owned();
            }
        };
        // Keep draining its stderr so it never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Ok(Self { child, addr })
    }
}

impl Drop for Listen {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Delegates `n` steps of `text` to `agent`, asking it to push to `base`; returns them as the
/// agent saw them.
fn delegate_pushed(
    cfg: &Cfg,
    rt: &tokio::runtime::Runtime,
    journal: &Path,
    agent: &Agent,
    (workflow, text, n): (&str, &str, usize),
    base: &str,
) -> anyhow::Result<Vec<Pushed>> {
    for i in 0..n {
        let out = Command::new(&cfg.bin)
            .args([
                "delegate",
                &format!("{workflow}/s{i}"),
                "--agent",
                &agent.url,
            ])
            .args([text, "--push", base])
            .env("A2A_RECOVER_JOURNAL", journal)
            .output()?;
        if !out.status.success() {
            bail!("delegate failed: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
    let stats: Value = rt.block_on(agent_stats(&agent.url))?;
    let tasks = stats["tasks"].as_array().cloned().unwrap_or_default();
    let mut out = Vec::new();
    for m in stats["messages"].as_array().cloned().unwrap_or_default() {
        let Some(config) = m.get("pushConfig").filter(|c| c.is_object()) else {
            continue;
        };
        let Some(task) = tasks.iter().find(|t| t["messageId"] == m["messageId"]) else {
            continue;
        };
        let url = config["url"].as_str().context("a push URL")?;
        out.push(Pushed {
            path: url.strip_prefix(base).context("our base")?.to_owned(),
            token: config["token"].as_str().context("a token")?.to_owned(),
            task: task["id"].as_str().context("a task id")?.to_owned(),
        });
    }
    Ok(out)
}

/// A status update of `task` to `state` with a status message `note` (each one a change).
fn update(task: &str, state: &str, note: &str) -> String {
    json!({"statusUpdate": {"taskId": task, "contextId": "c", "status": {
        "state": state,
        "message": {"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_AGENT",
                    "parts": [{"text": note}]},
        "timestamp": a2a_recover::clock::system_now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)}}})
    .to_string()
}

/// Posts every `(path, token, body)` to `addr`, [`CONCURRENCY`] at once; returns the wall time
/// and each post's latency (POST to its answer). Every answer must be 2xx.
async fn post_all(
    http: &reqwest::Client,
    addr: &str,
    posts: &[(String, String, String)],
) -> anyhow::Result<(Duration, Vec<f64>)> {
    let started = Instant::now();
    let mut calls = futures_util::stream::iter(posts)
        .map(|(path, token, body)| async move {
            let t = Instant::now();
            let status = http
                .post(format!("http://{addr}{path}"))
                .header("Content-Type", "application/json")
                .header("X-A2A-Notification-Token", token)
                .body(body.clone())
                .send()
                .await?
                .status();
            anyhow::ensure!(status.is_success(), "a push was answered {status}");
            Ok::<_, anyhow::Error>(t.elapsed().as_secs_f64())
        })
        .buffer_unordered(CONCURRENCY);
    let mut latencies = Vec::with_capacity(posts.len());
    while let Some(l) = calls.next().await {
        latencies.push(l?);
    }
    Ok((started.elapsed(), latencies))
}

/// The `q` quantile of `xs` (nearest rank).
fn quantile(mut xs: Vec<f64>, q: f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    let i = ((xs.len() as f64 * q).ceil() as usize).clamp(1, xs.len()) - 1;
    xs[i]
}

/// The commit floor: `n` durable transactions of what one push writes, one at a time.
fn commit_floor(cfg: &Cfg, n: usize) -> anyhow::Result<f64> {
    let dir = cfg.tempdir()?;
    let conn = crate::floors::open(&dir.path().join("push-floor.sqlite3"))?;
    conn.execute_batch(
        "CREATE TABLE a (id INTEGER PRIMARY KEY, state TEXT, json TEXT, updated_at INTEGER);
         INSERT INTO a (id, state, json, updated_at) VALUES (1, 'WORKING', '', 0);",
    )?;
    let detail = update("t", "TASK_STATE_WORKING", "step");
    let mut insert = conn.prepare("INSERT INTO t (at, v) VALUES (?1, ?2)")?;
    let mut set = conn.prepare("UPDATE a SET json = ?1, updated_at = ?2 WHERE id = 1")?;
    let started = Instant::now();
    for i in 0..n {
        conn.execute_batch("BEGIN IMMEDIATE")?;
        insert.execute(rusqlite::params![i as i64, detail])?;
        set.execute(rusqlite::params![detail, i as i64])?;
        conn.execute_batch("COMMIT")?;
    }
    Ok(n as f64 / started.elapsed().as_secs_f64())
}

/// The HTTP floor: a bare axum server answering 200 to the same posts.
async fn http_floor(
    http: &reqwest::Client,
    posts: &[(String, String, String)],
) -> anyhow::Result<f64> {
    let app = axum::Router::new().route(
        "/push/{id}",
        axum::routing::post(|_: axum::body::Bytes| async { "" }),
    );
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = tcp.local_addr()?.to_string();
    let server = tokio::spawn(async move { axum::serve(tcp, app).await });
    let (wall, _) = post_all(http, &addr, posts).await?;
    server.abort();
    Ok(posts.len() as f64 / wall.as_secs_f64())
}

/// Waits until every attempt of `workflow` is COMPLETED in the journal at `db`, noting when
/// each was first seen so; returns those times.
fn wait_completed(db: &Path, workflow: &str, n: usize) -> anyhow::Result<Vec<Instant>> {
    let conn = rusqlite::Connection::open_with_flags(
        db,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let mut seen: std::collections::HashMap<String, Instant> = std::collections::HashMap::new();
    let until = Instant::now() + Duration::from_secs(120);
    let mut q = conn.prepare(
        "SELECT s.name FROM attempts a JOIN steps s ON s.id = a.step_id
         JOIN workflows w ON w.id = s.workflow_id
         WHERE w.name = ?1 AND a.state = 'COMPLETED'",
    )?;
    while seen.len() < n {
        let now = Instant::now();
        for name in q.query_map([workflow], |r| r.get::<_, String>(0))? {
            seen.entry(name?).or_insert(now);
        }
        if now > until {
            bail!("only {} of {n} terminal pushes were journaled", seen.len());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok(seen.into_values().collect())
}

pub(crate) fn run(
    cfg: &Cfg,
    rt: &tokio::runtime::Runtime,
    table: &mut Table,
) -> anyhow::Result<()> {
    let dir = cfg.tempdir()?;
    let journal = dir.path().join("journal.sqlite3");
    // Tasks of `work:N` run for an hour (`--tick 3600s`); the agent's own pushes of the
    // terminal ones are lost (`lose`), so only this bench's pushes end them.
    let agent = Agent::start(cfg, &["--push-fault", "lose"])?;
    let listen = Listen::start(cfg, &journal)?;
    let http = reqwest::Client::new();
    let floor = status_only(cfg, rt, (&journal, &agent, &listen), &http, table)?;
    terminal(cfg, rt, (&journal, &agent, &listen), &http, table, floor)
}

/// Status-only pushes (no read-back), beside both floors; returns the slower floor's row.
fn status_only(
    cfg: &Cfg,
    rt: &tokio::runtime::Runtime,
    (journal, agent, listen): (&Path, &Agent, &Listen),
    http: &reqwest::Client,
    table: &mut Table,
) -> anyhow::Result<(String, Figure)> {
    let (tasks, pushes) = if cfg.quick { (8, 400) } else { (40, 4_000) };
    let base = format!("http://{}", listen.addr);
    let running = delegate_pushed(cfg, rt, journal, agent, ("run", "work:9", tasks), &base)?;
    let mut rates = Vec::new();
    let mut latencies = Vec::new();
    let mut floors = (Vec::new(), Vec::new());
    for r in 0..cfg.repeats() {
        // Fresh notes and times each round: a push the journal already holds changes nothing
        // and commits nothing.
        let posts: Vec<(String, String, String)> = (0..pushes)
            .map(|i| {
                let p = &running[i % running.len()];
                let body = update(&p.task, "TASK_STATE_WORKING", &format!("step {r}.{i}"));
                (p.path.clone(), p.token.clone(), body)
            })
            .collect();
        let (wall, l) = rt.block_on(post_all(http, &listen.addr, &posts))?;
        rates.push(pushes as f64 / wall.as_secs_f64());
        latencies.extend(l);
        floors.0.push(commit_floor(cfg, pushes)?);
        floors.1.push(rt.block_on(http_floor(http, &posts))?);
    }
    let (commit, bare) = (median(floors.0), median(floors.1));
    table.add(Row {
        section: "floor",
        what: "durable commits of one push's rows (an event, an attempt update), one at a time"
            .to_owned(),
        figure: Figure::Rate(commit, "commits"),
        floor: None,
        target: None,
        paired: None,
    });
    table.add(Row {
        section: "floor",
        what: format!("a bare HTTP server (axum) answering the same posts, {CONCURRENCY} at once"),
        figure: Figure::Rate(bare, "posts"),
        floor: None,
        target: None,
        paired: None,
    });
    let floor = (
        "the slower floor".to_owned(),
        Figure::Rate(commit.min(bare), "pushes"),
    );
    table.add(Row {
        section: "push",
        what: format!(
            "status-only pushes, no read-back: {pushes} over {tasks} tasks, {CONCURRENCY} at once"
        ),
        figure: Figure::Rate(median(rates), "pushes"),
        floor: Some(floor.clone()),
        target: Some(Target::Ratio(1.5)),
        paired: None,
    });
    quantiles(
        table,
        "status-only push, POST to committed row (its 2xx)",
        &latencies,
    );
    Ok(floor)
}

/// Adds the p50 and p99 of `xs` (seconds) as rows.
fn quantiles(table: &mut Table, what: &str, xs: &[f64]) {
    for (q, name) in [(0.5, "p50"), (0.99, "p99")] {
        table.add(Row {
            section: "push",
            what: format!("{what}, {name}"),
            figure: Figure::Secs(quantile(xs.to_vec(), q)),
            floor: None,
            target: None,
            paired: None,
        });
    }
}

/// Terminal pushes, each read back: tasks done at once at the agent, SUBMITTED in the journal
/// (the send answers before the work starts).
fn terminal(
    cfg: &Cfg,
    rt: &tokio::runtime::Runtime,
    (journal, agent, listen): (&Path, &Agent, &Listen),
    http: &reqwest::Client,
    table: &mut Table,
    floor: (String, Figure),
) -> anyhow::Result<()> {
    let n = if cfg.quick { 16 } else { 120 };
    let base = format!("http://{}", listen.addr);
    let done = delegate_pushed(cfg, rt, journal, agent, ("end", "work:0", n), &base)?;
    let posts: Vec<(String, String, String)> = done
        .iter()
        .map(|p| {
            let body = update(&p.task, "TASK_STATE_COMPLETED", "done");
            (p.path.clone(), p.token.clone(), body)
        })
        .collect();
    let watcher = {
        let journal = journal.to_path_buf();
        std::thread::spawn(move || wait_completed(&journal, "end", n))
    };
    let posted = Instant::now();
    rt.block_on(post_all(http, &listen.addr, &posts))?;
    let seen = watcher
        .join()
        .map_err(|_| anyhow::anyhow!("the watcher panicked"))??;
    let last = seen.iter().max().copied().unwrap_or(posted);
    table.add(Row {
        section: "push",
        what: format!("terminal pushes, each read back (GetTask): {n}, {CONCURRENCY} at once"),
        figure: Figure::Rate(
            n as f64 / last.duration_since(posted).as_secs_f64(),
            "pushes",
        ),
        floor: Some(floor),
        target: None,
        paired: None,
    });
    // Each from the batch's first POST: an upper bound of its own POST to its row.
    let waits: Vec<f64> = seen
        .iter()
        .map(|t| t.duration_since(posted).as_secs_f64())
        .collect();
    quantiles(
        table,
        "terminal push, the batch's first POST to its row after the read-back",
        &waits,
    );
    Ok(())
}
