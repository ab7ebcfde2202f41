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
    // Every header and cell (`--wide`: every column), the ages on the pinned clock, delegation
    // order within a workflow (flight, hotel, car, taxi; then the next workflow), and no "more
    // rows" line.
    let out = pinned(&env, &["inspect", "--wide"]);
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
        let out = env.run(["inspect", "w"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let text = stdout(&out);
        // STEP # STATE TASK AGE …
        let row: Vec<&str> = text.lines().nth(1).unwrap().split_whitespace().collect();
        assert_eq!(row[4], age, "{text}");
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
    let table = env.run(["inspect", "bulk"]);
    let text = stdout(&table);
    assert_eq!(text.lines().count(), 1 + 200 + 1, "{text}");
    assert!(
        text.lines()
            .last()
            .unwrap()
            .contains("5 more row(s) not shown"),
        "{text}"
    );
    // With no argument, JSON still lists every attempt, then the one workflow.
    let json = env.run(["inspect", "--format", "json"]);
    assert_eq!(json_lines(&json).len(), 1 + 205 + 1);
    let limited = env.run(["inspect", "bulk", "--format", "json", "--limit", "3"]);
    assert_eq!(json_lines(&limited).len(), 1 + 3);
    let small = env.run(["inspect", "bulk", "--limit", "2"]);
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
    let out = env.run(["inspect", "trip-42", "--limit", "0"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        !stdout(&out).contains("more row(s) not shown"),
        "{}",
        stdout(&out)
    );
    let one = env.run(["inspect", "trip-42", "--limit", "1"]);
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
    let out = env.run(["inspect", "w", "--wide"]);
    let text = stdout(&out);
    assert!(!text.contains('\u{1b}'), "{text:?}");
    assert!(!text.contains('\u{202e}'));
    assert!(!text.contains('\r'));
    assert_snapshot!("remote_text_inert_wide", snapshot_of(&env, &out));
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

/// The trip, with a LOST step the operator resolved, an effect, and a second agent.
fn views_journal(env: &TestEnv) {
    trip(env);
    let j = open(env);
    let train = add(&j, "trip-42/train");
    observe(
        &j,
        &train,
        "0b6e2a9c-6f1d-4a57-9d0e-3f8a1c2b4d5e",
        "COMPLETED",
        None,
    );
    let bus = add(&j, "trip-42/bus");
    observe(&j, &bus, "task-bus", "WORKING", None);
    j.mark_lost(bus.id, "the agent no longer knows the task")
        .unwrap();
    j.decide(
        bus.id,
        &a2a_recover::journal::Decision::Done,
        "checked by phone",
    )
    .unwrap();
}

fn at_width(env: &TestEnv, columns: &str, args: &[&str]) -> std::process::Output {
    env.cmd()
        .env("A2A_RECOVER_TEST_NOW", "2026-11-30T01:05:00Z")
        .env("COLUMNS", columns)
        .args(args)
        .output()
        .unwrap()
}

/// Every line of `text` fits `width` columns.
fn assert_fits(text: &str, width: usize) {
    for line in text.lines() {
        assert!(
            line.chars().count() <= width,
            "a line is wider than {width}: {line:?}\n{text}"
        );
    }
}

/// The narrow layout fits 80 columns (short task ids, the outcome cut to fit), keeps a
/// resolved LOST step from reading plain `LOST`, and at 200 columns shows the outcomes whole.
#[test]
fn the_attempts_table_fits_80_columns_and_shows_resolutions() {
    let env = TestEnv::new();
    views_journal(&env);
    let narrow = at_width(&env, "80", &["inspect", "trip-42"]);
    assert_eq!(code(&narrow), 0, "{}", stderr(&narrow));
    assert_fits(&stdout(&narrow), 80);
    assert!(stdout(&narrow).contains("0b6e2a9c…"), "{}", stdout(&narrow));
    assert!(
        stdout(&narrow).contains("LOST (resolved: done)"),
        "{}",
        stdout(&narrow)
    );
    assert_snapshot!("attempts_80", snapshot_of(&env, &narrow));
    let wide = at_width(&env, "200", &["inspect", "trip-42"]);
    assert_fits(&stdout(&wide), 200);
    assert_snapshot!("attempts_200", snapshot_of(&env, &wide));
    // `--wide`: every column, whole task ids, whatever the width.
    let all = at_width(&env, "80", &["inspect", "trip-42", "--wide"]);
    let text = stdout(&all);
    assert!(
        text.contains("0b6e2a9c-6f1d-4a57-9d0e-3f8a1c2b4d5e"),
        "{text}"
    );
    assert!(text.contains("AGENT"), "{text}");
}

/// `--pending` at 80 columns: the commands are printed whole, each on its own line.
#[test]
fn pending_commands_are_never_split_at_80_columns() {
    let env = TestEnv::new();
    views_journal(&env);
    let out = at_width(&env, "80", &["inspect", "--pending"]);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    for command in [
        r#"a2a-recover reply trip-42/hotel "…""#,
        r#"a2a-recover resolve trip-42/car --as resend|abandoned|done --reason "…""#,
    ] {
        assert!(
            lines.iter().any(|l| l.trim() == command),
            "`{command}` is not on a line of its own:\n{text}"
        );
    }
    // The resolved bus needs no one.
    assert!(!text.contains("trip-42/bus"), "{text}");
    assert_snapshot!("pending_80", snapshot_of(&env, &out));
}

/// No argument: the workflows, each with its steps counted by state, at 80 and 200 columns;
/// in JSON every `attempt` record still, then one `workflow` record per workflow.
#[test]
fn no_argument_lists_the_workflows_with_counts_per_state() {
    let env = TestEnv::new();
    views_journal(&env);
    let narrow = at_width(&env, "80", &["inspect"]);
    assert_eq!(code(&narrow), 0, "{}", stderr(&narrow));
    assert_fits(&stdout(&narrow), 80);
    assert_snapshot!("workflows_80", snapshot_of(&env, &narrow));
    let wide = at_width(&env, "200", &["inspect"]);
    assert_snapshot!("workflows_200", snapshot_of(&env, &wide));
    let text = stdout(&wide);
    assert!(
        text.contains("1 COMPLETED") || text.contains("2 COMPLETED"),
        "{text}"
    );
    let json = json_lines(&env.run(["inspect", "--format", "json"]));
    let attempts = json.iter().filter(|r| r["type"] == "attempt").count();
    assert_eq!(attempts, 7);
    let workflows: Vec<&Value> = json.iter().filter(|r| r["type"] == "workflow").collect();
    assert_eq!(workflows.len(), 2);
    let trip = workflows
        .iter()
        .find(|w| w["workflow"] == "trip-42")
        .unwrap();
    assert_eq!(trip["steps"], 6);
    assert_eq!(trip["states"]["COMPLETED"], 2);
    assert_eq!(trip["states"]["LOST"], 1);
    assert_eq!(trip["needsHuman"], 2);
    assert_eq!(trip["resolved"], 1);
    assert_eq!(trip["state"], "ACTIVE");
    // A filter lists attempts again, across every workflow.
    let filtered = json_lines(&env.run(["inspect", "--state", "working", "--format", "json"]));
    assert!(filtered.iter().all(|r| r["type"] != "workflow"));
}

/// `inspect WORKFLOW/STEP`: every id whole, the full question, absolute times, the operator's
/// decision, and the events with their times; within 80 columns.
#[test]
fn a_step_shows_in_full_with_times_and_events() {
    let env = TestEnv::new();
    views_journal(&env);
    let long_question = format!("{} — two rooms or one?", "a very long question ".repeat(6));
    {
        let j = open(&env);
        let spa = add(&j, "trip-42/spa");
        observe(&j, &spa, "task-spa", "INPUT_REQUIRED", Some(&long_question));
    }
    let out = at_width(&env, "80", &["inspect", "trip-42/spa"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains(&long_question), "{}", stdout(&out));
    assert_snapshot!("step_question_80", snapshot_of(&env, &out));
    let bus = at_width(&env, "80", &["inspect", "trip-42/bus"]);
    let text = stdout(&bus);
    assert!(
        text.contains("resolution: done: checked by phone"),
        "{text}"
    );
    assert_snapshot!("step_80", snapshot_of(&env, &bus));
}

/// `--agent`, `--since`, `--until` and `--unresolved` narrow the attempts.
#[test]
fn filters_by_agent_age_and_resolution() {
    let env = TestEnv::new();
    views_journal(&env);
    {
        let j = Journal::open(&env.journal(), Duration::from_secs(10))
            .unwrap()
            .with_clock(Arc::new(FixedClock(t0() + chrono::TimeDelta::hours(2))));
        let mut late = intent("later/one");
        late.spec = StepSpec::to_agent(
            StepName::parse("later/one").unwrap(),
            "do it",
            "http://127.0.0.1:8002/.well-known/agent-card.json",
        );
        late.agent_url = Some("http://127.0.0.1:8002/.well-known/agent-card.json".to_owned());
        j.create_intents(&[late]).unwrap();
    }
    let steps = |args: &[&str]| -> Vec<String> {
        let mut full = vec!["inspect", "--format", "json"];
        full.extend(args);
        let out = env
            .cmd()
            .env("A2A_RECOVER_TEST_NOW", "2026-11-30T03:05:00Z")
            .args(&full)
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        json_lines(&out)
            .iter()
            .filter(|r| r["type"] == "attempt")
            .map(|r| {
                format!(
                    "{}/{}",
                    r["workflow"].as_str().unwrap(),
                    r["step"].as_str().unwrap()
                )
            })
            .collect()
    };
    assert_eq!(steps(&["--agent", "http://127.0.0.1:8002"]), ["later/one"]);
    assert_eq!(steps(&["--agent", "http://127.0.0.1:8002/"]), ["later/one"]);
    assert_eq!(steps(&["--since", "1h"]), ["later/one"]);
    assert_eq!(steps(&["--since", "3h"]).len(), 8);
    // Compound durations and RFC 3339 times, on both ends.
    assert_eq!(steps(&["--since", "1h30m"]), ["later/one"]);
    assert_eq!(steps(&["--since", "2026-11-30T02:30:00Z"]), ["later/one"]);
    let earlier = steps(&["--until", "2026-11-30T02:00:00Z"]);
    assert_eq!(earlier.len(), 7, "{earlier:?}");
    assert!(!earlier.contains(&"later/one".to_owned()));
    assert_eq!(steps(&["--until", "1h"]), earlier);
    assert!(steps(&["--since", "1h", "--until", "2026-11-30T02:00:00Z"]).is_empty());
    // `-o` is `--format`.
    let short = env
        .cmd()
        .env("A2A_RECOVER_TEST_NOW", "2026-11-30T03:05:00Z")
        .args(["inspect", "-o", "json", "--since", "1h"])
        .output()
        .unwrap();
    assert_eq!(code(&short), 0, "{}", stderr(&short));
    let attempts = json_lines(&short)
        .into_iter()
        .filter(|r| r["type"] == "attempt")
        .count();
    assert_eq!(attempts, 1, "{}", stdout(&short));
    let unresolved = steps(&["--unresolved"]);
    assert_eq!(unresolved.len(), 7);
    assert!(!unresolved.contains(&"trip-42/bus".to_owned()));
    let bad = env.run(["inspect", "--agent", "ftp://x"]);
    assert_eq!(code(&bad), 2, "{}", stderr(&bad));
    let bad = env.run(["inspect", "--since", "soon"]);
    assert_eq!(code(&bad), 2, "{}", stderr(&bad));
}

/// `--color always` colours the states in tables (not only logs); `never` and the default
/// when piped print none.
#[test]
fn color_always_colours_the_states_in_tables() {
    let env = TestEnv::new();
    views_journal(&env);
    let coloured = env
        .cmd()
        .env_remove("NO_COLOR")
        .args(["--color", "always", "inspect", "trip-42"])
        .output()
        .unwrap();
    let text = stdout(&coloured);
    assert!(text.contains("\u{1b}["), "{text:?}");
    for args in [
        &["--color", "never", "inspect", "trip-42"][..],
        &["inspect", "trip-42"],
    ] {
        let plain = env
            .cmd()
            .env_remove("NO_COLOR")
            .args(args)
            .output()
            .unwrap();
        assert!(!stdout(&plain).contains('\u{1b}'), "{args:?}");
    }
}

/// `args` at `columns` on a real terminal (stdout a pty of that width; `COLUMNS` says another
/// width, which the terminal's overrides).
fn on_terminal(env: &TestEnv, columns: u16, colour: bool, args: &[&str]) -> std::process::Output {
    let mut cmd = env.std_cmd();
    cmd.env("A2A_RECOVER_TEST_NOW", "2026-11-30T01:05:00Z")
        .env("COLUMNS", "120")
        .args(args);
    if colour {
        cmd.env_remove("NO_COLOR");
    }
    crate::common::pty::run_on_terminal(cmd, columns)
}

/// What a terminal showed, as a pipe shows it: colours and the rule under the header gone.
fn as_piped(text: &str) -> String {
    let plain = regex::Regex::new("\u{1b}\\[[0-9;]*m")
        .unwrap()
        .replace_all(text, "")
        .into_owned();
    let mut text = String::new();
    for line in plain.lines().filter(|l| !l.starts_with('─')) {
        text.push_str(line);
        text.push('\n');
    }
    text
}

/// One layout: at 80 and 200 columns, a terminal shows the same columns and the same cut cells
/// as a pipe (the question of a pending step included), only a rule under the header and
/// colours added; `--color always` on a pipe keeps the columns too.
#[test]
fn a_terminal_and_a_pipe_show_the_same_columns() {
    let env = TestEnv::new();
    views_journal(&env);
    for (columns, args, name) in [
        (80, &["inspect", "--pending"][..], "pending"),
        (80, &["inspect", "trip-42"], "attempts"),
        (200, &["inspect", "trip-42"], "attempts"),
        (80, &["inspect"], "workflows"),
        (200, &["inspect"], "workflows"),
    ] {
        let width = columns.to_string();
        let piped = at_width(&env, &width, args);
        let tty = on_terminal(&env, columns, false, args);
        assert_eq!(code(&tty), 0, "{}", stderr(&tty));
        assert_fits(&stdout(&tty), usize::from(columns));
        assert_eq!(
            as_piped(&stdout(&tty)),
            stdout(&piped),
            "{args:?} at {columns}"
        );
        assert_snapshot!(
            format!("{name}_{columns}_terminal"),
            snapshot_of(&env, &tty)
        );
        let coloured = on_terminal(&env, columns, true, args);
        assert!(stdout(&coloured).contains('\u{1b}'), "{args:?}");
        assert_eq!(as_piped(&stdout(&coloured)), stdout(&piped), "{args:?}");
        let always = env
            .cmd()
            .env("A2A_RECOVER_TEST_NOW", "2026-11-30T01:05:00Z")
            .env("COLUMNS", &width)
            .args(["--color", "always"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(as_piped(&stdout(&always)), stdout(&piped), "{args:?}");
    }
    let tty = on_terminal(&env, 80, false, &["inspect", "--pending"]);
    assert!(
        stdout(&tty).contains("two rooms or one?"),
        "{}",
        stdout(&tty)
    );
}

/// A workflow whose steps all completed stays ACTIVE, and says it is done: `ACTIVE (done)` in
/// the workflows table, a line under its attempts.
#[test]
fn a_workflow_whose_steps_all_completed_says_it_is_done() {
    let env = TestEnv::new();
    views_journal(&env);
    let j = open(&env);
    for step in ["home/keys", "home/door"] {
        let a = add(&j, step);
        observe(&j, &a, &format!("task-{step}"), "COMPLETED", None);
    }
    let list = stdout(&env.run(["inspect"]));
    let home = list.lines().find(|l| l.starts_with("home")).unwrap();
    assert!(home.contains("ACTIVE (done)"), "{list}");
    let trip = list.lines().find(|l| l.starts_with("trip-42")).unwrap();
    assert!(!trip.contains("(done)"), "{list}");
    let one = stdout(&env.run(["inspect", "home"]));
    assert!(
        one.contains("workflow home is done: every step is COMPLETED."),
        "{one}"
    );
    let other = stdout(&env.run(["inspect", "trip-42"]));
    assert!(!other.contains("is done"), "{other}");
    let filtered = stdout(&env.run(["inspect", "home", "--state", "completed"]));
    assert!(!filtered.contains("is done"), "{filtered}");
}
