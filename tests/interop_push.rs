//! The official SDKs as push senders, against a real `listen` (its timer off) and with no
//! `reconcile` or `follow` run: a2a-sdk 1.3.0 (`BasePushNotificationSender`, its default of no
//! push URL screening), @a2a-js/sdk 1.3.0, a2a-sdk 0.3.26 and @a2a-js/sdk 0.3.14, each over
//! JSON-RPC and HTTP+JSON, the v1.0 ones over gRPC, and a2a-sdk 1.3.0 over v0.3 gRPC too. A
//! `work` task is pushed to COMPLETED with its artifact journaled; an `ask` task's question is
//! journaled from a push, then `reply` answers it on the same task and the push of its end is
//! journaled too.

use serde_json::Value;

use crate::common::commands::{artifact_texts, attempts, delegate};
use crate::common::interop::{InteropAgent, Sdk, Transport};
use crate::common::listen::{Listen, wait_state};
use crate::common::wait::{GUARD, poll};
use crate::common::{TestEnv, code, json_lines, stderr, stdout};

const QUESTION: &str = "two rooms or one?";

/// How a test reaches its agent: the agent's extra flags and `delegate --binding`.
struct Route {
    agent_args: &'static [&'static str],
    binding: &'static str,
}

const JSONRPC: Route = Route {
    agent_args: &["--push"],
    binding: "jsonrpc",
};
const HTTP_JSON: Route = Route {
    agent_args: &["--push"],
    binding: "http-json",
};
const GRPC: Route = Route {
    agent_args: &["--push", "--grpc"],
    binding: "grpc",
};
/// A2A v0.3 over gRPC, as a2a-sdk 1.3.0's compatibility layer serves it.
const GRPC03: Route = Route {
    agent_args: &["--push", "--grpc03"],
    binding: "grpc",
};

/// Waits until the listener has journaled a push for `row`'s config. Seeing the step in a state
/// does not mean that its push was journaled yet: an SDK may answer the send with the state its
/// push also carries (@a2a-js/sdk 0.3 over JSON-RPC answers `ask` with INPUT_REQUIRED), while the
/// push it fires alongside is still on its way to the listener.
fn wait_pushed(env: &TestEnv, row: &Value, agent: &InteropAgent) {
    let id = row["push"]["configId"]
        .as_str()
        .unwrap_or_else(|| panic!("no push config was sent: {row}\n{}", agent.context()));
    let journal = env.open_journal();
    let pushed = poll(GUARD, || {
        let (config, _) = journal
            .push_config_by_id(id)
            .expect("read")
            .expect("the config is journaled");
        config.last_push_at.ok_or(())
    });
    assert!(
        pushed.is_ok(),
        "no push was journaled for {id} within {GUARD:?}: {row}\n{}",
        agent.context()
    );
}

/// Runs `delegate --format json` and asserts that its send's answer was short of `state`:
/// what reaches `state` later comes from a push.
fn delegate_short_of(
    env: &TestEnv,
    agent: &InteropAgent,
    (step, text): (&str, &str),
    flags: &[&str],
    state: &str,
) {
    let mut args = vec!["--format", "json"];
    args.extend_from_slice(flags);
    let out = delegate(env, step, &agent.url, text, &args);
    let why = || format!("{}{}\n{}", stdout(&out), stderr(&out), agent.context());
    assert!([0, 4].contains(&code(&out)), "{}", why());
    // The send that carried the agent's answer (a v0.3 agent's `unsearchable` warning is a
    // `send` record too, with no task).
    let sent = json_lines(&out)
        .into_iter()
        .find(|r| {
            r["type"] == "action" && r["action"] == "send" && r["detail"]["taskId"].is_string()
        })
        .unwrap_or_else(|| panic!("no send with a task: {}", why()));
    assert!(
        sent["outcome"].is_string() && sent["outcome"] != state,
        "the send's answer already said {state}: {}",
        why()
    );
}

fn pushed(sdk: Sdk, route: &Route) {
    let agent = sdk.start_with(route.agent_args);
    let env = TestEnv::new().real_clock();
    let listen = Listen::start(&env, "0");
    let base = listen.base();
    let flags = ["--push", base.as_str(), "--binding", route.binding];

    // work: every state after the send's answer comes from a push (no pass, no follow).
    delegate_short_of(&env, &agent, ("w/work", "work:3"), &flags, "COMPLETED");
    let row = wait_state(&env, "w/work", "COMPLETED");
    wait_pushed(&env, &row, &agent);
    assert!(row["artifacts"].as_u64() >= Some(1), "{row}");
    let texts = artifact_texts(&env, "w/work");
    assert!(texts.contains("step 3"), "{texts:?}\n{}", agent.context());

    // ask: the question, a push journaled, then a reply on the same task. Whether the send's
    // answer already asks is the SDK's race (it answers with the live task, which the agent's
    // next event may have changed), so only the push is required here.
    let out = delegate(&env, "w/ask", &agent.url, "ask", &flags);
    assert!(
        [0, 4].contains(&code(&out)),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let asked = wait_state(&env, "w/ask", "INPUT_REQUIRED");
    assert_eq!(asked["pendingQuestion"], QUESTION, "{asked}");
    wait_pushed(&env, &asked, &agent);
    let out = env.run(["reply", "w/ask", "one room"]);
    assert_eq!(
        code(&out),
        0,
        "{}{}\n{}",
        stdout(&out),
        stderr(&out),
        agent.context()
    );
    let done = wait_state(&env, "w/ask", "COMPLETED");
    assert_eq!(done["taskId"], asked["taskId"], "{done}");
    assert!(
        artifact_texts(&env, "w/ask").contains("booked: one room"),
        "{done}"
    );
    assert_eq!(attempts(&env, None).len(), 2);

    let (exit, err) = listen.stop();
    assert_eq!(exit, 0, "{}", String::from_utf8_lossy(&err));
}

/// Declares one test per SDK × binding.
macro_rules! pushes {
    ($($name:ident: $sdk:expr, $route:expr;)*) => {$(
        #[test]
        fn $name() {
            pushed($sdk, &$route);
        }
    )*};
}

pushes! {
    python_jsonrpc: Sdk::Python, JSONRPC;
    python_http_json: Sdk::Python, HTTP_JSON;
    python_grpc: Sdk::Python, GRPC;
    python_grpc03: Sdk::Python, GRPC03;
    js_jsonrpc: Sdk::Js, JSONRPC;
    js_http_json: Sdk::Js, HTTP_JSON;
    js_grpc: Sdk::Js, GRPC;
    python03_jsonrpc: Sdk::Python03 { transport: Transport::JsonRpc }, JSONRPC;
    python03_http_json: Sdk::Python03 { transport: Transport::Rest }, HTTP_JSON;
    js03_jsonrpc: Sdk::Js03 { transport: Transport::JsonRpc }, JSONRPC;
    js03_http_json: Sdk::Js03 { transport: Transport::Rest }, HTTP_JSON;
}
