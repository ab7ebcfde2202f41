//! The journal as the binary sees it: old journals keep opening, newer ones are read-only, and
//! passes that change nothing write nothing.

use std::path::Path;

use a2a_recover::scripted_agent::AgentConfig;
use serde_json::Value;

use crate::common::commands::{attempts, delegate};
use crate::common::{TestEnv, agent, code, stderr, stdout};

/// Loads a text dump into a new journal file at the environment's journal path.
fn load_dump(env: &TestEnv, dump: &str) {
    std::fs::create_dir_all(env.journal().parent().unwrap()).unwrap();
    let conn = rusqlite::Connection::open(env.journal()).unwrap();
    conn.execute_batch(dump).unwrap();
}

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/journals")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

/// The steps `inspect --pending` lists.
fn pending_steps(env: &TestEnv) -> Vec<String> {
    let out = env.run(["inspect", "--pending", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    stdout(&out)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "attempt")
        .map(|v| v["step"].as_str().unwrap().to_owned())
        .collect()
}

/// The journal file and its WAL, for byte comparisons.
fn snapshot(env: &TestEnv) -> (Vec<u8>, Vec<u8>) {
    let wal = env.journal().with_file_name("journal.sqlite3-wal");
    (
        std::fs::read(env.journal()).unwrap(),
        std::fs::read(wal).unwrap_or_default(),
    )
}

#[test]
fn a_v1_journal_opens_with_the_current_binary() {
    let env = TestEnv::new();
    load_dump(&env, &fixture("v1.sql"));
    let rows = attempts(&env, None);
    let states: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r["step"].as_str().unwrap(), r["state"].as_str().unwrap()))
        .collect();
    assert_eq!(
        states,
        [
            ("flight", "COMPLETED"),
            ("hotel", "INPUT_REQUIRED"),
            ("car", "INTENT")
        ]
    );
    assert_eq!(rows[0]["effect"], "claimed");
    assert_eq!(rows[1]["pendingQuestion"], "two rooms or one?");
    assert_eq!(rows[1]["statusTimestamp"], "2026-11-30T01:00:06.5Z");
    assert_eq!(rows[2]["tokenEnv"], "TRAVEL_TOKEN");
    assert_eq!(pending_steps(&env), ["hotel"]);
    // It still takes new work.
    let a = agent(AgentConfig::default());
    let out = delegate(&env, "trip-42/train", &a.url(), "book a train", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(attempts(&env, Some("trip-42")).len(), 4);
}

#[test]
fn a_v2_journal_opens_with_the_current_binary() {
    let env = TestEnv::new();
    load_dump(&env, &fixture("v2.sql"));
    // Migration 0003 runs on open; --pending then starts from its indexes and finds the same
    // steps as the rule does: a question, a FAILED step bound to one agent, and a step failed
    // for good by its event alone. Not the resolved UNCERTAIN step, nor the INTENT.
    assert_eq!(pending_steps(&env), ["hotel", "taxi", "boat"]);
    let conn = rusqlite::Connection::open(env.journal()).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, a2a_recover::journal::migrate::LATEST);
    let indexes: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND name LIKE 'events%' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        indexes,
        [
            "events_by_attempt",
            "events_by_step",
            "events_failed_for_good",
            "events_needing_human"
        ]
    );
    drop(conn);
    let rows = attempts(&env, Some("trip-42"));
    assert_eq!(rows.len(), 6);
    assert_eq!(rows[5]["resolution"]["as"], "done");
}

#[test]
fn a_v3_journal_opens_with_the_current_binary() {
    let env = TestEnv::new();
    load_dump(&env, &fixture("v3.sql"));
    // Migrations 0004 to 0006 run on open: the same steps are pending, and no attempt of an older
    // binary has a send stamp (no in-flight horizon is known for it).
    assert_eq!(pending_steps(&env), ["hotel", "taxi", "boat"]);
    let conn = rusqlite::Connection::open(env.journal()).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, a2a_recover::journal::migrate::LATEST);
    let stamped: i64 = conn
        .query_row(
            "SELECT count(*) FROM attempts WHERE send_started_at IS NOT NULL
                 OR send_timeout_ms IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stamped, 0);
    drop(conn);
    assert_eq!(attempts(&env, Some("trip-42")).len(), 6);
}

