//! Measures the follow engine (`a2a_recover::recovery::follow`).
//!
//! ```text
//! cargo run --release --example follow_bench -- rate [EVENTS] [status|work]
//! cargo build --release && cargo run --release --example follow_bench -- many [STREAMS]
//! ```
//!
//! `rate` serves one SubscribeToTask stream of EVENTS events (default 20 000) as fast as the
//! reader takes them, from a fast emitter on its own thread, and reads it three ways in the same
//! run: a bare reqwest SSE reader (bytes, counting blank-line-terminated events), our
//! `EventStream` (SSE decoding, JSON-RPC envelope, normalizer, typed parse) without a journal,
//! and `follow_attempt` (all of that, plus every event journaled in a `synchronous=FULL` journal
//! before it is shown; the events read together share one transaction). `status` events are statusUpdates with increasing timestamps; `work` events
//! alternate a statusUpdate and an artifact chunk appended to one artifact, as `work:N` does.
//!
//! `many` starts `a2a-recover scripted-agent` (the release binary, as a child process, so the
//! figures are the follower's alone), delegates STREAMS (default 1 000) long-running tasks
//! through the journal, follows them all at once with `follow_many`, completes every task once
//! every follow holds its first snapshot (64 completions in flight, so that events arrive on
//! many streams together), and prints the wall times and this process's peak RSS (`VmHWM`)
//! beside its RSS before following.

use std::cell::Cell;
use std::io::{BufRead as _, BufReader, Write as _};
use std::time::{Duration, Instant};

use a2a_recover::a2a::TaskView;
use a2a_recover::a2a::{A2aClient, ClientConfig, Endpoint, ProtocolBinding, types};
use a2a_recover::journal::{
    Attempt, IntentOutcome, Journal, NewIntent, Source, StepName, StepSpec,
};
use a2a_recover::recovery::follow::{
    FollowOptions, FollowTarget, Progress, follow_attempt, follow_many,
};
use futures_util::StreamExt as _;
use serde_json::{Value, json};

type BoxError = Box<dyn std::error::Error>;

/// How many task completions `many` has in flight at once.
const COMPLETIONS_IN_FLIGHT: usize = 64;

fn out(line: &str) {
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    match args.first().map(String::as_str) {
        Some("rate") => {
            let events = args.get(1).map_or(Ok(20_000), |s| s.parse())?;
            let work = args.get(2).is_some_and(|m| m == "work");
            runtime.block_on(rate(events, work))
        }
        Some("many") => {
            let streams = args.get(1).map_or(Ok(1000), |s| s.parse())?;
            runtime.block_on(many(streams))
        }
        _ => Err("usage: follow_bench rate [EVENTS] [status|work] | many [STREAMS]".into()),
    }
}

