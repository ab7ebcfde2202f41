//! The official A2A v0.3 SDK servers (a2a-sdk 0.3.26 for Python, @a2a-js/sdk 0.3.14 for JS) are
//! up and speak v0.3 on both bindings they serve: JSON-RPC at the base URL and HTTP+JSON under
//! `/rest`. Raw HTTP only (a2a-recover's own client speaks v1.0), so these tests pin the wire
//! shapes the v0.3 bindings must meet; where the two SDKs differ, the test says which does what,
//! so a change in either shows up here first.
//!
//! Observed on the wire:
//!
//! - Card: `protocolVersion: "0.3.0"`, `url` + `preferredTransport` (`JSONRPC` or `HTTP+JSON`),
//!   `additionalInterfaces: [{transport, url}]`.
//! - JSON-RPC: `message/send`, `message/stream`, `tasks/get`, `tasks/cancel`, `tasks/resubscribe`;
//!   results carry `kind` (`task`, `message`, `status-update`, `artifact-update`), states are
//!   kebab-case (`input-required`), parts are `{kind: "text", text}`; status timestamps are
//!   `+00:00` with microseconds in Python, `Z` with milliseconds in JS. `message/send` blocks by
//!   default in both. No `tasks/list` (-32601 in both; v1.0 names such as `GetTask` too). Unknown
//!   task (get, cancel, resubscribe): -32001. Cancel of a terminal task: -32002.
//!   `tasks/resubscribe` on a terminal task: Python streams one error event -32602 ("is in
//!   terminal state"); JS streams the task itself, then ends.
//! - HTTP+JSON is the protobuf JSON mapping, not the JSON-RPC shapes: `POST /v1/message:send`
//!   takes `{message: {messageId, role: "ROLE_USER", content: [{text}]}, configuration}` and
//!   answers `{task: {...}}` or `{msg: {...}}` with `TASK_STATE_*` states, `ROLE_*` roles, message
//!   `content` (artifact `parts`) and no `kind`; a JSON-RPC-shaped body (`parts`, `role: "user"`)
//!   is refused (Python 500, JS 400). Python answers 200, JS 201. Without `configuration.blocking`
//!   Python returns at once (proto default false), JS waits. Python drops the status timestamp
//!   on this binding; JS keeps it. `GET /v1/tasks/{id}` answers the bare task; unknown: 404.
//!   `POST /v1/tasks/{id}:cancel` on a terminal task: 409. `GET /v1/tasks/{id}:subscribe` (JS
//!   also takes POST; Python 405s it) on a terminal task: Python answers 200 and then cuts the
//!   chunked body (no event, no final chunk); JS sends the task as one event. No task listing:
//!   `GET /v1/tasks` is 500 in Python (not implemented) and 404 in JS.
//!
//! The SDKs are installed, pinned, by `scripts/test`; see `tests/common/interop.rs`.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::interop::{InteropAgent, Sdk, Transport};

/// Which official v0.3 SDK serves the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum V03 {
    Python,
    Js,
}

impl V03 {
    fn start(self, transport: Transport) -> InteropAgent {
        match self {
            V03::Python => Sdk::Python03 { transport },
            V03::Js => Sdk::Js03 { transport },
        }
        .start()
    }
}

/// Guards every request and every stream; generous, because the machine is shared.
const HANG_GUARD: Duration = Duration::from_secs(30);

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(HANG_GUARD)
        .build()
        .expect("build the HTTP client")
}

/// Returns the agent's card from `/.well-known/agent-card.json`.
async fn card(agent: &InteropAgent) -> Value {
    let url = format!("{}.well-known/agent-card.json", agent.url);
    let resp = http().get(&url).send().await;
    let resp = resp.unwrap_or_else(|e| panic!("GET {url}: {e}\n{}", agent.context()));
    assert_eq!(
        resp.status(),
        StatusCode::OK,
        "GET {url}\n{}",
        agent.context()
    );
    let text = resp.text().await.expect("read the card");
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("card JSON: {e}: {text}\n{}", agent.context()))
}

/// Gives `req` the JSON body `body`.
fn json_body(req: reqwest::RequestBuilder, body: &Value) -> reqwest::RequestBuilder {
    req.header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body.to_string())
}

/// Sends one JSON-RPC request to the base URL and returns the whole response object.
async fn rpc(agent: &InteropAgent, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let resp = json_body(http().post(&agent.url), &body).send().await;
    let resp = resp.unwrap_or_else(|e| panic!("{method}: {e}\n{}", agent.context()));
    let status = resp.status();
    let text = resp.text().await.expect("read the JSON-RPC response");
    assert_eq!(
        status,
        StatusCode::OK,
        "{method}: {text}\n{}",
        agent.context()
    );
    let value: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{method} JSON: {e}: {text}\n{}", agent.context()));
    assert_eq!(value["jsonrpc"], "2.0", "{method}: {value}");
    value
}

