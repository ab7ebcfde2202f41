//! The gRPC binding, v1.0 (`lf.a2a.v1.A2AService`) and v0.3 (`a2a.v1.A2AService`): the calls
//! over tonic clients generated from the official protos (`grpc_pb.rs`), and their answers
//! turned into the protobuf JSON the HTTP+JSON bindings read, so that one set of readers
//! (`binding.rs`, `httpjson03.rs`) types every binding's answers.
//!
//! The connection is hyper's HTTP/2 client (the hyper stack reqwest brings), TLS by rustls with
//! the built-in Mozilla roots; an interface URL is `http://` or `https://` by then (a card's bare
//! `host:port` is resolved in `card.rs`). Every v1.0 call carries `a2a-version: 1.0` metadata;
//! the tenant goes in the request message; the credential goes as metadata, placed as the card
//! asks (a query placement cannot be carried: the call is refused before anything is sent).
//! Deadlines and sizes are the other bindings' flags: a unary call is bounded by `timeout`
//! (also sent as `grpc-timeout`), each received message by `max_response_size`, and a stream by
//! the idle timeout between its messages.
//!
//! Errors: a `google.rpc.Status` is read by its `ErrorInfo` reason (v1.0: the SDKs answer both
//! an unknown task and an unknown method with `NOT_FOUND`, told apart by the reason), or, for
//! v0.3, by the error class the message starts with (`TaskNotFoundError: …`). It becomes an
//! [`A2aError::Http`] with the HTTP status the gRPC code maps to (`NOT_FOUND` → 404, …) and the
//! A2A error the reason names (its JSON-RPC code is the error's code in records), so recovery
//! decides as it does over HTTP+JSON: a `NOT_FOUND` naming no A2A error is `unattributed`
//! (never proof that a task is gone).

use std::error::Error as _;

use http::Uri;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tonic::metadata::{AsciiMetadataValue, MetadataKey, MetadataMap};
use tonic::{Code, Status};

use super::binding::Call;
use super::credentials::Placed;
use super::error::{A2aError, DecodeKind, RpcError, one_line, truncate_chars};
use super::grpc_pb::{rpc, v1, v03};
use super::httpjson03;
use super::transport::{A2A_VERSION, ClientConfig, Op, Target};
use super::{ErrorKind, httpjson};
use crate::model::{ProtocolBinding, ProtocolVersion};

/// The HTTP/2 client every gRPC call shares.
type Channel = HyperClient<
    hyper_rustls::HttpsConnector<HttpConnector<super::resolve::Resolver>>,
    tonic::body::Body,
>;

/// The `ErrorInfo` type URL suffix.
const ERROR_INFO: &str = "google.rpc.ErrorInfo";
/// How many characters of a status message an error shows.
const MESSAGE_CHARS: usize = 160;

/// The gRPC side of one client: its HTTP/2 connection pool and limits.
#[derive(Debug)]
pub(crate) struct Grpc {
    channel: Channel,
    cfg: ClientConfig,
}

/// A server stream of either protocol version, and the size cap of its messages.
pub(crate) struct GrpcStream {
    messages: Messages,
    limit: u64,
    /// A v1.0 stream's first message, read when it opened (`None` once read).
    first: Option<Value>,
    /// Whether the stream ended (cleanly) when it opened.
    ended: bool,
}

enum Messages {
    V1(tonic::codec::Streaming<v1::StreamResponse>),
    V03(tonic::codec::Streaming<v03::StreamResponse>),
}

impl GrpcStream {
    /// Returns the next message as protobuf JSON; `None` at the stream's clean end.
    pub(crate) async fn message(&mut self, op: &Op) -> Result<Option<Value>, A2aError> {
        if let Some(first) = self.first.take() {
            return Ok(Some(first));
        }
        if self.ended {
            return Ok(None);
        }
        let limit = self.limit;
        match &mut self.messages {
            Messages::V1(s) => next_json(op, ProtocolBinding::GrpcV1, limit, s.message().await),
            Messages::V03(s) => next_json(op, ProtocolBinding::GrpcV03, limit, s.message().await),
        }
    }
}

