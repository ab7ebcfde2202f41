//! The A2A v0.3 HTTP+JSON (REST) binding, as the official v0.3 SDKs serve it: the protobuf
//! JSON form of the v0.3 `a2a.proto`, not the JSON-RPC shapes.
//!
//! Paths hang off the interface URL under `/v1`: `POST /v1/message:send`, `POST
//! /v1/message:stream`, `GET /v1/tasks/{id}` (`historyLength` in the query), `POST
//! /v1/tasks/{id}:cancel`, `GET /v1/tasks/{id}:subscribe` (the verb both SDKs take). There is
//! **no task listing** (one SDK answers 500, the other 404), so [`super::ProtocolBinding::can_list_tasks`]
//! is false and a `ListTasks` call fails locally. No `A2A-Version` header, no tenant.
//!
//! Payloads differ from v1.0 JSON only in names: a message carries `content` (an artifact
//! `parts`), a part is `{text}`, `{file: {fileWithUri | fileWithBytes, mimeType, name}}` or
//! `{data: {data}}`, a task status its message as `message` (proto field `update`), a send
//! answer is `{task}` or `{msg}` (also read as `message`), the request asks `blocking` (the
//! inverse of `returnImmediately`), and `TASK_STATE_CANCELLED` is spelled with two Ls. Answers
//! are turned into v1.0 JSON before the v1.0 types read them; a `statusUpdate` with `final:
//! true` ends its stream.
//!
//! Errors: the v0.3 SDKs send no `google.rpc.Status`. The agent's word that a task does not
//! exist is a body carrying the A2A code (`{"code": -32001, …}`, as `@a2a-js/sdk` sends), a
//! `google.rpc.Status` naming `TASK_NOT_FOUND`, or a 404 whose JSON body is exactly the
//! `a2a-sdk` text `{"message": "Task not found"}`. Any other 404 (an HTML page, a router's
//! `{"detail": "Not Found"}`) is a proxy's or a router's ([`A2aError::Http`] `unattributed`):
//! an attempt is `LOST` only on the agent's word.

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode, Url};
use serde_json::{Map, Value, json};

use super::binding::{Call, Raw, WireRequest, typed};
use super::error::{A2aError, DecodeKind, RpcError};
use super::httpjson;
use super::normalize;
use super::sse::SseEvent;
use super::transport::{Op, decode_json};
use super::types;
use super::v03;

/// The media type of request bodies (the v0.3 SDKs read `application/json`).
const CONTENT_TYPE: &str = "application/json";
/// What unary requests accept.
const ACCEPT_JSON: &str = "application/json";
/// The operation name shown for `ListTasks`, which v0.3 does not have.
const NO_LIST: &str = "ListTasks (not in A2A v0.3)";
/// The text `a2a-sdk` 0.3 sends, alone in `{"message"}`, for an unknown task.
const PYTHON_TASK_NOT_FOUND: &str = "Task not found";
/// The JSON-RPC code of `TaskNotFoundError`.
const TASK_NOT_FOUND: i64 = super::ErrorKind::TaskNotFound.code();

