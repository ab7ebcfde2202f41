//! `inspect`: tables, JSON Lines, filters, `--pending`, `--events`, `--limit`, inert text.
//!
//! Journal rows are set up through the library (`a2a_recover::journal`), so each state can be
//! reached without a remote agent; `inspect` itself runs as the binary.

use std::sync::Arc;
use std::time::Duration;

use a2a_recover::a2a::TaskView;
use a2a_recover::clock::FixedClock;
use a2a_recover::journal::{
    Attempt, IntentOutcome, Journal, NewIntent, Source, StepName, StepSpec,
};
use chrono::{DateTime, Utc};
use serde_json::Value;

use insta::assert_snapshot;

use crate::common::snapshot::snapshot_of;
use crate::common::{TestEnv, code, json_lines, stderr, stdout};

const AGENT: &str = "http://127.0.0.1:8001/.well-known/agent-card.json";

fn t0() -> DateTime<Utc> {
    "2026-11-30T01:00:00Z".parse().unwrap()
}

fn open(env: &TestEnv) -> Journal {
    Journal::open(&env.journal(), Duration::from_secs(10))
        .unwrap()
        .with_clock(Arc::new(FixedClock(t0())))
}

fn intent(name: &str) -> NewIntent {
    NewIntent {
        spec: StepSpec::to_agent(StepName::parse(name).unwrap(), format!("do {name}"), AGENT),
        agent_url: Some(AGENT.to_owned()),
        // Ids of the step's name, not random: the `--events` table shows them (cut short).
        message_id: format!("message-{name}"),
        context_id: Some(format!("context-{name}")),
    }
}

fn add(j: &Journal, name: &str) -> Attempt {
    match j.create_intents(&[intent(name)]).unwrap().remove(0) {
        IntentOutcome::Created(a) => a,
        IntentOutcome::Existing(_) => panic!("{name} exists"),
    }
}

fn observe(j: &Journal, a: &Attempt, task_id: &str, state: &str, question: Option<&str>) {
    let message = question.map_or(String::new(), |q| {
        format!(
            r#","message":{{"messageId":"q","role":"ROLE_AGENT","parts":[{{"text":{}}}]}}"#,
            serde_json::to_string(q).unwrap()
        )
    });
    let raw = format!(
        r#"{{"id":{},"contextId":"c","status":{{"state":"TASK_STATE_{state}","timestamp":"2026-11-30T01:00:01.123456Z"{message}}}}}"#,
        serde_json::to_string(task_id).unwrap()
    );
    j.apply_task(a.id, &TaskView::from_raw(&raw).unwrap(), Source::GetTask)
        .unwrap();
}

/// A journal with one step in each interesting state.
fn trip(env: &TestEnv) {
    let j = open(env);
    let flight = add(&j, "trip-42/flight");
    observe(&j, &flight, "task-flight", "COMPLETED", None);
    let hotel = add(&j, "trip-42/hotel");
    observe(
        &j,
        &hotel,
        "task-hotel",
        "INPUT_REQUIRED",
        Some("two rooms or one?"),
    );
    let car = add(&j, "trip-42/car");
    j.mark_uncertain(car.id, "the agent cannot list its tasks")
        .unwrap();
    let _ = add(&j, "trip-42/taxi");
    let other = add(&j, "errands/mail");
    observe(&j, &other, "task-mail", "WORKING", None);
}