fn next_json<T: Serialize>(
    op: &Op,
    binding: ProtocolBinding,
    limit: u64,
    next: Result<Option<T>, Status>,
) -> Result<Option<Value>, A2aError> {
    match next {
        Ok(Some(message)) => json_of(op, &message).map(Some),
        Ok(None) => Ok(None),
        Err(status) => Err(status_error(op, binding, limit, &status)),
    }
}

impl Grpc {
    /// Builds the HTTP/2 client: plaintext for `http://`, rustls for `https://`.
    pub(crate) fn new(cfg: ClientConfig) -> Result<Self, A2aError> {
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| A2aError::Client {
                detail: format!("cannot set up TLS for gRPC: {e}"),
            })?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let mut http = HttpConnector::new_with_resolver(super::resolve::Resolver);
        http.enforce_http(false);
        http.set_connect_timeout(Some(cfg.timeout));
        http.set_nodelay(true);
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http2()
            .wrap_connector(http);
        let channel = HyperClient::builder(TokioExecutor::new())
            .http2_only(true)
            .build(connector);
        Ok(Self { channel, cfg })
    }

    /// Sends one unary call and returns its answer as protobuf JSON.
    pub(crate) async fn unary(
        &self,
        binding: ProtocolBinding,
        call: &Call<'_>,
        target: &Target,
        tenant: Option<&str>,
        credential: Option<Placed<'_>>,
        op: &Op,
    ) -> Result<Value, A2aError> {
        httpjson::refuse_unaddressable(call, &target.url)?;
        let meta = metadata(binding, credential, op)?;
        let timeout = self.cfg.timeout;
        let exchange = async {
            match binding.version() {
                ProtocolVersion::V1_0 => self.v1_unary(call, target, tenant, meta, op).await,
                ProtocolVersion::V0_3 => self.v03_unary(call, target, meta, op).await,
            }
        };
        tokio::time::timeout(timeout, exchange)
            .await
            .unwrap_or_else(|_| Err(op.timeout(timeout)))
    }

    /// Opens a server stream (`SendStreamingMessage`, `SubscribeToTask`) and waits for its
    /// headers (`stream_idle_timeout`, at least `timeout`).
    pub(crate) async fn open(
        &self,
        binding: ProtocolBinding,
        call: &Call<'_>,
        target: &Target,
        tenant: Option<&str>,
        credential: Option<Placed<'_>>,
        op: &Op,
    ) -> Result<GrpcStream, A2aError> {
        httpjson::refuse_unaddressable(call, &target.url)?;
        let meta = metadata(binding, credential, op)?;
        let wait = self.cfg.stream_idle_timeout.max(self.cfg.timeout);
        let opening = async {
            match binding.version() {
                ProtocolVersion::V1_0 => self.v1_open(call, target, tenant, meta, op).await,
                ProtocolVersion::V0_3 => self.v03_open(call, target, meta, op).await,
            }
        };
        tokio::time::timeout(wait, opening)
            .await
            .unwrap_or_else(|_| Err(op.timeout(wait)))
    }

    /// The most bytes one message may have.
    fn limit(&self) -> usize {
        usize::try_from(self.cfg.max_response_size).unwrap_or(usize::MAX)
    }

    fn v1_client(
        &self,
        target: &Target,
    ) -> Result<v1::a2a_service_client::A2aServiceClient<Channel>, A2aError> {
        Ok(v1::a2a_service_client::A2aServiceClient::with_origin(
            self.channel.clone(),
            origin(target)?,
        )
        .max_decoding_message_size(self.limit()))
    }

    fn v03_client(
        &self,
        target: &Target,
    ) -> Result<v03::a2a_service_client::A2aServiceClient<Channel>, A2aError> {
        Ok(v03::a2a_service_client::A2aServiceClient::with_origin(
            self.channel.clone(),
            origin(target)?,
        )
        .max_decoding_message_size(self.limit()))
    }

    /// Wraps a request message with its metadata and deadline.
    fn request<T>(&self, message: T, meta: MetadataMap) -> tonic::Request<T> {
        let mut req = tonic::Request::from_parts(meta, tonic::Extensions::default(), message);
        req.set_timeout(self.cfg.timeout);
        req
    }

    async fn v1_unary(
        &self,
        call: &Call<'_>,
        target: &Target,
        tenant: Option<&str>,
        meta: MetadataMap,
        op: &Op,
    ) -> Result<Value, A2aError> {
        let mut client = self.v1_client(target)?;
        let binding = ProtocolBinding::GrpcV1;
        match *call {
            Call::SendMessage(req) => {
                let msg = self.request(message_of(op, v1_params(op, req, tenant)?)?, meta);
                answer(
                    op,
                    binding,
                    self.cfg.max_response_size,
                    client.send_message(msg).await,
                )
            }
            Call::GetTask { id, history_length } => {
                let params =
                    with_tenant(json!({"id": id, "historyLength": history_length}), tenant);
                let msg = self.request(message_of::<v1::GetTaskRequest>(op, params)?, meta);
                answer(
                    op,
                    binding,
                    self.cfg.max_response_size,
                    client.get_task(msg).await,
                )
            }
            Call::ListTasks(req) => {
                let msg = self.request(message_of(op, v1_params(op, req, tenant)?)?, meta);
                let mut page = answer(
                    op,
                    binding,
                    self.cfg.max_response_size,
                    client.list_tasks(msg).await,
                )?;
                list_defaults(&mut page);
                Ok(page)
            }
            Call::CancelTask { id } => {
                let params = with_tenant(json!({ "id": id }), tenant);
                let msg = self.request(message_of::<v1::CancelTaskRequest>(op, params)?, meta);
                answer(
                    op,
                    binding,
                    self.cfg.max_response_size,
                    client.cancel_task(msg).await,
                )
            }
            Call::DeletePushConfig { task_id, config_id } => {
                let params = with_tenant(json!({"taskId": task_id, "id": config_id}), tenant);
                let msg = self.request(
                    message_of::<v1::DeleteTaskPushNotificationConfigRequest>(op, params)?,
                    meta,
                );
                answer(
                    op,
                    binding,
                    self.cfg.max_response_size,
                    client.delete_task_push_notification_config(msg).await,
                )
            }
            Call::SendStreamingMessage(_) | Call::SubscribeToTask { .. } => Err(not_unary(op)),
        }
    }

    async fn v03_unary(
        &self,
        call: &Call<'_>,
        target: &Target,
        meta: MetadataMap,
        op: &Op,
    ) -> Result<Value, A2aError> {
        let mut client = self.v03_client(target)?;
        let binding = ProtocolBinding::GrpcV03;
        match *call {
            Call::SendMessage(req) => {
                let msg = self.request(message_of(op, v03_send(op, req)?)?, meta);
                answer(
                    op,
                    binding,
                    self.cfg.max_response_size,
                    client.send_message(msg).await,
                )
            }
            Call::GetTask { id, history_length } => {
                let params =
                    json!({"name": format!("tasks/{id}"), "historyLength": history_length});
                let msg = self.request(message_of::<v03::GetTaskRequest>(op, params)?, meta);
                answer(
                    op,
                    binding,
                    self.cfg.max_response_size,
                    client.get_task(msg).await,
                )
            }
            Call::CancelTask { id } => {
                let params = json!({ "name": format!("tasks/{id}") });
                let msg = self.request(message_of::<v03::CancelTaskRequest>(op, params)?, meta);
                answer(
                    op,
                    binding,
                    self.cfg.max_response_size,
                    client.cancel_task(msg).await,
                )
            }
            Call::DeletePushConfig { task_id, config_id } => {
                let name = format!("tasks/{task_id}/pushNotificationConfigs/{config_id}");
                let msg = self.request(
                    message_of::<v03::DeleteTaskPushNotificationConfigRequest>(
                        op,
                        json!({ "name": name }),
                    )?,
                    meta,
                );
                answer(
                    op,
                    binding,
                    self.cfg.max_response_size,
                    client.delete_task_push_notification_config(msg).await,
                )
            }
            Call::ListTasks(_) => Err(A2aError::Client {
                detail: "an A2A v0.3 agent has no task listing; its tasks cannot be searched"
                    .to_owned(),
            }),
            Call::SendStreamingMessage(_) | Call::SubscribeToTask { .. } => Err(not_unary(op)),
        }
    }

    async fn v1_open(
        &self,
        call: &Call<'_>,
        target: &Target,
        tenant: Option<&str>,
        meta: MetadataMap,
        op: &Op,
    ) -> Result<GrpcStream, A2aError> {
        let mut client = self.v1_client(target)?;
        let binding = ProtocolBinding::GrpcV1;
        let opened = match *call {
            Call::SendStreamingMessage(req) => {
                let msg = self.request(message_of(op, v1_params(op, req, tenant)?)?, meta);
                client.send_streaming_message(msg).await
            }
            Call::SubscribeToTask { id } => {
                let params = with_tenant(json!({ "id": id }), tenant);
                let msg = self.request(message_of::<v1::SubscribeToTaskRequest>(op, params)?, meta);
                client.subscribe_to_task(msg).await
            }
            _ => return Err(not_unary(op)),
        };
        let limit = self.cfg.max_response_size;
        let mut stream = GrpcStream {
            messages: Messages::V1(
                opened
                    .map_err(|s| status_error(op, binding, limit, &s))?
                    .into_inner(),
            ),
            limit,
            first: None,
            ended: false,
        };
        // A v1.0 stream begins with the task (or the message): a server that sends its headers
        // before it fails the call (@a2a-js/sdk for an unknown or finished task) has failed to
        // open it, as one that fails at once has.
        stream.first = stream.message(op).await?;
        stream.ended = stream.first.is_none();
        Ok(stream)
    }

    async fn v03_open(
        &self,
        call: &Call<'_>,
        target: &Target,
        meta: MetadataMap,
        op: &Op,
    ) -> Result<GrpcStream, A2aError> {
        let mut client = self.v03_client(target)?;
        let binding = ProtocolBinding::GrpcV03;
        let opened = match *call {
            Call::SendStreamingMessage(req) => {
                let msg = self.request(message_of(op, v03_send(op, req)?)?, meta);
                client.send_streaming_message(msg).await
            }
            Call::SubscribeToTask { id } => {
                let params = json!({ "name": format!("tasks/{id}") });
                let msg = self.request(
                    message_of::<v03::TaskSubscriptionRequest>(op, params)?,
                    meta,
                );
                client.task_subscription(msg).await
            }
            _ => return Err(not_unary(op)),
        };
        let limit = self.cfg.max_response_size;
        opened
            .map(|r| GrpcStream {
                messages: Messages::V03(r.into_inner()),
                limit,
                first: None,
                ended: false,
            })
            .map_err(|s| status_error(op, binding, limit, &s))
    }
}

