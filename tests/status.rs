//! `status`: the journal in use and why, its schema, the lock's holder, steps by state, what
//! needs a human, the oldest unfinished attempt and the agents; `--check` is a probe (exit 4
//! when something needs a human, else 0). Real agents on 127.0.0.1, the real journal.

use insta::assert_snapshot;

use crate::common::commands::{delegate, settle};
use crate::common::snapshot::snapshot_of;
use crate::common::{TestEnv, agent, code, fast, json_lines, stderr};

#[test]
fn status_shows_the_journal_its_lock_and_what_needs_a_human() {
    let env = TestEnv::new();
    let out = env.run(["journal", "init"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_snapshot!(
        "status_empty",
        snapshot_of(&env, &env.run(["status", "--check"]))
    );

    let a = agent(fast());
    assert_eq!(
        code(&delegate(&env, "trip-7/flight", &a.url(), "book it", &[])),
        0
    );
    assert_eq!(
        code(&delegate(&env, "trip-7/hotel", &a.url(), "ask", &[])),
        0
    );
    assert_eq!(settle(&env), 4);
    // A task that stays running: the oldest unfinished attempt.
    let slow = agent(a2a_recover::scripted_agent::AgentConfig {
        tick: std::time::Duration::from_secs(3600),
        ..fast()
    });
    assert_eq!(
        code(&delegate(&env, "trip-8/car", &slow.url(), "work:5", &[])),
        0
    );
    let held =
        a2a_recover::recovery::lock::acquire(&env.journal(), 4242, "2026-11-30T01:00:00.000Z")
            .unwrap();
    let out = env.run(["status", "--check"]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    assert_snapshot!("status", snapshot_of(&env, &out));
    // Without --check it is informational: exit 0.
    assert_eq!(code(&env.run(["status"])), 0);
    // `-q` prints nothing and keeps the exit code.
    for args in [
        &["-q", "status", "--check"][..],
        &["-q", "status", "--check", "-o", "json"],
    ] {
        let quiet = env.run(args);
        assert_eq!(code(&quiet), 4, "{args:?}: {}", stderr(&quiet));
        assert!(
            quiet.stdout.is_empty() && quiet.stderr.is_empty(),
            "{args:?}: {quiet:?}"
        );
    }

    let out = env.run(["status", "--check", "--format", "json"]);
    assert_eq!(code(&out), 4);
    let lines = json_lines(&out);
    let s = lines
        .iter()
        .find(|r| r["type"] == "status")
        .expect("a status record");
    assert_eq!(s["journal"], env.journal().display().to_string());
    assert_eq!(s["chosenBy"], "env");
    assert_eq!(s["needsHuman"], 1);
    assert_eq!(s["states"]["COMPLETED"], 1);
    assert_eq!(s["states"]["INPUT_REQUIRED"], 1);
    assert_eq!(
        s["locks"][0]["holder"],
        "pid 4242, started 2026-11-30T01:00:00.000Z"
    );
    assert_eq!(s["oldestUnfinished"]["step"], "hotel", "{s}");
    assert_eq!(s["agents"].as_array().unwrap().len(), 2);
    assert_eq!(s["exitCode"], 4);
    drop(held);

    // Once the question is settled, --check is 0 and the lock is free.
    let out = env.run([
        "resolve",
        "trip-7/hotel",
        "--as",
        "done",
        "--reason",
        "by phone",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = env.run(["status", "--check", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let lines = json_lines(&out);
    let s = lines.iter().find(|r| r["type"] == "status").unwrap();
    assert_eq!(s["locks"].as_array().unwrap().len(), 0, "{s}");
    assert_eq!(s["oldestUnfinished"]["step"], "car", "{s}");
}

#[test]
fn status_names_a_failing_agent_and_what_is_stale() {
    let env = TestEnv::new();
    let a = agent(a2a_recover::scripted_agent::AgentConfig {
        tick: std::time::Duration::from_secs(3600),
        ..fast()
    });
    assert_eq!(
        code(&delegate(&env, "trip-8/car", &a.url(), "work:5", &[])),
        0
    );
    assert_eq!(code(&crate::common::commands::reconcile(&env, &[])), 3);
    // The agent dies; the next pass's reads are refused.
    drop(a);
    assert_eq!(code(&crate::common::commands::reconcile(&env, &[])), 3);
    // Seen two hours later (every age reads `2h`).
    let later = a2a_recover::clock::system_now() + chrono::Duration::hours(2);
    let out = env
        .cmd()
        .env("A2A_RECOVER_TEST_NOW", a2a_recover::clock::rfc3339(later))
        .args(["status", "--check", "--stale", "1h"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    assert_snapshot!("status_stale", snapshot_of(&env, &out));
}