fn pinned(env: &TestEnv, args: &[&str]) -> std::process::Output {
    env.cmd()
        .env("A2A_RECOVER_TEST_NOW", "2026-11-30T01:05:00Z")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_table_lists_every_attempt_with_its_age_and_outcome() {
    let env = TestEnv::new();
    trip(&env);
    // Every header and cell, the ages on the pinned clock, delegation order within a workflow
    // (flight, hotel, car, taxi; then the next workflow), and no "more rows" line.
    let out = pinned(&env, &["inspect"]);
    assert_snapshot!(snapshot_of(&env, &out));
}

/// `TestEnv` pins the displayed clock, so every age reads `0s`; `TestEnv::real_clock` opts out
/// and the age is measured against real time.
#[test]
fn ages_read_0s_on_the_pinned_clock_and_the_real_age_without_it() {
    let three_days_ago = a2a_recover::clock::system_now() - chrono::TimeDelta::days(3);
    for (env, age) in [(TestEnv::new(), "0s"), (TestEnv::new().real_clock(), "3d")] {
        let j = Journal::open(&env.journal(), Duration::from_secs(10))
            .unwrap()
            .with_clock(Arc::new(FixedClock(three_days_ago)));
        let _ = add(&j, "w/s");
        drop(j);
        let out = env.run(["inspect"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let text = stdout(&out);
        // WORKFLOW STEP ATTEMPT AGENT STATE TASK-ID AGE …
        let row: Vec<&str> = text.lines().nth(1).unwrap().split_whitespace().collect();
        assert_eq!(row[6], age, "{text}");
    }
}

#[test]
fn json_records_carry_the_contract_fields() {
    let env = TestEnv::new();
    trip(&env);
    let out = env.run(["inspect", "trip-42/hotel", "--format", "json"]);
    assert_eq!(code(&out), 0);
    let lines = json_lines(&out);
    assert_eq!(
        lines[0],
        serde_json::json!({"type": "begin", "formatVersion": 1, "command": "inspect"})
    );
    assert_eq!(lines.len(), 2);
    let a = &lines[1];
    for field in [
        "type",
        "workflow",
        "step",
        "attempt",
        "agent",
        "state",
        "messageId",
        "contextId",
        "taskId",
        "pendingQuestion",
        "previousTaskId",
        "effect",
        "workflowState",
        "createdAt",
        "updatedAt",
    ] {
        assert!(a.get(field).is_some(), "{field} missing: {a}");
    }
    assert_eq!(a["type"], "attempt");
    assert_eq!(a["workflow"], "trip-42");
    assert_eq!(a["step"], "hotel");
    assert_eq!(a["attempt"], 1);
    assert_eq!(a["agent"], AGENT);
    assert_eq!(a["state"], "INPUT_REQUIRED");
    assert_eq!(a["taskId"], "task-hotel");
    assert_eq!(a["pendingQuestion"], "two rooms or one?");
    assert!(a["previousTaskId"].is_null());
    assert!(a["effect"].is_null());
    assert_eq!(a["workflowState"], "ACTIVE");
    assert_eq!(a["createdAt"], "2026-11-30T01:00:00.000Z");
    assert_eq!(a["statusTimestamp"], "2026-11-30T01:00:01.123456Z");
    assert_eq!(
        a["remedy"]["command"],
        "a2a-recover reply trip-42/hotel \"…\""
    );
}

#[test]
fn states_filter_case_insensitively_and_bad_ones_list_the_valid_ones() {
    let env = TestEnv::new();
    trip(&env);
    let out = env.run([
        "inspect",
        "--state",
        "input-required",
        "Uncertain",
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let steps: Vec<String> = json_lines(&out)[1..]
        .iter()
        .map(|a| a["step"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(steps, ["hotel", "car"]);
    let bad = env.run(["inspect", "--state", "finished"]);
    assert_eq!(code(&bad), 2);
    assert!(
        stderr(&bad).contains("unknown state `finished`"),
        "{}",
        stderr(&bad)
    );
    assert!(stderr(&bad).contains("INPUT_REQUIRED"), "{}", stderr(&bad));
}

#[test]
fn pending_lists_what_needs_a_human_with_its_command() {
    let env = TestEnv::new();
    trip(&env);
    // Only the hotel (reply) and the car (resolve --as resend), each with its command.
    let out = env.run(["inspect", "--pending"]);
    assert_snapshot!(snapshot_of(&env, &out));
    let json = env.run(["inspect", "--pending", "--format", "json"]);
    let records = json_lines(&json);
    assert_eq!(records.len(), 3);
    assert!(
        records[1..]
            .iter()
            .all(|r| r["remedy"]["command"].is_string())
    );
}

#[test]
fn the_table_limit_says_how_many_were_left_out() {
    let env = TestEnv::new();
    {
        let j = open(&env);
        let many: Vec<NewIntent> = (0..205).map(|i| intent(&format!("bulk/s{i:03}"))).collect();
        j.create_intents(&many).unwrap();
    }
    let table = env.run(["inspect"]);
    let text = stdout(&table);
    assert_eq!(text.lines().count(), 1 + 200 + 1, "{text}");
    assert!(
        text.lines()
            .last()
            .unwrap()
            .contains("5 more row(s) not shown"),
        "{text}"
    );
    let json = env.run(["inspect", "--format", "json"]);
    assert_eq!(json_lines(&json).len(), 1 + 205);
    let limited = env.run(["inspect", "--format", "json", "--limit", "3"]);
    assert_eq!(json_lines(&limited).len(), 1 + 3);
    let small = env.run(["inspect", "--limit", "2"]);
    assert!(stdout(&small).contains("203 more row(s)"));
}

/// A missing journal prints nothing (exit 0); an unknown WORKFLOW or STEP is a usage error
/// (exit 2) naming it, as in every other command: a typo must not look like an empty answer.
#[test]
fn unknown_targets_exit_2_and_a_missing_journal_exits_1() {
    let env = TestEnv::new();
    let out = env.run(["inspect"]);
    assert_eq!((code(&out), stdout(&out).as_str()), (1, ""));
    assert!(stderr(&out).contains("no journal at"), "{}", stderr(&out));
    assert!(!env.journal().exists(), "inspect created a journal");
    trip(&env);
    for (target, words) in [
        ("nope", "unknown workflow `nope`"),
        ("nope/step", "unknown step `nope/step`"),
        ("trip-42/nope", "unknown step `trip-42/nope`"),
    ] {
        for format in ["human", "json"] {
            let out = env.run(["inspect", target, "--format", format]);
            assert_eq!(code(&out), 2, "{target} {format}");
            assert!(stderr(&out).contains(words), "{target}: {}", stderr(&out));
        }
    }
    let bad = env.run(["inspect", "a/b/c"]);
    assert_eq!(code(&bad), 2);
}

/// `--limit 0` means no limit: every row is shown, and no "more rows" line.
#[test]
fn limit_zero_shows_every_row() {
    let env = TestEnv::new();
    trip(&env);
    let all = env.run(["inspect", "--format", "json"]);
    let rows = json_lines(&all)
        .iter()
        .filter(|r| r["type"] == "attempt")
        .count();
    assert!(rows > 1, "the fixture has several rows");
    let out = env.run(["inspect", "--limit", "0"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        !stdout(&out).contains("more row(s) not shown"),
        "{}",
        stdout(&out)
    );
    let one = env.run(["inspect", "--limit", "1"]);
    assert!(
        stdout(&one).contains("more row(s) not shown"),
        "{}",
        stdout(&one)
    );
}

#[test]
fn remote_text_is_inert_in_tables_and_data_in_json() {
    let env = TestEnv::new();
    let evil = "\u{1b}]0;pwned\u{7}rooms?\u{1b}[2J\r\u{202e}evil";
    {
        let j = open(&env);
        let a = add(&j, "w/evil");
        observe(&j, &a, "task\u{1b}[31m-red", "INPUT_REQUIRED", Some(evil));
    }
    let out = env.run(["inspect"]);
    let text = stdout(&out);
    assert!(!text.contains('\u{1b}'), "{text:?}");
    assert!(!text.contains('\u{202e}'));
    assert!(!text.contains('\r'));
    assert!(text.contains("rooms?"));
    assert!(text.contains("\\u{202e}evil"), "{text}");
    assert!(text.contains("task-red"), "{text}");
    let json = env.run(["inspect", "--format", "json"]);
    let rec = &json_lines(&json)[1];
    assert_eq!(rec["pendingQuestion"], evil);
    assert_eq!(rec["taskId"], "task\u{1b}[31m-red");
}

#[test]
fn events_show_the_history_of_a_step() {
    let env = TestEnv::new();
    trip(&env);
    let out = env.run(["inspect", "trip-42/hotel", "--events", "--format", "json"]);
    assert_eq!(code(&out), 0);
    let events: Vec<Value> = json_lines(&out)
        .into_iter()
        .filter(|v| v["type"] == "event")
        .collect();
    let kinds: Vec<(&str, &str)> = events
        .iter()
        .map(|e| (e["kind"].as_str().unwrap(), e["to"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, [("intent", "INTENT"), ("state", "INPUT_REQUIRED")]);
    assert_eq!(events[1]["from"], "INTENT");
    assert_eq!(events[1]["detail"]["question"], "two rooms or one?");
    assert_eq!(events[1]["workflow"], "trip-42");
    assert_eq!(events[1]["step"], "hotel");
    assert_eq!(events[1]["attempt"], 1);
    let table = pinned(&env, &["inspect", "trip-42/hotel", "--events"]);
    assert_snapshot!(snapshot_of(&env, &table));
    let no_step = env.run(["inspect", "trip-42", "--events"]);
    assert_eq!(code(&no_step), 2);
    assert!(stderr(&no_step).contains("--events needs a step"));
}

#[test]
fn an_empty_pending_list_says_so_on_stderr_and_keeps_stdout_empty() {
    let env = TestEnv::new();
    let j = open(&env);
    let flight = add(&j, "trip-1/flight");
    observe(&j, &flight, "task-flight", "COMPLETED", None);
    drop(j);
    let out = env.run(["inspect", "--pending"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    assert_eq!(stderr(&out).trim(), "nothing needs a human.");
    // Quiet, and JSON, say nothing beyond their records.
    let out = env.run(["-q", "inspect", "--pending"]);
    assert_eq!(stderr(&out), "");
    let out = env.run(["--format", "json", "inspect", "--pending"]);
    assert_eq!(stderr(&out), "");
    // Something pending: the table, and no such line.
    let j = open(&env);
    let hotel = add(&j, "trip-1/hotel");
    observe(
        &j,
        &hotel,
        "task-hotel",
        "INPUT_REQUIRED",
        Some("which floor?"),
    );
    drop(j);
    let out = env.run(["inspect", "--pending"]);
    assert!(stdout(&out).contains("trip-1"), "{}", stdout(&out));
    assert!(!stderr(&out).contains("nothing needs"), "{}", stderr(&out));
}