/// Returns the origin (`scheme://host:port`) calls go to; gRPC paths are the service's own.
fn origin(target: &Target) -> Result<Uri, A2aError> {
    let url = &target.url;
    let host = url.host_str().unwrap_or_default();
    let host = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_owned()
    };
    let port = url.port_or_known_default().unwrap_or(443);
    format!("{}://{host}:{port}", url.scheme())
        .parse()
        .map_err(|e| A2aError::InvalidUrl {
            url: target.redacted.clone(),
            reason: format!("it is not a gRPC origin: {e}"),
        })
}

/// Builds a call's metadata: `a2a-version` for v1.0 and the credential, if any.
fn metadata(
    binding: ProtocolBinding,
    credential: Option<Placed<'_>>,
    op: &Op,
) -> Result<MetadataMap, A2aError> {
    let mut meta = MetadataMap::new();
    if binding.version() == ProtocolVersion::V1_0 {
        meta.insert("a2a-version", AsciiMetadataValue::from_static(A2A_VERSION));
    }
    let Some(placed) = credential else {
        return Ok(meta);
    };
    let refused = |why: &str| A2aError::Client {
        detail: format!(
            "the credential cannot go to `{}` over gRPC: {why}; nothing was sent",
            op.url
        ),
    };
    let placement = placed.placement.clone();
    let (name, value) = placed
        .header_pair()
        .ok_or_else(|| refused(&format!("the card places it as {placement}")))?;
    let key = MetadataKey::from_bytes(name.as_str().as_bytes())
        .map_err(|_| refused("its header name is not gRPC metadata"))?;
    let mut value = AsciiMetadataValue::try_from(value.as_bytes())
        .map_err(|_| refused("it does not fit in gRPC metadata"))?;
    value.set_sensitive(true);
    meta.insert(key, value);
    Ok(meta)
}

