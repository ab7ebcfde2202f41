//! `agents probe` against the official SDK servers: the recovery profile each one shows, and
//! that a probe without `--send-test` creates no task there (their ListTasks is the counter);
//! the v0.3 SDKs (a2a-sdk 0.3.26, @a2a-js/sdk 0.3.14) over JSON-RPC and over HTTP+JSON: no
//! ListTasks, and what their subscribe answers.

use std::time::Duration;

use a2a_recover::a2a::{A2aClient, ClientConfig, Endpoint, types};
use serde_json::Value;

use crate::common::interop::{InteropAgent, Sdk, Transport};
use crate::common::{TestEnv, block_on, code, json_lines, stderr, stdout};

/// Asserts that a command against `agent` exited 0, showing its output and the agent's stderr.
#[track_caller]
fn assert_success(out: &std::process::Output, agent: &InteropAgent) {
    assert_eq!(
        code(out),
        0,
        "{}{}\n{}",
        stdout(out),
        stderr(out),
        agent.context()
    );
}

/// Probes `agent` and returns the profile, asserting exit 0.
fn profile(env: &TestEnv, agent: &InteropAgent, extra: &[&str]) -> Value {
    let mut args = vec!["agents", "probe", agent.url.as_str(), "--format", "json"];
    args.extend_from_slice(extra);
    let out = env.run(args);
    assert_success(&out, agent);
    json_lines(&out)[1]["profile"].clone()
}

/// How many tasks the agent lists to us (ListTasks without a filter, one page of up to 100).
fn listed_tasks(agent: &InteropAgent) -> usize {
    block_on(async {
        let client = A2aClient::new(ClientConfig {
            timeout: Duration::from_secs(20),
            max_response_size: 16 * 1024 * 1024,
            stream_idle_timeout: Duration::from_secs(20),
            max_look_size: 64 * 1024 * 1024,
            max_card_size: a2a_recover::a2a::DEFAULT_MAX_CARD_SIZE,
        })
        .expect("client");
        let card = client.fetch_card(&agent.url, None).await.expect("card");
        let ep = Endpoint::from_card(&card, None, false);
        let req = types::ListTasksRequest {
            context_id: None,
            status: None,
            page_size: Some(100),
            page_token: None,
            history_length: Some(0),
            status_timestamp_after: None,
            include_artifacts: Some(false),
            tenant: None,
        };
        client
            .list_tasks(&ep, &req)
            .await
            .expect("list")
            .tasks
            .len()
    })
}

/// Delegates one echo step to `agent` and follows it to the end.
fn one_finished_task(env: &TestEnv, agent: &InteropAgent) {
    let out = env.run([
        "delegate",
        "w/seed",
        "--agent",
        agent.url.as_str(),
        "--follow",
        "echo seed",
    ]);
    assert_success(&out, agent);
}

fn probe_sdk(sdk: Sdk) {
    let agent = sdk.start();
    let env = TestEnv::new();
    one_finished_task(&env, &agent);
    let before = listed_tasks(&agent);
    let p = profile(&env, &agent, &[]);
    assert_eq!(
        listed_tasks(&agent),
        before,
        "{sdk:?}: the probe created a task"
    );
    assert_eq!(p["listTasks"], "ok", "{sdk:?}: {p}");
    assert_eq!(p["timestampFilter"], "ok", "{sdk:?}: {p}");
    assert_eq!(p["subscribe"], "ok", "{sdk:?}: {p}");
    assert_eq!(p["unknownTaskSubscribeCode"], "-32001", "{sdk:?}: {p}");
    assert_eq!(p["terminalSubscribeCode"], "-32004", "{sdk:?}: {p}");
    assert_eq!(p["clientContextId"], "accepted", "{sdk:?}: {p}");
    let chosen = p["bindings"].as_array().into_iter().flatten();
    assert_eq!(
        chosen.filter(|b| b["chosen"] == true).count(),
        1,
        "{sdk:?}: {p}"
    );

    let p = profile(&env, &agent, &["--send-test", "echo probe"]);
    assert_eq!(
        p["dedup"], "no",
        "{sdk:?}: neither official SDK de-duplicates: {p}"
    );
    assert_eq!(p["historyKept"], "yes", "{sdk:?}: {p}");
    assert_eq!(p["clientContextId"], "accepted", "{sdk:?}: {p}");
    assert_eq!(listed_tasks(&agent), before + 2, "{sdk:?}: two test tasks");
}

#[test]
fn interop_probe_of_the_official_python_agent() {
    probe_sdk(Sdk::Python);
}

#[test]
fn interop_probe_of_the_official_js_agent() {
    probe_sdk(Sdk::Js);
}

