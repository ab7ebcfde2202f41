//! Servers on loopback for the tests: any value served from a background runtime
//! ([`Background`]), the scripted agent ([`agent`]) and a delaying proxy ([`SlowProxy`]).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use a2a_recover::scripted_agent::{AgentConfig, ScriptedAgent, Stats};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use super::wait::wait_until;

/// A value served from a tokio runtime on a background thread, stopped on drop.
pub struct Background<T> {
    value: Option<T>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl<T: Send + 'static> Background<T> {
    /// Runs `start` on a new current-thread runtime and keeps that runtime serving until drop.
    pub fn start<F, Fut>(start: F) -> Self
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = T>,
    {
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let value = start().await;
                tx.send(value).expect("send the started value");
                let _ = stopped.await;
            });
        });
        let value = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("background server started");
        Self {
            value: Some(value),
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    pub fn get(&self) -> &T {
        self.value.as_ref().expect("running")
    }
}

impl<T> Drop for Background<T> {
    fn drop(&mut self) {
        drop(self.value.take());
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Starts a scripted agent on `127.0.0.1:0`.
pub fn agent(cfg: AgentConfig) -> Background<ScriptedAgent> {
    Background::start(move || async move { ScriptedAgent::start(cfg, 0).await.expect("agent") })
}

impl Background<ScriptedAgent> {
    pub fn url(&self) -> String {
        self.get().url()
    }

    pub fn stats(&self) -> Stats {
        self.get().stats()
    }

    /// Stops the agent and starts it again on the same port with `cfg`, knowing the same tasks
    /// (an agent with a durable store that upgraded, say to another binding).
    pub fn restart(mut self, cfg: AgentConfig) -> Self {
        let old = self.value.take().expect("running");
        let (port, tasks) = (old.port(), old.take_tasks());
        drop(old);
        drop(self);
        Background::start(move || async move {
            ScriptedAgent::start_with_tasks(cfg, port, tasks)
                .await
                .expect("agent restarted on its port")
        })
    }

    /// Waits until no task of the agent is SUBMITTED or WORKING any more, so what a command
    /// then reads of it no longer depends on timing (hang guard: 30 s).
    pub fn settle(&self) {
        wait_until("the agent's tasks to end", Duration::from_secs(30), || {
            !self.stats().tasks.iter().any(|t| {
                let state = serde_json::to_value(&t.state).expect("a state");
                state == "TASK_STATE_SUBMITTED" || state == "TASK_STATE_WORKING"
            })
        });
    }
}

// ---------------------------------------------------------------------------------------------
// A slow agent: a delaying proxy in front of a scripted agent
// ---------------------------------------------------------------------------------------------

/// A proxy that forwards every request to a scripted agent after `delay`, rewriting the agent
/// card so that its interfaces point at the proxy.
pub struct SlowProxy {
    url: String,
    delay_ms: Arc<AtomicU64>,
}

#[derive(Clone)]
struct ProxyState {
    upstream: String,
    own: String,
    delay_ms: Arc<AtomicU64>,
    http: reqwest::Client,
}

impl SlowProxy {
    /// Starts a proxy to `upstream` (`http://127.0.0.1:PORT/`), with no delay yet.
    pub fn start(upstream: String) -> Background<Self> {
        Background::start(move || async move {
            let listener = bind_loopback().await;
            let url = format!(
                "http://127.0.0.1:{}/",
                listener.local_addr().unwrap().port()
            );
            let delay_ms = Arc::new(AtomicU64::new(0));
            let state = ProxyState {
                upstream,
                own: url.clone(),
                delay_ms: Arc::clone(&delay_ms),
                http: reqwest::Client::new(),
            };
            serve(
                listener,
                axum::Router::new().fallback(forward).with_state(state),
            );
            Self { url, delay_ms }
        })
    }
}

/// Binds a free port on 127.0.0.1.
pub async fn bind_loopback() -> tokio::net::TcpListener {
    tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .expect("bind")
}

/// Serves `app` on `listener` from the current runtime until it stops.
pub fn serve(listener: tokio::net::TcpListener, app: axum::Router) {
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
}

/// Sends a request on to `upstream` as it came (its path, headers but `host` and
/// `content-length`, and body); `None` when the upstream cannot be reached.
pub async fn send_upstream(
    http: &reqwest::Client,
    upstream: &str,
    method: Method,
    path: &str,
    headers: &HeaderMap,
    body: Bytes,
) -> Option<reqwest::Response> {
    let target = format!("{}{}", upstream.trim_end_matches('/'), path);
    let mut req = http.request(method, target).body(body);
    for (name, value) in headers {
        if name != "host" && name != "content-length" {
            req = req.header(name, value);
        }
    }
    req.send().await.ok()
}

impl Background<SlowProxy> {
    pub fn url(&self) -> String {
        self.get().url.clone()
    }

    /// Delays every later request by `ms` milliseconds.
    pub fn set_delay(&self, ms: u64) {
        self.get().delay_ms.store(ms, Ordering::SeqCst);
    }
}

async fn forward(
    State(s): State<ProxyState>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let delay = s.delay_ms.load(Ordering::SeqCst);
    if delay > 0 {
        // The proxy's delay is the slowness under test: time must pass.
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let Some(resp) = send_upstream(&s.http, &s.upstream, method, path, &headers, body).await else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    let status = resp.status();
    let content_type = resp.headers().get("content-type").cloned();
    let Ok(bytes) = resp.bytes().await else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    let mut body = bytes.to_vec();
    if path.starts_with("/.well-known/") {
        body = String::from_utf8_lossy(&body)
            .replace(&s.upstream, &s.own)
            .into_bytes();
    }
    let mut out = (status, body).into_response();
    if let Some(ct) = content_type {
        out.headers_mut().insert("content-type", ct);
    }
    out
}
