//! Recovery against the official A2A v0.3 SDK servers (a2a-sdk 0.3.26, @a2a-js/sdk 0.3.14),
//! through a2a-recover's own v0.3 bindings, over JSON-RPC and over HTTP+JSON (the v0.3 protobuf
//! JSON under `/v1`): delegate → reconcile → follow to COMPLETED, ask → reply on the same task,
//! a crash after the send (`UNCERTAIN`, nothing resent: a v0.3 agent cannot be searched), a
//! follow whose stream a proxy cuts mid-task (resubscribed, the artifact stored once), and a
//! reply crashed after its send (found in the task's history, delivered);
//! each journals its binding (`JSONRPC` or `HTTP+JSON`, `0.3`). The cards also list the other
//! binding; a2a-recover prefers JSON-RPC, so the HTTP+JSON runs force `--binding http-json`.
//! The SDKs are installed, pinned, by `scripts/test`; a missing runtime fails the test.

use serde_json::Value;

use crate::common::bindings::{followed_through_a_cut, steps};
use crate::common::commands::{crashing, delegate, reconcile, the_attempt};
use crate::common::journal::artifact_texts_of;
use a2a_recover::a2a::ProtocolBinding;

use crate::common::interop::{InteropAgent, Sdk, Transport, plain_endpoint, test_client};
use crate::common::{TestEnv, block_on, code, json_lines, stderr, stdout};

/// An official v0.3 agent, and the binding a2a-recover is to speak to it.
struct Peer {
    agent: InteropAgent,
    transport: Transport,
}

impl Peer {
    fn python(transport: Transport) -> Self {
        let agent = Sdk::Python03 { transport }.start();
        Self { agent, transport }
    }

    fn js(transport: Transport) -> Self {
        let agent = Sdk::Js03 { transport }.start();
        Self { agent, transport }
    }

    /// What `delegate` is given: HTTP+JSON must be forced (the card also lists JSON-RPC).
    fn args(&self) -> &'static [&'static str] {
        match self.transport {
            Transport::JsonRpc => &[],
            Transport::Rest => &["--binding", "http-json"],
        }
    }

    fn assert_binding(&self, row: &Value) {
        let binding = match self.transport {
            Transport::JsonRpc => "JSONRPC",
            Transport::Rest => "HTTP+JSON",
        };
        let context = self.agent.context();
        assert_eq!(row["binding"], binding, "{row}\n{context}");
        assert_eq!(row["protocolVersion"], "0.3", "{row}\n{context}");
    }
}

/// delegate → reconcile → follow until COMPLETED, the artifact stored.
fn delegated_to_completed(peer: &Peer) {
    let env = TestEnv::new();
    let out = delegate(&env, "w/a", &peer.agent.url, "work:3", peer.args());
    assert_eq!(code(&out), 0, "{}\n{}", stderr(&out), peer.agent.context());
    peer.assert_binding(&the_attempt(&env, "w/a"));
    let out = reconcile(&env, &[]);
    assert!(
        [0, 3].contains(&code(&out)),
        "{}{}\n{}",
        stdout(&out),
        stderr(&out),
        peer.agent.context()
    );
    let out = env.run(["follow", "w/a"]);
    assert_eq!(
        code(&out),
        0,
        "{}{}\n{}",
        stdout(&out),
        stderr(&out),
        peer.agent.context()
    );
    let row = the_attempt(&env, "w/a");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    assert!(row["artifacts"].as_u64().unwrap() >= 1, "{row}");
    peer.assert_binding(&row);
}

/// Delegates `ask` to the agent as `w/ask` and reconciles until it asks; returns the attempt.
fn asked(env: &TestEnv, peer: &Peer) -> Value {
    let out = delegate(env, "w/ask", &peer.agent.url, "ask", peer.args());
    assert_eq!(code(&out), 0, "{}\n{}", stderr(&out), peer.agent.context());
    let mut row = the_attempt(env, "w/ask");
    for _ in 0..50 {
        if row["state"] == "INPUT_REQUIRED" {
            break;
        }
        let _ = reconcile(env, &[]);
        row = the_attempt(env, "w/ask");
    }
    assert_eq!(
        row["state"],
        "INPUT_REQUIRED",
        "{row}\n{}",
        peer.agent.context()
    );
    row
}

