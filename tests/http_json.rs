//! Recovery over the v1.0 HTTP+JSON binding, end to end: the binary against the scripted agent
//! serving only HTTP+JSON (`scripted-agent --binding http-json`, a card with no JSON-RPC
//! interface) and real journals — delegate then reconcile, ask then reply, a crash after the
//! send found by ListTasks, a stream cut and resubscribed, and the difference between the
//! agent's `TASK_NOT_FOUND` (the task is gone: `LOST`) and a bare 404 from something in front of
//! it (nothing is proven: the attempt stays as it was).

use std::fmt::Write as _;
use std::time::Duration;

use a2a_recover::scripted_agent::AgentConfig;
use serde_json::Value;

use crate::common::bindings::{assert_pending_gone, calls, delegated_then_gone, http_json, moves};
use crate::common::commands::{crashing, delegate, events, reconcile, the_attempt};
use crate::common::journal::artifact_texts_of;
use crate::common::{TestEnv, agent, block_on, code, fast, json_lines, stderr, stdout};

#[test]
fn the_card_offers_only_http_json_and_json_rpc_is_not_served() {
    let a = agent(http_json(fast()));
    let (card, rpc_status) = block_on(async {
        let http = reqwest::Client::new();
        let card = http
            .get(format!("{}.well-known/agent-card.json", a.url()))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let card: Value = serde_json::from_slice(&card).unwrap();
        let rpc = http
            .post(a.url())
            .header("A2A-Version", "1.0")
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}"#)
            .send()
            .await
            .unwrap();
        (card, rpc.status().as_u16())
    });
    let interfaces = card["supportedInterfaces"].as_array().unwrap();
    assert_eq!(interfaces.len(), 1, "{card}");
    assert_eq!(interfaces[0]["protocolBinding"], "HTTP+JSON");
    assert_eq!(rpc_status, 404);
}

#[test]
fn delegate_then_reconcile_completes_over_http_json() {
    let env = TestEnv::new();
    let a = agent(http_json(fast()));
    let out = delegate(&env, "w/work", &a.url(), "work:3", &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    a.settle();
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "w/work");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    assert_eq!(
        artifact_texts_of(&env.journal(), "w/work"),
        ["chunk 1;chunk 2;chunk 3;"]
    );
    let stats = a.stats();
    assert_eq!(calls(&stats, "SendMessage"), 1, "{:?}", stats.requests);
    assert!(calls(&stats, "GetTask") >= 1, "{:?}", stats.requests);
    assert_eq!(stats.tasks.len(), 1);
}

#[test]
fn a_tenant_on_the_card_goes_into_every_path() {
    let env = TestEnv::new();
    let a = agent(http_json(AgentConfig {
        tenant: Some("acme".to_owned()),
        ..fast()
    }));
    let out = delegate(&env, "w/t", &a.url(), "hello", &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    a.settle();
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(the_attempt(&env, "w/t")["state"], "COMPLETED");
    // Without the tenant the agent answers a bare 404: every call carried it.
    let stats = a.stats();
    assert_eq!(calls(&stats, "SendMessage"), 1, "{:?}", stats.requests);
    assert!(calls(&stats, "GetTask") >= 1, "{:?}", stats.requests);
}

#[test]
fn ask_then_reply_continues_the_same_task_over_http_json() {
    let env = TestEnv::new();
    let a = agent(http_json(fast()));
    let out = delegate(&env, "trip/hotel", &a.url(), "ask", &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    a.settle();
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "trip/hotel");
    assert_eq!(row["state"], "INPUT_REQUIRED", "{row}");
    assert_eq!(row["pendingQuestion"], "two rooms or one?");
    let task = row["taskId"].as_str().unwrap().to_owned();

    let out = env.run(["reply", "trip/hotel", "two rooms"]);
    assert!(
        [0, 3].contains(&code(&out)),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    a.settle();
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "trip/hotel");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    assert_eq!(row["taskId"], task.as_str());
    assert_eq!(
        artifact_texts_of(&env.journal(), "trip/hotel"),
        ["booked: two rooms"]
    );
    let stats = a.stats();
    assert_eq!(stats.tasks.len(), 1, "the reply made a new task");
    let replies: Vec<_> = stats
        .messages
        .iter()
        .filter(|m| m.text == "two rooms")
        .collect();
    assert_eq!(replies.len(), 1, "{:?}", stats.messages);
    assert_eq!(replies[0].task_id.as_deref(), Some(task.as_str()));
}

#[test]
fn a_crash_after_the_send_is_found_by_list_tasks_over_http_json() {
    let env = TestEnv::new();
    let a = agent(http_json(fast()));
    crashing(
        &env,
        "after-send",
        &["delegate", "trip/hotel", "--agent", &a.url(), "ask"],
    );
    assert_eq!(the_attempt(&env, "trip/hotel")["state"], "INTENT");
    a.settle();
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "trip/hotel");
    assert_eq!(row["state"], "INPUT_REQUIRED", "{row}");
    assert_eq!(row["pendingQuestion"], "two rooms or one?");
    let stats = a.stats();
    assert!(calls(&stats, "ListTasks") >= 1, "{:?}", stats.requests);
    assert_eq!(
        calls(&stats, "SendMessage"),
        1,
        "resent: {:?}",
        stats.requests
    );
    assert_eq!(stats.tasks.len(), 1);
    assert_eq!(row["taskId"], stats.tasks[0].id.as_str());
}

