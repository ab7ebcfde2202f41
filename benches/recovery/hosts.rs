//! Issue 20: several hosts on one journal (scale-out). An agent answering every JSON-RPC call
//! after 50 ms; N intents never sent (no endpoint journaled: a pass sends them without a look
//! first), in workflows of 10 steps (a workflow is one pass's at a time: its lock); then
//! `reconcile --agent-concurrency 8` as one process, and as three processes started at once
//! under three host identities (`A2A_RECOVER_TEST_HOST`). Each run has a fresh journal and a
//! fresh agent; after each, the agent's counters must show every intent sent exactly once, or
//! the run measured the wrong work and the bench fails. The agent is registered (`agents add`).
//! On PostgreSQL, and on SQLite for reference (one file shared by three processes on one
//! machine).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use a2a_recover::journal::{Journal, Location};
use a2a_recover::scripted_agent::Stats;
use anyhow::{Context as _, bail};
use tokio::runtime::Runtime;

use crate::pg::PgServer;
use crate::report::{Row, Table, Target, Value};
use crate::support::{Agent, Cfg, agent_stats, commit_intents, median, median_ratio, run_child};

/// How long the agent takes to answer each call.
const DELAY_MS: u64 = 50;
/// `--agent-concurrency` of each process.
const C: usize = 8;
/// Steps per workflow.
const STEPS: usize = 10;
/// The host identities of the three processes (the one-host run is the first).
const HOSTS: [&str; 3] = ["host-a", "host-b", "host-c"];
/// The goal: three hosts reach at least this many times one host's attempts per second.
const MIN_SPEEDUP: f64 = 2.5;

/// Where the journal of a run lives.
#[derive(Clone, Copy)]
enum Store<'a> {
    Sqlite,
    Postgres(&'a PgServer),
}

impl Store<'_> {
    fn name(self) -> &'static str {
        match self {
            Self::Sqlite => "SQLite",
            Self::Postgres(_) => "PostgreSQL",
        }
    }
}

/// One run's outcome.
struct Outcome {
    /// Attempts sent per second, from the first process's start to the last one's end.
    rate: f64,
    /// Attempts each process visited, in the order of `HOSTS`.
    visited: Vec<usize>,
}

/// Returns the number of attempts a pass's summary line says it visited (0 without one).
fn visited(stdout: &str) -> usize {
    stdout
        .lines()
        .find_map(|l| {
            let head = l.strip_prefix("reconcile: ")?;
            head.split_once(" attempt(s) visited")?.0.parse().ok()
        })
        .unwrap_or(0)
}

/// Checks that the agent created exactly one task for each of `message_ids` and nothing else,
/// and got exactly one `SendMessage` per intent.
async fn check_sent_once(url: &str, message_ids: &BTreeSet<String>) -> anyhow::Result<()> {
    let stats: Stats = agent_stats(url).await?;
    let sent: BTreeSet<&String> = stats.tasks_per_message_id.keys().collect();
    let twice = stats
        .tasks_per_message_id
        .values()
        .filter(|&&k| k != 1)
        .count();
    let sends = stats.requests.get("SendMessage").copied().unwrap_or(0);
    if sent != message_ids.iter().collect() || twice > 0 || sends != message_ids.len() as u64 {
        bail!(
            "not every intent was sent exactly once: {} intents, {} message ids seen, {twice} \
             with more than one task, {sends} SendMessage calls",
            message_ids.len(),
            sent.len()
        );
    }
    Ok(())
}

