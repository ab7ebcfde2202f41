//! The JSON-RPC 2.0 endpoint: envelope checks, the A2A-Version check, and one handler per method.
//!
//! Order of checks, like the Python server: JSON (-32700), envelope (-32600), method (-32601),
//! `A2A-Version` major 1 (-32009; a missing header means 0.3), then params (-32602 with a
//! `google.rpc.BadRequest`). JSON-RPC errors are HTTP 200; A2A errors and -32602 carry a
//! `google.rpc.ErrorInfo` first in `data`, plain JSON-RPC errors carry no `data` (Python).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use a2a::{Message, Part, Role, SendMessageRequest, TaskState};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use super::push::Target;
use super::scenario::{self, Scenario};
use super::sse::{self, Start};
use super::state::{CancelOutcome, EventRx, Inner, ListQuery, decode_token, state_name, stops_at};
use super::{FailMode, ReceivedMessage, Shared};

pub(crate) const DOMAIN: &str = "a2a-protocol.org";
/// Most distinct unknown method names counted by name; the rest count as `(other)`.
const MAX_UNKNOWN_METHODS: usize = 64;

/// The JSON-RPC methods of A2A v1.0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    SendMessage,
    SendStreamingMessage,
    GetTask,
    ListTasks,
    CancelTask,
    SubscribeToTask,
    CreatePushConfig,
    GetPushConfig,
    ListPushConfigs,
    DeletePushConfig,
    GetExtendedAgentCard,
}

const METHODS: [(&str, Method); 11] = [
    ("SendMessage", Method::SendMessage),
    ("SendStreamingMessage", Method::SendStreamingMessage),
    ("GetTask", Method::GetTask),
    ("ListTasks", Method::ListTasks),
    ("CancelTask", Method::CancelTask),
    ("SubscribeToTask", Method::SubscribeToTask),
    ("CreateTaskPushNotificationConfig", Method::CreatePushConfig),
    ("GetTaskPushNotificationConfig", Method::GetPushConfig),
    ("ListTaskPushNotificationConfigs", Method::ListPushConfigs),
    ("DeleteTaskPushNotificationConfig", Method::DeletePushConfig),
    ("GetExtendedAgentCard", Method::GetExtendedAgentCard),
];

/// Request counters per method name, lock-free for the known ones.
#[derive(Default)]
pub(crate) struct MethodCounters {
    known: [AtomicU64; METHODS.len()],
    unknown: Mutex<HashMap<String, u64>>,
}

impl MethodCounters {
    /// Counts one request; returns the method if it is known.
    pub(crate) fn count(&self, name: &str) -> Option<Method> {
        if let Some(i) = METHODS.iter().position(|(n, _)| *n == name) {
            self.known[i].fetch_add(1, Ordering::Relaxed);
            return Some(METHODS[i].1);
        }
        let mut unknown = self.unknown.lock().unwrap_or_else(PoisonError::into_inner);
        let key = if unknown.contains_key(name) || unknown.len() < MAX_UNKNOWN_METHODS {
            name
        } else {
            "(other)"
        };
        *unknown.entry(key.to_owned()).or_insert(0) += 1;
        None
    }

    /// Returns the counts of every method called at least once.
    pub(crate) fn snapshot(&self) -> BTreeMap<String, u64> {
        let mut out: BTreeMap<String, u64> = self
            .unknown
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        for (i, (name, _)) in METHODS.iter().enumerate() {
            let n = self.known[i].load(Ordering::Relaxed);
            if n > 0 {
                out.insert((*name).to_owned(), n);
            }
        }
        out
    }
}

/// A JSON-RPC error about to be sent.
#[derive(Debug)]
pub(crate) struct RpcError {
    pub(crate) code: i32,
    pub(crate) message: String,
    /// The ErrorInfo `reason`; `None` for plain JSON-RPC errors (no `data`).
    reason: Option<&'static str>,
    pub(crate) metadata: Value,
    /// BadRequest field violations: `(field, description)`.
    pub(crate) violations: Vec<(String, String)>,
}

