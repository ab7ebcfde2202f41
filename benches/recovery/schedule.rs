//! Issue 19: recovery bounded by the agents, never by us.
//!
//! - **The agents' limit**: 20 scripted agents (each its own process) answering after fixed
//!   delays from 5 to 200 ms, N running tasks spread over them in turn; an unchanged `reconcile`
//!   pass at `--agent-concurrency C` beside the limit `max over agents (attempts × delay / C)`
//!   (computed, not measured); then the same with one more agent that never answers.
//! - **Rate limit**: one agent answering 429 `Retry-After: 1` once 50 requests were served in
//!   the last second; a pass without `--agent-rate` (how many requests came before a
//!   `Retry-After` had passed) and one with `--agent-rate 50` (how many 429s, and the time
//!   beside attempts / 50 s).
//! - **Storm**: a child process follows 1,000 tasks of one bench-only agent that restarts (every
//!   stream cut, the port closed for half a second); the spread of the reconnects (p10–p90
//!   after the cut), and whether every stream reattached.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_recover::a2a::TaskView;
use a2a_recover::journal::{IntentOutcome, Journal, NewIntent, Source, StepName, StepSpec};
use anyhow::{Context as _, bail};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::runtime::Runtime;

use crate::report::{Row, Table, Target, Value as Figure};
use crate::support::{Agent, Cfg, bare_client, median, run_child, send_all};

/// Per-agent concurrency of the limit rows (the default).
const C: usize = 4;

/// Sets one of a scripted agent's load switches (`delay-ms`, `black-hole`, `rate-limit`).
async fn set_load(url: &str, switch: &str, value: u64) -> anyhow::Result<()> {
    let r = bare_client()
        .post(format!("{url}_scripted/load/{switch}/{value}"))
        .send()
        .await?;
    if !r.status().is_success() {
        bail!("setting {switch} answered {}", r.status());
    }
    Ok(())
}

/// What the scripted agent's stats say of its load.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Load {
    #[serde(default)]
    max_in_flight: u64,
    #[serde(default)]
    arrivals_ms: Vec<f64>,
    #[serde(default)]
    throttled_ms: Vec<f64>,
}

/// Clears a scripted agent's load counters and logs.
async fn reset_load(url: &str) -> anyhow::Result<()> {
    bare_client()
        .post(format!("{url}_scripted/reset-load"))
        .send()
        .await?;
    Ok(())
}

/// Reads a scripted agent's load counters and logs.
async fn stats_of(url: &str) -> anyhow::Result<Load> {
    crate::support::agent_stats(url).await
}

/// Journals `counts[i]` running tasks on `agents[i]`, the steps of all agents taken in turn
/// (step k goes to the agent whose turn it is), in one workflow: the order a pass reads them
/// in mixes the agents, as a real journal's order would.
async fn spread_running(path: &Path, agents: &[&str], counts: &[usize]) -> anyhow::Result<()> {
    let journal = Journal::open(path, Duration::from_secs(30))?;
    let mut left = counts.to_vec();
    let mut intents = Vec::new();
    let mut owner = Vec::new();
    let mut k = 0;
    while left.iter().any(|n| *n > 0) {
        for (i, url) in agents.iter().enumerate() {
            if left[i] == 0 {
                continue;
            }
            left[i] -= 1;
            let card = format!("{url}.well-known/agent-card.json");
            intents.push(NewIntent {
                spec: StepSpec::to_agent(
                    StepName::from_parts("spread", format!("s{k}")),
                    "work:100",
                    &card,
                ),
                agent_url: Some(card),
                message_id: uuid::Uuid::new_v4().to_string(),
                context_id: Some(uuid::Uuid::new_v4().to_string()),
            });
            owner.push(i);
            k += 1;
        }
    }
    let mut attempts = Vec::with_capacity(intents.len());
    for chunk in intents.chunks(10_000) {
        for o in journal.create_intents(chunk)? {
            match o {
                IntentOutcome::Created(a) => attempts.push(a),
                IntentOutcome::Existing(_) => bail!("step already journaled"),
            }
        }
    }
    drop(journal);
    let conn = rusqlite::Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(30))?;
    for url in agents {
        conn.execute(
            "UPDATE attempts SET interface_url = ?1 WHERE agent_id =
                 (SELECT id FROM agents WHERE card_url = ?2)",
            [url.to_string(), format!("{url}.well-known/agent-card.json")],
        )?;
    }
    drop(conn);
    let journal = Journal::open(path, Duration::from_secs(30))?;
    for (i, url) in agents.iter().enumerate() {
        let mine: Vec<_> = attempts
            .iter()
            .zip(&owner)
            .filter(|(_, o)| **o == i)
            .map(|(a, _)| a.clone())
            .collect();
        let sent = send_all(url, &mine, "work:100").await?;
        for chunk in sent.chunks(2_000) {
            journal.apply_tasks(chunk, Source::Send)?;
        }
    }
    Ok(())
}

