//! The A2A v1.0 JSON-RPC binding: method names, the request envelope,
//! and reading answers, errors and stream events out of JSON-RPC responses.
//!
//! Every call is a `POST` of one JSON-RPC request to the interface URL with `Content-Type:
//! application/json`, `A2A-Version: 1.0`, `Accept` (`application/json`, or `text/event-stream`
//! for streams), `tenant` in `params` when the interface has one, and a fresh string id that
//! the answer must echo (an error may also carry `null`: the server could not read ours).

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode, Url};
use serde::Serialize;
use serde_json::{Value, json};

use super::binding::{Call, Raw, WireRequest, typed};
use super::error::{A2aError, DecodeKind, RpcError, truncate_chars};
use super::normalize;
use super::sse::SseEvent;
use super::transport::{self, A2A_VERSION, Op, decode_json};
use super::types;

/// Returns the JSON-RPC method of an operation.
pub(crate) fn method(call: &Call<'_>) -> &'static str {
    use types::methods;
    match call {
        Call::SendMessage(_) => methods::SEND_MESSAGE,
        Call::SendStreamingMessage(_) => methods::SEND_STREAMING_MESSAGE,
        Call::GetTask { .. } => methods::GET_TASK,
        Call::ListTasks(_) => methods::LIST_TASKS,
        Call::CancelTask { .. } => methods::CANCEL_TASK,
        Call::SubscribeToTask { .. } => methods::SUBSCRIBE_TO_TASK,
        Call::DeletePushConfig { .. } => methods::DELETE_PUSH_CONFIG,
    }
}

/// Builds the JSON-RPC `POST` of an operation, with a fresh id.
pub(crate) fn request(
    call: &Call<'_>,
    url: &Url,
    tenant: Option<&str>,
) -> Result<WireRequest, A2aError> {
    let (mut params, accept) = match *call {
        Call::SendMessage(req) => (to_params(req)?, "application/json"),
        Call::SendStreamingMessage(req) => (to_params(req)?, "text/event-stream"),
        Call::GetTask { id, history_length } => {
            // Every read of a pass sends one: serialized without a `Value` (docs/performance.md).
            let params = GetTaskParams {
                history_length,
                id,
                tenant: tenant.filter(|t| !t.is_empty()),
            };
            return post(
                method(call),
                &params,
                "application/json",
                url,
                Some(A2A_VERSION),
            );
        }
        Call::ListTasks(req) => (to_params(req)?, "application/json"),
        Call::CancelTask { id } => (json!({ "id": id }), "application/json"),
        Call::SubscribeToTask { id } => (json!({ "id": id }), "text/event-stream"),
        Call::DeletePushConfig { task_id, config_id } => (
            json!({ "taskId": task_id, "id": config_id }),
            "application/json",
        ),
    };
    if let (Some(tenant), Value::Object(p)) = (tenant, &mut params)
        && !tenant.is_empty()
    {
        p.insert("tenant".to_owned(), Value::from(tenant));
    }
    post(method(call), &params, accept, url, Some(A2A_VERSION))
}

/// Builds the `POST` of one JSON-RPC request with a fresh id, whatever the protocol version.
pub(crate) fn post(
    method: &'static str,
    params: &impl Serialize,
    accept: &'static str,
    url: &Url,
    version: Option<&'static str>,
) -> Result<WireRequest, A2aError> {
    let id = crate::sim_seam::new_uuid().to_string();
    let body = RpcRequest {
        id: &id,
        jsonrpc: "2.0",
        method,
        params,
    };
    let body = serde_json::to_vec(&body).map_err(|e| A2aError::Client {
        detail: format!("could not encode the request: {e}"),
    })?;
    Ok(WireRequest {
        method: Method::POST,
        url: url.clone(),
        body: Some(("application/json", body)),
        accept,
        version,
        echo: Some(id),
    })
}

/// A JSON-RPC request, serialized without building a `Value` for the envelope; the members
/// are in the order a `json!` object (sorted keys) gave them, so the bytes sent are the same.
#[derive(Serialize)]
struct RpcRequest<'a, P> {
    id: &'a str,
    jsonrpc: &'static str,
    method: &'static str,
    params: &'a P,
}

/// `GetTask`'s parameters, in the order a `Value` object (sorted keys) gave them, with
/// `historyLength` and `tenant` left out when absent, as `GetTaskRequest` leaves them: the
/// same bytes.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GetTaskParams<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    history_length: Option<i32>,
    id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tenant: Option<&'a str>,
}

/// Serializes request parameters.
pub(crate) fn to_params(req: &impl Serialize) -> Result<Value, A2aError> {
    serde_json::to_value(req).map_err(|e| A2aError::Client {
        detail: format!("could not encode the request: {e}"),
    })
}

/// Reads a unary answer body: its `result`, or its JSON-RPC error as `Err`.
pub(crate) fn result(op: &Op, echo: Option<&str>, body: &[u8]) -> Result<Value, A2aError> {
    envelope(op, echo.unwrap_or_default(), decode_json(op, body)?)
}

