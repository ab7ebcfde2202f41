//! [`A2aError`]: every way a call to a remote agent can fail, kept apart.
//!
//! Recovery depends on telling "never sent" from "may have been processed" from "refused", so
//! the variants keep what the wire said: connect error, timeout, HTTP status (with
//! `Retry-After` and a short inert body snippet), JSON-RPC error (code, message, data), decode
//! error, size cap. [`A2aError::class`] folds them into the four classes recovery decides on.
//!
//! Invariants: every URL in a variant is already redacted ([`crate::a2a::redact_url`]); no variant
//! ever holds a credential; remote text is made inert and one-line before it is displayed.

use std::fmt::{self, Write as _};
use std::time::Duration;

use serde_json::Value;

use super::codes::ErrorKind;
use crate::exit;
use crate::sanitize::inert;

/// The operation name of fetching an Agent Card (the `method` of its errors).
pub(crate) const CARD_FETCH: &str = "agent card fetch";

/// What an error means for a request that might have changed remote state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Provably never reached the server (bad URL, DNS, connection refused).
    NotSent,
    /// May have been processed (timeout, reset, 5xx, 429, invalid body, -32603).
    Ambiguous,
    /// Definitive refusal, nothing created: JSON-RPC -32600/-32601/-32602/-32005/-32009,
    /// HTTP 400/401/403/404/405.
    Refused,
    /// Any other JSON-RPC error (-32001, -32002, -32004, …): the caller decides by code.
    Remote,
}

/// A JSON-RPC error object as the agent sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The error code.
    pub code: i64,
    /// The message, as received (remote text: make it inert before showing it).
    pub message: String,
    /// The `data` member (v1.0: an array of `@type` objects), as received.
    pub data: Option<Value>,
}

/// Which way a response body failed to decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeKind {
    /// The body is not UTF-8.
    InvalidUtf8,
    /// The body is not JSON.
    InvalidJson,
    /// The JSON does not have the expected shape (envelope or A2A type).
    WrongShape,
    /// The JSON-RPC `id` is not the one sent.
    WrongId,
    /// The `Content-Type` is neither JSON nor an event stream.
    ContentType,
    /// A task id that cannot be one URL path segment (`.`, `..`, empty, or holding a tab or a
    /// line break, which URLs drop): no request could name the task, and one that tried would
    /// read another resource (`GET /tasks/..` is the task collection).
    TaskId,
}

impl fmt::Display for DecodeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::InvalidUtf8 => "invalid UTF-8",
            Self::InvalidJson => "invalid JSON",
            Self::WrongShape => "unexpected shape",
            Self::WrongId => "wrong JSON-RPC id",
            Self::ContentType => "unexpected content type",
            Self::TaskId => "unusable task id",
        })
    }
}

/// What the operator can do about an [`A2aError`], as a kind ([`A2aError::hint`]): the
/// command layer writes its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hint {
    /// A URL given without its scheme: the URL as given, trimmed.
    SchemeMissing(String),
    /// A URL with `user:password@` in it.
    UserInfo,
    /// Another URL that is not an http:// or https:// one.
    BadUrl,
    /// The credential variable named is not set.
    CredentialVar(String),
    /// The token command failed.
    TokenCommand,
    /// The agent could not be reached: nothing was sent.
    Connect,
    /// The agent did not answer in time.
    Timeout,
    /// The request was skipped: the agent's not-before time is ahead (`true`), or its circuit
    /// is open.
    Skipped {
        /// Whether a not-before time skipped it.
        not_before: bool,
    },
    /// The connection broke.
    Broken,
    /// No Agent Card at that address.
    NoCard,
    /// What the address serves is not an Agent Card.
    NotACard,
    /// The agent named its task with an id no URL can hold.
    BadTaskId,
    /// A 404 whose body names no A2A error: a proxy's.
    Proxy,
    /// The agent refused the credentials (401, 403).
    CredentialsRefused,
    /// A 404 or 405 from the interface URL.
    WrongInterfaceUrl,
    /// The agent is busy (429, 503), with the wait it asked for.
    Busy(Option<Duration>),
    /// The agent or a proxy failed (5xx).
    ServerFailed,
    /// Another HTTP status.
    UnexpectedStatus,
    /// The agent does not accept A2A 1.0.
    VersionNotSupported,
    /// The agent does not implement the method.
    MethodNotFound,
    /// The agent refuses client-chosen context ids.
    ContextIdRefused,
    /// The agent refused the request as invalid.
    RefusedAsInvalid,
    /// The agent failed internally.
    FailedInternally,
    /// The answer is not a valid JSON-RPC response.
    NotJsonRpc,
    /// The answer was over the size cap.
    TooLarge,
    /// The card is not a valid Agent Card.
    InvalidCard,
    /// The card is over a bound: the flag that sets it, if one does.
    CardOverBound(Option<&'static str>),
    /// The card offers no interface a2a-recover speaks (`legacy`: a v0.3 card).
    NoInterface {
        /// Whether the card is a v0.3 one.
        legacy: bool,
    },
}

