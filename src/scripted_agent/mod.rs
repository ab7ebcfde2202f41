//! The in-crate scripted A2A v1.0 agent: an axum server speaking the JSON-RPC binding (or, with
//! [`ServedBinding::HttpJson`], the HTTP+JSON binding; with [`ServedBinding::Grpc`] or
//! [`AgentConfig::grpc`], gRPC on the same port; all on the same task logic) the way the
//! official SDK servers do, for drills, the demo, tests and benchmarks.
//!
//! # Behaviour
//!
//! Each new task runs a scenario chosen by [`AgentConfig::scenario`], or else by the first word of
//! the first line of the message text that is neither blank nor starts with `[` (re-delegated
//! messages carry a one-line `[previous …]` prefix): `work:N`, `ask`, `auth`, `fail`, `reject`,
//! `direct`, anything else echoes (the scripts are spelled out in `scenario.rs`). Work progresses
//! on the server's own clock whether or not anyone listens; status timestamps are RFC 3339 UTC
//! with at most microseconds (like the Python server: 0, 3 or 6 digits) and strictly increase
//! across the whole agent.
//!
//! Deliberate SDK-like quirks: no `messageId` dedup unless [`AgentConfig::dedup`]; bends of
//! other servers on request ([`AgentConfig::list_ignores_filters`],
//! [`AgentConfig::replace_context_id`]); a missing
//! `A2A-Version` header is read as 0.3 and refused (-32009); `statusTimestampAfter` is inclusive
//! (Python); CancelTask on a terminal task is -32002 (Python); a status message moves into
//! `history` only when the next status replaces it (Python); a continuation stream (a message to
//! an INPUT_REQUIRED task) starts with a `statusUpdate`, not a `task` (Python); errors before the
//! first stream event are plain JSON, not SSE. `returnImmediately: true` answers with the task as
//! it was created (`TASK_STATE_SUBMITTED`).
//!
//! # Test controls (not part of A2A)
//!
//! - `GET /_scripted/stats`: [`Stats`] as JSON.
//! - `POST /_scripted/complete/{taskId}`: completes a task that is not terminal now (artifact
//!   `result` with text `completed by control`); 200 with the task, 404 unknown, 409 terminal.
//! - `POST /_scripted/forget/{taskId}`: forgets a task now, as retention would (GetTask → -32001);
//!   204, or 404 when unknown.
//! - `POST /_scripted/fail-next/{n}`: the next `n` message sends answer 503 (as `fail_mode` says),
//!   replacing what was left of the budget; 204.
//! - `POST /_scripted/not-found-next/{n}`: the next `n` HTTP+JSON requests answer a bare 404
//!   (`404 page not found`, no A2A error), as a proxy in front of an agent would; 204.
//! - `POST /_scripted/reset-load`: clears the load counters and logs below; 204.
//! - `POST /_scripted/load/{delay-ms|black-hole|rate-limit}/{value}`: switches one of the load
//!   settings below while running (`black-hole` 0 or 1, `rate-limit` 0 = none); 204.
//! - Load switches ([`AgentConfig::delay`], [`AgentConfig::black_hole`],
//!   [`AgentConfig::rate_limit`]): a slow, a hung and a rate-limited agent; [`Stats`] counts the
//!   most requests handled at once and logs when each request arrived and each 429 went out.
//!
//! A task costs about 2 KB and is kept until `forget_after` (if set) after it ends: give long
//! benchmarks a `forget_after`. A SendMessage runs at about 60 000/s on one core (release build,
//! returnImmediately, echo).
//!
//! # Invariants
//!
//! All state sits behind one `std::sync::Mutex`, never held across an await. Every task change
//! happens under it and publishes its stream event under it, so a subscriber that takes its
//! snapshot and subscribes in one critical section sees every later event exactly once.

mod fields;
mod grpc;
#[cfg(feature = "sim")]
mod in_process;
mod push;
mod rest;
mod rpc;
mod scenario;
mod sse;
mod state;

#[cfg(feature = "sim")]
pub use in_process::InProcessAgent;
pub use push::{PushFault, SLOW_PAUSE};
pub use rest::operation_name;
pub use scenario::help as scenarios_help;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use self::scenario::Scenario;
use self::state::Inner;

/// Largest JSON-RPC request body accepted, in bytes.
const MAX_BODY: usize = 1024 * 1024;

