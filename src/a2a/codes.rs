//! The A2A error kinds, named once: each kind's JSON-RPC code and the `google.rpc.ErrorInfo`
//! reason HTTP+JSON (and gRPC) carry for it. Everything above the wire asks an
//! [`A2aError`](super::A2aError) for its [`ErrorKind`]; no code outside this file compares error
//! numbers.

/// An error an A2A agent answers with, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// `TaskNotFoundError`: the task does not exist (or no longer).
    TaskNotFound,
    /// `TaskNotCancelableError`: the task cannot be canceled in its state.
    TaskNotCancelable,
    /// `PushNotificationNotSupportedError`.
    PushNotificationNotSupported,
    /// `UnsupportedOperationError`: the agent does not offer the operation (some agents also
    /// answer it for a task in a terminal state).
    UnsupportedOperation,
    /// `ContentTypeNotSupportedError`: a part's media type is refused.
    ContentTypeNotSupported,
    /// `InvalidAgentResponseError`.
    InvalidAgentResponse,
    /// `ExtendedAgentCardNotConfiguredError`.
    ExtendedAgentCardNotConfigured,
    /// `ExtensionSupportRequiredError`.
    ExtensionSupportRequired,
    /// `VersionNotSupportedError`: the agent does not accept our `A2A-Version`.
    VersionNotSupported,
    /// JSON-RPC "invalid request".
    InvalidRequest,
    /// JSON-RPC "method not found".
    MethodNotFound,
    /// JSON-RPC "invalid params".
    InvalidParams,
    /// JSON-RPC "internal error": the request may have been processed.
    InternalError,
    /// JSON-RPC "parse error".
    ParseError,
}

impl ErrorKind {
    /// Every kind.
    pub const ALL: [Self; 14] = [
        Self::TaskNotFound,
        Self::TaskNotCancelable,
        Self::PushNotificationNotSupported,
        Self::UnsupportedOperation,
        Self::ContentTypeNotSupported,
        Self::InvalidAgentResponse,
        Self::ExtendedAgentCardNotConfigured,
        Self::ExtensionSupportRequired,
        Self::VersionNotSupported,
        Self::InvalidRequest,
        Self::MethodNotFound,
        Self::InvalidParams,
        Self::InternalError,
        Self::ParseError,
    ];

    /// Returns its JSON-RPC error code.
    pub const fn code(self) -> i64 {
        match self {
            Self::TaskNotFound => -32001,
            Self::TaskNotCancelable => -32002,
            Self::PushNotificationNotSupported => -32003,
            Self::UnsupportedOperation => -32004,
            Self::ContentTypeNotSupported => -32005,
            Self::InvalidAgentResponse => -32006,
            Self::ExtendedAgentCardNotConfigured => -32007,
            Self::ExtensionSupportRequired => -32008,
            Self::VersionNotSupported => -32009,
            Self::InvalidRequest => -32600,
            Self::MethodNotFound => -32601,
            Self::InvalidParams => -32602,
            Self::InternalError => -32603,
            Self::ParseError => -32700,
        }
    }

    /// Returns its `ErrorInfo` reason (`TASK_NOT_FOUND`, …), as HTTP+JSON error bodies carry
    /// it; the SDKs add reasons for the standard JSON-RPC errors too.
    pub const fn reason(self) -> &'static str {
        match self {
            Self::TaskNotFound => "TASK_NOT_FOUND",
            Self::TaskNotCancelable => "TASK_NOT_CANCELABLE",
            Self::PushNotificationNotSupported => "PUSH_NOTIFICATION_NOT_SUPPORTED",
            Self::UnsupportedOperation => "UNSUPPORTED_OPERATION",
            Self::ContentTypeNotSupported => "CONTENT_TYPE_NOT_SUPPORTED",
            Self::InvalidAgentResponse => "INVALID_AGENT_RESPONSE",
            Self::ExtendedAgentCardNotConfigured => "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            Self::ExtensionSupportRequired => "EXTENSION_SUPPORT_REQUIRED",
            Self::VersionNotSupported => "VERSION_NOT_SUPPORTED",
            Self::InvalidRequest => "INVALID_REQUEST",
            Self::MethodNotFound => "METHOD_NOT_FOUND",
            Self::InvalidParams => "INVALID_PARAMS",
            Self::InternalError => "INTERNAL_ERROR",
            Self::ParseError => "PARSE_ERROR",
        }
    }

    /// Returns the kind of a JSON-RPC error code, if it is one A2A names.
    pub fn of_code(code: i64) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.code() == code)
    }

    /// Returns the kind of an SDK's error class name (`TaskNotFoundError`, `InternalError`),
    /// as v0.3 gRPC status messages begin: the reason in CamelCase, `Error` at the end optional.
    pub fn of_class_name(name: &str) -> Option<Self> {
        let name = name.trim();
        let name = name.strip_suffix("Error").unwrap_or(name);
        Self::ALL.into_iter().find(|k| {
            let camel: String = k
                .reason()
                .split('_')
                .map(|w| {
                    let mut cs = w.chars();
                    cs.next().map_or_else(String::new, |c| {
                        c.to_string() + &cs.as_str().to_ascii_lowercase()
                    })
                })
                .collect();
            camel.strip_suffix("Error").unwrap_or(&camel) == name
        })
    }

    /// Returns the kind of an `ErrorInfo` reason (case-insensitive), if it is an A2A reason.
    pub fn of_reason(reason: &str) -> Option<Self> {
        let reason = reason.trim();
        Self::ALL
            .into_iter()
            .find(|k| k.reason().eq_ignore_ascii_case(reason))
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorKind;

    #[test]
    fn codes_and_reasons_name_one_kind_each() {
        for kind in ErrorKind::ALL {
            assert_eq!(ErrorKind::of_code(kind.code()), Some(kind));
            assert_eq!(ErrorKind::of_reason(kind.reason()), Some(kind));
            assert_eq!(
                ErrorKind::of_reason(&kind.reason().to_ascii_lowercase()),
                Some(kind)
            );
        }
        assert_eq!(ErrorKind::of_code(-32099), None);
        assert_eq!(ErrorKind::of_reason("NOT_A_REASON"), None);
        let classes = [
            ("TaskNotFoundError", ErrorKind::TaskNotFound),
            ("TaskNotCancelableError", ErrorKind::TaskNotCancelable),
            ("InvalidParamsError", ErrorKind::InvalidParams),
            ("InternalError", ErrorKind::InternalError),
            ("MethodNotFoundError", ErrorKind::MethodNotFound),
        ];
        for (class, kind) in classes {
            assert_eq!(ErrorKind::of_class_name(class), Some(kind), "{class}");
        }
        assert_eq!(ErrorKind::of_class_name("Unknown error type"), None);
    }
}
