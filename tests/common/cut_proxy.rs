//! A proxy that cuts event streams: it forwards every request to an agent (rewriting the agent
//! card so that its interfaces point at the proxy) and ends the first `cuts` SSE answers cleanly
//! after `after` complete events, the way a load balancer with a short idle limit does. Every
//! other answer passes through as it came, streams included.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt as _;

use super::agent::{Background, bind_loopback, send_upstream, serve};

/// The running proxy.
pub struct CutProxy {
    url: String,
    cut: Arc<AtomicU64>,
}

#[derive(Clone)]
struct ProxyState {
    upstream: String,
    own: String,
    after: u64,
    cuts_left: Arc<AtomicU64>,
    cut: Arc<AtomicU64>,
    http: reqwest::Client,
}

impl CutProxy {
    /// Starts a proxy to `upstream` (`http://127.0.0.1:PORT/`) cutting the first `cuts` event
    /// streams after `after` events each.
    pub fn start(upstream: String, after: u64, cuts: u64) -> Background<Self> {
        Background::start(move || async move {
            let listener = bind_loopback().await;
            let url = format!(
                "http://127.0.0.1:{}/",
                listener.local_addr().unwrap().port()
            );
            let cut = Arc::new(AtomicU64::new(0));
            let state = ProxyState {
                upstream,
                own: url.clone(),
                after,
                cuts_left: Arc::new(AtomicU64::new(cuts)),
                cut: Arc::clone(&cut),
                http: reqwest::Client::new(),
            };
            serve(
                listener,
                axum::Router::new().fallback(forward).with_state(state),
            );
            Self { url, cut }
        })
    }
}

impl Background<CutProxy> {
    pub fn url(&self) -> String {
        self.get().url.clone()
    }

    /// How many streams were cut so far.
    pub fn cut(&self) -> u64 {
        self.get().cut.load(Ordering::SeqCst)
    }
}

/// Counts complete SSE events (a blank line ends one; `\r\n` and `\n` line ends).
struct EventEnds {
    line_empty: bool,
    seen: u64,
}

impl EventEnds {
    /// Feeds bytes; returns the index just past the byte that completed event number `limit`.
    fn feed(&mut self, bytes: &[u8], limit: u64) -> Option<usize> {
        for (i, b) in bytes.iter().enumerate() {
            match b {
                b'\n' if self.line_empty => {
                    self.seen += 1;
                    if self.seen >= limit {
                        return Some(i + 1);
                    }
                }
                b'\n' => self.line_empty = true,
                b'\r' => {}
                _ => self.line_empty = false,
            }
        }
        None
    }
}

async fn forward(
    State(s): State<ProxyState>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let Some(resp) = send_upstream(&s.http, &s.upstream, method, path, &headers, body).await else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    let status = resp.status();
    let content_type = resp.headers().get("content-type").cloned();
    let streaming = content_type
        .as_ref()
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let mut out = if streaming {
        let cutting = s
            .cuts_left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        let ends = EventEnds {
            line_empty: false,
            seen: 0,
        };
        let after = s.after;
        let cut = Arc::clone(&s.cut);
        let upstream = Box::pin(resp.bytes_stream());
        let stream = futures_util::stream::unfold(
            (upstream, ends, false),
            move |(mut upstream, mut ends, done)| {
                let cut = Arc::clone(&cut);
                async move {
                    if done {
                        return None;
                    }
                    let Ok(chunk) = upstream.next().await? else {
                        let e = std::io::Error::other("upstream broke");
                        return Some((Err(e), (upstream, ends, true)));
                    };
                    if cutting && let Some(end) = ends.feed(&chunk, after) {
                        cut.fetch_add(1, Ordering::SeqCst);
                        return Some((Ok(chunk.slice(..end)), (upstream, ends, true)));
                    }
                    Some((Ok(chunk), (upstream, ends, false)))
                }
            },
        );
        (status, Body::from_stream(stream)).into_response()
    } else {
        let Ok(bytes) = resp.bytes().await else {
            return StatusCode::BAD_GATEWAY.into_response();
        };
        let mut body = bytes.to_vec();
        if path.starts_with("/.well-known/") {
            body = String::from_utf8_lossy(&body)
                .replace(&s.upstream, &s.own)
                .into_bytes();
        }
        (status, body).into_response()
    };
    if let Some(ct) = content_type {
        out.headers_mut().insert("content-type", ct);
    }
    out
}