#[test]
fn a_journal_from_a_newer_version_is_read_only() {
    let env = TestEnv::new();
    // A newer journal holds every released migration (they are append-only), then more.
    let mut dump = fixture("v1.sql");
    for migration in std::fs::read_dir(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/journal/migrations"
    ))
    .unwrap()
    .map(|e| e.unwrap().path())
    .filter(|p| !p.ends_with("0001_init.sql"))
    .collect::<std::collections::BTreeSet<_>>()
    {
        dump.push('\n');
        dump.push_str(&std::fs::read_to_string(migration).unwrap());
    }
    let dump = dump.replace("PRAGMA user_version = 1;", "PRAGMA user_version = 99;");
    load_dump(&env, &dump);
    let before = snapshot(&env);
    let rows = attempts(&env, None);
    assert_eq!(rows.len(), 3, "reads work");
    assert_eq!(pending_steps(&env), ["hotel"], "and so does --pending");
    let out = delegate(&env, "trip-42/train", "http://127.0.0.1:9/", "book", &[]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("hint: this journal was written by a newer a2a-recover"),
        "{}",
        stderr(&out)
    );
    assert_eq!(snapshot(&env), before);
}

#[test]
fn inspect_and_a_re_run_on_recorded_work_write_nothing() {
    let env = TestEnv::new();
    let a = agent(AgentConfig::default());
    assert_eq!(code(&delegate(&env, "w/s", &a.url(), "hello", &[])), 0);
    let before = snapshot(&env);
    let out = env.run(["inspect", "--events", "w/s"]);
    assert_eq!(code(&out), 0);
    let again = delegate(&env, "w/s", &a.url(), "hello", &[]);
    assert_eq!(code(&again), 0);
    assert_eq!(snapshot(&env), before, "the journal changed");
    let events: Vec<Value> = stdout(&env.run(["inspect", "w/s", "--events", "--format", "json"]))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &Value| v["type"] == "event")
        .collect();
    assert_eq!(events.len(), 3, "intent, endpoint, state: {events:?}");
}

#[test]
fn a_broken_symlink_is_an_error_not_an_empty_journal() {
    // An unmounted volume behind a link must not look like "nothing to do" to cron.
    let env = TestEnv::new();
    std::fs::create_dir_all(env.journal().parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(env.path().join("unmounted/journal.sqlite3"), env.journal())
        .unwrap();
    for args in [vec!["inspect"], vec!["reconcile"], vec!["agents", "list"]] {
        let out = env.run(&args);
        assert_eq!(code(&out), 1, "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("broken symbolic link"),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(stdout(&out).lines().all(|l| !l.contains("nothing to do")));
    }
}

/// Every pass command on a journal that does not exist is an error (exit 1) naming the path and
/// how it was chosen, with the way to create one; none creates a journal. `journal init` does,
/// and `agents add`/`delegate` still do.
#[test]
fn every_pass_on_a_missing_journal_exits_1_naming_the_path_and_its_source() {
    let env = TestEnv::new();
    let passes: [&[&str]; 8] = [
        &["reconcile"],
        &["follow", "w/s"],
        &["reply", "w/s", "yes"],
        &["compensate", "w"],
        &["resolve", "w/s", "--as", "done", "--reason", "x"],
        &["inspect"],
        &["status"],
        &["prune", "--older-than", "30d"],
    ];
    for args in passes {
        for format in ["human", "json"] {
            let out = env
                .cmd()
                .args(args)
                .args(["--format", format])
                .output()
                .unwrap();
            let err = stderr(&out);
            assert_eq!(code(&out), 1, "{args:?}: {err}");
            let named = format!("no journal at `{}`", env.journal().display());
            assert!(err.contains(&named), "{args:?}: {err}");
            assert!(
                err.contains("chosen by A2A_RECOVER_JOURNAL"),
                "{args:?}: {err}"
            );
            assert!(err.contains("a2a-recover journal init"), "{args:?}: {err}");
            assert!(!env.journal().exists(), "{args:?} created a journal");
        }
    }
    // The flag and the XDG default are named as such.
    let flagged = env.path().join("elsewhere.sqlite3");
    let out = env.run(["--journal", flagged.to_str().unwrap(), "reconcile"]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("chosen by --journal"),
        "{}",
        stderr(&out)
    );
    let out = env
        .cmd()
        .env_remove("A2A_RECOVER_JOURNAL")
        .arg("inspect")
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("chosen by the default under $XDG_STATE_HOME"),
        "{}",
        stderr(&out)
    );
    // `journal init` creates it (idempotently); then a pass has nothing to do.
    let out = env.run(["journal", "init", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("\"created\":true"),
        "{}",
        stdout(&out)
    );
    assert!(env.journal().exists());
    let out = env.run(["journal", "init"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("already exists"), "{}", stdout(&out));
    let out = env.run(["reconcile"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // `delegate` still creates a journal where none is.
    let other = TestEnv::new();
    let a = agent(AgentConfig::default());
    let out = delegate(&other, "w/s", &a.url(), "hello", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(other.journal().exists());
}
