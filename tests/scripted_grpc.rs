//! The scripted agent over gRPC (`scripted-agent --binding grpc`, or `--grpc` beside JSON-RPC):
//! its card, and the recovery story against it end to end — delegate → reconcile → follow to
//! COMPLETED; `ask` → follow stops at the question → reply on the same task; a crash after the
//! send found by ListTasks over gRPC and not resent; a stream cut and resubscribed. And, over every binding it serves, a
//! subscription to an INPUT_REQUIRED task that stays open until the task moves on and ends.

use a2a_recover::a2a::{ProtocolBinding, types};
use a2a_recover::scripted_agent::{AgentConfig, ServedBinding};
use serde_json::{Value, json};

use crate::common::bindings::ask_then_reply_at;
use crate::common::bindings::calls;
use crate::common::commands::{crashing, delegate, reconcile, the_attempt};
use crate::common::interop::{InteropAgent, plain_endpoint, start_scripted_agent, test_client};
use crate::common::journal::artifact_texts_of;
use crate::common::{TestEnv, agent, block_on, code, fast, json_lines, stderr, stdout};

fn grpc(cfg: AgentConfig) -> AgentConfig {
    AgentConfig {
        binding: ServedBinding::Grpc,
        ..cfg
    }
}

/// The attempt went over gRPC to the card's scheme-less `127.0.0.1:PORT`, read as plaintext.
fn assert_sent_over_grpc(base_url: &str, row: &Value) {
    assert_eq!(row["binding"], "GRPC", "{row}");
    assert_eq!(row["protocolVersion"], "1.0", "{row}");
    assert_eq!(row["interfaceUrl"], base_url, "{row}");
}

/// `scripted-agent --binding grpc`, the binary.
fn grpc_agent() -> InteropAgent {
    start_scripted_agent(&["--binding", "grpc", "--tick", "20ms"])
}

fn card(url: &str) -> Value {
    block_on(async {
        let body = reqwest::get(format!("{url}.well-known/agent-card.json"))
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        serde_json::from_slice(&body).unwrap()
    })
}

