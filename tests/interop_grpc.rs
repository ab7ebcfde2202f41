//! Recovery over gRPC against agents on the official A2A SDKs, each serving gRPC alone (its card
//! names the interface as `127.0.0.1:PORT`, without a scheme): a2a-sdk 1.3.0's v1.0 service
//! (`a2a.server.request_handlers.grpc_handler`) and its v0.3 service (`a2a.compat.v0_3`), and
//! @a2a-js/sdk 1.3.0's (`@a2a-js/sdk/server/grpc`, which refuses calls without `a2a-version`).
//! Against each: delegate → reconcile → follow to COMPLETED; `ask` → reply on the same task; a
//! crash after the send found by ListTasks (v0.3, which has none: `UNCERTAIN`, nothing resent);
//! a stream cut by a proxy, resubscribed, its artifact stored once; an unknown task is the
//! agent's own `TASK_NOT_FOUND`; `agents probe` over gRPC.
//!
//! The SDKs are installed, pinned, by `scripts/test`; see `tests/common/interop.rs`.

use a2a_recover::a2a::ProtocolBinding;

use crate::common::bindings::steps;
use crate::common::bindings::{
    ask_then_reply_at, delegate_reconcile_follow_at, follow_through_a_cut,
};
use crate::common::commands::{crashing, reconcile, the_attempt};
use crate::common::interop::{
    InteropAgent, plain_endpoint, start_js_agent_with, start_python_agent_with, tasks_in_context,
    test_client,
};
use crate::common::journal::artifact_texts_of;
use crate::common::tcp_cut_proxy::TcpCutProxy;
use crate::common::{TestEnv, block_on, code, json_lines, stderr, stdout};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sdk {
    Python,
    Python03,
    Js,
}

impl Sdk {
    /// Starts the agent serving gRPC; its card names `advertise` when given (a proxy).
    fn start(self, advertise: Option<&str>) -> InteropAgent {
        let mut args = vec![match self {
            Sdk::Python | Sdk::Js => "--grpc",
            Sdk::Python03 => "--grpc03",
        }];
        if let Some(a) = advertise {
            args.extend(["--grpc-advertise", a]);
        }
        match self {
            Sdk::Python | Sdk::Python03 => start_python_agent_with(&args),
            Sdk::Js => start_js_agent_with(&args),
        }
    }

    fn version(self) -> &'static str {
        match self {
            Sdk::Python | Sdk::Js => "1.0",
            Sdk::Python03 => "0.3",
        }
    }

    fn binding(self) -> ProtocolBinding {
        match self {
            Sdk::Python | Sdk::Js => ProtocolBinding::GrpcV1,
            Sdk::Python03 => ProtocolBinding::GrpcV03,
        }
    }
}

/// The attempt went over gRPC, to the card's scheme-less interface read as plaintext (the card
/// came over `http`).
fn assert_sent_over_grpc(sdk: Sdk, a: &InteropAgent, row: &serde_json::Value) {
    assert_eq!(row["binding"], "GRPC", "{row}");
    assert_eq!(row["protocolVersion"], sdk.version(), "{row}");
    assert_eq!(
        row["interfaceUrl"],
        format!("http://{}/", a.grpc_addr()),
        "{row}"
    );
}

fn delegate_reconcile_follow(sdk: Sdk) {
    let a = sdk.start(None);
    delegate_reconcile_follow_at(&a, |row| assert_sent_over_grpc(sdk, &a, row));
}

fn ask_then_reply(sdk: Sdk) {
    let a = sdk.start(None);
    ask_then_reply_at(&a, |row| assert_sent_over_grpc(sdk, &a, row));
}

/// A crash after the send: v1.0 finds the task by ListTasks over gRPC; v0.3 has no ListTasks,
/// so the attempt is UNCERTAIN. Either way nothing is sent again.
fn crash_after_send_is_not_resent(sdk: Sdk) {
    let a = sdk.start(None);
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
    assert_sent_over_grpc(sdk, &a, &row);
    if sdk == Sdk::Python03 {
        assert_eq!(row["state"], "UNCERTAIN", "{row}");
        assert!(row["taskId"].is_null(), "{row}");
    } else {
        assert_eq!(row["state"], "INPUT_REQUIRED", "{row}");
        assert_eq!(row["pendingQuestion"], "two rooms or one?");
        // Nothing was resent: the context holds the one task, the one found.
        let context = row["contextId"].as_str().unwrap();
        let tasks = tasks_in_context(
            row["interfaceUrl"].as_str().unwrap(),
            sdk.binding(),
            context,
        );
        assert_eq!(tasks, [row["taskId"].as_str().unwrap()], "{}", why());
    }
    let out = env.run(["inspect", "trip/hotel", "--events", "--format", "json"]);
    let sends = json_lines(&out)
        .iter()
        .filter(|e| e["type"] == "event" && e["kind"] == "endpoint")
        .count();
    assert_eq!(sends, 1, "one send, nothing resent");
}

