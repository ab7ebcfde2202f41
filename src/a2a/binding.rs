//! The binding seam: which protocol binding an endpoint speaks, what each operation puts on
//! the wire, and how its answers become the one internal model ([`Raw`] `a2a-lf` v1.0 types).
//!
//! A binding is sans-I/O: it builds a [`WireRequest`] and decodes bytes; the transport, size
//! caps, credentials, card cache and retries are shared and know no binding. [`ProtocolBinding`] is an
//! enum of siblings, each a file (`jsonrpc.rs`, `httpjson.rs`, `jsonrpc03.rs`,
//! `httpjson03.rs`; gRPC, whose calls are not HTTP requests, sends its own in `grpc.rs` and
//! hands its answers here as protobuf JSON), not a trait: the set is closed and
//! small, the value is `Copy` and can be journaled with an attempt, a `match` dispatches with
//! no boxed futures (a2a's async I/O stays outside the binding), and a new variant is a compile
//! error at every place that must learn it. Each variant turns its answers into v1.0 JSON before
//! [`typed`] reads them (v1.0 HTTP+JSON carries the same payloads, and shares these readers;
//! v0.3 JSON-RPC payloads are converted by `v03.rs`, v0.3 HTTP+JSON's protobuf JSON by
//! `httpjson03.rs`).

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode, Url};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::{A2aError, DecodeKind};
use super::httpjson;
use super::httpjson03;
use super::jsonrpc;
use super::jsonrpc03;
use super::normalize;
use super::sse::SseEvent;
use super::transport::Op;
use super::types;
use crate::model::ProtocolBinding;
use crate::model::task_id_problem;

