//! The deterministic simulator's runner (`scripts/sim`, docs/reliability.md); built only with
//! `--features sim`.
//!
//!   a2a-sim --seeds N [--from S] [--plant NAME]   runs seeds S..S+N
//!   a2a-sim --seed N [--plant NAME]               replays one run
//!   --keep-going                                  goes on past a failed seed
//!   --except S,T,...                              skips these seeds
//!   --case FILE                                   replays a kept case's schedule (tests/sim-cases/)
//!   --save-case PATH                              writes a failing run's shrunk schedule as a case
//!   --no-shrink                                   reports a failure without shrinking it
//!
//! A failing run's schedule is shrunk, and written as a case under `target/a2a-sim/`. Its report
//! goes to stderr (the simulated commands print to stdout); exit 1 on a failure.

#![expect(clippy::print_stderr, reason = "the runner's report")]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use a2a_recover::sim;
use a2a_recover::sim::schedule::{self, Case, Entry};
use a2a_recover::sim::shrink;
use a2a_recover::sim::workload::Workload;
use a2a_recover::sim_seam::Plant;

/// The longest shrunk schedule shown whole on the failure's line (else its file is named).
const SHOWN: usize = 8;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (mut from, mut count, mut plant, mut plant_name) = (0_u64, 1_u64, None, None);
    let mut keep_going = false;
    let (mut given, mut case_path, mut save_case, mut no_shrink) =
        (None::<Vec<Entry>>, None::<String>, None::<PathBuf>, false);
    let mut load = None::<Workload>;
    let mut except: Vec<u64> = Vec::new();
    let mut failed = 0_u64;
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        match a.as_str() {
            "--seed" | "--from" => from = value().parse().unwrap_or(0),
            "--keep-going" => keep_going = true,
            "--save-case" => save_case = Some(PathBuf::from(value())),
            "--no-shrink" => no_shrink = true,
            "--case" => {
                let path = value();
                let Some(case) = load_case(&path) else {
                    return ExitCode::from(2);
                };
                from = case.seed;
                given = Some(case.schedule);
                load = case.workload;
                case_path = Some(path.clone());
                if let Some(name) = case.plant.as_deref() {
                    let Some((n, p)) = plant_named(name) else {
                        eprintln!("a2a-sim: `{path}` names no known plant");
                        return ExitCode::from(2);
                    };
                    (plant, plant_name) = (Some(p), Some(n));
                }
            }
            "--except" => except = value().split(',').filter_map(|v| v.parse().ok()).collect(),
            "--seeds" => count = value().parse().unwrap_or(1),
            "--plant" => {
                let name = value();
                let Some((n, p)) = plant_named(&name) else {
                    let names: Vec<&str> = Plant::ALL.iter().map(|(n, _)| *n).collect();
                    eprintln!("a2a-sim: no plant `{name}`; plants: {}", names.join(", "));
                    return ExitCode::from(2);
                };
                (plant, plant_name) = (Some(p), Some(n));
            }
            _ => {
                eprintln!(
                    "usage: a2a-sim [--seeds N] [--from S | --seed S | --case FILE] [--plant NAME] [--keep-going] [--except S,T] [--save-case PATH] [--no-shrink]"
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
    let mut totals = Totals::default();
    let seeds: Vec<u64> = (from..from + count)
        .filter(|s| !except.contains(s))
        .collect();
    for &seed in &seeds {
        let outcome = sim::run_with(seed, plant, given.clone(), load.clone());
        totals.add(&outcome);
        if let Some(failure) = outcome.failure {
            let found = Failed {
                seed,
                plant: (plant, plant_name),
                failure: &failure,
                schedule: outcome.schedule,
                workload: outcome.workload,
            };
            let replay = found.report(case_path.as_deref(), no_shrink, save_case.as_deref());
            eprintln!(
                "a2a-sim: seed {seed} failed after {} seed(s): {failure}; {replay}",
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
        "a2a-sim: {} seed(s) from {from}, {failed} failed, in {secs:.1} s ({:.1} seeds/s), {}, faults {:?}, decisions journaled {:?}",
        seeds.len(),
        seeds.len() as f64 / secs.max(1e-9),
        totals.processes_and_points(),
        totals.faults,
        totals.decided,
    );
    if failed > 0 {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// What the seeds run did, together.
#[derive(Default)]
struct Totals {
    processes: u32,
    points: BTreeSet<String>,
    faults: BTreeMap<&'static str, u32>,
    decided: BTreeMap<String, u32>,
}

impl Totals {
    fn add(&mut self, outcome: &sim::Outcome) {
        self.processes += outcome.processes;
        self.points.extend(outcome.crash_points.iter().cloned());
        for (f, n) in &outcome.faults {
            *self.faults.entry(f).or_insert(0) += n;
        }
        for (d, n) in &outcome.decided {
            *self.decided.entry(d.clone()).or_insert(0) += n;
        }
    }

    fn processes_and_points(&self) -> String {
        format!(
            "{} processes, {} distinct kill points",
            self.processes,
            self.points.len()
        )
    }
}

/// The plant of this `--plant` name.
fn plant_named(name: &str) -> Option<(&'static str, Plant)> {
    Plant::ALL.iter().find(|(n, _)| *n == name).copied()
}

/// Reads the case at `path` (a kept failing run: `tests/sim-cases/`), or says why not.
fn load_case(path: &str) -> Option<Case> {
    let case = std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str::<Case>(&t).map_err(|e| e.to_string()));
    case.map_err(|e| {
        eprintln!(
            "a2a-sim: `{path}` is not a case (a JSON object with a `seed` and a `schedule`): {e}"
        );
    })
    .ok()
}

/// A failed run.
struct Failed<'a> {
    seed: u64,
    plant: (Option<Plant>, Option<&'static str>),
    failure: &'a str,
    schedule: Vec<Entry>,
    workload: Option<Workload>,
}

impl Failed<'_> {
    /// Shrinks the run's schedule (unless `no_shrink`), writes it as a case under `target/a2a-sim/`
    /// (and to `save`), and says so in the rest of the failure's line, after how to replay the
    /// run (its seed, or the `case` it replayed).
    fn report(self, case: Option<&str>, no_shrink: bool, save: Option<&Path>) -> String {
        let replay = case.map_or_else(
            || {
                let plant = self.plant.1.map(|p| format!(" --plant {p}"));
                format!(
                    "scripts/sim --seed {}{}",
                    self.seed,
                    plant.unwrap_or_default()
                )
            },
            |path| format!("scripts/sim --case {path}"),
        );
        let from = self.schedule.len();
        let (schedule, failure, how) = if no_shrink {
            (self.schedule, self.failure.to_owned(), String::new())
        } else {
            let s = shrink::shrink(
                self.seed,
                self.plant.0,
                self.workload.as_ref(),
                self.schedule,
                self.failure,
            );
            let how = if s.replayed {
                format!(
                    "; shrunk {from} -> {} faults in {} runs",
                    s.schedule.len(),
                    s.runs
                )
            } else {
                format!(
                    "; NOT DETERMINISTIC: its schedule of {from} faults replayed did not fail so"
                )
            };
            (s.schedule, s.failure, how)
        };
        let case = Case {
            seed: self.seed,
            plant: self.plant.1.map(str::to_owned),
            invariant: shrink::invariant(&failure),
            found: failure,
            fix: String::new(),
            story: Vec::new(),
            workload: self.workload,
            schedule,
        };
        let target =
            std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| "target".into(), PathBuf::from);
        let name = match self.plant.1 {
            Some(p) => format!("seed-{}-{p}.json", self.seed),
            None => format!("seed-{}.json", self.seed),
        };
        let kept = target.join("a2a-sim").join(name);
        let mut wrote = Vec::new();
        // Unshrunk, the run's schedule is the one it replays (nothing new to keep) unless saved.
        let keep = (!no_shrink).then_some(kept.as_path());
        for path in keep.into_iter().chain(save) {
            let written = path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(path, case.to_json()));
            match written {
                Ok(()) => wrote.push(path.display().to_string()),
                Err(e) => eprintln!("a2a-sim: failed to write {}: {e}", path.display()),
            }
        }
        let shown = if case.schedule.len() <= SHOWN {
            format!(": [{}]", schedule::brief(&case.schedule))
        } else {
            String::new()
        };
        let file = wrote
            .first()
            .map(|p| format!("; its case: scripts/sim --case {p}"))
            .unwrap_or_default();
        format!("replay: {replay}{how}{shown}{file}")
    }
}
