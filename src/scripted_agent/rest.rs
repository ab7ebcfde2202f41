//! The HTTP+JSON (REST) endpoint: the v1.0 paths on the task logic the JSON-RPC endpoint runs.
//!
//! `POST /message:send`, `POST /message:stream`, `GET /tasks/{id}`, `GET /tasks` (ListTasks from
//! camelCase query parameters), `POST /tasks/{id}:cancel`, `GET|POST /tasks/{id}:subscribe`, each
//! under `/{tenant}` when the card names a tenant. Answers are the bare v1.0 payloads
//! (`application/a2a+json`), stream events bare `StreamResponse`s; errors carry the status of
//! their reason and a `google.rpc.Status` body with the `ErrorInfo` first (the Python server's
//! table). A path it does not know, and every request while the not-found budget lasts
//! (`/_scripted/not-found-next/{n}`), gets a bare `404 page not found` in plain text, as a proxy
//! or router in front of an agent answers.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Map, Value, json};

use super::Shared;
use super::rpc::{self, RpcError, Sent};
use super::sse;

/// One HTTP+JSON operation, read from the verb and the path.
enum Op {
    Send {
        streaming: bool,
    },
    Get(String),
    List,
    Cancel(String),
    Subscribe(String),
    /// `DELETE /tasks/{id}/pushNotificationConfigs/{configId}`.
    DeletePushConfig(String, String),
    /// `/tasks/{id}/pushNotificationConfigs[/{configId}]`, any other verb: not supported.
    PushConfig,
}

impl Op {
    fn name(&self) -> &'static str {
        match self {
            Self::Send { streaming: false } => "SendMessage",
            Self::Send { streaming: true } => "SendStreamingMessage",
            Self::Get(_) => "GetTask",
            Self::List => "ListTasks",
            Self::Cancel(_) => "CancelTask",
            Self::Subscribe(_) => "SubscribeToTask",
            Self::DeletePushConfig(..) => "DeleteTaskPushNotificationConfig",
            Self::PushConfig => "PushConfig",
        }
    }
}

/// Names the HTTP+JSON operation (`GetTask`, …) a request of this verb and path (without a
/// tenant) asks for, if any: how the simulator names a request whose path holds a task id.
pub fn operation_name(method: &Method, path: &str) -> Option<&'static str> {
    route(method, path, None).map(|op| op.name())
}

/// Reads the operation from the verb and the path (after the tenant, when the card has one).
fn route(method: &Method, path: &str, tenant: Option<&str>) -> Option<Op> {
    let mut segments: Vec<String> = path
        .trim_start_matches('/')
        .split('/')
        .map(percent_decode)
        .collect();
    if let Some(tenant) = tenant {
        if segments.first().map(String::as_str) != Some(tenant) {
            return None;
        }
        segments.remove(0);
    }
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    match (method, segments.as_slice()) {
        (&Method::POST, ["message:send"]) => Some(Op::Send { streaming: false }),
        (&Method::POST, ["message:stream"]) => Some(Op::Send { streaming: true }),
        (&Method::GET, ["tasks"]) => Some(Op::List),
        (&Method::DELETE, ["tasks", id, "pushNotificationConfigs", config]) => {
            Some(Op::DeletePushConfig((*id).to_owned(), (*config).to_owned()))
        }
        (_, ["tasks", _, "pushNotificationConfigs", ..]) => Some(Op::PushConfig),
        (m, ["tasks", rest]) => {
            if let Some(id) = rest.strip_suffix(":cancel") {
                (m == Method::POST).then(|| Op::Cancel(id.to_owned()))
            } else if let Some(id) = rest.strip_suffix(":subscribe") {
                (m == Method::POST || m == Method::GET).then(|| Op::Subscribe(id.to_owned()))
            } else {
                (m == Method::GET).then(|| Op::Get((*rest).to_owned()))
            }
        }
        _ => None,
    }
}

