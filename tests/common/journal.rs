//! Reading a journal directly, beside the binary: its consistency and a step's artifacts.

use std::path::Path;
use std::time::Duration;

use a2a_recover::journal::{Artifact, Journal, StepName};
use rusqlite::OpenFlags;

/// Checks that the journal opens and its rows are consistent: SQLite's integrity and foreign
/// key checks pass; every attempt's event chain is unbroken and ends in the attempt's state;
/// and each state has the data it needs (a task id once sent, the question while one is
/// pending, no task id before the send). Returns the number of attempts.
pub fn assert_consistent(journal: &Path) -> usize {
    // Read-write, though it only reads: a read-only connection leaves an empty `-wal` behind.
    let conn = rusqlite::Connection::open_with_flags(journal, OpenFlags::SQLITE_OPEN_READ_WRITE)
        .unwrap_or_else(|e| panic!("open {}: {e}", journal.display()));
    conn.busy_timeout(Duration::from_secs(10)).unwrap();
    let integrity: Vec<String> = conn
        .prepare("PRAGMA integrity_check")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(integrity, ["ok"], "integrity_check");
    let fk: i64 = conn
        .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(fk, 0, "foreign_key_check");
    type Row = (i64, String, Option<String>, Option<String>, Option<String>);
    let rows: Vec<Row> = conn
        .prepare("SELECT id, state, task_id, pending_question, outcome_json FROM attempts")
        .unwrap()
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (id, state, task, question, outcome) in &rows {
        let chain: Vec<(Option<String>, String)> = conn
            .prepare(
                "SELECT from_state, to_state FROM events \
                 WHERE attempt_id = ?1 AND to_state IS NOT NULL \
                 AND kind NOT IN ('reply-intent', 'reply') ORDER BY id",
            )
            .unwrap()
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(!chain.is_empty(), "attempt {id} has no events");
        assert_eq!(chain[0].0, None, "attempt {id} starts mid-chain: {chain:?}");
        for w in chain.windows(2) {
            assert_eq!(
                w[1].0.as_deref(),
                Some(w[0].1.as_str()),
                "attempt {id}: broken event chain {chain:?}"
            );
        }
        assert_eq!(
            &chain.last().unwrap().1,
            state,
            "attempt {id}: its events end elsewhere than its row"
        );
        match state.as_str() {
            "INTENT" | "UNCERTAIN" | "REFUSED" => {
                assert!(task.is_none(), "attempt {id} is {state} with a task id");
            }
            "REPLIED" => {
                assert!(task.is_none() && outcome.is_some(), "attempt {id} REPLIED");
            }
            _ => assert!(task.is_some(), "attempt {id} is {state} without a task id"),
        }
        if matches!(state.as_str(), "INPUT_REQUIRED" | "AUTH_REQUIRED") {
            assert!(question.is_some(), "attempt {id} lost its pending question");
        }
    }
    rows.len()
}

/// Returns the artifacts of a step's latest attempt, read through the library.
pub fn artifacts_of(journal: &Path, step: &str) -> Vec<Artifact> {
    let journal =
        Journal::open_read_only(journal, Duration::from_secs(10)).expect("open the journal");
    let name = StepName::parse(step).unwrap();
    let record = journal.step(&name).unwrap().expect("the step");
    journal
        .artifacts(record.latest().expect("an attempt").id)
        .unwrap()
}

/// Returns the text of each artifact of a step's latest attempt, as stored.
pub fn artifact_texts_of(journal: &Path, step: &str) -> Vec<String> {
    artifacts_of(journal, step)
        .iter()
        .map(|a| a2a_recover::a2a::parts_text(&a.parts))
        .collect()
}