impl RpcError {
    pub(crate) fn plain(code: i32, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            reason: None,
            metadata: json!({}),
            violations: Vec::new(),
        }
    }

    pub(crate) fn a2a(code: i32, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            reason: Some(reason),
            ..Self::plain(code, message)
        }
    }

    pub(crate) fn with_metadata(mut self, metadata: Value) -> Self {
        self.metadata = metadata;
        self
    }

    pub(crate) fn invalid_params(field: &str, description: impl Into<String>) -> Self {
        let description = description.into();
        Self {
            violations: vec![(field.to_owned(), description.clone())],
            ..Self::a2a(
                -32602,
                "INVALID_PARAMS",
                format!("Invalid parameters: {field}: {description}"),
            )
        }
    }

    /// `VERSION_NOT_SUPPORTED` for a request in another major version (`version`).
    pub(crate) fn version(version: &str) -> Self {
        Self::a2a(
            -32009,
            "VERSION_NOT_SUPPORTED",
            format!("A2A version {version} is not supported; this agent speaks 1.0"),
        )
        .with_metadata(json!({"requestedVersion": version, "supportedVersions": "1.0"}))
    }

    fn task_not_found(id: &str) -> Self {
        Self::a2a(-32001, "TASK_NOT_FOUND", "Task not found").with_metadata(json!({"taskId": id}))
    }

    fn unsupported(message: impl Into<String>) -> Self {
        Self::a2a(-32004, "UNSUPPORTED_OPERATION", message)
    }

    fn terminal(id: &str, state: &TaskState) -> Self {
        Self::unsupported(format!(
            "Task {id} is in terminal state: {}",
            state_name(state)
        ))
        .with_metadata(json!({"taskId": id}))
    }

    /// Returns the HTTP status, `google.rpc` status name and `ErrorInfo` reason of this
    /// error over HTTP+JSON (the Python server's table).
    pub(crate) fn rest_status(&self) -> (StatusCode, &'static str, &'static str) {
        let reason = self.reason.unwrap_or(match self.code {
            -32700 => "PARSE_ERROR",
            -32600 => "INVALID_REQUEST",
            -32601 => "METHOD_NOT_FOUND",
            -32602 => "INVALID_PARAMS",
            _ => "INTERNAL_ERROR",
        });
        let (status, name) = match self.code {
            -32001 | -32601 => (StatusCode::NOT_FOUND, "NOT_FOUND"),
            -32002 | -32003 | -32004 | -32007 | -32008 | -32009 => {
                (StatusCode::BAD_REQUEST, "FAILED_PRECONDITION")
            }
            -32005 | -32600 | -32602 | -32700 => (StatusCode::BAD_REQUEST, "INVALID_ARGUMENT"),
            _ => (StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL"),
        };
        (status, name, reason)
    }

    /// Builds the HTTP+JSON error answer: the status of the error's reason and a
    /// `google.rpc.Status` body whose details carry the `ErrorInfo` (and `BadRequest`).
    pub(crate) fn to_rest(&self) -> Response {
        let (status, name, reason) = self.rest_status();
        let with_reason = Self {
            reason: Some(reason),
            message: self.message.clone(),
            metadata: self.metadata.clone(),
            violations: self.violations.clone(),
            code: self.code,
        };
        let details = with_reason.to_json()["data"].take();
        let body = json!({"error": {
            "code": status.as_u16(),
            "status": name,
            "message": self.message,
            "details": details,
        }});
        (
            status,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            body.to_string(),
        )
            .into_response()
    }

    fn to_json(&self) -> Value {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(reason) = self.reason {
            let mut data = vec![json!({
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason,
                "domain": DOMAIN,
                "metadata": self.metadata,
            })];
            if !self.violations.is_empty() {
                data.push(json!({
                    "@type": "type.googleapis.com/google.rpc.BadRequest",
                    "fieldViolations": self.violations.iter()
                        .map(|(f, d)| json!({"field": f, "description": d}))
                        .collect::<Vec<_>>(),
                }));
            }
            error["data"] = Value::Array(data);
        }
        error
    }
}