/// How the scripted agent behaves; [`Default`] is a plain, well-behaved agent.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// The card's `name`.
    pub name: String,
    /// Overrides the scenario normally taken from the first word of the message text.
    pub scenario: Option<String>,
    /// Skill ids listed on the card.
    pub skills: Vec<String>,
    /// Whether a resend with a known `messageId` returns the existing task instead of a new one.
    pub dedup: bool,
    /// Forgets terminal tasks this long after they became terminal (GetTask → -32001).
    pub forget_after: Option<Duration>,
    /// Refuses client-chosen context ids for new tasks (-32602 naming `message.contextId`).
    pub refuse_context_id: bool,
    /// Answers ListTasks with -32601, like an agent that does not implement it.
    pub no_list_tasks: bool,
    /// ListTasks ignores its `contextId` and `statusTimestampAfter` filters (lists every task).
    pub list_ignores_filters: bool,
    /// Files every new task under a context of its own, whatever contextId the client chose.
    pub replace_context_id: bool,
    /// Probability (0..=1) that a SendMessage or SendStreamingMessage answers HTTP 503.
    pub fail_rate: f64,
    /// The first this many message sends answer HTTP 503, whatever `fail_rate` says.
    pub fail_first: u32,
    /// Whether a failing send is refused before or after it is processed.
    pub fail_mode: FailMode,
    /// Cuts every SSE stream after this many events.
    pub drop_stream_after: Option<u32>,
    /// How a stream is cut.
    pub drop_mode: DropMode,
    /// The duration of one `work` step.
    pub tick: Duration,
    /// Declares `capabilities.streaming: false` and refuses streaming methods with -32004.
    pub no_streaming: bool,
    /// Declares `capabilities.pushNotifications: true`: the push config a send carries is
    /// recorded with its message, and each change of its task is pushed to it (`http://` URLs).
    pub push: bool,
    /// How those pushes go wrong, on purpose ([`PushFault`]).
    pub push_faults: Vec<PushFault>,
    /// Seed of the generator behind `fail_rate`.
    pub seed: u64,
    /// The binding served and offered on the card.
    pub binding: ServedBinding,
    /// Also serves the v1.0 gRPC binding, on the same port, and offers it on the card after
    /// `binding`'s interface (implied by [`ServedBinding::Grpc`]).
    pub grpc: bool,
    /// The tenant of the card's interface (over HTTP+JSON, the first path segment of every
    /// request).
    pub tenant: Option<String>,
    /// How this agent bends the spec, as real frameworks do ([`Bends`]).
    pub bends: Bends,
    /// Answers every JSON-RPC request this long after it arrived (a slow agent).
    pub delay: Duration,
    /// Never answers a JSON-RPC request (a hung agent); the card is still served.
    pub black_hole: bool,
    /// Answers HTTP 429 with `Retry-After: 1` to a JSON-RPC request when this many were served
    /// in the last second (a rate-limited agent).
    pub rate_limit: Option<u32>,
    /// Serves A2A v0.3 instead of v1.0: a v0.3 card (top-level `url`, `preferredTransport`,
    /// `protocolVersion: "0.3.0"`), the v0.3 method names (`message/send`, `message/stream`,
    /// `tasks/get`, `tasks/cancel`, `tasks/resubscribe`; no `tasks/list`, v1.0 names answer
    /// -32601), no `A2A-Version` check, and v0.3 payloads (`kind`, lowercase states, `final`).
    pub protocol_v03: bool,
    /// Answers HTTP 401 to every A2A request (not the card) without `Authorization: Bearer`
    /// and this token.
    pub require_token: Option<String>,
    /// Publishes an `apiKey` security scheme on the card and answers HTTP 401 to every A2A
    /// request (not the card) without this key where the scheme says.
    pub require_api_key: Option<ApiKey>,
}

/// An API key the scripted agent requires, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    /// The scheme's location: `header`, `query` or `cookie`.
    pub location: KeyLocation,
    /// The header, query parameter or cookie name.
    pub name: String,
    /// The key expected.
    pub key: String,
}

/// Where an `apiKey` scheme puts the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyLocation {
    /// A request header.
    Header,
    /// A query parameter.
    Query,
    /// A cookie.
    Cookie,
}

impl KeyLocation {
    /// The card's word for it (v1.0 `location`, v0.3 `in`).
    fn as_str(self) -> &'static str {
        match self {
            Self::Header => "header",
            Self::Query => "query",
            Self::Cookie => "cookie",
        }
    }
}