/// ask → reply on the same task → COMPLETED.
fn asked_and_answered(peer: &Peer) {
    let env = TestEnv::new();
    let row = asked(&env, peer);
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
    peer.assert_binding(&row);
}

/// A reply whose process died after its send: the next pass finds it in the task's history
/// (asked for with an explicit `historyLength`: @a2a-js/sdk 0.3.14 sends none without one), so
/// it is delivered, not `UNCERTAIN`, and the task completes.
fn reply_crashed_after_its_send_is_found(peer: &Peer) {
    let env = TestEnv::new();
    asked(&env, peer);
    crashing(&env, "after-send", &["reply", "w/ask", "two"]);
    let out = reconcile(&env, &["--format", "json"]);
    assert_eq!(
        code(&out),
        0,
        "{}{}\n{}",
        stdout(&out),
        stderr(&out),
        peer.agent.context()
    );
    let lines = json_lines(&out);
    let reply = lines
        .iter()
        .find(|l| l["type"] == "action" && l["action"] == "reply")
        .unwrap_or_else(|| panic!("no reply action: {lines:?}"));
    assert_eq!(reply["outcome"], "DELIVERED", "{reply}");
    let row = the_attempt(&env, "w/ask");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    peer.assert_binding(&row);
}

/// A crash after the send: the agent cannot be searched, so the attempt is UNCERTAIN and
/// nothing is sent again (one send journaled, no task id taken from anywhere).
fn crash_after_send_is_uncertain(peer: &Peer) {
    let env = TestEnv::new();
    let mut args = vec!["delegate", "w/x", "--agent", &peer.agent.url, "work:2"];
    args.extend_from_slice(peer.args());
    crashing(&env, "after-send", &args);
    let out = reconcile(&env, &[]);
    assert_eq!(
        code(&out),
        4,
        "{}{}\n{}",
        stdout(&out),
        stderr(&out),
        peer.agent.context()
    );
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "w/x");
    assert_eq!(row["state"], "UNCERTAIN", "{row}");
    assert!(row["taskId"].is_null(), "{row}");
    peer.assert_binding(&row);
    let out = env.run(["inspect", "w/x", "--events", "--format", "json"]);
    let events = json_lines(&out);
    let sends = events
        .iter()
        .filter(|e| e["type"] == "event" && e["kind"] == "endpoint")
        .count();
    assert_eq!(sends, 1, "one send, nothing resent: {events:?}");
}

/// A follow whose stream a proxy cuts mid-task resubscribes (`tasks/resubscribe`) and ends
/// COMPLETED, the artifact stored once, as the agent holds it (its `tasks/get`).
///
/// The JS SDK holds the artifact whole. a2a-sdk 0.3.26 does not: while a `tasks/resubscribe`
/// stream is open, its server applies each appended chunk to its own task store twice (the
/// resubscription's consumer and the original send's both save every event), so its
/// `tasks/get` doubles every chunk after the resubscription; the journal holds what the agent
/// holds (the final `tasks/get` is authoritative), every step in order.
fn a_cut_stream_is_resubscribed(peer: &Peer, store_doubles_chunks: bool) {
    let (env, row, _proxy) = followed_through_a_cut(&peer.agent, peer.args());
    peer.assert_binding(&row);
    let stored = artifact_texts_of(&env.journal(), "w/s");
    assert_eq!(
        stored,
        [peer.artifact_text(&row)],
        "the agent's own tasks/get"
    );
    let mut seen: Vec<&str> = stored[0].lines().collect();
    let held = seen.len();
    seen.dedup();
    assert_eq!(seen.join("\n") + "\n", steps(40), "every step, in order");
    if store_doubles_chunks {
        assert!(held > 40, "the SDK's store doubled no chunk: {stored:?}");
    } else {
        assert_eq!(held, 40, "{stored:?}");
    }
}