/// Returns the operation's name for errors and logs.
pub(crate) fn method(call: &Call<'_>) -> &'static str {
    match call {
        Call::ListTasks(_) => NO_LIST,
        other => super::jsonrpc::method(other),
    }
}

/// Builds the request of an operation: its verb, `/v1` path, query and body.
pub(crate) fn request(call: &Call<'_>, base: &Url) -> Result<WireRequest, A2aError> {
    httpjson::refuse_unaddressable(call, base)?;
    let (method, segments, body, accept): (_, Vec<String>, _, _) = match *call {
        Call::SendMessage(req) => (
            Method::POST,
            vec!["message:send".to_owned()],
            Some(to_body(req)?),
            ACCEPT_JSON,
        ),
        Call::SendStreamingMessage(req) => (
            Method::POST,
            vec!["message:stream".to_owned()],
            Some(to_body(req)?),
            "text/event-stream",
        ),
        Call::GetTask { id, .. } => (
            Method::GET,
            vec!["tasks".to_owned(), id.to_owned()],
            None,
            ACCEPT_JSON,
        ),
        Call::ListTasks(_) => {
            return Err(A2aError::Client {
                detail: "an A2A v0.3 agent has no task listing; its tasks cannot be searched"
                    .to_owned(),
            });
        }
        Call::CancelTask { id } => (
            Method::POST,
            vec!["tasks".to_owned(), format!("{id}:cancel")],
            Some(b"{}".to_vec()),
            ACCEPT_JSON,
        ),
        Call::SubscribeToTask { id } => (
            Method::GET,
            vec!["tasks".to_owned(), format!("{id}:subscribe")],
            None,
            "text/event-stream",
        ),
        Call::DeletePushConfig { task_id, config_id } => (
            Method::DELETE,
            vec![
                "tasks".to_owned(),
                task_id.to_owned(),
                "pushNotificationConfigs".to_owned(),
                config_id.to_owned(),
            ],
            None,
            ACCEPT_JSON,
        ),
    };
    let mut url = httpjson::join_path(
        base,
        std::iter::once("v1").chain(segments.iter().map(String::as_str)),
    )?;
    if let Call::GetTask { history_length, .. } = *call {
        let n = v03::history_length(history_length);
        url.query_pairs_mut()
            .append_pair("historyLength", &n.to_string());
    }
    Ok(WireRequest {
        method,
        url,
        body: body.map(|b| (CONTENT_TYPE, b)),
        accept,
        version: None,
        echo: None,
    })
}

/// Serializes a v1.0 `SendMessageRequest` as the v0.3 proto JSON body.
fn to_body(req: &types::SendMessageRequest) -> Result<Vec<u8>, A2aError> {
    let encode = |e: serde_json::Error| A2aError::Client {
        detail: format!("could not encode the request: {e}"),
    };
    let value = send_request_from_v1(&serde_json::to_value(req).map_err(encode)?);
    serde_json::to_vec(&value).map_err(encode)
}

// ---------------------------------------------------------------------------------------------
// v1.0 → v0.3 proto JSON (what we send)
// ---------------------------------------------------------------------------------------------

/// Rewrites a v1.0 part as a v0.3 proto part.
fn part_from_v1(v: &Value) -> Value {
    let Some(obj) = v.as_object() else {
        return v.clone();
    };
    let mut out = Map::new();
    if let Some(text) = obj.get("text") {
        out.insert("text".to_owned(), text.clone());
    } else if let Some(data) = obj.get("data") {
        out.insert("data".to_owned(), json!({ "data": data }));
    } else if obj.contains_key("raw") || obj.contains_key("url") {
        let mut file = Map::new();
        for (from, to) in [
            ("raw", "fileWithBytes"),
            ("url", "fileWithUri"),
            ("mediaType", "mimeType"),
            ("filename", "name"),
        ] {
            if let Some(x) = obj.get(from) {
                file.insert(to.to_owned(), x.clone());
            }
        }
        out.insert("file".to_owned(), Value::Object(file));
    }
    if let Some(m) = obj.get("metadata") {
        out.insert("metadata".to_owned(), m.clone());
    }
    Value::Object(out)
}

/// Rewrites a v1.0 message as a v0.3 proto message, keeping only the fields v0.3 knows (its
/// servers refuse unknown fields).
fn message_from_v1(v: &Value) -> Value {
    let Some(obj) = v.as_object() else {
        return v.clone();
    };
    let mut out = Map::new();
    for key in [
        "messageId",
        "contextId",
        "taskId",
        "role",
        "metadata",
        "extensions",
    ] {
        if let Some(x) = obj.get(key) {
            out.insert(key.to_owned(), x.clone());
        }
    }
    let parts = obj
        .get("parts")
        .and_then(Value::as_array)
        .map(|p| p.iter().map(part_from_v1).collect())
        .unwrap_or_default();
    out.insert("content".to_owned(), Value::Array(parts));
    Value::Object(out)
}

/// Rewrites a v1.0 `SendMessageRequest` as a v0.3 proto one: `parts` become `content`,
/// `returnImmediately` becomes `blocking` (always sent: the SDKs' defaults differ), the
/// tenant and the fields v0.3 lacks are dropped.
pub(crate) fn send_request_from_v1(v: &Value) -> Value {
    let mut out = Map::new();
    if let Some(m) = v.get("message") {
        out.insert("message".to_owned(), message_from_v1(m));
    }
    let config = v.get("configuration");
    let mut conf = Map::new();
    for key in ["acceptedOutputModes", "historyLength"] {
        if let Some(x) = config.and_then(|c| c.get(key)) {
            conf.insert(key.to_owned(), x.clone());
        }
    }
    let immediate = config
        .and_then(|c| c.get("returnImmediately"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    conf.insert("blocking".to_owned(), Value::Bool(!immediate));
    if let Some(push) = config.and_then(|c| c.get("taskPushNotificationConfig")) {
        conf.insert("pushNotification".to_owned(), push_config_from_v1(push));
    }
    out.insert("configuration".to_owned(), Value::Object(conf));
    if let Some(m) = v.get("metadata") {
        out.insert("metadata".to_owned(), m.clone());
    }
    Value::Object(out)
}

/// Rewrites a v1.0 `TaskPushNotificationConfig` as a v0.3 proto `PushNotificationConfig`:
/// `{id, url, token, authentication {schemes [scheme], credentials}}`.
fn push_config_from_v1(v: &Value) -> Value {
    let mut out = Map::new();
    for key in ["id", "url", "token"] {
        if let Some(x) = v.get(key) {
            out.insert(key.to_owned(), x.clone());
        }
    }
    if let Some(auth) = v.get("authentication") {
        let mut a = Map::new();
        if let Some(scheme) = auth.get("scheme") {
            a.insert("schemes".to_owned(), Value::Array(vec![scheme.clone()]));
        }
        if let Some(c) = auth.get("credentials") {
            a.insert("credentials".to_owned(), c.clone());
        }
        out.insert("authentication".to_owned(), Value::Object(a));
    }
    Value::Object(out)
}

// ---------------------------------------------------------------------------------------------
// v0.3 proto JSON → v1.0 (what an agent sends us)
// ---------------------------------------------------------------------------------------------

/// Renames member `from` to `to` when `to` is absent.
fn rename(obj: &mut Map<String, Value>, from: &str, to: &str) {
    if !obj.contains_key(to)
        && let Some(x) = obj.remove(from)
    {
        obj.insert(to.to_owned(), x);
    }
}

/// Rewrites a v0.3 proto part as a v1.0 part.
fn part_to_v1(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    if let Some(Value::Object(mut file)) = obj.remove("file") {
        for (from, to) in [
            ("fileWithBytes", "raw"),
            ("fileWithUri", "url"),
            ("mimeType", "mediaType"),
            ("name", "filename"),
        ] {
            if let Some(x) = file.remove(from) {
                obj.insert(to.to_owned(), x);
            }
        }
    }
    if let Some(Value::Object(data)) = obj.get_mut("data")
        && data.len() == 1
        && let Some(inner) = data.remove("data")
    {
        obj.insert("data".to_owned(), inner);
    }
}

fn each(obj: &mut Map<String, Value>, key: &str, f: fn(&mut Value)) {
    if let Some(Value::Array(items)) = obj.get_mut(key) {
        items.iter_mut().for_each(f);
    }
}

/// Rewrites a v0.3 proto message as a v1.0 message (`content` → `parts`).
fn message_to_v1(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    rename(obj, "content", "parts");
    each(obj, "parts", part_to_v1);
}

/// Rewrites a v0.3 proto artifact as a v1.0 artifact.
fn artifact_to_v1(v: &mut Value) {
    if let Some(obj) = v.as_object_mut() {
        rename(obj, "content", "parts");
        each(obj, "parts", part_to_v1);
    }
}

/// Rewrites a v0.3 proto task status as a v1.0 one (`update` → `message`, `CANCELLED`).
fn status_to_v1(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    rename(obj, "update", "message");
    if let Some(Value::String(s)) = obj.get_mut("state")
        && s == "TASK_STATE_CANCELLED"
    {
        "TASK_STATE_CANCELED".clone_into(s);
    }
    if let Some(m) = obj.get_mut("message") {
        message_to_v1(m);
    }
}

/// Rewrites a v0.3 proto task as a v1.0 task.
fn task_to_v1(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    if let Some(s) = obj.get_mut("status") {
        status_to_v1(s);
    }
    each(obj, "history", message_to_v1);
    each(obj, "artifacts", artifact_to_v1);
}

/// Rewrites a status- or artifact-update event (proto names `statusUpdate`/`artifactUpdate`).
fn update_to_v1(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    if let Some(s) = obj.get_mut("status") {
        status_to_v1(s);
    }
    if let Some(a) = obj.get_mut("artifact") {
        artifact_to_v1(a);
    }
}

/// The payload members of a v0.3 `SendMessageResponse` / `StreamResponse`, their v1.0 names,
/// and how each is converted.
type Payload = (&'static str, &'static str, fn(&mut Value));

/// The payload members, as [`Payload`]s.
const PAYLOADS: [Payload; 7] = [
    ("task", "task", task_to_v1),
    ("msg", "message", message_to_v1),
    ("message", "message", message_to_v1),
    ("statusUpdate", "statusUpdate", update_to_v1),
    ("status_update", "statusUpdate", update_to_v1),
    ("artifactUpdate", "artifactUpdate", update_to_v1),
    ("artifact_update", "artifactUpdate", update_to_v1),
];

/// Converts a `{task}` / `{msg}` (and, for streams, `{statusUpdate}` / `{artifactUpdate}`)
/// answer into its v1.0 form; `allowed` is how many of [`PAYLOADS`] may appear.
fn payload_to_v1(v: Value, allowed: usize) -> Result<Value, String> {
    let Value::Object(mut obj) = v else {
        return Err("the answer is not a JSON object".to_owned());
    };
    for (from, to, convert) in &PAYLOADS[..allowed] {
        if let Some(mut x) = obj.remove(*from) {
            if !x.is_object() {
                return Err(format!("`{from}` is not an object"));
            }
            convert(&mut x);
            let mut out = Map::new();
            out.insert((*to).to_owned(), x);
            return Ok(Value::Object(out));
        }
    }
    let names: Vec<String> = PAYLOADS[..allowed]
        .iter()
        .map(|(f, ..)| format!("`{f}`"))
        .collect();
    Err(format!("the answer has none of {}", names.join(", ")))
}

/// Converts a `message:send` answer (`{task}` or `{msg}`).
pub(crate) fn send_result_to_v1(v: Value) -> Result<Value, String> {
    payload_to_v1(v, 3)
}

/// Converts a bare task (`GET /v1/tasks/{id}`, `:cancel`).
pub(crate) fn task_result_to_v1(mut v: Value) -> Result<Value, String> {
    if !v.get("id").is_some_and(Value::is_string) {
        return Err("the task has no `id`".to_owned());
    }
    task_to_v1(&mut v);
    Ok(v)
}

/// Converts one stream answer (an SSE event's data).
pub(crate) fn stream_result_to_v1(v: Value) -> Result<Value, String> {
    payload_to_v1(v, PAYLOADS.len())
}

// ---------------------------------------------------------------------------------------------
// Answers and errors
// ---------------------------------------------------------------------------------------------

fn converted(
    op: &Op,
    result: Value,
    convert: fn(Value) -> Result<Value, String>,
) -> Result<Value, A2aError> {
    convert(result).map_err(|detail| op.decode(DecodeKind::WrongShape, detail))
}

/// Reads a `message:send` answer.
pub(crate) fn send_message_response(
    op: &Op,
    result: Value,
) -> Result<Raw<types::SendMessageResponse>, A2aError> {
    let v1 = converted(op, result, send_result_to_v1)?;
    typed(op, v1, normalize::send_message_response)
}

/// Reads a task answer.
pub(crate) fn task(op: &Op, result: Value) -> Result<Raw<types::Task>, A2aError> {
    let v1 = converted(op, result, task_result_to_v1)?;
    typed(op, v1, normalize::task)
}

/// Reads one stream answer.
pub(crate) fn stream_response(
    op: &Op,
    result: Value,
) -> Result<Raw<types::StreamResponse>, A2aError> {
    let v1 = converted(op, result, stream_result_to_v1)?;
    typed(op, v1, normalize::stream_response)
}

/// Reads the A2A error an agent's body carries, if any: a `google.rpc.Status` with an A2A
/// reason, or a numeric `code` in the JSON-RPC range (`@a2a-js/sdk`); `status` 404 with
/// exactly `{"message": "Task not found"}` is `a2a-sdk`'s unknown task.
fn agent_error(body: &Value, status: Option<StatusCode>) -> (Option<RpcError>, Option<String>) {
    if let Some(error) = body.get("error").filter(|e| e.is_object()) {
        return httpjson::parse_status(error);
    }
    let message = body
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if let Some(code) = body.get("code").and_then(Value::as_i64)
        && (-32768..=-32000).contains(&code)
    {
        let data = body.get("data").cloned();
        return (
            Some(RpcError {
                code,
                message,
                data,
            }),
            None,
        );
    }
    let python_not_found = status == Some(StatusCode::NOT_FOUND)
        && body.as_object().is_some_and(|o| o.len() == 1)
        && message.trim().eq_ignore_ascii_case(PYTHON_TASK_NOT_FOUND);
    if python_not_found {
        return (
            Some(RpcError {
                code: TASK_NOT_FOUND,
                message,
                data: None,
            }),
            None,
        );
    }
    (None, None)
}

/// Builds the error for a non-success HTTP status; a 404 that is not the agent's word (see
/// the module notes) is `unattributed`.
pub(crate) fn http_error(
    op: &Op,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
) -> A2aError {
    let body = &*op.scrub(body);
    let parsed = serde_json::from_slice::<Value>(body).ok().map(|mut v| {
        op.scrub_value(&mut v);
        v
    });
    let (rpc, reason) = parsed
        .as_ref()
        .map(|v| agent_error(v, Some(status)))
        .unwrap_or_default();
    httpjson::attributed(op, status, headers, body, rpc, reason)
}

/// Decodes one SSE event's data: a bare v0.3 `StreamResponse`, or an error body.
pub(crate) fn stream_item(
    op: &Op,
    event: &SseEvent,
) -> Result<Raw<types::StreamResponse>, A2aError> {
    let value = decode_json(op, event.data.as_bytes())?;
    if value.get("error").is_some() || value.get("code").is_some() {
        return Err(match agent_error(&value, None).0 {
            Some(error) => A2aError::Rpc {
                url: op.url.clone(),
                method: op.method,
                error,
            },
            None => op.decode(
                DecodeKind::WrongShape,
                format!(
                    "an error event without an A2A code: {}",
                    op.snippet(event.data.as_bytes())
                ),
            ),
        });
    }
    stream_response(op, value)
}

#[cfg(test)]
mod tests {
    use super::super::error::ErrorClass;
    use super::*;

    fn send_request(immediate: bool) -> types::SendMessageRequest {
        serde_json::from_value(json!({
            "message": {"messageId": "m-1", "role": "ROLE_USER", "contextId": "c",
                        "parts": [{"text": "hi"}, {"data": {"k": 1}},
                                  {"url": "https://x/f", "mediaType": "text/plain",
                                   "filename": "f.txt"}]},
            "configuration": {"returnImmediately": immediate},
            "tenant": "dropped"
        }))
        .unwrap()
    }

    fn body(wire: &WireRequest) -> Value {
        serde_json::from_slice(&wire.body.as_ref().unwrap().1).unwrap()
    }

    #[test]
    fn a_get_task_without_a_history_length_asks_for_the_whole_history() {
        // Unset is the server's default in v0.3 (none at all for @a2a-js/sdk 0.3.14).
        let base = Url::parse("http://a.example/rest").unwrap();
        let call = Call::GetTask {
            id: "t-1",
            history_length: None,
        };
        let wire = request(&call, &base).unwrap();
        assert_eq!(
            wire.url.as_str(),
            "http://a.example/rest/v1/tasks/t-1?historyLength=2147483647"
        );
    }

    #[test]
    fn paths_and_verbs_hang_off_v1() {
        let base = Url::parse("http://a.example/rest").unwrap();
        let send = send_request(true);
        let cases: [(Call<'_>, Method, &str, &str); 5] = [
            (
                Call::SendMessage(&send),
                Method::POST,
                "http://a.example/rest/v1/message:send",
                ACCEPT_JSON,
            ),
            (
                Call::SendStreamingMessage(&send),
                Method::POST,
                "http://a.example/rest/v1/message:stream",
                "text/event-stream",
            ),
            (
                Call::GetTask {
                    id: "t-1",
                    history_length: Some(0),
                },
                Method::GET,
                "http://a.example/rest/v1/tasks/t-1?historyLength=0",
                ACCEPT_JSON,
            ),
            (
                Call::CancelTask { id: "t-1" },
                Method::POST,
                "http://a.example/rest/v1/tasks/t-1:cancel",
                ACCEPT_JSON,
            ),
            (
                Call::SubscribeToTask { id: "t-1" },
                Method::GET,
                "http://a.example/rest/v1/tasks/t-1:subscribe",
                "text/event-stream",
            ),
        ];
        for (call, verb, url, accept) in cases {
            let wire = request(&call, &base).unwrap();
            assert_eq!(wire.method, verb, "{url}");
            assert_eq!(wire.url.as_str(), url);
            assert_eq!(wire.accept, accept, "{url}");
            assert_eq!(wire.version, None, "{url}");
        }
        let list: types::ListTasksRequest = serde_json::from_value(json!({})).unwrap();
        let err = request(&Call::ListTasks(&list), &base).unwrap_err();
        assert_eq!(err.class(), ErrorClass::NotSent);
    }

    #[test]
    fn the_send_body_is_the_v03_proto_form() {
        let base = Url::parse("http://a.example/").unwrap();
        let b = body(&request(&Call::SendMessage(&send_request(true)), &base).unwrap());
        assert_eq!(
            b,
            json!({
                "message": {"messageId": "m-1", "role": "ROLE_USER", "contextId": "c",
                            "content": [{"text": "hi"}, {"data": {"data": {"k": 1}}},
                                        {"file": {"fileWithUri": "https://x/f",
                                                  "mimeType": "text/plain",
                                                  "name": "f.txt"}}]},
                "configuration": {"blocking": false}
            })
        );
        let b = body(&request(&Call::SendMessage(&send_request(false)), &base).unwrap());
        assert_eq!(b["configuration"]["blocking"], true);
    }

    #[test]
    fn a_push_config_goes_as_the_v03_push_notification() {
        let base = Url::parse("http://a.example/").unwrap();
        let mut req = send_request(true);
        req.configuration
            .as_mut()
            .unwrap()
            .task_push_notification_config = Some(
            serde_json::from_value(json!({"url": "https://h/push/c", "id": "c", "token": "t",
                "authentication": {"scheme": "Bearer", "credentials": "t"}}))
            .unwrap(),
        );
        let b = body(&request(&Call::SendMessage(&req), &base).unwrap());
        assert_eq!(
            b["configuration"]["pushNotification"],
            json!({"url": "https://h/push/c", "id": "c", "token": "t",
                   "authentication": {"schemes": ["Bearer"], "credentials": "t"}})
        );
    }

    #[test]
    fn answers_become_the_v1_model() {
        let op = Op::new("http://127.0.0.1/", "SendMessage");
        let task_json = json!({"id": "t-1", "contextId": "c",
            "status": {"state": "TASK_STATE_INPUT_REQUIRED",
                       "update": {"messageId": "q", "role": "ROLE_AGENT",
                                  "content": [{"text": "which?"}]}},
            "artifacts": [{"artifactId": "a", "parts": [{"data": {"data": {"x": 1}}}]}],
            "history": [{"messageId": "m-1", "role": "ROLE_USER", "content": [{"text": "hi"}]}]});
        let got = send_message_response(&op, json!({"task": task_json})).unwrap();
        let types::SendMessageResponse::Task(t) = got.value else {
            panic!("not a task")
        };
        assert_eq!(t.status.state, types::TaskState::InputRequired);
        assert_eq!(
            got.raw["task"]["status"]["message"]["parts"][0]["text"],
            "which?"
        );
        assert_eq!(
            got.raw["task"]["artifacts"][0]["parts"][0]["data"],
            json!({"x": 1})
        );
        assert_eq!(got.raw["task"]["history"][0]["parts"][0]["text"], "hi");
        let msg = json!({"messageId": "r", "role": "ROLE_AGENT", "content": [{"text": "ok"}]});
        let got = send_message_response(&op, json!({"msg": msg})).unwrap();
        assert!(matches!(got.value, types::SendMessageResponse::Message(_)));
        let got = task(
            &op,
            json!({"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_CANCELLED"}}),
        )
        .unwrap();
        assert_eq!(got.value.status.state, types::TaskState::Canceled);
        let err = send_message_response(&op, json!({"kind": "task"})).unwrap_err();
        assert!(err.to_string().contains("`task`"), "{err}");
        let ev = stream_response(
            &op,
            json!({"statusUpdate": {"taskId": "t", "contextId": "c", "final": true,
                                    "status": {"state": "TASK_STATE_COMPLETED"}}}),
        )
        .unwrap();
        assert!(super::super::v03::is_final(&ev.raw));
    }

    fn error_of(status: u16, body: &str) -> A2aError {
        let op = Op::new("http://127.0.0.1/", "GetTask");
        http_error(
            &op,
            StatusCode::from_u16(status).unwrap(),
            &HeaderMap::new(),
            body.as_bytes(),
        )
    }

    fn code_and_unattributed(e: &A2aError) -> (Option<i64>, bool) {
        match e {
            A2aError::Http {
                rpc, unattributed, ..
            } => (rpc.as_ref().map(|r| r.code), *unattributed),
            other => panic!("not an HTTP error: {other:?}"),
        }
    }

    #[test]
    fn only_the_agents_word_says_task_not_found() {
        // @a2a-js/sdk: the JSON-RPC error object as the body.
        let js = error_of(404, r#"{"code":-32001,"message":"Task not found: t"}"#);
        assert_eq!(code_and_unattributed(&js), (Some(-32001), false));
        // a2a-sdk: its TaskNotFoundError text, alone.
        let py = error_of(404, r#"{"message":"Task not found"}"#);
        assert_eq!(code_and_unattributed(&py), (Some(-32001), false));
        // A router's or a proxy's 404s.
        for body in [
            r#"{"detail":"Not Found"}"#,
            "<html>404</html>",
            "",
            r#"{"message":"Task not found","path":"/x"}"#,
        ] {
            assert_eq!(
                code_and_unattributed(&error_of(404, body)),
                (None, true),
                "{body}"
            );
        }
        let conflict = error_of(409, r#"{"message":"Task cannot be canceled"}"#);
        assert_eq!(code_and_unattributed(&conflict), (None, false));
    }
}