impl ApiKey {
    /// Whether a request carries the key where the scheme says.
    fn given(&self, headers: &HeaderMap, uri: &axum::http::Uri) -> bool {
        match self.location {
            KeyLocation::Header => headers
                .get_all(self.name.as_str())
                .iter()
                .any(|v| v.as_bytes() == self.key.as_bytes()),
            KeyLocation::Query => uri.query().is_some_and(|q| {
                url::form_urlencoded::parse(q.as_bytes())
                    .any(|(k, v)| k == self.name.as_str() && v == self.key.as_str())
            }),
            KeyLocation::Cookie => headers
                .get_all(header::COOKIE)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(';'))
                .filter_map(|c| c.trim().split_once('='))
                .any(|(k, v)| k == self.name && v == self.key),
        }
    }

    /// The card's `securitySchemes` and requirements, in the card's protocol version.
    fn card_fields(&self, v03: bool) -> [(&'static str, serde_json::Value); 2] {
        let (location, name) = (self.location.as_str(), self.name.as_str());
        if v03 {
            [
                (
                    "securitySchemes",
                    json!({"apiKey": {"type": "apiKey", "in": location, "name": name}}),
                ),
                ("security", json!([{"apiKey": []}])),
            ]
        } else {
            [
                (
                    "securitySchemes",
                    json!({"apiKey": {"apiKeySecurityScheme": {"location": location, "name": name}}}),
                ),
                (
                    "securityRequirements",
                    json!([{"schemes": {"apiKey": {"list": []}}}]),
                ),
            ]
        }
    }
}

/// The binding the scripted agent serves (and its card offers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ServedBinding {
    /// A2A v1.0 JSON-RPC at `POST /`.
    #[default]
    Jsonrpc,
    /// A2A v1.0 HTTP+JSON (REST) under `/`: the card offers only this interface.
    HttpJson,
    /// A2A v1.0 gRPC (`lf.a2a.v1.A2AService`, HTTP/2 without TLS) on the same port: the card
    /// offers only this interface, as `127.0.0.1:PORT` without a scheme (as the SDKs' cards do).
    Grpc,
}

impl AgentConfig {
    /// Whether the gRPC binding is served.
    fn serves_grpc(&self) -> bool {
        self.grpc || self.binding == ServedBinding::Grpc
    }
}

/// Habits of real A2A servers that bend the spec, each off by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bends {
    /// Status timestamps without a UTC offset (`2026-03-12T10:00:00.123456`), as servers built
    /// on naive date-times send them.
    pub naive_timestamps: bool,
    /// Where the INPUT_REQUIRED / AUTH_REQUIRED question goes.
    pub question_in: QuestionIn,
    /// Tasks are sent without `artifacts` (GetTask, ListTasks, SendMessage, streams' first
    /// event); each artifact's text is in the history, as an agent message, instead.
    pub history_only: bool,
    /// A reply to an INPUT_REQUIRED / AUTH_REQUIRED task is answered by a new task in the same
    /// context (the old one stays as it was).
    pub reply_new_task: bool,
    /// `SendMessage` ignores `returnImmediately` and answers once the task stops.
    pub block_send: bool,
    /// Takes only structured answers, as agents built on one popular agent SDK do: asks in
    /// text over two lines (`Agent requires input:\n- rooms: two rooms or one?`), refuses a
    /// reply without a data part shaped like the question with `-32602`, and accepts
    /// `{"rooms": "one"}`.
    pub structured_answers: bool,
}

/// The field a structured-answer agent asks for ([`Bends::structured_answers`]).
pub const STRUCTURED_FIELD: &str = "rooms";

/// Where an agent puts the question of an interrupted task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum QuestionIn {
    /// In the status message (the spec's place).
    #[default]
    Status,
    /// In an artifact named `question`; the status carries no message.
    Artifact,
    /// Only in the history, as the last agent message; the status carries no message.
    History,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            name: "scripted-agent".to_owned(),
            scenario: None,
            skills: vec!["echo".to_owned()],
            dedup: false,
            forget_after: None,
            refuse_context_id: false,
            no_list_tasks: false,
            list_ignores_filters: false,
            replace_context_id: false,
            fail_rate: 0.0,
            fail_first: 0,
            fail_mode: FailMode::Before,
            drop_stream_after: None,
            drop_mode: DropMode::Eof,
            tick: Duration::from_millis(100),
            no_streaming: false,
            push: false,
            push_faults: Vec::new(),
            seed: 0,
            binding: ServedBinding::Jsonrpc,
            grpc: false,
            tenant: None,
            bends: Bends::default(),
            delay: Duration::ZERO,
            black_hole: false,
            rate_limit: None,
            protocol_v03: false,
            require_token: None,
            require_api_key: None,
        }
    }
}

/// When a scripted HTTP 503 happens relative to processing the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum FailMode {
    /// Answers 503 without processing: nothing is created.
    #[default]
    Before,
    /// Processes the message (a task is created or continued), then answers 503.
    After,
}

/// How a stream is cut after `drop_stream_after` events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum DropMode {
    /// Ends the response body cleanly.
    #[default]
    Eof,
    /// Aborts the connection mid-body.
    Reset,
}

