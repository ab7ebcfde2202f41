//! Agents' health as reconcile passes journal it, and what `status` makes of it: a killed
//! agent reads as failing (since when), never as "last reached" by the read that failed; `status
//! --check --stale` exits 4 on a hung agent's step and 0 on a healthy one; health tracking keeps
//! an unchanged pass from writing anything. Real agents on 127.0.0.1, the real journal.

use std::time::Duration;

use a2a_recover::scripted_agent::AgentConfig;
use rstest::rstest;
use serde_json::Value;

use crate::common::commands::{delegate, journal_bytes, reconcile};
use crate::common::{Store, TestEnv, agent, code, json_lines, stderr, stdout};

/// An agent whose `work` steps last an hour: its tasks stay WORKING.
fn slow_ticks() -> AgentConfig {
    AgentConfig {
        tick: Duration::from_secs(3600),
        ..AgentConfig::default()
    }
}

/// The `status` record, run with `args` after `status --format json`.
fn status_record(env: &TestEnv, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--format", "json", "status"];
    all.extend_from_slice(args);
    let out = env.run(&all);
    let record = json_lines(&out)
        .into_iter()
        .find(|r| r["type"] == "status")
        .unwrap_or_else(|| panic!("no status record: {}{}", stdout(&out), stderr(&out)));
    (code(&out), record)
}

/// The one agent of a `status` record.
fn the_agent(record: &Value) -> &Value {
    let agents = record["agents"].as_array().expect("agents");
    assert_eq!(agents.len(), 1, "{record}");
    &agents[0]
}

fn time(v: &Value) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap_or_else(|| panic!("a time: {v}")))
        .unwrap()
        .with_timezone(&chrono::Utc)
}