/// One operation and its parameters, whatever the binding.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Call<'a> {
    SendMessage(&'a types::SendMessageRequest),
    SendStreamingMessage(&'a types::SendMessageRequest),
    GetTask {
        id: &'a str,
        history_length: Option<i32>,
    },
    ListTasks(&'a types::ListTasksRequest),
    CancelTask {
        id: &'a str,
    },
    SubscribeToTask {
        id: &'a str,
    },
    /// `DeleteTaskPushNotificationConfig`: its answer carries nothing (`null`, `{}`, no body).
    DeletePushConfig {
        task_id: &'a str,
        config_id: &'a str,
    },
}

impl Call<'_> {
    /// The token of the push config a send carries, if any: answers are scrubbed of it.
    pub(crate) fn push_token(&self) -> Option<&str> {
        match self {
            Self::SendMessage(req) | Self::SendStreamingMessage(req) => req
                .configuration
                .as_ref()?
                .task_push_notification_config
                .as_ref()?
                .token
                .as_deref(),
            _ => None,
        }
    }
}

/// One HTTP request as a binding describes it; the transport adds the credential and sends it.
#[derive(Debug)]
pub(crate) struct WireRequest {
    pub(crate) method: Method,
    pub(crate) url: Url,
    /// `Content-Type` and body; `None` for a request without a body.
    pub(crate) body: Option<(&'static str, Vec<u8>)>,
    pub(crate) accept: &'static str,
    /// The `A2A-Version` header, if the binding sends one.
    pub(crate) version: Option<&'static str>,
    /// What the answer must echo (the JSON-RPC id); `None` where a binding has no such thing.
    pub(crate) echo: Option<String>,
}

impl ProtocolBinding {
    /// Returns the binding of a journaled card's interface at `interface_url` (as resolved
    /// against `card_url`), the most preferred one we speak if several share that URL; `None`
    /// when the card does not parse or offers no interface we speak there.
    pub fn of_card_interface(card_url: &str, card_json: &str, interface_url: &str) -> Option<Self> {
        let mut card: Value = serde_json::from_str(card_json).ok()?;
        normalize::agent_card(&mut card);
        let card: types::AgentCard = serde_json::from_value(card).ok()?;
        let base = Url::parse(card_url).ok()?;
        card.supported_interfaces
            .iter()
            .filter_map(|i| {
                let version = if i.protocol_version.trim().is_empty() {
                    "1.0"
                } else {
                    i.protocol_version.as_str()
                };
                let binding = Self::of_interface(&i.protocol_binding, version)?;
                super::card::resolve_interface(&base, &i.url, binding)
                    .is_ok_and(|u| u.as_str() == interface_url)
                    .then_some(binding)
            })
            .min_by_key(|b| b.preference())
    }

    /// Returns the operation's name for errors and logs (the method the binding sends).
    pub(crate) fn method(self, call: &Call<'_>) -> &'static str {
        match self {
            Self::JsonRpcV1 => jsonrpc::method(call),
            Self::HttpJsonV1 | Self::GrpcV1 => httpjson::method(call),
            Self::JsonRpcV03 => jsonrpc03::method(call),
            Self::HttpJsonV03 | Self::GrpcV03 => httpjson03::method(call),
        }
    }

    /// Describes the request of one operation on an interface.
    pub(crate) fn request(
        self,
        call: &Call<'_>,
        url: &Url,
        tenant: Option<&str>,
    ) -> Result<WireRequest, A2aError> {
        match self {
            Self::JsonRpcV1 => jsonrpc::request(call, url, tenant),
            Self::HttpJsonV1 => httpjson::request(call, url, tenant),
            Self::JsonRpcV03 => jsonrpc03::request(call, url),
            Self::HttpJsonV03 => httpjson03::request(call, url),
            Self::GrpcV1 | Self::GrpcV03 => Err(A2aError::Client {
                detail: "a gRPC call is not an HTTP request".to_owned(),
            }),
        }
    }

    /// Describes the request to send once more when the first was answered 405 (HTTP+JSON
    /// `SubscribeToTask`: `GET` after `POST`); `None` when there is no such second try.
    pub(crate) fn fallback(
        self,
        call: &Call<'_>,
        url: &Url,
        tenant: Option<&str>,
    ) -> Result<Option<WireRequest>, A2aError> {
        match self {
            Self::JsonRpcV1
            | Self::JsonRpcV03
            | Self::HttpJsonV03
            | Self::GrpcV1
            | Self::GrpcV03 => Ok(None),
            Self::HttpJsonV1 => httpjson::fallback(call, url, tenant),
        }
    }

    /// Reads a unary success body into the operation's result, or the error it carries; an
    /// answer that carries nothing over HTTP+JSON (a delete: `{}` or no body) is `null` unread.
    pub(crate) fn unary_result(
        self,
        call: &Call<'_>,
        op: &Op,
        echo: Option<&str>,
        body: &[u8],
    ) -> Result<Value, A2aError> {
        match (self, call) {
            (Self::HttpJsonV1 | Self::HttpJsonV03, Call::DeletePushConfig { .. }) => {
                Ok(Value::Null)
            }
            _ => self.result(op, echo, body),
        }
    }

    /// Reads a success body into the operation's result, or the error it carries.
    pub(crate) fn result(
        self,
        op: &Op,
        echo: Option<&str>,
        body: &[u8],
    ) -> Result<Value, A2aError> {
        match self {
            Self::JsonRpcV1 | Self::JsonRpcV03 => jsonrpc::result(op, echo, body),
            Self::HttpJsonV1 | Self::HttpJsonV03 | Self::GrpcV1 | Self::GrpcV03 => {
                httpjson::result(op, body)
            }
        }
    }

    /// Builds the error for a non-success HTTP status, with the structured error in its body.
    pub(crate) fn http_error(
        self,
        op: &Op,
        status: StatusCode,
        headers: &HeaderMap,
        body: &[u8],
    ) -> A2aError {
        match self {
            Self::JsonRpcV1 | Self::JsonRpcV03 => jsonrpc::http_error(op, status, headers, body),
            Self::HttpJsonV1 | Self::GrpcV1 => httpjson::http_error(op, status, headers, body),
            Self::HttpJsonV03 | Self::GrpcV03 => httpjson03::http_error(op, status, headers, body),
        }
    }

    /// Decodes one stream event into a stream item.
    pub(crate) fn stream_item(
        self,
        op: &Op,
        echo: Option<&str>,
        event: &SseEvent,
    ) -> Result<Raw<types::StreamResponse>, A2aError> {
        match self {
            Self::JsonRpcV1 => jsonrpc::stream_item(op, echo, event),
            Self::HttpJsonV1 | Self::GrpcV1 => httpjson::stream_item(op, event),
            Self::JsonRpcV03 => jsonrpc03::stream_item(op, echo, event),
            Self::HttpJsonV03 | Self::GrpcV03 => httpjson03::stream_item(op, event),
        }
    }

    /// Reads a `SendMessage` result.
    pub(crate) fn send_message_response(
        self,
        op: &Op,
        result: Value,
    ) -> Result<Raw<types::SendMessageResponse>, A2aError> {
        let answer = match self {
            Self::JsonRpcV1 | Self::HttpJsonV1 | Self::GrpcV1 => {
                typed(op, result, normalize::send_message_response)
            }
            Self::JsonRpcV03 => jsonrpc03::send_message_response(op, result),
            Self::HttpJsonV03 | Self::GrpcV03 => httpjson03::send_message_response(op, result),
        }?;
        if let types::SendMessageResponse::Task(task) = &answer.value {
            addressable(op, &task.id)?;
        }
        Ok(answer)
    }

    /// Reads a `GetTask` or `CancelTask` result.
    pub(crate) fn task(self, op: &Op, result: Value) -> Result<Raw<types::Task>, A2aError> {
        let task: Raw<types::Task> = match self {
            Self::JsonRpcV1 | Self::HttpJsonV1 | Self::GrpcV1 => typed(op, result, normalize::task),
            Self::JsonRpcV03 => jsonrpc03::task(op, result),
            Self::HttpJsonV03 | Self::GrpcV03 => httpjson03::task(op, result),
        }?;
        addressable(op, &task.value.id)?;
        Ok(task)
    }

    /// Reads a `ListTasks` result.
    pub(crate) fn list_page(self, op: &Op, result: Value) -> Result<ListTasksPage, A2aError> {
        match self {
            Self::JsonRpcV1 | Self::HttpJsonV1 | Self::GrpcV1 => v1_list_page(op, result),
            Self::JsonRpcV03 | Self::HttpJsonV03 | Self::GrpcV03 => Err(op.decode(
                DecodeKind::WrongShape,
                "an A2A v0.3 agent has no tasks/list",
            )),
        }
    }

    /// Reads a stream result given as one plain JSON answer in place of a stream.
    pub(crate) fn stream_response(
        self,
        op: &Op,
        result: Value,
    ) -> Result<Raw<types::StreamResponse>, A2aError> {
        match self {
            Self::JsonRpcV1 | Self::HttpJsonV1 | Self::GrpcV1 => {
                typed(op, result, normalize::stream_response)
            }
            Self::JsonRpcV03 => jsonrpc03::stream_response(op, result),
            Self::HttpJsonV03 | Self::GrpcV03 => httpjson03::stream_response(op, result),
        }
    }
}

/// A typed value and the JSON it was read from, as received (the journal stores `raw`).
#[derive(Debug, Clone)]
pub struct Raw<T> {
    /// The normalized, typed value.
    pub value: T,
    /// The JSON as received, before normalization.
    pub raw: Value,
}

/// One page of `ListTasks`; tasks are parsed one by one, so one bad task costs one entry.
#[derive(Debug)]
pub struct ListTasksPage {
    /// The tasks, each parsed on its own.
    pub tasks: Vec<Result<Raw<types::Task>, A2aError>>,
    /// The cursor of the next page; empty on the last page.
    pub next_page_token: String,
    /// The page size the server used.
    pub page_size: i32,
    /// The number of matching tasks before pagination.
    pub total_size: i32,
    /// The size of the answer's body, in bytes (a look bounds the bytes it reads).
    pub body_bytes: u64,
}

/// Normalizes a copy of `raw` and types it, keeping `raw` as received.
pub(crate) fn typed<T: DeserializeOwned>(
    op: &Op,
    raw: Value,
    norm: fn(&mut Value),
) -> Result<Raw<T>, A2aError> {
    let mut value = raw.clone();
    norm(&mut value);
    if normalize::take_naive_seen() {
        normalize::note_naive_timestamps(&op.url);
    }
    let value = normalize::typed_value(&value).map_err(|e| op.decode(DecodeKind::WrongShape, e))?;
    Ok(Raw { value, raw })
}

/// Refuses a task id that no URL path segment can hold ([`task_id_problem`]), on every
/// binding alike: such an answer is a bad answer ([`DecodeKind::TaskId`]), never a task to
/// journal, since every later read, cancel or subscribe of it would go to another resource (or,
/// over JSON-RPC, to one an HTTP+JSON interface of the same agent could never reach).
pub(crate) fn addressable(op: &Op, id: &str) -> Result<(), A2aError> {
    match task_id_problem(id) {
        Some(why) => Err(op.decode(
            DecodeKind::TaskId,
            format!(
                "task id `{}` cannot name a task in a URL: {why}",
                super::error::truncate_chars(id, 80)
            ),
        )),
        None => Ok(()),
    }
}

/// Reads a v1.0 `ListTasksResponse`; each task is typed on its own.
fn v1_list_page(op: &Op, mut result: Value) -> Result<ListTasksPage, A2aError> {
    if !result.is_object() {
        return Err(op.decode(DecodeKind::WrongShape, "the result is not an object"));
    }
    normalize::list_tasks_response(&mut result);
    let Some(Value::Array(tasks)) = result.get_mut("tasks").map(Value::take) else {
        return Err(op.decode(DecodeKind::WrongShape, "`tasks` is not an array"));
    };
    let Some(Value::String(next_page_token)) = result.get_mut("nextPageToken").map(Value::take)
    else {
        return Err(op.decode(DecodeKind::WrongShape, "`nextPageToken` is not a string"));
    };
    let int = |key: &str| {
        result
            .get(key)
            .and_then(Value::as_i64)
            .and_then(|n| i32::try_from(n).ok())
            .ok_or_else(|| op.decode(DecodeKind::WrongShape, format!("`{key}` is not an int32")))
    };
    let page_size = int("pageSize")?;
    let total_size = int("totalSize")?;
    let tasks = tasks
        .into_iter()
        .enumerate()
        .map(|(i, raw)| {
            typed(op, raw, normalize::task)
                .and_then(|t: Raw<types::Task>| addressable(op, &t.value.id).map(|()| t))
                .map_err(|e| match e {
                    A2aError::Decode {
                        url,
                        method,
                        kind,
                        detail,
                    } => A2aError::Decode {
                        url,
                        method,
                        kind,
                        detail: format!("task {i} of the page: {detail}"),
                    },
                    other => other,
                })
        })
        .collect();
    Ok(ListTasksPage {
        tasks,
        next_page_token,
        page_size,
        total_size,
        body_bytes: 0,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_binding_refuses_an_answer_whose_task_id_no_url_can_hold() {
        let op = Op::new("http://127.0.0.1/", "SendMessage");
        let v1 = |id: &str| json!({"id": id, "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}});
        let v03_rpc = |id: &str| json!({"kind": "task", "id": id, "contextId": "c", "status": {"state": "working"}});
        for id in ["..", ".", "a\tb"] {
            let answers = [
                (ProtocolBinding::JsonRpcV1, json!({"task": v1(id)}), v1(id)),
                (ProtocolBinding::HttpJsonV1, json!({"task": v1(id)}), v1(id)),
                (ProtocolBinding::JsonRpcV03, v03_rpc(id), v03_rpc(id)),
                (
                    ProtocolBinding::HttpJsonV03,
                    json!({"task": v1(id)}),
                    v1(id),
                ),
            ];
            for (binding, sent, read) in answers {
                let e = binding.send_message_response(&op, sent).unwrap_err();
                assert!(e.is_bad_task_id(), "{binding:?} {id:?}: {e}");
                let e = binding.task(&op, read).unwrap_err();
                assert!(e.is_bad_task_id(), "{binding:?} {id:?}: {e}");
            }
            let page = json!({"tasks": [v1(id), v1("t-2")], "nextPageToken": "",
                              "pageSize": 2, "totalSize": 2});
            let page = ProtocolBinding::HttpJsonV1.list_page(&op, page).unwrap();
            assert!(page.tasks[0].as_ref().is_err_and(A2aError::is_bad_task_id));
            assert!(page.tasks[1].is_ok(), "one bad task costs one entry");
        }
        let fine =
            ProtocolBinding::HttpJsonV1.send_message_response(&op, json!({"task": v1("t-1")}));
        assert!(fine.is_ok());
    }

    #[test]
    fn every_binding_names_the_config_to_delete() {
        let call = Call::DeletePushConfig {
            task_id: "t-1",
            config_id: "c-1",
        };
        let url = Url::parse("http://a.example/rest").unwrap();
        let body = |w: &WireRequest| -> Value {
            serde_json::from_slice(&w.body.as_ref().unwrap().1).unwrap()
        };
        let w = ProtocolBinding::JsonRpcV1
            .request(&call, &url, None)
            .unwrap();
        assert_eq!(body(&w)["method"], "DeleteTaskPushNotificationConfig");
        assert_eq!(body(&w)["params"], json!({"taskId": "t-1", "id": "c-1"}));
        let w = ProtocolBinding::JsonRpcV03
            .request(&call, &url, None)
            .unwrap();
        assert_eq!(body(&w)["method"], "tasks/pushNotificationConfig/delete");
        assert_eq!(
            body(&w)["params"],
            json!({"id": "t-1", "pushNotificationConfigId": "c-1"})
        );
        for (binding, tenant, want) in [
            (
                ProtocolBinding::HttpJsonV1,
                None,
                "http://a.example/rest/tasks/t-1/pushNotificationConfigs/c-1",
            ),
            (
                ProtocolBinding::HttpJsonV1,
                Some("ten"),
                "http://a.example/rest/ten/tasks/t-1/pushNotificationConfigs/c-1",
            ),
            (
                ProtocolBinding::HttpJsonV03,
                None,
                "http://a.example/rest/v1/tasks/t-1/pushNotificationConfigs/c-1",
            ),
        ] {
            let w = binding.request(&call, &url, tenant).unwrap();
            assert_eq!(w.method, Method::DELETE);
            assert_eq!(w.url.as_str(), want);
            assert!(w.body.is_none());
        }
        let op = Op::new("http://a.example/rest", "DeleteTaskPushNotificationConfig");
        for binding in [ProtocolBinding::HttpJsonV1, ProtocolBinding::HttpJsonV03] {
            for answer in [&b""[..], b"{}"] {
                let read = binding.unary_result(&call, &op, None, answer).unwrap();
                assert_eq!(read, Value::Null);
            }
        }
        let odd = Call::DeletePushConfig {
            task_id: "..",
            config_id: "c-1",
        };
        let refused = ProtocolBinding::HttpJsonV1.request(&odd, &url, None);
        assert!(refused.is_err_and(|e| e.is_bad_task_id()));
    }
}
