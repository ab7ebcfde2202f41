//! The A2A v1.0 HTTP+JSON (REST) binding: paths and verbs, query parameters, and reading
//! answers, `google.rpc.Status` error bodies and stream events.
//!
//! Paths hang off the interface URL with no `/v1` prefix, and with `/{tenant}` first when the
//! interface has a tenant: `POST /message:send`, `POST /message:stream`, `GET /tasks/{id}`,
//! `GET /tasks?…` (ListTasks, its fields as camelCase query parameters), `POST
//! /tasks/{id}:cancel`, `POST /tasks/{id}:subscribe` (a server that answers 405 to that is asked
//! again with `GET`, the verb the proto names). Bodies are the bare v1.0 payloads (`Content-Type:
//! application/a2a+json`, `A2A-Version: 1.0`); an SSE event's data is a bare `StreamResponse`.
//!
//! Errors are read by the `google.rpc.ErrorInfo` reason in the body (`{"error":{"code",
//! "status","message","details":[…]}}`), never by the HTTP status alone: the reason becomes
//! the JSON-RPC code it stands for (`TASK_NOT_FOUND` → -32001, …), so recovery decides on one
//! set of codes whatever the binding. A 404 with no reason is a proxy's or a router's and says
//! nothing about the task ([`A2aError::Http`] `unattributed`): an attempt is `LOST` only on the
//! agent's `TASK_NOT_FOUND`.

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode, Url};
use serde::Serialize;
use serde_json::Value;

use super::binding::{Call, Raw, WireRequest, typed};
use super::error::{A2aError, DecodeKind, RpcError};
use super::normalize;
use super::sse::SseEvent;
use super::transport::{self, A2A_VERSION, Op, decode_json};
use super::types;

/// The media type of request bodies (the binding's own; servers also accept
/// `application/json`).
const CONTENT_TYPE: &str = "application/a2a+json";
/// What unary requests accept.
const ACCEPT_JSON: &str = "application/a2a+json, application/json";

/// Returns the JSON-RPC code an `ErrorInfo` reason stands for, if it is an A2A reason (the two
/// bindings' shared table is [`ErrorKind`](super::ErrorKind)).
pub(crate) fn code_of_reason(reason: &str) -> Option<i64> {
    super::ErrorKind::of_reason(reason).map(super::ErrorKind::code)
}

/// Returns the operation's name for errors and logs (the v1.0 operation name).
pub(crate) fn method(call: &Call<'_>) -> &'static str {
    super::jsonrpc::method(call)
}

/// Builds the request of an operation: its verb, path, query and body.
pub(crate) fn request(
    call: &Call<'_>,
    base: &Url,
    tenant: Option<&str>,
) -> Result<WireRequest, A2aError> {
    let tenant = tenant.filter(|t| !t.is_empty());
    refuse_unaddressable(call, base)?;
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
        Call::ListTasks(_) => (Method::GET, vec!["tasks".to_owned()], None, ACCEPT_JSON),
        Call::CancelTask { id } => (
            Method::POST,
            vec!["tasks".to_owned(), format!("{id}:cancel")],
            Some(b"{}".to_vec()),
            ACCEPT_JSON,
        ),
        Call::SubscribeToTask { id } => (
            Method::POST,
            vec!["tasks".to_owned(), format!("{id}:subscribe")],
            Some(b"{}".to_vec()),
            "text/event-stream",
        ),
    };
    let mut url = join_path(
        base,
        tenant
            .into_iter()
            .chain(segments.iter().map(String::as_str)),
    )?;
    match *call {
        Call::GetTask {
            history_length: Some(n),
            ..
        } => {
            url.query_pairs_mut()
                .append_pair("historyLength", &n.to_string());
        }
        Call::ListTasks(req) => list_query(&mut url, req)?,
        _ => {}
    }
    if url.query() == Some("") {
        url.set_query(None);
    }
    Ok(WireRequest {
        method,
        url,
        body: body.map(|b| (CONTENT_TYPE, b)),
        accept,
        version: Some(A2A_VERSION),
        echo: None,
    })
}