/// A snapshot of what the agent has seen, for tests (also served at `GET /_scripted/stats`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// How many tasks each `messageId` of a message without `taskId` created (0 for `direct`).
    pub tasks_per_message_id: BTreeMap<String, u32>,
    /// Every user message received, in arrival order (the oldest are dropped past 20 000, and
    /// texts are cut at 16 KiB).
    pub messages: Vec<ReceivedMessage>,
    /// How many messages were dropped from `messages` to bound memory.
    pub messages_dropped: u64,
    /// Task ids CancelTask was called on, every call, refused or not.
    pub cancels: Vec<String>,
    /// Requests per JSON-RPC method name.
    pub requests: BTreeMap<String, u64>,
    /// Every task in creation order, forgotten ones included.
    pub tasks: Vec<TaskSummary>,
    /// How many times the Agent Card was requested (conditional requests included).
    #[serde(default)]
    pub card_fetches: u64,
    /// The most JSON-RPC requests it was handling at once (from arrival to the answer's
    /// headers; a stream counts until its first byte).
    #[serde(default)]
    pub max_in_flight: u64,
    /// When each JSON-RPC request arrived, in unix milliseconds, in arrival order (the first
    /// 20 000).
    #[serde(default)]
    pub arrivals_ms: Vec<f64>,
    /// When each HTTP 429 (`rate_limit`) was answered, in unix milliseconds, with the
    /// `Retry-After` it gave (1 s), in order (the first 20 000).
    #[serde(default)]
    pub throttled_ms: Vec<f64>,
    /// The HTTP status each push got, in the order posted (0: no answer; the first 20 000).
    #[serde(default)]
    pub push_answers: Vec<u16>,
    /// How many pushes were queued.
    #[serde(default)]
    pub pushes_queued: u64,
    /// How many of those are done with: posted (twice under `duplicate`) or lost on purpose.
    #[serde(default)]
    pub pushes_settled: u64,
    /// The push configs deleted (`DeleteTaskPushNotificationConfig`), by id, in order.
    #[serde(default)]
    pub push_deletes: Vec<String>,
}

/// One user message as received.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceivedMessage {
    /// The message's `messageId`.
    pub message_id: String,
    /// The `taskId` it was sent on, if any.
    pub task_id: Option<String>,
    /// The `contextId` as sent, if any.
    pub context_id: Option<String>,
    /// Its text parts joined with newlines.
    pub text: String,
    /// Its `metadata`, if any.
    pub metadata: Option<serde_json::Value>,
    /// Its `referenceTaskIds` (empty when absent).
    #[serde(default)]
    pub reference_task_ids: Vec<String>,
    /// Its data parts, in order (empty when it has none).
    #[serde(default)]
    pub data: Vec<serde_json::Value>,
    /// The push config the send carried (`configuration.taskPushNotificationConfig`), if any.
    #[serde(default)]
    pub push_config: Option<serde_json::Value>,
}

/// One task the agent created.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskSummary {
    /// The task id.
    pub id: String,
    /// Its context id.
    pub context_id: String,
    /// Its current (or last, if forgotten) state.
    pub state: a2a::TaskState,
    /// The `messageId` of its first user message.
    pub message_id: String,
    /// Whether it was forgotten (`forget_after` or the forget control).
    pub forgotten: bool,
}

/// The tasks a scripted agent knows, carried over to another ([`ScriptedAgent::take_tasks`]).
pub struct Tasks(Inner);

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks").finish_non_exhaustive()
    }
}

/// A running scripted agent; dropping it stops the server too.
pub struct ScriptedAgent {
    shared: Arc<Shared>,
    port: u16,
    shutdown: watch::Sender<bool>,
    server: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for ScriptedAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedAgent")
            .field("url", &self.url())
            .finish_non_exhaustive()
    }
}

impl ScriptedAgent {
    /// Binds `127.0.0.1:port` (0 = a free port), then serves on the current tokio runtime.
    pub async fn start(cfg: AgentConfig, port: u16) -> std::io::Result<Self> {
        Self::start_with(cfg, port, None).await
    }

    /// Takes the tasks this agent knows (it knows none afterwards), to start another agent with
    /// them ([`ScriptedAgent::start_with_tasks`]): an agent with a durable store, restarted.
    pub fn take_tasks(&self) -> Tasks {
        Tasks(std::mem::replace(
            &mut *self.shared.lock(),
            Inner::new(None),
        ))
    }

    /// As [`ScriptedAgent::start`], knowing `tasks` (of an agent stopped before, say one that
    /// upgraded to another binding on the same port).
    pub async fn start_with_tasks(
        cfg: AgentConfig,
        port: u16,
        tasks: Tasks,
    ) -> std::io::Result<Self> {
        Self::start_with(cfg, port, Some(tasks.0)).await
    }

