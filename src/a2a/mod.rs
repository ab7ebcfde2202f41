//! The A2A v1.0 JSON-RPC client ("the wire"): cards, calls, streams, errors, normalizer.
//!
//! A thin reqwest + SSE layer of our own over the `a2a-lf` types (re-exported as
//! [`types`]), not `a2a-client-lf`: recovery needs the HTTP status and `Retry-After`,
//! transport, JSON-RPC and decode errors kept apart, the raw JSON, size caps, idle timeouts,
//! and a clean EOF told from a cut stream (a2a-spec.md §9).
//!
//! - [`card`]: the card URL, fetching and validating a card, choosing the JSON-RPC interface.
//! - [`client`]: [`A2aClient`], one per process; [`Endpoint`], [`Credential`], [`EventStream`].
//! - `normalize`: the JSON pass that lets `a2a-lf` read what real servers send.
//! - `sse`: the pure Server-Sent Events decoder.
//! - [`error`]: [`A2aError`] and its [`ErrorClass`]: not sent, ambiguous, refused, remote.
//! - [`backoff`]: full-jitter backoff and the retry loop for reads.
//! - [`task`]: [`TaskView`], [`ArtifactUpdate`]: a task's state and artifacts read from its raw JSON.
//!
//! Invariants: credentials go only to the card's origin (unless allowed cross-origin) and are
//! never logged or put into an error; every URL in a log line or error is redacted; every body
//! and stream event is capped while it is read; every request is bounded in time.

pub mod backoff;
pub mod card;
pub mod client;
pub mod error;
pub(crate) mod normalize;
pub(crate) mod sse;
pub mod task;

#[cfg(test)]
mod tests;

/// The `a2a-lf` wire types (crate `a2a`): `types::Task`, `types::SendMessageRequest`, ….
pub use ::a2a as types;

pub use backoff::{full_jitter, retry_read};
pub use card::{AgentCardInfo, WELL_KNOWN_CARD_PATH, card_url_for, origin_of, redact_url};
pub use client::{
    A2A_VERSION, A2aClient, ClientConfig, Credential, Endpoint, EventStream, ListTasksPage, Raw,
    USER_AGENT,
};
pub use error::{A2aError, DecodeKind, ErrorClass, RpcError};
pub use task::{
    ArtifactUpdate, ArtifactView, RemoteState, StatusTimestamp, TaskView, ViewError, artifact_view,
    history_holds, message_text, parse_timestamp, parts_text,
};
