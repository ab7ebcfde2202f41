//! `journal copy`: a journal moved from SQLite into PostgreSQL and back holds the same rows,
//! every table and value; the source is marked as moved and refused by every command; a
//! non-empty target, and a copy that fails half-way, leave both sides as they were.

use std::path::{Path, PathBuf};

use a2a_recover::scripted_agent::AgentConfig;
use serde_json::Value;

use crate::common::commands::{delegate, settle};
use crate::common::journal_dump::content;
use crate::common::postgres::{pg_password, pg_url};
use crate::common::{TestEnv, agent, code, fast, fast_with_skills, stderr, stdout};

/// Runs the binary with `args` in `env` and the JSON records it printed.
fn run_json(env: &TestEnv, args: &[&str]) -> (i32, Vec<Value>, String) {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let out = env.run(all);
    let records = stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (
        code(&out),
        records,
        format!("{}{}", stdout(&out), stderr(&out)),
    )
}

fn copy(env: &TestEnv, from: &str, to: &str) -> (i32, Vec<Value>, String) {
    run_json(env, &["journal", "copy", "--from", from, "--to", to])
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Fills the environment's journal with every kind of row, through the binary's own commands
/// against scripted agents: registered agents with cards, steps and attempts that completed
/// (with artifacts streamed in chunks), wait for an answer (and got a reply), failed, were
/// rejected, a decision, a workflow compensated with its compensation step, and an attempt
/// with a push config.
fn rich_journal(env: &TestEnv) {
    let flights = agent(fast_with_skills(&["flights"]));
    let out = env.run(["agents", "add", &flights.url()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    for (step, text) in [
        ("trip/flight", "work:3"),
        ("trip/ask", "ask"),
        ("ops/fail", "fail"),
        ("ops/reject", "reject"),
    ] {
        let out = delegate(env, step, &flights.url(), text, &[]);
        assert!(matches!(code(&out), 0 | 3 | 4), "{step}: {}", stderr(&out));
    }
    let out = env.run(["delegate", "skilled/one", "--skill", "flights", "work:2"]);
    assert!(matches!(code(&out), 0 | 3), "{}", stderr(&out));
    // Slow enough that the follow subscribes before the task ends, even on a loaded machine:
    // its artifact then arrives in appended chunks (a finished task's would be read whole).
    let slow = agent(AgentConfig {
        tick: std::time::Duration::from_millis(250),
        ..fast_with_skills(&["flights"])
    });
    let out = env.run([
        "delegate",
        "stream/it",
        "--agent",
        &slow.url(),
        "--follow",
        "work:4",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // An attempt with a push config and its token's hash (nothing listens there).
    let pushing = agent(AgentConfig {
        push: true,
        ..fast()
    });
    let out = env.run([
        "delegate",
        "push/it",
        "--agent",
        &pushing.url(),
        "--push",
        "http://127.0.0.1:9/hooks",
        "work:1",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    settle(env);
    let out = env.run(["reply", "trip/ask", "yes, the window seat"]);
    assert!(matches!(code(&out), 0 | 3), "{}", stderr(&out));
    let out = env.run([
        "resolve",
        "ops/fail",
        "--as",
        "abandoned",
        "--reason",
        "not needed any more",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // A booking with an effect, undone by a compensation message (a step of its own).
    let url = flights.url();
    let verify = format!("{url}_scripted/bookings/{{task_id}}");
    let out = env.run([
        "delegate",
        "saga/hotel",
        "--agent",
        &url,
        "--effect",
        "--compensate",
        "cancel {task_id}",
        "--verify-url",
        &verify,
        "book a room",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = env.run(["compensate", "saga"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
}

#[test]
fn journal_copy_there_and_back_gives_identical_logical_content() {
    let env = TestEnv::new();
    rich_journal(&env);
    let original = content(&env.journal());
    for table in [
        "agents",
        "workflows",
        "steps",
        "attempts",
        "events",
        "artifacts",
        "artifact_chunks",
        "replies",
        "push_configs",
        "push_tokens",
    ] {
        assert!(!original[table].is_empty(), "the journal has no {table}");
    }
    let states: std::collections::BTreeSet<&str> = original["attempts"]
        .iter()
        .filter_map(|r| {
            [
                "COMPLETED",
                "FAILED",
                "REJECTED",
                "REPLIED",
                "INPUT_REQUIRED",
                "WORKING",
            ]
            .into_iter()
            .find(|s| r.contains(&format!("\"{s}\"")))
        })
        .collect();
    assert!(states.len() >= 3, "attempts in several states: {states:?}");
    assert!(
        original["steps"].iter().any(|r| r.contains("~compensate")),
        "a compensation step"
    );

    let pg = pg_url();
    let (c, records, text) = copy(&env, s(&env.journal()), &pg);
    assert_eq!(c, 0, "{text}");
    let summary = records.iter().find(|r| r["type"] == "summary").unwrap();
    assert_eq!(summary["command"], "journal copy");
    assert_eq!(summary["verified"], true);
    assert_eq!(summary["from"], s(&env.journal()));
    for (table, rows) in &original {
        assert_eq!(summary["tables"][table], rows.len(), "{table}: {summary}");
    }
    let password = pg_password();
    assert!(
        !text.contains(&password),
        "the password is never shown: {text}"
    );
    assert!(summary["to"].as_str().unwrap().contains("schema=t_"));

    // And back, into a new file.
    let back = env.path().join("back/journal.sqlite3");
    let (c, _, text) = copy(&env, &pg, s(&back));
    assert_eq!(c, 0, "{text}");
    assert_eq!(content(&back), original);
    // The PostgreSQL journal is now the moved one: a pass on it names the file.
    let out = env.run(["--journal", &pg, "reconcile"]);
    assert_refused_as_moved(&out, s(&back));
    assert!(!stderr(&out).contains(&password), "{}", stderr(&out));

    // The copy is a working journal: a pass over it runs, a new step gets a fresh id.
    let out = env.run(["--journal", s(&back), "inspect", "trip/flight"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let flights = agent(fast_with_skills(&["flights"]));
    let out = env.run([
        "--journal",
        s(&back),
        "delegate",
        "after/move",
        "--agent",
        &flights.url(),
        "work:1",
    ]);
    assert!(matches!(code(&out), 0 | 3), "{}", stderr(&out));
}

/// The error a command prints for a moved journal names the new place, never a password.
fn assert_refused_as_moved(out: &std::process::Output, to: &str) {
    assert_eq!(code(out), 1, "{}{}", stdout(out), stderr(out));
    let err = stderr(out);
    assert!(err.contains("was moved to"), "{err}");
    assert!(err.contains(&format!("--journal {to}")), "{err}");
}

#[test]
fn a_moved_journal_is_refused_by_every_command_naming_the_new_place() {
    let env = TestEnv::new();
    let a = agent(fast_with_skills(&["flights"]));
    let out = delegate(&env, "w/one", &a.url(), "work:1", &[]);
    assert!(matches!(code(&out), 0 | 3), "{}", stderr(&out));
    let target = env.path().join("moved-to.sqlite3");
    let (c, _, text) = copy(&env, s(&env.journal()), s(&target));
    assert_eq!(c, 0, "{text}");
    // A pass, a read, a new delegation: each exits 1 naming the target.
    for args in [
        vec!["reconcile"],
        vec!["inspect"],
        vec!["status"],
        vec!["journal", "init"],
    ] {
        assert_refused_as_moved(&env.run(args), s(&target));
    }
    assert_refused_as_moved(
        &delegate(&env, "w/two", &a.url(), "work:1", &[]),
        s(&target),
    );
    // Copying the moved journal again is refused too; copying back from the new one works
    // (into a new place: the old one stays a record).
    let (c, _, text) = copy(&env, s(&env.journal()), s(&env.path().join("x.sqlite3")));
    assert_eq!(c, 1, "{text}");
    assert!(text.contains("was moved to"), "{text}");
    assert!(
        !env.path().join("x.sqlite3").exists(),
        "no target was left behind"
    );
    let (c, _, text) = copy(&env, s(&target), s(&env.journal()));
    assert_eq!(c, 1, "the old place is still marked: {text}");
    let again = env.path().join("again.sqlite3");
    let (c, _, text) = copy(&env, s(&target), s(&again));
    assert_eq!(c, 0, "{text}");
    let out = env.run(["--journal", s(&again), "inspect", "w/one"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

/// The target's bytes (file and WAL), to prove it untouched.
fn bytes(path: &Path) -> (Vec<u8>, Vec<u8>) {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    (
        std::fs::read(path).unwrap(),
        std::fs::read(PathBuf::from(wal)).unwrap_or_default(),
    )
}

#[test]
fn a_target_that_holds_a_journal_is_refused_and_left_untouched() {
    let env = TestEnv::new();
    let a = agent(fast_with_skills(&["flights"]));
    let out = delegate(&env, "w/one", &a.url(), "work:1", &[]);
    assert!(matches!(code(&out), 0 | 3), "{}", stderr(&out));
    let other = env.path().join("other.sqlite3");
    let out = env.run([
        "--journal",
        s(&other),
        "delegate",
        "x/two",
        "--agent",
        &a.url(),
        "work:1",
    ]);
    assert!(matches!(code(&out), 0 | 3), "{}", stderr(&out));
    let before = bytes(&other);
    let (c, _, text) = copy(&env, s(&env.journal()), s(&other));
    assert_eq!(c, 1, "{text}");
    assert!(text.contains("is not empty"), "{text}");
    assert!(text.contains("never merges"), "{text}");
    assert_eq!(bytes(&other), before, "the target is untouched");
    // The source was not marked: it works as before.
    let out = env.run(["inspect", "w/one"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));

    // The same on PostgreSQL: a schema that holds a journal is refused, and keeps its rows.
    let pg = pg_url();
    let (c, _, text) = copy(&env, s(&other), &pg);
    assert_eq!(c, 0, "{text}");
    let (c, _, text) = copy(&env, s(&env.journal()), &pg);
    assert_eq!(c, 1, "{text}");
    assert!(text.contains("is not empty"), "{text}");
    let out = env.run(["inspect", "w/one"]);
    assert_eq!(code(&out), 0, "the source is not marked: {}", stderr(&out));
    let back = env.path().join("back.sqlite3");
    let (c, _, text) = copy(&env, &pg, s(&back));
    assert_eq!(c, 0, "{text}");
    assert_eq!(
        content(&back),
        content(&other),
        "the target kept its own rows"
    );
}

#[test]
fn a_copy_that_fails_half_way_leaves_the_target_empty_and_the_source_unmarked() {
    let env = TestEnv::new();
    rich_journal(&env);
    let original = content(&env.journal());
    // A target whose events table refuses the third row: the copy fails after the tables
    // before it were written.
    let target = env.path().join("target.sqlite3");
    let out = env.run(["--journal", s(&target), "journal", "init"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let conn = rusqlite::Connection::open(&target).unwrap();
    conn.execute_batch(
        "CREATE TRIGGER refuse_third BEFORE INSERT ON events WHEN NEW.id = 3 \
         BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;",
    )
    .unwrap();
    drop(conn);
    let (c, _, text) = copy(&env, s(&env.journal()), s(&target));
    assert_eq!(c, 1, "{text}");
    assert!(text.contains("refused by the test"), "{text}");
    assert!(
        content(&target).values().all(Vec::is_empty),
        "nothing was committed to the target"
    );
    // The source is not marked, and unchanged.
    let out = env.run(["inspect"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(content(&env.journal()), original);

    // Without the refusal the same copy goes through.
    let conn = rusqlite::Connection::open(&target).unwrap();
    conn.execute_batch("DROP TRIGGER refuse_third").unwrap();
    drop(conn);
    let (c, _, text) = copy(&env, s(&env.journal()), s(&target));
    assert_eq!(c, 0, "{text}");
    assert_eq!(content(&target), original);
}

#[test]
fn journal_copy_checks_its_own_arguments() {
    let env = TestEnv::new();
    // A bad URL is a usage error, its password never shown.
    let (c, _, text) = copy(
        &env,
        "postgres://u:hunter2@127.0.0.1/db?schema=Bad-Name",
        "x.sqlite3",
    );
    assert_eq!(c, 2, "{text}");
    assert!(!text.contains("hunter2"), "{text}");
    // No source: nothing is created anywhere.
    let missing = env.path().join("missing.sqlite3");
    let to = env.path().join("to.sqlite3");
    let (c, _, text) = copy(&env, s(&missing), s(&to));
    assert_eq!(c, 1, "{text}");
    assert!(text.contains("no journal at"), "{text}");
    assert!(!missing.exists() && !to.exists());
    // The same journal on both sides.
    let out = env.run(["journal", "init"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let (c, _, text) = copy(&env, s(&env.journal()), s(&env.journal()));
    assert_eq!(c, 1, "{text}");
    assert!(text.contains("the same journal"), "{text}");
}

#[test]
fn a_copy_that_differs_from_its_source_is_rolled_back_naming_the_row() {
    let env = TestEnv::new();
    let a = agent(fast_with_skills(&["flights"]));
    let out = delegate(&env, "w/one", &a.url(), "work:1", &[]);
    assert!(matches!(code(&out), 0 | 3), "{}", stderr(&out));
    // A target that alters what it is given: the verification must see it.
    let target = env.path().join("target.sqlite3");
    let out = env.run(["--journal", s(&target), "journal", "init"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let conn = rusqlite::Connection::open(&target).unwrap();
    conn.execute_batch(
        "CREATE TRIGGER tamper AFTER INSERT ON steps \
         BEGIN UPDATE steps SET text = 'tampered' WHERE id = NEW.id; END;",
    )
    .unwrap();
    drop(conn);
    let (c, _, text) = copy(&env, s(&env.journal()), s(&target));
    assert_eq!(c, 1, "{text}");
    assert!(
        text.contains("differs from the source in table `steps` at row (id=1)"),
        "{text}"
    );
    assert!(text.contains("column `text`"), "{text}");
    assert!(content(&target).values().all(Vec::is_empty), "rolled back");
    let out = env.run(["inspect", "w/one"]);
    assert_eq!(code(&out), 0, "the source is not marked: {}", stderr(&out));
}