    async fn start_with(
        cfg: AgentConfig,
        port: u16,
        tasks: Option<Inner>,
    ) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let port = listener.local_addr()?.port();
        let base_url = format!("http://127.0.0.1:{port}/");
        let (shutdown, shutdown_rx) = watch::channel(false);
        let shared = Shared::new(cfg, &base_url, tasks, shutdown_rx.clone())?;
        let app = router(Arc::clone(&shared));
        let mut signal = shutdown_rx;
        let server = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
                // A dropped sender ends the wait as well.
                let _ = signal.wait_for(|stop| *stop).await;
            });
            if let Err(e) = serve.await {
                tracing::warn!("scripted agent server failed: {e}");
            }
        });
        Ok(Self {
            shared,
            port,
            shutdown,
            server: Some(server),
        })
    }

    /// Returns the base URL, `http://127.0.0.1:PORT/` (also the JSON-RPC endpoint).
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    /// Returns the URL of the agent card.
    pub fn card_url(&self) -> String {
        format!("http://127.0.0.1:{}/.well-known/agent-card.json", self.port)
    }

    /// Returns the bound port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Returns a snapshot of what the agent has seen.
    pub fn stats(&self) -> Stats {
        self.shared.stats()
    }

    /// Completes a task that is not terminal now; returns false if unknown or terminal.
    pub fn complete_task(&self, task_id: &str) -> bool {
        self.shared.lock().complete_by_control(task_id)
    }

    /// Publishes a newer WORKING status of a WORKING task (same state, a new timestamp and
    /// progress message, no artifact), as agents reporting progress do; false otherwise.
    pub fn refresh_task(&self, task_id: &str, text: &str) -> bool {
        self.shared.lock().refresh_by_control(task_id, text)
    }

    /// Forgets a task now, as retention would; returns false if unknown.
    pub fn forget_task(&self, task_id: &str) -> bool {
        self.shared.lock().forget(task_id)
    }

    /// Makes the next `n` message sends answer 503 (replacing what was left of the budget).
    pub fn fail_next(&self, n: u32) {
        self.shared.fail_budget.store(n, Ordering::Relaxed);
    }

    /// Makes the next `n` HTTP+JSON requests answer a bare 404 with no A2A error in it, as a
    /// proxy or router in front of an agent does (replacing what was left of the budget).
    pub fn not_found_next(&self, n: u32) {
        self.shared.not_found_budget.store(n, Ordering::Relaxed);
    }

    /// Switches the hung-agent mode ([`AgentConfig::black_hole`]) on or off; requests already
    /// held stay held.
    pub fn set_black_hole(&self, on: bool) {
        self.shared.load.black_hole.store(on, Ordering::Relaxed);
    }

    /// Sets [`AgentConfig::rate_limit`] (`None`: no limit).
    pub fn set_rate_limit(&self, limit: Option<u32>) {
        self.shared
            .load
            .rate_limit
            .store(limit.unwrap_or(0), Ordering::Relaxed);
    }

    /// Clears the load counters and logs ([`Stats::max_in_flight`], arrivals, 429s), so a
    /// test measures only what follows.
    pub fn reset_load(&self) {
        self.shared.load.reset();
    }

    /// Stops the server: open streams end, then the server drains (at most 5 s).
    pub async fn shutdown(mut self) {
        let _ = self.shutdown.send(true);
        if let Some(mut server) = self.server.take()
            && tokio::time::timeout(Duration::from_secs(5), &mut server)
                .await
                .is_err()
        {
            server.abort();
        }
    }
}

impl Drop for ScriptedAgent {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
    }
}

/// State shared by every request handler and work driver.
pub(crate) struct Shared {
    cfg: AgentConfig,
    scenario: Option<Scenario>,
    card: Bytes,
    etag: HeaderValue,
    /// The card's `Last-Modified`: when the agent started.
    last_modified: HeaderValue,
    rng: AtomicU64,
    fail_budget: AtomicU32,
    /// How many more HTTP+JSON requests get a bare 404 (`/_scripted/not-found-next/{n}`).
    not_found_budget: AtomicU32,
    methods: rpc::MethodCounters,
    card_fetches: AtomicU64,
    load: Load,
    inner: Mutex<Inner>,
    shutdown: watch::Receiver<bool>,
}

