//! The simulated world below the wire: in-process scripted agents behind a fault layer, and the
//! crash trigger of each running process. Every fault is drawn from the run's seeded fault
//! generator, or given by a schedule ([`super::schedule`]). While several processes run at once,
//! each exchange yields before the agent sees it and after it answered, so that the run's
//! interleaving (`super::together`) decides who goes on.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::body::Body;
use rand::RngExt as _;
use rand::rngs::StdRng;
use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

use crate::scripted_agent::InProcessAgent;

use super::replay::{Read, Replays};
use super::schedule::Faults;

/// What the fault layer does to one exchange (its name in a schedule is [`Fault::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Fault {
    /// Lost before the agent saw it.
    #[serde(rename = "lost-before")]
    LostBefore,
    /// Processed, its answer lost.
    #[serde(rename = "lost-after")]
    LostAfter,
    /// Processed after the request timed out (inside the in-flight horizon).
    #[serde(rename = "late")]
    Late,
    /// Answered 503 with `Retry-After`, not processed.
    #[serde(rename = "503")]
    Unavailable,
    /// Answered 429 with `Retry-After`, not processed.
    #[serde(rename = "429")]
    Throttled,
    /// The process is killed before the request leaves.
    #[serde(rename = "crash-before")]
    CrashBefore,
    /// The process is killed after the agent processed the request.
    #[serde(rename = "crash-after")]
    CrashAfter,
    /// An agent forgot a task (retention), between processes.
    #[serde(rename = "forgotten")]
    Forgotten,
    /// An agent's clock stepped back, between processes.
    #[serde(rename = "clock-step")]
    ClockStepped,
    /// An event stream ended early (`streams`).
    #[serde(rename = "stream-cut")]
    StreamCut,
    /// An event stream went silent, left open.
    #[serde(rename = "stream-stalled")]
    StreamStalled,
    /// An event of a stream came twice.
    #[serde(rename = "stream-repeated")]
    StreamRepeated,
    /// An event of a stream came after the next one.
    #[serde(rename = "stream-reordered")]
    StreamReordered,
    /// A read's earlier answer delivered again in place of a fresh one (`replay`).
    #[serde(rename = "read-twice")]
    ReadTwice,
}

impl Fault {
    /// The fault's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::LostBefore => "lost-before",
            Self::LostAfter => "lost-after",
            Self::Late => "late",
            Self::Unavailable => "503",
            Self::Throttled => "429",
            Self::CrashBefore => "crash-before",
            Self::CrashAfter => "crash-after",
            Self::Forgotten => "forgotten",
            Self::ClockStepped => "clock-step",
            Self::StreamCut => "stream-cut",
            Self::StreamStalled => "stream-stalled",
            Self::StreamRepeated => "stream-repeated",
            Self::StreamReordered => "stream-reordered",
            Self::ReadTwice => "read-twice",
        }
    }
}

/// The agents, the fault layer and what it did.
pub struct World {
    /// The agents, by base URL.
    pub agents: Vec<(String, InProcessAgent)>,
    /// Whether each agent de-duplicates by `messageId`.
    pub dedup: Vec<bool>,
    /// Where faults come from, and the schedule of those that happened.
    pub faults: Faults,
    /// Where stream faults come from (`streams`): a generator of their own, seeded per run.
    streams: Mutex<StdRng>,
    faults_on: AtomicBool,
    /// The processes running, by number.
    running: Mutex<BTreeMap<u32, Running>>,
    /// The process being polled (set by `super::together` before each poll).
    current: AtomicU32,
    /// What the run did, a line an event (processes, exchanges, who was polled): two runs of
    /// one seed must give the same lines.
    log: Mutex<Vec<String>>,
    /// How many of each fault were injected.
    pub injected: Mutex<BTreeMap<Fault, u32>>,
    /// The request timeout every process uses.
    pub timeout: Duration,
    /// The reads kept, to be delivered twice.
    pub replays: Replays,
}

impl World {
    /// A world of these agents, its faults from `faults`, its stream faults from `streams`.
    pub fn new(
        agents: Vec<(String, InProcessAgent)>,
        dedup: Vec<bool>,
        faults: Faults,
        streams: StdRng,
        timeout: Duration,
        replays: Replays,
    ) -> Self {
        Self {
            agents,
            dedup,
            faults,
            streams: Mutex::new(streams),
            faults_on: AtomicBool::new(true),
            running: Mutex::new(BTreeMap::new()),
            current: AtomicU32::new(0),
            log: Mutex::new(Vec::new()),
            injected: Mutex::new(BTreeMap::new()),
            timeout,
            replays,
        }
    }

