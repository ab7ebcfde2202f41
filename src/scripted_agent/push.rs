//! The scripted agent as a push sender: each change of a task whose send carried a push config
//! is POSTed to that config's URL (`http://` only), one at a time and in order, with its token
//! in `X-A2A-Notification-Token` and its `authentication` as `Authorization` (A2A v1.0, as
//! a2a-sdk 1.3.0 sends them), or the token header alone and the whole task as the body (A2A
//! v0.3, as a2a-sdk 0.3.26 does). [`PushFault`]s make the deliveries go wrong on purpose, as
//! drills for a receiver.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// How the scripted agent's pushes go wrong (`scripted-agent --push-fault`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PushFault {
    /// Every push is posted twice.
    Duplicate,
    /// Pushes are posted in swapped pairs: each after the one that follows it.
    Reorder,
    /// The push that makes a task terminal or asks its question is never posted, nor any
    /// later push for that task.
    Lose,
    /// Pushes carry a token other than the config's.
    ForgedToken,
    /// Pushes name a task other than theirs.
    OtherTask,
    /// Pushes carry a body over 1 MiB.
    Oversized,
    /// Pushes send half their body, then the rest 3 s later (a slow client).
    Slow,
    /// Every delete of a push config is answered -32004 (`UnsupportedOperationError`).
    DeleteUnsupported,
}

/// How long a [`PushFault::Slow`] push waits in the middle of its body.
pub const SLOW_PAUSE: Duration = Duration::from_secs(3);

/// How long a push may take, connecting and answering included.
const POST_TIMEOUT: Duration = Duration::from_secs(30);

/// How long [`PushFault::Reorder`] holds a push when nothing follows it.
const HOLD: Duration = Duration::from_millis(300);

/// How many push answers [`Tally::answers`] keeps.
const MAX_ANSWERS: usize = 20_000;

/// Where a task's pushes go: the config its send carried.
#[derive(Debug)]
pub(crate) struct Target {
    host: String,
    port: u16,
    path: String,
    token: Option<String>,
    authorization: Option<String>,
    v03: bool,
    /// The config's id, if it has one (a delete names it).
    config_id: Option<String>,
}

impl Target {
    /// Reads a `TaskPushNotificationConfig` (v1.0 field names; a v0.3 send's config was
    /// rewritten to them); `None` unless its URL is `http://`.
    pub(crate) fn from_config(config: &Value, v03: bool) -> Option<Self> {
        let url = url::Url::parse(config.get("url")?.as_str()?).ok()?;
        if url.scheme() != "http" {
            return None;
        }
        let text = |p: &str| {
            config
                .pointer(p)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let authorization = match (
            text("/authentication/scheme"),
            text("/authentication/credentials"),
        ) {
            (Some(scheme), Some(credentials)) => Some(format!("{scheme} {credentials}")),
            _ => None,
        };
        Some(Self {
            host: url.host_str()?.to_owned(),
            port: url.port_or_known_default()?,
            path: match url.query() {
                Some(q) => format!("{}?{q}", url.path()),
                None => url.path().to_owned(),
            },
            token: text("/token"),
            authorization,
            v03,
            config_id: text("/id"),
        })
    }

    /// Whether this is the config `id` names.
    pub(crate) fn is(&self, id: &str) -> bool {
        self.config_id.as_deref() == Some(id)
    }

    /// Whether pushes carry the whole task in A2A v0.3's form.
    pub(crate) fn v03(&self) -> bool {
        self.v03
    }
}

/// One push to post.
pub(crate) struct Outbound {
    pub(crate) target: Arc<Target>,
    pub(crate) task_id: String,
    pub(crate) body: Bytes,
    /// Whether it makes the task terminal or asks a question.
    pub(crate) ends: bool,
}

/// What became of an agent's pushes.
#[derive(Default)]
struct Tally {
    /// The HTTP status of each post, in order (0: no answer).
    answers: Mutex<Vec<u16>>,
    /// Pushes queued.
    queued: AtomicU64,
    /// Pushes done with: posted (as often as the faults say) or lost on purpose.
    settled: AtomicU64,
}

/// The queue of an agent's pushes and what became of them.
#[derive(Clone)]
pub(crate) struct Pusher {
    tx: mpsc::UnboundedSender<Outbound>,
    tally: Arc<Tally>,
}

impl Pusher {
    /// Starts posting, on the current tokio runtime, with `faults`.
    pub(crate) fn start(faults: Vec<PushFault>) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let tally = Arc::new(Tally::default());
        tokio::spawn(run(rx, faults, Arc::clone(&tally)));
        Self { tx, tally }
    }