/// An error talking to a remote A2A agent.
#[derive(Debug, thiserror::Error)]
pub enum A2aError {
    /// The URL cannot be used: not http(s), has userinfo, or does not parse.
    #[error("invalid URL `{url}`: {reason}")]
    InvalidUrl {
        /// The redacted URL.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The environment variable that should hold a credential cannot be used.
    #[error("environment variable `{var}` {problem}")]
    Credential {
        /// The variable's name.
        var: String,
        /// What is wrong ("is not set", "is empty", …).
        problem: &'static str,
    },
    /// The command that should print a credential (`--token-cmd`) cannot be used; never
    /// carries the command's output.
    #[error("token command `{cmd}` {problem}")]
    TokenCommand {
        /// The command as given (journaled; holds no secret).
        cmd: String,
        /// What went wrong ("timed out after 10s", "exited with status 1", …).
        problem: String,
    },
    /// The HTTP client could not be built.
    #[error("failed to set up the HTTP client: {detail}")]
    Client {
        /// The cause.
        detail: String,
    },
    /// The connection could not be made (DNS, refused, TLS): nothing was sent.
    #[error("could not connect to `{url}` for {method}: {detail}")]
    Connect {
        /// The redacted URL.
        url: String,
        /// The JSON-RPC method or operation.
        method: &'static str,
        /// The cause.
        detail: String,
        /// Why, as a kind ([`super::Unreached::Refused`], [`super::Unreached::NoSuchHost`],
        /// [`super::Unreached::Tls`] or [`super::Unreached::NoConnection`]).
        why: super::Unreached,
    },
    /// No complete answer within the timeout.
    #[error("{method} at `{url}` timed out after {}{}", fmt_duration(*after), fmt_tries(*tries))]
    Timeout {
        /// The redacted URL.
        url: String,
        /// The JSON-RPC method or operation.
        method: &'static str,
        /// The timeout that elapsed.
        after: Duration,
        /// How many tries timed out, and the time they took in all, retries and their pauses
        /// included (`None`: one try): what an operator waited for.
        tries: Option<(u32, Duration)>,
    },
    /// The connection broke after the request may have left (reset, cut body, redirect loop).
    #[error("connection to `{url}` failed during {method}: {detail}")]
    Transport {
        /// The redacted URL.
        url: String,
        /// The JSON-RPC method or operation.
        method: &'static str,
        /// The cause.
        detail: String,
        /// Whether retrying a read is worthwhile (a reset is, a redirect loop is not).
        transient: bool,
    },
    /// A non-success HTTP status.
    #[error(
        "`{url}` answered {method} with HTTP {status}{}",
        if snippet.is_empty() { String::new() } else { format!(": {}", one_line(snippet)) }
    )]
    Http {
        /// The redacted URL.
        url: String,
        /// The JSON-RPC method or operation.
        method: &'static str,
        /// The HTTP status code.
        status: u16,
        /// The parsed `Retry-After` header.
        retry_after: Option<Duration>,
        /// The start of the body, inert and on one line.
        snippet: String,
        /// A JSON-RPC error found in the body, if any (over HTTP+JSON: the error its
        /// `ErrorInfo` reason stands for, with the JSON-RPC code of that reason).
        rpc: Option<Box<RpcError>>,
        /// The `google.rpc.ErrorInfo` reason of an HTTP+JSON error body (`TASK_NOT_FOUND`, …).
        reason: Option<String>,
        /// An HTTP+JSON 404 whose body names no A2A reason: a proxy's or a router's answer, not
        /// the agent's word that the task is gone (never proof of absence; retried as transient).
        unattributed: bool,
    },
    /// A JSON-RPC error answer.
    #[error(
        "agent at `{url}` answered {method} with JSON-RPC error {}: {}",
        error.code,
        one_line(&error.message)
    )]
    Rpc {
        /// The redacted URL.
        url: String,
        /// The JSON-RPC method.
        method: &'static str,
        /// The error object.
        error: RpcError,
    },
    /// The answer could not be decoded.
    #[error(
        "invalid answer from `{url}` to {method}: {kind}: {}",
        one_line(detail)
    )]
    Decode {
        /// The redacted URL.
        url: String,
        /// The JSON-RPC method or operation.
        method: &'static str,
        /// What failed.
        kind: DecodeKind,
        /// Details (may quote remote text).
        detail: String,
    },
    /// The body, or one stream event, is over `--max-response-size`.
    #[error("the answer from `{url}` to {method} is larger than the {limit}-byte limit")]
    TooLarge {
        /// The redacted URL.
        url: String,
        /// The JSON-RPC method or operation.
        method: &'static str,
        /// The limit in bytes.
        limit: u64,
    },
    /// A stream stayed silent longer than the idle timeout (bytes that never complete a line
    /// count as silence).
    #[error(
        "the {method} stream from `{url}` was silent (no complete line) for {}",
        fmt_duration(*after)
    )]
    StreamIdle {
        /// The redacted URL.
        url: String,
        /// The JSON-RPC method.
        method: &'static str,
        /// The idle timeout that elapsed.
        after: Duration,
    },
    /// A stream ended in the middle of an event: it was cut, not completed.
    #[error("the {method} stream from `{url}` ended in the middle of an event")]
    StreamTruncated {
        /// The redacted URL.
        url: String,
        /// The JSON-RPC method.
        method: &'static str,
    },
    /// Not sent: the agent's circuit is open for this pass (consecutive timeouts or connection
    /// failures), or its not-before time is ahead (a `Retry-After` too long to wait for).
    #[error("{method} to `{url}` skipped this pass: {reason}")]
    Skipped {
        /// The redacted interface URL.
        url: String,
        /// The JSON-RPC method or operation.
        method: &'static str,
        /// Why the agent is skipped.
        reason: String,
        /// When it may be tried again, if it gave a not-before time.
        not_before: Option<chrono::DateTime<chrono::Utc>>,
    },
    /// The agent card does not parse as an A2A v1.0 card.
    #[error("invalid agent card at `{url}`: {}", one_line(detail))]
    InvalidCard {
        /// The redacted card URL.
        url: String,
        /// What is wrong.
        detail: String,
    },
    /// The card is over a bound on what a card may hold (its bytes, its interfaces, its
    /// skills): a card we cannot use, like one offering no interface we speak.
    #[error("the agent card at `{url}` {what}")]
    CardOverBound {
        /// The redacted card URL.
        url: String,
        /// Which bound, for the message: "is larger than the 1048576-byte bound of
        /// --max-card-size", "lists more than 64 interfaces (the bound on a card)".
        what: String,
        /// The flag that sets the bound, if one does.
        flag: Option<&'static str>,
    },
    /// The card offers no interface we speak (A2A 1.x over JSON-RPC or HTTP+JSON, 0.3 over
    /// JSON-RPC), or none that the forced `--binding` / `--protocol` allow.
    #[error(
        "the agent card at `{url}` offers no interface a2a-recover speaks ({})",
        one_line(found)
    )]
    NoJsonRpcInterface {
        /// The redacted card URL.
        url: String,
        /// The interfaces it does offer, for the message.
        found: String,
        /// Whether it looks like an A2A v0.3 card (top-level `url`).
        legacy: bool,
    },
}

