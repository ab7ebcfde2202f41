//! The hotel story of the demo against agents on the official A2A SDKs (Python and JS):
//! a crash after the send, a reconcile that finds the task by its context and saves the
//! question, a reconcile killed mid-way, a reply that crashes after its send, and the reconcile
//! that finds the reply in the task's history instead of sending it twice.

use std::time::Duration;

use a2a_recover::a2a::ProtocolBinding;
use a2a_recover::journal::{Journal, ReplyState, StepName};
use serde_json::Value;

use crate::common::commands::{crashing, reconcile, spawn, the_attempt};
use crate::common::interop::{
    InteropAgent, plain_endpoint, start_js_agent, start_python_agent, test_client,
};
use crate::common::{TestEnv, block_on, code, stderr, stdout};

const STEP: &str = "trip-42/hotel";

/// Reads a task with its whole history through our client.
fn task_with_history(agent_url: &str, task_id: &str) -> Value {
    block_on(async {
        let client = test_client();
        let ep = plain_endpoint(agent_url, ProtocolBinding::default());
        client.get_task(&ep, task_id, None).await.unwrap().raw
    })
}

fn hotel_story(agent: &InteropAgent) {
    let env = TestEnv::new();
    let why = || agent.context();
    crashing(
        &env,
        "after-send",
        &["delegate", STEP, "--agent", &agent.url, "ask"],
    );
    assert_eq!(the_attempt(&env, STEP)["state"], "INTENT");

    // The look finds the task by our context id, and the question is saved.
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}\n{}", stdout(&out), stderr(&out), why());
    let row = the_attempt(&env, STEP);
    assert_eq!(row["state"], "INPUT_REQUIRED", "{row}");
    assert_eq!(row["pendingQuestion"], "two rooms or one?");
    let task = row["taskId"].as_str().unwrap().to_owned();

    // A pass killed mid-way loses nothing.
    let mut child = spawn(&env, &["reconcile"]);
    child.kill().unwrap();
    let _ = child.wait();
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("two rooms or one?"),
        "{}",
        stdout(&out)
    );
    let row = the_attempt(&env, STEP);
    assert_eq!(row["pendingQuestion"], "two rooms or one?");
    assert_eq!(row["taskId"], task.as_str());

    // The answer crashes after its send; the next pass finds it in the task's history.
    crashing(&env, "after-send", &["reply", STEP, "two rooms"]);
    let out = reconcile(&env, &["--format", "json"]);
    assert_eq!(code(&out), 0, "{}{}\n{}", stdout(&out), stderr(&out), why());
    let row = the_attempt(&env, STEP);
    assert_eq!(row["state"], "COMPLETED", "{row}");
    assert_eq!(row["taskId"], task.as_str());

    let journal = Journal::open(&env.journal(), Duration::from_secs(10)).unwrap();
    let rec = journal
        .step(&StepName::parse(STEP).unwrap())
        .unwrap()
        .unwrap();
    let replies = journal.replies(rec.latest().unwrap().id).unwrap();
    assert_eq!(replies.len(), 1);
    assert_eq!(replies[0].state, ReplyState::Delivered);
    let history = task_with_history(&agent.url, &task);
    let times = history["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["messageId"] == replies[0].message_id.as_str())
        .count();
    assert_eq!(
        times, 1,
        "the reply reached the agent {times} times: {history}"
    );
    assert!(
        history["status"]["state"]
            .as_str()
            .is_some_and(|s| s.ends_with("COMPLETED")),
        "{history}"
    );
}

#[test]
fn the_hotel_story_against_the_official_python_agent() {
    hotel_story(&start_python_agent());
}

#[test]
fn the_hotel_story_against_the_official_js_agent() {
    hotel_story(&start_js_agent());
}