impl Shared {
    /// The state of an agent serving at `base_url`, knowing `tasks` (if any).
    fn new(
        cfg: AgentConfig,
        base_url: &str,
        tasks: Option<Inner>,
        shutdown_rx: watch::Receiver<bool>,
    ) -> std::io::Result<Arc<Self>> {
        let card = card_json(&cfg, base_url);
        let etag = HeaderValue::from_str(&format!("W/\"{:016x}\"", fnv1a(&card)))
            .map_err(std::io::Error::other)?;
        // The card is built once, now: it was last modified when the agent started.
        let last_modified = HeaderValue::from_str(
            &crate::clock::system_now()
                .format("%a, %d %b %Y %H:%M:%S GMT")
                .to_string(),
        )
        .map_err(std::io::Error::other)?;
        Ok(Arc::new(Shared {
            scenario: cfg.scenario.as_deref().map(Scenario::parse),
            rng: AtomicU64::new(cfg.seed),
            fail_budget: AtomicU32::new(cfg.fail_first),
            not_found_budget: AtomicU32::new(0),
            methods: rpc::MethodCounters::default(),
            card_fetches: AtomicU64::new(0),
            load: Load {
                black_hole: std::sync::atomic::AtomicBool::new(cfg.black_hole),
                rate_limit: AtomicU32::new(cfg.rate_limit.unwrap_or(0)),
                delay_us: AtomicU64::new(u64::try_from(cfg.delay.as_micros()).unwrap_or(u64::MAX)),
                ..Load::default()
            },
            inner: Mutex::new(
                tasks
                    .unwrap_or_else(|| Inner::new(cfg.forget_after))
                    .with_bends(cfg.bends)
                    .with_pusher(
                        cfg.push
                            .then(|| push::Pusher::start(cfg.push_faults.clone())),
                    ),
            ),
            cfg,
            card,
            etag,
            last_modified,
            shutdown: shutdown_rx,
        }))
    }
}

impl Shared {
    /// Locks the task store (a panic elsewhere does not make the store unusable).
    ///
    /// Terminal tasks whose retention ran out are forgotten first.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.sweep();
        inner
    }

    /// Decides whether this send fails with a scripted 503: the `fail_first` / fail-next budget
    /// first, then `fail_rate` (SplitMix64 over an atomic state).
    pub(crate) fn roll_failure(&self) -> bool {
        if self
            .fail_budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| b.checked_sub(1))
            .is_ok()
        {
            return true;
        }
        let rate = self.cfg.fail_rate;
        if rate <= 0.0 {
            return false;
        }
        if rate >= 1.0 {
            return true;
        }
        const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut z = self
            .rng
            .fetch_add(GAMMA, Ordering::Relaxed)
            .wrapping_add(GAMMA);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let unit = (z >> 11) as f64 / (1u64 << 53) as f64;
        unit < rate
    }

    fn stats(&self) -> Stats {
        let requests = self.methods.snapshot();
        let mut stats = self.lock().stats();
        stats.requests = requests;
        stats.card_fetches = self.card_fetches.load(Ordering::Relaxed);
        stats.max_in_flight = self.load.max_in_flight.load(Ordering::Relaxed);
        let log = self.load.log.lock().unwrap_or_else(PoisonError::into_inner);
        stats.arrivals_ms.clone_from(&log.arrivals_ms);
        stats.throttled_ms.clone_from(&log.throttled_ms);
        stats
    }
}

fn router(shared: Arc<Shared>) -> Router {
    let mut a2a = match shared.cfg.binding {
        ServedBinding::Jsonrpc => Router::new().route("/", post(gate)),
        ServedBinding::HttpJson => Router::new().fallback(rest::handle),
        ServedBinding::Grpc => Router::new(),
    };
    if shared.cfg.serves_grpc() {
        a2a = a2a.route_service(grpc::V1_PATH, grpc::service(Arc::clone(&shared)));
    }
    a2a.route("/.well-known/agent-card.json", get(card))
        .route("/_scripted/stats", get(stats))
        .route("/_scripted/complete/{task_id}", post(complete))
        .route("/_scripted/forget/{task_id}", post(forget))
        .route("/_scripted/fail-next/{n}", post(fail_next))
        .route("/_scripted/not-found-next/{n}", post(not_found_next))
        .route("/_scripted/reset-load", post(reset_load))
        .route("/_scripted/load/{switch}/{value}", post(set_load))
        .route("/_scripted/bookings/{task_id}", get(booking))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(shared)
}

/// Most entries kept in each of the load logs.
const MAX_LOG: usize = 20_000;

/// What the load switches keep: requests in flight, the log, the rate window.
#[derive(Default)]
struct Load {
    /// [`AgentConfig::black_hole`], switchable while running.
    black_hole: std::sync::atomic::AtomicBool,
    /// [`AgentConfig::rate_limit`] (0: none), switchable while running.
    rate_limit: AtomicU32,
    /// [`AgentConfig::delay`] in microseconds, switchable while running.
    delay_us: AtomicU64,
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
    log: Mutex<LoadLog>,
}

#[derive(Default)]
struct LoadLog {
    arrivals_ms: Vec<f64>,
    throttled_ms: Vec<f64>,
    /// When the requests served in the last second arrived.
    served: std::collections::VecDeque<tokio::time::Instant>,
}

impl Load {
    /// Clears the counters and logs (the requests in flight now stay counted).
    fn reset(&self) {
        self.max_in_flight
            .store(self.in_flight.load(Ordering::Relaxed), Ordering::Relaxed);
        let mut log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
        log.arrivals_ms.clear();
        log.throttled_ms.clear();
    }
}

