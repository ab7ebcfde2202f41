//! The event stream of `SendStreamingMessage` and `SubscribeToTask`: SSE over the transport
//! (framing in `sse.rs`), each event decoded by the endpoint's binding.
//!
//! Invariants: the idle timeout counts from the last *complete event* (a trickle of bytes, or
//! of `data:` lines that never end the event, is silence), and one event may take at most the
//! request timeout from its first byte to its end; each event is capped at `max_response_size`; a clean EOF between events is `None`, a cut
//! mid-event is an error; the stream ends at its first error (every later `next()` is `None`).

use std::fmt;
use std::time::Duration;

use reqwest::Response;
use serde_json::Value;

use super::binding::Raw;
use super::error::{A2aError, DecodeKind};
use super::grpc::GrpcStream;
use super::sse::{SseDecoder, SseError, SseEvent};
use super::transport::{ClientConfig, Op, Transport, media_type};
use super::types;
use crate::model::ProtocolBinding;

/// The events of `SubscribeToTask` or `SendStreamingMessage`.
pub struct EventStream {
    op: Op,
    binding: ProtocolBinding,
    echo: Option<String>,
    idle: Duration,
    /// The longest one event may take, from its first byte to the blank line that ends it.
    event_limit: Duration,
    /// When the stream opened or last completed an event: the idle timeout counts from here,
    /// so a stream trickling bytes or lines that never end an event is as silent as one
    /// sending nothing.
    heard: tokio::time::Instant,
    /// When the event being read began (its first byte), if one is.
    event_began: Option<tokio::time::Instant>,
    limit: u64,
    resp: Option<Response>,
    decoder: SseDecoder,
    /// A plain JSON success answer given in place of a stream: one event.
    single: Option<Value>,
    /// A gRPC server stream, in place of SSE: each message one event.
    grpc: Option<Box<GrpcStream>>,
    done: bool,
}

