//! Measures one `reconcile` pass over N running tasks, beside N bare GetTask calls.
//!
//! ```text
//! cargo build --release --bins --examples
//! target/release/examples/reconcile_bench [N] [CONCURRENCY]     # defaults: 10000 8
//! ```
//!
//! It starts a scripted agent in-process (`work:100` with a one-hour tick, so every task stays
//! WORKING), journals N intents and sends them (each attempt then SUBMITTED, task id known), and
//! then runs, each as a child process under `/usr/bin/time -v` (wall time, peak RSS):
//! 1. `a2a-recover reconcile --concurrency C` — the first pass reads every task and journals
//!    SUBMITTED → WORKING (N changes, one durable transaction each);
//! 2. the same again — a pass over unchanged work, which writes nothing;
//!
//! and, in this process, N bare JSON-RPC `GetTask` calls with reqwest at the same concurrency.
//! Not a test: it takes tens of seconds at N = 10 000.

#![expect(clippy::print_stdout, reason = "a measurement prints its figures")]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use a2a_recover::a2a::{A2aClient, ClientConfig, Endpoint, card_url_for, origin_of, types};
use a2a_recover::journal::{self, IntentOutcome, Journal, NewIntent, Source, StepName, StepSpec};
use a2a_recover::scripted_agent::{AgentConfig, ScriptedAgent};
use futures_util::StreamExt as _;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(Ok(10_000), |s| s.parse())?;
    let concurrency: usize = args.next().map_or(Ok(8), |s| s.parse())?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(run(n, concurrency))
}

fn binary() -> anyhow::Result<PathBuf> {
    // target/<profile>/examples/reconcile_bench → target/<profile>/a2a-recover
    let me = std::env::current_exe()?;
    let dir = me
        .parent()
        .and_then(Path::parent)
        .ok_or_else(|| anyhow::anyhow!("no target directory above {}", me.display()))?;
    Ok(dir.join("a2a-recover"))
}

async fn run(n: usize, concurrency: usize) -> anyhow::Result<()> {
    let agent = ScriptedAgent::start(
        AgentConfig {
            tick: Duration::from_secs(3600),
            ..AgentConfig::default()
        },
        0,
    )
    .await?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("journal.sqlite3");
    let journal = Journal::open(&path, Duration::from_secs(30))?;
    let card = card_url_for(&agent.url())?;
    let started = Instant::now();
    let intents: Vec<NewIntent> = (0..n)
        .map(|i| NewIntent {
            spec: StepSpec::to_agent(
                StepName::from_parts("bench", format!("s{i}")),
                "work:100",
                card.clone(),
            ),
            agent_url: Some(card.clone()),
            message_id: uuid::Uuid::new_v4().to_string(),
            context_id: Some(uuid::Uuid::new_v4().to_string()),
        })
        .collect();
    let attempts: Vec<_> = journal
        .create_intents(&intents)?
        .into_iter()
        .filter_map(|o| match o {
            IntentOutcome::Created(a) => Some(a),
            IntentOutcome::Existing(_) => None,
        })
        .collect();
    let client = A2aClient::new(ClientConfig {
        timeout: Duration::from_secs(30),
        max_response_size: 16 * 1024 * 1024,
        stream_idle_timeout: Duration::from_secs(60),
    })?;
    let ep = Endpoint {
        url: agent.url(),
        tenant: None,
        card_origin: origin_of(&agent.url())?,
        credential: None,
        allow_cross_origin: false,
    };
    let journal_ref = &journal;
    let (client_ref, ep_ref) = (&client, &ep);
    let mut sends = futures_util::stream::iter(attempts.iter())
        .map(|a| async move {
            journal_ref.set_endpoint(
                a.id,
                &journal::Endpoint {
                    interface_url: ep_ref.url.clone(),
                    tenant: None,
                },
            )?;
            let req = types::SendMessageRequest {
                message: types::Message {
                    message_id: a.message_id.clone(),
                    context_id: a.context_id.clone(),
                    task_id: None,
                    role: types::Role::User,
                    parts: vec![types::Part::text("work:100".to_owned())],
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
            let answer = client_ref.send_message(ep_ref, &req).await?;
            let raw = answer.raw["task"].clone();
            let view = journal::TaskView::from_value(&raw, raw.to_string())?;
            journal_ref.apply_task(a.id, &view, Source::Send)?;
            anyhow::Ok(view.task_id)
        })
        .buffer_unordered(64);
    let mut task_ids = Vec::with_capacity(n);
    while let Some(id) = sends.next().await {
        task_ids.push(id?);
    }
    drop(sends);
    drop(journal);
    println!(
        "setup: {n} tasks created and journaled SUBMITTED in {:.1}s",
        started.elapsed().as_secs_f64()
    );

    let bin = binary()?;
    for label in [
        "first pass (SUBMITTED → WORKING)",
        "second pass (unchanged)",
    ] {
        let (wall, rss, code) = timed_pass(&bin, &path, concurrency).await?;
        println!(
            "reconcile --concurrency {concurrency}, {label}: {wall:.2}s, peak RSS {rss} KiB, exit {code}"
        );
    }

    let http = reqwest::Client::new();
    let started = Instant::now();
    let (http_ref, url) = (&http, agent.url());
    let url_ref = &url;
    let mut gets = futures_util::stream::iter(task_ids.iter().enumerate())
        .map(|(i, id)| async move {
            let body = serde_json::json!({
                "jsonrpc": "2.0", "id": i.to_string(), "method": "GetTask",
                "params": {"id": id, "historyLength": 0}
            });
            let resp = http_ref
                .post(url_ref)
                .header("A2A-Version", "1.0")
                .header("Content-Type", "application/json")
                .body(body.to_string())
                .send()
                .await?;
            let bytes = resp.bytes().await?;
            anyhow::Ok(bytes.len())
        })
        .buffer_unordered(concurrency);
    let mut total = 0;
    while let Some(len) = gets.next().await {
        total += len?;
    }
    println!(
        "bare reqwest GetTask × {n} at concurrency {concurrency}: {:.2}s ({total} bytes)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Runs one pass under `/usr/bin/time -v`; returns wall seconds, peak RSS (KiB) and exit code.
async fn timed_pass(
    bin: &Path,
    journal: &Path,
    concurrency: usize,
) -> anyhow::Result<(f64, u64, i32)> {
    let started = Instant::now();
    let out = tokio::process::Command::new("/usr/bin/time")
        .arg("-v")
        .arg(bin)
        .args(["reconcile", "--concurrency", &concurrency.to_string(), "-q"])
        .arg("--journal")
        .arg(journal)
        .output()
        .await?;
    let wall = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let rss = stderr
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Maximum resident set size (kbytes): ")
        })
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let code = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("Exit status: "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(-1);
    Ok((wall, rss, code))
}
