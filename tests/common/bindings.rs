//! Scenario helpers the binding tests share (HTTP+JSON, A2A v0.3, an agent whose interface
//! moved): an HTTP+JSON scripted agent, request counts, interface moves, an agent that left for
//! gRPC, a stream followed through a cut, and the scenarios run over each binding
//! (delegate → reconcile → follow; ask → reply).

use std::fmt::Write as _;

use a2a_recover::scripted_agent::{AgentConfig, ScriptedAgent, ServedBinding, Stats};
use serde_json::Value;

use crate::common::commands::{delegate, events, reconcile, the_attempt};
use crate::common::cut_proxy::CutProxy;
use crate::common::in_runtime::CardServer;
use crate::common::interop::InteropAgent;
use crate::common::journal::artifact_texts_of;
use crate::common::{Background, TestEnv, agent, code, fast, json_lines, stderr, stdout};

/// `cfg` served over HTTP+JSON only (a card with no JSON-RPC interface).
pub fn http_json(cfg: AgentConfig) -> AgentConfig {
    AgentConfig {
        binding: ServedBinding::HttpJson,
        ..cfg
    }
}

/// Requests the agent counted for an operation (0 when never called).
pub fn calls(stats: &Stats, op: &str) -> u64 {
    stats.requests.get(op).copied().unwrap_or(0)
}

/// How many `interface-moved` events the step has.
pub fn moves(env: &TestEnv, step: &str) -> usize {
    events(env, step)
        .iter()
        .filter(|e| e["kind"] == "interface-moved")
        .count()
}