impl fmt::Debug for EventStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventStream")
            .field("method", &self.op.method)
            .field("url", &self.op.url)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl EventStream {
    /// Reads a successful answer to a stream request: SSE, or a plain JSON answer (usually an
    /// error) in its place.
    pub(crate) async fn open(
        transport: &Transport,
        binding: ProtocolBinding,
        op: Op,
        echo: Option<String>,
        mut resp: Response,
    ) -> Result<Self, A2aError> {
        let cfg = transport.config();
        let mut stream = Self::empty(cfg, binding, op, echo);
        match media_type(&resp).as_str() {
            "text/event-stream" => {
                let cap = usize::try_from(cfg.max_response_size).unwrap_or(usize::MAX);
                stream.decoder = SseDecoder::new(cap);
                stream.resp = Some(resp);
            }
            json if json == "application/json" || json.ends_with("+json") => {
                let body = transport.read_capped(&mut resp, &stream.op).await?;
                let echo = stream.echo.as_deref();
                stream.single = Some(binding.result(&stream.op, echo, &body)?);
            }
            other => {
                return Err(stream.op.decode(
                    DecodeKind::ContentType,
                    format!("expected text/event-stream, got `{other}`"),
                ));
            }
        }
        Ok(stream)
    }

    /// A stream that reads nothing yet.
    fn empty(cfg: &ClientConfig, binding: ProtocolBinding, op: Op, echo: Option<String>) -> Self {
        Self {
            decoder: SseDecoder::new(0),
            resp: None,
            single: None,
            grpc: None,
            op,
            binding,
            echo,
            idle: cfg.stream_idle_timeout,
            event_limit: cfg.timeout,
            heard: tokio::time::Instant::now(),
            event_began: None,
            limit: cfg.max_response_size,
            done: false,
        }
    }

    /// Reads a gRPC server stream: each message is one event, decoded by the binding.
    pub(crate) fn grpc(
        cfg: &ClientConfig,
        binding: ProtocolBinding,
        op: Op,
        messages: GrpcStream,
    ) -> Self {
        let mut stream = Self::empty(cfg, binding, op, None);
        stream.grpc = Some(Box::new(messages));
        stream
    }

    /// Returns the next gRPC message within the idle timeout, decoded.
    async fn next_grpc(&mut self) -> Option<Result<Raw<types::StreamResponse>, A2aError>> {
        let messages = self.grpc.as_mut()?;
        let deadline = self.heard + self.idle;
        let next = tokio::time::timeout_at(deadline, messages.message(&self.op)).await;
        let item = match next {
            Err(_) => Err(A2aError::StreamIdle {
                url: self.op.url.clone(),
                method: self.op.method,
                after: self.idle,
            }),
            Ok(Ok(None)) => {
                self.done = true;
                self.grpc = None;
                return None;
            }
            Ok(Ok(Some(value))) => {
                self.heard = tokio::time::Instant::now();
                self.binding.stream_response(&self.op, value)
            }
            Ok(Err(e)) => Err(e),
        };
        match item {
            Ok(event) => {
                if super::v03::is_final(&event.raw) {
                    self.done = true;
                    self.grpc = None;
                }
                Some(Ok(event))
            }
            Err(e) => {
                self.grpc = None;
                Some(Err(self.fail(e)))
            }
        }
    }

    /// Returns the next event; `None` is a clean end (the server closed between events).
    ///
    /// After the first error every later call returns `None`.
    pub async fn next(&mut self) -> Option<Result<Raw<types::StreamResponse>, A2aError>> {
        loop {
            if self.done {
                return None;
            }
            if let Some(result) = self.single.take() {
                self.done = true;
                return Some(self.binding.stream_response(&self.op, result));
            }
            if self.grpc.is_some() {
                // Boxed: a gRPC read's future is large, and every caller's future would hold it.
                return Box::pin(self.next_grpc()).await;
            }
            if let Some(event) = self.decoder.next_event() {
                let now = tokio::time::Instant::now();
                // Bytes already read past this event started the next one.
                self.event_began = self.decoder.is_mid_event().then_some(now);
                let item = self.convert(event);
                // An event with no data is no sign of life, as a comment is not: a server that
                // sends only those is silent and hits the idle timeout.
                if item.is_some() {
                    self.heard = now;
                }
                match item {
                    None => continue,
                    Some(Ok(event)) => {
                        // v0.3's `final: true` ends the stream, whatever the server does next.
                        if super::v03::is_final(&event.raw) {
                            self.done = true;
                            self.resp = None;
                        }
                        return Some(Ok(event));
                    }
                    Some(Err(e)) => return Some(Err(self.fail(e))),
                }
            }
            let Some(resp) = self.resp.as_mut() else {
                self.done = true;
                return None;
            };
            // Silence since the last event, or one event that takes too long: both are cut.
            let (deadline, after) = match self.event_began {
                Some(began) if began + self.event_limit < self.heard + self.idle => {
                    (began + self.event_limit, self.event_limit)
                }
                _ => (self.heard + self.idle, self.idle),
            };
            match tokio::time::timeout_at(deadline, resp.chunk()).await {
                Err(_) => {
                    let e = A2aError::StreamIdle {
                        url: self.op.url.clone(),
                        method: self.op.method,
                        after,
                    };
                    return Some(Err(self.fail(e)));
                }
                Ok(Err(e)) => {
                    let e = self.op.transport(e, self.idle);
                    return Some(Err(self.fail(e)));
                }
                Ok(Ok(None)) if self.decoder.is_mid_event() => {
                    let e = A2aError::StreamTruncated {
                        url: self.op.url.clone(),
                        method: self.op.method,
                    };
                    return Some(Err(self.fail(e)));
                }
                Ok(Ok(None)) => {
                    self.done = true;
                    self.resp = None;
                    return None;
                }
                Ok(Ok(Some(bytes))) => {
                    self.decoder.feed(&bytes);
                    if self.event_began.is_none() && self.decoder.is_mid_event() {
                        self.event_began = Some(tokio::time::Instant::now());
                    }
                }
            }
        }
    }

    fn fail(&mut self, e: A2aError) -> A2aError {
        self.done = true;
        self.resp = None;
        e
    }

    /// Turns one SSE event into a stream item; `None` skips an event with empty data.
    fn convert(
        &self,
        event: Result<SseEvent, SseError>,
    ) -> Option<Result<Raw<types::StreamResponse>, A2aError>> {
        let event = match event {
            Ok(event) => event,
            Err(SseError::TooLarge) => return Some(Err(self.op.too_large(self.limit))),
            Err(SseError::InvalidUtf8) => {
                return Some(Err(self
                    .op
                    .decode(DecodeKind::InvalidUtf8, "an event's data is not UTF-8")));
            }
        };
        if event.data.trim().is_empty() {
            return None;
        }
        Some(
            self.binding
                .stream_item(&self.op, self.echo.as_deref(), &event),
        )
    }
}
