//! The A2A client ("the wire"): one [`A2aClient`] over a [`ProtocolBinding`] seam; cards,
//! calls, streams, errors. The bindings are JSON-RPC, HTTP+JSON and gRPC, each v1.0 and v0.3.
//!
//! A thin reqwest + SSE layer of our own over the `a2a-lf` types (re-exported as
//! [`types`]), not `a2a-client-lf`: recovery needs the HTTP status and `Retry-After`,
//! transport, JSON-RPC and decode errors kept apart, the raw JSON, size caps, idle timeouts,
//! and a clean EOF told from a cut stream. This file is the face: what
//! callers use is re-exported here; the modules are private.
//!
//! - `client`: [`A2aClient`], one per process, and the [`Endpoint`] it calls.
//! - `binding`: [`ProtocolBinding`], the seam: each binding (a sibling file) builds requests
//!   and reads answers into [`Raw`] v1.0 types; `jsonrpc`: the v1.0 JSON-RPC binding;
//!   `httpjson`: the v1.0 HTTP+JSON binding; `jsonrpc03`: the v0.3 JSON-RPC binding;
//!   `httpjson03`: the v0.3 HTTP+JSON binding (protobuf JSON); `v03`:
//!   v0.3 JSON-RPC payloads ⇄ v1.0; `grpc`: the gRPC binding, v1.0 and v0.3, over the tonic
//!   clients and messages `grpc_pb` holds (generated from `proto/` by `build.rs`).
//! - `transport`: reqwest, timeouts, redirects, body caps, the error snippet ([`ClientConfig`]).
//! - `stream`: [`EventStream`], SSE over the transport; `sse`: the pure SSE decoder.
//! - `credentials`: [`Credential`], the cross-origin rule, origins and redaction (each worked
//!   out once per URL, `memo`);
//!   `token_cmd`: running a `--token-cmd` command, bounded, in its own process group.
//! - `security`: where a credential goes ([`Placement`]), from the card's security schemes.
//! - `card`: the card URL, validating a card, choosing its interface ([`AgentCardInfo`]).
//! - `normalize`: the JSON pass that lets `a2a-lf` read what real servers send.
//! - `error`: [`A2aError`] and its [`ErrorClass`]: not sent, ambiguous, refused, remote.
//! - `limits`: per-agent concurrency, rate, `Retry-After` pause and circuit ([`Limits`]).
//! - `reach`: whether each URL a client called answered ([`Reach`]), for its agents' health.
//! - `backoff`: full-jitter backoff and the retry loop for reads ([`retry_read`]).
//! - `task`: [`TaskView`], [`ArtifactUpdate`]: a task's state and artifacts read from its raw JSON.
//!
//! Invariants: credentials go only to the card's origin (unless allowed cross-origin) and are
//! never logged or put into an error; every URL in a log line or error is redacted; every body
//! and stream event is capped while it is read; every request is bounded in time.

mod backoff;
mod binding;
mod card;
mod client;
mod codes;
mod credentials;
/// Also the text helpers (`one_line`, `truncate_chars`, `fmt_duration`) recovery borrows.
pub(crate) mod error;
mod grpc;
pub(crate) mod grpc_pb;
mod httpjson;
mod httpjson03;
mod jsonrpc;
mod jsonrpc03;
mod limits;
mod memo;
mod normalize;
mod reach;
mod resolve;
mod security;
#[cfg(feature = "sim")]
pub mod sim_wire;
mod sse;
mod stream;
mod token_cmd;
mod transport;
mod unreached;
/// A2A v0.3 payloads ⇄ v1.0 (also the scripted agent's v0.3 mode).
pub mod v03;

#[cfg(test)]
mod tests;

/// The `a2a-lf` wire types (crate `a2a`): `types::Task`, `types::SendMessageRequest`, ….
pub use ::a2a as types;

/// The task model the wire decodes into, shared with the journal (`crate::model`).
pub use crate::model::{
    AgentOverride, ArtifactUpdate, ArtifactView, InterfaceChoice, Overrides, ProtocolBinding,
    ProtocolVersion, RemoteState, StatusTimestamp, TaskView, ViewError, WireBinding, artifact_view,
    history_holds, message_data, message_said, message_text, parse_timestamp, parts_text,
    parts_value, task_id_problem,
};
pub use backoff::{full_jitter, retry_read};
pub use binding::{ListTasksPage, Raw};
pub use card::{
    AgentCardInfo, CardInterface, Chosen, DEFAULT_MAX_CARD_SIZE, MAX_CARD_INTERFACES,
    MAX_CARD_SKILLS, WELL_KNOWN_CARD_PATH, card_placement, card_url_for,
};
pub use client::{A2aClient, Endpoint};
pub use codes::ErrorKind;
pub use credentials::{Credential, TokenSource, origin_of, redact_url, source_key};
pub(crate) use error::fmt_duration;
pub use error::{A2aError, DecodeKind, ErrorClass, Hint, RpcError};
pub use limits::{AgentLimits, LONGEST_NOT_BEFORE, LONGEST_PAUSE, Limits, Skip};
pub use reach::Reach;
pub use security::Placement;
pub use stream::EventStream;
pub use token_cmd::end_all as end_token_commands;
pub use transport::{A2A_VERSION, ClientConfig, USER_AGENT};
pub use unreached::Unreached;