    /// Draws from the stream faults' generator.
    pub fn with_stream_rng<T>(&self, f: impl FnOnce(&mut StdRng) -> T) -> T {
        f(&mut self.streams.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Whether the faults are on.
    pub fn faults_on(&self) -> bool {
        self.faults_on.load(Ordering::SeqCst)
    }

    /// Switches the faults (crashes included) on or off.
    pub fn set_faults(&self, on: bool) {
        self.faults_on.store(on, Ordering::SeqCst);
    }

    /// Starts process `process`: its exchanges are counted from 1, and it is killed at
    /// exchange `crash_at` (before or after the agent processed it), if any. Returns what is told
    /// when it is killed.
    pub fn start_process(&self, process: u32, crash_at: Option<(u64, bool)>) -> Arc<Notify> {
        let killed = Arc::new(Notify::new());
        let state = Running {
            crash_at,
            calls: 0,
            killed: Arc::clone(&killed),
            crash_point: None,
        };
        lock(&self.running).insert(process, state);
        killed
    }

    /// Process `process` ended; returns where it was killed, if it was: the exchange's number,
    /// method and side.
    pub fn end_process(&self, process: u32) -> Option<String> {
        lock(&self.running)
            .remove(&process)
            .and_then(|r| r.crash_point)
    }

    /// Makes `process` the one being polled: the exchanges made now are its own.
    pub fn set_current(&self, process: u32) {
        self.current.store(process, Ordering::SeqCst);
    }

    /// Whether more than one process is running.
    fn crowded(&self) -> bool {
        lock(&self.running).len() > 1
    }

    /// Adds a line to the run's log (and prints it under `A2A_SIM_TRACE`).
    pub fn log(&self, line: String) {
        if std::env::var_os("A2A_SIM_TRACE").is_some() {
            #[expect(clippy::print_stderr, reason = "the simulator's trace (A2A_SIM_TRACE)")]
            {
                eprintln!("a2a-sim trace: {line}");
            }
        }
        lock(&self.log).push(line);
    }

    /// The run's log.
    pub fn take_log(&self) -> Vec<String> {
        std::mem::take(&mut lock(&self.log))
    }

    /// Counts a fault injected.
    pub fn count(&self, fault: Fault) {
        *lock(&self.injected).entry(fault).or_default() += 1;
    }

    fn agent(&self, url: &reqwest::Url) -> Option<&InProcessAgent> {
        let origin = url.origin().ascii_serialization();
        self.agents
            .iter()
            .find(|(base, _)| base.trim_end_matches('/') == origin)
            .map(|(_, a)| a)
    }

    /// Chooses what happens to exchange `n` of the current process, killed at `crash_at`
    /// (`read` if it reads one task).
    fn fault_for(
        &self,
        n: u64,
        crash_at: Option<(u64, bool)>,
        read: Option<&Read>,
    ) -> Option<Fault> {
        if !self.faults_on.load(Ordering::SeqCst) {
            return None;
        }
        self.faults.exchange(n, |rng, rate| {
            if let Some((at, after)) = crash_at
                && at == n
            {
                return Some(if after {
                    Fault::CrashAfter
                } else {
                    Fault::CrashBefore
                });
            }
            if rng.random_range(0..1000) >= rate {
                return self.replays.draw(read).then_some(Fault::ReadTwice);
            }
            Some(match rng.random_range(0..5) {
                0 => Fault::LostBefore,
                1 => Fault::LostAfter,
                2 => Fault::Late,
                3 => Fault::Unavailable,
                _ => Fault::Throttled,
            })
        })
    }
}

/// One running process, as the fault layer sees it.
struct Running {
    /// The exchange at which it is killed, and whether after the agent processed it.
    crash_at: Option<(u64, bool)>,
    /// Its exchanges so far.
    calls: u64,
    /// Told when it is killed.
    killed: Arc<Notify>,
    /// Where it was killed.
    crash_point: Option<String>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The JSON-RPC method of a request body, the HTTP+JSON operation its verb and path name, or
/// its verb and path (a task id in the path left out): what a crash point is named after.
fn method_of(req: &reqwest::Request) -> String {
    req.body()
        .and_then(reqwest::Body::as_bytes)
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(b).ok())
        .and_then(|v| v.get("method").and_then(|m| m.as_str()).map(str::to_owned))
        .or_else(|| {
            crate::scripted_agent::operation_name(req.method(), req.url().path())
                .map(|op| format!("{op} (HTTP+JSON)"))
        })
        .unwrap_or_else(|| {
            let path = req.url().path();
            let path = match path.rsplit_once('/') {
                Some((dir, id)) if uuid::Uuid::parse_str(id).is_ok() => dir,
                _ => path,
            };
            format!("{} {path}", req.method())
        })
}

/// Turns the client's request into the agent's.
fn to_agent(req: &reqwest::Request) -> http::Request<Body> {
    let mut out = http::Request::builder()
        .method(req.method().clone())
        .uri(req.url().as_str());
    for (name, value) in req.headers() {
        out = out.header(name, value);
    }
    let body = req
        .body()
        .and_then(reqwest::Body::as_bytes)
        .map_or_else(Body::empty, |b| Body::from(b.to_vec()));
    out.body(body).unwrap_or_default()
}

/// Turns the agent's answer into the client's, its body streamed as the agent writes it (through
/// a stream fault, for an event stream that draws one).
fn to_client(world: &World, resp: http::Response<Body>) -> reqwest::Response {
    let fault = if super::streams::is_stream(&resp) {
        super::streams::draw(world)
    } else {
        None
    };
    let (parts, body) = resp.into_parts();
    let body = match fault {
        Some(f) => reqwest::Body::wrap_stream(super::streams::wrap(body.into_data_stream(), f)),
        None => reqwest::Body::wrap_stream(body.into_data_stream()),
    };
    reqwest::Response::from(http::Response::from_parts(parts, body))
}

fn refusal(status: u16) -> reqwest::Response {
    let resp = http::Response::builder()
        .status(status)
        .header("retry-after", "1")
        .body(reqwest::Body::from("try later"))
        .unwrap_or_default();
    reqwest::Response::from(resp)
}

/// The agent processes the request; its whole answer is read and thrown away.
async fn processed_unseen(world: &World, req: http::Request<Body>, url: &reqwest::Url) {
    if let Some(agent) = world.agent(url) {
        let resp = agent.handle(req).await;
        let _ = axum::body::to_bytes(resp.into_body(), usize::MAX).await;
    }
}

/// The agent's answer, kept if it answers a read of one task (`replay`).
async fn answered(
    world: &World,
    req: http::Request<Body>,
    url: &reqwest::Url,
    read: Option<&Read>,
) -> reqwest::Response {
    let Some(agent) = world.agent(url) else {
        return std::future::pending().await;
    };
    let resp = agent.handle(req).await;
    let resp = match read {
        Some(r) => world.replays.keep(r, resp).await,
        None => resp,
    };
    to_client(world, resp)
}

/// The exchange the simulated transport makes: the fault layer, then the agent.
pub async fn exchange(world: Arc<World>, req: reqwest::Request) -> reqwest::Response {
    let process = world.current.load(Ordering::SeqCst);
    let (n, crash_at) = {
        let mut running = lock(&world.running);
        running.get_mut(&process).map_or((0, None), |r| {
            r.calls += 1;
            (r.calls, r.crash_at)
        })
    };
    let url = req.url().clone();
    let method = method_of(&req);
    let read = super::replay::read_of(&req);
    let fault = world.fault_for(n, crash_at, read.as_ref());
    let agent_req = to_agent(&req);
    if let Some(f) = fault {
        world.count(f);
    }
    let at = crate::sim_seam::virtual_now()
        .map(|t| t.format("%H:%M:%S%.3f").to_string())
        .unwrap_or_default();
    let body = req
        .body()
        .and_then(reqwest::Body::as_bytes)
        .map(String::from_utf8_lossy)
        .unwrap_or_default();
    world.log(format!(
        "  {at} {process}#{n} {method} {url} {fault:?} {body:.300}"
    ));
    // Another process may go first, before the agent sees the request and after it answered.
    let crowded = world.crowded();
    if crowded {
        tokio::task::yield_now().await;
    }
    let point = format!("{method}#{n}");
    let resp = answer(
        &world,
        fault,
        agent_req,
        url,
        read.as_ref(),
        process,
        &point,
    )
    .await;
    if crowded {
        tokio::task::yield_now().await;
    }
    resp
}

/// The fault layer's answer to the exchange of `process` at `point` (its method and number;
/// `read` if it reads one task).
async fn answer(
    world: &Arc<World>,
    fault: Option<Fault>,
    agent_req: http::Request<Body>,
    url: reqwest::Url,
    read: Option<&Read>,
    process: u32,
    point: &str,
) -> reqwest::Response {
    match fault {
        // Forgetting and clock steps happen between processes, stream faults to the answer's
        // body (`streams`), never to an exchange.
        None
        | Some(
            Fault::Forgotten
            | Fault::ClockStepped
            | Fault::StreamCut
            | Fault::StreamStalled
            | Fault::StreamRepeated
            | Fault::StreamReordered,
        ) => answered(world, agent_req, &url, read).await,
        Some(Fault::ReadTwice) => match read.and_then(|r| world.replays.again(r)) {
            Some(again) => to_client(world, again),
            None => answered(world, agent_req, &url, read).await,
        },
        Some(Fault::LostBefore) => std::future::pending().await,
        Some(Fault::LostAfter) => {
            processed_unseen(world, agent_req, &url).await;
            std::future::pending().await
        }
        Some(Fault::Late) => {
            let w = Arc::clone(world);
            let delay = world.timeout + world.timeout / 2;
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                processed_unseen(&w, agent_req, &url).await;
            });
            std::future::pending().await
        }
        Some(Fault::Unavailable) => refusal(503),
        Some(Fault::Throttled) => refusal(429),
        Some(side @ (Fault::CrashBefore | Fault::CrashAfter)) => {
            if side == Fault::CrashAfter {
                processed_unseen(world, agent_req, &url).await;
            }
            if let Some(r) = lock(&world.running).get_mut(&process) {
                r.crash_point = Some(format!("{point}:{}", side.name()));
                r.killed.notify_one();
            }
            std::future::pending().await
        }
    }
}