/// A running step on `a`, read once by a pass (SUBMITTED → WORKING: the agent answered).
fn running(env: &TestEnv, step: &str, url: &str) {
    let out = delegate(env, step, url, "work:5", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = reconcile(env, &[]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
}

#[rstest]
fn status_after_an_agent_is_killed_shows_it_failing_not_reached(
    #[values(Store::Sqlite, Store::Postgres)] store: Store,
) {
    let env = TestEnv::on(store);
    let a = agent(slow_ticks());
    running(&env, "w/long", &a.url());
    let (_, before) = status_record(&env, &[]);
    let healthy = the_agent(&before);
    assert!(healthy["failingSince"].is_null(), "{healthy}");
    let answered = time(&healthy["lastSuccessAt"]);
    assert_eq!(
        healthy["lastReached"], healthy["lastSuccessAt"],
        "{healthy}"
    );

    let killed_at = a2a_recover::clock::system_now();
    drop(a);
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("read failed"), "{}", stdout(&out));

    let (code_now, after) = status_record(&env, &[]);
    assert_eq!(code_now, 0);
    let dead = the_agent(&after);
    // Failing since the pass's first failed request, which came after the kill.
    assert!(time(&dead["failingSince"]) >= killed_at, "{dead}");
    assert!(
        time(&dead["lastFailureAt"]) >= time(&dead["failingSince"]),
        "{dead}"
    );
    // The failed read moved neither its last answer nor when it was last reached.
    assert_eq!(time(&dead["lastSuccessAt"]), answered, "{dead}");
    assert!(time(&dead["lastReached"]) < killed_at, "{dead}");

    let out = env.run(["status"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // The agent, then its health (on lines of their own when one would be too wide).
    let said = stdout(&out);
    let line = said.split_once("Agents:").map_or("", |(_, rest)| rest);
    assert!(line.contains("failing since "), "{said}");
    assert!(
        !line.contains(", last reached 2"),
        "reached at the failed read: {line}"
    );
}

#[test]
fn status_check_stale_exits_4_on_a_hung_agents_step_and_0_on_a_healthy_one() {
    // "Now", as `status` measures ages and staleness, ten seconds ahead of the real clock: what
    // was last heard of now is ten seconds quiet then, without a test sleeping that long.
    let later = || {
        let t = a2a_recover::clock::system_now() + chrono::Duration::seconds(10);
        a2a_recover::clock::rfc3339(t)
    };
    let status = |env: &TestEnv, args: &[&str]| {
        env.cmd()
            .env("A2A_RECOVER_TEST_NOW", later())
            .args(args)
            .output()
            .expect("run status")
    };

    // A hung agent: the step was read once, then every read times out.
    let env = TestEnv::new();
    let hung = agent(slow_ticks());
    running(&env, "trip/hotel", &hung.url());
    hung.get().set_black_hole(true);
    let out = reconcile(&env, &["--timeout", "1s", "--agent-failures", "1"]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(said.contains("timed out"), "{said}");

    let out = status(&env, &["status", "--check", "--stale", "1s"]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    let stale: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.contains("Stale:"))
        .take_while(|l| !l.contains("Agents:"))
        .collect();
    assert!(
        stale[0].contains("trip/hotel attempt 1, WORKING, no change or answer since"),
        "{text}"
    );
    assert!(
        stale
            .iter()
            .any(|l| l.contains(&format!("agent {} failing since", hung.url()))),
        "{text}"
    );
    // The record names the same.
    let out = status(
        &env,
        &["--format", "json", "status", "--check", "--stale", "1s"],
    );
    assert_eq!(code(&out), 4);
    let record = json_lines(&out)
        .into_iter()
        .find(|r| r["type"] == "status")
        .unwrap();
    let s = &record["stale"];
    assert_eq!(s["attemptsTotal"], 1, "{s}");
    assert_eq!(s["attempts"][0]["step"], "hotel", "{s}");
    assert_eq!(s["attempts"][0]["state"], "WORKING", "{s}");
    assert!(
        s["agents"][0]["agent"]
            .as_str()
            .unwrap()
            .starts_with(&hung.url()),
        "{s}"
    );
    assert_eq!(record["exitCode"], 4);
    // Quiet for ten seconds is not stale at an hour; `-q` prints nothing either way.
    let out = status(&env, &["status", "--check", "--stale", "1h"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("Stale: nothing quiet for longer than 1h"),
        "{}",
        stdout(&out)
    );
    let quiet = status(&env, &["-q", "status", "--check", "--stale", "1s"]);
    assert_eq!(code(&quiet), 4);
    assert!(
        quiet.stdout.is_empty() && quiet.stderr.is_empty(),
        "{quiet:?}"
    );

    // A healthy agent's running step, read a moment ago: not stale at an hour.
    let env = TestEnv::new();
    let healthy = agent(slow_ticks());
    running(&env, "trip/car", &healthy.url());
    let out = status(&env, &["status", "--check", "--stale", "1h"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(!stdout(&out).contains("failing"), "{}", stdout(&out));
    let quiet = status(&env, &["-q", "status", "--check", "--stale", "1h"]);
    assert_eq!(code(&quiet), 0);
    assert!(
        quiet.stdout.is_empty() && quiet.stderr.is_empty(),
        "{quiet:?}"
    );
}

#[test]
fn an_unchanged_pass_writes_nothing_with_health_tracking_on() {
    let env = TestEnv::new();
    let a = agent(slow_ticks());
    running(&env, "w/long", &a.url());
    // The first pass journaled the agent's answer: health tracking is on.
    let (_, record) = status_record(&env, &[]);
    assert!(the_agent(&record)["lastSuccessAt"].is_string(), "{record}");
    let events = env.open_journal().event_count().unwrap();
    let before = journal_bytes(&env);
    for _ in 0..2 {
        let out = reconcile(&env, &[]);
        assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
        assert!(stdout(&out).contains("1 WORKING"), "{}", stdout(&out));
    }
    assert!(
        journal_bytes(&env) == before,
        "a pass over unchanged work, its agent answering, wrote to the journal"
    );
    assert_eq!(env.open_journal().event_count().unwrap(), events);
}
