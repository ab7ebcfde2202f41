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
//!   --twice                                       runs each seed twice, comparing the runs' logs
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
    let (mut keep_going, mut twice, mut overlap) = (false, false, true);
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
            "--twice" => twice = true,
            "--case" => {
                let path = value();
                let Some(case) = load_case(&path) else {
                    return ExitCode::from(2);
                };
                from = case.seed;
                sim::overlap::enable(case.overlap);
                overlap = case.overlap;
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
                    "usage: a2a-sim [--seeds N] [--from S | --seed S | --case FILE] [--plant NAME] [--keep-going] [--except S,T] [--save-case PATH] [--no-shrink] [--twice]"
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
    let mut tally = Tally::default();
    let seeds: Vec<u64> = (from..from + count)
        .filter(|s| !except.contains(s))
        .collect();
    for &seed in &seeds {
        let mut outcome = run(seed, plant, given.as_deref(), load.as_ref(), twice);
        if let Some(failure) = tally.add(&mut outcome) {
            let found = Failed {
                seed,
                plant: (plant, plant_name),
                failure: &failure,
                schedule: std::mem::take(&mut outcome.schedule),
                workload: outcome.workload.take(),
                overlap,
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
        "a2a-sim: {} seed(s) from {from}, {failed} failed, in {secs:.1} s ({:.1} seeds/s), {}",
        seeds.len(),
        seeds.len() as f64 / secs.max(1e-9),
        tally.figures()
    );
    if failed > 0 {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// What the seeds run did, summed.
#[derive(Default)]
struct Tally {
    processes: u32,
    points: BTreeSet<String>,
    faults: BTreeMap<&'static str, u32>,
    groups: u32,
    overlaps: BTreeMap<String, u32>,
    overlapped_seeds: u32,
    decided: BTreeMap<String, u32>,
}

impl Tally {
    /// Adds a run's figures; takes its failure.
    fn add(&mut self, outcome: &mut sim::Outcome) -> Option<String> {
        self.processes += outcome.processes;
        self.groups += outcome.groups;
        if !outcome.overlaps.is_empty() {
            self.overlapped_seeds += 1;
        }
        for (kinds, n) in std::mem::take(&mut outcome.overlaps) {
            *self.overlaps.entry(kinds).or_insert(0) += n;
        }
        self.points
            .extend(std::mem::take(&mut outcome.crash_points));
        for (f, n) in &outcome.faults {
            *self.faults.entry(f).or_insert(0) += n;
        }
        for (d, n) in std::mem::take(&mut outcome.decided) {
            *self.decided.entry(d).or_insert(0) += n;
        }
        outcome.failure.take()
    }

    /// The figures, as the summary line gives them.
    fn figures(&self) -> String {
        let overlapped: u32 = self.overlaps.values().sum();
        format!(
            "{} processes, {} distinct kill points, faults {:?}, decisions journaled {:?}, {} groups of processes at once, {overlapped} overlapped (in {} seeds): {:?}",
            self.processes,
            self.points.len(),
            self.faults,
            self.decided,
            self.groups,
            self.overlapped_seeds,
            self.overlaps
        )
    }
}

/// A case's fault that did not happen in its replay, as a drift: the case no longer reaches the
/// path it was kept for (its workload, or what its processes do, changed).
fn unmet(given: &[Entry], happened: &[Entry]) -> Option<String> {
    let missed = given.iter().find(|e| {
        !happened
            .iter()
            .any(|h| h.process == e.process && h.exchange == e.exchange && h.fault == e.fault)
    })?;
    Some(format!(
        "case drifted: its fault {missed} did not happen (its processes no longer reach it: find the case again, docs/reliability.md)"
    ))
}

/// Where two runs of one seed differ, if they do: the first line of their logs (or failure,
/// or schedule) that is not the same.
fn differs(a: &sim::Outcome, b: &sim::Outcome) -> Option<String> {
    if let Some(i) = (0..a.log.len().max(b.log.len())).find(|&i| a.log.get(i) != b.log.get(i)) {
        let line = |o: &sim::Outcome| o.log.get(i).cloned().unwrap_or_default();
        return Some(format!(
            "log line {}: `{}` then `{}`",
            i + 1,
            line(a).trim(),
            line(b).trim()
        ));
    }
    if a.failure != b.failure {
        return Some(format!("its failure: {:?} then {:?}", a.failure, b.failure));
    }
    (a.schedule != b.schedule).then(|| "its schedule".to_owned())
}

/// Runs `seed` (with `plant`, the faults of `given` only, when given, and the workload `load`,
/// when given); `twice` runs it again and fails it if the two runs differ. A case's fault that
/// did not happen fails it too.
fn run(
    seed: u64,
    plant: Option<Plant>,
    given: Option<&[Entry]>,
    load: Option<&Workload>,
    twice: bool,
) -> sim::Outcome {
    let replay = || sim::run_with(seed, plant, given.map(<[Entry]>::to_vec), load.cloned());
    let mut outcome = replay();
    if twice && let Some(diff) = differs(&outcome, &replay()) {
        outcome.failure = Some(format!(
            "not deterministic: a second run of the seed differs at {diff}"
        ));
    }
    if let Some(missed) = given.and_then(|g| unmet(g, &outcome.schedule)) {
        outcome.failure.get_or_insert(missed);
    }
    outcome
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
    /// The workload it ran.
    workload: Option<Workload>,
    /// Whether the run drew companions.
    overlap: bool,
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
            overlap: self.overlap,
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
