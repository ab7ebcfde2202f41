//! The deterministic simulator's runner (`scripts/sim`, docs/reliability.md); built only with
//! `--features sim`.
//!
//!   a2a-sim --seeds N [--from S] [--plant NAME]   runs seeds S..S+N
//!   a2a-sim --seed N [--plant NAME]               replays one run
//!   --keep-going                                  goes on past a failed seed
//!   --except S,T,...                              skips these seeds
//!   --case FILE                                   replays a kept case (tests/sim-cases/)
//!
//! Its report goes to stderr (the simulated commands print to stdout); exit 1 on a failure.

#![expect(clippy::print_stderr, reason = "the runner's report")]

use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;

use a2a_recover::sim;
use a2a_recover::sim_seam::Plant;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (mut from, mut count, mut plant, mut plant_name) = (0_u64, 1_u64, None, None);
    let mut keep_going = false;
    let mut except: Vec<u64> = Vec::new();
    let mut failed = 0_u64;
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        match a.as_str() {
            "--seed" | "--from" => from = value().parse().unwrap_or(0),
            "--keep-going" => keep_going = true,
            "--case" => {
                let path = value();
                let case = std::fs::read_to_string(&path)
                    .ok()
                    .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
                let Some(seed) = case.as_ref().and_then(|c| c["seed"].as_u64()) else {
                    eprintln!("a2a-sim: `{path}` is not a case (a JSON object with a `seed`)");
                    return ExitCode::from(2);
                };
                from = seed;
                if let Some(name) = case.as_ref().and_then(|c| c["plant"].as_str()) {
                    let Some((n, p)) = Plant::ALL.iter().find(|(n, _)| *n == name) else {
                        eprintln!("a2a-sim: `{path}` names no known plant");
                        return ExitCode::from(2);
                    };
                    plant = Some(*p);
                    plant_name = Some(*n);
                }
            }
            "--except" => except = value().split(',').filter_map(|v| v.parse().ok()).collect(),
            "--seeds" => count = value().parse().unwrap_or(1),
            "--plant" => {
                let name = value();
                let Some((n, p)) = Plant::ALL.iter().find(|(n, _)| *n == name) else {
                    let names: Vec<&str> = Plant::ALL.iter().map(|(n, _)| *n).collect();
                    eprintln!("a2a-sim: no plant `{name}`; plants: {}", names.join(", "));
                    return ExitCode::from(2);
                };
                plant = Some(*p);
                plant_name = Some(*n);
            }
            _ => {
                eprintln!(
                    "usage: a2a-sim [--seeds N] [--from S | --seed S | --case FILE] [--plant NAME] [--keep-going] [--except S,T]"
                );
                return ExitCode::from(2);
            }
        }
    }
    if let Ok(filter) = std::env::var("A2A_SIM_LOG") {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_writer(std::io::stderr)
            .without_time()
            .try_init();
    }
    let started = std::time::Instant::now();
    let (mut processes, mut points, mut faults) = (0, BTreeSet::new(), BTreeMap::new());
    for seed in (from..from + count).filter(|s| !except.contains(s)) {
        let outcome = sim::run_seed(seed, plant);
        processes += outcome.processes;
        points.extend(outcome.crash_points);
        for (f, n) in outcome.faults {
            *faults.entry(f).or_insert(0) += n;
        }
        if let Some(failure) = outcome.failure {
            let plant = plant_name
                .map(|p| format!(" --plant {p}"))
                .unwrap_or_default();
            eprintln!(
                "a2a-sim: seed {seed} failed after {} seed(s): {failure}; replay: scripts/sim --seed {seed}{plant}",
                seed - from + 1
            );
            failed += 1;
            if !keep_going {
                return ExitCode::FAILURE;
            }
        }
    }
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "a2a-sim: {count} seed(s) from {from}, {failed} failed, in {secs:.1} s ({:.1} seeds/s), {processes} processes, {} distinct kill points, faults {faults:?}",
        count as f64 / secs.max(1e-9),
        points.len()
    );
    if failed > 0 {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
