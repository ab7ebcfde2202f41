//! Recovery over HTTP+JSON against agents on the official A2A SDKs (a2a-sdk 1.3.0 for Python,
//! @a2a-js/sdk 1.3.0 for JS), each started with `--http-json-only`: a card whose only interface
//! is the SDK's own HTTP+JSON (REST) handler. Against each: delegate → reconcile → follow to
//! COMPLETED; `ask` → reply on the same task; a crash after the send found by ListTasks; a
//! stream cut by a proxy, resubscribed, its artifact stored once.
//!
//! The SDKs are installed, pinned, by `scripts/test`; see `tests/common/interop.rs`.

use a2a_recover::a2a::ProtocolBinding;

use crate::common::bindings::{
    ask_then_reply_at, delegate_reconcile_follow_at, followed_through_a_cut, steps,
};
use crate::common::commands::{crashing, reconcile, the_attempt};
use crate::common::interop::{
    InteropAgent, start_js_agent_with, start_python_agent_with, tasks_in_context,
};
use crate::common::journal::artifact_texts_of;
use crate::common::{TestEnv, code, stderr, stdout};

#[derive(Debug, Clone, Copy)]
enum Sdk {
    Python,
    Js,
}

fn start(sdk: Sdk) -> InteropAgent {
    match sdk {
        Sdk::Python => start_python_agent_with(&["--http-json-only"]),
        Sdk::Js => start_js_agent_with(&["--http-json-only"]),
    }
}

/// The attempt went to the SDK's HTTP+JSON interface (the card's only one, under `/rest`).
fn assert_sent_over_http_json(row: &serde_json::Value) {
    assert!(
        row["interfaceUrl"]
            .as_str()
            .is_some_and(|u| u.ends_with("/rest")),
        "{row}"
    );
}

fn delegate_reconcile_follow(sdk: Sdk) {
    delegate_reconcile_follow_at(&start(sdk), assert_sent_over_http_json);
}

fn ask_then_reply(sdk: Sdk) {
    ask_then_reply_at(&start(sdk), assert_sent_over_http_json);
}

fn crash_after_send_is_found(sdk: Sdk) {
    let a = start(sdk);
    let env = TestEnv::new();
    let why = || a.context();
    crashing(
        &env,
        "after-send",
        &["delegate", "trip/hotel", "--agent", &a.url, "ask"],
    );
    assert_eq!(the_attempt(&env, "trip/hotel")["state"], "INTENT");
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}\n{}", stdout(&out), stderr(&out), why());
    let row = the_attempt(&env, "trip/hotel");
    assert_eq!(row["state"], "INPUT_REQUIRED", "{row}");
    assert_eq!(row["pendingQuestion"], "two rooms or one?");
    assert_sent_over_http_json(&row);
    // Nothing was resent: the context holds the one task, the one found.
    let context = row["contextId"].as_str().unwrap();
    let tasks = tasks_in_context(
        row["interfaceUrl"].as_str().unwrap(),
        ProtocolBinding::HttpJsonV1,
        context,
    );
    assert_eq!(tasks, [row["taskId"].as_str().unwrap()], "{}", why());
}

fn a_cut_stream_is_resubscribed(sdk: Sdk) {
    let a = start(sdk);
    let (env, row, _proxy) = followed_through_a_cut(&a, &[]);
    assert_sent_over_http_json(&row);
    assert_eq!(artifact_texts_of(&env.journal(), "w/s"), [steps(40)]);
}

#[test]
fn python_http_json_delegate_reconcile_follow() {
    delegate_reconcile_follow(Sdk::Python);
}

#[test]
fn js_http_json_delegate_reconcile_follow() {
    delegate_reconcile_follow(Sdk::Js);
}

#[test]
fn python_http_json_ask_then_reply() {
    ask_then_reply(Sdk::Python);
}

#[test]
fn js_http_json_ask_then_reply() {
    ask_then_reply(Sdk::Js);
}

#[test]
fn python_http_json_crash_after_send_is_found() {
    crash_after_send_is_found(Sdk::Python);
}

#[test]
fn js_http_json_crash_after_send_is_found() {
    crash_after_send_is_found(Sdk::Js);
}

#[test]
fn python_http_json_cut_stream_is_resubscribed() {
    a_cut_stream_is_resubscribed(Sdk::Python);
}

#[test]
fn js_http_json_cut_stream_is_resubscribed() {
    a_cut_stream_is_resubscribed(Sdk::Js);
}
