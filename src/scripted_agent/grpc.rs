//! The gRPC endpoint (A2A v1.0, `lf.a2a.v1.A2AService`): the tonic server generated from the
//! specification's `a2a.proto` (`build.rs`), served beside the HTTP routes on the same port
//! (HTTP/2 without TLS, as gRPC clients speak to a plaintext `host:port`), on the task logic
//! the JSON-RPC and HTTP+JSON endpoints run.
//!
//! Each request message is written as its protobuf JSON (the JSON the HTTP+JSON binding
//! carries) and handed to the same handlers; each answer is read back into its message. Calls
//! without `a2a-version: 1.0` metadata are refused as the HTTP bindings refuse a missing
//! `A2A-Version` (`@a2a-js/sdk` does the same over gRPC); a required token or header API key is
//! read from the metadata (`UNAUTHENTICATED` without it). An A2A error becomes the gRPC status
//! the specification's table gives it (`UNIMPLEMENTED` for push, unsupported operations and
//! versions, where `a2a-sdk` 1.3.0 answers `FAILED_PRECONDITION`; clients read the reason) with
//! a `google.rpc.Status` in the details: the `ErrorInfo` first (reason,
//! domain, metadata as strings), then a `BadRequest` for invalid params, as `a2a-sdk` sends.
//! A stream cut with [`DropMode::Reset`](super::DropMode::Reset) ends with `UNAVAILABLE`; a
//! scripted 503 is `UNAVAILABLE` too. The load switches (delay, black hole, rate limit) are the
//! JSON-RPC endpoint's only.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;

use axum::http::{HeaderMap, Uri};
use futures_util::{Stream, StreamExt as _};
use prost::Message as _;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tonic::{Code, Request, Response, Status};

use super::Shared;
use super::rpc::{self, RpcError, Sent};
use super::sse::{self, Start};
use crate::a2a::grpc_pb::{rpc as pb_rpc, v1};

/// The gRPC path prefix of the v1.0 service, routed to [`service`].
pub(crate) const V1_PATH: &str = "/lf.a2a.v1.A2AService/{*method}";

/// A server stream of `StreamResponse`s.
type Events = Pin<Box<dyn Stream<Item = Result<v1::StreamResponse, Status>> + Send>>;

/// The v1.0 service over the agent's state, ready to be routed.
pub(crate) fn service(shared: Arc<Shared>) -> v1::a2a_service_server::A2aServiceServer<Grpc> {
    v1::a2a_service_server::A2aServiceServer::new(Grpc { shared })
        .max_decoding_message_size(super::MAX_BODY)
}

/// The v1.0 gRPC service of one scripted agent.
pub(crate) struct Grpc {
    shared: Arc<Shared>,
}

impl Grpc {
    /// Counts the call, then checks its credential and `a2a-version`; returns the request's
    /// message as protobuf JSON.
    fn admit<T: Serialize>(&self, method: &str, req: &Request<T>) -> Result<Value, Status> {
        let headers: HeaderMap = req.metadata().clone().into_headers();
        let uri = Uri::from_static("/");
        if !super::authorized(&self.shared.cfg, &headers, &uri) {
            return Err(Status::unauthenticated("unauthorized"));
        }
        self.shared.methods.count(method);
        if let Err(version) = rpc::check_version(&headers, &uri) {
            return Err(status(&RpcError::version(&version)));
        }
        serde_json::to_value(req.get_ref())
            .map_err(|e| Status::invalid_argument(format!("cannot read the request: {e}")))
    }

    /// A stream's events as messages.
    fn events(&self, start: Start) -> Events {
        Box::pin(sse::events(&self.shared, start).map(|event| match event {
            Ok(json) => message(&json),
            Err(_) => Err(Status::unavailable("scripted stream reset")),
        }))
    }

    /// Sends a message (streaming or not) on the shared task logic.
    async fn send(&self, params: Value, streaming: bool) -> Result<Answer, Status> {
        match rpc::send_core(&self.shared, params, streaming).await {
            Ok(Sent::Unavailable) => {
                Err(Status::unavailable("scripted failure: service unavailable"))
            }
            Ok(Sent::Ready(member, json)) => {
                let mut body = format!("{{\"{member}\":").into_bytes();
                body.extend_from_slice(&json);
                body.push(b'}');
                Ok(Answer::One(body))
            }
            Ok(Sent::Stream(start)) => Ok(Answer::Stream(self.events(start))),
            Err(e) => Err(status(&e)),
        }
    }
}