/// Runs `reconcile` with `extra` flags; returns its wall seconds and JSON summary.
fn pass(cfg: &Cfg, journal: &Path, extra: &[&str]) -> anyhow::Result<(f64, Value)> {
    let j = journal.display().to_string();
    let mut args = vec!["--journal", j.as_str(), "--format", "json", "reconcile"];
    args.extend_from_slice(extra);
    let run = run_child(&cfg.bin, &args)?;
    let summary: Value = run
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "summary")
        .with_context(|| format!("reconcile exited {} with no summary", run.code))?;
    Ok((run.wall.as_secs_f64(), summary))
}

#[expect(
    clippy::too_many_lines,
    reason = "a measurement script: set-up, the pass, then the pass with a hung agent"
)]
fn limit_section(cfg: &Cfg, rt: &Runtime, table: &mut Table) -> anyhow::Result<()> {
    let per_agent = if cfg.quick { 50 } else { 500 };
    let delays: Vec<u64> = (0..20u64).map(|i| 5 + i * 195 / 19).collect();
    let agents: Vec<Agent> = (0..20)
        .map(|_| Agent::start(cfg, &[]))
        .collect::<anyhow::Result<_>>()?;
    let hung = Agent::start(cfg, &[])?;
    let urls: Vec<&str> = agents.iter().map(|a| a.url.as_str()).collect();
    let dir = cfg.tempdir()?;
    let path = dir.path().join("journal.sqlite3");
    let n = per_agent * urls.len();
    let started = Instant::now();
    rt.block_on(spread_running(&path, &urls, &vec![per_agent; urls.len()]))?;
    // SUBMITTED → WORKING, journaled once: the passes measured change nothing.
    pass(
        cfg,
        &path,
        &["--concurrency", "256", "--agent-concurrency", "64"],
    )?;
    println!(
        "  (set-up: {n} running tasks on 20 agents in {:.1} s)",
        started.elapsed().as_secs_f64()
    );
    for (url, d) in urls.iter().zip(&delays) {
        rt.block_on(set_load(url, "delay-ms", *d))?;
    }
    let limit = delays
        .iter()
        .map(|d| per_agent as f64 * (*d as f64 / 1000.0) / C as f64)
        .fold(0.0, f64::max);
    let c = C.to_string();
    for url in &urls {
        rt.block_on(reset_load(url))?;
    }
    let mut times = Vec::new();
    for _ in 0..cfg.repeats().min(3) {
        let (secs, summary) = pass(cfg, &path, &["--agent-concurrency", &c])?;
        if summary["visited"] != n {
            bail!("the pass visited {} of {n}", summary["visited"]);
        }
        times.push(secs);
    }
    let peak = urls
        .iter()
        .map(|u| rt.block_on(stats_of(u)).map(|l| l.max_in_flight))
        .collect::<anyhow::Result<Vec<u64>>>()?
        .into_iter()
        .max()
        .unwrap_or(0);
    let secs = median(times);
    table.add(Row {
        section: "schedule",
        what: format!(
            "unchanged pass, {n} tasks on 20 agents answering after 5–200 ms, c={C} per agent \
             (most in flight at one agent: {peak})"
        ),
        figure: Figure::Secs(secs),
        floor: Some((
            format!("the agents' limit, max(attempts × delay / {C})"),
            Figure::Secs(limit),
        )),
        target: Some(Target::Ratio(1.2)),
        paired: Some(secs / limit),
    });

    // One more agent that never answers, with as many tasks as the others.
    let hung_dir = cfg.tempdir()?;
    let hung_path = hung_dir.path().join("journal.sqlite3");
    let mut with_hung = urls.clone();
    with_hung.push(hung.url.as_str());
    rt.block_on(spread_running(
        &hung_path,
        &with_hung,
        &vec![per_agent; with_hung.len()],
    ))?;
    for url in &urls {
        rt.block_on(set_load(url, "delay-ms", 0))?;
    }
    pass(
        cfg,
        &hung_path,
        &["--concurrency", "256", "--agent-concurrency", "64"],
    )?;
    for (url, d) in urls.iter().zip(&delays) {
        rt.block_on(set_load(url, "delay-ms", *d))?;
    }
    rt.block_on(set_load(&hung.url, "black-hole", 1))?;
    let timeout = 5.0;
    let (secs_hung, summary) = pass(
        cfg,
        &hung_path,
        &["--agent-concurrency", &c, "--timeout", "5s"],
    )?;
    let skipped = summary["outcomes"]["skipped"].as_u64().unwrap_or(0);
    // Issue 19 §2: at most about one timeout more than the pass without that agent.
    table.add(Row {
        section: "schedule",
        what: format!(
            "the same plus a 21st agent that never answers ({per_agent} tasks; --timeout 5s; \
             {skipped} skipped; the agents' limit + 5 s = {:.2} s)",
            limit + timeout
        ),
        figure: Figure::Secs(secs_hung),
        floor: Some((
            "the pass above + one timeout".to_owned(),
            Figure::Secs(secs + timeout),
        )),
        target: Some(Target::Ratio(1.0)),
        paired: Some(secs_hung / (secs + timeout)),
    });
    Ok(())
}