/// Serializes a v1.0 request type into its protobuf JSON, with the interface's tenant.
fn v1_params(op: &Op, req: &impl Serialize, tenant: Option<&str>) -> Result<Value, A2aError> {
    let value = serde_json::to_value(req).map_err(|e| encode_error(op, &e))?;
    Ok(with_tenant(value, tenant))
}

/// Puts the interface's tenant into a v1.0 request (none: no `tenant`).
fn with_tenant(mut value: Value, tenant: Option<&str>) -> Value {
    if let Value::Object(obj) = &mut value {
        obj.remove("tenant");
        if let Some(t) = tenant.filter(|t| !t.is_empty()) {
            obj.insert("tenant".to_owned(), Value::from(t));
        }
    }
    value
}

/// Turns a v1.0 `SendMessageRequest` into the v0.3 protobuf JSON one.
fn v03_send(op: &Op, req: &impl Serialize) -> Result<Value, A2aError> {
    let value = serde_json::to_value(req).map_err(|e| encode_error(op, &e))?;
    Ok(httpjson03::send_request_from_v1(&value))
}

/// Reads protobuf JSON into a request message; a `null` member is left at its default.
fn message_of<T: DeserializeOwned>(op: &Op, mut params: Value) -> Result<T, A2aError> {
    if let Value::Object(obj) = &mut params {
        obj.retain(|_, v| !v.is_null());
    }
    serde_json::from_value(params).map_err(|e| encode_error(op, &e))
}