/// What a send comes to over gRPC.
enum Answer {
    /// `{"task":…}` or `{"message":…}`: a `SendMessageResponse`, or a stream's one event.
    One(Vec<u8>),
    /// A stream's events.
    Stream(Events),
}

/// Reads an answer's JSON into its message.
fn message<T: DeserializeOwned>(json: &[u8]) -> Result<T, Status> {
    serde_json::from_slice(json)
        .map_err(|e| Status::internal(format!("cannot write the answer as protobuf: {e}")))
}

/// Turns an A2A error into its gRPC status, with the `google.rpc.Status` details.
fn status(e: &RpcError) -> Status {
    let (_, _, reason) = e.rest_status();
    // The specification's table (§5.4); an unknown method is NOT_FOUND, as a2a-sdk answers it.
    let code = match e.code {
        -32001 | -32601 => Code::NotFound,
        -32002 | -32007 | -32008 => Code::FailedPrecondition,
        -32003 | -32004 | -32009 => Code::Unimplemented,
        -32005 | -32600 | -32602 | -32700 => Code::InvalidArgument,
        _ => Code::Internal,
    };
    let metadata: HashMap<String, String> = e
        .metadata
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            (
                k.clone(),
                v.as_str().map_or_else(|| v.to_string(), str::to_owned),
            )
        })
        .collect();
    let info = pb_rpc::ErrorInfo {
        reason: reason.to_owned(),
        domain: rpc::DOMAIN.to_owned(),
        metadata,
    };
    let mut details = vec![any("google.rpc.ErrorInfo", info.encode_to_vec())];
    if !e.violations.is_empty() {
        let bad = pb_rpc::BadRequest {
            field_violations: e
                .violations
                .iter()
                .map(|(field, description)| pb_rpc::bad_request::FieldViolation {
                    field: field.clone(),
                    description: description.clone(),
                    ..Default::default()
                })
                .collect(),
        };
        details.push(any("google.rpc.BadRequest", bad.encode_to_vec()));
    }
    let body = pb_rpc::Status {
        code: code as i32,
        message: e.message.clone(),
        details,
    };
    Status::with_details(code, e.message.clone(), body.encode_to_vec().into())
}

fn any(type_name: &str, value: Vec<u8>) -> pbjson_types::Any {
    pbjson_types::Any {
        type_url: format!("type.googleapis.com/{type_name}"),
        value: value.into(),
    }
}

fn push_not_supported() -> Status {
    status(&RpcError::a2a(
        -32003,
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
        "Push notifications are not supported",
    ))
}

#[tonic::async_trait]
impl v1::a2a_service_server::A2aService for Grpc {
    async fn send_message(
        &self,
        request: Request<v1::SendMessageRequest>,
    ) -> Result<Response<v1::SendMessageResponse>, Status> {
        let params = self.admit("SendMessage", &request)?;
        match self.send(params, false).await? {
            Answer::One(body) => message(&body).map(Response::new),
            Answer::Stream(_) => Err(Status::internal("a send answered with a stream")),
        }
    }

    type SendStreamingMessageStream = Events;

    async fn send_streaming_message(
        &self,
        request: Request<v1::SendMessageRequest>,
    ) -> Result<Response<Events>, Status> {
        let params = self.admit("SendStreamingMessage", &request)?;
        match self.send(params, true).await? {
            Answer::Stream(events) => Ok(Response::new(events)),
            Answer::One(body) => {
                let event: v1::StreamResponse = message(&body)?;
                Ok(Response::new(Box::pin(futures_util::stream::iter([Ok(
                    event,
                )]))))
            }
        }
    }

    async fn get_task(
        &self,
        request: Request<v1::GetTaskRequest>,
    ) -> Result<Response<v1::Task>, Status> {
        let params = self.admit("GetTask", &request)?;
        let json = rpc::get_task(&self.shared, &params).map_err(|e| status(&e))?;
        message(&json).map(Response::new)
    }

