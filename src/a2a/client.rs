//! The JSON-RPC client: requests, headers, timeouts, size caps, and the event stream.
//!
//! Every call is a `POST` of one JSON-RPC request to the chosen interface URL with
//! `Content-Type: application/json`, `A2A-Version: 1.0`, `Accept` (`application/json`, or
//! `text/event-stream` for streams), our `User-Agent`, `tenant` in `params` when the interface
//! has one, and a fresh string id that the answer must echo. RPC calls follow no redirects.
//!
//! Invariants:
//! - The bearer credential is sent only when the request URL's origin is the card's origin,
//!   unless the endpoint allows cross-origin; it is marked sensitive and never logged.
//! - Unary calls are bounded by `timeout` as a whole (connect and full body). Streams get
//!   `timeout` to connect, then `stream_idle_timeout` for the headers and between complete
//!   lines (bytes that never complete a line do not count: a trickle is silence), and
//!   no overall limit.
//! - Bodies are read chunk by chunk and refused at `max_response_size` (early from
//!   `Content-Length`); for streams the cap is per event. Nothing past the cap is buffered.
//! - An [`EventStream`] ends at its first error: every later `next()` is `None`.
//! - At `-vvv` (trace) only the method, redacted URL and status are logged.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, RETRY_AFTER};
use reqwest::{RequestBuilder, Response, StatusCode, Url};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::card::{AgentCardInfo, card_url_for, parse_card};
use super::credentials::{
    Credential, credential_for, parse_http_url, redact_url, scrub_bytes, scrub_json,
};
use super::error::{A2aError, CARD_FETCH, DecodeKind, RpcError, truncate_chars};
use super::normalize;
use super::sse::{SseDecoder, SseError, SseEvent, push_capped};
use super::types;

/// The `User-Agent` of every request.
pub const USER_AGENT: &str = concat!("a2a-recover/", env!("CARGO_PKG_VERSION"));
/// The `A2A-Version` header value of every request.
pub const A2A_VERSION: &str = "1.0";
/// The most redirects followed when fetching a card or checking a URL.
pub const MAX_REDIRECTS: usize = 5;
/// How much of a non-success body is read (for the snippet and a JSON-RPC error in it).
const ERROR_BODY_LIMIT: u64 = 64 * 1024;
/// How many characters of a body an error shows.
const SNIPPET_CHARS: usize = 160;

/// Limits every request obeys.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Bound on a whole unary request (connect and full body), and on a stream's connect.
    pub timeout: Duration,
    /// Largest body, or single stream event, in bytes.
    pub max_response_size: u64,
    /// Longest silence on a stream (headers, and between chunks).
    pub stream_idle_timeout: Duration,
}

/// Where and how to call one agent.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The JSON-RPC interface URL.
    pub url: String,
    /// The interface's tenant, put into every request's `params`.
    pub tenant: Option<String>,
    /// The origin of the card URL; the credential goes only there.
    pub card_origin: String,
    /// The bearer credential, if any.
    pub credential: Option<Credential>,
    /// Whether the credential may go to an interface on another origin.
    pub allow_cross_origin: bool,
}

impl Endpoint {
    /// Builds the endpoint of a fetched card's chosen interface.
    pub fn from_card(
        info: &AgentCardInfo,
        credential: Option<Credential>,
        allow_cross_origin: bool,
    ) -> Self {
        Self {
            url: info.interface_url.clone(),
            tenant: info.tenant.clone(),
            card_origin: info.origin.clone(),
            credential,
            allow_cross_origin,
        }
    }

    fn credential_for(&self, target: &Target) -> Option<&Credential> {
        credential_for(
            self.credential.as_ref(),
            &self.card_origin,
            self.allow_cross_origin,
            &target.origin,
            &target.redacted,
        )
    }
}