/// Refuses to build a request for a task whose id no URL path segment can hold
/// ([`task_id_problem`](crate::model::task_id_problem)): `GET /tasks/..` would read the task
/// collection, and its 404 would be taken for the task's. The binding's answers never yield
/// such an id; this keeps one journaled before that rule from reaching the wire.
pub(crate) fn refuse_unaddressable(call: &Call<'_>, base: &Url) -> Result<(), A2aError> {
    let (Call::GetTask { id, .. } | Call::CancelTask { id } | Call::SubscribeToTask { id }) = *call
    else {
        return Ok(());
    };
    match crate::model::task_id_problem(id) {
        Some(why) => Err(A2aError::Decode {
            url: super::credentials::redact_url(base.as_str()),
            method: method(call),
            kind: DecodeKind::TaskId,
            detail: format!(
                "task id `{}` cannot name a task in a URL: {why}; nothing was sent",
                super::error::truncate_chars(id, 80)
            ),
        }),
        None => Ok(()),
    }
}

/// Returns `base` without its query and fragment, with `segments` appended to its path, each
/// percent-encoded into exactly one path segment; a segment that would not come out as itself
/// (empty, `.` or `..`, which the URL library drops or resolves, or holding a tab or a line
/// break, which it drops) is an error: the URL would name another resource.
pub(crate) fn join_path<'a>(
    base: &Url,
    segments: impl IntoIterator<Item = &'a str>,
) -> Result<Url, A2aError> {
    let segments: Vec<&str> = segments.into_iter().collect();
    let mut url = base.clone();
    url.set_query(None);
    url.set_fragment(None);
    {
        let mut path = url.path_segments_mut().map_err(|()| A2aError::InvalidUrl {
            url: super::credentials::redact_url(base.as_str()),
            reason: "it cannot be a base for HTTP+JSON paths".to_owned(),
        })?;
        path.pop_if_empty();
        path.extend(&segments);
    }
    let built: Vec<&str> = url.path_segments().into_iter().flatten().collect();
    let stays = built.len() >= segments.len()
        && built[built.len() - segments.len()..]
            .iter()
            .zip(&segments)
            .all(|(got, want)| !want.is_empty() && percent_decoded(got) == want.as_bytes());
    if !stays {
        return Err(A2aError::InvalidUrl {
            url: super::credentials::redact_url(base.as_str()),
            reason: format!(
                "the path segments {} would not each stay one segment of the URL",
                segments
                    .iter()
                    .map(|s| format!("`{}`", super::error::truncate_chars(s, 80)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    Ok(url)
}

/// Decodes `%XX` escapes (anything else, a malformed escape included, is kept as it is).
fn percent_decoded(segment: &str) -> Vec<u8> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(&h), Some(&l)) = (bytes.get(i + 1), bytes.get(i + 2))
            && let (Some(h), Some(l)) = (hex(h), hex(l))
        {
            out.push(u8::try_from(h * 16 + l).unwrap_or_default());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// Returns the `GET` a server that refused `POST /tasks/{id}:subscribe` with 405 is asked next.
pub(crate) fn fallback(
    call: &Call<'_>,
    base: &Url,
    tenant: Option<&str>,
) -> Result<Option<WireRequest>, A2aError> {
    let Call::SubscribeToTask { .. } = call else {
        return Ok(None);
    };
    let mut wire = request(call, base, tenant)?;
    wire.method = Method::GET;
    wire.body = None;
    Ok(Some(wire))
}

/// Puts a `ListTasksRequest`'s fields into the query, camelCase, skipping the tenant (it is in
/// the path): strings as they are, numbers and booleans as JSON writes them, the timestamp as
/// RFC 3339.
fn list_query(url: &mut Url, req: &types::ListTasksRequest) -> Result<(), A2aError> {
    let Value::Object(fields) = to_value(req)? else {
        return Ok(());
    };
    let mut query = url.query_pairs_mut();
    for (key, value) in &fields {
        let text = match value {
            _ if key == "tenant" => continue,
            Value::Null => continue,
            Value::String(s) => s.clone(),
            Value::Bool(_) | Value::Number(_) => value.to_string(),
            Value::Array(_) | Value::Object(_) => {
                return Err(A2aError::Client {
                    detail: format!("ListTasks field `{key}` cannot go into a query"),
                });
            }
        };
        query.append_pair(key, &text);
    }
    Ok(())
}

fn to_value(req: &impl Serialize) -> Result<Value, A2aError> {
    serde_json::to_value(req).map_err(|e| A2aError::Client {
        detail: format!("could not encode the request: {e}"),
    })
}

/// Serializes a request body; the tenant is in the path, not the body.
fn to_body(req: &types::SendMessageRequest) -> Result<Vec<u8>, A2aError> {
    let mut value = to_value(req)?;
    if let Value::Object(obj) = &mut value {
        obj.remove("tenant");
    }
    serde_json::to_vec(&value).map_err(|e| A2aError::Client {
        detail: format!("could not encode the request: {e}"),
    })
}

/// Reads a success body: the operation's result itself (no envelope).
pub(crate) fn result(op: &Op, body: &[u8]) -> Result<Value, A2aError> {
    let value = decode_json(op, body)?;
    if !value.is_object() {
        return Err(op.decode(DecodeKind::WrongShape, "the answer is not a JSON object"));
    }
    Ok(value)
}

/// Decodes one SSE event's data: a bare `StreamResponse`, or an error body (in an `event:
/// error` frame or a plain one).
pub(crate) fn stream_item(
    op: &Op,
    event: &SseEvent,
) -> Result<Raw<types::StreamResponse>, A2aError> {
    let value = decode_json(op, event.data.as_bytes())?;
    if let Some(error) = value.get("error") {
        let (rpc, reason) = parse_status(error);
        return Err(match rpc {
            Some(error) => A2aError::Rpc {
                url: op.url.clone(),
                method: op.method,
                error,
            },
            None => op.decode(
                DecodeKind::WrongShape,
                format!(
                    "an error event without an A2A reason{}: {}",
                    reason.map(|r| format!(" (reason {r})")).unwrap_or_default(),
                    op.snippet(event.data.as_bytes())
                ),
            ),
        });
    }
    if event.event.as_deref() == Some("error") {
        return Err(op.decode(
            DecodeKind::WrongShape,
            format!(
                "an `error` event without an error body: {}",
                op.snippet(event.data.as_bytes())
            ),
        ));
    }
    typed(op, value, normalize::stream_response)
}

/// Reads a `google.rpc.Status` error object: the A2A error its `ErrorInfo` reason stands for
/// (`None` when it names no A2A reason), and the reason as given.
pub(crate) fn parse_status(error: &Value) -> (Option<RpcError>, Option<String>) {
    let details = error.get("details").and_then(Value::as_array);
    let reason = details
        .into_iter()
        .flatten()
        .filter(|d| {
            d.get("@type")
                .and_then(Value::as_str)
                .is_none_or(|t| t.ends_with("google.rpc.ErrorInfo"))
        })
        .find_map(|d| d.get("reason").and_then(Value::as_str))
        .map(str::to_owned);
    let code = reason.as_deref().and_then(code_of_reason);
    let rpc = code.map(|code| RpcError {
        code,
        message: error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        data: details.map(|d| Value::Array(d.clone())),
    });
    (rpc, reason)
}

/// Builds the error for a non-success HTTP status from its `google.rpc.Status` body; a 404
/// whose body names no A2A reason is `unattributed` (a proxy's or a router's).
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
        .and_then(|v| v.get("error"))
        .filter(|e| e.is_object())
        .map(parse_status)
        .unwrap_or_default();
    attributed(op, status, headers, body, rpc, reason)
}

/// Builds the HTTP error with the A2A error and reason read from its body; a 404 without an
/// A2A error is `unattributed` (a proxy's or a router's).
pub(crate) fn attributed(
    op: &Op,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
    rpc: Option<RpcError>,
    reason: Option<String>,
) -> A2aError {
    let unattributed = status == StatusCode::NOT_FOUND && rpc.is_none();
    let mut error = transport::http_error(op, status, headers, body, rpc);
    if let A2aError::Http {
        reason: r,
        unattributed: u,
        ..
    } = &mut error
    {
        *r = reason;
        *u = unattributed;
    }
    error
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::error::ErrorClass;
    use super::*;

    fn base(url: &str) -> Url {
        Url::parse(url).unwrap()
    }

    fn send_request() -> types::SendMessageRequest {
        serde_json::from_value(json!({
            "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
            "configuration": {"returnImmediately": true},
            "tenant": "ignored-in-body"
        }))
        .unwrap()
    }

    #[test]
    fn paths_and_verbs_follow_the_binding() {
        let b = base("http://a.example/api/rest/");
        let send = send_request();
        let list: types::ListTasksRequest = serde_json::from_value(json!({})).unwrap();
        let cases: [(Call<'_>, Method, &str, &str); 6] = [
            (
                Call::SendMessage(&send),
                Method::POST,
                "http://a.example/api/rest/message:send",
                ACCEPT_JSON,
            ),
            (
                Call::SendStreamingMessage(&send),
                Method::POST,
                "http://a.example/api/rest/message:stream",
                "text/event-stream",
            ),
            (
                Call::GetTask {
                    id: "t-1",
                    history_length: Some(0),
                },
                Method::GET,
                "http://a.example/api/rest/tasks/t-1?historyLength=0",
                ACCEPT_JSON,
            ),
            (
                Call::ListTasks(&list),
                Method::GET,
                "http://a.example/api/rest/tasks",
                ACCEPT_JSON,
            ),
            (
                Call::CancelTask { id: "t-1" },
                Method::POST,
                "http://a.example/api/rest/tasks/t-1:cancel",
                ACCEPT_JSON,
            ),
            (
                Call::SubscribeToTask { id: "t-1" },
                Method::POST,
                "http://a.example/api/rest/tasks/t-1:subscribe",
                "text/event-stream",
            ),
        ];
        for (call, verb, url, accept) in cases {
            let wire = request(&call, &b, None).unwrap();
            assert_eq!(wire.method, verb, "{url}");
            assert_eq!(wire.url.as_str(), url);
            assert_eq!(wire.accept, accept, "{url}");
            assert_eq!(wire.version, Some("1.0"));
            assert!(wire.echo.is_none());
            assert_eq!(
                wire.body.as_ref().map(|(ct, _)| *ct),
                (verb == Method::POST).then_some(CONTENT_TYPE),
                "{url}"
            );
        }
    }

    #[test]
    fn a_base_without_a_trailing_slash_or_with_a_query_still_joins() {
        let wire = request(
            &Call::GetTask {
                id: "t",
                history_length: None,
            },
            &base("http://a.example:81?x=1"),
            None,
        )
        .unwrap();
        assert_eq!(wire.url.as_str(), "http://a.example:81/tasks/t");
        let wire = request(
            &Call::CancelTask { id: "t" },
            &base("http://a.example/rest"),
            None,
        )
        .unwrap();
        assert_eq!(wire.url.as_str(), "http://a.example/rest/tasks/t:cancel");
    }

    #[test]
    fn the_tenant_prefixes_every_path_and_leaves_the_body() {
        let b = base("http://a.example/");
        let send = send_request();
        let wire = request(&Call::SendMessage(&send), &b, Some("acme")).unwrap();
        assert_eq!(wire.url.as_str(), "http://a.example/acme/message:send");
        let (_, body) = wire.body.unwrap();
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert!(body.get("tenant").is_none(), "{body}");
        assert_eq!(body["message"]["messageId"], "m-1");
        assert_eq!(body["configuration"]["returnImmediately"], true);
        let list: types::ListTasksRequest =
            serde_json::from_value(json!({"tenant": "acme"})).unwrap();
        let wire = request(&Call::ListTasks(&list), &b, Some("acme")).unwrap();
        assert_eq!(wire.url.as_str(), "http://a.example/acme/tasks");
        let wire = request(&Call::SubscribeToTask { id: "t-1" }, &b, Some("")).unwrap();
        assert_eq!(wire.url.as_str(), "http://a.example/tasks/t-1:subscribe");
    }

    #[test]
    fn ids_and_tenants_are_one_encoded_path_segment() {
        let b = base("http://a.example/");
        let wire = request(
            &Call::GetTask {
                id: "a/b?c#d e",
                history_length: None,
            },
            &b,
            Some("t/1"),
        )
        .unwrap();
        assert_eq!(wire.url.path(), "/t%2F1/tasks/a%2Fb%3Fc%23d%20e");
        assert_eq!(wire.url.query(), None);
    }

    #[test]
    fn a_task_id_that_is_not_one_segment_never_reaches_another_resource() {
        let b = base("http://a.example/rest/");
        // Before: `..` was dropped by the URL library (`GET /rest/tasks`, the collection), `.`
        // too, a tab silently (`a\tb` read task `ab`), and an empty id read `/rest/tasks/`.
        for id in ["..", ".", "", "a\tb", ".\n.", "\r"] {
            for call in [
                Call::GetTask {
                    id,
                    history_length: None,
                },
                Call::CancelTask { id },
                Call::SubscribeToTask { id },
            ] {
                let e = request(&call, &b, None).unwrap_err();
                assert!(e.is_bad_task_id(), "{id:?}: {e}");
                assert_eq!(e.exit_code(), crate::exit::NEEDS_HUMAN);
                let e = super::super::httpjson03::request(&call, &b).unwrap_err();
                assert!(e.is_bad_task_id(), "v0.3 {id:?}: {e}");
            }
        }
        // Dots and escapes that are not dot segments stay one segment, as themselves.
        for (id, path) in [
            ("%2e%2e", "/rest/tasks/%252e%252e"),
            ("...", "/rest/tasks/..."),
            ("../x", "/rest/tasks/..%2Fx"),
            ("a\\b", "/rest/tasks/a%5Cb"),
        ] {
            let call = Call::GetTask {
                id,
                history_length: None,
            };
            assert_eq!(request(&call, &b, None).unwrap().url.path(), path, "{id}");
        }
        // A tenant the card names is held to the same rule.
        let call = Call::GetTask {
            id: "t-1",
            history_length: None,
        };
        let e = request(&call, &b, Some("..")).unwrap_err();
        assert!(matches!(e, A2aError::InvalidUrl { .. }), "{e}");
        assert!(join_path(&b, ["tasks", "a\tb"]).is_err());
        assert_eq!(
            join_path(&b, ["tasks", "a/b"]).unwrap().path(),
            "/rest/tasks/a%2Fb"
        );
    }

    #[test]
    fn list_tasks_fields_become_camel_case_query_parameters() {
        let after = chrono::DateTime::parse_from_rfc3339("2026-03-12T10:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let req = types::ListTasksRequest {
            context_id: Some("ctx 1&x=y".to_owned()),
            status: Some(types::TaskState::Working),
            page_size: Some(50),
            page_token: Some("tok+/=".to_owned()),
            history_length: Some(0),
            status_timestamp_after: Some(after),
            include_artifacts: Some(true),
            tenant: Some("acme".to_owned()),
        };
        let wire = request(&Call::ListTasks(&req), &base("http://a.example/"), None).unwrap();
        let pairs: Vec<(String, String)> = wire.url.query_pairs().into_owned().collect();
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("contextId"), Some("ctx 1&x=y"));
        assert_eq!(get("status"), Some("TASK_STATE_WORKING"));
        assert_eq!(get("pageSize"), Some("50"));
        assert_eq!(get("pageToken"), Some("tok+/="));
        assert_eq!(get("historyLength"), Some("0"));
        assert_eq!(get("includeArtifacts"), Some("true"));
        let stamp = get("statusTimestampAfter").unwrap();
        assert_eq!(
            chrono::DateTime::parse_from_rfc3339(stamp).unwrap(),
            after,
            "{stamp}"
        );
        assert_eq!(get("tenant"), None);
        assert_eq!(pairs.len(), 7, "{pairs:?}");
        assert!(wire.body.is_none());
    }

    #[test]
    fn subscribe_falls_back_to_get_and_nothing_else_does() {
        let b = base("http://a.example/");
        let wire = fallback(&Call::SubscribeToTask { id: "t" }, &b, Some("x"))
            .unwrap()
            .unwrap();
        assert_eq!(wire.method, Method::GET);
        assert!(wire.body.is_none());
        assert_eq!(wire.url.as_str(), "http://a.example/x/tasks/t:subscribe");
        assert!(
            fallback(&Call::CancelTask { id: "t" }, &b, None)
                .unwrap()
                .is_none()
        );
    }

    fn op() -> Op {
        Op::new("http://127.0.0.1/", "GetTask")
    }

    fn status_body(code: u16, status: &str, reason: Option<&str>) -> Vec<u8> {
        let mut error = json!({"code": code, "status": status, "message": "Task not found"});
        if let Some(reason) = reason {
            error["details"] = json!([{
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason, "domain": "a2a-protocol.org", "metadata": {"taskId": "t-9"}
            }]);
        }
        serde_json::to_vec(&json!({ "error": error })).unwrap()
    }

    fn http(status: u16, body: &[u8]) -> A2aError {
        http_error(
            &op(),
            StatusCode::from_u16(status).unwrap(),
            &HeaderMap::new(),
            body,
        )
    }

    #[test]
    fn task_not_found_is_the_agents_word() {
        let e = http(404, &status_body(404, "NOT_FOUND", Some("TASK_NOT_FOUND")));
        assert_eq!(e.rpc_code(), Some(-32001));
        assert_eq!(e.http_status(), Some(404));
        assert_eq!(e.class(), ErrorClass::Remote);
        assert!(!e.is_transient());
        let s = e.summary();
        assert!(s.contains("(TASK_NOT_FOUND)"), "{s}");
        assert!(!s.contains("JSON-RPC"), "{s}");
        assert!(matches!(
            e,
            A2aError::Http {
                unattributed: false,
                ..
            }
        ));
    }

    #[test]
    fn a_bare_404_is_not_absence() {
        for body in [
            &b"Not Found"[..],
            b"<html><body>404 page not found</body></html>",
            b"",
            &status_body(404, "NOT_FOUND", None),
            &status_body(404, "NOT_FOUND", Some("SOMETHING_ELSE")),
        ] {
            let e = http(404, body);
            assert_eq!(e.rpc_code(), None, "{e}");
            assert_eq!(e.class(), ErrorClass::Ambiguous, "{e}");
            assert!(e.is_transient(), "{e}");
            assert!(
                matches!(
                    e,
                    A2aError::Http {
                        unattributed: true,
                        ..
                    }
                ),
                "{e}"
            );
            assert_eq!(e.hint(), Some(crate::a2a::Hint::Proxy), "{e}");
            assert_eq!(e.exit_code(), crate::exit::WORK_REMAINS);
        }
    }

    #[test]
    fn server_errors_stay_ambiguous_and_retryable() {
        for status in [500, 502, 503, 504] {
            let e = http(status, b"upstream failed");
            assert_eq!(e.class(), ErrorClass::Ambiguous, "{status}");
            assert_eq!(e.rpc_code(), None);
            assert_eq!(e.is_transient(), status != 500, "{status}");
        }
        let e = http(500, &status_body(500, "INTERNAL", Some("INTERNAL_ERROR")));
        assert_eq!(e.rpc_code(), Some(-32603));
        assert_eq!(e.class(), ErrorClass::Ambiguous);
        // A reason in a 5xx body does not make it less ambiguous.
        let e = http(
            503,
            &status_body(503, "UNAVAILABLE", Some("TASK_NOT_FOUND")),
        );
        assert_eq!(e.class(), ErrorClass::Ambiguous);
    }

    #[test]
    fn reasons_map_as_json_rpc_codes_do() {
        let cases = [
            (400, "TASK_NOT_CANCELABLE", -32002, ErrorClass::Remote),
            (400, "UNSUPPORTED_OPERATION", -32004, ErrorClass::Remote),
            (
                400,
                "CONTENT_TYPE_NOT_SUPPORTED",
                -32005,
                ErrorClass::Refused,
            ),
            (400, "VERSION_NOT_SUPPORTED", -32009, ErrorClass::Refused),
            (400, "INVALID_PARAMS", -32602, ErrorClass::Refused),
            (400, "INVALID_REQUEST", -32600, ErrorClass::Refused),
            (404, "METHOD_NOT_FOUND", -32601, ErrorClass::Refused),
            (
                400,
                "PUSH_NOTIFICATION_NOT_SUPPORTED",
                -32003,
                ErrorClass::Remote,
            ),
        ];
        for (status, reason, code, class) in cases {
            let e = http(status, &status_body(status, "X", Some(reason)));
            assert_eq!(e.rpc_code(), Some(code), "{reason}");
            assert_eq!(e.class(), class, "{reason}");
        }
        // Without a reason the status decides, as for any HTTP error.
        assert_eq!(http(401, b"").class(), ErrorClass::Refused);
        assert_eq!(http(400, b"{}").class(), ErrorClass::Refused);
        assert_eq!(http(429, b"").class(), ErrorClass::Ambiguous);
    }

    #[test]
    fn a_context_id_refusal_reads_through_bad_request_details() {
        let body = json!({"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "bad",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "INVALID_PARAMS"},
            {"@type": "type.googleapis.com/google.rpc.BadRequest",
             "fieldViolations": [{"field": "message.contextId", "description": "no"}]}
        ]}});
        let e = http(400, &serde_json::to_vec(&body).unwrap());
        assert!(e.is_context_id_refusal(), "{e}");
    }

    #[test]
    fn stream_events_are_bare_stream_responses_or_errors() {
        let ev = |event: Option<&str>, data: &str| SseEvent {
            event: event.map(str::to_owned),
            data: data.to_owned(),
        };
        let item = stream_item(
            &op(),
            &ev(
                None,
                r#"{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}"#,
            ),
        )
        .unwrap();
        assert!(item.raw.get("statusUpdate").is_some());
        let err = stream_item(
            &op(),
            &ev(
                Some("error"),
                std::str::from_utf8(&status_body(404, "NOT_FOUND", Some("TASK_NOT_FOUND")))
                    .unwrap(),
            ),
        )
        .unwrap_err();
        assert_eq!(err.rpc_code(), Some(-32001));
        let err = stream_item(&op(), &ev(Some("error"), r#"{"task":{}}"#)).unwrap_err();
        assert!(matches!(err, A2aError::Decode { .. }), "{err}");
        let err = stream_item(&op(), &ev(None, r#"{"error":{"code":500}}"#)).unwrap_err();
        assert!(matches!(err, A2aError::Decode { .. }), "{err}");
    }

    /// A server that refuses `POST …:subscribe` with 405 and streams on `GET`, as a server
    /// that follows the proto's verb does.
    #[tokio::test]
    async fn a_405_on_subscribe_is_asked_again_with_get() {
        use std::sync::{Arc, Mutex};

        use axum::http::Method as HttpMethod;

        use super::super::{A2aClient, ClientConfig, Endpoint, ProtocolBinding};

        /// Verb, path and `A2A-Version` of each request.
        type Seen = Vec<(String, String, Option<String>)>;
        let seen: Arc<Mutex<Seen>> = Arc::default();
        let app = axum::Router::new().fallback({
            let seen = Arc::clone(&seen);
            move |method: HttpMethod, uri: axum::http::Uri, headers: axum::http::HeaderMap| {
                let seen = Arc::clone(&seen);
                async move {
                    let version = headers
                        .get("a2a-version")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned);
                    seen.lock()
                        .unwrap()
                        .push((method.to_string(), uri.path().to_owned(), version));
                    if method == HttpMethod::POST {
                        return axum::response::Response::builder()
                            .status(405)
                            .body(axum::body::Body::from("Method Not Allowed"))
                            .unwrap();
                    }
                    let event = "data: {\"task\":{\"id\":\"t\",\"contextId\":\"c\",\
                        \"status\":{\"state\":\"TASK_STATE_WORKING\"}}}\n\n";
                    axum::response::Response::builder()
                        .header("content-type", "text/event-stream")
                        .body(axum::body::Body::from(event))
                        .unwrap()
                }
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/rest", listener.local_addr().unwrap());
        let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let client = A2aClient::new(ClientConfig {
            timeout: std::time::Duration::from_secs(10),
            max_response_size: 1 << 20,
            stream_idle_timeout: std::time::Duration::from_secs(10),
            max_look_size: 1 << 20,
            max_card_size: crate::a2a::DEFAULT_MAX_CARD_SIZE,
        })
        .unwrap();
        let ep = Endpoint {
            url: url.clone(),
            tenant: Some("acme".to_owned()),
            binding: ProtocolBinding::HttpJsonV1,
            card_origin: url.clone(),
            credential: None,
            placement: crate::a2a::Placement::Bearer,
            allow_cross_origin: false,
        };
        let mut stream = client.subscribe(&ep, "t").await.unwrap();
        let first = stream.next().await.unwrap().unwrap();
        assert!(first.raw.get("task").is_some(), "{}", first.raw);
        assert!(stream.next().await.is_none());
        let seen = seen.lock().unwrap().clone();
        let path = "/rest/acme/tasks/t:subscribe".to_owned();
        let v = Some("1.0".to_owned());
        assert_eq!(
            seen,
            [
                ("POST".to_owned(), path.clone(), v.clone()),
                ("GET".to_owned(), path, v)
            ]
        );
        server.abort();
    }

    #[test]
    fn interfaces_spoken() {
        use super::super::ProtocolBinding;
        let speaks = |binding: &str, version: &str| {
            ProtocolBinding::of_interface(binding, version) == Some(ProtocolBinding::HttpJsonV1)
        };
        assert!(speaks("HTTP+JSON", "1.0"));
        assert!(speaks("http+json", "1.1"));
        assert!(!speaks("HTTP+JSON", "0.3"));
        assert!(!speaks("JSONRPC", "1.0"));
        assert!(!speaks("HTTP+JSON", ""));
    }
}