impl A2aError {
    /// Returns what the error means for a request that might have changed remote state.
    pub fn class(&self) -> ErrorClass {
        match self {
            Self::InvalidUrl { .. }
            | Self::Credential { .. }
            | Self::TokenCommand { .. }
            | Self::Client { .. }
            | Self::Connect { .. }
            | Self::Skipped { .. } => ErrorClass::NotSent,
            Self::Http {
                status,
                rpc,
                unattributed,
                ..
            } => match (status, rpc) {
                _ if *unattributed => ErrorClass::Ambiguous,
                // The credentials were refused before any work, whatever the body says.
                (401 | 403, _) => ErrorClass::Refused,
                // A structured error in a 4xx body decides (HTTP+JSON carries every A2A error
                // so).
                (400..=428 | 430..=499, Some(error)) => rpc_class(error.code),
                (400 | 404 | 405, _) => ErrorClass::Refused,
                _ => ErrorClass::Ambiguous,
            },
            Self::Rpc { error, .. } => rpc_class(error.code),
            Self::Timeout { .. }
            | Self::Transport { .. }
            | Self::Decode { .. }
            | Self::TooLarge { .. }
            | Self::StreamIdle { .. }
            | Self::StreamTruncated { .. }
            | Self::InvalidCard { .. }
            | Self::CardOverBound { .. }
            | Self::NoJsonRpcInterface { .. } => ErrorClass::Ambiguous,
        }
    }

