//! Unit tests of the journal, each run on both stores: a SQLite file in a temporary directory
//! and a fresh schema on the PostgreSQL test server ([`Fresh`]). Tests of SQLite's own machinery
//! (file modes, WAL bytes, pragmas, plans) run on SQLite only and say so in their names.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use rstest::rstest;
use rusqlite::{Connection, TransactionBehavior};

use super::*;
use crate::clock::FixedClock;
use crate::model::ArtifactView;

#[path = "../../../tests/common/postgres.rs"]
#[allow(dead_code, unreachable_pub)]
pub(in crate::journal) mod pg;

#[path = "../../../tests/common/journal_dump.rs"]
#[allow(unreachable_pub)]
mod journal_dump;

mod copy;
mod credentials;
mod group_commit;
mod group_observe;
mod group_pushes;
mod group_sends;
mod inspect;
mod leases;
mod observe;
mod open;
mod prune;
mod reads;
mod replies;
mod statements;

const T: Duration = Duration::from_secs(10);

fn tmp_journal() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state/journal.sqlite3");
    (dir, path)
}

/// The store a test runs on (`#[values(Kind::Sqlite, Kind::Postgres)] kind: Kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Sqlite,
    Postgres,
}

/// A fresh journal's place: a file in a temporary directory of its own, or a fresh schema on
/// the PostgreSQL test server (a missing server fails the test, with a hint).
pub(crate) struct Fresh {
    _dir: tempfile::TempDir,
    pub(in crate::journal) location: Location,
}

impl Fresh {
    pub(crate) fn new(kind: Kind) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let location = match kind {
            Kind::Sqlite => Location::file(dir.path().join("state/journal.sqlite3")),
            Kind::Postgres => Location::parse(Path::new(&pg::pg_url())).unwrap(),
        };
        Self {
            _dir: dir,
            location,
        }
    }

    /// Opens (creating on the first call) the journal, waiting at most `timeout` for locks.
    pub(in crate::journal) fn open_with(&self, timeout: Duration) -> Result<Journal, JournalError> {
        Journal::open_at(&self.location, timeout)
    }

    /// Opens (creating on the first call) the journal.
    pub(crate) fn open(&self) -> Journal {
        self.open_with(T).unwrap()
    }

    /// A fresh journal of `kind`, opened, and what keeps its place alive.
    pub(crate) fn journal(kind: Kind) -> (Self, Journal) {
        let fresh = Self::new(kind);
        let j = fresh.open();
        (fresh, j)
    }

    /// The SQLite file (`None` on PostgreSQL).
    pub(in crate::journal) fn sqlite_path(&self) -> Option<&Path> {
        self.location.file_path()
    }
}

fn intent(name: &str, text: &str, agent: &str) -> NewIntent {
    NewIntent {
        spec: StepSpec::to_agent(StepName::parse(name).unwrap(), text, agent),
        agent_url: Some(agent.to_owned()),
        message_id: uuid::Uuid::new_v4().to_string(),
        context_id: Some(uuid::Uuid::new_v4().to_string()),
    }
}

fn created(j: &Journal, name: &str) -> Attempt {
    match j
        .create_intents(&[intent(name, "book a room", "http://127.0.0.1:9/")])
        .unwrap()
        .remove(0)
    {
        IntentOutcome::Created(a) => a,
        IntentOutcome::Existing(_) => panic!("{name} existed"),
    }
}

fn task_json(id: &str, state: &str, ts: &str) -> String {
    format!(
        r#"{{"id":"{id}","contextId":"ctx-1","status":{{"state":"{state}","timestamp":"{ts}"}}}}"#
    )
}

fn view(raw: &str) -> TaskView {
    TaskView::from_raw(raw).unwrap()
}

/// Task `task` in `state` at second `second` of 2026-11-30T01:00.
fn status_at(task: &str, state: &str, second: u32) -> TaskView {
    view(&task_json(
        task,
        state,
        &format!("2026-11-30T01:00:{second:02}Z"),
    ))
}