    /// Queues a push.
    pub(crate) fn send(&self, out: Outbound) {
        // Counted before it is queued, so that settled never runs ahead of queued.
        self.tally.queued.fetch_add(1, Ordering::AcqRel);
        if self.tx.send(out).is_err() {
            self.tally.queued.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// The HTTP status every push posted got, in order (0: no answer), how many pushes were
    /// queued, and how many of those are done with.
    pub(crate) fn tally(&self) -> (Vec<u16>, u64, u64) {
        let answers = self
            .tally
            .answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        // Settled first: a push is counted queued before it can settle.
        let settled = self.tally.settled.load(Ordering::Acquire);
        (answers, self.tally.queued.load(Ordering::Acquire), settled)
    }
}

/// Posts the queued pushes one at a time, with the faults asked for.
async fn run(mut rx: mpsc::UnboundedReceiver<Outbound>, faults: Vec<PushFault>, tally: Arc<Tally>) {
    let has = |f| faults.contains(&f);
    let mut held: Option<Outbound> = None;
    let mut lost = std::collections::HashSet::new();
    loop {
        let next = if held.is_some() {
            tokio::time::timeout(HOLD, rx.recv()).await
        } else {
            Ok(rx.recv().await)
        };
        let out = match next {
            Ok(Some(out)) => out,
            Ok(None) => {
                if let Some(h) = held.take() {
                    deliver(&h, &faults, &tally).await;
                }
                return;
            }
            Err(_) => {
                if let Some(h) = held.take() {
                    deliver(&h, &faults, &tally).await;
                }
                continue;
            }
        };
        if has(PushFault::Lose) && (out.ends || lost.contains(&out.task_id)) {
            lost.insert(out.task_id);
            tally.settled.fetch_add(1, Ordering::Release);
            continue;
        }
        if !has(PushFault::Reorder) {
            deliver(&out, &faults, &tally).await;
        } else if let Some(h) = held.take() {
            deliver(&out, &faults, &tally).await;
            deliver(&h, &faults, &tally).await;
        } else {
            held = Some(out);
        }
    }
}

/// Posts one push (twice under [`PushFault::Duplicate`]) and keeps the answers.
async fn deliver(out: &Outbound, faults: &[PushFault], tally: &Tally) {
    let times = if faults.contains(&PushFault::Duplicate) {
        2
    } else {
        1
    };
    for _ in 0..times {
        let status = tokio::time::timeout(POST_TIMEOUT, post(out, faults))
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or(0);
        let mut a = tally.answers.lock().unwrap_or_else(PoisonError::into_inner);
        if a.len() < MAX_ANSWERS {
            a.push(status);
        }
    }
    tally.settled.fetch_add(1, Ordering::Release);
}

/// POSTs one push over HTTP/1.1; returns the status of the answer.
async fn post(out: &Outbound, faults: &[PushFault]) -> std::io::Result<u16> {
    let t = &out.target;
    let mut body = out.body.to_vec();
    if faults.contains(&PushFault::OtherTask) {
        let other = uuid::Uuid::new_v4().to_string();
        body = String::from_utf8_lossy(&body)
            .replace(&out.task_id, &other)
            .into_bytes();
    }
    if faults.contains(&PushFault::Oversized) {
        body.resize(body.len() + (1 << 20) + 1, b' ');
    }
    let forged = faults.contains(&PushFault::ForgedToken);
    let token = if forged {
        Some(format!("forged-{}", uuid::Uuid::new_v4().simple()))
    } else {
        t.token.clone()
    };
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n",
        t.path,
        t.host,
        t.port,
        body.len()
    );
    if let Some(token) = &token {
        let _ = write!(head, "X-A2A-Notification-Token: {token}\r\n");
    }
    if !t.v03 {
        let authorization = match (&token, &t.authorization) {
            (Some(token), Some(_)) if forged => Some(format!("Bearer {token}")),
            (_, a) => a.clone(),
        };
        if let Some(a) = authorization {
            let _ = write!(head, "Authorization: {a}\r\n");
        }
    }
    head.push_str("\r\n");
    let mut s = TcpStream::connect((t.host.as_str(), t.port)).await?;
    s.write_all(head.as_bytes()).await?;
    if faults.contains(&PushFault::Slow) {
        let half = body.len() / 2;
        s.write_all(&body[..half]).await?;
        s.flush().await?;
        tokio::time::sleep(SLOW_PAUSE).await;
        // The receiver may have given up and closed: its answer is still read.
        let _ = s.write_all(&body[half..]).await;
    } else {
        // A receiver refusing a body by its length may close before reading it.
        let _ = s.write_all(&body).await;
    }
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer).await;
    Ok(status_of(&answer))
}

/// The status code of an HTTP/1.1 answer, or 0.
fn status_of(answer: &[u8]) -> u16 {
    std::str::from_utf8(answer.get(..answer.len().min(64)).unwrap_or_default())
        .ok()
        .and_then(|s| s.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_is_read_with_both_credentials() {
        let c = serde_json::json!({"url": "http://127.0.0.1:9/hooks/push/abc?x=1", "token": "t",
                                   "authentication": {"scheme": "Bearer", "credentials": "t"}});
        let t = Target::from_config(&c, false).expect("a target");
        assert_eq!((t.host.as_str(), t.port), ("127.0.0.1", 9));
        assert_eq!(t.path, "/hooks/push/abc?x=1");
        assert_eq!(t.token.as_deref(), Some("t"));
        assert_eq!(t.authorization.as_deref(), Some("Bearer t"));
        let https = serde_json::json!({"url": "https://h/push/abc"});
        assert!(Target::from_config(&https, false).is_none());
        assert_eq!(status_of(b"HTTP/1.1 202 Accepted\r\n\r\n"), 202);
        assert_eq!(status_of(b""), 0);
    }
}