/// Answers every request no other route took.
pub(crate) async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    headers: HeaderMap,
    uri: Uri,
    body: Bytes,
) -> Response {
    let Some(op) = route(&method, uri.path(), shared.cfg.tenant.as_deref()) else {
        return bare_not_found();
    };
    if let Some(refused) = super::unauthorized(&shared.cfg, &headers, &uri) {
        return refused;
    }
    if shared
        .not_found_budget
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| b.checked_sub(1))
        .is_ok()
    {
        return bare_not_found();
    }
    shared.methods.count(op.name());
    if let Err(version) = rpc::check_version(&headers, &uri) {
        return RpcError::version(&version).to_rest();
    }
    let outcome = match op {
        Op::Send { streaming } => send(&shared, &body, streaming).await,
        Op::Get(id) => query_params(&uri).and_then(|mut params| {
            params.insert("id".to_owned(), Value::from(id));
            rpc::get_task(&shared, &Value::Object(params)).map(|json| payload(&json))
        }),
        Op::List => query_params(&uri)
            .and_then(|params| rpc::list_tasks(&shared, Value::Object(params)))
            .map(|json| payload(&json)),
        Op::Cancel(id) => {
            rpc::cancel_task(&shared, &json!({ "id": id })).map(|json| payload(&json))
        }
        Op::Subscribe(id) => {
            rpc::subscribe(&shared, &json!({ "id": id })).map(|s| sse::response(&shared, None, s))
        }
        Op::DeletePushConfig(id, config) => {
            rpc::delete_push_config(&shared, &id, &config).map(|()| payload(b"{}"))
        }
        Op::PushConfig => Err(RpcError::a2a(
            -32003,
            "PUSH_NOTIFICATION_NOT_SUPPORTED",
            "Push notifications are not supported",
        )),
    };
    outcome.unwrap_or_else(|e| e.to_rest())
}

/// Decodes `%XX` escapes in a path segment (bad escapes stay as they are).
fn percent_decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

async fn send(shared: &Arc<Shared>, body: &[u8], streaming: bool) -> Result<Response, RpcError> {
    let params: Value = serde_json::from_slice(body)
        .map(super::fields::camel_case_fields)
        .map_err(|e| RpcError::plain(-32700, format!("Invalid JSON payload: {e}")))?;
    Ok(match rpc::send_core(shared, params, streaming).await? {
        Sent::Unavailable => rpc::unavailable(),
        Sent::Ready(member, json) => {
            let mut buf = Vec::with_capacity(json.len() + member.len() + 5);
            buf.extend_from_slice(b"{\"");
            buf.extend_from_slice(member.as_bytes());
            buf.extend_from_slice(b"\":");
            buf.extend_from_slice(&json);
            buf.push(b'}');
            payload(&buf)
        }
        Sent::Stream(start) => sse::response(shared, None, start),
    })
}

/// Reads the query into request fields: the numbers and booleans ListTasks and GetTask take,
/// everything else as strings (a repeated key keeps its last value).
fn query_params(uri: &Uri) -> Result<Map<String, Value>, RpcError> {
    let mut out = Map::new();
    for (key, value) in url::form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes()) {
        let key = super::fields::camel_case(&key);
        let parsed = match &*key {
            "pageSize" | "historyLength" => Value::from(
                value
                    .parse::<i64>()
                    .map_err(|_| RpcError::invalid_params(&key, "must be an integer"))?,
            ),
            "includeArtifacts" => Value::from(match &*value {
                "true" => true,
                "false" => false,
                _ => return Err(RpcError::invalid_params(&key, "must be true or false")),
            }),
            _ => Value::from(value.into_owned()),
        };
        out.insert(key, parsed);
    }
    Ok(out)
}

fn payload(json: &[u8]) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/a2a+json"),
        )],
        json.to_vec(),
    )
        .into_response()
}

/// A 404 with no A2A error in it, as a proxy or router answers.
fn bare_not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        )],
        "404 page not found\n",
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_read_verb_path_and_tenant() {
        let name = |m: Method, p: &str, t: Option<&str>| route(&m, p, t).map(|op| op.name());
        assert_eq!(
            name(Method::POST, "/message:send", None),
            Some("SendMessage")
        );
        assert_eq!(
            name(Method::POST, "/message:stream", None),
            Some("SendStreamingMessage")
        );
        assert_eq!(name(Method::GET, "/tasks", None), Some("ListTasks"));
        assert_eq!(name(Method::GET, "/tasks/t-1", None), Some("GetTask"));
        assert_eq!(
            name(Method::POST, "/tasks/t-1:cancel", None),
            Some("CancelTask")
        );
        assert_eq!(
            name(Method::GET, "/tasks/t-1:subscribe", None),
            Some("SubscribeToTask")
        );
        assert_eq!(
            name(Method::POST, "/acme/tasks/t-1:subscribe", Some("acme")),
            Some("SubscribeToTask")
        );
        assert_eq!(name(Method::GET, "/tasks", Some("acme")), None);
        assert_eq!(name(Method::POST, "/", None), None);
        assert_eq!(name(Method::GET, "/tasks/t-1:cancel", None), None);
        assert_eq!(name(Method::GET, "/v1/tasks/t-1", None), None);
        match route(&Method::GET, "/tasks/a%2Fb", None) {
            Some(Op::Get(id)) => assert_eq!(id, "a/b"),
            _ => panic!("not a GetTask"),
        }
    }
}