fn rate_section(cfg: &Cfg, rt: &Runtime, table: &mut Table) -> anyhow::Result<()> {
    let n = if cfg.quick { 100 } else { 500 };
    let agent = Agent::start(cfg, &[])?;
    let dir = cfg.tempdir()?;
    let path = dir.path().join("journal.sqlite3");
    rt.block_on(spread_running(&path, &[agent.url.as_str()], &[n]))?;
    pass(cfg, &path, &["--agent-concurrency", "64"])?;
    rt.block_on(set_load(&agent.url, "rate-limit", 50))?;
    std::thread::sleep(Duration::from_millis(1100));
    rt.block_on(reset_load(&agent.url))?;
    let (free_secs, summary) = pass(cfg, &path, &[])?;
    let free = rt.block_on(stats_of(&agent.url))?;
    // A request that left before the client read the 429 arrives within a few ms of it; one
    // arriving later, but before the second has passed, ignored the Retry-After.
    let early = free
        .throttled_ms
        .iter()
        .map(|t| {
            free.arrivals_ms
                .iter()
                .filter(|a| **a > t + 20.0 && **a < t + 995.0)
                .count()
        })
        .sum::<usize>();
    let working = summary["outcomes"]["WORKING"].as_u64().unwrap_or(0);
    table.add(Row {
        section: "schedule",
        what: format!(
            "pass over {n} tasks, agent 429s above 50 req/s, no --agent-rate: {} 429s, {early} \
             requests before a Retry-After passed, {working} of {n} read",
            free.throttled_ms.len()
        ),
        figure: Figure::Secs(free_secs),
        floor: Some((
            format!("{n} attempts / 50 per s"),
            Figure::Secs(n as f64 / 50.0),
        )),
        target: None,
        paired: Some(free_secs / (n as f64 / 50.0)),
    });
    std::thread::sleep(Duration::from_millis(1100));
    rt.block_on(reset_load(&agent.url))?;
    let (secs, _) = pass(cfg, &path, &["--agent-rate", "50"])?;
    let limited = rt.block_on(stats_of(&agent.url))?;
    table.add(Row {
        section: "schedule",
        what: format!(
            "the same with --agent-rate 50: {} 429s",
            limited.throttled_ms.len()
        ),
        figure: Figure::Secs(secs),
        floor: Some((
            format!("{n} attempts / 50 per s"),
            Figure::Secs(n as f64 / 50.0),
        )),
        target: Some(Target::Ratio(1.2)),
        paired: Some(secs / (n as f64 / 50.0)),
    });
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The storm: a bench-only agent that restarts under 1,000 streams
// ---------------------------------------------------------------------------------------------

/// The storm agent's shared state.
#[derive(Default)]
struct Storm {
    /// Once set, a subscribe is answered with the task COMPLETED (the stream then ends).
    restarted: bool,
    /// When each subscribe arrived after the restart, by task id (the first one only).
    resubscribed: std::collections::HashMap<String, Instant>,
    /// Streams open now (their senders; dropped to cut them).
    open: Vec<tokio::sync::mpsc::Sender<()>>,
}

fn task(id: &str, state: &str) -> Value {
    json!({"id": id, "contextId": "storm",
           "status": {"state": state, "timestamp": "2026-12-01T00:00:00.000Z"}})
}

/// Serves SubscribeToTask for any task id on `listener` until `stop` fires.
async fn serve_storm(
    listener: tokio::net::TcpListener,
    storm: Arc<Mutex<Storm>>,
    stop: tokio::sync::oneshot::Receiver<()>,
) {
    use axum::body::{Body, Bytes};
    use axum::http::header;
    use axum::response::IntoResponse;
    let handler = move |body: Bytes| {
        let storm = Arc::clone(&storm);
        async move {
            let req: Value = serde_json::from_slice(&body).unwrap_or_default();
            let rid = req["id"].clone();
            let id = req["params"]["id"].as_str().unwrap_or_default().to_owned();
            let (restarted, rx) = {
                let mut s = storm
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if s.restarted {
                    s.resubscribed
                        .entry(id.clone())
                        .or_insert_with(Instant::now);
                    (true, None)
                } else {
                    let (tx, rx) = tokio::sync::mpsc::channel::<()>(1);
                    s.open.push(tx);
                    (false, Some(rx))
                }
            };
            let state = if restarted {
                "TASK_STATE_COMPLETED"
            } else {
                "TASK_STATE_WORKING"
            };
            let first = json!({"jsonrpc": "2.0", "id": rid, "result": {"task": task(&id, state)}});
            let head = futures_util::stream::once(async move {
                Ok::<_, std::io::Error>(Bytes::from(format!("data: {first}\n\n")))
            });
            // Held open until the restart drops its sender (then the body ends).
            let tail = futures_util::stream::unfold(rx, |rx| async move {
                let mut rx = rx?;
                let _ = rx.recv().await;
                None::<(Result<Bytes, std::io::Error>, _)>
            });
            (
                [
                    (header::CONTENT_TYPE, "text/event-stream"),
                    (header::CONNECTION, "close"),
                ],
                Body::from_stream(futures_util::StreamExt::chain(head, tail)),
            )
                .into_response()
        }
    };
    let app = axum::Router::new().route("/", axum::routing::post(handler));
    let _ = axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let _ = stop.await;
        })
        .await;
}

