//! Server-sent event bodies for SendStreamingMessage and SubscribeToTask.
//!
//! Each event is `data: <JSON-RPC response with the request id, result = StreamResponse>` (over
//! HTTP+JSON `data: <StreamResponse>`) and a blank line, with `\n` line ends (like the JS server). A stream ends after an event that stops
//! it (terminal or interrupted state; a v1.0 `SubscribeToTask` stream goes on past an interrupted
//! state until the task ends), when the task's channel closes, when the subscriber falls
//! more than a buffer behind, or at shutdown. With `drop_stream_after` it is cut after K events:
//! cleanly ([`DropMode::Eof`]) or by failing the body so the connection is aborted
//! ([`DropMode::Reset`]).

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::StreamExt as _;
use tokio::sync::watch;

use super::state::EventRx;
use super::{DropMode, Shared};

/// The events a stream starts with, before live ones.
pub(crate) struct Start {
    /// `StreamResponse` JSONs sent first (a Task snapshot, or a direct Message).
    pub(crate) initial: Vec<Bytes>,
    /// Live events; `None` when the stream ends after `initial`.
    pub(crate) rx: Option<EventRx>,
    /// Whether the stream goes on past an interrupted state (INPUT_REQUIRED, AUTH_REQUIRED)
    /// and ends only when the task does: a v1.0 `SubscribeToTask`'s. A message stream ends at
    /// an interrupted state, as the Python server's does.
    pub(crate) until_terminal: bool,
}

impl Start {
    /// A stream that ends at a terminal or interrupted state.
    pub(crate) fn new(initial: Vec<Bytes>, rx: Option<EventRx>) -> Self {
        Self {
            initial,
            rx,
            until_terminal: false,
        }
    }
}

struct State {
    initial: VecDeque<Bytes>,
    rx: Option<EventRx>,
    sent: u32,
    limit: Option<u32>,
    mode: DropMode,
    shutdown: watch::Receiver<bool>,
    done: bool,
    until_terminal: bool,
}

/// Builds the SSE response for a stream; `id` is the JSON-RPC request id as JSON (`None` over
/// HTTP+JSON, whose events are bare `StreamResponse`s).
pub(crate) fn response(shared: &Arc<Shared>, id: Option<Bytes>, start: Start) -> Response {
    let v03 = shared.cfg.protocol_v03;
    let stream = events(shared, start).map(move |event| {
        event.map(|json| {
            let json = if v03 { v03_event(&json) } else { json };
            match &id {
                Some(id) => frame(id, &json),
                None => bare_frame(&json),
            }
        })
    });
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        Body::from_stream(stream),
    )
        .into_response()
}

/// A stream's events as v1.0 `StreamResponse` JSONs, whatever the binding that frames them:
/// the initial ones, then live ones until the stream ends (an error when it is cut by
/// [`DropMode::Reset`]).
pub(crate) fn events(
    shared: &Arc<Shared>,
    start: Start,
) -> impl futures_util::Stream<Item = io::Result<Bytes>> + Send + 'static {
    let state = State {
        initial: start.initial.into(),
        rx: start.rx,
        sent: 0,
        limit: shared.cfg.drop_stream_after,
        mode: shared.cfg.drop_mode,
        shutdown: shared.shutdown.clone(),
        done: false,
        until_terminal: start.until_terminal,
    };
    futures_util::stream::unfold(state, next)
}

async fn next(mut st: State) -> Option<(io::Result<Bytes>, State)> {
    if st.done || (st.initial.is_empty() && st.rx.is_none()) {
        return None;
    }
    if let Some(limit) = st.limit
        && st.sent >= limit
    {
        st.done = true;
        return match st.mode {
            DropMode::Eof => None,
            DropMode::Reset => {
                // Let the server flush the events so far, so the cut lands mid-stream.
                tokio::task::yield_now().await;
                Some((
                    Err(io::Error::new(
                        io::ErrorKind::ConnectionReset,
                        "scripted stream reset",
                    )),
                    st,
                ))
            }
        };
    }
    let json = if let Some(json) = st.initial.pop_front() {
        json
    } else {
        let rx = st.rx.as_mut()?;
        let event = tokio::select! {
            // A closed channel or a subscriber that fell behind ends the stream cleanly.
            received = rx.recv() => received.ok()?,
            _ = st.shutdown.wait_for(|stop| *stop) => return None,
        };
        // A terminal state also closes the task's channel: the stream ends after it either way.
        if event.stops && !st.until_terminal {
            st.rx = None;
        }
        event.json.clone()
    };
    st.sent += 1;
    Some((Ok(json), st))
}

/// Rewrites one v1.0 `StreamResponse` as the bare v0.3 event; a status update whose state ends
/// the stream (terminal or interrupted) carries `final: true`.
fn v03_event(json: &[u8]) -> Bytes {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(json) else {
        return Bytes::copy_from_slice(json);
    };
    let state = v
        .pointer("/statusUpdate/status/state")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    let last = matches!(
        state,
        "TASK_STATE_COMPLETED"
            | "TASK_STATE_FAILED"
            | "TASK_STATE_CANCELED"
            | "TASK_STATE_REJECTED"
            | "TASK_STATE_INPUT_REQUIRED"
            | "TASK_STATE_AUTH_REQUIRED"
    );
    Bytes::from(
        crate::a2a::v03::stream_result_from_v1(v, last)
            .to_string()
            .into_bytes(),
    )
}

/// Formats one SSE event holding a JSON-RPC response.
fn frame(id: &[u8], result: &[u8]) -> Bytes {
    const HEAD: &[u8] = b"data: {\"jsonrpc\":\"2.0\",\"id\":";
    const MID: &[u8] = b",\"result\":";
    const TAIL: &[u8] = b"}\n\n";
    let mut buf = Vec::with_capacity(HEAD.len() + id.len() + MID.len() + result.len() + TAIL.len());
    buf.extend_from_slice(HEAD);
    buf.extend_from_slice(id);
    buf.extend_from_slice(MID);
    buf.extend_from_slice(result);
    buf.extend_from_slice(TAIL);
    Bytes::from(buf)
}

/// Formats one SSE event holding a bare `StreamResponse` (HTTP+JSON).
fn bare_frame(result: &[u8]) -> Bytes {
    let mut buf = Vec::with_capacity(result.len() + 8);
    buf.extend_from_slice(b"data: ");
    buf.extend_from_slice(result);
    buf.extend_from_slice(b"\n\n");
    Bytes::from(buf)
}

#[cfg(test)]
mod tests {
    #[test]
    fn frames_are_one_data_line_and_a_blank_line() {
        let f = super::frame(b"7", br#"{"task":{}}"#);
        assert_eq!(
            &f[..],
            b"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"task\":{}}}\n\n"
        );
    }
}
