//! The [`Gatherer`]: records handed over while a commit is made all go into the next one.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::*;

/// What the probes' commits saw, and the gate the first one waits at.
#[derive(Default)]
struct Seen {
    /// The size of each commit, in order.
    sizes: Mutex<Vec<usize>>,
    /// Whether the first commit has started, and whether it may go on.
    gate: Mutex<(bool, bool)>,
    moved: Condvar,
}

/// The record whose commit panics.
const PANICS: usize = 99;

/// A record whose commit tells `seen` its batch's size; record 0's waits at the gate, record
/// [`PANICS`]'s panics.
struct Probe {
    n: usize,
    seen: Arc<Seen>,
}

impl Records for Probe {
    type Done = usize;
    const ACTION: &'static str = "probe";

    fn commit(_: &Journal, records: &[Self]) -> Result<Vec<Done<Self>>, JournalError> {
        let seen = &records[0].seen;
        assert_ne!(records[0].n, PANICS, "a planted panic");
        if records[0].n == 0 {
            let mut gate = seen.gate.lock().unwrap();
            gate.0 = true;
            seen.moved.notify_all();
            while !gate.1 {
                gate = seen.moved.wait(gate).unwrap();
            }
        }
        seen.sizes.lock().unwrap().push(records.len());
        Ok(records.iter().map(|r| Ok(r.n * 10)).collect())
    }
}

#[tokio::test]
async fn records_handed_over_during_a_commit_share_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(&dir.path().join("j.sqlite3"), Duration::from_secs(10)).unwrap();
    let gatherer = Arc::new(Gatherer::<Probe>::start(&journal, 64).unwrap());
    let seen = Arc::new(Seen::default());
    let handed = |n: usize| {
        let (gatherer, seen) = (Arc::clone(&gatherer), Arc::clone(&seen));
        tokio::spawn(async move { gatherer.commit(Probe { n, seen }).await.unwrap() })
    };
    let first = handed(0);
    while !seen.gate.lock().unwrap().0 {
        tokio::task::yield_now().await;
    }
    // While the first commit waits, ten more are handed over.
    let rest: Vec<_> = (1..=10).map(handed).collect();
    while gatherer.records.as_ref().unwrap().capacity() > 64 - 10 {
        tokio::task::yield_now().await;
    }
    // Nobody hears of a commit before it is made.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert!(!first.is_finished());
    seen.gate.lock().unwrap().1 = true;
    seen.moved.notify_all();
    assert_eq!(first.await.unwrap(), 0);
    for (n, done) in (1..=10).zip(rest) {
        assert_eq!(done.await.unwrap(), n * 10);
    }
    assert_eq!(*seen.sizes.lock().unwrap(), [1, 10]);
    // Dropping it ends the thread once the records handed over are committed.
    let gatherer = Arc::into_inner(gatherer).unwrap();
    drop(gatherer);
}

/// A gatherer on a fresh journal, with what its probes see.
fn started(dir: &tempfile::TempDir) -> (Arc<Gatherer<Probe>>, Arc<Seen>) {
    let journal = Journal::open(&dir.path().join("j.sqlite3"), Duration::from_secs(10)).unwrap();
    let gatherer = Gatherer::<Probe>::start(&journal, 64).unwrap();
    (Arc::new(gatherer), Arc::new(Seen::default()))
}

#[tokio::test]
async fn dropping_it_commits_the_records_of_callers_gone() {
    let dir = tempfile::tempdir().unwrap();
    let (gatherer, seen) = started(&dir);
    let handed = |n: usize| {
        let (gatherer, seen) = (Arc::clone(&gatherer), Arc::clone(&seen));
        tokio::spawn(async move { gatherer.commit(Probe { n, seen }).await })
    };
    let first = handed(0);
    while !seen.gate.lock().unwrap().0 {
        tokio::task::yield_now().await;
    }
    let queued = handed(1);
    while gatherer.records.as_ref().unwrap().capacity() > 64 - 1 {
        tokio::task::yield_now().await;
    }
    // Both callers go away (a signal); their records were handed over.
    for caller in [first, queued] {
        caller.abort();
        assert!(caller.await.unwrap_err().is_cancelled());
    }
    seen.gate.lock().unwrap().1 = true;
    seen.moved.notify_all();
    drop(Arc::into_inner(gatherer).expect("the callers' clones are gone"));
    assert_eq!(*seen.sizes.lock().unwrap(), [1, 1]);
}

#[tokio::test]
async fn a_commit_that_panics_fails_its_callers_only() {
    let dir = tempfile::tempdir().unwrap();
    let (gatherer, seen) = started(&dir);
    let planted = Probe {
        n: PANICS,
        seen: Arc::clone(&seen),
    };
    let failed = gatherer.commit(planted).await;
    assert!(
        matches!(failed, Err(JournalError::Storage { .. })),
        "{failed:?}"
    );
    seen.gate.lock().unwrap().1 = true;
    assert_eq!(gatherer.commit(Probe { n: 4, seen }).await.unwrap(), 40);
}
