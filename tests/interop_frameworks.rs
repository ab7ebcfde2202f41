//! The frameworks users deploy, in CI: the LangGraph Agent Server (langgraph-api 0.16.7, a
//! deterministic graph that calls `interrupt()`) and fasta2a 2.1.1 (a deterministic worker),
//! both installed pinned by `scripts/test`. Each test fails, never skips, when its runtime is
//! missing.
//!
//! The stories: delegate → COMPLETED with the result recorded; LangGraph's interrupt (an
//! artifact `Interrupt` whose part is a data part) shown in `reconcile`, `inspect --pending` and
//! the `attempt` record, and answered by `reply`; a crash after the send found or `UNCERTAIN`,
//! never resent; fasta2a's data-part artifact reaching the artifact variables as JSON.

use a2a_recover::a2a::ProtocolBinding;
use serde_json::Value;

use crate::common::commands::{crashing, delegate, reconcile, settle, the_attempt};
use crate::common::interop::{
    InteropAgent, plain_endpoint, start_fasta2a_agent, start_langgraph_agent, test_client,
};
use crate::common::journal::artifact_texts_of;
use crate::common::{TestEnv, block_on, code, stderr, stdout};

/// Reads a task with its last 10 history messages (LangGraph refuses more) through our client,
/// at the attempt's interface.
fn task_with_history(row: &Value, task_id: &str) -> Value {
    let url = row["interfaceUrl"].as_str().expect("an interface URL");
    block_on(async {
        let ep = plain_endpoint(url, ProtocolBinding::default());
        test_client()
            .get_task(&ep, task_id, Some(10))
            .await
            .unwrap()
            .raw
    })
}

/// Delegates `step` to the agent, asserts that the send went through, and returns the exit code
/// of `reconcile` once nothing is left to wait for.
fn delegated(env: &TestEnv, agent: &InteropAgent, step: &str, text: &str, extra: &[&str]) -> i32 {
    let out = delegate(env, step, &agent.url, text, extra);
    assert_eq!(
        code(&out),
        0,
        "{}{}\n{}",
        stdout(&out),
        stderr(&out),
        agent.context()
    );
    settle(env)
}

/// delegate → COMPLETED with the agent's answer recorded as an artifact.
fn completes_with_the_result_recorded(agent: &InteropAgent, answer: &str) {
    let env = TestEnv::new();
    assert_eq!(
        delegated(&env, agent, "w/hello", "hello", &[]),
        0,
        "{}",
        agent.context()
    );
    let row = the_attempt(&env, "w/hello");
    assert_eq!(row["state"], "COMPLETED", "{row}\n{}", agent.context());
    let texts = artifact_texts_of(&env.journal(), "w/hello");
    assert!(texts.iter().any(|t| t == answer), "{texts:?}");
}

/// A crash right after the send: the next pass finds the task (or says `UNCERTAIN`), and the
/// message never reaches the agent twice.
fn a_crash_after_the_send_is_found_and_never_resent(agent: &InteropAgent) {
    let env = TestEnv::new();
    crashing(
        &env,
        "after-send",
        &["delegate", "w/crash", "--agent", &agent.url, "hello"],
    );
    assert_eq!(the_attempt(&env, "w/crash")["state"], "INTENT");
    let code = settle(&env);
    let row = the_attempt(&env, "w/crash");
    let state = row["state"].as_str().unwrap();
    if state == "UNCERTAIN" {
        assert_eq!(code, 4, "{row}");
        return;
    }
    assert_eq!(state, "COMPLETED", "{row}\n{}", agent.context());
    let task = task_with_history(&row, row["taskId"].as_str().unwrap());
    let times = task["history"].as_array().map_or(0, |h| {
        h.iter()
            .filter(|m| m["messageId"] == row["messageId"])
            .count()
    });
    assert!(
        times <= 1,
        "the message reached the agent {times} times: {task}"
    );
}

#[test]
fn langgraph_delegate_completes_with_the_result_recorded() {
    completes_with_the_result_recorded(&start_langgraph_agent(), "done: hello");
}

#[test]
fn fasta2a_delegate_completes_with_the_result_recorded() {
    completes_with_the_result_recorded(&start_fasta2a_agent(), "done: hello");
}

#[test]
fn langgraph_a_crash_after_the_send_is_found_or_uncertain_never_resent() {
    a_crash_after_the_send_is_found_and_never_resent(&start_langgraph_agent());
}

