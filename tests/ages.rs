//! AGE means one thing in every view: the time since the attempt's last state change.
//! `status`, `inspect --pending`, `inspect WORKFLOW` and the workflows view show the same AGE,
//! and JSON gives the time it is measured from (`stateChangedAt`); a read that failed moves
//! `updatedAt` and never the AGE. A real agent on 127.0.0.1, killed; the real journal.

use chrono::{DateTime, Utc};

use crate::common::commands::{delegate, reconcile, the_attempt};
use crate::common::{TestEnv, agent, code, fast, json_lines, stderr, stdout};

fn time(v: &serde_json::Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(v.as_str().unwrap_or_else(|| panic!("a time: {v}")))
        .unwrap()
        .with_timezone(&Utc)
}

/// Runs the binary with its displayed clock at `now` (what every age is measured against).
fn at(env: &TestEnv, now: DateTime<Utc>, args: &[&str]) -> String {
    let out = env
        .cmd()
        .env("A2A_RECOVER_TEST_NOW", now.to_rfc3339())
        .args(args)
        .output()
        .expect("run binary");
    assert!(
        [0, 4].contains(&code(&out)),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

/// The AGE cell of the row that names `step` in a table whose header has an `AGE` column.
fn age_cell(table: &str, step: &str) -> String {
    let mut lines = table.lines();
    let header = lines.next().expect("a header");
    // By its place in the header: some headers and cells hold spaces (`NEEDS HUMAN`).
    let column = header
        .find(" AGE")
        .unwrap_or_else(|| panic!("no AGE column: {table}"))
        + 1;
    let row = lines
        .find(|l| l.split_whitespace().next() == Some(step))
        .unwrap_or_else(|| panic!("no row for {step}: {table}"));
    let cells: String = row.chars().skip(column).collect();
    cells
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn every_view_shows_one_age_and_a_failed_read_does_not_reset_it() {
    let env = TestEnv::new();
    let a = agent(fast());
    let out = delegate(&env, "trip/hotel", &a.url(), "ask", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let asked = the_attempt(&env, "trip/hotel");
    assert_eq!(asked["state"], "INPUT_REQUIRED", "{asked}");
    let changed = time(&asked["stateChangedAt"]);

    // The agent dies; the next pass's read fails and journals the error. The question still
    // waits for a human: 4 wins over 3.
    drop(a);
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let failed = the_attempt(&env, "trip/hotel");
    assert_eq!(failed["state"], "INPUT_REQUIRED", "{failed}");
    assert!(
        !failed["error"].is_null(),
        "the failed read is journaled: {failed}"
    );
    assert!(time(&failed["updatedAt"]) > changed, "{failed}");
    assert_eq!(
        failed["stateChangedAt"], asked["stateChangedAt"],
        "a failed read changes no state"
    );

    // One minute after the state change to the millisecond: every view says `1m`; measured
    // from the failed read it would be `59s`.
    let now = changed + chrono::Duration::seconds(60);
    let status = at(&env, now, &["status"]);
    assert!(
        status.contains("trip/hotel attempt 1: INPUT_REQUIRED for 1m"),
        "{status}"
    );
    assert_eq!(
        age_cell(&at(&env, now, &["inspect", "--pending"]), "trip/hotel"),
        "1m"
    );
    assert_eq!(
        age_cell(&at(&env, now, &["inspect", "trip"]), "trip/hotel"),
        "1m"
    );
    assert_eq!(age_cell(&at(&env, now, &["inspect"]), "trip"), "1m");

    // JSON: the attempt and status's oldest unfinished give the same time.
    let record = json_lines(&env.run(["--format", "json", "status"]))
        .into_iter()
        .find(|r| r["type"] == "status")
        .expect("a status record");
    assert_eq!(
        record["oldestUnfinished"]["stateChangedAt"], asked["stateChangedAt"],
        "{record}"
    );
}