/// `inspect --pending` lists `step` as interface-gone, with a command and an alternative, and
/// `status --check` counts it as needing a human.
pub fn assert_pending_gone(env: &TestEnv, step: &str) {
    let out = env.run(["inspect", "--pending", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let row = json_lines(&out)
        .into_iter()
        .find(|r| r["type"] == "attempt" && r["step"] == step.split('/').nth(1).unwrap())
        .unwrap_or_else(|| panic!("{step} is not pending: {}", stdout(&out)));
    let remedy = &row["remedy"];
    assert!(
        remedy["what"]
            .as_str()
            .unwrap()
            .contains("left the agent's card"),
        "{row}"
    );
    assert_eq!(
        remedy["command"],
        format!("a2a-recover resolve {step} --as done|retry|abandoned --reason \"…\""),
        "{row}"
    );
    assert!(
        remedy["alternatives"][0]
            .as_str()
            .unwrap()
            .contains("agents add"),
        "{row}"
    );
    let out = env.run(["status", "--check"]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
}

/// Delegates `text` as `step` to a JSON-RPC scripted agent that then upgrades to a card that
/// offers only WebSocket (JSON-RPC is not served any more); returns the attempt's state before, and
/// the card's server.
pub fn delegated_then_gone(
    env: &TestEnv,
    step: &str,
    text: &str,
) -> (Value, Background<CardServer>) {
    let a = agent(fast());
    let out = delegate(env, step, &a.url(), text, &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let before = the_attempt(env, step)["state"].clone();
    (before, unspoken_only_on(a))
}

/// Stops `a` and serves, on its port, a card that offers only WebSocket (an agent that upgraded
/// to a binding a2a-recover does not speak; every other path answers 404).
pub fn unspoken_only_on(a: Background<ScriptedAgent>) -> Background<CardServer> {
    let port = a.get().port();
    drop(a);
    Background::start(move || {
        CardServer::start_on(port, |base: &str| {
            serde_json::json!({"name": "websocket", "description": "d", "version": "2",
                "capabilities": {}, "defaultInputModes": ["text/plain"],
                "defaultOutputModes": ["text/plain"], "skills": [],
                "supportedInterfaces": [{"url": base, "protocolBinding": "WEBSOCKET",
                                         "protocolVersion": "1.0"}]})
            .to_string()
        })
    })
}

/// The artifact text of `work:N`: `n` lines, `step 1` to `step n`.
pub fn steps(n: u32) -> String {
    (1..=n).fold(String::new(), |mut s, i| {
        let _ = writeln!(s, "step {i}");
        s
    })
}

/// Delegates `work:40` as `w/s` to `a` through a proxy that cuts the first stream after three
/// events, follows it, and checks it was resubscribed to COMPLETED; returns the journal, the
/// attempt and the proxy (still forwarding).
pub fn followed_through_a_cut(
    a: &InteropAgent,
    args: &[&str],
) -> (TestEnv, serde_json::Value, Background<CutProxy>) {
    let proxy = CutProxy::start(a.url.clone(), 3, 1);
    let (env, row) = follow_through_a_cut(a, &proxy.url(), args, || proxy.cut());
    (env, row, proxy)
}

/// Delegates `work:40` as `w/s` to `a` at `url` (where a proxy cuts the first stream), follows
/// it, and checks it was resubscribed to COMPLETED after one cut (`cuts` counts them); returns
/// the journal and the attempt.
pub fn follow_through_a_cut(
    a: &InteropAgent,
    url: &str,
    args: &[&str],
    cuts: impl Fn() -> u64,
) -> (TestEnv, serde_json::Value) {
    let env = TestEnv::new();
    let why = || a.context();
    let out = delegate(&env, "w/s", url, "work:40", args);
    assert_eq!(code(&out), 0, "{}{}\n{}", stdout(&out), stderr(&out), why());
    let out = env.run(["follow", "w/s", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}{}\n{}", stdout(&out), stderr(&out), why());
    let lines = json_lines(&out);
    let summary = lines.last().unwrap();
    assert_eq!(summary["state"], "COMPLETED", "{summary}");
    assert_eq!(cuts(), 1, "{summary}");
    assert!(summary["reconnects"].as_u64().unwrap() >= 1, "{summary}");
    let row = the_attempt(&env, "w/s");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    (env, row)
}

/// delegate `work:5` → reconcile → follow to COMPLETED, the artifact stored whole; `sent_over`
/// checks the attempt's interface.
pub fn delegate_reconcile_follow_at(a: &InteropAgent, sent_over: impl Fn(&serde_json::Value)) {
    let env = TestEnv::new();
    let why = || a.context();
    let out = delegate(&env, "w/work", &a.url, "work:5", &[]);
    assert_eq!(code(&out), 0, "{}{}\n{}", stdout(&out), stderr(&out), why());
    let out = reconcile(&env, &[]);
    assert!(
        [0, 3].contains(&code(&out)),
        "{}{}\n{}",
        stdout(&out),
        stderr(&out),
        why()
    );
    let out = env.run(["follow", "w/work", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}{}\n{}", stdout(&out), stderr(&out), why());
    let lines = json_lines(&out);
    assert_eq!(lines.last().unwrap()["state"], "COMPLETED", "{lines:?}");
    let row = the_attempt(&env, "w/work");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    sent_over(&row);
    assert_eq!(artifact_texts_of(&env.journal(), "w/work"), [steps(5)]);
}

/// `ask` → INPUT_REQUIRED with the question → reply → COMPLETED on the same task; `sent_over`
/// checks the attempt's interface.
pub fn ask_then_reply_at(a: &InteropAgent, sent_over: impl Fn(&serde_json::Value)) {
    let env = TestEnv::new();
    let why = || a.context();
    let out = delegate(&env, "trip/hotel", &a.url, "ask", &[]);
    assert_eq!(code(&out), 0, "{}{}\n{}", stdout(&out), stderr(&out), why());
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}\n{}", stdout(&out), stderr(&out), why());
    let row = the_attempt(&env, "trip/hotel");
    assert_eq!(row["state"], "INPUT_REQUIRED", "{row}");
    assert_eq!(row["pendingQuestion"], "two rooms or one?");
    sent_over(&row);
    let task = row["taskId"].as_str().unwrap().to_owned();

    let out = env.run(["reply", "trip/hotel", "two rooms"]);
    assert!(
        [0, 3].contains(&code(&out)),
        "{}{}\n{}",
        stdout(&out),
        stderr(&out),
        why()
    );
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 0, "{}{}\n{}", stdout(&out), stderr(&out), why());
    let row = the_attempt(&env, "trip/hotel");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    assert_eq!(
        row["taskId"],
        task.as_str(),
        "the reply went to another task"
    );
    assert_eq!(
        artifact_texts_of(&env.journal(), "trip/hotel"),
        ["booked: two rooms"]
    );
}
