//! Issue 9 §2: `delegate --plan` with 1,000 steps (intents in one transaction, sends
//! concurrent), as a child process, beside the same number of bare `SendMessage` calls at the
//! plan's concurrency; once with an agent only named in the plan (its card fetched by the send
//! path) and once with the agent registered (`agents add`: the card is cached in the journal).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::bail;
use tokio::runtime::Runtime;

use crate::report::{Row, Table, Target, Value};
use crate::support::{
    Agent, Cfg, bare_client, median, median_ratio, rpc_many, run_child, send_params,
};

/// `delegate --plan` sends at most this many steps at once (`PLAN_CONCURRENCY`).
const PLAN_CONCURRENCY: usize = 8;
/// The goal of `delegate --plan` against its floor (issue 36).
const PLAN_RATIO: f64 = 2.0;

fn write_plan(path: &Path, workflow: &str, agent: &str, steps: usize) -> anyhow::Result<()> {
    let mut toml = format!("workflow = \"{workflow}\"\n");
    for i in 0..steps {
        let _ = write!(
            toml,
            "\n[[step]]\nname = \"s{i}\"\nagent = \"{agent}\"\ntext = \"work:100\"\n"
        );
    }
    std::fs::write(path, toml)?;
    Ok(())
}

/// Counts the journal's attempts with a task id.
fn sent_count(journal: &Path) -> anyhow::Result<i64> {
    let conn = rusqlite::Connection::open(journal)?;
    Ok(conn.query_row(
        "SELECT count(*) FROM attempts WHERE task_id IS NOT NULL",
        [],
        |r| r.get(0),
    )?)
}

/// Runs `delegate --plan` once in a fresh journal; returns its wall seconds.
fn delegate_once(
    cfg: &Cfg,
    agent: &Agent,
    steps: usize,
    registered: bool,
    rep: usize,
) -> anyhow::Result<f64> {
    let dir = cfg.tempdir()?;
    let journal = dir.path().join("journal.sqlite3");
    let journal_arg = journal.display().to_string();
    if registered {
        let add = run_child(
            &cfg.bin,
            &["--journal", &journal_arg, "-q", "agents", "add", &agent.url],
        )?;
        if add.code != 0 {
            bail!("agents add exited {}", add.code);
        }
    }
    let plan = dir.path().join("plan.toml");
    write_plan(&plan, &format!("plan-{rep}"), &agent.url, steps)?;
    let run = run_child(
        &cfg.bin,
        &[
            "--journal",
            &journal_arg,
            "-q",
            "delegate",
            "--plan",
            &plan.display().to_string(),
        ],
    )?;
    let sent = sent_count(&journal)?;
    if run.code != 0 || sent != steps as i64 {
        bail!(
            "delegate --plan exited {} with {sent} of {steps} tasks journaled",
            run.code
        );
    }
    Ok(run.wall.as_secs_f64())
}

/// Measures `delegate --plan` with 1,000 steps (quick: 200).
pub(crate) fn run(cfg: &Cfg, rt: &Runtime, table: &mut Table) -> anyhow::Result<()> {
    let steps = if cfg.quick { 200 } else { 1_000 };
    let agent = Agent::start(cfg, &[])?;
    let http = bare_client();
    let mut floors = Vec::new();
    let mut plain = Vec::new();
    let mut registered = Vec::new();
    for rep in 0..cfg.repeats() {
        let params: Vec<serde_json::Value> = (0..steps)
            .map(|_| {
                send_params(
                    &uuid::Uuid::new_v4().to_string(),
                    Some(&uuid::Uuid::new_v4().to_string()),
                    "work:100",
                )
            })
            .collect();
        floors.push(
            rt.block_on(rpc_many(
                &http,
                &agent.url,
                "SendMessage",
                &params,
                PLAN_CONCURRENCY,
            ))?
            .as_secs_f64(),
        );
        plain.push(delegate_once(cfg, &agent, steps, false, rep)?);
        registered.push(delegate_once(cfg, &agent, steps, true, rep)?);
    }
    let floor_rate = steps as f64 / median(floors.clone());
    for (what, times) in [
        ("agent named in the plan (card fetched)", plain),
        ("agent registered (card cached)", registered),
    ] {
        let pairs: Vec<(f64, f64)> = times.iter().copied().zip(floors.iter().copied()).collect();
        let secs = median(times);
        table.add(Row {
            section: "delegate",
            what: format!("delegate --plan, {steps} steps, {what}: delegations/s"),
            figure: Value::Rate(steps as f64 / secs, "delegations"),
            floor: Some((
                format!("{steps} bare SendMessage, c={PLAN_CONCURRENCY}"),
                Value::Rate(floor_rate, "sends"),
            )),
            target: Some(Target::Ratio(PLAN_RATIO)),
            paired: Some(median_ratio(&pairs)),
        });
    }
    Ok(())
}