fn encode_error(op: &Op, e: &serde_json::Error) -> A2aError {
    A2aError::Client {
        detail: format!("could not encode the {} request: {e}", op.method),
    }
}

fn not_unary(op: &Op) -> A2aError {
    A2aError::Client {
        detail: format!("{} is not a call of this kind over gRPC", op.method),
    }
}

/// Reads a unary answer into protobuf JSON, or its status into the error.
fn answer<T: Serialize>(
    op: &Op,
    binding: ProtocolBinding,
    limit: u64,
    answer: Result<tonic::Response<T>, Status>,
) -> Result<Value, A2aError> {
    match answer {
        Ok(response) => json_of(op, response.get_ref()),
        Err(status) => Err(status_error(op, binding, limit, &status)),
    }
}

/// Writes a received message as protobuf JSON, scrubbed of the credential sent.
fn json_of<T: Serialize>(op: &Op, message: &T) -> Result<Value, A2aError> {
    let mut value = serde_json::to_value(message).map_err(|e| {
        op.decode(
            DecodeKind::WrongShape,
            format!("cannot be read as JSON: {e}"),
        )
    })?;
    op.scrub_value(&mut value);
    Ok(value)
}

/// Fills what protobuf JSON leaves out of a `ListTasksResponse` at its default (an empty
/// cursor, zero sizes), which the page reader requires.
fn list_defaults(page: &mut Value) {
    if let Value::Object(obj) = page {
        obj.entry("tasks").or_insert_with(|| json!([]));
        obj.entry("nextPageToken").or_insert_with(|| json!(""));
        obj.entry("pageSize").or_insert_with(|| json!(0));
        obj.entry("totalSize").or_insert_with(|| json!(0));
    }
}

/// Turns a gRPC status into the error every binding shares.
pub(crate) fn status_error(
    op: &Op,
    binding: ProtocolBinding,
    limit: u64,
    status: &Status,
) -> A2aError {
    if let Some(e) = local_error(op, limit, status) {
        return e;
    }
    let message = String::from_utf8_lossy(&op.scrub(status.message().as_bytes())).into_owned();
    let (kind, data) = match binding.version() {
        ProtocolVersion::V1_0 => error_info(op, status.details()),
        ProtocolVersion::V0_3 => (kind_of_message(&message), None),
    };
    let rpc = kind.map(|kind| {
        Box::new(RpcError {
            code: kind.code(),
            message: message.clone(),
            data,
        })
    });
    let code = status.code();
    A2aError::Http {
        url: op.url.clone(),
        method: op.method,
        status: http_status(code),
        retry_after: None,
        snippet: truncate_chars(
            &crate::sanitize::inert(&one_line(&format!("gRPC {}: {message}", code_name(code)))),
            MESSAGE_CHARS,
        ),
        unattributed: code == Code::NotFound && rpc.is_none(),
        rpc,
        // The reason is in `rpc.data`; a gRPC error's code is its JSON-RPC one (`wire_code`).
        reason: None,
    }
}