    /// Returns whether retrying a read is worthwhile: connect refused or reset, timeout, 429,
    /// 502, 503, 504.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Connect { .. }
            | Self::Timeout { .. }
            | Self::StreamIdle { .. }
            | Self::StreamTruncated { .. } => true,
            Self::Transport { transient, .. } => *transient,
            Self::Http {
                status,
                unattributed,
                ..
            } => *unattributed || matches!(status, 429 | 502 | 503 | 504),
            _ => false,
        }
    }

    /// Returns the server's `Retry-After`, parsed from seconds or an HTTP date.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Returns whether the answer says the interface is not served here (any more): an HTTP
    /// 404 or 405 carrying no A2A error, a connection refused, or JSON-RPC "method not found"
    /// (-32601). Never proof that a task is gone: only a reason to read the card again.
    pub fn is_not_served_here(&self) -> bool {
        match self {
            Self::Http {
                status: 404 | 405,
                rpc,
                reason,
                ..
            } => {
                rpc.as_ref()
                    .is_none_or(|e| ErrorKind::of_code(e.code) == Some(ErrorKind::MethodNotFound))
                    && reason.is_none()
            }
            Self::Connect { .. } => true,
            _ => self.kind() == Some(ErrorKind::MethodNotFound),
        }
    }

    /// Returns the JSON-RPC error code, also when it came in a non-2xx body.
    pub fn rpc_code(&self) -> Option<i64> {
        self.rpc_error().map(|e| e.code)
    }

    /// Returns the A2A error kind the agent answered with (a JSON-RPC error, or the error an
    /// HTTP+JSON body's reason stands for); `None` for codes A2A does not name.
    pub fn kind(&self) -> Option<ErrorKind> {
        self.rpc_code().and_then(ErrorKind::of_code)
    }

    /// Returns the stable name of the A2A error kind the agent answered with, its `ErrorInfo`
    /// reason (`INVALID_PARAMS`) whichever binding carried it: what the journal keeps beside a
    /// failure's line (`replies.error_kind`), so that reads decide on the kind, never on words.
    pub fn kind_name(&self) -> Option<&'static str> {
        self.kind().map(ErrorKind::reason)
    }

    /// Returns the JSON-RPC error object, also when it came in a non-2xx body.
    pub fn rpc_error(&self) -> Option<&RpcError> {
        match self {
            Self::Rpc { error, .. } => Some(error),
            Self::Http { rpc, .. } => rpc.as_deref(),
            _ => None,
        }
    }

    /// Returns whether the agent said it does not offer the operation at all: the method is
    /// unknown (JSON-RPC -32601) or unsupported (-32004), also when it came in a non-2xx body.
    /// Note that some agents answer -32004 for a terminal task too: ask about a task that
    /// cannot be terminal (an unknown id) before reading "unsupported" as "absent".
    pub fn is_unsupported_operation(&self) -> bool {
        matches!(
            self.kind(),
            Some(ErrorKind::MethodNotFound | ErrorKind::UnsupportedOperation)
        )
    }

    /// Returns what the error says of the agent's health: `Some(false)` when it did not answer
    /// (a connection refused or cut, a timeout, a stream gone silent or cut, a gateway's 502,
    /// 503 or 504, or a 404 no A2A error attributes to it), `Some(true)` when it answered, even
    /// with an error of its own, and `None` when nothing was asked of it (a bad URL, a
    /// credential that could not be read, the agent's circuit open).
    pub fn answered(&self) -> Option<bool> {
        match self {
            Self::InvalidUrl { .. }
            | Self::Credential { .. }
            | Self::TokenCommand { .. }
            | Self::Client { .. }
            | Self::Skipped { .. } => None,
            Self::Connect { .. }
            | Self::Timeout { .. }
            | Self::Transport { .. }
            | Self::StreamIdle { .. }
            | Self::StreamTruncated { .. } => Some(false),
            Self::Http {
                status,
                rpc,
                reason,
                unattributed,
                ..
            } => Some(
                !(*unattributed
                    || (matches!(status, 502..=504) && rpc.is_none() && reason.is_none())),
            ),
            Self::Rpc { .. }
            | Self::Decode { .. }
            | Self::TooLarge { .. }
            | Self::InvalidCard { .. }
            | Self::CardOverBound { .. }
            | Self::NoJsonRpcInterface { .. } => Some(true),
        }
    }

    /// Returns whether the agent said the task does not exist (JSON-RPC -32001).
    pub fn is_task_not_found(&self) -> bool {
        self.kind() == Some(ErrorKind::TaskNotFound)
    }

    /// Returns the error code the agent answered with, as its binding names it, for a profile
    /// or a report: an HTTP+JSON `ErrorInfo` reason (`TASK_NOT_FOUND`), else the JSON-RPC code
    /// in decimal (`-32004`), else `HTTP NNN`; `None` when the agent answered nothing (a
    /// connection failure, a timeout) or nothing readable.
    pub fn wire_code(&self) -> Option<String> {
        if let Self::Http {
            reason: Some(reason),
            ..
        } = self
        {
            return Some(one_line(reason));
        }
        match (self.rpc_code(), self.http_status()) {
            (Some(code), _) => Some(code.to_string()),
            (None, Some(status)) => Some(format!("HTTP {status}")),
            (None, None) => None,
        }
    }

    /// Returns the HTTP status of a non-success answer.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            Self::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Returns whether the agent refused a client-chosen `contextId`: -32602 whose message or
    /// `BadRequest` field violations name `contextId`.
    pub fn is_context_id_refusal(&self) -> bool {
        let Some(error) = self.rpc_error() else {
            return false;
        };
        if ErrorKind::of_code(error.code) != Some(ErrorKind::InvalidParams) {
            return false;
        }
        if names_context_id(&error.message) {
            return true;
        }
        let Some(Value::Array(details)) = &error.data else {
            return false;
        };
        details.iter().any(|detail| {
            detail
                .get("fieldViolations")
                .and_then(Value::as_array)
                .is_some_and(|violations| {
                    violations.iter().any(|v| {
                        v.get("field")
                            .and_then(Value::as_str)
                            .is_some_and(names_context_id)
                    })
                })
        })
    }

    /// Returns whether the answer was over the size cap.
    pub fn is_too_large(&self) -> bool {
        matches!(self, Self::TooLarge { .. })
    }

    /// Returns whether the agent named a task with an id no URL path can hold
    /// ([`DecodeKind::TaskId`]): the request was received, and the task cannot be read.
    pub fn is_bad_task_id(&self) -> bool {
        matches!(
            self,
            Self::Decode {
                kind: DecodeKind::TaskId,
                ..
            }
        )
    }

    /// Returns whether the request was never made because of how it was set up: a bad URL, or a
    /// credential variable or token command that gave no credential (the operator's to fix; a
    /// usage error when it ends a command).
    pub fn is_bad_setup(&self) -> bool {
        matches!(
            self,
            Self::InvalidUrl { .. } | Self::Credential { .. } | Self::TokenCommand { .. }
        )
    }

    /// Returns whether the answer says the route does not exist at this interface: an HTTP 501,
    /// or a 404 or 405 naming no A2A error (not the agent's word on a task).
    pub fn is_unimplemented_route(&self) -> bool {
        matches!(
            self,
            Self::Http { status: 501, .. }
                | Self::Http {
                    status: 404 | 405,
                    rpc: None,
                    reason: None,
                    ..
                }
        )
    }

    /// Returns the exit code this error maps to when it ends a command.
    ///
    /// Over the size cap → 4; refused or another JSON-RPC error → 4; not sent or ambiguous
    /// (unreachable, timeout, garbage) → 3; an invalid card → 1; a bad URL or credential
    /// variable → 2. Commands with their own rule (`agents add` on an unreachable agent exits
    /// 1) map the error themselves.
    pub fn exit_code(&self) -> u8 {
        match self {
            _ if self.is_bad_setup() => exit::USAGE,
            Self::Client { .. }
            | Self::InvalidCard { .. }
            | Self::CardOverBound { .. }
            | Self::NoJsonRpcInterface { .. } => exit::FAILURE,
            Self::TooLarge { .. } => exit::NEEDS_HUMAN,
            _ if self.is_bad_task_id() => exit::NEEDS_HUMAN,
            _ => match self.class() {
                ErrorClass::Refused | ErrorClass::Remote => exit::NEEDS_HUMAN,
                ErrorClass::NotSent | ErrorClass::Ambiguous => exit::WORK_REMAINS,
            },
        }
    }

    /// Returns what the operator can do about it, as a kind: the command layer writes its
    /// words.
    pub fn hint(&self) -> Option<Hint> {
        if let Self::Http {
            status: status @ (400..=428 | 430..=499),
            rpc: Some(error),
            ..
        } = self
            && !matches!(status, 401 | 403)
            && let Some(hint) = self.rpc_hint(error)
        {
            return Some(hint);
        }
        Some(match self {
            // `127.0.0.1:8001`, `localhost:8001`: the scheme was left out.
            Self::InvalidUrl { url, .. } if !url.contains("://") && !url.contains('@') => {
                Hint::SchemeMissing(url.trim().to_owned())
            }
            Self::InvalidUrl { reason, .. } if reason.contains("user:password@") => Hint::UserInfo,
            Self::InvalidUrl { .. } => Hint::BadUrl,
            Self::Credential { var, .. } => Hint::CredentialVar(var.clone()),
            Self::TokenCommand { .. } => Hint::TokenCommand,
            Self::Client { .. } => return None,
            Self::Connect { .. } => Hint::Connect,
            Self::Timeout { .. } | Self::StreamIdle { .. } => Hint::Timeout,
            Self::Skipped { not_before, .. } => Hint::Skipped {
                not_before: not_before.is_some(),
            },
            Self::Transport { .. } | Self::StreamTruncated { .. } => Hint::Broken,
            Self::Http {
                status: 404 | 405,
                method: CARD_FETCH,
                ..
            } => Hint::NoCard,
            Self::Decode {
                method: CARD_FETCH, ..
            } => Hint::NotACard,
            Self::Decode {
                kind: DecodeKind::TaskId,
                ..
            } => Hint::BadTaskId,
            Self::Http {
                unattributed: true, ..
            } => Hint::Proxy,
            Self::Http { status, .. } => self.http_hint(*status),
            Self::Rpc { error, .. } => return self.rpc_hint(error),
            Self::Decode { .. } => Hint::NotJsonRpc,
            Self::TooLarge { .. } => Hint::TooLarge,
            Self::InvalidCard { .. } => Hint::InvalidCard,
            Self::CardOverBound { flag, .. } => Hint::CardOverBound(*flag),
            Self::NoJsonRpcInterface { legacy, .. } => Hint::NoInterface { legacy: *legacy },
        })
    }

    /// Returns what the operator can do about a non-success HTTP status.
    fn http_hint(&self, status: u16) -> Hint {
        match status {
            401 | 403 => Hint::CredentialsRefused,
            404 | 405 => Hint::WrongInterfaceUrl,
            429 | 503 => Hint::Busy(self.retry_after()),
            500..=599 => Hint::ServerFailed,
            _ => Hint::UnexpectedStatus,
        }
    }

    /// Returns what the operator can do about an A2A error (a JSON-RPC error, or the error an
    /// HTTP+JSON body's reason stands for).
    fn rpc_hint(&self, error: &RpcError) -> Option<Hint> {
        use ErrorKind as K;
        Some(match ErrorKind::of_code(error.code)? {
            K::VersionNotSupported => Hint::VersionNotSupported,
            K::MethodNotFound => Hint::MethodNotFound,
            K::InvalidParams if self.is_context_id_refusal() => Hint::ContextIdRefused,
            K::InvalidRequest | K::InvalidParams | K::ContentTypeNotSupported => {
                Hint::RefusedAsInvalid
            }
            K::InternalError => Hint::FailedInternally,
            _ => return None,
        })
    }

    /// Returns one inert line without secrets, for the journal's error column and events.
    pub fn summary(&self) -> String {
        let mut s = one_line(&self.to_string());
        if let Self::Http {
            reason: Some(reason),
            ..
        } = self
        {
            let _ = write!(s, " ({})", one_line(reason));
        } else if let Some(code) = self.rpc_code()
            && !matches!(self, Self::Rpc { .. })
        {
            let _ = write!(s, " (JSON-RPC {code})");
        }
        truncate_chars(&s, 400)
    }
}

