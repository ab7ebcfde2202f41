//! `agents probe` against the official SDK servers: the recovery profile each one shows, and
//! that a probe without `--send-test` creates no task there (their ListTasks is the counter).

use std::time::Duration;

use a2a_recover::a2a::{A2aClient, ClientConfig, Endpoint, types};
use serde_json::Value;

use crate::common::interop::{InteropAgent, Sdk};
use crate::common::{TestEnv, code, json_lines, stderr, stdout};

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
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(async {
        let client = A2aClient::new(ClientConfig {
            timeout: Duration::from_secs(20),
            max_response_size: 16 * 1024 * 1024,
            stream_idle_timeout: Duration::from_secs(20),
            max_look_size: 64 * 1024 * 1024,
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