/// Answers `POST /`.
pub(crate) async fn handle(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    uri: Uri,
    body: Bytes,
) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return error(b"null", &RpcError::plain(-32700, "Invalid JSON payload"));
    };
    let Value::Object(mut request) = request else {
        return error(
            b"null",
            &RpcError::plain(
                -32600,
                "Request payload validation error: batches are not supported",
            ),
        );
    };
    let id = request.remove("id").unwrap_or(Value::Null);
    if !(id.is_null() || id.is_string() || id.is_i64() || id.is_u64()) {
        return error(
            b"null",
            &RpcError::plain(
                -32600,
                "Request payload validation error: id must be a string, an integer or null",
            ),
        );
    }
    let id = Bytes::from(serde_json::to_vec(&id).unwrap_or_else(|_| b"null".to_vec()));
    if request.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return error(
            &id,
            &RpcError::plain(
                -32600,
                "Request payload validation error: jsonrpc must be \"2.0\"",
            ),
        );
    }
    let Some(Value::String(name)) = request.remove("method") else {
        return error(
            &id,
            &RpcError::plain(
                -32600,
                "Request payload validation error: method is required",
            ),
        );
    };
    let v03 = shared.cfg.protocol_v03;
    let Some(method) = (if v03 {
        v03_method(&name)
    } else {
        Some(name.as_str())
    })
    .and_then(|n| shared.methods.count(n)) else {
        if v03 {
            shared.methods.count(&name);
        }
        return error_as(&id, &RpcError::plain(-32601, "Method not found"), v03);
    };
    if v03 {
        let mut params = request.remove("params").unwrap_or(Value::Null);
        return v03_handle(&shared, &id, method, &mut params)
            .await
            .unwrap_or_else(|e| error_as(&id, &e, true));
    }
    if let Err(version) = check_version(&headers, &uri) {
        return error(&id, &RpcError::version(&version));
    }
    let params = super::fields::camel_case_fields(request.remove("params").unwrap_or(Value::Null));
    let outcome = match method {
        Method::SendMessage => send_message(&shared, &id, params, false).await,
        Method::SendStreamingMessage => send_message(&shared, &id, params, true).await,
        Method::GetTask => get_task(&shared, &params).map(|json| result(&id, &[&json])),
        Method::ListTasks => list_tasks(&shared, params).map(|json| result(&id, &[&json])),
        Method::CancelTask => cancel_task(&shared, &params).map(|json| result(&id, &[&json])),
        Method::SubscribeToTask => {
            subscribe(&shared, &params).map(|s| sse::response(&shared, Some(id.clone()), s))
        }
        Method::CreatePushConfig
        | Method::GetPushConfig
        | Method::ListPushConfigs
        | Method::DeletePushConfig => Err(RpcError::a2a(
            -32003,
            "PUSH_NOTIFICATION_NOT_SUPPORTED",
            "Push notifications are not supported",
        )),
        Method::GetExtendedAgentCard => Err(RpcError::unsupported(
            "The extended agent card is not supported",
        )),
    };
    outcome.unwrap_or_else(|e| error(&id, &e))
}

/// Returns the v1.0 name of a v0.3 method the scripted agent serves in v0.3 mode.
fn v03_method(name: &str) -> Option<&'static str> {
    use crate::a2a::v03::methods;
    Some(match name {
        methods::SEND => "SendMessage",
        methods::STREAM => "SendStreamingMessage",
        methods::GET => "GetTask",
        methods::CANCEL => "CancelTask",
        methods::RESUBSCRIBE => "SubscribeToTask",
        _ => return None,
    })
}

/// Answers one v0.3 request: its params read as v1.0, its answer written back as v0.3 (bare
/// results with `kind`, lowercase states, `final` on status updates).
async fn v03_handle(
    shared: &Arc<Shared>,
    id: &Bytes,
    method: Method,
    params: &mut Value,
) -> Result<Response, RpcError> {
    use crate::a2a::v03;
    let task = |json: Bytes| -> Result<Response, RpcError> {
        let mut v: Value = serde_json::from_slice(&json)
            .map_err(|e| RpcError::plain(-32603, format!("Internal error: {e}")))?;
        v03::task_from_v1(&mut v);
        Ok(result(id, &[v.to_string().as_bytes()]))
    };
    match method {
        Method::SendMessage | Method::SendStreamingMessage => {
            v03::send_params_to_v1(params);
            let streaming = method == Method::SendStreamingMessage;
            send_message(shared, id, params.take(), streaming).await
        }
        Method::GetTask => task(get_task(shared, params)?),
        Method::CancelTask => task(cancel_task(shared, params)?),
        Method::SubscribeToTask => {
            subscribe(shared, params).map(|s| sse::response(shared, Some(id.clone()), s))
        }
        _ => Err(RpcError::plain(-32601, "Method not found")),
    }
}

/// Checks the `A2A-Version` header (or query parameter); returns the refused version.
pub(crate) fn check_version(headers: &HeaderMap, uri: &Uri) -> Result<(), String> {
    let from_query = || {
        uri.query()?
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| k.eq_ignore_ascii_case("A2A-Version"))
            .map(|(_, v)| v)
    };
    let version = headers
        .get("a2a-version")
        .and_then(|v| v.to_str().ok())
        .or_else(from_query)
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .unwrap_or("0.3");
    if version.split('.').next() == Some("1") {
        Ok(())
    } else {
        Err(version.chars().take(32).collect())
    }
}