/// The error of a status this side made: the connection failed (nothing sent), broke, or a
/// message was over the size cap; `None` for a status the server sent.
fn local_error(op: &Op, limit: u64, status: &Status) -> Option<A2aError> {
    // A status the server sent has no source; one made of a connection's failure has.
    let transport = status.source().is_some();
    let mut source = status.source();
    let mut connect = false;
    while let Some(e) = source {
        if let Some(h) = e.downcast_ref::<hyper_util::client::legacy::Error>() {
            connect |= h.is_connect();
        }
        source = e.source();
    }
    let detail = || one_line(&super::transport::error_chain(status));
    if connect {
        return Some(A2aError::Connect {
            url: op.url.clone(),
            method: op.method,
            detail: detail(),
            why: super::unreached::connect_failure(status),
        });
    }
    if transport {
        return Some(A2aError::Transport {
            url: op.url.clone(),
            method: op.method,
            detail: detail(),
            transient: true,
        });
    }
    let too_large = status.code() == Code::OutOfRange
        && status
            .message()
            .contains("decoded message length too large");
    too_large.then(|| op.too_large(limit))
}

/// Reads the `google.rpc.Status` details: the A2A error its `ErrorInfo` reason names, and the
/// `ErrorInfo` as JSON.
fn error_info(op: &Op, details: &[u8]) -> (Option<ErrorKind>, Option<Value>) {
    use prost::Message as _;
    let Ok(status) = rpc::Status::decode(details) else {
        return (None, None);
    };
    let Some(info) = status
        .details
        .iter()
        .filter(|d| d.type_url.ends_with(ERROR_INFO))
        .find_map(|d| rpc::ErrorInfo::decode(d.value.as_ref()).ok())
    else {
        return (None, None);
    };
    let reason = String::from_utf8_lossy(&op.scrub(info.reason.as_bytes())).into_owned();
    let data = json!([{
        "@type": format!("type.googleapis.com/{ERROR_INFO}"),
        "reason": reason,
        "domain": String::from_utf8_lossy(&op.scrub(info.domain.as_bytes())),
    }]);
    (ErrorKind::of_reason(&reason), Some(data))
}

/// Reads a v0.3 status message's error class (`TaskNotFoundError: …`, as `a2a-sdk` writes it).
fn kind_of_message(message: &str) -> Option<ErrorKind> {
    let (class, _) = message.split_once(':')?;
    ErrorKind::of_class_name(class.trim())
}

/// Returns a gRPC code's canonical name (`NOT_FOUND`).
fn code_name(code: Code) -> String {
    let mut name = String::new();
    for (i, c) in format!("{code:?}").chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            name.push('_');
        }
        name.push(c.to_ascii_uppercase());
    }
    name
}

/// Returns the HTTP status a gRPC code stands for (the gRPC-to-HTTP mapping of
/// `google.rpc.Code`), which recovery reads as it reads an HTTP+JSON answer's.
fn http_status(code: Code) -> u16 {
    match code {
        Code::Ok => 200,
        Code::InvalidArgument | Code::FailedPrecondition | Code::OutOfRange => 400,
        Code::Unauthenticated => 401,
        Code::PermissionDenied => 403,
        Code::NotFound => 404,
        Code::AlreadyExists | Code::Aborted => 409,
        Code::ResourceExhausted => 429,
        Code::Cancelled => 499,
        Code::Unimplemented => 501,
        Code::Unavailable => 503,
        Code::DeadlineExceeded => 504,
        Code::Unknown | Code::Internal | Code::DataLoss => 500,
    }
}

#[cfg(test)]
mod tests {
    use prost::Message as _;

    use super::*;
    use crate::a2a::ErrorClass;

    fn op() -> Op {
        Op::new("http://127.0.0.1:50051/", "GetTask")
    }

    /// A status as a2a-sdk sends it: the code, and a `google.rpc.Status` naming `reason`.
    fn with_reason(code: Code, reason: &str) -> Status {
        let info = rpc::ErrorInfo {
            reason: reason.to_owned(),
            domain: "a2a-protocol.org".to_owned(),
            ..Default::default()
        };
        let details = rpc::Status {
            code: code as i32,
            message: "m".to_owned(),
            details: vec![pbjson_types::Any {
                type_url: format!("type.googleapis.com/{ERROR_INFO}"),
                value: info.encode_to_vec().into(),
            }],
        };
        Status::with_details(code, "m", details.encode_to_vec().into())
    }

