//! A2A v0.3 agents end to end: the binary against the scripted agent serving v0.3 JSON-RPC
//! (`--protocol 0.3`: a v0.3 card, `message/send`, …, no `tasks/list`) on loopback, with real
//! journals and real crashes — delegate → reconcile, ask → reply, a crash in the send window
//! (`UNCERTAIN`, nothing resent; resent when the agent is trusted to de-duplicate), a cut
//! stream, the binding journaled per attempt, refused and unreadable cards.

use std::time::Duration;

use a2a_recover::scripted_agent::AgentConfig;
use serde_json::{Value, json};

use crate::common::commands::{
    attempts, crashing, delegate, messages_with_id, reconcile, settled, the_attempt,
};
use crate::common::in_runtime::{CardServer, guard, run};
use crate::common::{TestEnv, agent, code, fast, json_lines, stderr, stdout};

/// A scripted v0.3 agent working in 20 ms ticks.
fn v03() -> AgentConfig {
    AgentConfig {
        protocol_v03: true,
        ..fast()
    }
}

fn assert_v03_binding(row: &Value) {
    assert_eq!(row["binding"], "JSONRPC", "{row}");
    assert_eq!(row["protocolVersion"], "0.3", "{row}");
}

#[test]
fn a_v03_agent_is_delegated_to_and_reconciled_to_completed_with_its_binding_journaled() {
    let env = TestEnv::new();
    let a = agent(v03());
    let out = delegate(&env, "w/a", &a.url(), "work:2 go", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // Said once, before the send: this agent cannot be searched after a crash.
    assert!(
        stderr(&out).contains("has no ListTasks") && stderr(&out).contains("UNCERTAIN"),
        "{}",
        stderr(&out)
    );
    let row = the_attempt(&env, "w/a");
    assert_v03_binding(&row);
    let out = settled(&env, 200);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "w/a");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    assert_eq!(row["artifacts"], 1, "{row}");
    assert_v03_binding(&row);
    let stats = a.stats();
    // Every call went by a v0.3 name (counted under the v1.0 operation), none to tasks/list.
    assert_eq!(stats.requests.get("SendMessage"), Some(&1), "{stats:?}");
    assert!(stats.requests.get("GetTask").is_some_and(|n| *n >= 1));
    assert!(!stats.requests.contains_key("ListTasks"), "{stats:?}");
    assert!(!stats.requests.contains_key("tasks/list"), "{stats:?}");
    assert_eq!(stats.tasks.len(), 1);
}

#[test]
fn a_v03_question_is_answered_on_the_same_task() {
    let env = TestEnv::new();
    let a = agent(v03());
    assert_eq!(code(&delegate(&env, "w/ask", &a.url(), "ask", &[])), 0);
    let out = settled(&env, 200);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "w/ask");
    assert_eq!(row["state"], "INPUT_REQUIRED", "{row}");
    assert_eq!(row["pendingQuestion"], "two rooms or one?", "{row}");
    let task = row["taskId"].as_str().unwrap().to_owned();
    let out = env.run(["reply", "w/ask", "two"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let out = settled(&env, 200);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "w/ask");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    assert_eq!(row["taskId"], task.as_str());
    let stats = a.stats();
    assert_eq!(stats.tasks.len(), 1, "the reply made no second task");
    let reply = stats.messages.iter().find(|m| m.text == "two").unwrap();
    assert_eq!(reply.task_id.as_deref(), Some(task.as_str()));
}

#[test]
fn a_crash_after_the_send_leaves_a_v03_attempt_uncertain_and_nothing_is_resent() {
    let env = TestEnv::new();
    let a = agent(v03());
    crashing(
        &env,
        "after-send",
        &["delegate", "w/x", "--agent", &a.url(), "work:2"],
    );
    let row = the_attempt(&env, "w/x");
    assert_eq!(row["state"], "INTENT");
    assert_v03_binding(&row);
    let mid = row["messageId"].as_str().unwrap().to_owned();
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "w/x");
    assert_eq!(row["state"], "UNCERTAIN", "{row}");
    assert!(
        row["error"].as_str().unwrap().contains("no ListTasks"),
        "{row}"
    );
    // A second pass changes nothing and sends nothing.
    assert_eq!(code(&reconcile(&env, &[])), 4);
    let stats = a.stats();
    assert_eq!(messages_with_id(&stats, &mid), 1, "nothing was resent");
    assert_eq!(stats.tasks.len(), 1);
    assert!(!stats.requests.contains_key("ListTasks"), "{stats:?}");
    let out = env.run(["inspect", "--pending"]);
    assert!(stdout(&out).contains("w/x"), "{}", stdout(&out));
}