/// An interface URL parsed once per client: the parsed URL, its origin (where a credential
/// may go) and its redacted form (for logs and errors).
#[derive(Debug)]
struct Target {
    url: Url,
    origin: String,
    redacted: String,
}

/// A card fetched once per client: concurrent callers wait for the one fetch in flight.
type CardCell = tokio::sync::OnceCell<Arc<AgentCardInfo>>;

/// A fetched card's key: its URL as given, and the credential variable it was fetched with.
type CardKey = (String, Option<String>);

/// How many parsed interface URLs a client keeps; a process talks to few agents, and a full
/// cache is emptied rather than grown.
const TARGETS: usize = 256;

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
}

/// The A2A client: one per process, cheap to clone.
#[derive(Debug, Clone)]
pub struct A2aClient {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// For JSON-RPC calls: no redirects.
    rpc: reqwest::Client,
    /// For cards and verification URLs: a few redirects.
    get: reqwest::Client,
    cfg: ClientConfig,
    /// Interface URLs already parsed, by their text: a pass of 100,000 reads of one agent
    /// parses its URL once, not per request (docs/performance.md).
    targets: Mutex<HashMap<String, Arc<Target>>>,
    /// Cards fetched successfully, by card URL and credential variable: a process fetches an
    /// agent's card once, however many of its steps it sends ([`A2aClient::fetch_card_once`]).
    cards: Mutex<HashMap<CardKey, Arc<CardCell>>>,
}

/// The operation being performed, for errors and logs.
#[derive(Clone)]
struct Op {
    url: String,
    method: &'static str,
    /// The token sent with the request: an agent that echoes it back (an error page quoting
    /// the request headers, a task quoting them) must not get it into an error, a log line or
    /// the journal, so every answer is scrubbed of it before it is read.
    secret: Option<Arc<str>>,
}

impl fmt::Debug for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Op")
            .field("url", &self.url)
            .field("method", &self.method)
            .finish_non_exhaustive()
    }
}

impl Op {
    fn new(url: &str, method: &'static str) -> Self {
        Self {
            url: redact_url(url),
            method,
            secret: None,
        }
    }

    /// An operation on an endpoint, scrubbing answers of the endpoint's credential.
    fn on(target: &Target, ep: &Endpoint, method: &'static str) -> Self {
        Self {
            url: target.redacted.clone(),
            method,
            secret: None,
        }
        .with_secret(ep.credential.as_ref())
    }

    fn with_secret(mut self, credential: Option<&Credential>) -> Self {
        self.secret = credential.map(Credential::token);
        self
    }

    /// Returns a body with every occurrence of the token replaced by `REDACTED`.
    fn scrub<'b>(&self, body: &'b [u8]) -> std::borrow::Cow<'b, [u8]> {
        match self.secret.as_deref() {
            Some(secret) => scrub_bytes(secret.as_bytes(), body),
            None => std::borrow::Cow::Borrowed(body),
        }
    }

    /// Replaces the token in every string and key of a parsed answer (it may have been
    /// written with JSON escapes, which the byte scrub cannot see).
    fn scrub_value(&self, value: &mut Value) {
        let Some(secret) = self.secret.as_deref().filter(|s| !s.is_empty()) else {
            return;
        };
        scrub_json(value, secret);
    }

    fn decode(&self, kind: DecodeKind, detail: impl Into<String>) -> A2aError {
        A2aError::Decode {
            url: self.url.clone(),
            method: self.method,
            kind,
            detail: detail.into(),
        }
    }

    fn too_large(&self, limit: u64) -> A2aError {
        A2aError::TooLarge {
            url: self.url.clone(),
            method: self.method,
            limit,
        }
    }

    fn timeout(&self, after: Duration) -> A2aError {
        A2aError::Timeout {
            url: self.url.clone(),
            method: self.method,
            after,
        }
    }

    /// Classifies a reqwest error without its URL (which may hold secrets).
    fn transport(&self, e: reqwest::Error, after: Duration) -> A2aError {
        let (connect, timeout, redirect, builder) = (
            e.is_connect(),
            e.is_timeout(),
            e.is_redirect(),
            e.is_builder(),
        );
        let detail = error_chain(&e.without_url());
        let url = self.url.clone();
        let method = self.method;
        if connect {
            A2aError::Connect {
                url,
                method,
                detail,
            }
        } else if timeout {
            A2aError::Timeout { url, method, after }
        } else if builder {
            A2aError::Client { detail }
        } else {
            A2aError::Transport {
                url,
                method,
                detail,
                transient: !redirect,
            }
        }
    }
}

