//! Recovery against the official A2A v0.3 SDK servers (a2a-sdk 0.3.26, @a2a-js/sdk 0.3.14) over
//! HTTP+JSON (the v0.3 protobuf JSON under `/v1`), through a2a-recover's own v0.3 HTTP+JSON
//! binding: delegate → reconcile → follow to COMPLETED, ask → reply on the same task, and a
//! crash after the send (`UNCERTAIN`, nothing resent: a v0.3 agent cannot be searched); each
//! journals its binding as `HTTP+JSON` `0.3`. The cards prefer HTTP+JSON and also list JSON-RPC,
//! which a2a-recover prefers, so `delegate` forces `--binding http-json`.
//! The SDKs are installed, pinned, by `scripts/test`; a missing runtime fails the test.

use serde_json::Value;

use crate::common::commands::{crashing, delegate, reconcile, the_attempt};
use crate::common::interop::{InteropAgent, Sdk, Transport};
use crate::common::{TestEnv, code, json_lines, stderr, stdout};

/// What `delegate` is given to speak HTTP+JSON to an agent that also offers JSON-RPC.
const REST: &[&str] = &["--binding", "http-json"];

fn python() -> InteropAgent {
    Sdk::Python03 {
        transport: Transport::Rest,
    }
    .start()
}

fn js() -> InteropAgent {
    Sdk::Js03 {
        transport: Transport::Rest,
    }
    .start()
}

fn assert_rest03(row: &Value, agent: &InteropAgent) {
    assert_eq!(row["binding"], "HTTP+JSON", "{row}\n{}", agent.context());
    assert_eq!(row["protocolVersion"], "0.3", "{row}\n{}", agent.context());
}

/// delegate → reconcile → follow until COMPLETED, the artifact stored.
fn delegated_to_completed(agent: &InteropAgent) {
    let env = TestEnv::new();
    let out = delegate(&env, "w/a", &agent.url, "work:3", REST);
    assert_eq!(code(&out), 0, "{}\n{}", stderr(&out), agent.context());
    assert_rest03(&the_attempt(&env, "w/a"), agent);
    let out = reconcile(&env, &[]);
    assert!(
        [0, 3].contains(&code(&out)),
        "{}{}\n{}",
        stdout(&out),
        stderr(&out),
        agent.context()
    );
    let out = env.run(["follow", "w/a"]);
    assert_eq!(
        code(&out),
        0,
        "{}{}\n{}",
        stdout(&out),
        stderr(&out),
        agent.context()
    );
    let row = the_attempt(&env, "w/a");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    assert!(row["artifacts"].as_u64().unwrap() >= 1, "{row}");
    assert_rest03(&row, agent);
}

/// ask → reply on the same task → COMPLETED.
fn asked_and_answered(agent: &InteropAgent) {
    let env = TestEnv::new();
    let out = delegate(&env, "w/ask", &agent.url, "ask", REST);
    assert_eq!(code(&out), 0, "{}\n{}", stderr(&out), agent.context());
    let mut row = the_attempt(&env, "w/ask");
    for _ in 0..50 {
        if row["state"] == "INPUT_REQUIRED" {
            break;
        }
        let _ = reconcile(&env, &[]);
        row = the_attempt(&env, "w/ask");
    }
    assert_eq!(row["state"], "INPUT_REQUIRED", "{row}\n{}", agent.context());
    assert_eq!(row["pendingQuestion"], "two rooms or one?", "{row}");
    let task = row["taskId"].as_str().unwrap().to_owned();
    let out = env.run(["reply", "w/ask", "two"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let out = env.run(["follow", "w/ask"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "w/ask");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    assert_eq!(
        row["taskId"],
        task.as_str(),
        "the reply went to the same task"
    );
    assert_rest03(&row, agent);
}

/// A crash after the send: the agent cannot be searched, so the attempt is UNCERTAIN and
/// nothing is sent again (one send journaled, no task id taken from anywhere).
fn crash_after_send_is_uncertain(agent: &InteropAgent) {
    let env = TestEnv::new();
    let mut args = vec!["delegate", "w/x", "--agent", &agent.url, "work:2"];
    args.extend_from_slice(REST);
    crashing(&env, "after-send", &args);
    let out = reconcile(&env, &[]);
    assert_eq!(
        code(&out),
        4,
        "{}{}\n{}",
        stdout(&out),
        stderr(&out),
        agent.context()
    );
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "w/x");
    assert_eq!(row["state"], "UNCERTAIN", "{row}");
    assert!(row["taskId"].is_null(), "{row}");
    assert_rest03(&row, agent);
    let out = env.run(["inspect", "w/x", "--events", "--format", "json"]);
    let events = json_lines(&out);
    let sends = events
        .iter()
        .filter(|e| e["type"] == "event" && e["kind"] == "endpoint")
        .count();
    assert_eq!(sends, 1, "one send, nothing resent: {events:?}");
}

#[test]
fn the_python_v03_rest_agent_is_delegated_to_and_followed_to_completed() {
    delegated_to_completed(&python());
}

#[test]
fn the_js_v03_rest_agent_is_delegated_to_and_followed_to_completed() {
    delegated_to_completed(&js());
}

#[test]
fn the_python_v03_rest_agent_is_asked_and_answered_on_the_same_task() {
    asked_and_answered(&python());
}

#[test]
fn the_js_v03_rest_agent_is_asked_and_answered_on_the_same_task() {
    asked_and_answered(&js());
}

#[test]
fn a_crash_after_a_send_to_the_python_v03_rest_agent_is_uncertain() {
    crash_after_send_is_uncertain(&python());
}

#[test]
fn a_crash_after_a_send_to_the_js_v03_rest_agent_is_uncertain() {
    crash_after_send_is_uncertain(&js());
}
