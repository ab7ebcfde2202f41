//! The HTTP transport every binding shares: the reqwest clients, timeouts, redirects, the user
//! agent, body caps while reading, and the error-body snippet.
//!
//! Invariants: unary exchanges are bounded by `timeout` as a whole; bodies are read chunk by
//! chunk and refused (or cut) at their cap, nothing past it buffered; RPC requests follow no
//! redirects; only the method, redacted URL and status are logged (at trace).

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use reqwest::header::{
    ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, RETRY_AFTER,
};
use reqwest::{RequestBuilder, Response, StatusCode, Url};
use serde_json::Value;

use super::binding::WireRequest;
use super::credentials::{Credential, Placed, parse_http_url, redact_url, scrub_all, scrub_json};
use super::error::{A2aError, DecodeKind, RpcError, truncate_chars};
use super::sse::push_capped;
use super::types;

/// The `User-Agent` of every request.
pub const USER_AGENT: &str = concat!("a2a-recover/", env!("CARGO_PKG_VERSION"));
/// The `A2A-Version` header value of every v1.0 request (and of card fetches).
pub const A2A_VERSION: &str = "1.0";
/// The most redirects followed when fetching a card or checking a URL.
const MAX_REDIRECTS: usize = 5;
/// How much of a non-success body is read (for the snippet and a structured error in it).
const ERROR_BODY_LIMIT: u64 = 64 * 1024;
/// How many characters of a body an error shows.
const SNIPPET_CHARS: usize = 160;
/// How many parsed interface URLs a client keeps; a process talks to few agents, and a full
/// cache is emptied rather than grown.
const TARGETS: usize = 256;
/// The `A2A-Version` header's name ([`types::SVC_PARAM_VERSION`]), made once: parsed from text,
/// every request paid for it (docs/performance.md).
const VERSION_HEADER: HeaderName = HeaderName::from_static("a2a-version");

/// Limits every request obeys.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Bound on a whole unary request (connect and full body), and on a stream's connect.
    pub timeout: Duration,
    /// Largest body, or single stream event, in bytes.
    pub max_response_size: u64,
    /// Longest silence on a stream (headers, and between chunks).
    pub stream_idle_timeout: Duration,
    /// The most bytes of `ListTasks` answers one look before a resend reads
    /// (`--max-look-size`); past it the look is inconclusive.
    pub max_look_size: u64,
    /// The largest Agent Card read (`--max-card-size`; the smaller of it and
    /// `max_response_size` applies); a larger card is one we cannot use.
    pub max_card_size: u64,
}

/// An interface URL parsed once per client: the parsed URL, its origin (where a credential
/// may go) and its redacted form (for logs and errors).
#[derive(Debug)]
pub(crate) struct Target {
    pub(crate) url: Url,
    pub(crate) origin: String,
    pub(crate) redacted: String,
}

/// A status, its headers and the body read up to its cap.
pub(crate) type Answer = (StatusCode, HeaderMap, Vec<u8>);

/// The shared HTTP layer of one client.
#[derive(Debug)]
pub(crate) struct Transport {
    /// For RPC calls: no redirects.
    rpc: reqwest::Client,
    /// For cards and verification URLs: a few redirects.
    get: reqwest::Client,
    cfg: ClientConfig,
    /// Interface URLs already parsed, by their text: a pass of 100,000 reads of one agent
    /// parses its URL once, not per request (docs/performance.md).
    targets: Mutex<foldhash::HashMap<String, Arc<Target>>>,
}

