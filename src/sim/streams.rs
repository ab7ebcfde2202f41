//! Stream faults: the fault layer over an event stream's body (`SubscribeToTask`,
//! `SendStreamingMessage`). A stream may be cut (EOF) or stall (no next event, so the
//! per-event timeout ends it) after some events, or one event may come twice or swapped with
//! the next. Drawn from a generator of their own (seeded per run), while faults are on.

use std::collections::VecDeque;

use bytes::Bytes;
use futures_util::{Stream, StreamExt as _};
use rand::RngExt as _;

use super::world::{Fault, World};

/// Per mille of event streams that get a fault.
const RATE: u32 = 700;

/// What happens to one event stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFault {
    /// Ends (EOF) after this many chunks.
    Cut(u32),
    /// Sends nothing more after this many chunks, and stays open.
    Stall(u32),
    /// Sends this chunk (1-based) twice.
    Repeat(u32),
    /// Sends this chunk (1-based, never the first: the snapshot) after the next one.
    Reorder(u32),
}

impl StreamFault {
    /// The fault as the reports count it.
    pub fn kind(self) -> Fault {
        match self {
            Self::Cut(_) => Fault::StreamCut,
            Self::Stall(_) => Fault::StreamStalled,
            Self::Repeat(_) => Fault::StreamRepeated,
            Self::Reorder(_) => Fault::StreamReordered,
        }
    }
}

/// Draws the fault of one event stream, if any (and counts it).
pub fn draw(world: &World) -> Option<StreamFault> {
    if !world.faults_on() {
        return None;
    }
    let fault = world.with_stream_rng(|rng| {
        if rng.random_range(0..1000) >= RATE {
            return None;
        }
        let at = rng.random_range(1..=4);
        Some(match rng.random_range(0..4) {
            0 => StreamFault::Cut(at),
            1 => StreamFault::Stall(at),
            2 => StreamFault::Repeat(at),
            _ => StreamFault::Reorder(at + 1),
        })
    })?;
    world.count(fault.kind());
    Some(fault)
}

/// Whether a response is an event stream.
pub fn is_stream(resp: &http::Response<axum::body::Body>) -> bool {
    resp.headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

struct State<S> {
    inner: S,
    n: u32,
    fault: StreamFault,
    out: VecDeque<Bytes>,
    held: Option<Bytes>,
}

/// Whether a chunk is whole events (a repeat or swap of part of one would be a garbled stream,
/// not a misbehaving server).
fn whole(chunk: &Bytes) -> bool {
    chunk.ends_with(b"\n\n")
}

/// The body stream `inner` with `fault` applied.
pub fn wrap<S, E>(inner: S, fault: StreamFault) -> impl Stream<Item = Result<Bytes, E>> + Send
where
    S: Stream<Item = Result<Bytes, E>> + Send + Unpin + 'static,
    E: Send + 'static,
{
    let state = State {
        inner,
        n: 0,
        fault,
        out: VecDeque::new(),
        held: None,
    };
    futures_util::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(chunk) = st.out.pop_front() {
                return Some((Ok(chunk), st));
            }
            let chunk = match st.inner.next().await {
                Some(Ok(chunk)) => chunk,
                Some(Err(e)) => return Some((Err(e), st)),
                None => return st.held.take().map(|h| (Ok(h), st)),
            };
            st.n += 1;
            match st.fault {
                StreamFault::Cut(k) if st.n > k => return None,
                StreamFault::Stall(k) if st.n > k => std::future::pending::<()>().await,
                StreamFault::Repeat(k) if st.n == k && whole(&chunk) => {
                    st.out.push_back(chunk.clone());
                    st.out.push_back(chunk);
                }
                StreamFault::Reorder(k) if st.n == k && whole(&chunk) => st.held = Some(chunk),
                StreamFault::Reorder(k) if st.n == k + 1 => {
                    st.out.push_back(chunk);
                    st.out.extend(st.held.take());
                }
                _ => st.out.push_back(chunk),
            }
        }
    })
}
