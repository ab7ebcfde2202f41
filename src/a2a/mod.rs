//! The A2A v1.0 JSON-RPC client ("the wire"): cards, calls, streams, errors, normalizer.
//!
//! A thin reqwest + SSE layer of our own over the `a2a-lf` types (re-exported as
//! [`types`]), not `a2a-client-lf`: recovery needs the HTTP status and `Retry-After`,
//! transport, JSON-RPC and decode errors kept apart, the raw JSON, size caps, idle timeouts,
//! and a clean EOF told from a cut stream (a2a-spec.md §9).
//!
//! - [`card`]: the card URL, validating a card, choosing the JSON-RPC interface.
//! - [`client`]: [`A2aClient`], one per process; [`Endpoint`], [`EventStream`].
//! - [`credentials`]: [`Credential`], the cross-origin rule, origins and redaction.
//! - `normalize`: the JSON pass that lets `a2a-lf` read what real servers send.
//! - `sse`: the pure Server-Sent Events decoder.
//! - [`error`]: [`A2aError`] and its [`ErrorClass`]: not sent, ambiguous, refused, remote.
//! - [`backoff`]: full-jitter backoff and the retry loop for reads.
//!
//! Invariants: credentials go only to the card's origin (unless allowed cross-origin) and are
//! never logged or put into an error; every URL in a log line or error is redacted; every body
//! and stream event is capped while it is read; every request is bounded in time.

pub mod backoff;
mod binding;
pub mod card;
pub mod client;
pub mod credentials;
pub mod error;
mod jsonrpc;
pub(crate) mod normalize;
pub(crate) mod sse;
mod stream;
mod transport;

#[cfg(test)]
mod tests;

/// The `a2a-lf` wire types (crate `a2a`): `types::Task`, `types::SendMessageRequest`, ….
pub use ::a2a as types;

pub use backoff::{full_jitter, retry_read};
pub use binding::{ListTasksPage, ProtocolBinding, Raw};
pub use card::{AgentCardInfo, WELL_KNOWN_CARD_PATH, card_url_for};
pub use client::{A2aClient, Endpoint};
pub use credentials::{Credential, origin_of, redact_url};
pub use error::{A2aError, DecodeKind, ErrorClass, RpcError};
pub use stream::EventStream;
pub use transport::{A2A_VERSION, ClientConfig, USER_AGENT};