/// One run: a fresh agent and journal with `n` intents, then one pass per host, all started
/// at once.
fn run_once(
    cfg: &Cfg,
    rt: &Runtime,
    store: Store<'_>,
    n: usize,
    hosts: &[&str],
) -> anyhow::Result<Outcome> {
    let agent = Agent::start(cfg, &["--delay", &format!("{DELAY_MS}ms")])?;
    let dir = cfg.tempdir()?;
    let schema = match store {
        Store::Sqlite => None,
        Store::Postgres(pg) => Some(pg.schema()),
    };
    let journal = schema.as_ref().map_or_else(
        || dir.path().join("journal.sqlite3").display().to_string(),
        crate::pg::Schema::url,
    );
    let mut message_ids = BTreeSet::new();
    {
        let j = Journal::open_at(
            &Location::parse(Path::new(&journal))?,
            Duration::from_secs(30),
        )?;
        for w in 0..n / STEPS {
            for a in commit_intents(&j, &format!("w{w}"), STEPS, &agent.card(), "x", true)? {
                message_ids.insert(a.message_id);
            }
        }
    }
    // Registered, as an orchestrator's agents usually are: its card is then read from the
    // journal, and each send costs two commits (lease, endpoint and stamp; answer and release).
    let add = run_child(
        &cfg.bin,
        &["--journal", &journal, "-q", "agents", "add", &agent.url],
    )?;
    if add.code != 0 {
        bail!("agents add exited {}: {}", add.code, add.stdout);
    }
    let started = Instant::now();
    let mut children = Vec::new();
    for host in hosts {
        let child = Command::new(&cfg.bin)
            .args(["--journal", &journal, "reconcile", "--agent-concurrency"])
            .arg(C.to_string())
            .env("A2A_RECOVER_TEST_HOST", host)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("failed to start `{}`", cfg.bin.display()))?;
        children.push((*host, child));
    }
    // Each read on its own thread: a pass blocked on a full pipe would stretch the run.
    let outputs: Vec<_> = std::thread::scope(|s| {
        let waits: Vec<_> = children
            .into_iter()
            .map(|(host, child)| s.spawn(move || (host, child.wait_with_output())))
            .collect();
        waits
            .into_iter()
            .map(|w| w.join().expect("a waiting thread panicked"))
            .collect()
    });
    let wall = started.elapsed();
    let mut visits = Vec::new();
    for (host, out) in outputs {
        let out = out?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        // 3: a workflow whose lock another host held was skipped.
        if !matches!(out.status.code(), Some(0 | 3)) {
            bail!(
                "{host}: reconcile ended {}: {stdout}{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        visits.push(visited(&stdout));
    }
    rt.block_on(check_sent_once(&agent.url, &message_ids))?;
    Ok(Outcome {
        rate: n as f64 / wall.as_secs_f64(),
        visited: visits,
    })
}

/// Measures one host and three on each store.
pub(crate) fn run(cfg: &Cfg, rt: &Runtime, pg: &PgServer, table: &mut Table) -> anyhow::Result<()> {
    let (n, repeats) = if cfg.quick { (120, 1) } else { (1_200, 3) };
    // The most one process can do: C calls in flight, each DELAY_MS long.
    let limit = (C * 1000) as f64 / DELAY_MS as f64;
    for store in [Store::Postgres(pg), Store::Sqlite] {
        let name = store.name();
        let mut pairs = Vec::new();
        let mut spread = Vec::new();
        for rep in 0..repeats {
            // Which goes first alternates.
            let (one, three) = if rep % 2 == 0 {
                let one = run_once(cfg, rt, store, n, &HOSTS[..1])?;
                (one, run_once(cfg, rt, store, n, &HOSTS)?)
            } else {
                let three = run_once(cfg, rt, store, n, &HOSTS)?;
                (run_once(cfg, rt, store, n, &HOSTS[..1])?, three)
            };
            println!(
                "  ({name}: one host {:.0} attempts/s; three hosts {:.0} attempts/s, visited \
                 {:?})",
                one.rate, three.rate, three.visited
            );
            spread.push(three.visited);
            pairs.push((one.rate, three.rate));
        }
        let what = format!(
            "{n} intents ({} workflows × {STEPS} steps) sent by `reconcile --agent-concurrency \
             {C}`, agent answering in {DELAY_MS} ms, on {name}",
            n / STEPS
        );
        let one = median(pairs.iter().map(|p| p.0).collect());
        table.add(Row {
            section: "hosts",
            what: format!("one host: {what} (median of {repeats})"),
            figure: Value::Rate(one, "attempts"),
            floor: Some((
                format!("one host's limit, {C} calls / {DELAY_MS} ms"),
                Value::Rate(limit, "attempts"),
            )),
            target: None,
            paired: None,
        });
        table.add(Row {
            section: "hosts",
            what: format!(
                "three hosts at once: {what} (median of {repeats}; attempts visited per host: \
                 {})",
                spread
                    .iter()
                    .map(|v| format!("{v:?}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            figure: Value::Rate(median(pairs.iter().map(|p| p.1).collect()), "attempts"),
            floor: Some((
                "one host (same run)".to_owned(),
                Value::Rate(one, "attempts"),
            )),
            target: Some(Target::MinSpeedup(MIN_SPEEDUP)),
            // Cost ratios: one host's rate over three hosts'.
            paired: Some(median_ratio(&pairs)),
        });
    }
    Ok(())
}