/// Returns the class of an A2A error code (JSON-RPC, or an HTTP+JSON reason's code).
fn rpc_class(code: i64) -> ErrorClass {
    use ErrorKind as K;
    match ErrorKind::of_code(code) {
        Some(
            K::InvalidRequest
            | K::MethodNotFound
            | K::InvalidParams
            | K::ContentTypeNotSupported
            | K::VersionNotSupported,
        ) => ErrorClass::Refused,
        Some(K::InternalError) => ErrorClass::Ambiguous,
        _ => ErrorClass::Remote,
    }
}

/// Returns whether a message or field path names the `contextId` field.
fn names_context_id(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    lower.contains("contextid") || lower.contains("context_id")
}

/// Makes remote text inert and puts it on one bounded line.
pub(crate) fn one_line(s: &str) -> String {
    let collapsed = s.split_whitespace().collect::<Vec<_>>().join(" ");
    truncate_chars(&inert(&collapsed), 300)
}

/// Cuts a string to at most `max` characters, marking the cut with `…`.
pub(crate) fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// Formats a duration for messages: `30s`, `1500ms`.
/// The tries of a read that timed out more than once, as its message ends: ` on each of 3
/// tries, 92s in all`.
fn fmt_tries(tries: Option<(u32, Duration)>) -> String {
    match tries {
        Some((n, spent)) if n > 1 => {
            // Whole seconds: a read that timed out twice took seconds at the least.
            let spent = Duration::from_secs(spent.as_secs().max(1));
            format!(" on each of {n} tries, {} in all", fmt_duration(spent))
        }
        _ => String::new(),
    }
}

pub(crate) fn fmt_duration(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}