pub(crate) fn json_response(body: Vec<u8>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

/// Builds `{"jsonrpc":"2.0","id":ID,"result":PARTS…}` with the result given as concatenated parts.
fn result(id: &[u8], parts: &[&[u8]]) -> Response {
    const HEAD: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":";
    const MID: &[u8] = b",\"result\":";
    let len = parts.iter().map(|p| p.len()).sum::<usize>();
    let mut buf = Vec::with_capacity(HEAD.len() + id.len() + MID.len() + len + 1);
    buf.extend_from_slice(HEAD);
    buf.extend_from_slice(id);
    buf.extend_from_slice(MID);
    for p in parts {
        buf.extend_from_slice(p);
    }
    buf.push(b'}');
    json_response(buf)
}

fn error(id: &[u8], e: &RpcError) -> Response {
    error_as(id, e, false)
}

/// [`error`], its `data` written as v0.3 writes it when `v03`.
fn error_as(id: &[u8], e: &RpcError, v03: bool) -> Response {
    let mut json = e.to_json();
    if v03 {
        crate::a2a::v03::error_from_v1(&mut json);
    }
    let mut buf = b"{\"jsonrpc\":\"2.0\",\"id\":".to_vec();
    buf.extend_from_slice(id);
    buf.extend_from_slice(b",\"error\":");
    buf.extend_from_slice(json.to_string().as_bytes());
    buf.push(b'}');
    json_response(buf)
}

pub(crate) fn unavailable() -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [
            (header::RETRY_AFTER, HeaderValue::from_static("1")),
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            ),
        ],
        "scripted failure: service unavailable\n",
    )
        .into_response()
}

/// Reads a task id parameter.
fn task_id(params: &Value) -> Result<&str, RpcError> {
    params
        .get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| RpcError::invalid_params("id", "the task id is required"))
}

/// Reads an optional non-negative `historyLength`.
fn history_length(v: Option<&Value>, field: &str) -> Result<Option<usize>, RpcError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| RpcError::invalid_params(field, "must be a non-negative integer")),
    }
}

pub(crate) fn get_task(shared: &Shared, params: &Value) -> Result<Bytes, RpcError> {
    let id = task_id(params)?;
    let history = history_length(params.get("historyLength"), "historyLength")?;
    shared
        .lock()
        .snapshot(id, history, true)
        .ok_or_else(|| RpcError::task_not_found(id))
}

pub(crate) fn list_tasks(shared: &Shared, params: Value) -> Result<Bytes, RpcError> {
    if shared.cfg.no_list_tasks {
        return Err(RpcError::plain(-32601, "Method not found"));
    }
    let params = if params.is_null() { json!({}) } else { params };
    let req: a2a::ListTasksRequest = serde_json::from_value(params)
        .map_err(|e| RpcError::invalid_params("params", e.to_string()))?;
    let page_size = match req.page_size {
        None => 50,
        Some(n @ 1..=100) => n as usize,
        Some(n) => {
            return Err(RpcError::invalid_params(
                "pageSize",
                format!("must be between 1 and 100, got {n}"),
            ));
        }
    };
    let history = match req.history_length {
        None => None,
        Some(n) => Some(usize::try_from(n).map_err(|_| {
            RpcError::invalid_params("historyLength", "must be a non-negative integer")
        })?),
    };
    let cursor = match req.page_token.as_deref() {
        None | Some("") => None,
        Some(token) => Some(
            decode_token(token)
                .ok_or_else(|| RpcError::invalid_params("pageToken", "unknown page token"))?,
        ),
    };
    let after_micros = req.status_timestamp_after.map(|t| {
        // Inclusive bound: the first whole µs at or after `t`.
        let nanos = t.timestamp_subsec_nanos();
        t.timestamp() * 1_000_000 + i64::from(nanos.div_ceil(1000))
    });
    let ignores = shared.cfg.list_ignores_filters;
    let query = ListQuery {
        context_id: req.context_id.filter(|c| !c.is_empty() && !ignores),
        status: req.status.filter(|s| *s != TaskState::Unspecified),
        after_micros: after_micros.filter(|_| !ignores),
        page_size,
        cursor,
        history,
        include_artifacts: req.include_artifacts.unwrap_or(false),
    };
    shared
        .lock()
        .list(&query)
        .map(Bytes::from)
        .map_err(|e| RpcError::plain(-32603, format!("Internal error: {e}")))
}

