//! Passes at once: while faults are on, a process of the workload may get companions, other
//! processes (separate owners) started beside it, drawn from a generator of their own: a
//! `reconcile`, a `compensate` of the saga, or a `follow` of a step already journaled, sometimes
//! two of them, each starting at once or a few virtual seconds later and killed at a seeded
//! exchange like any other. Overlap is where leases and pass locks matter: two reconciles, a
//! reconcile beside a `delegate`, a `reply`, a `follow` or a `compensate` of the same workflow.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rand::RngExt as _;

use super::together::Spec;
use super::workload::SAGA;
use super::{Exit, Sim, invariants, settled};

/// Per mille of the processes run under faults that get companions.
const RATE: u32 = 300;

/// Whether runs draw companions (on, but for a kept case from before companions existed).
static ENABLED: AtomicBool = AtomicBool::new(true);

/// Makes the runs that follow draw companions, or not: a kept case replays the workload it was
/// found with (`Case::overlap`).
pub fn enable(on: bool) {
    ENABLED.store(on, Ordering::SeqCst);
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| (*s).to_owned()).collect()
}

impl Sim {
    /// The companions drawn for a process of `args` (none once faults are off).
    pub(super) fn companions(&mut self, args: &[String]) -> Vec<Spec> {
        if !ENABLED.load(Ordering::SeqCst)
            || !self.world.faults_on()
            || self.overlap.random_range(0..1000) >= RATE
        {
            return Vec::new();
        }
        let count = if self.overlap.random_bool(0.2) { 2 } else { 1 };
        let main = args.first().map_or("", String::as_str);
        let rows = invariants::rows(self).unwrap_or_default();
        // A `compensate` of the saga only once its compensation began: an earlier one would
        // undo it while the workload still delegates its steps (refused, exit 2).
        let compensating = main == "compensate"
            || rows
                .iter()
                .any(|r| r.step.starts_with(&format!("{SAGA}/")) && r.step.contains('~'));
        let steps: Vec<String> = rows
            .into_iter()
            .map(|r| r.step)
            .filter(|s| !s.contains('~'))
            .collect();
        let mut out = Vec::new();
        for _ in 0..count {
            let roll = self.overlap.random_range(0..10);
            let args = match (main, roll) {
                (_, 0..=4) | ("reply" | "follow", _) => words(&["reconcile"]),
                (_, 5..=6) if compensating => words(&["compensate", SAGA]),
                (_, 5..=6) => words(&["reconcile"]),
                _ => match steps.get(self.overlap.random_range(0..steps.len().max(1))) {
                    Some(step) => words(&["follow", step, "--until", "10m"]),
                    None => words(&["reconcile"]),
                },
            };
            let delay = if self.overlap.random_bool(0.5) {
                Duration::ZERO
            } else {
                Duration::from_millis(self.overlap.random_range(1..=3000))
            };
            let crash_at = self.world.faults.crash();
            out.push(Spec {
                args,
                crash_at,
                delay,
                companion: true,
            });
        }
        out
    }

    /// Checks the exit of a companion of `args` against the journal (invariant 8), as the
    /// workload checks its own processes: called as it ends, when nothing ran beside it.
    pub(super) fn check_companion(&mut self, args: &[String], exit: Exit) {
        let result = match args.first().map(String::as_str) {
            Some("reconcile") => settled::reconcile_exit(self, exit),
            Some("compensate") => settled::compensate_exit(self, exit),
            Some("follow") => args
                .get(1)
                .map_or(Ok(()), |step| settled::follow_exit(self, step, exit)),
            _ => Ok(()),
        };
        if let Err(e) = result
            && self.failure.is_none()
        {
            self.failure = Some(e);
        }
    }
}
