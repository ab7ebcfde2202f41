//! The A2A v0.3 JSON-RPC binding: v0.3 method names over the same JSON-RPC 2.0 envelope as
//! v1.0 (`jsonrpc.rs` builds and checks it), with the payloads converted by `v03.rs`.
//!
//! Differences from the v1.0 binding: the methods are `message/send`, `message/stream`,
//! `tasks/get`, `tasks/cancel` and `tasks/resubscribe`; no `A2A-Version` header is sent (a v0.3
//! server knows none); there is no tenant; and there is **no `tasks/list`**: a look on such an
//! agent cannot list ([`super::ProtocolBinding::can_list_tasks`] says so before anything is
//! sent, and a `ListTasks` call fails locally, never on the wire). Answers are turned into
//! v1.0 JSON before the v1.0 types read them, so the journal holds one shape; a status-update
//! with `final: true` ends its stream.

use reqwest::Url;
use serde_json::{Value, json};

use super::binding::{Call, Raw, WireRequest, typed};
use super::error::{A2aError, DecodeKind};
use super::jsonrpc;
use super::normalize;
use super::sse::SseEvent;
use super::transport::Op;
use super::types;
use super::v03::{self, methods};

/// The method name shown for `ListTasks`, which v0.3 does not have.
const NO_LIST: &str = "tasks/list (not in A2A v0.3)";