/// Returns the `result` of a JSON-RPC call, failing on an `error`.
async fn rpc_result(agent: &InteropAgent, method: &str, params: Value) -> Value {
    let value = rpc(agent, method, params).await;
    assert!(
        value.get("error").is_none(),
        "{method}: {value}\n{}",
        agent.context()
    );
    value["result"].clone()
}

/// Returns the `error.code` of a JSON-RPC call that must fail.
async fn rpc_error_code(agent: &InteropAgent, method: &str, params: Value) -> i64 {
    let value = rpc(agent, method, params).await;
    value["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("{method} must fail with an error code: {value}"))
}

/// Reads a whole SSE response (the stream must end by itself) and returns its `data:` events.
async fn sse_events(resp: reqwest::Response) -> Vec<Value> {
    let (events, cut) = sse_read(resp).await;
    assert!(
        cut.is_none(),
        "the stream ends cleanly: {cut:?} after {events:?}"
    );
    events
}

/// Reads an SSE response until it ends and returns its `data:` events and, when the body broke
/// off instead of ending (e.g. a chunked body without its last chunk), why.
async fn sse_read(mut resp: reqwest::Response) -> (Vec<Value>, Option<String>) {
    let mut body = Vec::new();
    let cut = loop {
        let next = tokio::time::timeout(HANG_GUARD, resp.chunk())
            .await
            .unwrap_or_else(|_| panic!("the stream does not end within {HANG_GUARD:?}"));
        match next {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) => break None,
            Err(e) => break Some(format!("{e:?}")),
        }
    };
    let events = String::from_utf8_lossy(&body)
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(|data| serde_json::from_str(data.trim()).expect("an SSE event is JSON"))
        .collect();
    (events, cut)
}

/// A v0.3 JSON-RPC user message (`kind`, `parts: [{kind: "text"}]`, `role: "user"`).
fn rpc_message(text: &str, task: Option<&Value>) -> Value {
    let mut message = json!({
        "kind": "message",
        "messageId": uuid::Uuid::new_v4().to_string(),
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
    });
    if let Some(task) = task {
        message["taskId"] = task["id"].clone();
        message["contextId"] = task["contextId"].clone();
    }
    json!({ "message": message })
}

/// A v0.3 HTTP+JSON send body: the protobuf JSON mapping (`content`, `ROLE_USER`).
fn rest_send_body(text: &str, blocking: Option<bool>) -> Value {
    let mut body = json!({"message": {
        "messageId": uuid::Uuid::new_v4().to_string(),
        "role": "ROLE_USER",
        "content": [{"text": text}],
    }});
    if let Some(blocking) = blocking {
        body["configuration"] = json!({ "blocking": blocking });
    }
    body
}

/// Returns the REST interface URL (`…/rest`) the card lists.
fn rest_base(agent: &InteropAgent) -> String {
    Transport::Rest.url(&agent.url)
}