impl Peer {
    /// The text of the artifact the agent holds for the attempt's task, read with our client.
    fn artifact_text(&self, row: &Value) -> String {
        let binding = match self.transport {
            Transport::JsonRpc => ProtocolBinding::JsonRpcV03,
            Transport::Rest => ProtocolBinding::HttpJsonV03,
        };
        let ep = plain_endpoint(row["interfaceUrl"].as_str().unwrap(), binding);
        let task_id = row["taskId"].as_str().unwrap();
        let task = block_on(test_client().get_task(&ep, task_id, Some(0))).unwrap();
        let task = serde_json::to_value(&task.value).unwrap();
        let artifacts = task["artifacts"].as_array().unwrap();
        assert_eq!(artifacts.len(), 1, "{task}");
        artifacts[0]["parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["text"].as_str().unwrap())
            .collect()
    }
}

#[test]
fn a_cut_stream_of_the_python_v03_agent_is_resubscribed() {
    a_cut_stream_is_resubscribed(&Peer::python(Transport::JsonRpc), true);
}

#[test]
fn a_cut_stream_of_the_js_v03_agent_is_resubscribed() {
    a_cut_stream_is_resubscribed(&Peer::js(Transport::JsonRpc), false);
}

#[test]
fn a_cut_stream_of_the_python_v03_rest_agent_is_resubscribed() {
    a_cut_stream_is_resubscribed(&Peer::python(Transport::Rest), true);
}

#[test]
fn a_cut_stream_of_the_js_v03_rest_agent_is_resubscribed() {
    a_cut_stream_is_resubscribed(&Peer::js(Transport::Rest), false);
}

#[test]
fn the_python_v03_agent_is_delegated_to_and_followed_to_completed() {
    delegated_to_completed(&Peer::python(Transport::JsonRpc));
}

#[test]
fn the_python_v03_agent_is_asked_and_answered_on_the_same_task() {
    asked_and_answered(&Peer::python(Transport::JsonRpc));
}

#[test]
fn a_crash_after_a_send_to_the_python_v03_agent_is_uncertain() {
    crash_after_send_is_uncertain(&Peer::python(Transport::JsonRpc));
}

#[test]
fn the_python_v03_rest_agent_is_delegated_to_and_followed_to_completed() {
    delegated_to_completed(&Peer::python(Transport::Rest));
}

#[test]
fn the_python_v03_rest_agent_is_asked_and_answered_on_the_same_task() {
    asked_and_answered(&Peer::python(Transport::Rest));
}

#[test]
fn a_crash_after_a_send_to_the_python_v03_rest_agent_is_uncertain() {
    crash_after_send_is_uncertain(&Peer::python(Transport::Rest));
}

#[test]
fn the_js_v03_agent_is_delegated_to_and_followed_to_completed() {
    delegated_to_completed(&Peer::js(Transport::JsonRpc));
}

#[test]
fn the_js_v03_agent_is_asked_and_answered_on_the_same_task() {
    asked_and_answered(&Peer::js(Transport::JsonRpc));
}

#[test]
fn a_crash_after_a_send_to_the_js_v03_agent_is_uncertain() {
    crash_after_send_is_uncertain(&Peer::js(Transport::JsonRpc));
}

#[test]
fn the_js_v03_rest_agent_is_delegated_to_and_followed_to_completed() {
    delegated_to_completed(&Peer::js(Transport::Rest));
}

#[test]
fn the_js_v03_rest_agent_is_asked_and_answered_on_the_same_task() {
    asked_and_answered(&Peer::js(Transport::Rest));
}

#[test]
fn a_crash_after_a_send_to_the_js_v03_rest_agent_is_uncertain() {
    crash_after_send_is_uncertain(&Peer::js(Transport::Rest));
}

#[test]
fn a_reply_crashed_after_its_send_to_the_python_v03_agent_is_found() {
    reply_crashed_after_its_send_is_found(&Peer::python(Transport::JsonRpc));
}

#[test]
fn a_reply_crashed_after_its_send_to_the_python_v03_rest_agent_is_found() {
    reply_crashed_after_its_send_is_found(&Peer::python(Transport::Rest));
}

#[test]
fn a_reply_crashed_after_its_send_to_the_js_v03_agent_is_found() {
    reply_crashed_after_its_send_is_found(&Peer::js(Transport::JsonRpc));
}

#[test]
fn a_reply_crashed_after_its_send_to_the_js_v03_rest_agent_is_found() {
    reply_crashed_after_its_send_is_found(&Peer::js(Transport::Rest));
}