/// Counts a request in flight until dropped.
struct InFlight<'a>(&'a AtomicU64);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

fn unix_ms() -> f64 {
    crate::clock::system_now().timestamp_micros() as f64 / 1000.0
}

/// `POST /`: the load switches (count, black hole, rate limit, delay), then the JSON-RPC
/// endpoint.
async fn gate(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    uri: axum::http::Uri,
    body: Bytes,
) -> Response {
    let load = &shared.load;
    let now = load.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
    let _in_flight = InFlight(&load.in_flight);
    load.max_in_flight.fetch_max(now, Ordering::Relaxed);
    let throttled = {
        let mut log = load.log.lock().unwrap_or_else(PoisonError::into_inner);
        let at = unix_ms();
        if log.arrivals_ms.len() < MAX_LOG {
            log.arrivals_ms.push(at);
        }
        let limit = load.rate_limit.load(Ordering::Relaxed);
        let throttled = (limit > 0).then_some(limit).is_some_and(|limit| {
            let now = tokio::time::Instant::now();
            while log
                .served
                .front()
                .is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(1))
            {
                log.served.pop_front();
            }
            if log.served.len() >= limit as usize {
                true
            } else {
                log.served.push_back(now);
                false
            }
        });
        if throttled && log.throttled_ms.len() < MAX_LOG {
            log.throttled_ms.push(unix_ms());
        }
        throttled
    };
    if let Some(refused) = unauthorized(&shared.cfg, &headers, &uri) {
        return refused;
    }
    if load.black_hole.load(Ordering::Relaxed) {
        let mut stop = shared.shutdown.clone();
        let _ = stop.wait_for(|stop| *stop).await;
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    if throttled {
        return (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, HeaderValue::from_static("1"))],
            "rate limited\n",
        )
            .into_response();
    }
    let delay = load.delay_us.load(Ordering::Relaxed);
    if delay > 0 {
        tokio::time::sleep(Duration::from_micros(delay)).await;
    }
    rpc::handle(State(shared.clone()), headers, uri, body).await
}

/// HTTP 401 when the agent requires a token ([`AgentConfig::require_token`]) or an API key
/// ([`AgentConfig::require_api_key`]) and the request does not carry it.
pub(crate) fn unauthorized(
    cfg: &AgentConfig,
    headers: &HeaderMap,
    uri: &axum::http::Uri,
) -> Option<Response> {
    (!authorized(cfg, headers, uri)).then(|| {
        (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"))],
            "unauthorized\n",
        )
            .into_response()
    })
}

/// Whether a request carries the token and API key the agent requires, if any.
pub(crate) fn authorized(cfg: &AgentConfig, headers: &HeaderMap, uri: &axum::http::Uri) -> bool {
    let bearer_missing = cfg.require_token.as_deref().is_some_and(|want| {
        headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            != Some(want)
    });
    let key_missing = cfg
        .require_api_key
        .as_ref()
        .is_some_and(|key| !key.given(headers, uri));
    !(bearer_missing || key_missing)
}

/// How long a client may keep the card without asking again (it changes only on a restart).
const CARD_CACHE_CONTROL: &str = "public, max-age=60";

async fn card(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    shared.card_fetches.fetch_add(1, Ordering::Relaxed);
    let fresh = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|tag| tag.trim() == shared.etag || tag.trim() == "*");
    if fresh {
        return (
            StatusCode::NOT_MODIFIED,
            [(header::ETAG, shared.etag.clone())],
        )
            .into_response();
    }
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (header::ETAG, shared.etag.clone()),
            (header::LAST_MODIFIED, shared.last_modified.clone()),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static(CARD_CACHE_CONTROL),
            ),
        ],
        shared.card.clone(),
    )
        .into_response()
}