impl Transport {
    /// Builds both reqwest clients.
    pub(crate) fn new(cfg: ClientConfig) -> Result<Self, A2aError> {
        let build = |policy: reqwest::redirect::Policy| {
            reqwest::Client::builder()
                .user_agent(USER_AGENT)
                .connect_timeout(cfg.timeout)
                .dns_resolver(std::sync::Arc::new(super::resolve::Resolver))
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
            rpc: build(reqwest::redirect::Policy::none())?,
            get: build(follow)?,
            cfg,
            targets: Mutex::new(foldhash::HashMap::default()),
        })
    }

    pub(crate) fn config(&self) -> &ClientConfig {
        &self.cfg
    }

    /// Returns an interface URL parsed, from the cache or parsed now.
    pub(crate) fn target(&self, url: &str) -> Result<Arc<Target>, A2aError> {
        let cached = self
            .targets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(url)
            .cloned();
        if let Some(target) = cached {
            return Ok(target);
        }
        let parsed = parse_http_url(url)?;
        let target = Arc::new(Target {
            origin: parsed.origin().ascii_serialization(),
            redacted: redact_url(url),
            url: parsed,
        });
        let mut targets = self.targets.lock().unwrap_or_else(PoisonError::into_inner);
        if targets.len() >= TARGETS {
            targets.clear();
        }
        targets.insert(url.to_owned(), Arc::clone(&target));
        Ok(target)
    }

    /// Builds the `GET` of a JSON document (the card), following a few redirects; a credential
    /// goes as a bearer (the card's placement is not known before it is read, and a cross-host
    /// redirect drops `Authorization`).
    pub(crate) fn get_json(&self, url: Url, credential: Option<&Credential>) -> RequestBuilder {
        let mut req = self
            .get
            .get(url)
            .header(ACCEPT, "application/json")
            .header(types::SVC_PARAM_VERSION, A2A_VERSION);
        if let Some(c) = credential {
            req = req.header(AUTHORIZATION, c.header());
        }
        req
    }

    /// Builds the request a binding described, following no redirects (so an API key placed
    /// in a header, the query or a cookie never follows one elsewhere).
    pub(crate) fn request(
        &self,
        wire: WireRequest,
        credential: Option<Placed<'_>>,
        op: &Op,
    ) -> RequestBuilder {
        // The binding's header values are constants: taken as they are, neither parsed nor copied.
        let mut req = self.rpc.request(wire.method, wire.url);
        if let Some((content_type, _)) = &wire.body {
            req = req.header(CONTENT_TYPE, HeaderValue::from_static(content_type));
        }
        req = req.header(ACCEPT, HeaderValue::from_static(wire.accept));
        if let Some(version) = wire.version {
            req = req.header(VERSION_HEADER, HeaderValue::from_static(version));
        }
        if let Some((_, body)) = wire.body {
            req = req.body(body);
        }
        if let Some(placed) = credential {
            req = placed.apply(req);
        }
        tracing::trace!(method = op.method, url = %op.url, "request");
        req
    }

    /// Sends a request and reads its body, all within `timeout`; a non-success body is read
    /// up to [`ERROR_BODY_LIMIT`] only.
    pub(crate) async fn unary(&self, req: RequestBuilder, op: &Op) -> Result<Answer, A2aError> {
        self.unary_within(req, op, self.cfg.max_response_size).await
    }

    /// [`Transport::unary`] with a success body refused past `limit` bytes (a card's own
    /// bound), not `max_response_size`.
    pub(crate) async fn unary_within(
        &self,
        req: RequestBuilder,
        op: &Op,
        limit: u64,
    ) -> Result<Answer, A2aError> {
        let cfg = &self.cfg;
        let exchange = async {
            let mut resp = send(req).await.map_err(|e| op.transport(e, cfg.timeout))?;
            let status = resp.status();
            tracing::trace!(method = op.method, url = %op.url, status = status.as_u16(), "answer");
            let body = if status.is_success() {
                read_body(&mut resp, op, limit, Over::Fail, cfg.timeout).await?
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

    /// Sends a stream's request and waits for its headers (`stream_idle_timeout`, at least
    /// `timeout`); a non-success answer comes back with its body read up to the error cap.
    pub(crate) async fn open(
        &self,
        req: RequestBuilder,
        op: &Op,
    ) -> Result<Result<Response, Answer>, A2aError> {
        let cfg = &self.cfg;
        let wait = cfg.stream_idle_timeout.max(cfg.timeout);
        let mut resp = match tokio::time::timeout(wait, send(req)).await {
            Err(_) => return Err(op.timeout(wait)),
            Ok(Err(e)) => return Err(op.transport(e, cfg.timeout)),
            Ok(Ok(resp)) => resp,
        };
        let status = resp.status();
        tracing::trace!(method = op.method, url = %op.url, status = status.as_u16(), "answer");
        if status.is_success() {
            return Ok(Ok(resp));
        }
        let limit = ERROR_BODY_LIMIT.min(cfg.max_response_size);
        let body = self
            .read_whole(&mut resp, op, limit, Over::Truncate)
            .await?;
        Ok(Err((status, resp.headers().clone(), body)))
    }

    /// Reads a whole body within `timeout`, refusing it past `max_response_size`.
    pub(crate) async fn read_capped(
        &self,
        resp: &mut Response,
        op: &Op,
    ) -> Result<Vec<u8>, A2aError> {
        self.read_whole(resp, op, self.cfg.max_response_size, Over::Fail)
            .await
    }

    async fn read_whole(
        &self,
        resp: &mut Response,
        op: &Op,
        limit: u64,
        over: Over,
    ) -> Result<Vec<u8>, A2aError> {
        let timeout = self.cfg.timeout;
        tokio::time::timeout(timeout, read_body(resp, op, limit, over, timeout))
            .await
            .unwrap_or_else(|_| Err(op.timeout(timeout)))
    }

    /// Sends a plain `GET` (effect verification) and returns the status; the body is read up
    /// to the cap and discarded, and a failure reading it does not matter.
    pub(crate) async fn get_url_status(&self, url: &str) -> Result<u16, A2aError> {
        let parsed = parse_http_url(url)?;
        let op = Op::new(url, "URL check");
        let cfg = &self.cfg;
        let deadline = tokio::time::Instant::now() + cfg.timeout;
        let send = send(self.get.get(parsed));
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
}

/// Sends a request: over the network, or (in a simulated run, `--features sim`) to the
/// simulator's in-process agents.
async fn send(req: RequestBuilder) -> reqwest::Result<Response> {
    #[cfg(feature = "sim")]
    if let Some(exchange) = super::sim_wire::exchange() {
        let (_, request) = req.build_split();
        return Ok(exchange(request?).await);
    }
    req.send().await
}

/// The operation being performed, for errors and logs.
#[derive(Clone)]
pub(crate) struct Op {
    pub(crate) url: String,
    pub(crate) method: &'static str,
    /// The token sent with the request (found in any encoding `crate::scrub` knows): an agent
    /// that echoes it back (an error page quoting the request headers or URL, a task quoting them) must not
    /// get it into an error, a log line or the journal, so every answer is scrubbed of it
    /// before it is read.
    secrets: Option<Arc<[Arc<str>]>>,
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
    pub(crate) fn new(url: &str, method: &'static str) -> Self {
        Self {
            url: redact_url(url),
            method,
            secrets: None,
        }
    }

    /// An operation on an interface, scrubbing answers of the credential it holds.
    pub(crate) fn on(
        target: &Target,
        credential: Option<&Credential>,
        method: &'static str,
    ) -> Self {
        Self {
            url: target.redacted.clone(),
            method,
            secrets: None,
        }
        .with_secret(credential)
    }

    pub(crate) fn with_secret(mut self, credential: Option<&Credential>) -> Self {
        self.secrets = credential.map(Credential::secrets);
        self
    }

    /// Adds a secret the request's body carries (a push config's token) to what answers are
    /// scrubbed of.
    pub(crate) fn with_body_secret(mut self, secret: Option<&str>) -> Self {
        if let Some(secret) = secret.filter(|s| !s.is_empty()) {
            let mut all: Vec<Arc<str>> = self.secrets.as_deref().unwrap_or_default().to_vec();
            all.push(Arc::from(secret));
            self.secrets = Some(all.into());
        }
        self
    }

    /// Returns a body with every occurrence of the token replaced by `REDACTED`.
    pub(crate) fn scrub<'b>(&self, body: &'b [u8]) -> std::borrow::Cow<'b, [u8]> {
        match self.secrets.as_deref() {
            Some(secrets) => scrub_all(secrets, body),
            None => std::borrow::Cow::Borrowed(body),
        }
    }

    /// Replaces the token in every string and key of a parsed answer (JSON escapes are
    /// undone there: a token percent-encoded inside a `\u`-escaped string is seen).
    /// Returns whether it replaced any.
    pub(crate) fn scrub_value(&self, value: &mut Value) -> bool {
        self.secrets
            .as_deref()
            .is_some_and(|secrets| scrub_json(value, secrets))
    }

    /// Returns the start of a body (or of a stream event) as errors quote it, scrubbed: a JSON
    /// body whose parsed strings held the token (escaped once more in the body, where the byte
    /// scrub cannot see it) is quoted as its scrubbed JSON, not as it came.
    pub(crate) fn snippet(&self, body: &[u8]) -> String {
        let body = self.scrub(body);
        if self.secrets.is_some()
            && let Ok(mut value) = serde_json::from_slice::<Value>(&body)
            && self.scrub_value(&mut value)
        {
            return snippet(value.to_string().as_bytes());
        }
        snippet(&body)
    }

    pub(crate) fn decode(&self, kind: DecodeKind, detail: impl Into<String>) -> A2aError {
        A2aError::Decode {
            url: self.url.clone(),
            method: self.method,
            kind,
            detail: detail.into(),
        }
    }

    pub(crate) fn too_large(&self, limit: u64) -> A2aError {
        A2aError::TooLarge {
            url: self.url.clone(),
            method: self.method,
            limit,
        }
    }

    pub(crate) fn timeout(&self, after: Duration) -> A2aError {
        A2aError::Timeout {
            url: self.url.clone(),
            method: self.method,
            after,
            tries: None,
        }
    }

    /// Classifies a reqwest error without its URL (which may hold secrets).
    pub(crate) fn transport(&self, e: reqwest::Error, after: Duration) -> A2aError {
        let (connect, timeout, redirect, builder) = (
            e.is_connect(),
            e.is_timeout(),
            e.is_redirect(),
            e.is_builder(),
        );
        let e = e.without_url();
        let detail = error_chain(&e);
        let url = self.url.clone();
        let method = self.method;
        if connect {
            A2aError::Connect {
                url,
                method,
                detail,
                why: super::unreached::connect_failure(&e),
            }
        } else if timeout {
            A2aError::Timeout {
                url,
                method,
                after,
                tries: None,
            }
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
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
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

/// Returns a response's media type, lowercase and without parameters.
pub(crate) fn media_type(resp: &Response) -> String {
    resp.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Parses a body as JSON, telling invalid UTF-8 from invalid JSON; the token sent is
/// scrubbed from it first.
pub(crate) fn decode_json(op: &Op, body: &[u8]) -> Result<Value, A2aError> {
    decode_json_with(op, body, |b| serde_json::from_slice(b))
}

/// [`decode_json`] with the parser given (one that reads only part of the body into the
/// value, say).
pub(crate) fn decode_json_with(
    op: &Op,
    body: &[u8],
    parse: impl FnOnce(&[u8]) -> serde_json::Result<Value>,
) -> Result<Value, A2aError> {
    let body = op.scrub(body);
    if let Err(e) = std::str::from_utf8(&body) {
        return Err(op.decode(
            DecodeKind::InvalidUtf8,
            format!("invalid byte at offset {}", e.valid_up_to()),
        ));
    }
    let mut value: Value = parse(&body).map_err(|e| {
        // Our words, not the parser's: where the JSON broke, and what the body starts with.
        let what = match e.classify() {
            serde_json::error::Category::Eof => "the body ends in the middle of a JSON value",
            _ => "the body is not JSON",
        };
        op.decode(
            DecodeKind::InvalidJson,
            format!(
                "{what} (line {}, column {}): {}",
                e.line(),
                e.column(),
                snippet(&body)
            ),
        )
    })?;
    op.scrub_value(&mut value);
    Ok(value)
}

/// Builds the error for a non-success HTTP status; `rpc` is the structured error the binding
/// read from the (already scrubbed) `body`.
pub(crate) fn http_error(
    op: &Op,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
    rpc: Option<RpcError>,
) -> A2aError {
    A2aError::Http {
        url: op.url.clone(),
        method: op.method,
        status: status.as_u16(),
        retry_after: headers
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after),
        snippet: op.snippet(body),
        rpc: rpc.map(Box::new),
        reason: None,
        unattributed: false,
    }
}

/// Parses `Retry-After`: delay seconds, or an HTTP date (a past date means now). Never panics
/// nor overflows: more seconds than `u64` holds read as `u64::MAX` seconds, and a date however
/// far ahead as the wait until it (what waits it is the limiter's to bound: `limits.rs`).
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Duration::from_secs(
            value.parse::<u64>().unwrap_or(u64::MAX),
        ));
    }
    let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = date
        .with_timezone(&chrono::Utc)
        .signed_duration_since(crate::clock::system_now());
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

/// Returns the start of a body as one inert line; HTML tags are dropped.
pub(crate) fn snippet(body: &[u8]) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_header_is_the_protocols_name() {
        let parsed = HeaderName::from_bytes(types::SVC_PARAM_VERSION.as_bytes()).unwrap();
        assert_eq!(VERSION_HEADER, parsed);
    }
}