/// A floor connection for single-row durable commits (WAL, `synchronous=FULL`) in `dir`, the
/// journal's directory.
fn commit_floor(dir: &Path) -> anyhow::Result<rusqlite::Connection> {
    let conn = rusqlite::Connection::open(dir.join("floor.sqlite3"))?;
    conn.execute_batch(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;
         CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);",
    )?;
    Ok(conn)
}

/// Seconds of one durable commit of one small row.
fn durable_commit(conn: &rusqlite::Connection, i: usize) -> anyhow::Result<f64> {
    let t = std::time::Instant::now();
    conn.execute("INSERT INTO t (v) VALUES (?1)", [format!("row {i}")])?;
    Ok(t.elapsed().as_secs_f64())
}

/// Seconds of one bare `SendMessage` from a fresh client (a new connection, as a new process
/// has).
fn bare_send(rt: &Runtime, agent: &Agent, i: usize) -> anyhow::Result<f64> {
    let params = send_params(
        &uuid::Uuid::new_v4().to_string(),
        Some(&uuid::Uuid::new_v4().to_string()),
        "work:100",
    );
    let t = std::time::Instant::now();
    rt.block_on(crate::support::rpc(
        &bare_client(),
        &agent.url,
        i,
        "SendMessage",
        params,
    ))?;
    Ok(t.elapsed().as_secs_f64())
}

/// The arguments of one `delegate STEP --agent URL work:100` into `journal`.
fn delegate_args<'a>(journal: &'a str, agent: &'a Agent, step: &'a str) -> [&'a str; 8] {
    [
        "--journal",
        journal,
        "-q",
        "delegate",
        step,
        "--agent",
        &agent.url,
        "work:100",
    ]
}

/// Seconds of one `delegate STEP --agent URL work:100` into `journal`.
fn one_delegate(cfg: &Cfg, journal: &str, agent: &Agent, step: &str) -> anyhow::Result<f64> {
    let t = std::time::Instant::now();
    let status = std::process::Command::new(&cfg.bin)
        .args(delegate_args(journal, agent, step))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()?;
    let secs = t.elapsed().as_secs_f64();
    if !status.success() {
        bail!("delegate {step} failed: {status}");
    }
    Ok(secs)
}

/// The durable points of one `delegate`: the intent, the endpoint stamp (with the send's
/// lease) right before the send, the outcome.
const DURABLE_POINTS: usize = 3;

/// Measures one `delegate STEP --agent URL TEXT` (agent registered: its card in the journal),
/// a new step each run, beside a process start + a bare `SendMessage` + three durable commits:
/// once with the journal on the run's disk, and once in `/dev/shm` (memory: what the code
/// itself costs, with no disk wait), when there is one.
pub(crate) fn run_one(cfg: &Cfg, rt: &Runtime, table: &mut Table) -> anyhow::Result<()> {
    let agent = Agent::start(cfg, &[])?;
    let disk = cfg.tempdir()?;
    one_row(cfg, rt, &agent, disk.path(), "journal on disk")?.add_to(table);
    fsyncs(cfg, &agent, disk.path(), table)?;
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir() {
        let mem = tempfile::Builder::new()
            .prefix("a2a-bench-")
            .tempdir_in(shm)?;
        one_row(cfg, rt, &agent, mem.path(), "journal in /dev/shm (no disk)")?.add_to(table);
    }
    Ok(())
}

/// One row's medians.
struct OneDelegate {
    label: &'static str,
    runs: usize,
    delegate: f64,
    start: f64,
    send: f64,
    commit: f64,
    paired: f64,
}

impl OneDelegate {
    fn add_to(&self, table: &mut Table) {
        table.add(Row {
            section: "delegate",
            what: format!(
                "one `delegate STEP --agent URL TEXT`, agent registered, {} (median of {})",
                self.label, self.runs
            ),
            figure: Value::Secs(self.delegate),
            floor: Some((
                format!(
                    "process start {:.1} ms + bare SendMessage {:.1} ms + {DURABLE_POINTS} \
                     durable commits {:.1} ms",
                    self.start * 1e3,
                    self.send * 1e3,
                    DURABLE_POINTS as f64 * self.commit * 1e3
                ),
                Value::Secs(self.start + self.send + DURABLE_POINTS as f64 * self.commit),
            )),
            target: Some(Target::Ratio(1.5)),
            paired: Some(self.paired),
        });
    }
}