async fn stats(State(shared): State<Arc<Shared>>) -> Response {
    match serde_json::to_vec(&shared.stats()) {
        Ok(body) => (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            body,
        )
            .into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

async fn complete(State(shared): State<Arc<Shared>>, Path(task_id): Path<String>) -> Response {
    let mut inner = shared.lock();
    if !inner.exists(&task_id) {
        return (StatusCode::NOT_FOUND, "unknown task\n").into_response();
    }
    if !inner.complete_by_control(&task_id) {
        return (StatusCode::CONFLICT, "task is terminal\n").into_response();
    }
    match inner.snapshot(&task_id, None, true) {
        Some(body) => (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            body,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "unknown task\n").into_response(),
    }
}

async fn forget(State(shared): State<Arc<Shared>>, Path(task_id): Path<String>) -> Response {
    if shared.lock().forget(&task_id) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        (StatusCode::NOT_FOUND, "unknown task\n").into_response()
    }
}

async fn booking(State(shared): State<Arc<Shared>>, Path(task_id): Path<String>) -> Response {
    match shared.lock().booking(&task_id) {
        Some(context_id) => (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            serde_json::json!({"taskId": task_id, "contextId": context_id}).to_string(),
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no such booking\n").into_response(),
    }
}

async fn reset_load(State(shared): State<Arc<Shared>>) -> StatusCode {
    shared.load.reset();
    StatusCode::NO_CONTENT
}

/// `POST /_scripted/load/{delay-ms|black-hole|rate-limit}/{value}`: switches a load setting
/// while running (`black-hole` 0 or 1; `rate-limit` 0 for none).
async fn set_load(
    State(shared): State<Arc<Shared>>,
    Path((switch, value)): Path<(String, u64)>,
) -> StatusCode {
    let load = &shared.load;
    match switch.as_str() {
        "delay-ms" => load
            .delay_us
            .store(value.saturating_mul(1000), Ordering::Relaxed),
        "black-hole" => load.black_hole.store(value != 0, Ordering::Relaxed),
        "rate-limit" => load
            .rate_limit
            .store(u32::try_from(value).unwrap_or(u32::MAX), Ordering::Relaxed),
        _ => return StatusCode::NOT_FOUND,
    }
    StatusCode::NO_CONTENT
}

async fn fail_next(State(shared): State<Arc<Shared>>, Path(n): Path<u32>) -> StatusCode {
    shared.fail_budget.store(n, Ordering::Relaxed);
    StatusCode::NO_CONTENT
}

async fn not_found_next(State(shared): State<Arc<Shared>>, Path(n): Path<u32>) -> StatusCode {
    shared.not_found_budget.store(n, Ordering::Relaxed);
    StatusCode::NO_CONTENT
}

/// Builds the v1.0 agent card once; it never changes while the agent runs.
fn card_json(cfg: &AgentConfig, base_url: &str) -> Bytes {
    let skills: Vec<_> = cfg
        .skills
        .iter()
        .map(|id| {
            json!({
                "id": id,
                "name": id,
                "description": format!("Scripted skill `{id}`: runs the scenario named by the message."),
                "tags": [id],
            })
        })
        .collect();
    if cfg.protocol_v03 {
        let card = json!({
            "name": cfg.name,
            "description": "A scripted A2A v0.3 agent for drills, demos and tests (a2a-recover).",
            "protocolVersion": "0.3.0",
            "url": base_url,
            "preferredTransport": "JSONRPC",
            "version": env!("CARGO_PKG_VERSION"),
            "capabilities": capabilities(cfg),
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": skills,
        });
        return Bytes::from(with_security(cfg, card).to_string());
    }
    // gRPC's interface is the server's `host:port`, without a scheme, as the SDKs' cards give it.
    let grpc_url = base_url.trim_start_matches("http://").trim_end_matches('/');
    let interface = |url: &str, binding: &str| {
        let mut interface = json!({
            "url": url,
            "protocolBinding": binding,
            "protocolVersion": "1.0",
        });
        if let Some(tenant) = &cfg.tenant {
            interface["tenant"] = json!(tenant);
        }
        interface
    };
    let mut interfaces = vec![match cfg.binding {
        ServedBinding::Jsonrpc => interface(base_url, "JSONRPC"),
        ServedBinding::HttpJson => interface(base_url, "HTTP+JSON"),
        ServedBinding::Grpc => interface(grpc_url, "GRPC"),
    }];
    if cfg.grpc && cfg.binding != ServedBinding::Grpc {
        interfaces.push(interface(grpc_url, "GRPC"));
    }
    let card = json!({
        "name": cfg.name,
        "description": "A scripted A2A v1.0 agent for drills, demos and tests (a2a-recover).",
        "supportedInterfaces": interfaces,
        "version": env!("CARGO_PKG_VERSION"),
        "capabilities": capabilities(cfg),
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": skills,
    });
    Bytes::from(with_security(cfg, card).to_string())
}

/// Adds the required API key's security scheme to a card.
fn with_security(cfg: &AgentConfig, mut card: serde_json::Value) -> serde_json::Value {
    if let Some(key) = &cfg.require_api_key {
        for (field, value) in key.card_fields(cfg.protocol_v03) {
            card[field] = value;
        }
    }
    card
}

/// Returns the 64-bit FNV-1a hash of `bytes` (for the card's ETag).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The card's `capabilities`: `pushNotifications` only when the agent takes push configs.
fn capabilities(cfg: &AgentConfig) -> serde_json::Value {
    let mut caps = json!({"streaming": !cfg.no_streaming});
    if cfg.push {
        caps["pushNotifications"] = json!(true);
    }
    caps
}
