//! Reading a journal directly, beside the binary: its consistency, a step's attempt, artifacts
//! and events.

use std::path::Path;
use std::time::Duration;

use a2a_recover::journal::{Artifact, Attempt, Event, Journal, StepName};
use rusqlite::OpenFlags;

/// One attempt as the consistency check reads it: id, state, task id, pending question,
/// outcome, and its event chain `(from, to)` in order.
struct Row {
    id: i64,
    state: String,
    task: Option<String>,
    question: Option<String>,
    outcome: Option<String>,
    chain: Vec<(Option<String>, String)>,
}

/// The attempts' state changes, as every store keeps them.
const CHAIN_SQL: &str = "SELECT from_state, to_state FROM events \
     WHERE attempt_id = $1 AND to_state IS NOT NULL \
     AND kind NOT IN ('reply-intent', 'reply') ORDER BY id";
const ROWS_SQL: &str =
    "SELECT id, state, task_id, pending_question, outcome_json FROM attempts ORDER BY id";

/// Checks that the journal (a SQLite file, or a PostgreSQL URL as the test's `journal()`
/// gives it) opens and its rows are consistent: on SQLite, its integrity and foreign key
/// checks pass (PostgreSQL enforces foreign keys itself); every attempt's event chain is
/// unbroken and ends in the attempt's state; and each state has the data it needs (a task id
/// once sent, the question while one is pending, no task id before the send). Returns the
/// number of attempts. Reads the store directly, not through the library.
pub fn assert_consistent(journal: &Path) -> usize {
    let rows = match journal.to_str().filter(|s| s.starts_with("postgres")) {
        Some(url) => postgres_rows(url),
        None => sqlite_rows(journal),
    };
    for Row {
        id,
        state,
        task,
        question,
        outcome,
        chain,
    } in &rows
    {
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

fn sqlite_rows(journal: &Path) -> Vec<Row> {
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
    let mut rows: Vec<Row> = conn
        .prepare(ROWS_SQL)
        .unwrap()
        .query_map([], |r| {
            Ok(Row {
                id: r.get(0)?,
                state: r.get(1)?,
                task: r.get(2)?,
                question: r.get(3)?,
                outcome: r.get(4)?,
                chain: Vec::new(),
            })
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let sql = CHAIN_SQL.replace("$1", "?1");
    for row in &mut rows {
        row.chain = conn
            .prepare(&sql)
            .unwrap()
            .query_map([row.id], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
    }
    rows
}

/// Reads the rows with tokio-postgres on a thread of its own (the caller may be inside a tokio
/// runtime), in the URL's `schema` (default `a2a_recover`).
fn postgres_rows(journal_url: &str) -> Vec<Row> {
    let mut url = url::Url::parse(journal_url).expect("a PostgreSQL URL");
    let schema = url
        .query_pairs()
        .find(|(k, _)| k == "schema")
        .map_or_else(|| "a2a_recover".to_owned(), |(_, v)| v.into_owned());
    let rest: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| k != "schema")
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    url.set_query(None);
    if !rest.is_empty() {
        url.query_pairs_mut().extend_pairs(rest);
    }
    let url = url.to_string();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .unwrap_or_else(|e| panic!("connect to the test journal: {e}"));
            tokio::spawn(conn);
            client
                .batch_execute(&format!("SET search_path TO \"{schema}\""))
                .await
                .unwrap();
            let mut rows = Vec::new();
            for r in client.query(ROWS_SQL, &[]).await.unwrap() {
                rows.push(Row {
                    id: r.get(0),
                    state: r.get(1),
                    task: r.get(2),
                    question: r.get(3),
                    outcome: r.get(4),
                    chain: Vec::new(),
                });
            }
            for row in &mut rows {
                row.chain = client
                    .query(CHAIN_SQL, &[&row.id])
                    .await
                    .unwrap()
                    .iter()
                    .map(|r| (r.get(0), r.get(1)))
                    .collect();
            }
            rows
        })
    })
    .join()
    .expect("the PostgreSQL read")
}

/// Returns the artifacts of a step's latest attempt, read through the library.
pub fn artifacts_of(journal: &Path, step: &str) -> Vec<Artifact> {
    let location = a2a_recover::journal::Location::parse(journal).expect("a location");
    let journal =
        Journal::open_read_only_at(&location, Duration::from_secs(10)).expect("open the journal");
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

/// Returns a step's latest attempt and its artifacts' texts ([`Artifact::text`]), read through
/// the library.
pub fn journaled(journal: &Path, step: &str) -> (Attempt, Vec<String>) {
    let j = Journal::open_read_only(journal, Duration::from_secs(10)).unwrap();
    let record = j.step(&StepName::parse(step).unwrap()).unwrap().unwrap();
    let attempt = record.latest().unwrap().clone();
    let texts = j
        .artifacts(attempt.id)
        .unwrap()
        .iter()
        .map(Artifact::text)
        .collect();
    (attempt, texts)
}

/// Returns a step's events, oldest first, read through the library.
pub fn events_of(journal: &Path, step: &str) -> Vec<Event> {
    let j = Journal::open_read_only(journal, Duration::from_secs(10)).unwrap();
    j.events_of_step(&StepName::parse(step).unwrap()).unwrap()
}