pub(crate) fn cancel_task(shared: &Shared, params: &Value) -> Result<Bytes, RpcError> {
    let id = task_id(params)?;
    let mut inner = shared.lock();
    inner.record_cancel(id);
    match inner.cancel(id) {
        CancelOutcome::Unknown => Err(RpcError::task_not_found(id)),
        CancelOutcome::Terminal(state) => Err(RpcError::a2a(
            -32002,
            "TASK_NOT_CANCELABLE",
            format!(
                "Task cannot be canceled: task {id} is in terminal state: {}",
                state_name(&state)
            ),
        )
        .with_metadata(json!({"taskId": id}))),
        CancelOutcome::Canceled(json) => Ok(json),
    }
}

pub(crate) fn subscribe(shared: &Shared, params: &Value) -> Result<Start, RpcError> {
    if shared.cfg.no_streaming {
        return Err(RpcError::unsupported(
            "Streaming is not supported by this agent",
        ));
    }
    let id = task_id(params)?;
    let mut inner = shared.lock();
    let Some((state, _, _)) = inner.info(id) else {
        return Err(RpcError::task_not_found(id));
    };
    if state.is_terminal() {
        return Err(RpcError::terminal(id, &state));
    }
    // A v1.0 subscription to an interrupted task stays open until the task moves on and ends;
    // v0.3's ends at once (its last event says `final`).
    let until_terminal = !shared.cfg.protocol_v03;
    Ok(existing_stream(&mut inner, id, &state, until_terminal))
}

/// A stream over a task that already exists: its snapshot, then live events unless it stops
/// (at a terminal state only, when `until_terminal`).
fn existing_stream(inner: &mut Inner, id: &str, state: &TaskState, until_terminal: bool) -> Start {
    let initial = inner.snapshot_event(id).into_iter().collect();
    let stopped = if until_terminal {
        state.is_terminal()
    } else {
        stops_at(state)
    };
    let rx = if stopped { None } else { inner.subscribe(id) };
    Start {
        initial,
        rx,
        until_terminal,
    }
}

/// How a send is answered.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// SendMessage with `returnImmediately: true`.
    Immediate,
    /// SendMessage that waits for a terminal or interrupted state.
    Blocking,
    /// SendStreamingMessage.
    Stream,
}

/// What the locked part of a send decided.
enum Reply {
    /// `{"task":…}` or `{"message":…}`, ready.
    Ready(&'static str, Bytes),
    /// Wait for the task to stop, then answer with its snapshot.
    Wait(String, EventRx),
    /// Stream these events.
    Stream(Start),
}

/// A parsed and validated SendMessage request.
struct Send {
    message: Message,
    text: String,
    metadata: Option<Value>,
    history: Option<usize>,
    mode: Mode,
    push_config: Option<Value>,
}

fn parse_send(params: Value, streaming: bool) -> Result<Send, RpcError> {
    let Some(m) = params.get("message").and_then(Value::as_object) else {
        return Err(RpcError::invalid_params("message", "a message is required"));
    };
    if m.get("messageId")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err(RpcError::invalid_params(
            "message.messageId",
            "a non-empty messageId is required",
        ));
    }
    if !matches!(
        m.get("role").and_then(Value::as_str),
        Some("ROLE_USER" | "ROLE_AGENT")
    ) {
        return Err(RpcError::invalid_params(
            "message.role",
            "role must be ROLE_USER or ROLE_AGENT",
        ));
    }
    if m.get("parts")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
    {
        return Err(RpcError::invalid_params(
            "message.parts",
            "at least one part is required",
        ));
    }
    let metadata = m.get("metadata").cloned();
    let push_config = params
        .pointer("/configuration/taskPushNotificationConfig")
        .cloned();
    let req: SendMessageRequest = serde_json::from_value(params)
        .map_err(|e| RpcError::invalid_params("message", e.to_string()))?;
    let config = req.configuration.as_ref();
    let history = match config.and_then(|c| c.history_length) {
        None => None,
        Some(n) => Some(usize::try_from(n).map_err(|_| {
            RpcError::invalid_params(
                "configuration.historyLength",
                "must be a non-negative integer",
            )
        })?),
    };
    let mode = if streaming {
        Mode::Stream
    } else if config.and_then(|c| c.return_immediately).unwrap_or(false) {
        Mode::Immediate
    } else {
        Mode::Blocking
    };
    let text = req
        .message
        .parts
        .iter()
        .filter_map(Part::as_text)
        .collect::<Vec<_>>()
        .join("\n");
    Ok(Send {
        message: req.message,
        text,
        metadata,
        history,
        mode,
        push_config,
    })
}

