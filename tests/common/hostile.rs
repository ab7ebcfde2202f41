//! A hostile A2A agent for binary tests, and a runner that measures the child's peak memory.
//!
//! [`Hostile`] is an axum server on `127.0.0.1:0` (bound before its thread starts, so no test
//! waits for readiness). It serves a valid A2A v1.0 card whose JSON-RPC interface is itself
//! (or any URL a test sets), then answers every JSON-RPC call according to its [`Mode`], which
//! a test may change between runs of the binary. Whatever the mode, a `SendMessage` is
//! *processed* first (the task is created and kept): a hostile answer never proves that
//! nothing happened, which is what makes an ambiguous send dangerous to repeat. Every request
//! is recorded (method, `Authorization` header) so tests can count sends and check credentials.
//!
//! [`run_measured`] runs the real binary with the hermetic environment of
//! [`TestEnv`](super::TestEnv) and polls `VmHWM` in `/proc/<pid>/status` every 10 ms until it
//! exits: the peak resident memory of the child, not of the test process.

use std::convert::Infallible;
use std::ffi::OsStr;
use std::process::{Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::TestEnv;
use super::child::Guarded;
use super::wait::poll;

/// How a [`Hostile`] agent answers JSON-RPC calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Valid A2A v1.0 answers, shaped by the [`Script`].
    Honest,
    /// `200 application/json` whose body is cut-off JSON.
    MalformedJson,
    /// An HTML error page with this HTTP status (200 and 502 are the interesting ones).
    Html(u16),
    /// `200 application/json`, chunked, 100 MB, produced lazily (no `Content-Length`).
    Huge,
    /// `200 application/json`, one byte a second, forever.
    Trickle,
    /// A well-formed answer carrying another JSON-RPC `id`.
    WrongId,
    /// A result whose task lacks the required `id` and `status`.
    MissingFields,
    /// `200 application/json` whose body is not UTF-8.
    InvalidUtf8,
    /// `200 text/event-stream` of garbage lines.
    SseGarbage,
    /// `200 text/event-stream` whose first event is 100 MB long.
    SseHuge,
    /// `200 text/event-stream`: the task's snapshot, then an event one byte a second that
    /// never ends (never silent, never complete).
    SseTrickle,
    /// `200 text/event-stream`: the task's snapshot, then a complete `data:` line every 200 ms
    /// and never the blank line that would end the event.
    SseEndlessEvent,
    /// `SubscribeToTask`: the task's snapshot, then, for each of `artifacts` artifacts, `chunks`
    /// `artifactUpdate` events of one `chunk_bytes` text part each (the first replaces, the
    /// others `append: true`, the last `lastChunk: true`), produced lazily, then a COMPLETED
    /// `statusUpdate`. Every chunk is small; their sum is not. Other methods are honest.
    SseAppendChunks {
        /// Artifacts streamed, one after the other.
        artifacts: usize,
        /// Chunks per artifact.
        chunks: usize,
        /// Bytes of each chunk's text.
        chunk_bytes: usize,
    },
    /// A JSON-RPC error with this code and message.
    RpcError(i64, String),
    /// HTTP 401 whose body quotes the `Authorization` header the agent received.
    EchoAuth,
    /// This status, content type and body for every JSON-RPC call, the body written as given
    /// (JSON escapes stay as the test wrote them); `{id}` in it becomes the request's id.
    Answer {
        /// The HTTP status.
        status: u16,
        /// The `Content-Type`.
        content_type: String,
        /// The body.
        body: String,
    },
    /// HTTP 429 with this `Retry-After` header, as given (seconds, an HTTP date, anything).
    Busy(String),
}

/// How the card endpoint answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CardMode {
    /// A valid v1.0 card.
    Valid,
    /// A redirect loop between the card URL and another path.
    RedirectLoop,
    /// A JSON body that is not an agent card.
    Invalid,
    /// A redirect to this URL (e.g. another origin's card).
    RedirectTo(String),
    /// A valid v1.0 card whose first interface and skill are the agent's own, followed by
    /// this many more of each (an interface is about 90 bytes: 100,000 make a 9 MB card).
    Huge {
        /// Interfaces after the first.
        interfaces: usize,
        /// Skills after the first.
        skills: usize,
    },
}

