//! Shrinking a failing run's schedule: the fewest faults that still break the same invariant.
//!
//! Delta debugging by removal: the schedule is cut in halves, then quarters, and so on down to
//! single faults; whenever the run without a part still fails with the same invariant, that
//! smaller schedule (as the run kept it: faults that found nothing to hit drop out) is the new
//! one. It ends when no single fault can go, or after a bounded number of reruns. Each rerun runs
//! the failing run's workload, so it differs from the failing run only in its faults.

use crate::sim_seam::Plant;

use super::schedule::Entry;
use super::workload::Workload;

/// The most reruns one shrink may take.
pub const BUDGET: u32 = 60;

/// What shrinking found.
#[derive(Debug, Clone)]
pub struct Shrunk {
    /// The smallest failing schedule found.
    pub schedule: Vec<Entry>,
    /// Its run's failure.
    pub failure: String,
    /// The faults the failing run started with.
    pub from: usize,
    /// The reruns it took.
    pub runs: u32,
    /// Whether the failing run's own schedule, replayed, failed the same way (a run that does
    /// not is not deterministic, and is not shrunk).
    pub replayed: bool,
}

/// The invariant a failure names, without the run's particulars (steps, ids, counts): what a
/// shrunk run must still break.
pub fn invariant(failure: &str) -> String {
    let (head, tail) = failure.split_once(':').unwrap_or((failure, ""));
    // "w0/s1 attempt 3: task … unknown to its agent" names its invariant after the colon.
    let text = if head.contains(" attempt ") {
        tail
    } else {
        head
    };
    let words: Vec<&str> = text
        .split_whitespace()
        .filter(|w| w.chars().all(|c| c.is_ascii_alphabetic() || c == '\''))
        .collect();
    words.join(" ")
}

/// Shrinks `schedule`, whose run of `seed` (with `plant`, on `load`) failed with `failure`.
pub fn shrink(
    seed: u64,
    plant: Option<Plant>,
    load: Option<&Workload>,
    schedule: Vec<Entry>,
    failure: &str,
) -> Shrunk {
    let want = invariant(failure);
    let mut runs = 0;
    let mut last = failure.to_owned();
    let mut fails = |candidate: &[Entry]| -> Option<Vec<Entry>> {
        runs += 1;
        let outcome = super::run_with(seed, plant, Some(candidate.to_vec()), load.cloned());
        let failure = outcome.failure.filter(|f| invariant(f) == want)?;
        last = failure;
        Some(outcome.schedule)
    };
    let from = schedule.len();
    let replayed = fails(&schedule).is_some();
    let smallest = if replayed {
        minimize(schedule, BUDGET - 1, &mut fails)
    } else {
        schedule
    };
    Shrunk {
        schedule: smallest,
        failure: last,
        from,
        runs,
        replayed,
    }
}

/// Delta debugging by removal over `items`, which `fails` (at most `budget` calls). `fails`
/// answers the failing list as the run saw it (never longer than the one it was given), or
/// `None` when the list no longer fails.
pub fn minimize<T: Clone>(
    items: Vec<T>,
    budget: u32,
    fails: &mut impl FnMut(&[T]) -> Option<Vec<T>>,
) -> Vec<T> {
    let mut current = items;
    let mut parts = 2_usize;
    let mut calls = 0;
    while !current.is_empty() && calls < budget {
        let len = current.len();
        let chunk = len.div_ceil(parts.min(len));
        let mut cut = false;
        for start in (0..len).step_by(chunk) {
            if calls >= budget {
                break;
            }
            let mut candidate = current.clone();
            candidate.drain(start..(start + chunk).min(len));
            calls += 1;
            if let Some(seen) = fails(&candidate) {
                current = if seen.len() <= candidate.len() {
                    seen
                } else {
                    candidate
                };
                parts = parts.saturating_sub(1).max(2);
                cut = true;
                break;
            }
        }
        if !cut {
            if chunk == 1 {
                break;
            }
            parts = (parts * 2).min(len);
        }
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimize_finds_the_two_items_that_fail_together() {
        let mut calls = 0;
        let mut fails = |c: &[u32]| {
            calls += 1;
            (c.contains(&3) && c.contains(&11)).then(|| c.to_vec())
        };
        let smallest = minimize((0..16).collect(), 100, &mut fails);
        assert_eq!(smallest, vec![3, 11]);
        assert!(calls < 40, "{calls} calls");
    }

    #[test]
    fn minimize_stops_at_its_budget() {
        let mut calls = 0;
        let mut fails = |c: &[u32]| {
            calls += 1;
            c.contains(&5).then(|| c.to_vec())
        };
        let smallest = minimize((0..64).collect(), 3, &mut fails);
        assert_eq!(calls, 3);
        assert!(smallest.contains(&5) && smallest.len() < 64);
    }

    #[test]
    fn invariant_drops_the_particulars() {
        assert_eq!(
            invariant("one task per messageId: 1f2e created 2 tasks on agent 0"),
            "one task per messageId"
        );
        assert_eq!(
            invariant("w0/s1 attempt 3: task 9ab4 unknown to its agent"),
            "task unknown to its agent"
        );
        assert_eq!(
            invariant("exit code vs journal: reconcile exited 3, the journal says 0"),
            "exit code vs journal"
        );
    }
}