async fn send_message(
    shared: &Arc<Shared>,
    id: &Bytes,
    params: Value,
    streaming: bool,
) -> Result<Response, RpcError> {
    Ok(match send_core(shared, params, streaming).await? {
        Sent::Unavailable => unavailable(),
        Sent::Ready(member, json) => wrapped(shared.cfg.protocol_v03, id, member, &json),
        Sent::Stream(start) => sse::response(shared, Some(id.clone()), start),
    })
}

/// What a message send comes to, whatever the binding that carries it.
pub(crate) enum Sent {
    /// A scripted HTTP 503.
    Unavailable,
    /// `{"<member>":<json>}`: `task` or `message`.
    Ready(&'static str, Bytes),
    /// Stream these events.
    Stream(Start),
}

/// Runs a SendMessage (or SendStreamingMessage) on the task logic both bindings share.
pub(crate) async fn send_core(
    shared: &Arc<Shared>,
    params: Value,
    streaming: bool,
) -> Result<Sent, RpcError> {
    if streaming && shared.cfg.no_streaming {
        return Err(RpcError::unsupported(
            "Streaming is not supported by this agent",
        ));
    }
    let mut send = parse_send(params, streaming)?;
    if shared.cfg.bends.block_send && send.mode == Mode::Immediate {
        send.mode = Mode::Blocking;
    }
    let fail = shared.roll_failure();
    if fail && shared.cfg.fail_mode == FailMode::Before {
        return Ok(Sent::Unavailable);
    }
    let history = send.history;
    let reply = decide(shared, send);
    if fail {
        return Ok(Sent::Unavailable);
    }
    match reply? {
        Reply::Ready(member, json) => Ok(Sent::Ready(member, json)),
        Reply::Stream(start) => Ok(Sent::Stream(start)),
        Reply::Wait(task_id, rx) => {
            wait_until_stopped(shared, &task_id, rx).await;
            let json = shared
                .lock()
                .snapshot(&task_id, history, true)
                .ok_or_else(|| RpcError::task_not_found(&task_id))?;
            Ok(Sent::Ready("task", json))
        }
    }
}

/// Builds a result `{"<member>":<json>}`.
fn wrapped(v03: bool, id: &[u8], member: &str, json: &[u8]) -> Response {
    if v03 && let Ok(inner) = serde_json::from_slice::<Value>(json) {
        let bare = crate::a2a::v03::send_result_from_v1(json!({ member: inner }));
        return result(id, &[bare.to_string().as_bytes()]);
    }
    result(id, &[b"{\"", member.as_bytes(), b"\":", json, b"}"])
}

/// The locked part of a send: records the message, then creates, continues or finds a task.
fn decide(shared: &Arc<Shared>, send: Send) -> Result<Reply, RpcError> {
    let Send {
        message,
        text,
        metadata,
        history,
        mode,
        push_config,
    } = send;
    let target = push_config
        .as_ref()
        .filter(|_| shared.cfg.push)
        .and_then(|c| Target::from_config(c, shared.cfg.protocol_v03));
    let mut inner = shared.lock();
    inner.record_message(ReceivedMessage {
        message_id: message.message_id.clone(),
        task_id: message.task_id.clone(),
        context_id: message.context_id.clone(),
        text: text.clone(),
        metadata,
        reference_task_ids: message.reference_task_ids.clone().unwrap_or_default(),
        data: message
            .parts
            .iter()
            .filter_map(|p| match &p.content {
                a2a::types::PartContent::Data(d) => Some(d.clone()),
                _ => None,
            })
            .collect(),
        push_config,
    });
    let context_id = message.context_id.clone().filter(|c| !c.is_empty());
    if let Some(task_id) = message.task_id.clone().filter(|t| !t.is_empty()) {
        if let Some(target) = target {
            inner.set_push(&task_id, target);
        }
        return on_task(
            shared,
            &mut inner,
            task_id,
            context_id.as_deref(),
            message,
            &text,
            history,
            mode,
        );
    }
    if shared.cfg.dedup
        && let Some(task_id) = inner
            .task_for_message(&message.message_id)
            .map(str::to_owned)
        && let Some((state, _, _)) = inner.info(&task_id)
    {
        return existing(&mut inner, &task_id, &state, history, mode);
    }
    let scenario = Scenario::choose(shared.scenario, &text);
    let context_id = match context_id {
        Some(c) if shared.cfg.refuse_context_id && !inner.knows_context(&c) => {
            return Err(RpcError::invalid_params(
                "message.contextId",
                "this agent does not accept client-chosen contextId values; \
                 send none and use the one it returns",
            ));
        }
        Some(c) if !shared.cfg.replace_context_id => c,
        _ => crate::sim_seam::new_uuid().to_string(),
    };
    if scenario == Scenario::Direct {
        return direct(&mut inner, &message.message_id, context_id, &text, mode);
    }
    let task_id = inner.create_task(message, context_id, scenario);
    if let Some(target) = target {
        inner.set_push(&task_id, target);
    }
    let initial = match mode {
        Mode::Immediate => inner.snapshot(&task_id, history, true),
        Mode::Stream => inner.snapshot_event(&task_id),
        Mode::Blocking => None,
    };
    let rx = match mode {
        Mode::Immediate => None,
        Mode::Stream | Mode::Blocking => inner.subscribe(&task_id),
    };
    let ticks = scenario::start(&mut inner, &task_id, scenario, &text);
    if ticks > 0 {
        tokio::spawn(scenario::tick(Arc::clone(shared), task_id.clone(), ticks));
    }
    match (mode, initial, rx) {
        (Mode::Immediate, Some(json), _) => Ok(Reply::Ready("task", json)),
        (Mode::Stream, initial, rx) => {
            Ok(Reply::Stream(Start::new(initial.into_iter().collect(), rx)))
        }
        (Mode::Blocking, _, Some(rx)) if ticks > 0 => Ok(Reply::Wait(task_id, rx)),
        _ => ready_task(&inner, &task_id, history),
    }
}

/// Returns the answer of a structured-answer agent's reply (`Bends::structured_answers`): the
/// string its data part gives the asked field; a reply without such a data part is refused
/// with `-32602`, as those agents refuse a text answer.
fn structured_answer(message: &Message) -> Result<String, RpcError> {
    let field = super::STRUCTURED_FIELD;
    message
        .parts
        .iter()
        .find_map(|p| match &p.content {
            a2a::types::PartContent::Data(d) => d.get(field).and_then(Value::as_str),
            _ => None,
        })
        .map(str::to_owned)
        .ok_or_else(|| {
            RpcError::invalid_params(
                "message.parts",
                format!(
                    "this agent takes only a data part shaped like its question, \
                     e.g. {{\"{field}\": \"…\"}}"
                ),
            )
        })
}

/// The locked part of a send on a known task (a reply, or a message to a running task).
#[expect(
    clippy::too_many_arguments,
    reason = "the parts of one send, taken apart once"
)]
fn on_task(
    shared: &Shared,
    inner: &mut Inner,
    task_id: String,
    context_id: Option<&str>,
    message: Message,
    text: &str,
    history: Option<usize>,
    mode: Mode,
) -> Result<Reply, RpcError> {
    let Some((state, task_context, scenario)) = inner.info(&task_id) else {
        return Err(RpcError::task_not_found(&task_id));
    };
    let task_context = task_context.to_owned();
    if context_id.is_some_and(|c| c != task_context) {
        return Err(RpcError::invalid_params(
            "message.contextId",
            "the contextId differs from the task's context",
        ));
    }
    if shared.cfg.dedup && inner.history_has(&task_id, &message.message_id) {
        return existing(inner, &task_id, &state, history, mode);
    }
    if state.is_terminal() {
        return Err(RpcError::terminal(&task_id, &state));
    }
    let interrupted = matches!(state, TaskState::InputRequired | TaskState::AuthRequired);
    let structured;
    let text = if interrupted && shared.cfg.bends.structured_answers {
        structured = structured_answer(&message)?;
        structured.as_str()
    } else {
        text
    };
    let task_id = if interrupted && shared.cfg.bends.reply_new_task {
        // The answer starts a new task in the same context; the old one stays as it was.
        inner.create_task(message, task_context, scenario)
    } else {
        inner.append_history(&task_id, message);
        task_id
    };
    if !interrupted {
        // SUBMITTED or WORKING: the message is noted; the script goes on as before.
        return existing(inner, &task_id, &state, history, mode);
    }
    let rx = if mode == Mode::Stream {
        inner.subscribe(&task_id)
    } else {
        None
    };
    scenario::resume(inner, &task_id, scenario, text);
    Ok(match mode {
        Mode::Stream => Reply::Stream(Start::new(Vec::new(), rx)),
        Mode::Immediate | Mode::Blocking => ready_task(inner, &task_id, history)?,
    })
}