/// Takes an open journal back to schema `version` as a binary of that version left it: runs
/// `undo` (the later migrations' changes undone) and sets the version, on either store.
fn downgrade(j: &Journal, kind: Kind, undo: &str, version: u32) {
    use crate::journal::sql::Db as _;
    match kind {
        Kind::Sqlite => j
            .store
            .sqlite()
            .lock()
            .execute_batch(&format!("{undo} PRAGMA user_version = {version};"))
            .unwrap(),
        Kind::Postgres => j
            .store
            .postgres()
            .lock()
            .batch(&format!(
                "BEGIN; {undo} DELETE FROM schema_migrations WHERE version > {version}; COMMIT;"
            ))
            .unwrap(),
    }
}

/// Copies every commit of a closed journal's WAL into its file and removes the WAL (a closing
/// process leaves a small WAL as it is): what a test that damages the file then damages.
fn checkpoint(path: &Path) {
    let c = rusqlite::Connection::open(path).unwrap();
    c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    c.pragma_update(None, "journal_mode", "DELETE").unwrap();
}

fn bytes(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_default()
}

fn sizes(path: &Path) -> (u64, u64) {
    let len = |p: &Path| fs::metadata(p).map_or(0, |m| m.len());
    (len(path), len(&file::sibling(path, "-wal")))
}

// ---------------------------------------------------------------------------------------------
// Compatibility and measurement
// ---------------------------------------------------------------------------------------------

#[test]
fn sqlite_the_v1_fixture_opens_with_the_current_code() {
    let (_dir, path) = tmp_journal();
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/journals/v1.sql");
    {
        let c = Connection::open(&path).unwrap();
        c.execute_batch(&fs::read_to_string(fixture).unwrap())
            .unwrap();
    }
    let j = Journal::open(&path, T).unwrap();
    assert!(j.is_writable());
    let page = j.inspect(&InspectFilter::default()).unwrap();
    assert!(page.total >= 3, "{}", page.total);
    let hotel = j
        .step(&StepName::parse("trip-42/hotel").unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(hotel.latest().unwrap().state, AttemptState::InputRequired);
    assert!(hotel.latest().unwrap().question_text().is_some());
    assert!(!j.events_of_step(&hotel.step.spec.name).unwrap().is_empty());
    // And it still takes writes.
    created(&j, "trip-42/later");
}

/// Measures durable intent commits per second (printed; not asserted: the machine is shared).
///
/// Run: `cargo test --release --lib journal::tests::durable_intent_commit_rate -- --nocapture`
/// (with `A2A_RECOVER_TEST_PG_URL` set for the PostgreSQL figure).
#[rstest]
fn durable_intent_commit_rate(#[values(Kind::Sqlite, Kind::Postgres)] kind: Kind) {
    let fresh = Fresh::new(kind);
    let j = fresh.open();
    let n = 200;
    let start = std::time::Instant::now();
    for i in 0..n {
        created(&j, &format!("bench/s{i}"));
    }
    let single = start.elapsed();
    let plan: Vec<NewIntent> = (0..n)
        .map(|i| intent(&format!("plan/s{i}"), "x", "http://127.0.0.1:9/"))
        .collect();
    let start = std::time::Instant::now();
    j.create_intents(&plan).unwrap();
    let batched = start.elapsed();
    drop(j);
    let j = fresh.open();
    assert_eq!(j.inspect(&InspectFilter::default()).unwrap().total, 2 * n);
    #[expect(clippy::print_stderr, reason = "the measurement is the output")]
    {
        eprintln!(
            "{kind:?}: durable intent commits: {:.0}/s one per transaction ({n} in {single:?}); \
             {n} in one transaction in {batched:?}",
            f64::from(n as u32) / single.as_secs_f64()
        );
    }
}
