//! `cargo bench`: recovery throughput beside the machine's limits, side by side in one run.
//!
//! Every figure is printed beside a floor measured in the same run on the same machine (bare
//! reqwest calls against the same agent, raw SQLite commits on the same disk, a bare process
//! start), and their ratio; `docs/performance.md` explains each and records one run.
//!
//! ```text
//! cargo bench                          # everything: minutes (2.5 on 2 idle cores, postgres and hosts 5–10 more)
//! BENCH_QUICK=1 cargo bench            # smaller sizes, one repeat: a smoke run of about a minute
//! cargo bench -- reconcile startup     # only these sections
//! BENCH_BIN=../old/a2a-recover cargo bench -- delegate   # another build of the binary
//! ```
//!
//! Sections: `floors`, `reconcile`, `schedule`, `delegate`, `lookup`, `follow`, `startup`, `growth`,
//! `push` (`listen`: pushes per second into the journal beside a bare commit and a bare HTTP server),
//! `postgres` (passes on a PostgreSQL journal beside SQLite), `hosts` (three hosts on one journal
//! beside one). The last two use the PostgreSQL server `A2A_RECOVER_TEST_PG_URL` names, or start
//! one with `scripts/pg-test-server` for the run (stopped at its end). The
//! scripted agent runs in its own process (`a2a-recover scripted-agent`, the binary cargo built
//! for this bench); commands under test run as child processes whose peak RSS is read with
//! `/usr/bin/time -v` (or by polling `/proc/PID/status` `VmHWM` without it). Timings are
//! medians of repeats: the machine is shared. Nothing here asserts a timing.

#![expect(clippy::print_stdout, reason = "a benchmark prints its table")]

mod delegate;
mod floors;
mod follow;
mod growth;
mod hosts;
mod lookup;
mod pg;
mod postgres;
mod push;
mod reconcile;
mod report;
mod schedule;
mod startup;
mod support;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context as _, bail};

use crate::report::Table;
use crate::support::Cfg;

const SECTIONS: [&str; 11] = [
    "floors",
    "reconcile",
    "schedule",
    "delegate",
    "lookup",
    "follow",
    "startup",
    "growth",
    "push",
    "postgres",
    "hosts",
];

fn main() -> anyhow::Result<()> {
    // cargo passes `--bench` to a harness-less bench target.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("--child") {
        return child(&args[1..]);
    }
    for a in &args {
        if !SECTIONS.contains(&a.as_str()) {
            bail!("unknown section `{a}`; sections: {}", SECTIONS.join(", "));
        }
    }
    let wanted = |s: &str| args.is_empty() || args.iter().any(|a| a == s);
    let cfg = Cfg {
        quick: std::env::var("BENCH_QUICK").is_ok_and(|v| v == "1"),
        // `BENCH_BIN`: another build of the binary measured by this bench build (a before and
        // an after side by side, the bench itself unchanged).
        bin: std::env::var_os("BENCH_BIN").map_or_else(
            || PathBuf::from(env!("CARGO_BIN_EXE_a2a-recover")),
            PathBuf::from,
        ),
        agent_bin: PathBuf::from(env!("CARGO_BIN_EXE_a2a-recover")),
        tmp: std::env::temp_dir(),
    };
    describe_machine(&cfg);
    let rt = support::runtime()?;
    let mut table = Table::default();
    // Started on first use; stopped when dropped (at the end, or on an error).
    let mut pg = None;
    let started = Instant::now();
    for section in SECTIONS.into_iter().filter(|s| wanted(s)) {
        let t = Instant::now();
        println!("\n## {section}");
        let _ = std::io::stdout().flush();
        match section {
            "floors" => {
                floors::run(&cfg, &mut table)?;
            }
            "reconcile" => reconcile::run(&cfg, &rt, &mut table)?,
            "schedule" => schedule::run(&cfg, &rt, &mut table)?,
            "delegate" => {
                delegate::run(&cfg, &rt, &mut table)?;
                delegate::run_one(&cfg, &rt, &mut table)?;
            }
            "lookup" => lookup::run(&cfg, &rt, &mut table)?,
            "follow" => follow::run(&cfg, &rt, &mut table)?,
            "startup" => startup::run(&cfg, &mut table)?,
            "growth" => growth::run(&cfg, &mut table)?,
            "push" => push::run(&cfg, &rt, &mut table)?,
            "postgres" => postgres::run(&cfg, &rt, pg::PgServer::get(&mut pg)?, &mut table)?,
            "hosts" => hosts::run(&cfg, &rt, pg::PgServer::get(&mut pg)?, &mut table)?,
            _ => unreachable!("sections are checked above"),
        }
        println!("  ({section}: {:.1} s)", t.elapsed().as_secs_f64());
    }
    println!(
        "\n## table ({} mode, {:.0} s in all; load average now {})\n",
        if cfg.quick { "BENCH_QUICK" } else { "full" },
        started.elapsed().as_secs_f64(),
        loadavg()
    );
    println!("{}", table.markdown());
    Ok(())
}

/// Runs a measurement that must live in a process of its own (its peak RSS is its own).
fn child(args: &[String]) -> anyhow::Result<()> {
    let arg = |i: usize| args.get(i).map(String::as_str).context("missing argument");
    let out = match arg(0)? {
        "open-read" => startup::child_open_read(arg(1)?)?,
        "follow-many" => follow::child_follow_many(arg(1)?.parse()?, arg(2)?)?,
        "sse-many" => follow::child_sse_many(arg(1)?.parse()?, arg(2)?)?,
        "storm" => schedule::child_storm(arg(1)?.parse()?, arg(2)?)?,
        other => bail!("unknown child `{other}`"),
    };
    println!("{out}");
    Ok(())
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn command_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// Prints what the figures were measured on.
fn describe_machine(cfg: &Cfg) {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_default();
    let cpus = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    let manifest = env!("CARGO_MANIFEST_DIR");
    let commit = command_line("git", &["-C", manifest, "log", "-1", "--format=%h %s"]);
    let dirty = !command_line("git", &["-C", manifest, "status", "--porcelain", "src"]).is_empty();
    println!("# a2a-recover benchmarks");
    println!(
        "commit {commit}{}",
        if dirty {
            " (src/ has local changes)"
        } else {
            ""
        }
    );
    println!("cpu: {cpus} × {model}; load average {}", loadavg());
    println!("{}", command_line("free", &["-h"]));
    println!(
        "journals in {}:\n{}",
        cfg.tmp.display(),
        command_line("df", &["-h", &cfg.tmp.display().to_string()])
    );
    println!(
        "{}",
        command_line("lsblk", &["-d", "-o", "NAME,ROTA,SIZE,MODEL"])
    );
    println!(
        "mode: {}",
        if cfg.quick {
            "BENCH_QUICK=1 (smaller sizes, one repeat)"
        } else {
            "full (medians of repeats)"
        }
    );
}