    #[test]
    fn only_the_agents_task_not_found_is_task_not_found() {
        let v1 = ProtocolBinding::GrpcV1;
        let lost = status_error(&op(), v1, 1, &with_reason(Code::NotFound, "TASK_NOT_FOUND"));
        assert!(lost.is_task_not_found(), "{lost}");
        assert_eq!(lost.wire_code().as_deref(), Some("-32001"), "{lost}");
        assert_eq!(lost.answered(), Some(true));

        // a2a-sdk answers an unknown method with NOT_FOUND too: the reason tells them apart.
        let method = status_error(
            &op(),
            v1,
            1,
            &with_reason(Code::NotFound, "METHOD_NOT_FOUND"),
        );
        assert!(!method.is_task_not_found(), "{method}");
        assert_eq!(method.kind(), Some(ErrorKind::MethodNotFound), "{method}");
        assert!(method.to_string().contains("gRPC NOT_FOUND"), "{method}");
        assert!(method.is_not_served_here(), "{method}");

        // A NOT_FOUND naming no A2A error (a proxy's, a router's) says nothing of the task.
        let bare = status_error(&op(), v1, 1, &Status::not_found("no route"));
        assert!(!bare.is_task_not_found(), "{bare}");
        assert_eq!(bare.class(), ErrorClass::Ambiguous, "{bare}");
        assert!(bare.is_transient(), "{bare}");
        assert_eq!(bare.answered(), Some(false), "{bare}");

        // v0.3 names the error by its class at the start of the message.
        let v03 = ProtocolBinding::GrpcV03;
        let named = Status::not_found("TaskNotFoundError: Task not found");
        assert!(status_error(&op(), v03, 1, &named).is_task_not_found());
        let other = Status::not_found("Not Found");
        assert!(!status_error(&op(), v03, 1, &other).is_task_not_found());
    }

    #[test]
    fn codes_read_as_the_http_statuses_they_stand_for() {
        let v1 = ProtocolBinding::GrpcV1;
        let cases = [
            (Status::unauthenticated("x"), ErrorClass::Refused, false),
            (Status::unavailable("x"), ErrorClass::Ambiguous, true),
            (Status::resource_exhausted("x"), ErrorClass::Ambiguous, true),
            (Status::internal("x"), ErrorClass::Ambiguous, false),
        ];
        for (status, class, transient) in cases {
            let e = status_error(&op(), v1, 1, &status);
            assert_eq!(e.class(), class, "{e}");
            assert_eq!(e.is_transient(), transient, "{e}");
        }
        let unauthorized = status_error(&op(), v1, 1, &Status::unauthenticated("x"));
        assert_eq!(unauthorized.http_status(), Some(401));
        let too_large = Status::out_of_range(
            "Error, decoded message length too large: found 9 bytes, the limit is: 4 bytes",
        );
        assert!(status_error(&op(), v1, 4, &too_large).is_too_large());
    }

    #[test]
    fn v1_calls_carry_the_version_and_a_query_credential_is_refused() {
        let meta = metadata(ProtocolBinding::GrpcV1, None, &op()).unwrap();
        assert_eq!(meta.get("a2a-version").unwrap(), "1.0");
        let meta = metadata(ProtocolBinding::GrpcV03, None, &op()).unwrap();
        assert!(meta.get("a2a-version").is_none());

        let credential = crate::a2a::Credential::new("TOKEN", "s3cret").unwrap();
        let query = crate::a2a::Placement::Query {
            scheme: "k".to_owned(),
            name: "key".to_owned(),
        };
        let placed = Placed {
            credential: &credential,
            placement: &query,
        };
        let e = metadata(ProtocolBinding::GrpcV1, Some(placed), &op()).unwrap_err();
        assert_eq!(e.class(), ErrorClass::NotSent, "{e}");
        assert!(!e.to_string().contains("s3cret"), "{e}");
        let bearer = crate::a2a::Placement::Bearer;
        let placed = Placed {
            credential: &credential,
            placement: &bearer,
        };
        let meta = metadata(ProtocolBinding::GrpcV1, Some(placed), &op()).unwrap();
        assert_eq!(meta.get("authorization").unwrap(), "Bearer s3cret");
    }
}