/// Returns the JSON-RPC method of an operation.
pub(crate) fn method(call: &Call<'_>) -> &'static str {
    match call {
        Call::SendMessage(_) => methods::SEND,
        Call::SendStreamingMessage(_) => methods::STREAM,
        Call::GetTask { .. } => methods::GET,
        Call::ListTasks(_) => NO_LIST,
        Call::CancelTask { .. } => methods::CANCEL,
        Call::SubscribeToTask { .. } => methods::RESUBSCRIBE,
        Call::DeletePushConfig { .. } => methods::DELETE_PUSH_CONFIG,
    }
}

/// Builds the JSON-RPC `POST` of an operation (no `A2A-Version` header, no tenant).
pub(crate) fn request(call: &Call<'_>, url: &Url) -> Result<WireRequest, A2aError> {
    let send = |req: &types::SendMessageRequest| {
        let mut params = jsonrpc::to_params(req)?;
        v03::send_params_from_v1(&mut params);
        Ok::<_, A2aError>(params)
    };
    let (params, accept) = match *call {
        Call::SendMessage(req) => (send(req)?, "application/json"),
        Call::SendStreamingMessage(req) => (send(req)?, "text/event-stream"),
        Call::GetTask { id, history_length } => {
            let n = v03::history_length(history_length);
            (json!({ "id": id, "historyLength": n }), "application/json")
        }
        Call::ListTasks(_) => {
            return Err(A2aError::Client {
                detail: "an A2A v0.3 agent has no tasks/list; its tasks cannot be searched"
                    .to_owned(),
            });
        }
        Call::CancelTask { id } => (json!({ "id": id }), "application/json"),
        Call::SubscribeToTask { id } => (json!({ "id": id }), "text/event-stream"),
        Call::DeletePushConfig { task_id, config_id } => (
            json!({ "id": task_id, "pushNotificationConfigId": config_id }),
            "application/json",
        ),
    };
    jsonrpc::post(method(call), &params, accept, url, None)
}

/// Converts a v0.3 result with `convert`, naming the field and agent on failure.
fn converted(
    op: &Op,
    result: Value,
    convert: fn(Value) -> Result<Value, String>,
) -> Result<Value, A2aError> {
    convert(result).map_err(|detail| op.decode(DecodeKind::WrongShape, detail))
}

/// Decodes one SSE event's data: a JSON-RPC response whose `result` is a bare v0.3 event.
pub(crate) fn stream_item(
    op: &Op,
    echo: Option<&str>,
    event: &SseEvent,
) -> Result<Raw<types::StreamResponse>, A2aError> {
    stream_response(op, jsonrpc::stream_result(op, echo, event)?)
}

/// Reads a `message/send` result (a bare Task or Message).
pub(crate) fn send_message_response(
    op: &Op,
    result: Value,
) -> Result<Raw<types::SendMessageResponse>, A2aError> {
    let v1 = converted(op, result, v03::send_result_to_v1)?;
    typed(op, v1, normalize::send_message_response)
}

/// Reads a `tasks/get` or `tasks/cancel` result.
pub(crate) fn task(op: &Op, result: Value) -> Result<Raw<types::Task>, A2aError> {
    let v1 = converted(op, result, v03::task_result_to_v1)?;
    typed(op, v1, normalize::task)
}

/// Reads one stream result (an SSE event's, or a plain JSON answer in place of a stream).
pub(crate) fn stream_response(
    op: &Op,
    result: Value,
) -> Result<Raw<types::StreamResponse>, A2aError> {
    let v1 = converted(op, result, v03::stream_result_to_v1)?;
    typed(op, v1, normalize::stream_response)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(wire: &WireRequest) -> Value {
        serde_json::from_slice(&wire.body.as_ref().unwrap().1).unwrap()
    }

    #[test]
    fn requests_use_v03_names_and_no_version_header() {
        let url = Url::parse("http://a.example/rpc").unwrap();
        let req: types::SendMessageRequest = serde_json::from_value(json!({
            "message": {"messageId": "m-1", "role": "ROLE_USER", "contextId": "c",
                        "parts": [{"text": "hi"}]},
            "configuration": {"returnImmediately": true}}))
        .unwrap();
        let wire = request(&Call::SendMessage(&req), &url).unwrap();
        assert_eq!(wire.version, None);
        let b = body(&wire);
        assert_eq!(b["method"], "message/send");
        assert_eq!(b["params"]["message"]["kind"], "message");
        assert_eq!(b["params"]["message"]["role"], "user");
        assert_eq!(b["params"]["message"]["parts"][0]["kind"], "text");
        assert_eq!(b["params"]["configuration"]["blocking"], false);
        assert!(
            b["params"]["configuration"]
                .get("returnImmediately")
                .is_none()
        );
        let wire = request(&Call::SendStreamingMessage(&req), &url).unwrap();
        assert_eq!(body(&wire)["method"], "message/stream");
        assert_eq!(wire.accept, "text/event-stream");
        let get = request(
            &Call::GetTask {
                id: "t",
                history_length: Some(0),
            },
            &url,
        )
        .unwrap();
        assert_eq!(body(&get)["params"], json!({"id": "t", "historyLength": 0}));
        // Unset is the server's default in v0.3 (none at all for @a2a-js/sdk 0.3.14): the whole
        // history is asked for explicitly.
        let get = request(
            &Call::GetTask {
                id: "t",
                history_length: None,
            },
            &url,
        )
        .unwrap();
        assert_eq!(
            body(&get)["params"],
            json!({"id": "t", "historyLength": i32::MAX})
        );
        assert_eq!(
            body(&request(&Call::CancelTask { id: "t" }, &url).unwrap())["method"],
            "tasks/cancel"
        );
        let sub = request(&Call::SubscribeToTask { id: "t" }, &url).unwrap();
        assert_eq!(body(&sub)["method"], "tasks/resubscribe");
        let list: types::ListTasksRequest = serde_json::from_value(json!({})).unwrap();
        let err = request(&Call::ListTasks(&list), &url).unwrap_err();
        assert_eq!(err.class(), crate::a2a::ErrorClass::NotSent);
    }

    #[test]
    fn answers_become_the_v1_model() {
        let op = Op::new("http://127.0.0.1/", "message/send");
        let raw = json!({"kind": "task", "id": "t-1", "contextId": "c",
                         "status": {"state": "working"}});
        let got = send_message_response(&op, raw).unwrap();
        let types::SendMessageResponse::Task(t) = got.value else {
            panic!("not a task")
        };
        assert_eq!(t.status.state, types::TaskState::Working);
        assert_eq!(got.raw["task"]["status"]["state"], "TASK_STATE_WORKING");
        let err = task(&op, json!({"kind": "message"})).unwrap_err();
        assert!(err.to_string().contains("`kind`"), "{err}");
        let ev = stream_response(
            &op,
            json!({"kind": "status-update", "taskId": "t-1", "contextId": "c",
                   "status": {"state": "input-required"}, "final": true}),
        )
        .unwrap();
        assert!(v03::is_final(&ev.raw));
        assert!(matches!(
            ev.value,
            types::StreamResponse::StatusUpdate(ref u) if u.status.state == types::TaskState::InputRequired
        ));
    }
}