#[test]
fn the_card_offers_grpc_as_host_and_port_alone_or_after_json_rpc() {
    let a = grpc_agent();
    let interfaces = card(&a.url)["supportedInterfaces"].clone();
    let host_port = a.url.trim_start_matches("http://").trim_end_matches('/');
    assert_eq!(
        interfaces,
        json!([{"url": host_port, "protocolBinding": "GRPC", "protocolVersion": "1.0"}])
    );

    let both = start_scripted_agent(&["--grpc"]);
    let interfaces = card(&both.url)["supportedInterfaces"].clone();
    let bindings: Vec<_> = interfaces
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["protocolBinding"].clone())
        .collect();
    assert_eq!(bindings, ["JSONRPC", "GRPC"], "{interfaces}");

    // JSON-RPC is chosen first; `--binding grpc` forces gRPC, on the same agent.
    let env = TestEnv::new();
    let out = delegate(&env, "w/rpc", &both.url, "work:1", &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(the_attempt(&env, "w/rpc")["binding"], "JSONRPC");
    let out = delegate(&env, "w/grpc", &both.url, "work:1", &["--binding", "grpc"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_sent_over_grpc(&both.url, &the_attempt(&env, "w/grpc"));
}

#[test]
fn grpc_and_an_old_protocol_or_offsetless_timestamps_are_usage_errors() {
    let env = TestEnv::new();
    for args in [
        ["scripted-agent", "--grpc", "--protocol", "0.3"],
        ["scripted-agent", "--binding", "grpc", "--naive-timestamps"],
    ] {
        let out = env.run(args);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn delegate_reconcile_follow_over_grpc() {
    let a = grpc_agent();
    let env = TestEnv::new();
    let why = || a.context();
    let out = delegate(&env, "w/work", &a.url, "work:5", &[]);
    assert_eq!(code(&out), 0, "{}{}\n{}", stdout(&out), stderr(&out), why());
    let out = reconcile(&env, &[]);
    assert!([0, 3].contains(&code(&out)), "{}{}", stdout(&out), why());
    let out = env.run(["follow", "w/work", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}{}\n{}", stdout(&out), stderr(&out), why());
    assert_eq!(json_lines(&out).last().unwrap()["state"], "COMPLETED");
    let row = the_attempt(&env, "w/work");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    assert_sent_over_grpc(&a.url, &row);
    assert_eq!(
        artifact_texts_of(&env.journal(), "w/work"),
        ["chunk 1;chunk 2;chunk 3;chunk 4;chunk 5;"]
    );
}

#[test]
fn ask_then_reply_on_the_same_task_over_grpc() {
    let a = grpc_agent();
    ask_then_reply_at(&a, |row| assert_sent_over_grpc(&a.url, row));
}

/// `follow` stops at the question (INPUT_REQUIRED, AUTH_REQUIRED) although the agent keeps the
/// subscription open, and says so (exit 4).
fn follow_stops_at_the_question_over_an_open_subscription(binding: ServedBinding) {
    let a = agent(AgentConfig { binding, ..fast() });
    let env = TestEnv::new();
    for (step, text, state) in [
        ("trip/hotel", "ask", "INPUT_REQUIRED"),
        ("trip/login", "auth", "AUTH_REQUIRED"),
    ] {
        let out = delegate(&env, step, &a.url(), text, &[]);
        assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
        let out = env.run(["follow", step, "--format", "json"]);
        assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
        assert_eq!(json_lines(&out).last().unwrap()["end"], "interrupted");
        let row = the_attempt(&env, step);
        assert_eq!(row["state"], state, "{row}");
        assert!(row["pendingQuestion"].is_string(), "{row}");
    }
    assert!(calls(&a.stats(), "SubscribeToTask") >= 2);
}

#[test]
fn follow_stops_at_the_question_over_json_rpc() {
    follow_stops_at_the_question_over_an_open_subscription(ServedBinding::Jsonrpc);
}

#[test]
fn follow_stops_at_the_question_over_http_json() {
    follow_stops_at_the_question_over_an_open_subscription(ServedBinding::HttpJson);
}

#[test]
fn follow_stops_at_the_question_over_grpc() {
    follow_stops_at_the_question_over_an_open_subscription(ServedBinding::Grpc);
}

/// A crash after the send: reconcile finds the task by ListTasks over gRPC; nothing is resent.
#[test]
fn a_crash_after_the_send_is_found_and_not_resent_over_grpc() {
    let a = agent(grpc(fast()));
    let env = TestEnv::new();
    crashing(
        &env,
        "after-send",
        &["delegate", "trip/hotel", "--agent", &a.url(), "ask"],
    );
    assert_eq!(the_attempt(&env, "trip/hotel")["state"], "INTENT");
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "trip/hotel");
    assert_sent_over_grpc(&a.url(), &row);
    assert_eq!(row["state"], "INPUT_REQUIRED", "{row}");
    assert_eq!(row["pendingQuestion"], "two rooms or one?");
    let stats = a.stats();
    assert_eq!(
        stats.tasks.len(),
        1,
        "nothing was resent: {:?}",
        stats.tasks
    );
    assert_eq!(row["taskId"], stats.tasks[0].id.as_str());
    assert_eq!(calls(&stats, "SendMessage"), 1, "{:?}", stats.requests);
    assert!(calls(&stats, "ListTasks") >= 1, "{:?}", stats.requests);

    let out = env.run(["reply", "trip/hotel", "one"]);
    assert!([0, 3].contains(&code(&out)), "{}", stderr(&out));
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(
        artifact_texts_of(&env.journal(), "trip/hotel"),
        ["booked: one"]
    );
}

/// A gRPC stream cut after three messages (`--drop-stream-after 3`) is resubscribed to
/// COMPLETED, the artifact stored once.
#[test]
fn a_cut_stream_is_resubscribed_over_grpc() {
    let a = agent(grpc(AgentConfig {
        drop_stream_after: Some(3),
        ..fast()
    }));
    let env = TestEnv::new();
    let out = delegate(&env, "w/s", &a.url(), "work:6", &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let out = env.run(["follow", "w/s", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let lines = json_lines(&out);
    let summary = lines.last().unwrap();
    assert_eq!(summary["state"], "COMPLETED", "{summary}");
    assert!(summary["reconnects"].as_u64().unwrap() >= 1, "{summary}");
    assert_sent_over_grpc(&a.url(), &the_attempt(&env, "w/s"));
    assert_eq!(
        artifact_texts_of(&env.journal(), "w/s"),
        ["chunk 1;chunk 2;chunk 3;chunk 4;chunk 5;chunk 6;"]
    );
}

/// The state of a stream event (a task snapshot or a status update).
fn state_of(event: &Value) -> String {
    event
        .pointer("/task/status/state")
        .or_else(|| event.pointer("/statusUpdate/status/state"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn send_request(v: Value) -> types::SendMessageRequest {
    serde_json::from_value(v).unwrap()
}

/// A subscription to an INPUT_REQUIRED task begins with its snapshot and stays open: the reply
/// sent after the snapshot arrived reaches it, to COMPLETED, where it ends.
fn subscription_stays_open_until_the_task_moves_on(binding: ServedBinding) {
    let a = agent(AgentConfig { binding, ..fast() });
    let (url, wire) = match binding {
        ServedBinding::Jsonrpc => (a.url(), ProtocolBinding::JsonRpcV1),
        ServedBinding::HttpJson => (a.url(), ProtocolBinding::HttpJsonV1),
        ServedBinding::Grpc => (a.url(), ProtocolBinding::GrpcV1),
    };
    let states = block_on(async {
        let client = test_client();
        let ep = plain_endpoint(&url, wire);
        let asked = client
            .send_message(
                &ep,
                &send_request(json!({"message": {"messageId": "m-1", "role": "ROLE_USER",
                    "parts": [{"text": "ask"}]}})),
            )
            .await
            .unwrap();
        let asked = serde_json::to_value(&asked.value).unwrap();
        let task = asked["task"]["id"].as_str().unwrap().to_owned();
        assert_eq!(state_of(&asked), "TASK_STATE_INPUT_REQUIRED", "{asked}");

        let mut stream = client.subscribe(&ep, &task).await.unwrap();
        let first = stream.next().await.unwrap().unwrap();
        let mut states = vec![state_of(&serde_json::to_value(&first.value).unwrap())];
        client
            .send_message(
                &ep,
                &send_request(json!({"message": {"messageId": "m-2", "role": "ROLE_USER",
                    "taskId": task, "parts": [{"text": "one"}]}})),
            )
            .await
            .unwrap();
        while let Some(event) = stream.next().await {
            states.push(state_of(
                &serde_json::to_value(&event.unwrap().value).unwrap(),
            ));
        }
        states
    });
    let states: Vec<_> = states.into_iter().filter(|s| !s.is_empty()).collect();
    assert_eq!(
        states.first().unwrap(),
        "TASK_STATE_INPUT_REQUIRED",
        "{states:?}"
    );
    assert!(
        states.contains(&"TASK_STATE_WORKING".to_owned()),
        "{states:?}"
    );
    assert_eq!(states.last().unwrap(), "TASK_STATE_COMPLETED", "{states:?}");
}

#[test]
fn a_subscription_to_a_question_stays_open_over_json_rpc() {
    subscription_stays_open_until_the_task_moves_on(ServedBinding::Jsonrpc);
}

#[test]
fn a_subscription_to_a_question_stays_open_over_http_json() {
    subscription_stays_open_until_the_task_moves_on(ServedBinding::HttpJson);
}

#[test]
fn a_subscription_to_a_question_stays_open_over_grpc() {
    subscription_stays_open_until_the_task_moves_on(ServedBinding::Grpc);
}

/// Every answer of the gRPC endpoint reads as the A2A types, errors included: an unknown task
/// is the agent's own TASK_NOT_FOUND, never an unattributed NOT_FOUND.
#[test]
fn an_unknown_task_is_the_agents_task_not_found_over_grpc() {
    let a = agent(grpc(fast()));
    let e = block_on(async {
        let ep = plain_endpoint(&a.url(), ProtocolBinding::GrpcV1);
        test_client()
            .get_task(&ep, "no-such-task", None)
            .await
            .unwrap_err()
    });
    assert!(e.is_task_not_found(), "{e}");
    assert_eq!(e.answered(), Some(true), "{e}");

    // `agents probe` over gRPC reads the same profile as over JSON-RPC.
    let env = TestEnv::new();
    let out = delegate(&env, "w/seed", &a.url(), "hello", &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    a.settle();
    let out = env.run(["agents", "probe", &a.url(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let lines = json_lines(&out);
    let p = &lines.iter().find(|r| r["type"] == "probe").unwrap()["profile"];
    assert_eq!(p["bindings"][0]["binding"], "GRPC", "{p}");
    assert_eq!(p["bindings"][0]["spoken"], true, "{p}");
    assert_eq!(p["listTasks"], "ok", "{p}");
    assert_eq!(p["subscribe"], "ok", "{p}");
    assert_eq!(p["unknownTaskSubscribeCode"], "-32001", "{p}");
    assert_eq!(p["terminalSubscribeCode"], "-32004", "{p}");
}