#[test]
fn an_agent_trusted_to_deduplicate_is_resent_the_same_message_id() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        dedup: true,
        skills: vec!["dedup".to_owned()],
        ..v03()
    });
    let out = env.run(["agents", "add", &a.url(), "--trust-dedup"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = env.run(["agents", "list", "--format", "json"]);
    let agent_rec = json_lines(&out)
        .into_iter()
        .find(|r| r["type"] == "agent")
        .unwrap();
    assert_eq!(agent_rec["trustDedup"], true, "{agent_rec}");
    assert_eq!(agent_rec["protocolVersion"], "0.3", "{agent_rec}");
    crashing(
        &env,
        "after-send",
        &["delegate", "w/d", "--skill", "dedup", "work:2"],
    );
    let mid = the_attempt(&env, "w/d")["messageId"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = settled(&env, 200);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "w/d");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    let stats = a.stats();
    assert_eq!(messages_with_id(&stats, &mid), 2, "resent, same messageId");
    assert_eq!(stats.tasks_per_message_id.get(&mid), Some(&1), "{stats:?}");
    let out = env.run(["inspect", "w/d", "--events", "--format", "json"]);
    assert!(
        json_lines(&out)
            .iter()
            .any(|e| e["type"] == "event" && e["kind"] == "dedup-trusted"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_cut_v03_stream_is_resubscribed_and_its_artifact_stored_once() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        drop_stream_after: Some(3),
        tick: Duration::from_millis(100),
        ..v03()
    });
    assert_eq!(code(&delegate(&env, "w/s", &a.url(), "work:20", &[])), 0);
    let out = env.run(["follow", "w/s"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "w/s");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    assert_eq!(row["artifacts"], 1, "{row}");
    assert_v03_binding(&row);
    let stats = a.stats();
    assert!(
        stats
            .requests
            .get("SubscribeToTask")
            .is_some_and(|n| *n >= 2),
        "resubscribed after the cut: {stats:?}"
    );
}

#[test]
fn each_attempt_journals_its_own_binding() {
    let env = TestEnv::new();
    let old = agent(v03());
    let new = agent(fast());
    assert_eq!(code(&delegate(&env, "w/old", &old.url(), "echo", &[])), 0);
    assert_eq!(code(&delegate(&env, "w/new", &new.url(), "echo", &[])), 0);
    let rows = attempts(&env, Some("w"));
    let by_step = |s: &str| rows.iter().find(|r| r["step"] == s).unwrap().clone();
    assert_v03_binding(&by_step("old"));
    assert_eq!(by_step("new")["binding"], "JSONRPC");
    assert_eq!(by_step("new")["protocolVersion"], "1.0");
    // Forcing a version the card does not offer refuses the attempt: nothing is sent.
    let out = delegate(&env, "w/forced", &new.url(), "echo", &["--protocol", "0.3"]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    assert_eq!(the_attempt(&env, "w/forced")["state"], "REFUSED");
    assert!(stderr(&out).contains("--protocol 0.3"), "{}", stderr(&out));
    // v0.3 over HTTP+JSON is spoken, but this card does not offer it: refused the same way.
    let out = delegate(
        &env,
        "w/rest",
        &new.url(),
        "echo",
        &["--binding", "http-json", "--protocol", "0.3"],
    );
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    assert_eq!(the_attempt(&env, "w/rest")["state"], "REFUSED");
    assert!(
        stderr(&out).contains("--binding http-json --protocol 0.3"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn a_card_with_no_interface_we_speak_refuses_the_attempt() {
    guard(async {
        let env = TestEnv::new();
        let server = CardServer::start(|base: &str| {
            json!({"name": "websocket", "description": "d", "version": "1", "capabilities": {},
                   "protocolVersion": "0.3.0", "url": base, "preferredTransport": "WEBSOCKET",
                   "skills": [{"id": "s", "name": "S", "description": "d", "tags": []}]})
            .to_string()
        })
        .await;
        let out = run(&env, &["delegate", "w/g", "--agent", &server.url, "go"]).await;
        assert_eq!(code(&out), 4, "{}", stderr(&out));
        let rows = crate::common::in_runtime::attempts(&env, "w/g").await;
        assert_eq!(rows[0]["state"], "REFUSED", "{}", rows[0]);
        assert!(
            rows[0]["error"]
                .as_str()
                .unwrap()
                .contains("offers no interface a2a-recover speaks"),
            "{}",
            rows[0]
        );
        let out = run(&env, &["inspect", "--pending"]).await;
        assert!(stdout(&out).contains("w/g"), "{}", stdout(&out));
        let out = run(&env, &["agents", "add", &server.url]).await;
        assert_eq!(code(&out), 1, "{}", stderr(&out));
        assert!(stderr(&out).contains("WEBSOCKET 0.3.0"), "{}", stderr(&out));
    })
    .await;
}

/// A card URL that answers 404 is a card we cannot read, like an HTML page: `INTENT` and
/// exit 3 until the card patience has passed, then `REFUSED` and listed for a human. (Before,
/// it exited 4 at once and on every pass with nothing in `inspect --pending`.)
#[tokio::test]
async fn a_card_that_answers_404_waits_for_its_patience_then_is_listed() {
    guard(async {
        let env = TestEnv::new();
        let server = CardServer::start(|_: &str| "{}".to_owned()).await;
        let gone = format!("{}missing/", server.url);
        let out = run(&env, &["delegate", "w/m", "--agent", &gone, "go"]).await;
        assert_eq!(code(&out), 3, "{}", stderr(&out));
        assert!(stderr(&out).contains("404"), "{}", stderr(&out));
        let out = run(&env, &["reconcile"]).await;
        assert_eq!(code(&out), 3, "within the default hour: {}", stderr(&out));
        let rows = crate::common::in_runtime::attempts(&env, "w/m").await;
        assert_eq!(rows[0]["state"], "INTENT", "{}", rows[0]);
        // Wall time: the patience below (10 ms) runs from the first failure, so it must pass.
        tokio::time::sleep(Duration::from_millis(30)).await;
        let out = run(&env, &["reconcile", "--card-patience", "10ms"]).await;
        assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
        let rows = crate::common::in_runtime::attempts(&env, "w/m").await;
        assert_eq!(rows[0]["state"], "REFUSED", "{}", rows[0]);
        let out = run(&env, &["inspect", "--pending"]).await;
        assert!(stdout(&out).contains("w/m"), "{}", stdout(&out));
    })
    .await;
}

#[tokio::test]
async fn an_unreadable_card_waits_for_its_patience_then_needs_a_human() {
    guard(async {
        let env = TestEnv::new();
        let server = CardServer::start(|_: &str| "<html>maintenance</html>".to_owned()).await;
        let out = run(&env, &["delegate", "w/h", "--agent", &server.url, "go"]).await;
        assert_eq!(code(&out), 3, "{}", stderr(&out));
        let out = run(&env, &["reconcile"]).await;
        assert_eq!(code(&out), 3, "within the default hour: {}", stderr(&out));
        let rows = crate::common::in_runtime::attempts(&env, "w/h").await;
        assert_eq!(rows[0]["state"], "INTENT", "{}", rows[0]);
        // Wall time: the patience below (10 ms) runs from the first failure, so it must pass.
        tokio::time::sleep(Duration::from_millis(30)).await;
        let out = run(&env, &["reconcile", "--card-patience", "10ms"]).await;
        assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
        let rows = crate::common::in_runtime::attempts(&env, "w/h").await;
        assert_eq!(rows[0]["state"], "REFUSED", "{}", rows[0]);
        assert!(
            rows[0]["error"]
                .as_str()
                .unwrap()
                .contains("--card-patience"),
            "{}",
            rows[0]
        );
    })
    .await;
}

#[test]
fn an_unreachable_card_needs_a_human_past_its_patience_and_is_sent_once_it_answers() {
    let env = TestEnv::new();
    let a = agent(v03());
    let (url, port) = (a.url(), a.get().port());
    drop(a);
    let out = delegate(&env, "w/u", &url, "go", &[]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 3, "within the default hour: {}", stderr(&out));
    // Wall time: the patience below (10 ms) runs from the first failure, so it must pass.
    std::thread::sleep(Duration::from_millis(30));

    // Past the patience: a human must look (exit 4), but the attempt stays INTENT.
    let out = reconcile(&env, &["--card-patience", "10ms", "--format", "json"]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let records = json_lines(&out);
    let action = records
        .iter()
        .find(|r| r["type"] == "action" && r["step"] == "u")
        .unwrap();
    assert_eq!(action["outcome"], "card-failed", "{action}");
    assert_eq!(
        action["detail"]["needsHuman"]["cause"], "card-unreachable",
        "{action}"
    );
    assert_eq!(
        action["remedy"]["command"], "a2a-recover reconcile w",
        "{action}"
    );
    assert_eq!(the_attempt(&env, "w/u")["state"], "INTENT");
    let out = env.run(["inspect", "--pending", "--format", "json"]);
    let listed: Vec<Value> = json_lines(&out)
        .into_iter()
        .filter(|r| r["type"] == "attempt")
        .collect();
    assert_eq!(listed.len(), 1, "{}", stdout(&out));
    assert!(
        listed[0]["remedy"]["what"]
            .as_str()
            .unwrap()
            .contains("unreachable"),
        "{}",
        listed[0]
    );
    let out = env.run(["status", "--check"]);
    assert_eq!(code(&out), 4, "status counts it: {}", stdout(&out));
    let out = delegate(&env, "w/u", &url, "go", &["--card-patience", "10ms"]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("needs a human"), "{}", stdout(&out));

    // The agent answers again on its port: the next pass sends it once, with no human.
    let back = crate::common::agent::Background::start(move || async move {
        a2a_recover::scripted_agent::ScriptedAgent::start(v03(), port)
            .await
            .expect("the agent back on its port")
    });
    let out = settled(&env, 200);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(the_attempt(&env, "w/u")["state"], "COMPLETED");
    assert_eq!(back.stats().requests["SendMessage"], 1, "sent once");
    let out = env.run(["inspect", "--pending", "--format", "json"]);
    assert!(
        !json_lines(&out).iter().any(|r| r["type"] == "attempt"),
        "{}",
        stdout(&out)
    );
}
