//! Issue 9 §4: `follow`.
//!
//! - **One stream**: a fast emitter (its own thread and runtime) serves one `SubscribeToTask`
//!   stream of status updates as fast as the reader takes them; it is read by a bare reqwest SSE
//!   reader (the floor: bytes in, blank-line-terminated events counted), by our `EventStream`
//!   (SSE decoding, JSON-RPC envelope, normalizer, typed parse), and by `follow_attempt` (all of
//!   that and the journal).
//! - **1,000 streams**: a child process of this bench follows 1,000 running tasks of the
//!   scripted agent (its own process) at once with `follow_many`; every task is completed once
//!   every follow holds its first snapshot. The floor is another child holding 1,000 bare
//!   reqwest SSE streams through the same story. Each child reports its own `VmHWM`.

use std::cell::Cell;
use std::time::{Duration, Instant};

use a2a_recover::a2a::TaskView;
use a2a_recover::a2a::{A2aClient, ClientConfig, Endpoint, ProtocolBinding};
use a2a_recover::journal::{Journal, Source, StepName};
use a2a_recover::recovery::follow::{
    FollowOptions, FollowTarget, Progress, follow_attempt, follow_many,
};
use anyhow::{Context as _, bail};
use serde_json::{Value, json};
use tokio::runtime::Runtime;

use crate::report::{Row, Table, Value as Figure};
use crate::support::{
    Agent, Cfg, bare_client, commit_intents, median, median_ratio, proc_status_kib, rpc, run_child,
    running_attempts, set_endpoints,
};

fn client() -> anyhow::Result<A2aClient> {
    Ok(A2aClient::new(ClientConfig {
        timeout: Duration::from_secs(30),
        max_response_size: 16 << 20,
        stream_idle_timeout: Duration::from_secs(60),
        max_look_size: 64 * 1024 * 1024,
        max_card_size: a2a_recover::a2a::DEFAULT_MAX_CARD_SIZE,
    })?)
}

fn endpoint(url: &str) -> Endpoint {
    Endpoint {
        url: url.to_owned(),
        tenant: None,
        binding: ProtocolBinding::default(),
        card_origin: url.trim_end_matches('/').to_owned(),
        credential: None,
        placement: a2a_recover::a2a::Placement::Bearer,
        allow_cross_origin: false,
    }
}

// ---------------------------------------------------------------------------------------------
// One fast stream
// ---------------------------------------------------------------------------------------------

const TASK: &str = "bench-task";