/// Sends `req` and returns its status and JSON body (`Value::Null` when the body is not JSON).
async fn rest_call(agent: &InteropAgent, req: reqwest::RequestBuilder) -> (StatusCode, Value) {
    let resp = req
        .send()
        .await
        .unwrap_or_else(|e| panic!("REST call: {e}\n{}", agent.context()));
    let status = resp.status();
    let text = resp.text().await.expect("read the REST body");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// The texts of the artifact named `name`, its parts concatenated.
fn artifact_text(task: &Value, name: &str) -> String {
    let artifact = task["artifacts"]
        .as_array()
        .and_then(|all| all.iter().find(|a| a["name"] == name))
        .unwrap_or_else(|| panic!("no artifact {name:?} in {task}"));
    artifact["parts"]
        .as_array()
        .expect("artifact parts")
        .iter()
        .map(|p| p["text"].as_str().expect("a text part"))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The card.
// ---------------------------------------------------------------------------------------------

async fn card_names_the_preferred_interface(sdk: V03, preferred: Transport) {
    let agent = sdk.start(preferred);
    let card = card(&agent).await;
    assert_eq!(card["protocolVersion"], "0.3.0", "{card}");
    assert_eq!(card["url"], preferred.url(&agent.url), "{card}");
    assert_eq!(card["preferredTransport"], preferred.card_name(), "{card}");
    assert_eq!(
        card["additionalInterfaces"],
        json!([
            {"transport": "JSONRPC", "url": Transport::JsonRpc.url(&agent.url)},
            {"transport": "HTTP+JSON", "url": Transport::Rest.url(&agent.url)},
        ]),
        "{card}"
    );
    assert_eq!(card["capabilities"]["streaming"], true, "{card}");
    assert!(
        card.get("supportedInterfaces").is_none(),
        "a v0.3 card has no v1.0 fields: {card}"
    );
}

async fn card_prefers_jsonrpc(sdk: V03) {
    card_names_the_preferred_interface(sdk, Transport::JsonRpc).await;
}

async fn card_prefers_rest(sdk: V03) {
    card_names_the_preferred_interface(sdk, Transport::Rest).await;
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC.
// ---------------------------------------------------------------------------------------------

async fn jsonrpc_send_then_get(sdk: V03) {
    let agent = sdk.start(Transport::JsonRpc);
    let task = rpc_result(&agent, "message/send", rpc_message("hello", None)).await;
    assert_eq!(task["kind"], "task", "{task}");
    assert_eq!(task["status"]["state"], "completed", "{task}");
    assert_eq!(artifact_text(&task, "echo"), "hello");

    let got = rpc_result(&agent, "tasks/get", json!({"id": task["id"]})).await;
    assert_eq!(got["kind"], "task", "{got}");
    assert_eq!(got["id"], task["id"], "{got}");
    assert_eq!(got["status"]["state"], "completed", "{got}");
    assert_eq!(artifact_text(&got, "echo"), "hello");

    let direct = rpc_result(&agent, "message/send", rpc_message("direct", None)).await;
    assert_eq!(direct["kind"], "message", "{direct}");
    assert_eq!(direct["role"], "agent", "{direct}");
}

async fn jsonrpc_ask_then_reply_on_the_same_task(sdk: V03) {
    let agent = sdk.start(Transport::JsonRpc);
    let asked = rpc_result(&agent, "message/send", rpc_message("ask", None)).await;
    assert_eq!(asked["status"]["state"], "input-required", "{asked}");
    assert_eq!(
        asked["status"]["message"]["parts"][0]["text"],
        "two rooms or one?"
    );
    let done = rpc_result(
        &agent,
        "message/send",
        rpc_message("one room", Some(&asked)),
    )
    .await;
    assert_eq!(
        done["id"], asked["id"],
        "the reply continues the task: {done}"
    );
    assert_eq!(done["status"]["state"], "completed", "{done}");
    assert_eq!(artifact_text(&done, "booking"), "booked: one room");
}

async fn jsonrpc_errors(sdk: V03) {
    let agent = sdk.start(Transport::JsonRpc);
    let unknown = json!({"id": "no-such-task"});
    assert_eq!(
        rpc_error_code(&agent, "tasks/get", unknown.clone()).await,
        -32001
    );
    assert_eq!(
        rpc_error_code(&agent, "tasks/cancel", unknown).await,
        -32001
    );
    assert_eq!(
        rpc_error_code(&agent, "tasks/list", json!({})).await,
        -32601,
        "v0.3 has no tasks/list"
    );
    assert_eq!(
        rpc_error_code(&agent, "GetTask", json!({"id": "x"})).await,
        -32601,
        "v1.0 method names are unknown"
    );

    let task = rpc_result(&agent, "message/send", rpc_message("hello", None)).await;
    let id = json!({"id": task["id"]});
    assert_eq!(
        rpc_error_code(&agent, "tasks/cancel", id.clone()).await,
        -32002
    );

    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/resubscribe", "params": id});
    let resp = json_body(http().post(&agent.url), &body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let events = sse_events(resp).await;
    assert_eq!(events.len(), 1, "{events:?}");
    match sdk {
        V03::Python => assert_eq!(
            events[0]["error"]["code"], -32602,
            "Python refuses to resubscribe to a terminal task: {events:?}"
        ),
        V03::Js => {
            let result = &events[0]["result"];
            assert_eq!(
                result["kind"], "task",
                "JS sends the terminal task: {events:?}"
            );
            assert_eq!(result["status"]["state"], "completed", "{events:?}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// HTTP+JSON.
// ---------------------------------------------------------------------------------------------

async fn rest_send_then_get(sdk: V03) {
    let agent = sdk.start(Transport::Rest);
    let base = rest_base(&agent);
    let send = json_body(
        http().post(format!("{base}/v1/message:send")),
        &rest_send_body("hello", Some(true)),
    );
    let (status, sent) = rest_call(&agent, send).await;
    let created = match sdk {
        V03::Python => StatusCode::OK,
        V03::Js => StatusCode::CREATED,
    };
    assert_eq!(status, created, "{sent}\n{}", agent.context());
    let task = &sent["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{sent}");
    assert!(
        task.get("kind").is_none(),
        "protobuf JSON has no kind: {sent}"
    );
    assert_eq!(task["history"][0]["role"], "ROLE_USER", "{sent}");
    assert_eq!(task["history"][0]["content"][0]["text"], "hello", "{sent}");
    assert_eq!(artifact_text(task, "echo"), "hello");

    let id = task["id"].as_str().expect("task id");
    let (status, got) = rest_call(&agent, http().get(format!("{base}/v1/tasks/{id}"))).await;
    assert_eq!(status, StatusCode::OK, "{got}");
    assert_eq!(got["id"], id, "GetTask answers the bare task: {got}");
    assert_eq!(got["status"]["state"], "TASK_STATE_COMPLETED", "{got}");
    let stamped = got["status"].get("timestamp").is_some();
    assert_eq!(
        stamped,
        sdk == V03::Js,
        "Python drops the status timestamp over HTTP+JSON, JS keeps it: {got}"
    );

    // The same task through JSON-RPC: one store behind both bindings.
    let via_rpc = rpc_result(&agent, "tasks/get", json!({"id": id})).await;
    assert_eq!(via_rpc["kind"], "task", "{via_rpc}");
    assert_eq!(via_rpc["status"]["state"], "completed", "{via_rpc}");
}

async fn rest_blocking_default(sdk: V03) {
    let agent = sdk.start(Transport::Rest);
    let send = json_body(
        http().post(format!("{}/v1/message:send", rest_base(&agent))),
        &rest_send_body("work:20", None),
    );
    let (status, sent) = rest_call(&agent, send).await;
    assert!(status.is_success(), "{status} {sent}");
    let state = sent["task"]["status"]["state"].as_str().expect("a state");
    match sdk {
        V03::Python => assert!(
            ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"].contains(&state),
            "Python reads a missing `blocking` as false and returns at once: {sent}"
        ),
        V03::Js => assert_eq!(
            state, "TASK_STATE_COMPLETED",
            "JS blocks unless told otherwise: {sent}"
        ),
    }
}

async fn rest_errors(sdk: V03) {
    let agent = sdk.start(Transport::Rest);
    let base = rest_base(&agent);
    let (status, body) =
        rest_call(&agent, http().get(format!("{base}/v1/tasks/no-such-task"))).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");

    let jsonrpc_shaped = rpc_message("hello", None);
    let send = http().post(format!("{base}/v1/message:send"));
    let (status, body) = rest_call(&agent, json_body(send, &jsonrpc_shaped)).await;
    let refused = match sdk {
        V03::Python => StatusCode::INTERNAL_SERVER_ERROR,
        V03::Js => StatusCode::BAD_REQUEST,
    };
    assert_eq!(status, refused, "a JSON-RPC-shaped body is refused: {body}");

    let (status, body) = rest_call(&agent, http().get(format!("{base}/v1/tasks"))).await;
    let no_list = match sdk {
        V03::Python => StatusCode::INTERNAL_SERVER_ERROR,
        V03::Js => StatusCode::NOT_FOUND,
    };
    assert_eq!(status, no_list, "no task listing over HTTP+JSON: {body}");

    let send = json_body(
        http().post(format!("{base}/v1/message:send")),
        &rest_send_body("hello", Some(true)),
    );
    let (_, sent) = rest_call(&agent, send).await;
    let id = sent["task"]["id"].as_str().expect("task id");
    let cancel = http().post(format!("{base}/v1/tasks/{id}:cancel"));
    let (status, body) = rest_call(&agent, cancel).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");

    let resp = http()
        .get(format!("{base}/v1/tasks/{id}:subscribe"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    match sdk {
        V03::Python => {
            let (events, cut) = sse_read(resp).await;
            assert!(events.is_empty(), "Python sends no event: {events:?}");
            assert!(
                cut.is_some(),
                "Python cuts the chunked body instead of ending it (its error only goes to its log)"
            );
        }
        V03::Js => {
            let events = sse_events(resp).await;
            assert_eq!(events.len(), 1, "{events:?}");
            assert_eq!(
                events[0]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
                "JS sends the terminal task: {events:?}"
            );
        }
    }
}

/// Declares each check as two tests, one per official v0.3 SDK.
macro_rules! against_both_sdks {
    ($($check:ident),* $(,)?) => {$(
        mod $check {
            use super::{V03, $check};

            #[tokio::test(flavor = "current_thread")]
            async fn python() {
                $check(V03::Python).await;
            }

            #[tokio::test(flavor = "current_thread")]
            async fn js() {
                $check(V03::Js).await;
            }
        }
    )*};
}

against_both_sdks!(
    card_prefers_jsonrpc,
    card_prefers_rest,
    jsonrpc_send_then_get,
    jsonrpc_ask_then_reply_on_the_same_task,
    jsonrpc_errors,
    rest_send_then_get,
    rest_blocking_default,
    rest_errors,
);
