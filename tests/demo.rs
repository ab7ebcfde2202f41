//! `demo` end to end: its JSON Lines (the seven checked recoveries, in
//! the order the story reaches them), and where its journal lives: a temporary file that
//! ignores `A2A_RECOVER_JOURNAL`, or the `--journal` path, kept afterwards for `inspect`.

use std::path::Path;

use serde_json::Value;

use crate::common::{TestEnv, code, json_lines, stderr, stdout};

/// The recovery ids, in the order the demo must report them.
const RECOVERIES: [&str; 7] = [
    "flight-finished-while-away",
    "hotel-found-by-message-id",
    "hotel-question-saved",
    "car-sent-from-intent",
    "hotel-answered-on-same-task",
    "car-redelegated",
    "trip-compensated-in-reverse",
];

/// Asserts the demo's JSON Lines: `begin`, the seven `recovery` records in order (each ok,
/// with a detail), and a last `summary` with exit code 0.
fn assert_demo_records(records: &[Value]) {
    let first = records.first().expect("a begin record");
    assert_eq!(
        first,
        &serde_json::json!({"type": "begin", "formatVersion": 1, "command": "demo"}),
        "the first line"
    );
    let recoveries: Vec<&Value> = records.iter().filter(|r| r["type"] == "recovery").collect();
    let ids: Vec<&str> = recoveries
        .iter()
        .map(|r| r["id"].as_str().expect("a string id"))
        .collect();
    assert_eq!(ids, RECOVERIES, "the recovery ids, in order");
    for r in &recoveries {
        assert_eq!(r["ok"], Value::Bool(true), "{r}");
        let detail = r["detail"].as_str().expect("a string detail");
        assert!(!detail.trim().is_empty(), "an empty detail: {r}");
    }
    let last = records.last().expect("a last record");
    assert_eq!(last["type"], "summary", "the last line: {last}");
    assert_eq!(last["exitCode"], 0, "{last}");
    let types: Vec<&str> = records
        .iter()
        .map(|r| r["type"].as_str().expect("every record has a type"))
        .collect();
    assert_eq!(
        types.iter().filter(|t| **t == "summary").count(),
        1,
        "one summary: {types:?}"
    );
    assert!(
        types[1..types.len() - 1].iter().all(|t| *t == "recovery"),
        "only recovery records between begin and summary: {types:?}"
    );
}

fn assert_ok(out: &std::process::Output) {
    assert_eq!(
        code(out),
        0,
        "stdout:\n{}\nstderr:\n{}",
        stdout(out),
        stderr(out)
    );
}

/// Lists a directory's entries (empty when it does not exist).
fn entries(dir: &Path) -> Vec<String> {
    match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn the_demo_reports_seven_checked_recoveries_in_order_and_ignores_the_journal_variable() {
    let env = TestEnv::new();
    // TestEnv points A2A_RECOVER_JOURNAL at env.journal(): a file with known bytes, which the
    // demo must neither use nor touch, and nothing may appear beside it.
    let dir = env.journal().parent().expect("a parent").to_path_buf();
    std::fs::create_dir_all(&dir).expect("state dir");
    let before = b"not a journal: the demo must leave this file alone\n";
    std::fs::write(env.journal(), before).expect("write the decoy");
    let listing = entries(&dir);

    let out = env.run(["--format", "json", "demo"]);
    assert_ok(&out);
    assert_demo_records(&json_lines(&out));

    assert_eq!(
        std::fs::read(env.journal()).expect("the decoy is still there"),
        before,
        "the demo wrote to $A2A_RECOVER_JOURNAL"
    );
    assert_eq!(
        entries(&dir),
        listing,
        "the demo created files beside $A2A_RECOVER_JOURNAL"
    );
    assert!(
        !env.path().join("xdg-state/a2a-recover").exists(),
        "the demo used the default journal path"
    );
}

#[test]
fn the_demo_keeps_the_journal_given_with_the_flag_for_inspect() {
    let env = TestEnv::new();
    let kept = env.path().join("kept/demo.sqlite3");
    let flag = kept.to_str().expect("utf-8 path");

    let out = env.run(["demo", "--format", "json", "--journal", flag]);
    assert_ok(&out);
    assert_demo_records(&json_lines(&out));
    assert!(kept.exists(), "the journal named with --journal is gone");
    assert!(
        !env.journal().exists(),
        "the demo used $A2A_RECOVER_JOURNAL although --journal was given"
    );

    let out = env.run(["inspect", "trip-42", "--format", "json", "--journal", flag]);
    assert_ok(&out);
    let attempts: Vec<Value> = json_lines(&out)
        .into_iter()
        .filter(|r| r["type"] == "attempt")
        .collect();
    for step in ["flight", "hotel", "car"] {
        assert!(
            attempts.iter().any(|a| a["step"] == step),
            "no attempt of trip-42/{step} in the kept journal: {attempts:?}"
        );
    }
    assert!(
        attempts.iter().all(|a| a["workflowState"] == "COMPENSATED"),
        "the kept journal shows the compensated trip: {attempts:?}"
    );
    let car_attempts = attempts.iter().filter(|a| a["step"] == "car").count();
    assert_eq!(car_attempts, 2, "the car was re-delegated once");
}