/// The child: follows `n` tasks of the storm agent at `url` at once; prints how many ended
/// COMPLETED.
pub(crate) fn child_storm(n: usize, url: &str) -> anyhow::Result<String> {
    use a2a_recover::a2a::{A2aClient, ClientConfig};
    use a2a_recover::recovery::follow::{FollowOptions, FollowTarget, follow_many};
    let rt = crate::support::runtime()?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("journal.sqlite3");
    let journal = Journal::open(&path, Duration::from_secs(30))?;
    let card = format!("{url}.well-known/agent-card.json");
    let attempts = crate::support::commit_intents(&journal, "storm", n, &card, "x", true)?;
    crate::support::set_endpoints(&path, url)?;
    let views: Vec<_> = attempts
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let t = task(&format!("t{i}"), "TASK_STATE_WORKING");
            Ok((a.id, TaskView::from_value(&t, t.to_string())?))
        })
        .collect::<anyhow::Result<_>>()?;
    journal.apply_tasks(&views, Source::Send)?;
    let mut targets = Vec::with_capacity(n);
    for rec in journal.workflow_steps("storm")? {
        let a = rec.latest().context("a step without attempt")?.clone();
        targets.push(rt.block_on(FollowTarget::new(
            &rec.step.spec.name,
            &a,
            false,
            a2a_recover::recovery::send::JournaledWire::default(),
        ))?);
    }
    let client = A2aClient::new(ClientConfig {
        timeout: Duration::from_secs(30),
        max_response_size: 16 << 20,
        stream_idle_timeout: Duration::from_secs(60),
        max_look_size: 64 * 1024 * 1024,
        max_card_size: a2a_recover::a2a::DEFAULT_MAX_CARD_SIZE,
    })?;
    let opts = FollowOptions {
        deadline: Some(tokio::time::Instant::now() + Duration::from_secs(120)),
        ..FollowOptions::default()
    };
    let results = rt.block_on(follow_many(
        &journal,
        &client,
        targets,
        &opts,
        n,
        &a2a_recover::recovery::Unheard,
    ));
    let completed = results
        .iter()
        .filter(|(_, o)| o.as_ref().is_ok_and(|o| o.exit_code() == 0))
        .count();
    Ok(completed.to_string())
}