/// Answers a message with a direct Message and no task (the `direct` scenario).
fn direct(
    inner: &mut Inner,
    message_id: &str,
    context_id: String,
    text: &str,
    mode: Mode,
) -> Result<Reply, RpcError> {
    inner.record_no_task(message_id);
    inner.add_context(&context_id);
    let answer = Message {
        message_id: crate::sim_seam::new_uuid().to_string(),
        context_id: Some(context_id),
        task_id: None,
        role: Role::Agent,
        parts: vec![Part::text(format!("direct: {text}"))],
        metadata: None,
        extensions: None,
        reference_task_ids: None,
    };
    let json = Bytes::from(
        serde_json::to_vec(&answer)
            .map_err(|e| RpcError::plain(-32603, format!("Internal error: {e}")))?,
    );
    Ok(match mode {
        Mode::Stream => {
            let mut event = b"{\"message\":".to_vec();
            event.extend_from_slice(&json);
            event.push(b'}');
            Reply::Stream(Start::new(vec![Bytes::from(event)], None))
        }
        Mode::Immediate | Mode::Blocking => Reply::Ready("message", json),
    })
}

/// Answers a send that found an existing task without changing its script.
fn existing(
    inner: &mut Inner,
    task_id: &str,
    state: &TaskState,
    history: Option<usize>,
    mode: Mode,
) -> Result<Reply, RpcError> {
    match mode {
        Mode::Stream => Ok(Reply::Stream(existing_stream(inner, task_id, state, false))),
        Mode::Blocking if !stops_at(state) => inner
            .subscribe(task_id)
            .map(|rx| Reply::Wait(task_id.to_owned(), rx))
            .ok_or_else(|| RpcError::task_not_found(task_id)),
        Mode::Immediate | Mode::Blocking => ready_task(inner, task_id, history),
    }
}