/// Decodes one SSE event's data: a JSON-RPC response whose `result` is a `StreamResponse`, or
/// a JSON-RPC error (in an `event: error` frame or a plain one).
pub(crate) fn stream_item(
    op: &Op,
    echo: Option<&str>,
    event: &SseEvent,
) -> Result<Raw<types::StreamResponse>, A2aError> {
    typed(
        op,
        stream_result(op, echo, event)?,
        normalize::stream_response,
    )
}

/// Reads one SSE event's JSON-RPC response: its `result`, or its error as `Err` (the v0.3
/// binding reads its events the same way, then converts the result).
pub(crate) fn stream_result(
    op: &Op,
    echo: Option<&str>,
    event: &SseEvent,
) -> Result<Value, A2aError> {
    let value = decode_json(op, event.data.as_bytes())?;
    if event.event.as_deref() == Some("error") && value.get("error").is_none() {
        return Err(op.decode(
            DecodeKind::WrongShape,
            format!(
                "an `error` event without a JSON-RPC error: {}",
                op.snippet(event.data.as_bytes())
            ),
        ));
    }
    envelope(op, echo.unwrap_or_default(), value)
}

/// Checks a JSON-RPC response envelope and returns its `result`, or its error as `Err`.
///
/// A success must echo our id; an error may also carry `null` (the server could not read it).
fn envelope(op: &Op, id: &str, value: Value) -> Result<Value, A2aError> {
    let Value::Object(mut obj) = value else {
        return Err(op.decode(DecodeKind::WrongShape, "the answer is not a JSON object"));
    };
    let answered = obj.remove("id").unwrap_or(Value::Null);
    let ours = answered.as_str() == Some(id);
    let wrong_id = || {
        op.decode(
            DecodeKind::WrongId,
            format!(
                "sent `{id}`, got {}",
                truncate_chars(&answered.to_string(), 80)
            ),
        )
    };
    match obj.remove("error") {
        Some(error) if !error.is_null() => {
            let Some(error) = parse_rpc_error(&error) else {
                return Err(op.decode(DecodeKind::WrongShape, "a malformed JSON-RPC error"));
            };
            if !ours && !answered.is_null() {
                return Err(wrong_id());
            }
            Err(A2aError::Rpc {
                url: op.url.clone(),
                method: op.method,
                error,
            })
        }
        _ if !ours => Err(wrong_id()),
        _ => obj.remove("result").ok_or_else(|| {
            op.decode(
                DecodeKind::WrongShape,
                "neither `result` nor `error` in the answer",
            )
        }),
    }
}

/// Reads a JSON-RPC error object: integer `code`, string `message`, any `data`.
fn parse_rpc_error(error: &Value) -> Option<RpcError> {
    let code = error.get("code")?.as_i64()?;
    let message = match error.get("message") {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => String::new(),
        Some(_) => return None,
    };
    Some(RpcError {
        code,
        message,
        data: error.get("data").filter(|d| !d.is_null()).cloned(),
    })
}

/// Builds the error for a non-success HTTP status, with a JSON-RPC error if the body has one.
pub(crate) fn http_error(
    op: &Op,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
) -> A2aError {
    let body = &*op.scrub(body);
    let rpc = serde_json::from_slice::<Value>(body)
        .ok()
        .map(|mut v| {
            op.scrub_value(&mut v);
            v
        })
        .and_then(|v| v.get("error").and_then(parse_rpc_error));
    transport::http_error(op, status, headers, body, rpc)
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Entry points for the fixture tests, which bypass HTTP.

    use std::time::Duration;

    use serde::de::DeserializeOwned;

    use super::super::binding::ListTasksPage;
    use super::super::sse::SseDecoder;
    use super::*;
    use crate::model::ProtocolBinding;

    /// Decodes a unary JSON-RPC answer body the way every call does.
    pub(crate) fn decode_answer<T: DeserializeOwned>(
        body: &[u8],
        id: &str,
        norm: fn(&mut Value),
    ) -> Result<Raw<T>, A2aError> {
        let op = Op::new("http://127.0.0.1/", "test");
        typed(&op, result(&op, Some(id), body)?, norm)
    }

    /// Decodes a whole SSE transcript into stream items, stopping at the first error.
    pub(crate) fn decode_transcript(
        transcript: &[u8],
        id: &str,
    ) -> Vec<Result<Raw<types::StreamResponse>, A2aError>> {
        let op = Op::new("http://127.0.0.1/", "test");
        let mut decoder = SseDecoder::new(1 << 20);
        decoder.feed(transcript);
        let mut out = Vec::new();
        while let Some(event) = decoder.next_event() {
            let item = match event {
                Ok(e) if e.data.trim().is_empty() => continue,
                Ok(e) => stream_item(&op, Some(id), &e),
                Err(e) => panic!("transcript does not decode: {e:?}"),
            };
            let stop = item.is_err();
            out.push(item);
            if stop {
                break;
            }
        }
        out
    }

    /// Decodes a unary `ListTasks` answer body the way `list_tasks` does.
    pub(crate) fn decode_list_page(body: &[u8], id: &str) -> Result<ListTasksPage, A2aError> {
        let op = Op::new("http://127.0.0.1/", "test");
        ProtocolBinding::JsonRpcV1.list_page(&op, result(&op, Some(id), body)?)
    }

    /// Parses a `Retry-After` value.
    pub(crate) fn retry_after(value: &str) -> Option<Duration> {
        transport::parse_retry_after(value)
    }
}