/// What an honest answer looks like: every new task copies it.
#[derive(Debug, Clone)]
pub struct Script {
    /// The task state string (e.g. `TASK_STATE_WORKING`, or an unknown spelling).
    pub state: String,
    /// The text of the status message (the question of INPUT_REQUIRED), if any.
    pub status_text: Option<String>,
    /// The role string of the status message.
    pub status_role: String,
    /// Artifact names; each artifact holds one text part.
    pub artifact_names: Vec<String>,
    /// More artifacts after those of `artifact_names`, as (name, text): each holds exactly
    /// that text (ids go on counting `a-N`).
    pub artifact_texts: Vec<(String, String)>,
    /// Task ids are this prefix followed by a number.
    pub task_prefix: String,
    /// Every new task gets exactly this id instead (however unusable: `..`).
    pub task_id: Option<String>,
    /// The status timestamp, as sent (`None`: the current time).
    pub timestamp: Option<String>,
    /// A stream sends a `statusUpdate` repeating the task's status after its snapshot.
    pub repeat_status: bool,
    /// Every `SubscribeToTask` answer stamps the task's status with the current time (a
    /// stream that sends a fresh snapshot and closes, again and again).
    pub fresh_stamps: bool,
    /// Each artifact's text part is padded with `z` to at least this many bytes.
    pub artifact_bytes: usize,
    /// `ListTasks` ignores its `contextId` filter and lists every task (other clients' too).
    pub list_ignores_filter: bool,
    /// New tasks get a context of the agent's own, whatever contextId the message carried.
    pub replace_context: bool,
    /// A `SendMessage` creates two tasks holding its message (a duplicate).
    pub twin_tasks: bool,
    /// A `SendMessage` is held unanswered and processed only when the test calls
    /// [`Hostile::release_held`] (an overloaded agent, after the client gave up).
    pub hold_sends: bool,
    /// `ListTasks` answers pages of 100 fresh tasks, each with a text part of this many bytes,
    /// and a fresh `nextPageToken`, for ever.
    pub endless_pages: Option<usize>,
}

impl Default for Script {
    fn default() -> Self {
        Self {
            state: "TASK_STATE_WORKING".to_owned(),
            status_text: None,
            status_role: "ROLE_AGENT".to_owned(),
            artifact_names: Vec::new(),
            artifact_texts: Vec::new(),
            task_prefix: "task-".to_owned(),
            task_id: None,
            timestamp: None,
            repeat_status: false,
            fresh_stamps: false,
            artifact_bytes: 0,
            list_ignores_filter: false,
            replace_context: false,
            twin_tasks: false,
            hold_sends: false,
            endless_pages: None,
        }
    }
}

/// One request as the agent saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The request path.
    pub path: String,
    /// The JSON-RPC method (empty for the card and other GETs).
    pub method: String,
    /// The `Authorization` header, if any.
    pub authorization: Option<String>,
}

#[derive(Default)]
struct Shared {
    base: String,
    mode: Mutex<Option<Mode>>,
    card: Mutex<Option<CardMode>>,
    card_name: Mutex<Option<String>>,
    interface_url: Mutex<Option<String>>,
    script: Mutex<Script>,
    seen: Mutex<Vec<Seen>>,
    tasks: Mutex<Vec<Value>>,
    held: Mutex<Vec<Value>>,
    pages: std::sync::atomic::AtomicUsize,
}