/// Runs `delegate` into a journal in `dir`, each run beside one of each of the floor's parts
/// (interleaved, so that a change of load on the shared machine weighs on both alike): the
/// process start is the same binary doing nothing (`--version`), the commits go to a floor
/// database in the same directory.
fn one_row(
    cfg: &Cfg,
    rt: &Runtime,
    agent: &Agent,
    dir: &Path,
    label: &'static str,
) -> anyhow::Result<OneDelegate> {
    let runs = if cfg.quick { 20 } else { 200 };
    let journal = dir.join("journal.sqlite3");
    let j = journal.display().to_string();
    let add = run_child(
        &cfg.bin,
        &["--journal", &j, "-q", "agents", "add", &agent.url],
    )?;
    if add.code != 0 {
        bail!("agents add exited {}", add.code);
    }
    let floor_db = commit_floor(dir)?;
    let (mut delegates, mut starts, mut sends, mut commits, mut ratios) =
        (vec![], vec![], vec![], vec![], vec![]);
    for i in 0..runs {
        let start = crate::support::spawn_wait(&cfg.bin, &["--version"])?.as_secs_f64();
        let secs = one_delegate(cfg, &j, agent, &format!("one/s{i}"))?;
        let send = bare_send(rt, agent, i)?;
        let mut commit = 0.0;
        for k in 0..DURABLE_POINTS {
            commit += durable_commit(&floor_db, DURABLE_POINTS * i + k)?;
        }
        ratios.push(secs / (start + send + commit));
        delegates.push(secs);
        starts.push(start);
        sends.push(send);
        commits.push(commit / DURABLE_POINTS as f64);
    }
    if sent_count(&journal)? != runs as i64 {
        bail!("not every delegate journaled its task");
    }
    Ok(OneDelegate {
        label,
        runs,
        delegate: median(delegates),
        start: median(starts),
        send: median(sends),
        commit: median(commits),
        paired: median(ratios),
    })
}

/// Counts the `fsync` and `fdatasync` calls of one `delegate` to a registered agent, and of
/// one that fetches the card (a new journal each time, after one delegate made its WAL), with
/// `strace -f`; says so and counts nothing when strace is missing (scripts/test installs it).
fn fsyncs(cfg: &Cfg, agent: &Agent, dir: &Path, table: &mut Table) -> anyhow::Result<()> {
    if std::process::Command::new("strace")
        .arg("-V")
        .stdout(std::process::Stdio::null())
        .status()
        .is_err()
    {
        println!(
            "  (strace not found: the fsync counts are not measured; scripts/test installs it)"
        );
        return Ok(());
    }
    for (label, registered) in [("agent registered", true), ("card fetched", false)] {
        let journal = dir.join(format!("fsyncs-{registered}.sqlite3"));
        let j = journal.display().to_string();
        if registered {
            run_child(
                &cfg.bin,
                &["--journal", &j, "-q", "agents", "add", &agent.url],
            )?;
        }
        one_delegate(cfg, &j, agent, "fsync/first")?;
        let calls = fsyncs_of(cfg, agent, &j, "fsync/second", &dir.join("strace.txt"))?;
        table.add(Row {
            section: "delegate",
            what: format!(
                "fsync and fdatasync calls of one `delegate`, {label} (strace -f; its journal \
                 has a WAL)"
            ),
            figure: Value::Count(calls as f64),
            floor: Some((
                format!("the durable points: {DURABLE_POINTS}"),
                Value::Count(DURABLE_POINTS as f64),
            )),
            target: registered.then_some(Target::Ratio(1.0)),
            paired: None,
        });
    }
    // The same over many delegates in a row: a process that finds the WAL past the size it
    // keeps checkpoints it at close (two more, and one for the WAL's new header after it).
    let journal = dir.join("fsyncs-many.sqlite3");
    let j = journal.display().to_string();
    run_child(
        &cfg.bin,
        &["--journal", &j, "-q", "agents", "add", &agent.url],
    )?;
    let runs: u32 = if cfg.quick { 12 } else { 48 };
    let mut total = 0;
    for i in 0..runs {
        total += fsyncs_of(
            cfg,
            agent,
            &j,
            &format!("many/s{i}"),
            &dir.join("strace.txt"),
        )?;
    }
    table.add(Row {
        section: "delegate",
        what: format!(
            "fsync and fdatasync calls per `delegate`, agent registered, over {runs} in a row \
             (strace -f; the checkpoints at close included)"
        ),
        figure: Value::Count(total as f64 / f64::from(runs)),
        floor: Some((
            format!("the durable points: {DURABLE_POINTS}"),
            Value::Count(DURABLE_POINTS as f64),
        )),
        target: None,
        paired: None,
    });
    Ok(())
}

/// The `fsync` and `fdatasync` calls of one `delegate STEP` into `journal`, counted by
/// `strace -f` into `trace`.
fn fsyncs_of(
    cfg: &Cfg,
    agent: &Agent,
    journal: &str,
    step: &str,
    trace: &Path,
) -> anyhow::Result<usize> {
    let status = std::process::Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=fsync,fdatasync", "-o"])
        .arg(trace)
        .arg(&cfg.bin)
        .args(delegate_args(journal, agent, step))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()?;
    if !status.success() {
        bail!("delegate under strace failed: {status}");
    }
    Ok(std::fs::read_to_string(trace)?
        .lines()
        .filter(|l| l.contains("fsync("))
        .count())
}