fn ts(i: usize) -> String {
    chrono::DateTime::from_timestamp_micros(1_800_000_000_000_000 + i as i64)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// The `i`th StreamResponse of a stream of `events` (0: the snapshot; the last: COMPLETED).
fn event(i: usize, events: usize) -> Value {
    if i == 0 {
        return json!({"task": {"id": TASK, "contextId": "c",
                               "status": {"state": "TASK_STATE_WORKING", "timestamp": ts(0)}}});
    }
    let state = if i + 1 == events {
        "TASK_STATE_COMPLETED"
    } else {
        "TASK_STATE_WORKING"
    };
    json!({"statusUpdate": {"taskId": TASK, "contextId": "c",
           "status": {"state": state, "timestamp": ts(i),
                      "message": {"messageId": format!("m{i}"), "role": "ROLE_AGENT",
                                  "parts": [{"text": format!("step {i}")}]}}}})
}

/// Serves SubscribeToTask as a stream of `events` events (and GetTask: the completed task) on
/// its own thread; returns its URL.
fn start_emitter(events: usize) -> anyhow::Result<String> {
    use axum::body::{Body, Bytes};
    use axum::http::header;
    use axum::response::IntoResponse;
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let url = format!("http://127.0.0.1:{}/", listener.local_addr()?.port());
    std::thread::spawn(move || {
        let Ok(rt) = crate::support::runtime() else {
            return;
        };
        rt.block_on(async move {
            let handler = move |body: Bytes| async move {
                let req: Value = serde_json::from_slice(&body).unwrap_or_default();
                let id = req["id"].clone();
                if req["method"] == "GetTask" {
                    let task = json!({"id": TASK, "contextId": "c",
                        "status": {"state": "TASK_STATE_COMPLETED", "timestamp": ts(events - 1)}});
                    let answer = json!({"jsonrpc": "2.0", "id": id, "result": task});
                    return (
                        [(header::CONTENT_TYPE, "application/json")],
                        answer.to_string(),
                    )
                        .into_response();
                }
                let frames = futures_util::stream::iter((0..events).map(move |i| {
                    let e = json!({"jsonrpc": "2.0", "id": id, "result": event(i, events)});
                    Ok::<_, std::io::Error>(Bytes::from(format!("data: {e}\n\n")))
                }));
                (
                    [(header::CONTENT_TYPE, "text/event-stream")],
                    Body::from_stream(frames),
                )
                    .into_response()
            };
            let app = axum::Router::new().route("/", axum::routing::post(handler));
            if let Ok(listener) = tokio::net::TcpListener::from_std(listener) {
                let _ = axum::serve(listener, app).await;
            }
        });
    });
    Ok(url)
}

/// Counts the events of one bare reqwest SSE stream (blank-line-terminated frames).
async fn bare_sse(http: &reqwest::Client, url: &str, id: &str) -> anyhow::Result<usize> {
    let body =
        json!({"jsonrpc": "2.0", "id": "1", "method": "SubscribeToTask", "params": {"id": id}});
    let mut resp = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .header("A2A-Version", "1.0")
        .body(body.to_string())
        .send()
        .await?;
    let (mut seen, mut tail) = (0usize, Vec::new());
    while let Some(chunk) = resp.chunk().await? {
        tail.extend_from_slice(&chunk);
        let mut start = 0;
        while let Some(p) = tail[start..].windows(2).position(|w| w == b"\n\n") {
            seen += 1;
            start += p + 2;
        }
        tail.drain(..start);
    }
    Ok(seen)
}

/// Reads one stream of `events` with our EventStream; returns events/s.
async fn event_stream_rate(url: &str, events: usize) -> anyhow::Result<f64> {
    let client = client()?;
    let started = Instant::now();
    let mut stream = client.subscribe(&endpoint(url), TASK).await?;
    let mut seen = 0usize;
    while let Some(item) = stream.next().await {
        item?;
        seen += 1;
    }
    if seen != events {
        bail!("EventStream read {seen} of {events} events");
    }
    Ok(seen as f64 / started.elapsed().as_secs_f64())
}

/// Follows one stream of `events` into a fresh journal; returns events/s.
async fn followed_rate(cfg: &Cfg, url: &str, events: usize) -> anyhow::Result<f64> {
    let dir = cfg.tempdir()?;
    let path = dir.path().join("journal.sqlite3");
    let j = Journal::open(&path, Duration::from_secs(30))?;
    let card = format!("{url}.well-known/agent-card.json");
    let attempt = commit_intents(&j, "rate", 1, &card, "work:1", true)?.remove(0);
    set_endpoints(&path, url)?;
    let submitted =
        json!({"id": TASK, "contextId": "c", "status": {"state": "TASK_STATE_SUBMITTED"}});
    j.apply_task(
        attempt.id,
        &TaskView::from_value(&submitted, submitted.to_string())?,
        Source::Send,
    )?;
    let attempt = j.attempt(attempt.id)?;
    let target = FollowTarget::new(
        &StepName::parse("rate/s0")?,
        &attempt,
        false,
        a2a_recover::recovery::send::JournaledWire::default(),
    )
    .await?;
    let client = client()?;
    let started = Instant::now();
    let outcome = follow_attempt(
        &j,
        &client,
        &target,
        &FollowOptions::default(),
        &a2a_recover::recovery::Unheard,
    )
    .await?;
    let elapsed = started.elapsed().as_secs_f64();
    if outcome.exit_code() != 0 {
        bail!("the follow ended {:?}", outcome.end);
    }
    // The follow counts its final GetTask as one more observation than the stream's events.
    Ok(events as f64 / elapsed)
}

fn rate_section(cfg: &Cfg, rt: &Runtime, table: &mut Table) -> anyhow::Result<()> {
    let events = if cfg.quick { 5_000 } else { 20_000 };
    let url = start_emitter(events)?;
    let http = bare_client();
    // A journaled follow commits the events read together: size it to about two seconds from
    // a short probe (one commit per event, as before group commits, would take minutes).
    let probe_events = if cfg.quick { 100 } else { 300 };
    let probe_url = start_emitter(probe_events)?;
    let probe = rt.block_on(followed_rate(cfg, &probe_url, probe_events))?;
    let journaled_events = ((probe * 2.0) as usize).clamp(probe_events, events);
    let journaled_url = start_emitter(journaled_events)?;
    let (mut bare, mut ours, mut journaled) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..cfg.repeats() {
        let started = Instant::now();
        let seen = rt.block_on(bare_sse(&http, &url, TASK))?;
        if seen != events {
            bail!("the bare reader saw {seen} of {events} events");
        }
        bare.push(seen as f64 / started.elapsed().as_secs_f64());
        ours.push(rt.block_on(event_stream_rate(&url, events))?);
        journaled.push(rt.block_on(followed_rate(cfg, &journaled_url, journaled_events))?);
    }
    // Rates: the cost ratio of a run is the floor's rate over its own.
    let paired = |xs: &[f64]| {
        median_ratio(
            &bare
                .iter()
                .zip(xs)
                .map(|(b, x)| (*b, *x))
                .collect::<Vec<_>>(),
        )
    };
    let floor = || {
        Some((
            format!("bare reqwest SSE reader, {events} events"),
            Figure::Rate(median(bare.clone()), "events"),
        ))
    };
    table.add(Row {
        section: "follow",
        what: format!(
            "one stream, EventStream (decode + typed parse, no journal), {events} events"
        ),
        figure: Figure::Rate(median(ours.clone()), "events"),
        floor: floor(),
        target: None,
        paired: Some(paired(&ours)),
    });
    table.add(Row {
        section: "follow",
        what: format!("one stream, follow_attempt (journaled), {journaled_events} status events"),
        figure: Figure::Rate(median(journaled.clone()), "events"),
        floor: floor(),
        target: None,
        paired: Some(paired(&journaled)),
    });
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// 1,000 streams at once, each story in its own child process
// ---------------------------------------------------------------------------------------------

/// What a many-streams child reports.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct ManyReport {
    /// Seconds until every stream held its first event.
    subscribed: f64,
    /// Seconds until every stream ended.
    total: f64,
    /// Streams that ended with the task COMPLETED.
    completed: usize,
    /// Resident memory before the streams were opened (KiB).
    rss_before_kib: u64,
    /// The process's peak resident memory (KiB).
    hwm_kib: u64,
}

fn self_status(field: &str) -> u64 {
    proc_status_kib("/proc/self/status", field)
}

/// Completes every task on the scripted agent (its control endpoint).
async fn complete_all(http: &reqwest::Client, url: &str, ids: &[String]) {
    for id in ids {
        let _ = http
            .post(format!("{url}_scripted/complete/{id}"))
            .send()
            .await;
    }
}

/// The child: follows `n` running tasks at once with `follow_many`.
pub(crate) fn child_follow_many(n: usize, url: &str) -> anyhow::Result<String> {
    let rt = crate::support::runtime()?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("journal.sqlite3");
    let agent_url = url.to_owned();
    rt.block_on(async move {
        let ids = running_attempts(&path, &agent_url, "many", n).await?;
        let j = Journal::open(&path, Duration::from_secs(30))?;
        let mut targets = Vec::with_capacity(n);
        for rec in j.workflow_steps("many")? {
            let a = rec.latest().context("a step without attempt")?.clone();
            targets.push(
                FollowTarget::new(
                    &rec.step.spec.name,
                    &a,
                    false,
                    a2a_recover::recovery::send::JournaledWire::default(),
                )
                .await?,
            );
        }
        let rss_before_kib = self_status("VmRSS:");
        let client = client()?;
        let http = bare_client();
        let snapshots = Cell::new(0usize);
        let all = tokio::sync::Notify::new();
        let observer = a2a_recover::recovery::event::OnFollow(|_: &FollowTarget, p: &Progress| {
            if let Progress::Observed {
                source: Source::Stream,
                events: 1,
                ..
            } = p
            {
                snapshots.set(snapshots.get() + 1);
                if snapshots.get() == n {
                    all.notify_one();
                }
            }
        });
        let subscribed = Cell::new(0.0);
        let started = Instant::now();
        let completer = async {
            all.notified().await;
            subscribed.set(started.elapsed().as_secs_f64());
            complete_all(&http, &agent_url, &ids).await;
        };
        let opts = FollowOptions::default();
        let (results, ()) = tokio::join!(
            follow_many(&j, &client, targets, &opts, n, &observer),
            completer
        );
        let total = started.elapsed().as_secs_f64();
        let completed = results
            .iter()
            .filter(|(_, o)| o.as_ref().is_ok_and(|o| o.exit_code() == 0))
            .count();
        Ok(serde_json::to_string(&ManyReport {
            subscribed: subscribed.get(),
            total,
            completed,
            rss_before_kib,
            hwm_kib: self_status("VmHWM:"),
        })?)
    })
}

/// The floor child: holds `n` bare reqwest SSE streams through the same story.
pub(crate) fn child_sse_many(n: usize, url: &str) -> anyhow::Result<String> {
    let rt = crate::support::runtime()?;
    rt.block_on(async move {
        let http = bare_client();
        let params: Vec<Value> = (0..n)
            .map(|_| {
                crate::support::send_params(
                    &uuid::Uuid::new_v4().to_string(),
                    Some(&uuid::Uuid::new_v4().to_string()),
                    "work:1000",
                )
            })
            .collect();
        let mut ids = Vec::with_capacity(n);
        for (i, p) in params.into_iter().enumerate() {
            let v: Value = serde_json::from_slice(&rpc(&http, url, i, "SendMessage", p).await?)?;
            ids.push(
                v["result"]["task"]["id"]
                    .as_str()
                    .context("SendMessage answered no task")?
                    .to_owned(),
            );
        }
        let rss_before_kib = self_status("VmRSS:");
        let firsts = Cell::new(0usize);
        let all = tokio::sync::Notify::new();
        let started = Instant::now();
        let subscribed = Cell::new(0.0);
        let (firsts, all, http) = (&firsts, &all, &http);
        let streams = futures_util::future::join_all(ids.iter().map(|id| async move {
            let body = json!({"jsonrpc": "2.0", "id": "1", "method": "SubscribeToTask",
                              "params": {"id": id}});
            let mut resp = http
                .post(url)
                .header("content-type", "application/json")
                .header("accept", "text/event-stream")
                .header("A2A-Version", "1.0")
                .body(body.to_string())
                .send()
                .await?;
            let (mut seen, mut tail, mut last) = (0usize, Vec::new(), Vec::new());
            while let Some(chunk) = resp.chunk().await? {
                tail.extend_from_slice(&chunk);
                let mut start = 0;
                while let Some(p) = tail[start..].windows(2).position(|w| w == b"\n\n") {
                    seen += 1;
                    if seen == 1 {
                        firsts.set(firsts.get() + 1);
                        if firsts.get() == n {
                            all.notify_one();
                        }
                    }
                    last = tail[start..start + p].to_vec();
                    start += p + 2;
                }
                tail.drain(..start);
            }
            anyhow::Ok(last.windows(20).any(|w| w == b"TASK_STATE_COMPLETED"))
        }));
        let completer = async {
            all.notified().await;
            subscribed.set(started.elapsed().as_secs_f64());
            complete_all(http, url, &ids).await;
        };
        let (ends, ()) = tokio::join!(streams, completer);
        let total = started.elapsed().as_secs_f64();
        let completed = ends.iter().filter(|e| matches!(e, Ok(true))).count();
        Ok(serde_json::to_string(&ManyReport {
            subscribed: subscribed.get(),
            total,
            completed,
            rss_before_kib,
            hwm_kib: self_status("VmHWM:"),
        })?)
    })
}

fn many_child(cfg: &Cfg, kind: &str, n: usize, agent: &Agent) -> anyhow::Result<ManyReport> {
    let me = std::env::current_exe()?;
    let run = run_child(&me, &["--child", kind, &n.to_string(), &agent.url])?;
    let line = run.stdout.lines().last().unwrap_or_default();
    let report: ManyReport = serde_json::from_str(line)
        .with_context(|| format!("the {kind} child exited {} saying {line:?}", run.code))?;
    if report.completed != n {
        bail!("{kind}: {} of {n} streams completed", report.completed);
    }
    let _ = cfg;
    Ok(report)
}

fn many_section(cfg: &Cfg, table: &mut Table) -> anyhow::Result<()> {
    let n = if cfg.quick { 100 } else { 1_000 };
    let agent = Agent::start(cfg, &[])?;
    let mut ours = Vec::new();
    let mut bare = Vec::new();
    for _ in 0..cfg.repeats() {
        bare.push(many_child(cfg, "sse-many", n, &agent)?);
        ours.push(many_child(cfg, "follow-many", n, &agent)?);
    }
    let med = |rs: &[ManyReport], f: fn(&ManyReport) -> f64| median(rs.iter().map(f).collect());
    let paired = |f: fn(&ManyReport) -> f64| {
        median_ratio(
            &ours
                .iter()
                .zip(&bare)
                .map(|(o, b)| (f(o), f(b)))
                .collect::<Vec<_>>(),
        )
    };
    let peak = |rs: &[ManyReport]| rs.iter().map(|r| r.hwm_kib).max().unwrap_or(0);
    let before = |rs: &[ManyReport]| rs.iter().map(|r| r.rss_before_kib).max().unwrap_or(0);
    table.add(Row {
        section: "follow",
        what: format!("{n} streams at once (follow_many): all subscribed"),
        figure: Figure::Secs(med(&ours, |r| r.subscribed)),
        floor: Some((
            format!("{n} bare reqwest SSE streams"),
            Figure::Secs(med(&bare, |r| r.subscribed)),
        )),
        target: None,
        paired: Some(paired(|r| r.subscribed)),
    });
    table.add(Row {
        section: "follow",
        what: format!("{n} streams at once: total, subscribe → complete → all journaled"),
        figure: Figure::Secs(med(&ours, |r| r.total)),
        floor: Some((
            format!("{n} bare reqwest SSE streams"),
            Figure::Secs(med(&bare, |r| r.total)),
        )),
        target: None,
        paired: Some(paired(|r| r.total)),
    });
    table.add(Row {
        section: "follow",
        what: format!(
            "{n} streams at once: peak RSS of the process (RSS before opening them: {:.1} MiB)",
            before(&ours) as f64 / 1024.0
        ),
        figure: Figure::Kib(peak(&ours)),
        floor: Some((
            format!(
                "{n} bare reqwest SSE streams (before: {:.1} MiB)",
                before(&bare) as f64 / 1024.0
            ),
            Figure::Kib(peak(&bare)),
        )),
        target: None,
        paired: None,
    });
    Ok(())
}

/// Measures one stream's rate and 1,000 streams at once (quick: 100).
pub(crate) fn run(cfg: &Cfg, rt: &Runtime, table: &mut Table) -> anyhow::Result<()> {
    rate_section(cfg, rt, table)?;
    many_section(cfg, table)
}