fn client() -> Result<A2aClient, BoxError> {
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

/// Commits `n` intents for `name-0…` bound to `card`, each with the endpoint `url` journaled.
fn intents(
    j: &Journal,
    name: &str,
    n: usize,
    card: &str,
    url: &str,
) -> Result<Vec<Attempt>, BoxError> {
    let intents: Vec<NewIntent> = (0..n)
        .map(|i| NewIntent {
            spec: StepSpec::to_agent(
                StepName::parse(&format!("{name}/s{i}")).unwrap(),
                "work:1000",
                card,
            ),
            agent_url: Some(card.to_owned()),
            message_id: uuid::Uuid::new_v4().to_string(),
            context_id: Some(uuid::Uuid::new_v4().to_string()),
        })
        .collect();
    let mut out = Vec::with_capacity(n);
    for o in j.create_intents(&intents)? {
        let IntentOutcome::Created(a) = o else {
            return Err("the step already existed".into());
        };
        out.push(j.set_endpoint(
            a.id,
            &a2a_recover::journal::JournaledEndpoint {
                binding: a2a_recover::a2a::ProtocolBinding::JsonRpcV1,
                interface_url: url.to_owned(),
                tenant: None,
            },
        )?);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// rate: one fast stream, read three ways
// ---------------------------------------------------------------------------------------------

const TASK: &str = "bench-task";

fn ts(i: usize) -> String {
    let t = chrono::DateTime::from_timestamp_micros(1_800_000_000_000_000 + i as i64)
        .unwrap_or_default();
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// The `i`th StreamResponse of the emitted stream (0 = the snapshot), and whether it is the last.
fn event(i: usize, events: usize, work: bool) -> Value {
    if i == 0 {
        return json!({"task": {"id": TASK, "contextId": "c",
                               "status": {"state": "TASK_STATE_WORKING", "timestamp": ts(0)}}});
    }
    if i + 1 == events {
        return json!({"statusUpdate": {"taskId": TASK, "contextId": "c",
                      "status": {"state": "TASK_STATE_COMPLETED", "timestamp": ts(i)}}});
    }
    if work && i.is_multiple_of(2) {
        let chunk = i / 2;
        return json!({"artifactUpdate": {"taskId": TASK, "contextId": "c",
                      "artifact": {"artifactId": "result", "parts": [{"text": format!("chunk {chunk};")}]},
                      "append": chunk > 1}});
    }
    json!({"statusUpdate": {"taskId": TASK, "contextId": "c",
           "status": {"state": "TASK_STATE_WORKING", "timestamp": ts(i),
                      "message": {"messageId": format!("m{i}"), "role": "ROLE_AGENT",
                                  "parts": [{"text": format!("step {i}")}]}}}})
}

/// The final task GetTask answers (the artifact as the appends built it).
fn final_task(events: usize, work: bool) -> Value {
    let mut task = json!({"id": TASK, "contextId": "c",
                          "status": {"state": "TASK_STATE_COMPLETED", "timestamp": ts(events - 1)}});
    if work {
        let parts: Vec<Value> = (1..events)
            .filter(|i| i.is_multiple_of(2) && i + 1 != events)
            .map(|i| json!({"text": format!("chunk {};", i / 2)}))
            .collect();
        task["artifacts"] = json!([{"artifactId": "result", "parts": parts}]);
    }
    task
}

/// Serves SubscribeToTask as an SSE stream of `events` events, and GetTask, on its own thread.
fn start_emitter(events: usize, work: bool) -> Result<String, BoxError> {
    use axum::body::{Body, Bytes};
    use axum::http::header;
    use axum::response::IntoResponse;
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let url = format!("http://127.0.0.1:{}/", listener.local_addr()?.port());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let handler = move |body: Bytes| async move {
                let req: Value = serde_json::from_slice(&body).unwrap_or_default();
                let id = req["id"].clone();
                if req["method"] == "GetTask" {
                    let answer =
                        json!({"jsonrpc": "2.0", "id": id, "result": final_task(events, work)});
                    return (
                        [(header::CONTENT_TYPE, "application/json")],
                        answer.to_string(),
                    )
                        .into_response();
                }
                let frames = futures_util::stream::iter((0..events).map(move |i| {
                    let e = json!({"jsonrpc": "2.0", "id": id, "result": event(i, events, work)});
                    Ok::<_, std::io::Error>(Bytes::from(format!("data: {e}\n\n")))
                }));
                (
                    [(header::CONTENT_TYPE, "text/event-stream")],
                    Body::from_stream(frames),
                )
                    .into_response()
            };
            let app = axum::Router::new().route("/", axum::routing::post(handler));
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    Ok(url)
}

async fn rate(events: usize, work: bool) -> Result<(), BoxError> {
    let events = events.max(3);
    let url = start_emitter(events, work)?;
    let kind = if work {
        "work (status + artifact append)"
    } else {
        "status"
    };
    out(&format!("one stream of {events} {kind} events"));

    // 1. Bare reqwest: bytes in, blank lines counted.
    let http = reqwest::Client::new();
    let started = Instant::now();
    let body =
        json!({"jsonrpc": "2.0", "id": "1", "method": "SubscribeToTask", "params": {"id": TASK}});
    let mut resp = http
        .post(&url)
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
    report("bare reqwest SSE reader", seen, started.elapsed());

    // 2. Our client's EventStream: decode, envelope, normalize, type; no journal.
    let client = client()?;
    let ep = endpoint(&url);
    let started = Instant::now();
    let mut stream = client.subscribe(&ep, TASK).await?;
    let mut seen = 0usize;
    while let Some(item) = stream.next().await {
        item?;
        seen += 1;
    }
    report("EventStream (no journal)", seen, started.elapsed());

    // 3. follow_attempt: everything, every event committed to a synchronous=FULL journal.
    let dir = tempfile::tempdir()?;
    let j = Journal::open(&dir.path().join("journal.sqlite3"), Duration::from_secs(30))?;
    let card = format!("{url}.well-known/agent-card.json");
    let attempt = intents(&j, "rate", 1, &card, &url)?.remove(0);
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
    let before = j.event_count()?;
    let started = Instant::now();
    let outcome = follow_attempt(
        &j,
        &client,
        &target,
        &FollowOptions::default(),
        &a2a_recover::recovery::Unheard,
    )
    .await?;
    let elapsed = started.elapsed();
    // The final GetTask is one more observation than the stream's events.
    report(
        "follow_attempt (journaled)",
        outcome.events as usize - 1,
        elapsed,
    );
    out(&format!(
        "  ended {:?}, {} journal events written, {} reconnects, journal {} KiB",
        outcome.end,
        j.event_count()? - before,
        outcome.reconnects,
        std::fs::metadata(j.path())?.len() / 1024
            + std::fs::metadata(dir.path().join("journal.sqlite3-wal")).map_or(0, |m| m.len())
                / 1024
    ));
    Ok(())
}

fn report(what: &str, events: usize, elapsed: Duration) {
    out(&format!(
        "  {what:<28} {events:>7} events in {:>8.3} s = {:>9.0} events/s",
        elapsed.as_secs_f64(),
        events as f64 / elapsed.as_secs_f64()
    ));
}

// ---------------------------------------------------------------------------------------------
// many: 1,000 streams in one process
// ---------------------------------------------------------------------------------------------

fn proc_status(field: &str) -> String {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .map(|l| l[field.len()..].trim().to_owned())
        .unwrap_or_default()
}

struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[expect(
    clippy::too_many_lines,
    reason = "a measurement script: set up, run and report one pass"
)]
async fn many(n: usize) -> Result<(), BoxError> {
    let exe = std::env::current_exe()?;
    let bin = exe
        .parent()
        .and_then(|examples| examples.parent())
        .map(|dir| dir.join("a2a-recover"))
        .ok_or("no target directory")?;
    if !bin.is_file() {
        return Err(format!(
            "{} is missing: run `cargo build --release` first",
            bin.display()
        )
        .into());
    }
    let mut child = std::process::Command::new(&bin)
        .args(["scripted-agent", "--port", "0", "--tick", "3600s"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let _child = Child(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .ok_or("no ready line")?
        .to_owned();
    out(&format!("scripted agent at {url}; {n} tasks"));

    let dir = tempfile::tempdir()?;
    let j = Journal::open(&dir.path().join("journal.sqlite3"), Duration::from_secs(30))?;
    let client = client()?;
    let ep = endpoint(&url);
    let card = format!("{url}.well-known/agent-card.json");
    let started = Instant::now();
    let attempts = intents(&j, "many", n, &card, &url)?;
    let mut targets = Vec::with_capacity(n);
    for (i, a) in attempts.iter().enumerate() {
        let req = types::SendMessageRequest {
            message: types::Message {
                message_id: a.message_id.clone(),
                context_id: a.context_id.clone(),
                task_id: None,
                role: types::Role::User,
                parts: vec![types::Part::text("work:1000")],
                metadata: None,
                extensions: None,
                reference_task_ids: None,
            },
            configuration: Some(types::SendMessageConfiguration {
                accepted_output_modes: None,
                task_push_notification_config: None,
                history_length: None,
                return_immediately: Some(true),
            }),
            metadata: None,
            tenant: None,
        };
        let sent = client.send_message(&ep, &req).await?;
        let raw = sent.raw["task"].clone();
        j.apply_task(
            a.id,
            &TaskView::from_value(&raw, raw.to_string())?,
            Source::Send,
        )?;
        let a = j.attempt(a.id)?;
        targets.push(
            FollowTarget::new(
                &StepName::parse(&format!("many/s{i}"))?,
                &a,
                false,
                a2a_recover::recovery::send::JournaledWire::default(),
            )
            .await?,
        );
    }
    out(&format!(
        "  delegated {n} in {:.2} s",
        started.elapsed().as_secs_f64()
    ));
    let rss_before = proc_status("VmRSS:");
    let task_ids: Vec<String> = targets.iter().map(|t| t.task_id.clone()).collect();
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
    let http = reqwest::Client::new();
    let subscribed_in = Cell::new(Duration::ZERO);
    let started = Instant::now();
    let completer = async {
        all.notified().await;
        subscribed_in.set(started.elapsed());
        // Many completions in flight at once, as tasks finishing on their own would: events
        // then arrive on many streams together (one at a time would measure this loop).
        futures_util::stream::iter(&task_ids)
            .map(|id| http.post(format!("{url}_scripted/complete/{id}")).send())
            .buffer_unordered(COMPLETIONS_IN_FLIGHT)
            .for_each(|_| async {})
            .await;
    };
    let opts = FollowOptions::default();
    let (results, ()) = tokio::join!(
        follow_many(&j, &client, targets, &opts, n, &observer),
        completer
    );
    let elapsed = started.elapsed();
    let completed = results
        .iter()
        .filter(|(_, o)| o.as_ref().is_ok_and(|o| o.exit_code() == 0))
        .count();
    out(&format!(
        "  followed {n} streams at once: all subscribed in {:.2} s, {completed} completed {:.2} s \
         later, {:.2} s in all",
        subscribed_in.get().as_secs_f64(),
        elapsed.saturating_sub(subscribed_in.get()).as_secs_f64(),
        elapsed.as_secs_f64()
    ));
    out(&format!(
        "  RSS before following {rss_before}; peak (VmHWM) {}; now {}",
        proc_status("VmHWM:"),
        proc_status("VmRSS:")
    ));
    Ok(())
}