/// A hostile agent on its own thread and runtime; stopped on drop.
pub struct Hostile {
    url: String,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Hostile {
    /// Starts an honest agent with a valid card on `127.0.0.1:0`.
    pub fn start() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener.set_nonblocking(true).expect("nonblocking");
        let url = format!("http://{}", listener.local_addr().expect("local addr"));
        let shared = Arc::new(Shared {
            base: url.clone(),
            ..Shared::default()
        });
        let app = axum::Router::new().fallback({
            let shared = Arc::clone(&shared);
            move |uri: Uri, headers: HeaderMap, body: Bytes| {
                let shared = Arc::clone(&shared);
                async move {
                    if hold(&shared, &uri, &headers, &body) {
                        // Never answered: the client gives up; the test processes it later.
                        std::future::pending::<()>().await;
                    }
                    answer(&shared, &uri, &headers, &body)
                }
            }
        });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                tokio::select! {
                    served = axum::serve(listener, app) => served.expect("serve"),
                    _ = stopped => {}
                }
            });
        });
        Self {
            url,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Returns the base URL, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Sets how JSON-RPC calls are answered from now on.
    pub fn set_mode(&self, mode: Mode) {
        *self.shared.mode.lock().unwrap() = Some(mode);
    }

    /// Sets how the card is served from now on.
    pub fn set_card(&self, card: CardMode) {
        *self.shared.card.lock().unwrap() = Some(card);
    }

    /// Sets the card's `name`.
    pub fn set_card_name(&self, name: &str) {
        *self.shared.card_name.lock().unwrap() = Some(name.to_owned());
    }

    /// Makes the card name another JSON-RPC interface URL (e.g. another origin).
    pub fn set_interface_url(&self, url: &str) {
        *self.shared.interface_url.lock().unwrap() = Some(url.to_owned());
    }

    /// Sets what honest answers look like, for tasks created from now on.
    pub fn set_script(&self, script: Script) {
        *self.shared.script.lock().unwrap() = script;
    }

    /// Rewrites every task already created with the current script (state, message, artifacts).
    pub fn restyle_tasks(&self) {
        let script = self.shared.script.lock().unwrap().clone();
        for task in self.shared.tasks.lock().unwrap().iter_mut() {
            style_task(task, &script);
        }
    }

    /// Returns every request seen so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }

    /// Returns how many calls of a JSON-RPC method were received.
    pub fn count(&self, method: &str) -> usize {
        self.seen().iter().filter(|s| s.method == method).count()
    }

    /// Returns how many tasks were created (SendMessage calls processed).
    pub fn tasks_created(&self) -> usize {
        self.shared.tasks.lock().unwrap().len()
    }

    /// Returns every task the agent holds.
    pub fn tasks(&self) -> Vec<Value> {
        self.shared.tasks.lock().unwrap().clone()
    }

    /// Returns how many tasks hold a message with this messageId (the agent's own count).
    pub fn tasks_holding(&self, message_id: &str) -> usize {
        self.tasks()
            .iter()
            .filter(|t| {
                t["history"]
                    .as_array()
                    .is_some_and(|h| h.iter().any(|m| m["messageId"] == message_id))
            })
            .count()
    }

    /// Adds a task created by another client, as given.
    pub fn seed_task(&self, task: Value) {
        self.shared.tasks.lock().unwrap().push(task);
    }

    /// Processes the sends held so far ([`Script::hold_sends`]); returns how many.
    pub fn release_held(&self) -> usize {
        let held = std::mem::take(&mut *self.shared.held.lock().unwrap());
        for params in &held {
            create_task(&self.shared, params);
        }
        held.len()
    }

    /// Returns how many `ListTasks` pages were answered.
    pub fn pages_served(&self) -> usize {
        self.shared.pages.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Holds a `SendMessage` when the script says so (recorded as seen, processed on release).
fn hold(shared: &Shared, uri: &Uri, headers: &HeaderMap, body: &[u8]) -> bool {
    if !shared.script.lock().unwrap().hold_sends {
        return false;
    }
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    if request["method"] != "SendMessage" {
        return false;
    }
    shared.seen.lock().unwrap().push(Seen {
        path: uri.path().to_owned(),
        method: "SendMessage".to_owned(),
        authorization: headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
    });
    shared.held.lock().unwrap().push(request["params"].clone());
    true
}

impl Drop for Hostile {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn now() -> String {
    a2a_recover::clock::rfc3339(a2a_recover::clock::system_now())
}

#[expect(clippy::too_many_lines, reason = "a table: one arm per hostile mode")]
fn answer(shared: &Shared, uri: &Uri, headers: &HeaderMap, body: &[u8]) -> Response {
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let method = request
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    shared.seen.lock().unwrap().push(Seen {
        path: uri.path().to_owned(),
        method: method.clone(),
        authorization: authorization.clone(),
    });
    if method.is_empty() {
        return card(shared, uri.path());
    }
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let params = request.get("params").cloned().unwrap_or(Value::Null);
    // A send is processed whatever is answered: garbage never proves nothing happened.
    let created = (method == "SendMessage").then(|| create_task(shared, &params));
    let mode = shared.mode.lock().unwrap().clone().unwrap_or(Mode::Honest);
    match mode {
        Mode::SseAppendChunks {
            artifacts,
            chunks,
            chunk_bytes,
        } if method == "SubscribeToTask" => {
            let task = result_for(shared, "GetTask", &params, None);
            if task.is_null() {
                return honest(shared, &method, &id, &params, created);
            }
            append_chunks(&id, &task, artifacts, chunks, chunk_bytes)
        }
        Mode::Honest | Mode::SseAppendChunks { .. } => {
            honest(shared, &method, &id, &params, created)
        }
        Mode::MalformedJson => plain(
            StatusCode::OK,
            "application/json",
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"task":{{"id":"#),
        ),
        Mode::Html(status) => plain(
            StatusCode::from_u16(status).expect("status"),
            "text/html",
            "<!DOCTYPE html><html><head><title>\u{1b}]0;pwned-title\u{7}Bad Gateway</title>\
             </head><body><h1>\u{1b}[31m502 Bad Gateway\r</h1><p>nginx \u{202e}x</p></body>\
             </html>",
        ),
        Mode::Huge => {
            let head = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"task":{{"id":""#);
            plain(StatusCode::OK, "application/json", lazy_body(head, b'x'))
        }
        Mode::Trickle => plain(StatusCode::OK, "application/json", trickle()),
        Mode::WrongId => rpc(
            &json!("not-your-id"),
            "result",
            &result_for(shared, &method, &params, created),
        ),
        Mode::MissingFields => rpc(
            &id,
            "result",
            &if method == "SendMessage" {
                json!({"task": {"contextId": "c-1"}})
            } else if method == "ListTasks" {
                json!({"tasks": [{"contextId": "c-1"}], "nextPageToken": ""})
            } else {
                json!({"contextId": "c-1", "artifacts": [{"parts": []}]})
            },
        ),
        Mode::InvalidUtf8 => {
            let mut bytes =
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"task":{{"id":"t"#).into_bytes();
            bytes.extend_from_slice(&[0xff, 0xfe, 0xc3, 0x28]);
            bytes.extend_from_slice(br#"","status":{"state":"TASK_STATE_WORKING"}}}}"#);
            plain(StatusCode::OK, "application/json", bytes)
        }
        Mode::SseGarbage => plain(
            StatusCode::OK,
            "text/event-stream",
            "garbage line\nretry: soon\n:comment\n\ndata: {not json\n\ndata: \u{1b}[31m\n\n\
             event: error\ndata: {\"what\":1}\n\n",
        ),
        Mode::SseHuge => {
            let head = format!(
                r#"data: {{"jsonrpc":"2.0","id":{id},"result":{{"task":{{"id":"t","contextId":""#
            );
            plain(StatusCode::OK, "text/event-stream", lazy_body(head, b'y'))
        }
        Mode::SseTrickle => {
            let task = result_for(shared, "GetTask", &params, None);
            let first = json!({"jsonrpc": "2.0", "id": id, "result": {"task": task}});
            plain(
                StatusCode::OK,
                "text/event-stream",
                trickle_after(format!("data: {first}\n\n").into_bytes()),
            )
        }
        Mode::SseEndlessEvent => {
            let task = result_for(shared, "GetTask", &params, None);
            let first = json!({"jsonrpc": "2.0", "id": id, "result": {"task": task}});
            let head = futures_util::stream::iter([Ok::<_, Infallible>(Bytes::from(format!(
                "data: {first}\n\n"
            )))]);
            let tail = futures_util::stream::unfold((), |()| async {
                // The pace of an endless event is the behaviour under test: time must pass.
                tokio::time::sleep(Duration::from_millis(200)).await;
                Some((Ok::<_, Infallible>(Bytes::from_static(b"data: {\n")), ()))
            });
            plain(
                StatusCode::OK,
                "text/event-stream",
                Body::from_stream(futures_util::StreamExt::chain(head, tail)),
            )
        }
        Mode::RpcError(code, message) => {
            rpc(&id, "error", &json!({"code": code, "message": message}))
        }
        Mode::Answer {
            status,
            content_type,
            body,
        } => plain(
            StatusCode::from_u16(status).expect("status"),
            &content_type,
            body.replace("{id}", &id.to_string()),
        ),
        Mode::Busy(retry_after) => Response::builder()
            .status(StatusCode::TOO_MANY_REQUESTS)
            .header(header::RETRY_AFTER, retry_after)
            .header(header::CONTENT_TYPE, "text/plain")
            .body(Body::from("slow down\n"))
            .expect("response"),
        Mode::EchoAuth => plain(
            StatusCode::UNAUTHORIZED,
            "application/json",
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600,
                "message": format!("bad credentials: {}", authorization.unwrap_or_default())}})
            .to_string(),
        ),
    }
}

/// The card, or a redirect loop, or garbage.
fn card(shared: &Shared, path: &str) -> Response {
    let mode = shared
        .card
        .lock()
        .unwrap()
        .clone()
        .unwrap_or(CardMode::Valid);
    match mode {
        CardMode::RedirectLoop => {
            let next = if path == "/loop" {
                "/.well-known/agent-card.json"
            } else {
                "/loop"
            };
            Response::builder()
                .status(StatusCode::FOUND)
                .header(header::LOCATION, next)
                .body(Body::empty())
                .expect("response")
        }
        CardMode::RedirectTo(to) => Response::builder()
            .status(StatusCode::FOUND)
            .header(header::LOCATION, to)
            .body(Body::empty())
            .expect("response"),
        CardMode::Invalid => plain(
            StatusCode::OK,
            "application/json",
            r#"{"name": 42, "supportedInterfaces": "yes"}"#,
        ),
        CardMode::Huge { interfaces, skills } => {
            let mut card = valid_card(shared);
            let list = card["supportedInterfaces"]
                .as_array_mut()
                .expect("interfaces");
            list.extend((0..interfaces).map(|i| {
                json!({"url": format!("{}/rpc/{i:06}", shared.base), "protocolBinding": "JSONRPC",
                       "protocolVersion": "1.0"})
            }));
            let list = card["skills"].as_array_mut().expect("skills");
            list.extend(
                (0..skills)
                    .map(|i| json!({"id": format!("skill-{i}"), "name": "more", "tags": []})),
            );
            plain(StatusCode::OK, "application/json", card.to_string())
        }
        CardMode::Valid => plain(
            StatusCode::OK,
            "application/json",
            valid_card(shared).to_string(),
        ),
    }
}

/// The valid v1.0 card: one JSON-RPC interface (its own, unless a test set another).
fn valid_card(shared: &Shared) -> Value {
    let url = shared
        .interface_url
        .lock()
        .unwrap()
        .clone()
        .unwrap_or_else(|| format!("{}/rpc", shared.base));
    let name = shared
        .card_name
        .lock()
        .unwrap()
        .clone()
        .unwrap_or_else(|| "Hostile agent".to_owned());
    json!({
        "name": name,
        "description": "an agent that misbehaves on purpose",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "hostile", "name": "Hostile", "description": "misbehaves",
                    "tags": ["test"]}]
    })
}

fn create_task(shared: &Shared, params: &Value) -> Value {
    let script = shared.script.lock().unwrap().clone();
    let mut tasks = shared.tasks.lock().unwrap();
    let message = params.get("message").cloned().unwrap_or(Value::Null);
    // A message on an existing task (a reply) continues it.
    if let Some(task_id) = message.get("taskId").and_then(Value::as_str)
        && let Some(task) = tasks.iter_mut().find(|t| t["id"] == task_id)
    {
        if let Some(Value::Array(history)) = task.get_mut("history") {
            history.push(message.clone());
        }
        style_task(task, &script);
        return task.clone();
    }
    let context_id = message
        .get("contextId")
        .and_then(Value::as_str)
        .filter(|_| !script.replace_context)
        .map_or_else(|| format!("ctx-{}", tasks.len() + 1), str::to_owned);
    let mut user = message.clone();
    if let Value::Object(m) = &mut user {
        m.insert("contextId".to_owned(), json!(context_id));
    }
    let id = script
        .task_id
        .clone()
        .unwrap_or_else(|| format!("{}{}", script.task_prefix, tasks.len() + 1));
    let mut task = json!({
        "id": id,
        "contextId": context_id,
        "status": {},
        "history": [user],
    });
    style_task(&mut task, &script);
    tasks.push(task.clone());
    if script.twin_tasks {
        let mut twin = task.clone();
        twin["id"] = json!(format!("{}{}", script.task_prefix, tasks.len() + 1));
        tasks.push(twin);
    }
    task
}

fn style_task(task: &mut Value, script: &Script) {
    let stamp = script.timestamp.clone().unwrap_or_else(now);
    let mut status = json!({"state": script.state, "timestamp": stamp});
    if let Some(text) = &script.status_text {
        status["message"] = json!({
            "messageId": format!("m-{}", uuid::Uuid::new_v4()),
            "role": script.status_role,
            "parts": [{"text": text}],
        });
    }
    task["status"] = status;
    let named = script.artifact_names.iter().map(|name| {
        (
            name,
            padded(format!("content of {name}"), script.artifact_bytes),
        )
    });
    let given = script
        .artifact_texts
        .iter()
        .map(|(name, text)| (name, text.clone()));
    let artifacts: Vec<Value> = named
        .chain(given)
        .enumerate()
        .map(|(i, (name, text))| {
            json!({"artifactId": format!("a-{i}"), "name": name, "parts": [{"text": text}]})
        })
        .collect();
    if artifacts.is_empty() {
        if let Value::Object(m) = task {
            m.remove("artifacts");
        }
    } else {
        task["artifacts"] = Value::Array(artifacts);
    }
}

/// The `result` an honest agent gives for a method.
fn result_for(shared: &Shared, method: &str, params: &Value, created: Option<Value>) -> Value {
    let tasks = shared.tasks.lock().unwrap();
    let by_id = |id: &str| tasks.iter().find(|t| t["id"] == id).cloned();
    match method {
        "SendMessage" => json!({"task": created.unwrap_or(Value::Null)}),
        "GetTask" | "CancelTask" => {
            by_id(params["id"].as_str().unwrap_or_default()).unwrap_or(Value::Null)
        }
        "ListTasks" => {
            let script = shared.script.lock().unwrap().clone();
            shared
                .pages
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if let Some(size) = script.endless_pages {
                return endless_page(size);
            }
            let context = params
                .get("contextId")
                .and_then(Value::as_str)
                .filter(|_| !script.list_ignores_filter);
            let list: Vec<Value> = tasks
                .iter()
                .filter(|t| context.is_none_or(|c| t["contextId"] == c))
                .cloned()
                .collect();
            let n = list.len();
            json!({"tasks": list, "nextPageToken": "", "pageSize": 100, "totalSize": n})
        }
        _ => Value::Null,
    }
}

/// A page of 100 fresh tasks of another client, each with `size` bytes of text, and a fresh
/// `nextPageToken`.
fn endless_page(size: usize) -> Value {
    let text = "z".repeat(size);
    let tasks: Vec<Value> = (0..100)
        .map(|_| {
            let id = uuid::Uuid::new_v4();
            json!({"id": format!("other-{id}"), "contextId": format!("theirs-{id}"),
                   "status": {"state": "TASK_STATE_COMPLETED", "timestamp": now()},
                   "history": [{"messageId": format!("m-{id}"), "role": "ROLE_USER",
                                "parts": [{"text": text}]}]})
        })
        .collect();
    json!({"tasks": tasks, "nextPageToken": uuid::Uuid::new_v4().to_string(),
           "pageSize": 100, "totalSize": 1_000_000})
}

fn honest(
    shared: &Shared,
    method: &str,
    id: &Value,
    params: &Value,
    created: Option<Value>,
) -> Response {
    match method {
        "SendMessage" | "ListTasks" => {
            rpc(id, "result", &result_for(shared, method, params, created))
        }
        "GetTask" | "CancelTask" => match result_for(shared, method, params, None) {
            Value::Null => rpc(
                id,
                "error",
                &json!({"code": -32001, "message": "Task not found"}),
            ),
            task => rpc(id, "result", &task),
        },
        "SubscribeToTask" => match result_for(shared, "GetTask", params, None) {
            Value::Null => rpc(
                id,
                "error",
                &json!({"code": -32001, "message": "Task not found"}),
            ),
            mut task => {
                if shared.script.lock().unwrap().fresh_stamps {
                    task["status"]["timestamp"] = json!(now());
                }
                let event = json!({"jsonrpc": "2.0", "id": id, "result": {"task": task}});
                let mut body = vec![format!("data: {event}\n\n")];
                if shared.script.lock().unwrap().repeat_status {
                    let update = json!({"jsonrpc": "2.0", "id": id, "result": {"statusUpdate": {
                        "taskId": task["id"], "contextId": task["contextId"],
                        "status": task["status"]}}});
                    body.push(format!("data: {update}\n\n"));
                }
                plain(StatusCode::OK, "text/event-stream", body.concat())
            }
        },
        _ => rpc(
            id,
            "error",
            &json!({"code": -32601, "message": "Method not found"}),
        ),
    }
}

/// `text` padded with `z` to at least `len` bytes.
fn padded(mut text: String, len: usize) -> String {
    while text.len() < len {
        text.push('z');
    }
    text
}

/// The event stream of [`Mode::SseAppendChunks`], produced as it is read.
fn append_chunks(
    id: &Value,
    task: &Value,
    artifacts: usize,
    chunks: usize,
    chunk_bytes: usize,
) -> Response {
    let (id, task) = (id.clone(), task.clone());
    let text = "c".repeat(chunk_bytes);
    let event = move |n: usize| -> Bytes {
        let result = if n == 0 {
            json!({"task": task})
        } else if n <= artifacts * chunks {
            let (artifact, chunk) = ((n - 1) / chunks, (n - 1) % chunks);
            json!({"artifactUpdate": {
                "taskId": task["id"], "contextId": task["contextId"],
                "artifact": {"artifactId": format!("big-{artifact}"),
                             "name": format!("big{artifact}"),
                             "parts": [{"text": text}]},
                "append": chunk > 0, "lastChunk": chunk + 1 == chunks}})
        } else {
            json!({"statusUpdate": {"taskId": task["id"], "contextId": task["contextId"],
                   "status": {"state": "TASK_STATE_COMPLETED", "timestamp": now()}}})
        };
        let line = json!({"jsonrpc": "2.0", "id": id, "result": result});
        Bytes::from(format!("data: {line}\n\n"))
    };
    let total = artifacts * chunks + 2;
    let body = futures_util::stream::iter((0..total).map(move |n| Ok::<_, Infallible>(event(n))));
    plain(StatusCode::OK, "text/event-stream", Body::from_stream(body))
}

fn rpc(id: &Value, member: &str, value: &Value) -> Response {
    plain(
        StatusCode::OK,
        "application/json",
        json!({"jsonrpc": "2.0", "id": id, member: value}).to_string(),
    )
}

fn plain(status: StatusCode, content_type: &str, body: impl Into<Body>) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type)
        .body(body.into())
        .expect("response")
}

/// How many bytes a lazy body holds after its head: 100 MB.
pub const HUGE: usize = 100 * 1024 * 1024;

static FILL_X: [u8; 64 * 1024] = [b'x'; 64 * 1024];
static FILL_Y: [u8; 64 * 1024] = [b'y'; 64 * 1024];

/// `head` then [`HUGE`] bytes of `fill`, in 64 KiB chunks produced on demand.
fn lazy_body(head: String, fill: u8) -> Body {
    let chunk: &'static [u8] = if fill == b'x' { &FILL_X } else { &FILL_Y };
    let head = std::iter::once(Ok::<_, Infallible>(Bytes::from(head)));
    let tail = (0..HUGE / chunk.len()).map(move |_| Ok(Bytes::from_static(chunk)));
    Body::from_stream(futures_util::stream::iter(head.chain(tail)))
}

/// A JSON answer one byte a second, never finished.
fn trickle() -> Body {
    trickle_after(Vec::new())
}

/// `first` at once, then `data: {"jsonrpc": "2.0"` and spaces one byte a second, forever.
fn trickle_after(first: Vec<u8>) -> Body {
    let head = futures_util::stream::iter(
        (!first.is_empty()).then(|| Ok::<_, Infallible>(Bytes::from(first))),
    );
    let tail = futures_util::stream::unfold(0_usize, |n| async move {
        if n > 0 {
            // A byte a second is the trickle under test: time must pass.
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        const DRIP: &[u8] = b"data: {\"jsonrpc\": \"2.0\"      ";
        let byte = DRIP[n % DRIP.len()];
        Some((Ok::<_, Infallible>(Bytes::copy_from_slice(&[byte])), n + 1))
    });
    Body::from_stream(futures_util::StreamExt::chain(head, tail))
}

// ---------------------------------------------------------------------------------------------
// Running the binary with its peak memory measured
// ---------------------------------------------------------------------------------------------

/// What a measured run of the binary gave.
#[derive(Debug)]
pub struct Measured {
    /// Exit status, stdout and stderr.
    pub out: Output,
    /// The child's peak resident set (`VmHWM`), in KiB; the highest value seen while polling.
    pub peak_rss_kib: u64,
}

/// The longest a measured run may take before it is killed as hung.
pub const HANG_GUARD: Duration = Duration::from_secs(180);

/// Reads `VmHWM` (KiB) of a live process; `None` once it has exited.
fn vm_hwm(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Runs the binary in `env`'s hermetic environment (plus `vars`), polling its peak memory
/// every 10 ms; kills it and panics after [`HANG_GUARD`].
pub fn run_measured<I, S>(env: &TestEnv, args: I, vars: &[(&str, &str)]) -> Measured
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = env.std_cmd();
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let mut child = Guarded::spawn(&mut cmd, "the binary");
    let stdout = drain(child.stdout.take().expect("stdout"));
    let stderr = drain(child.stderr.take().expect("stderr"));
    let mut peak = 0;
    let exited = poll(HANG_GUARD, || {
        if let Some(hwm) = vm_hwm(child.id()) {
            peak = peak.max(hwm);
        }
        child.try_wait().expect("wait").ok_or(())
    });
    let Ok(status) = exited else {
        panic!("the binary hung for more than {HANG_GUARD:?}");
    };
    Measured {
        out: Output {
            status,
            stdout: stdout.join().expect("stdout reader"),
            stderr: stderr.join().expect("stderr reader"),
        },
        peak_rss_kib: peak,
    }
}

fn drain(mut pipe: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        buf
    })
}
