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

/// A record whose commit tells `seen` its batch's size; record 0's waits at the gate.
struct Probe {
    n: usize,
    seen: Arc<Seen>,
}

impl Records for Probe {
    type Done = usize;
    const ACTION: &'static str = "probe";

    fn commit(_: &Journal, records: &[Self]) -> Result<Vec<Done<Self>>, JournalError> {
        let seen = &records[0].seen;
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
