//! A read delivered twice: the answer to an earlier `GetTask` of the same task delivered again
//! in place of a fresh one (as a caching or replaying proxy would), the agent not asked. Only
//! reads of one task are replayed: a listing replayed from before a send would prove an absence
//! no client can check, which no recovery could survive.
//!
//! Each `GetTask` answer that reaches the client is kept (by endpoint and request, the
//! JSON-RPC id left out); a later `GetTask` of the same may draw the fault, from a generator of
//! its own seeded per run, so that the other faults' draws stay as they were.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use bytes::Bytes;
use rand::RngExt as _;
use rand::rngs::StdRng;

/// Per mille of replayable reads that are replayed.
const RATE: u32 = 150;

/// The reads kept, and the generator of the fault.
pub struct Replays {
    rng: Mutex<StdRng>,
    kept: Mutex<BTreeMap<String, (http::response::Parts, Bytes)>>,
}

/// What a request is, for replaying.
pub struct Read {
    key: String,
    /// The JSON-RPC id of the request, to answer with.
    id: Option<serde_json::Value>,
}

impl Replays {
    /// No read kept yet; the fault drawn from a generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            rng: Mutex::new(rand::SeedableRng::seed_from_u64(seed ^ 0x2EAD_7A1C)),
            kept: Mutex::new(BTreeMap::new()),
        }
    }

    /// Whether `read` has an answer kept, and the fault is drawn for it.
    pub fn draw(&self, read: Option<&Read>) -> bool {
        let Some(read) = read else {
            return false;
        };
        let kept = self
            .kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(&read.key);
        kept && self
            .rng
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .random_range(0..1000)
            < RATE
    }

    /// The answer kept for `read`, delivered again (with the request's JSON-RPC id).
    pub fn again(&self, read: &Read) -> Option<http::Response<axum::body::Body>> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let (parts, body) = kept.get(&read.key)?;
        let body = match (&read.id, serde_json::from_slice::<serde_json::Value>(body)) {
            (Some(id), Ok(mut v)) if v.get("id").is_some() => {
                v["id"] = id.clone();
                Bytes::from(serde_json::to_vec(&v).unwrap_or_default())
            }
            _ => body.clone(),
        };
        let mut resp = http::Response::from_parts(parts.clone(), axum::body::Body::from(body));
        resp.headers_mut().remove(http::header::CONTENT_LENGTH);
        Some(resp)
    }

    /// Keeps the agent's answer to `read` (read whole), and returns it to be delivered.
    pub async fn keep(
        &self,
        read: &Read,
        resp: http::Response<axum::body::Body>,
    ) -> http::Response<axum::body::Body> {
        let (parts, body) = resp.into_parts();
        let Ok(body) = axum::body::to_bytes(body, usize::MAX).await else {
            return http::Response::from_parts(parts, axum::body::Body::empty());
        };
        if parts.status.is_success() {
            self.kept
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(read.key.clone(), (parts.clone(), body.clone()));
        }
        http::Response::from_parts(parts, axum::body::Body::from(body))
    }
}

/// The request as a read of one task (`GetTask` over JSON-RPC, v0.3 `tasks/get`, or
/// HTTP+JSON), if it is one.
pub fn read_of(req: &reqwest::Request) -> Option<Read> {
    let url = req.url();
    if req.method() == reqwest::Method::GET {
        let op = crate::scripted_agent::operation_name(req.method(), url.path())?;
        return (op == "GetTask").then(|| Read {
            key: format!("GET {url}"),
            id: None,
        });
    }
    let body = req.body().and_then(reqwest::Body::as_bytes)?;
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let method = v.get("method")?.as_str()?;
    if method != "GetTask" && method != "tasks/get" {
        return None;
    }
    Some(Read {
        key: format!("POST {url} {method} {}", v.get("params")?),
        id: v.get("id").cloned(),
    })
}