/// Probes a v0.3 agent (no `tasks/list`) over `transport` (HTTP+JSON forced with `--binding
/// http-json --protocol 0.3`, the cards also listing JSON-RPC), with a finished task seeded
/// first; returns the passive profile and the `--send-test` one, after asserting what both
/// official v0.3 SDKs share.
fn probe_v03(sdk: Sdk, transport: Transport) -> (Value, Value) {
    let agent = sdk.start();
    let env = TestEnv::new();
    one_finished_task(&env, &agent);
    let forced: &[&str] = match transport {
        Transport::JsonRpc => &[],
        Transport::Rest => &["--binding", "http-json", "--protocol", "0.3"],
    };
    let p = profile(&env, &agent, forced);
    let chosen: Vec<&Value> = p["bindings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["chosen"] == true)
        .collect();
    assert_eq!(chosen.len(), 1, "{sdk:?}: {p}");
    assert_eq!(chosen[0]["binding"], transport.card_name(), "{sdk:?}: {p}");
    assert_eq!(chosen[0]["protocolVersion"], "0.3.0", "{sdk:?}: {p}");
    assert_eq!(
        p["listTasks"], "none",
        "{sdk:?}: no tasks/list in v0.3: {p}"
    );
    assert_eq!(p["timestampFilter"], "none", "{sdk:?}: {p}");
    assert_eq!(p["clientContextId"], "accepted", "{sdk:?}: {p}");
    // Without tasks/list no terminal task is known to a passive probe.
    assert_eq!(p["terminalSubscribeCode"], Value::Null, "{sdk:?}: {p}");
    let mut args = vec!["--send-test", "echo probe"];
    args.extend_from_slice(forced);
    let sent = profile(&env, &agent, &args);
    assert_eq!(sent["dedup"], "no", "{sdk:?}: {sent}");
    assert_eq!(sent["clientContextId"], "accepted", "{sdk:?}: {sent}");
    // Both keep the test message in the task's history when it is asked for (historyLength).
    assert_eq!(sent["historyKept"], "yes", "{sdk:?}: {sent}");
    (p, sent)
}

#[test]
fn interop_probe_of_the_official_python_v03_agent() {
    let transport = Transport::JsonRpc;
    let (p, sent) = probe_v03(Sdk::Python03 { transport }, transport);
    assert_eq!(p["subscribe"], "ok", "{p}");
    assert_eq!(p["unknownTaskSubscribeCode"], "-32001", "{p}");
    // tasks/resubscribe on a terminal task: one error event, -32602.
    assert_eq!(sent["terminalSubscribeCode"], "-32602", "{sent}");
}

#[test]
fn interop_probe_of_the_official_js_v03_agent() {
    let transport = Transport::JsonRpc;
    let (p, sent) = probe_v03(Sdk::Js03 { transport }, transport);
    assert_eq!(p["subscribe"], "ok", "{p}");
    assert_eq!(p["unknownTaskSubscribeCode"], "-32001", "{p}");
    // tasks/resubscribe on a terminal task streams the task itself: no code.
    assert_eq!(sent["terminalSubscribeCode"], Value::Null, "{sent}");
}

#[test]
fn interop_probe_of_the_official_python_v03_agent_over_http_json() {
    let transport = Transport::Rest;
    let (p, sent) = probe_v03(Sdk::Python03 { transport }, transport);
    // `GET /v1/tasks/{id}:subscribe` answers 200 and an event stream, then cuts it without an
    // event for an unknown task and for a terminal one alike (the SDK raises inside the
    // stream): nothing a probe can tell from.
    for p in [&p, &sent] {
        assert_eq!(p["subscribe"], "unknown", "{p}");
        assert_eq!(p["unknownTaskSubscribeCode"], Value::Null, "{p}");
        assert_eq!(p["terminalSubscribeCode"], Value::Null, "{p}");
    }
}

#[test]
fn interop_probe_of_the_official_js_v03_agent_over_http_json() {
    let transport = Transport::Rest;
    let (p, sent) = probe_v03(Sdk::Js03 { transport }, transport);
    // An unknown task's subscribe is HTTP 500, -32603 (the SDK's stream error path throws
    // before it can answer its not-found): not proof either way.
    assert_eq!(p["subscribe"], "unknown", "{p}");
    assert_eq!(p["unknownTaskSubscribeCode"], "-32603", "{p}");
    // The test task's subscribe streams the finished task: SubscribeToTask is there.
    assert_eq!(sent["subscribe"], "ok", "{sent}");
    assert_eq!(sent["terminalSubscribeCode"], Value::Null, "{sent}");
}