/// A follow whose gRPC stream a proxy cuts mid-task resubscribes and ends COMPLETED, the
/// artifact stored once.
fn a_cut_stream_is_resubscribed(sdk: Sdk) {
    let proxy = TcpCutProxy::bind(12);
    let a = sdk.start(Some(&proxy.host_port()));
    proxy.forward_to(&a.grpc_addr());
    let (env, row) = follow_through_a_cut(&a, &a.url, &[], || proxy.cut());
    assert_eq!(row["binding"], "GRPC", "{row}");
    assert_eq!(
        row["interfaceUrl"],
        format!("http://{}/", proxy.host_port()),
        "{row}"
    );
    assert_eq!(artifact_texts_of(&env.journal(), "w/s"), [steps(40)]);
}

/// A task the agent does not know is its own TASK_NOT_FOUND (v1.0: the `ErrorInfo` reason; v0.3:
/// the `TaskNotFoundError` message), never an unattributed NOT_FOUND.
fn an_unknown_task_is_the_agents_task_not_found(sdk: Sdk) {
    let a = sdk.start(None);
    let url = format!("http://{}/", a.grpc_addr());
    let e = block_on(async {
        let ep = plain_endpoint(&url, sdk.binding());
        test_client()
            .get_task(&ep, "no-such-task", None)
            .await
            .unwrap_err()
    });
    assert!(e.is_task_not_found(), "{e}\n{}", a.context());
    assert_eq!(e.answered(), Some(true), "{e}");
}

#[test]
fn python_grpc_delegate_reconcile_follow() {
    delegate_reconcile_follow(Sdk::Python);
}

#[test]
fn python03_grpc_delegate_reconcile_follow() {
    delegate_reconcile_follow(Sdk::Python03);
}

#[test]
fn js_grpc_delegate_reconcile_follow() {
    delegate_reconcile_follow(Sdk::Js);
}

#[test]
fn python_grpc_ask_then_reply() {
    ask_then_reply(Sdk::Python);
}

#[test]
fn python03_grpc_ask_then_reply() {
    ask_then_reply(Sdk::Python03);
}

#[test]
fn js_grpc_ask_then_reply() {
    ask_then_reply(Sdk::Js);
}

#[test]
fn python_grpc_crash_after_send_is_found() {
    crash_after_send_is_not_resent(Sdk::Python);
}

#[test]
fn python03_grpc_crash_after_send_is_uncertain() {
    crash_after_send_is_not_resent(Sdk::Python03);
}

#[test]
fn js_grpc_crash_after_send_is_found() {
    crash_after_send_is_not_resent(Sdk::Js);
}

#[test]
fn python_grpc_cut_stream_is_resubscribed() {
    a_cut_stream_is_resubscribed(Sdk::Python);
}

#[test]
fn python03_grpc_cut_stream_is_resubscribed() {
    a_cut_stream_is_resubscribed(Sdk::Python03);
}

#[test]
fn js_grpc_cut_stream_is_resubscribed() {
    a_cut_stream_is_resubscribed(Sdk::Js);
}

#[test]
fn python_grpc_unknown_task_is_task_not_found() {
    an_unknown_task_is_the_agents_task_not_found(Sdk::Python);
}

#[test]
fn python03_grpc_unknown_task_is_task_not_found() {
    an_unknown_task_is_the_agents_task_not_found(Sdk::Python03);
}

#[test]
fn js_grpc_unknown_task_is_task_not_found() {
    an_unknown_task_is_the_agents_task_not_found(Sdk::Js);
}

/// `agents probe` over gRPC: the card's gRPC interface is the one chosen, and an unknown task's
/// subscription is the agent's TASK_NOT_FOUND, reported by its JSON-RPC code.
fn probe_over_grpc(sdk: Sdk) {
    let a = sdk.start(None);
    let env = TestEnv::new();
    let out = env.run(["agents", "probe", &a.url, "--format", "json"]);
    assert_eq!(
        code(&out),
        0,
        "{}{}\n{}",
        stdout(&out),
        stderr(&out),
        a.context()
    );
    let lines = json_lines(&out);
    let probe = lines
        .iter()
        .find(|l| l["type"] == "probe")
        .unwrap_or_else(|| panic!("{lines:?}"));
    let profile = &probe["profile"];
    assert_eq!(profile["bindings"][0]["binding"], "GRPC", "{probe}");
    assert_eq!(profile["bindings"][0]["chosen"], true, "{probe}");
    assert_eq!(profile["subscribe"], "ok", "{probe}");
    assert_eq!(profile["unknownTaskSubscribeCode"], "-32001", "{probe}");
    assert_eq!(
        probe["interfaceUrl"],
        format!("http://{}/", a.grpc_addr()),
        "{probe}"
    );
}

#[test]
fn python_grpc_probe() {
    probe_over_grpc(Sdk::Python);
}

#[test]
fn js_grpc_probe() {
    probe_over_grpc(Sdk::Js);
}