fn storm_section(cfg: &Cfg, table: &mut Table) -> anyhow::Result<()> {
    let n = if cfg.quick { 200 } else { 1_000 };
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let port = std_listener.local_addr()?.port();
    let url = format!("http://127.0.0.1:{port}/");
    let storm = Arc::new(Mutex::new(Storm::default()));
    let server_rt = std::thread::spawn({
        let storm = Arc::clone(&storm);
        move || -> anyhow::Result<(Instant, Instant)> {
            let rt = crate::support::runtime()?;
            rt.block_on(async move {
                std_listener.set_nonblocking(true)?;
                let listener = tokio::net::TcpListener::from_std(std_listener)?;
                let (stop, stopped) = tokio::sync::oneshot::channel();
                let first = tokio::spawn(serve_storm(listener, Arc::clone(&storm), stopped));
                // Wait for every stream, then restart: cut them all and close the port.
                let until = Instant::now() + Duration::from_secs(120);
                while storm.lock().map_or(0, |s| s.open.len()) < n {
                    if Instant::now() > until {
                        bail!("the streams never all opened");
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                let _ = stop.send(());
                let cut = Instant::now();
                storm.lock().map(|mut s| s.open.clear()).ok();
                let _ = tokio::time::timeout(Duration::from_secs(5), first).await;
                tokio::time::sleep(Duration::from_millis(500)).await;
                let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
                storm.lock().map(|mut s| s.restarted = true).ok();
                let back = Instant::now();
                let (_stop, stopped) = tokio::sync::oneshot::channel();
                tokio::spawn(serve_storm(listener, Arc::clone(&storm), stopped));
                while storm.lock().map_or(0, |s| s.resubscribed.len()) < n {
                    if Instant::now() > until {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Ok((cut, back))
            })
        }
    });
    let me = std::env::current_exe()?;
    let run = run_child(&me, &["--child", "storm", &n.to_string(), &url])?;
    let completed: usize = run.stdout.lines().last().unwrap_or("0").trim().parse()?;
    let (cut, back) = server_rt
        .join()
        .map_err(|_| anyhow::anyhow!("the storm agent panicked"))??;
    let mut after: Vec<f64> = storm
        .lock()
        .map_err(|_| anyhow::anyhow!("poisoned"))?
        .resubscribed
        .values()
        .map(|t| t.duration_since(cut).as_secs_f64())
        .collect();
    after.sort_by(f64::total_cmp);
    let q = |p: f64| {
        after
            .get(((after.len() as f64 - 1.0) * p) as usize)
            .copied()
            .unwrap_or(0.0)
    };
    let down = back.duration_since(cut).as_secs_f64();
    table.add(Row {
        section: "schedule",
        what: format!(
            "storm: {n} followed streams, the agent restarts (port closed {down:.1} s): \
             reconnects after the cut p10 {:.2} s, p50 {:.2} s, p90 {:.2} s, last {:.2} s; \
             {completed} of {n} reattached",
            q(0.1),
            q(0.5),
            q(0.9),
            q(1.0)
        ),
        figure: Figure::Secs(q(0.9) - q(0.1)),
        floor: None,
        target: None,
        paired: None,
    });
    Ok(())
}

/// Measures the agents' limit, the rate limit and the storm.
pub(crate) fn run(cfg: &Cfg, rt: &Runtime, table: &mut Table) -> anyhow::Result<()> {
    limit_section(cfg, rt, table)?;
    rate_section(cfg, rt, table)?;
    storm_section(cfg, table)
}