    async fn list_tasks(
        &self,
        request: Request<v1::ListTasksRequest>,
    ) -> Result<Response<v1::ListTasksResponse>, Status> {
        let params = self.admit("ListTasks", &request)?;
        let json = rpc::list_tasks(&self.shared, params).map_err(|e| status(&e))?;
        message(&json).map(Response::new)
    }

    async fn cancel_task(
        &self,
        request: Request<v1::CancelTaskRequest>,
    ) -> Result<Response<v1::Task>, Status> {
        let params = self.admit("CancelTask", &request)?;
        let json = rpc::cancel_task(&self.shared, &params).map_err(|e| status(&e))?;
        message(&json).map(Response::new)
    }

    type SubscribeToTaskStream = Events;

    async fn subscribe_to_task(
        &self,
        request: Request<v1::SubscribeToTaskRequest>,
    ) -> Result<Response<Events>, Status> {
        let params = self.admit("SubscribeToTask", &request)?;
        let start = rpc::subscribe(&self.shared, &params).map_err(|e| status(&e))?;
        Ok(Response::new(self.events(start)))
    }

    async fn create_task_push_notification_config(
        &self,
        request: Request<v1::TaskPushNotificationConfig>,
    ) -> Result<Response<v1::TaskPushNotificationConfig>, Status> {
        self.admit("CreateTaskPushNotificationConfig", &request)?;
        Err(push_not_supported())
    }

    async fn get_task_push_notification_config(
        &self,
        request: Request<v1::GetTaskPushNotificationConfigRequest>,
    ) -> Result<Response<v1::TaskPushNotificationConfig>, Status> {
        self.admit("GetTaskPushNotificationConfig", &request)?;
        Err(push_not_supported())
    }

    async fn list_task_push_notification_configs(
        &self,
        request: Request<v1::ListTaskPushNotificationConfigsRequest>,
    ) -> Result<Response<v1::ListTaskPushNotificationConfigsResponse>, Status> {
        self.admit("ListTaskPushNotificationConfigs", &request)?;
        Err(push_not_supported())
    }

    async fn get_extended_agent_card(
        &self,
        request: Request<v1::GetExtendedAgentCardRequest>,
    ) -> Result<Response<v1::AgentCard>, Status> {
        self.admit("GetExtendedAgentCard", &request)?;
        Err(status(&RpcError::a2a(
            -32004,
            "UNSUPPORTED_OPERATION",
            "The extended agent card is not supported",
        )))
    }

    async fn delete_task_push_notification_config(
        &self,
        request: Request<v1::DeleteTaskPushNotificationConfigRequest>,
    ) -> Result<Response<pbjson_types::Empty>, Status> {
        self.admit("DeleteTaskPushNotificationConfig", &request)?;
        Err(push_not_supported())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_a2a_error_carries_its_reason_and_field_violations() {
        let e = RpcError::invalid_params("message.parts", "at least one part is required")
            .with_metadata(json!({"taskId": "t-1", "n": 2}));
        let s = status(&e);
        assert_eq!(s.code(), Code::InvalidArgument);
        let body = pb_rpc::Status::decode(s.details()).unwrap();
        assert_eq!(body.details.len(), 2);
        let info = pb_rpc::ErrorInfo::decode(body.details[0].value.as_ref()).unwrap();
        assert_eq!(info.reason, "INVALID_PARAMS");
        assert_eq!(info.metadata["taskId"], "t-1");
        assert_eq!(info.metadata["n"], "2");
        assert!(body.details[1].type_url.ends_with("google.rpc.BadRequest"));

        let gone = status(&RpcError::a2a(-32001, "TASK_NOT_FOUND", "Task not found"));
        assert_eq!(gone.code(), Code::NotFound);
        assert_eq!(
            status(&RpcError::version("0.3")).code(),
            Code::Unimplemented
        );
        let missing = status(&RpcError::plain(-32601, "Method not found"));
        assert_eq!(missing.code(), Code::NotFound);
        let body = pb_rpc::Status::decode(missing.details()).unwrap();
        let info = pb_rpc::ErrorInfo::decode(body.details[0].value.as_ref()).unwrap();
        assert_eq!(info.reason, "METHOD_NOT_FOUND");
    }
}