fn ready_task(inner: &Inner, task_id: &str, history: Option<usize>) -> Result<Reply, RpcError> {
    inner
        .snapshot(task_id, history, true)
        .map(|json| Reply::Ready("task", json))
        .ok_or_else(|| RpcError::task_not_found(task_id))
}

/// Waits until the task reaches a terminal or interrupted state (or the agent shuts down).
async fn wait_until_stopped(shared: &Shared, task_id: &str, mut rx: EventRx) {
    let mut shutdown = shared.shutdown.clone();
    loop {
        tokio::select! {
            received = rx.recv() => match received {
                Ok(event) if event.stops => return,
                Ok(_) => {}
                Err(RecvError::Lagged(_)) => {
                    if shared.lock().info(task_id).is_none_or(|(s, _, _)| stops_at(&s)) {
                        return;
                    }
                }
                Err(RecvError::Closed) => return,
            },
            _ = shutdown.wait_for(|stop| *stop) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_header_needs_major_one() {
        let uri: Uri = "/".parse().unwrap();
        let mut headers = HeaderMap::new();
        assert_eq!(check_version(&headers, &uri), Err("0.3".to_owned()));
        headers.insert("A2A-Version", HeaderValue::from_static("1.0"));
        assert_eq!(check_version(&headers, &uri), Ok(()));
        headers.insert("A2A-Version", HeaderValue::from_static("1.1"));
        assert_eq!(check_version(&headers, &uri), Ok(()));
        headers.insert("A2A-Version", HeaderValue::from_static("0.3"));
        assert_eq!(check_version(&headers, &uri), Err("0.3".to_owned()));
        headers.insert("A2A-Version", HeaderValue::from_static("10.0"));
        assert!(check_version(&headers, &uri).is_err());
        let uri: Uri = "/?A2A-Version=1.0".parse().unwrap();
        assert_eq!(check_version(&HeaderMap::new(), &uri), Ok(()));
    }

    #[test]
    fn invalid_params_carry_error_info_then_bad_request() {
        let e = RpcError::invalid_params("message.contextId", "refused").to_json();
        assert_eq!(e["code"], -32602);
        assert_eq!(e["data"][0]["reason"], "INVALID_PARAMS");
        assert_eq!(e["data"][0]["domain"], DOMAIN);
        assert_eq!(
            e["data"][1]["@type"],
            "type.googleapis.com/google.rpc.BadRequest"
        );
        assert_eq!(
            e["data"][1]["fieldViolations"][0]["field"],
            "message.contextId"
        );
        assert!(
            RpcError::plain(-32601, "Method not found")
                .to_json()
                .get("data")
                .is_none()
        );
    }

    #[test]
    fn unknown_method_names_are_bounded() {
        let counters = MethodCounters::default();
        for i in 0..100 {
            assert!(counters.count(&format!("m{i}")).is_none());
        }
        assert_eq!(counters.count("GetTask"), Some(Method::GetTask));
        let snap = counters.snapshot();
        assert_eq!(snap.len(), MAX_UNKNOWN_METHODS + 2);
        assert_eq!(snap["(other)"], 36);
        assert_eq!(snap["GetTask"], 1);
    }
}