#[test]
fn fasta2a_a_crash_after_the_send_is_found_or_uncertain_never_resent() {
    a_crash_after_the_send_is_found_and_never_resent(&start_fasta2a_agent());
}

/// LangGraph's interrupt comes as an artifact `Interrupt` whose part is a data part
/// `{"id": …, "value": "two rooms or one?"}`: its question appears in `reconcile`,
/// `inspect --pending` and the `attempt` record, and `reply` completes the graph.
#[test]
fn langgraph_an_interrupt_is_shown_and_reply_completes_the_graph() {
    let agent = start_langgraph_agent();
    let why = || agent.context();
    let env = TestEnv::new();
    let out = delegate(
        &env,
        "trip/hotel",
        &agent.url,
        "please ask about rooms",
        &[],
    );
    assert_eq!(code(&out), 0, "{}{}\n{}", stdout(&out), stderr(&out), why());

    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}\n{}", stdout(&out), stderr(&out), why());
    assert!(
        stdout(&out).contains("\"two rooms or one?\""),
        "{}",
        stdout(&out)
    );
    let out = env.run(["inspect", "--pending"]);
    assert!(
        stdout(&out).contains("two rooms or one?"),
        "{}",
        stdout(&out)
    );
    let row = the_attempt(&env, "trip/hotel");
    assert_eq!(row["state"], "INPUT_REQUIRED", "{row}");
    assert_eq!(row["pendingQuestion"], "two rooms or one?", "{row}");
    assert_eq!(
        row["pendingQuestionData"]["value"], "two rooms or one?",
        "{row}"
    );
    assert!(row["pendingQuestionData"]["id"].is_string(), "{row}");
    let out = env.run(["inspect", "trip/hotel"]);
    assert!(
        stdout(&out).contains("\n      \"value\": \"two rooms or one?\""),
        "the data part as indented JSON: {}",
        stdout(&out)
    );

    let out = env.run(["reply", "trip/hotel", "one room"]);
    assert_eq!(code(&out), 0, "{}{}\n{}", stdout(&out), stderr(&out), why());
    assert_eq!(settle(&env), 0, "{}", why());
    let row = the_attempt(&env, "trip/hotel");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    assert_eq!(row["pendingQuestion"], Value::Null, "{row}");
    let texts = artifact_texts_of(&env.journal(), "trip/hotel");
    assert!(texts.iter().any(|t| t == "booked: one room"), "{texts:?}");
}

/// fasta2a asks only in its history (no status message) and answers the reply with a new task
/// in the same context: the question is shown and the reply completes the continuation.
#[test]
fn fasta2a_a_question_in_history_is_shown_and_reply_completes_it() {
    let agent = start_fasta2a_agent();
    let env = TestEnv::new();
    assert_eq!(
        delegated(&env, &agent, "trip/hotel", "please ask about rooms", &[]),
        4,
        "{}",
        agent.context()
    );
    let row = the_attempt(&env, "trip/hotel");
    assert_eq!(row["pendingQuestion"], "two rooms or one?", "{row}");
    let out = env.run(["reply", "trip/hotel", "one room"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(settle(&env), 0, "{}", agent.context());
    let row = the_attempt(&env, "trip/hotel");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    assert!(row["continuationTaskId"].is_string(), "{row}");
}

/// A data-part artifact (`booking`, `{"ref": "H-1", "nights": 2}`) reaches the artifact
/// variable of a verification command as compact JSON, as `{artifact:booking}` gives it.
#[test]
fn fasta2a_a_data_part_artifact_reaches_the_artifact_variables_as_json() {
    let agent = start_fasta2a_agent();
    let env = TestEnv::new();
    let file = env.path().join("booking.json");
    let verify = format!("printf %s \"$A2A_ARTIFACT_BOOKING\" > '{}'", file.display());
    let extra = [
        "--effect",
        "--compensate-cmd",
        "true",
        "--verify-cmd",
        &verify,
    ];
    assert_eq!(
        delegated(&env, &agent, "trip/booking", "give data", &extra),
        0,
        "{}",
        agent.context()
    );
    let row = the_attempt(&env, "trip/booking");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    assert_eq!(row["effect"], "verified", "{row}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        r#"{"nights":2,"ref":"H-1"}"#
    );
}