#[test]
fn a_cut_stream_is_resubscribed_over_http_json_and_the_artifact_stored_once() {
    let env = TestEnv::new();
    let a = agent(http_json(AgentConfig {
        drop_stream_after: Some(3),
        tick: Duration::from_millis(50),
        ..AgentConfig::default()
    }));
    let out = delegate(&env, "w/s", &a.url(), "work:12", &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let out = env.run(["follow", "w/s", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let lines = json_lines(&out);
    let summary = lines.last().unwrap();
    assert_eq!(summary["state"], "COMPLETED", "{summary}");
    let reconnects = summary["reconnects"].as_u64().unwrap();
    assert!(reconnects >= 1, "{summary}");
    let expected = (1..=12).fold(String::new(), |mut s, i| {
        let _ = write!(s, "chunk {i};");
        s
    });
    assert_eq!(artifact_texts_of(&env.journal(), "w/s"), [expected]);
    let stats = a.stats();
    assert_eq!(
        calls(&stats, "SubscribeToTask"),
        reconnects + 1,
        "{summary}"
    );
}

#[test]
fn a_bare_404_is_not_the_task_gone_but_task_not_found_is() {
    let env = TestEnv::new();
    let a = agent(http_json(fast()));
    let out = delegate(&env, "w/echo", &a.url(), "hello", &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    a.settle();
    let before = the_attempt(&env, "w/echo");
    assert_eq!(before["state"], "SUBMITTED", "{before}");

    // A proxy answers 404 with no A2A error: nothing is proven, the attempt stays, exit 3.
    a.get().not_found_next(1000);
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "w/echo");
    assert_eq!(row["state"], "SUBMITTED", "{row}");
    let error = row["error"].as_str().unwrap_or_default();
    assert!(error.contains("HTTP 404"), "{row}");
    assert!(
        stderr(&out).contains("proxy") || stdout(&out).contains("proxy"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );

    // Once the proxy is gone the task is read as it is.
    a.get().not_found_next(0);
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(the_attempt(&env, "w/echo")["state"], "COMPLETED");

    // The agent's own TASK_NOT_FOUND is the task gone.
    let out = delegate(&env, "w/gone", &a.url(), "work:50", &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let task = the_attempt(&env, "w/gone")["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(a.get().forget_task(&task));
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "w/gone");
    assert_eq!(row["state"], "LOST", "{row}");
    assert!(
        row["error"]
            .as_str()
            .is_some_and(|e| e.contains("TASK_NOT_FOUND")),
        "{row}"
    );
    let stats = a.stats();
    assert_eq!(calls(&stats, "SendMessage"), 2, "{:?}", stats.requests);
}

#[test]
fn agents_add_takes_a_card_that_offers_only_http_json() {
    let env = TestEnv::new();
    let a = agent(http_json(fast()));
    let out = env.run(["agents", "add", &a.url()]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let out = env.run(["agents", "list", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let agents: Vec<Value> = json_lines(&out)
        .into_iter()
        .filter(|l| l["type"] == "agent")
        .collect();
    assert_eq!(agents.len(), 1, "{agents:?}");
    assert_eq!(agents[0]["interfaceUrl"], a.url().as_str());
    assert_eq!(agents[0]["protocolVersion"], "1.0");
    // A registered agent's journaled card decides the binding of its sends and reads.
    let out = delegate(&env, "w/reg", &a.url(), "hello", &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    a.settle();
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(the_attempt(&env, "w/reg")["state"], "COMPLETED");
}

#[test]
fn an_agent_that_moved_to_http_json_is_read_there_and_completes() {
    let env = TestEnv::new();
    let a = agent(fast());
    let out = delegate(&env, "w/up", &a.url(), "work:2", &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(the_attempt(&env, "w/up")["binding"], "JSONRPC");
    a.settle();
    // The agent upgrades: same port, same tasks, only HTTP+JSON served and on its card.
    let a = a.restart(http_json(fast()));
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "w/up");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    assert_eq!(row["binding"], "HTTP+JSON", "{row}");
    assert_eq!(
        artifact_texts_of(&env.journal(), "w/up"),
        ["chunk 1;chunk 2;"]
    );
    let moved: Vec<Value> = events(&env, "w/up")
        .into_iter()
        .filter(|e| e["kind"] == "interface-moved")
        .collect();
    assert_eq!(moved.len(), 1, "{moved:?}");
    let detail = &moved[0]["detail"];
    assert_eq!(detail["from"]["binding"], "JSONRPC", "{detail}");
    assert_eq!(detail["to"]["binding"], "HTTP+JSON", "{detail}");
    assert_eq!(detail["to"]["protocolVersion"], "1.0", "{detail}");
    let stats = a.stats();
    assert_eq!(calls(&stats, "SendMessage"), 0, "{:?}", stats.requests);
    assert!(calls(&stats, "GetTask") >= 1, "{:?}", stats.requests);
    // Later reads go straight to the new interface: nothing moves again.
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(moves(&env, "w/up"), 1);
}

#[test]
fn an_agent_whose_card_offers_nothing_we_speak_any_more_needs_a_human() {
    let env = TestEnv::new();
    let (before, _server) = delegated_then_gone(&env, "w/gone", "ask");
    let out = reconcile(&env, &["--format", "json"]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let action = json_lines(&out)
        .into_iter()
        .find(|v| v["outcome"] == "interface-gone")
        .unwrap_or_else(|| panic!("{}", stdout(&out)));
    let remedy = action["remedy"].to_string();
    assert!(remedy.contains("WEBSOCKET 1.0"), "{action}");
    assert!(remedy.contains("has left the agent's card"), "{action}");
    let row = the_attempt(&env, "w/gone");
    assert_eq!(row["state"], before, "nothing is proven of the task: {row}");
    assert_eq!(row["binding"], "JSONRPC", "{row}");
    assert_pending_gone(&env, "w/gone");
}