/// Joins an error and its sources into one line, skipping repeats.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

impl A2aClient {
    /// Builds the client.
    pub fn new(cfg: ClientConfig) -> Result<Self, A2aError> {
        let build = |policy: reqwest::redirect::Policy| {
            reqwest::Client::builder()
                .user_agent(USER_AGENT)
                .connect_timeout(cfg.timeout)
                .redirect(policy)
                .build()
                .map_err(|e| A2aError::Client {
                    detail: error_chain(&e),
                })
        };
        let follow = reqwest::redirect::Policy::custom(|attempt| {
            let downgrade = attempt
                .previous()
                .last()
                .is_some_and(|p| p.scheme() == "https")
                && attempt.url().scheme() != "https";
            if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error("too many redirects")
            } else if downgrade {
                attempt.error("refusing a redirect from https to http")
            } else {
                attempt.follow()
            }
        });
        Ok(Self {
            inner: Arc::new(Inner {
                rpc: build(reqwest::redirect::Policy::none())?,
                get: build(follow)?,
                cfg,
                targets: Mutex::new(HashMap::new()),
                cards: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// Returns an endpoint's interface URL parsed, from the cache or parsed now.
    fn target(&self, ep: &Endpoint) -> Result<Arc<Target>, A2aError> {
        let cached = self
            .inner
            .targets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(ep.url.as_str())
            .cloned();
        if let Some(target) = cached {
            return Ok(target);
        }
        let url = parse_http_url(&ep.url)?;
        let target = Arc::new(Target {
            origin: url.origin().ascii_serialization(),
            redacted: redact_url(&ep.url),
            url,
        });
        let mut targets = self
            .inner
            .targets
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if targets.len() >= TARGETS {
            targets.clear();
        }
        targets.insert(ep.url.clone(), Arc::clone(&target));
        Ok(target)
    }

    /// Returns the limits this client obeys.
    pub fn config(&self) -> &ClientConfig {
        &self.inner.cfg
    }

    /// Fetches an agent card from a base URL or card URL and chooses its JSON-RPC interface.
    ///
    /// The credential, if given, is sent with the card request (the card's own origin;
    /// redirects to another host drop it).
    pub async fn fetch_card(
        &self,
        url: &str,
        credential: Option<&Credential>,
    ) -> Result<AgentCardInfo, A2aError> {
        let card_url = card_url_for(url)?;
        let parsed = parse_http_url(&card_url)?;
        let op = Op::new(&card_url, CARD_FETCH).with_secret(credential);
        let mut req = self
            .inner
            .get
            .get(parsed)
            .header(ACCEPT, "application/json")
            .header(types::SVC_PARAM_VERSION, A2A_VERSION);
        if let Some(c) = credential {
            req = req.header(AUTHORIZATION, c.header());
        }
        let (status, headers, body) = self.unary(req, &op).await?;
        if !status.is_success() {
            return Err(http_error(&op, status, &headers, &body));
        }
        parse_card(&card_url, decode_json(&op, &body)?)
    }

    /// Fetches an agent card as [`A2aClient::fetch_card`] does, once per client: a card this
    /// client fetched with the same credential variable (or is fetching: the caller waits for
    /// that fetch) is returned again, with `false` (not fetched by this call). A failed fetch is
    /// not remembered: the next caller fetches again.
    pub async fn fetch_card_once(
        &self,
        url: &str,
        credential: Option<&Credential>,
    ) -> Result<(Arc<AgentCardInfo>, bool), A2aError> {
        let key = (url.to_owned(), credential.map(|c| c.env_var().to_owned()));
        let cell = Arc::clone(
            self.inner
                .cards
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(key)
                .or_default(),
        );
        let fetched = std::cell::Cell::new(false);
        let info = cell
            .get_or_try_init(|| async {
                fetched.set(true);
                self.fetch_card(url, credential).await.map(Arc::new)
            })
            .await?;
        Ok((Arc::clone(info), fetched.get()))
    }

    /// Sends `SendMessage`.
    pub async fn send_message(
        &self,
        ep: &Endpoint,
        req: &types::SendMessageRequest,
    ) -> Result<Raw<types::SendMessageResponse>, A2aError> {
        let target = self.target(ep)?;
        let op = Op::on(&target, ep, types::methods::SEND_MESSAGE);
        let result = self.call(ep, &target, &op, to_params(req)?).await?;
        typed(&op, result, normalize::send_message_response)
    }

    /// Sends `GetTask`.
    pub async fn get_task(
        &self,
        ep: &Endpoint,
        id: &str,
        history_length: Option<i32>,
    ) -> Result<Raw<types::Task>, A2aError> {
        let target = self.target(ep)?;
        let op = Op::on(&target, ep, types::methods::GET_TASK);
        let params = to_params(&types::GetTaskRequest {
            id: id.to_owned(),
            history_length,
            tenant: None,
        })?;
        let result = self.call(ep, &target, &op, params).await?;
        typed(&op, result, normalize::task)
    }

    /// Sends `ListTasks`; each task of the page is parsed on its own.
    pub async fn list_tasks(
        &self,
        ep: &Endpoint,
        req: &types::ListTasksRequest,
    ) -> Result<ListTasksPage, A2aError> {
        let target = self.target(ep)?;
        let op = Op::on(&target, ep, types::methods::LIST_TASKS);
        let result = self.call(ep, &target, &op, to_params(req)?).await?;
        list_page(&op, result)
    }

    /// Sends `CancelTask`.
    pub async fn cancel_task(&self, ep: &Endpoint, id: &str) -> Result<Raw<types::Task>, A2aError> {
        let target = self.target(ep)?;
        let op = Op::on(&target, ep, types::methods::CANCEL_TASK);
        let result = self.call(ep, &target, &op, json!({ "id": id })).await?;
        typed(&op, result, normalize::task)
    }

    /// Sends `SubscribeToTask`; a plain JSON error answer (e.g. -32004 for a terminal task) is
    /// returned as `Err`.
    pub async fn subscribe(&self, ep: &Endpoint, id: &str) -> Result<EventStream, A2aError> {
        let target = self.target(ep)?;
        let op = Op::on(&target, ep, types::methods::SUBSCRIBE_TO_TASK);
        self.stream(ep, &target, op, json!({ "id": id })).await
    }

    /// Sends `SendStreamingMessage`.
    pub async fn send_streaming_message(
        &self,
        ep: &Endpoint,
        req: &types::SendMessageRequest,
    ) -> Result<EventStream, A2aError> {
        let target = self.target(ep)?;
        let op = Op::on(&target, ep, types::methods::SEND_STREAMING_MESSAGE);
        self.stream(ep, &target, op, to_params(req)?).await
    }

    /// Sends a plain `GET` (effect verification) and returns the status; the body is read up
    /// to the cap and discarded, and a failure reading it does not matter.
    pub async fn get_url_status(&self, url: &str) -> Result<u16, A2aError> {
        let parsed = parse_http_url(url)?;
        let op = Op::new(url, "URL check");
        let cfg = &self.inner.cfg;
        let deadline = tokio::time::Instant::now() + cfg.timeout;
        let send = self.inner.get.get(parsed).send();
        let mut resp = match tokio::time::timeout_at(deadline, send).await {
            Err(_) => return Err(op.timeout(cfg.timeout)),
            Ok(Err(e)) => return Err(op.transport(e, cfg.timeout)),
            Ok(Ok(resp)) => resp,
        };
        let status = resp.status().as_u16();
        tracing::trace!(method = op.method, url = %op.url, status, "answer");
        let drain = read_body(
            &mut resp,
            &op,
            cfg.max_response_size,
            Over::Truncate,
            cfg.timeout,
        );
        let _ = tokio::time::timeout_at(deadline, drain).await;
        Ok(status)
    }

    /// Builds the JSON-RPC POST for an endpoint.
    fn rpc_request(
        &self,
        ep: &Endpoint,
        target: &Target,
        op: &Op,
        id: &str,
        mut params: Value,
        accept: &'static str,
    ) -> Result<RequestBuilder, A2aError> {
        if let (Some(tenant), Value::Object(p)) = (ep.tenant.as_ref(), &mut params)
            && !tenant.is_empty()
        {
            p.insert("tenant".to_owned(), Value::from(tenant.as_str()));
        }
        let body = RpcRequest {
            id,
            jsonrpc: "2.0",
            method: op.method,
            params: &params,
        };
        let body = serde_json::to_vec(&body).map_err(|e| A2aError::Client {
            detail: format!("could not encode the request: {e}"),
        })?;
        let mut req = self
            .inner
            .rpc
            .post(target.url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, accept)
            .header(types::SVC_PARAM_VERSION, A2A_VERSION)
            .body(body);
        if let Some(c) = ep.credential_for(target) {
            req = req.header(AUTHORIZATION, c.header());
        }
        tracing::trace!(method = op.method, url = %op.url, "request");
        Ok(req)
    }

    /// Sends one unary JSON-RPC call and returns its `result`.
    async fn call(
        &self,
        ep: &Endpoint,
        target: &Target,
        op: &Op,
        params: Value,
    ) -> Result<Value, A2aError> {
        let id = uuid::Uuid::new_v4().to_string();
        let req = self.rpc_request(ep, target, op, &id, params, "application/json")?;
        let (status, headers, body) = self.unary(req, op).await?;
        if !status.is_success() {
            return Err(http_error(op, status, &headers, &body));
        }
        envelope(op, &id, decode_json(op, &body)?)
    }

    /// Sends a request and reads its body, all within `timeout`.
    async fn unary(
        &self,
        req: RequestBuilder,
        op: &Op,
    ) -> Result<(StatusCode, HeaderMap, Vec<u8>), A2aError> {
        let cfg = &self.inner.cfg;
        let exchange = async {
            let mut resp = req.send().await.map_err(|e| op.transport(e, cfg.timeout))?;
            let status = resp.status();
            tracing::trace!(method = op.method, url = %op.url, status = status.as_u16(), "answer");
            let body = if status.is_success() {
                read_body(
                    &mut resp,
                    op,
                    cfg.max_response_size,
                    Over::Fail,
                    cfg.timeout,
                )
                .await?
            } else {
                let limit = ERROR_BODY_LIMIT.min(cfg.max_response_size);
                read_body(&mut resp, op, limit, Over::Truncate, cfg.timeout).await?
            };
            Ok((status, resp.headers().clone(), body))
        };
        tokio::time::timeout(cfg.timeout, exchange)
            .await
            .unwrap_or_else(|_| Err(op.timeout(cfg.timeout)))
    }

    /// Opens a stream: SSE, or a plain JSON answer (usually an error) in its place.
    async fn stream(
        &self,
        ep: &Endpoint,
        target: &Target,
        op: Op,
        params: Value,
    ) -> Result<EventStream, A2aError> {
        let cfg = &self.inner.cfg;
        let id = uuid::Uuid::new_v4().to_string();
        let req = self.rpc_request(ep, target, &op, &id, params, "text/event-stream")?;
        let idle = cfg.stream_idle_timeout;
        let mut resp = match tokio::time::timeout(idle.max(cfg.timeout), req.send()).await {
            Err(_) => return Err(op.timeout(idle.max(cfg.timeout))),
            Ok(Err(e)) => return Err(op.transport(e, cfg.timeout)),
            Ok(Ok(resp)) => resp,
        };
        let status = resp.status();
        tracing::trace!(method = op.method, url = %op.url, status = status.as_u16(), "answer");
        let read = async |resp: &mut Response, limit: u64, over: Over| {
            tokio::time::timeout(cfg.timeout, read_body(resp, &op, limit, over, cfg.timeout))
                .await
                .unwrap_or_else(|_| Err(op.timeout(cfg.timeout)))
        };
        if !status.is_success() {
            let limit = ERROR_BODY_LIMIT.min(cfg.max_response_size);
            let body = read(&mut resp, limit, Over::Truncate).await?;
            return Err(http_error(&op, status, resp.headers(), &body));
        }
        let content_type = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(|v| v.trim().to_ascii_lowercase())
            .unwrap_or_default();
        match content_type.as_str() {
            "text/event-stream" => Ok(EventStream {
                decoder: SseDecoder::new(
                    usize::try_from(cfg.max_response_size).unwrap_or(usize::MAX),
                ),
                resp: Some(resp),
                single: None,
                op,
                id,
                idle,
                heard: tokio::time::Instant::now(),
                lines: 0,
                limit: cfg.max_response_size,
                done: false,
            }),
            json if json == "application/json" || json.ends_with("+json") => {
                let body = read(&mut resp, cfg.max_response_size, Over::Fail).await?;
                let result = envelope(&op, &id, decode_json(&op, &body)?)?;
                Ok(EventStream {
                    decoder: SseDecoder::new(0),
                    resp: None,
                    single: Some(result),
                    op,
                    id,
                    idle,
                    heard: tokio::time::Instant::now(),
                    lines: 0,
                    limit: cfg.max_response_size,
                    done: false,
                })
            }
            other => Err(op.decode(
                DecodeKind::ContentType,
                format!("expected text/event-stream, got `{other}`"),
            )),
        }
    }
}

/// A JSON-RPC request, serialized without building a `Value` for the envelope; the members
/// are in the order a `json!` object (sorted keys) gave them, so the bytes sent are the same.
#[derive(Serialize)]
struct RpcRequest<'a> {
    id: &'a str,
    jsonrpc: &'static str,
    method: &'static str,
    params: &'a Value,
}

/// Reads one `ListTasks` result; each task is typed on its own.
fn list_page(op: &Op, mut result: Value) -> Result<ListTasksPage, A2aError> {
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
            typed(op, raw, normalize::task).map_err(|e| match e {
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
    })
}

/// The events of `SubscribeToTask` or `SendStreamingMessage`.
pub struct EventStream {
    op: Op,
    id: String,
    idle: Duration,
    /// When the stream opened or last completed a line: the idle timeout counts from here, so
    /// a stream trickling bytes that never complete a line is as silent as one sending nothing.
    heard: tokio::time::Instant,
    /// Lines the decoder had completed at `heard`.
    lines: u64,
    limit: u64,
    resp: Option<Response>,
    decoder: SseDecoder,
    /// A plain JSON success answer given in place of a stream: one event.
    single: Option<Value>,
    done: bool,
}

impl fmt::Debug for EventStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventStream")
            .field("method", &self.op.method)
            .field("url", &self.op.url)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl EventStream {
    /// Returns the next event; `None` is a clean end (the server closed between events).
    ///
    /// After the first error every later call returns `None`.
    pub async fn next(&mut self) -> Option<Result<Raw<types::StreamResponse>, A2aError>> {
        loop {
            if self.done {
                return None;
            }
            if let Some(result) = self.single.take() {
                self.done = true;
                return Some(typed(&self.op, result, normalize::stream_response));
            }
            if let Some(event) = self.decoder.next_event() {
                match self.convert(event) {
                    None => continue,
                    Some(Ok(event)) => return Some(Ok(event)),
                    Some(Err(e)) => return Some(Err(self.fail(e))),
                }
            }
            let Some(resp) = self.resp.as_mut() else {
                self.done = true;
                return None;
            };
            match tokio::time::timeout_at(self.heard + self.idle, resp.chunk()).await {
                Err(_) => {
                    let e = A2aError::StreamIdle {
                        url: self.op.url.clone(),
                        method: self.op.method,
                        after: self.idle,
                    };
                    return Some(Err(self.fail(e)));
                }
                Ok(Err(e)) => {
                    let e = self.op.transport(e, self.idle);
                    return Some(Err(self.fail(e)));
                }
                Ok(Ok(None)) if self.decoder.is_mid_event() => {
                    let e = A2aError::StreamTruncated {
                        url: self.op.url.clone(),
                        method: self.op.method,
                    };
                    return Some(Err(self.fail(e)));
                }
                Ok(Ok(None)) => {
                    self.done = true;
                    self.resp = None;
                    return None;
                }
                Ok(Ok(Some(bytes))) => {
                    self.decoder.feed(&bytes);
                    if self.decoder.lines() != self.lines {
                        self.lines = self.decoder.lines();
                        self.heard = tokio::time::Instant::now();
                    }
                }
            }
        }
    }

    fn fail(&mut self, e: A2aError) -> A2aError {
        self.done = true;
        self.resp = None;
        e
    }

    /// Turns one SSE event into a stream item; `None` skips an event with empty data.
    fn convert(
        &self,
        event: Result<SseEvent, SseError>,
    ) -> Option<Result<Raw<types::StreamResponse>, A2aError>> {
        let event = match event {
            Ok(event) => event,
            Err(SseError::TooLarge) => return Some(Err(self.op.too_large(self.limit))),
            Err(SseError::InvalidUtf8) => {
                return Some(Err(self
                    .op
                    .decode(DecodeKind::InvalidUtf8, "an event's data is not UTF-8")));
            }
        };
        if event.data.trim().is_empty() {
            return None;
        }
        Some(stream_item(&self.op, &self.id, &event))
    }
}

/// Decodes one SSE event's data: a JSON-RPC response whose `result` is a `StreamResponse`, or
/// a JSON-RPC error (in an `event: error` frame or a plain one).
fn stream_item(
    op: &Op,
    id: &str,
    event: &SseEvent,
) -> Result<Raw<types::StreamResponse>, A2aError> {
    let value = decode_json(op, event.data.as_bytes())?;
    if event.event.as_deref() == Some("error") && value.get("error").is_none() {
        return Err(op.decode(
            DecodeKind::WrongShape,
            format!(
                "an `error` event without a JSON-RPC error: {}",
                snippet(&op.scrub(event.data.as_bytes()))
            ),
        ));
    }
    let result = envelope(op, id, value)?;
    typed(op, result, normalize::stream_response)
}

/// What to do when a body passes the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Over {
    /// Refuse the answer ([`A2aError::TooLarge`]).
    Fail,
    /// Keep what fits and stop reading (error bodies, verification URLs).
    Truncate,
}

/// Reads a body chunk by chunk, never buffering more than `limit` bytes.
async fn read_body(
    resp: &mut Response,
    op: &Op,
    limit: u64,
    over: Over,
    timeout: Duration,
) -> Result<Vec<u8>, A2aError> {
    if over == Over::Fail && resp.content_length().is_some_and(|n| n > limit) {
        return Err(op.too_large(limit));
    }
    let max = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut buf = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| op.transport(e, timeout))? {
        if !push_capped(&mut buf, &chunk, max) {
            if over == Over::Fail {
                return Err(op.too_large(limit));
            }
            let room = max - buf.len();
            push_capped(&mut buf, &chunk[..room], max);
            break;
        }
    }
    Ok(buf)
}

/// Parses a body as JSON, telling invalid UTF-8 from invalid JSON; the token sent is
/// scrubbed from it first.
fn decode_json(op: &Op, body: &[u8]) -> Result<Value, A2aError> {
    let body = op.scrub(body);
    if let Err(e) = std::str::from_utf8(&body) {
        return Err(op.decode(
            DecodeKind::InvalidUtf8,
            format!("invalid byte at offset {}", e.valid_up_to()),
        ));
    }
    let mut value: Value = serde_json::from_slice(&body)
        .map_err(|e| op.decode(DecodeKind::InvalidJson, format!("{e}: {}", snippet(&body))))?;
    op.scrub_value(&mut value);
    Ok(value)
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

/// Builds the error for a non-success HTTP status.
fn http_error(op: &Op, status: StatusCode, headers: &HeaderMap, body: &[u8]) -> A2aError {
    let body = &*op.scrub(body);
    let rpc = serde_json::from_slice::<Value>(body)
        .ok()
        .map(|mut v| {
            op.scrub_value(&mut v);
            v
        })
        .and_then(|v| v.get("error").and_then(parse_rpc_error))
        .map(Box::new);
    A2aError::Http {
        url: op.url.clone(),
        method: op.method,
        status: status.as_u16(),
        retry_after: headers
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after),
        snippet: snippet(body),
        rpc,
    }
}

/// Parses `Retry-After`: delay seconds, or an HTTP date (a past date means now).
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = date.with_timezone(&chrono::Utc) - crate::clock::system_now();
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

/// Returns the start of a body as one inert line; HTML tags are dropped.
fn snippet(body: &[u8]) -> String {
    let head = &body[..body.len().min(4 * SNIPPET_CHARS)];
    let text = String::from_utf8_lossy(head);
    let text = if text.trim_start().starts_with('<') {
        strip_tags(&text)
    } else {
        text.into_owned()
    };
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    truncate_chars(&crate::sanitize::inert(&collapsed), SNIPPET_CHARS)
}

fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// Serializes request parameters.
fn to_params(req: &impl Serialize) -> Result<Value, A2aError> {
    serde_json::to_value(req).map_err(|e| A2aError::Client {
        detail: format!("could not encode the request: {e}"),
    })
}

/// Normalizes a copy of `raw` and types it, keeping `raw` as received.
fn typed<T: DeserializeOwned>(
    op: &Op,
    raw: Value,
    norm: fn(&mut Value),
) -> Result<Raw<T>, A2aError> {
    let mut value = raw.clone();
    norm(&mut value);
    let value = serde_json::from_value(value)
        .map_err(|e| op.decode(DecodeKind::WrongShape, e.to_string()))?;
    Ok(Raw { value, raw })
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Entry points for the fixture tests, which bypass HTTP.

    use super::*;

    /// Decodes a unary JSON-RPC answer body the way every call does.
    pub(crate) fn decode_answer<T: DeserializeOwned>(
        body: &[u8],
        id: &str,
        norm: fn(&mut Value),
    ) -> Result<Raw<T>, A2aError> {
        let op = Op::new("http://127.0.0.1/", "test");
        let result = envelope(&op, id, decode_json(&op, body)?)?;
        typed(&op, result, norm)
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
                Ok(e) => stream_item(&op, id, &e),
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
        list_page(&op, envelope(&op, id, decode_json(&op, body)?)?)
    }

    /// Parses a `Retry-After` value.
    pub(crate) fn retry_after(value: &str) -> Option<Duration> {
        parse_retry_after(value)
    }
}
