//! Which protocol binding an endpoint speaks: the names a card, a flag and the journal give
//! it. The journal keeps an attempt's binding by these names; the wire (`a2a/`) builds
//! and decodes each binding's requests in its own `impl ProtocolBinding` block.

/// The protocol binding an endpoint speaks; the card's chosen interface decides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ProtocolBinding {
    /// A2A v1.0 over JSON-RPC 2.0.
    #[default]
    JsonRpcV1,
    /// A2A v1.0 over HTTP+JSON (REST).
    HttpJsonV1,
    /// A2A v0.3 over JSON-RPC 2.0 (`message/send`, …; no `tasks/list`).
    JsonRpcV03,
    /// A2A v0.3 over HTTP+JSON (the v0.3 protobuf JSON under `/v1`; no task listing).
    HttpJsonV03,
    /// A2A v1.0 over gRPC (`lf.a2a.v1.A2AService`).
    GrpcV1,
    /// A2A v0.3 over gRPC (`a2a.v1.A2AService`; no task listing).
    GrpcV03,
}

/// The wire binding of an interface, as a card names it (`protocolBinding`) and as
/// `--binding` forces it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireBinding {
    /// JSON-RPC 2.0 (`JSONRPC`; `--binding jsonrpc`).
    JsonRpc,
    /// HTTP+JSON, also called REST (`HTTP+JSON`; `--binding http-json`).
    HttpJson,
    /// gRPC (`GRPC`; `--binding grpc`).
    Grpc,
}

impl WireBinding {
    /// Returns its name in cards and in the journal (`JSONRPC`, `HTTP+JSON`, `GRPC`).
    pub const fn card_name(self) -> &'static str {
        match self {
            Self::JsonRpc => "JSONRPC",
            Self::HttpJson => "HTTP+JSON",
            Self::Grpc => "GRPC",
        }
    }

    /// Returns its name as `--binding` takes it (`jsonrpc`, `http-json`, `grpc`).
    pub const fn flag_name(self) -> &'static str {
        match self {
            Self::JsonRpc => "jsonrpc",
            Self::HttpJson => "http-json",
            Self::Grpc => "grpc",
        }
    }

    /// Reads a card's or the journal's name (case-insensitive; `REST` is HTTP+JSON).
    pub fn from_card_name(name: &str) -> Option<Self> {
        let name = name.trim();
        if name.eq_ignore_ascii_case("JSONRPC") {
            Some(Self::JsonRpc)
        } else if name.eq_ignore_ascii_case("HTTP+JSON") || name.eq_ignore_ascii_case("REST") {
            Some(Self::HttpJson)
        } else if name.eq_ignore_ascii_case("GRPC") {
            Some(Self::Grpc)
        } else {
            None
        }
    }
}

impl std::str::FromStr for WireBinding {
    type Err = String;

    /// Reads `--binding`: `jsonrpc`, `http-json` or `grpc` (also the card spellings).
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "jsonrpc" | "json-rpc" => Ok(Self::JsonRpc),
            "http-json" | "http+json" | "rest" => Ok(Self::HttpJson),
            _ => Self::from_card_name(s).ok_or_else(|| {
                format!(
                    "unknown binding `{}`: expected jsonrpc, http-json or grpc",
                    crate::sanitize::inert(s)
                )
            }),
        }
    }
}

/// The A2A protocol version of an interface (`protocolVersion`, `--protocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProtocolVersion {
    /// A2A 1.x.
    V1_0,
    /// A2A 0.3.x.
    V0_3,
}

impl ProtocolVersion {
    /// Returns its name in the journal and in records (`1.0`, `0.3`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V1_0 => "1.0",
            Self::V0_3 => "0.3",
        }
    }

    /// Reads a card's `protocolVersion` (`1.0`, `1.1`, `0.3.0`, …) by major and minor; `None`
    /// for versions no binding speaks (`0.2.5`).
    pub fn from_card(version: &str) -> Option<Self> {
        let mut parts = version.trim().split('.');
        match (
            parts.next().and_then(|m| m.parse::<u32>().ok()),
            parts.next().map(|m| m.parse::<u32>().ok()),
        ) {
            (Some(1), _) => Some(Self::V1_0),
            (Some(0), Some(Some(3))) => Some(Self::V0_3),
            _ => None,
        }
    }
}

impl std::str::FromStr for ProtocolVersion {
    type Err = String;

    /// Reads `--protocol`: `1.0` or `0.3` (`1`, `0.3.0` too).
    fn from_str(s: &str) -> Result<Self, String> {
        Self::from_card(s).ok_or_else(|| {
            format!(
                "unknown protocol version `{}`: expected 1.0 or 0.3",
                crate::sanitize::inert(s)
            )
        })
    }
}

/// What the operator forced of an agent's interface (`--binding`, `--protocol`); the default
/// forces nothing: v1.0 first, then JSON-RPC, HTTP+JSON, gRPC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct InterfaceChoice {
    /// The binding, if forced.
    pub binding: Option<WireBinding>,
    /// The protocol version, if forced.
    pub protocol: Option<ProtocolVersion>,
}

impl InterfaceChoice {
    /// Returns whether nothing is forced.
    pub fn is_free(self) -> bool {
        self.binding.is_none() && self.protocol.is_none()
    }

    /// Returns whether a binding fits the choice.
    pub fn admits(self, b: ProtocolBinding) -> bool {
        self.binding.is_none_or(|w| w == b.wire()) && self.protocol.is_none_or(|v| v == b.version())
    }

    /// Checks that some binding we speak fits the choice: the one place that refuses a
    /// `--binding`/`--protocol` pair no [`ProtocolBinding`] variant implements yet.
    pub fn check(self) -> Result<Self, String> {
        if ProtocolBinding::ALL.iter().any(|b| self.admits(*b)) {
            return Ok(self);
        }
        let spoken: Vec<String> = ProtocolBinding::ALL
            .iter()
            .map(|b| format!("{} {}", b.wire().flag_name(), b.version().as_str()))
            .collect();
        Err(format!(
            "a2a-recover does not speak {} yet (it speaks: {})",
            self.describe(),
            spoken.join(", ")
        ))
    }

    /// Describes the choice (`--binding http-json --protocol 0.3`), for messages.
    pub fn describe(self) -> String {
        let mut words = Vec::new();
        if let Some(b) = self.binding {
            words.push(format!("--binding {}", b.flag_name()));
        }
        if let Some(v) = self.protocol {
            words.push(format!("--protocol {}", v.as_str()));
        }
        if words.is_empty() {
            "any interface".to_owned()
        } else {
            words.join(" ")
        }
    }
}

impl ProtocolBinding {
    /// Returns the binding of a card interface (its `protocolBinding` and `protocolVersion`),
    /// if we speak it.
    pub(crate) fn of_interface(binding: &str, version: &str) -> Option<Self> {
        Self::of(
            WireBinding::from_card_name(binding)?,
            ProtocolVersion::from_card(version)?,
        )
    }

    /// Returns the rank of the binding when a card offers several (lower is preferred): its
    /// place in [`ProtocolBinding::ALL`].
    pub(crate) fn preference(self) -> usize {
        Self::ALL
            .iter()
            .position(|b| *b == self)
            .unwrap_or(usize::MAX)
    }

    /// Every binding we speak, in order of preference when a card offers several: v1.0
    /// first, then JSON-RPC, HTTP+JSON, gRPC (v1.0 JSON-RPC, v1.0 HTTP+JSON, v1.0 gRPC, v0.3
    /// JSON-RPC, v0.3 HTTP+JSON, v0.3 gRPC).
    pub const ALL: &'static [Self] = &[
        Self::JsonRpcV1,
        Self::HttpJsonV1,
        Self::GrpcV1,
        Self::JsonRpcV03,
        Self::HttpJsonV03,
        Self::GrpcV03,
    ];

    /// Returns its wire binding.
    pub const fn wire(self) -> WireBinding {
        match self {
            Self::JsonRpcV1 | Self::JsonRpcV03 => WireBinding::JsonRpc,
            Self::HttpJsonV1 | Self::HttpJsonV03 => WireBinding::HttpJson,
            Self::GrpcV1 | Self::GrpcV03 => WireBinding::Grpc,
        }
    }

    /// Returns its protocol version.
    pub const fn version(self) -> ProtocolVersion {
        match self {
            Self::JsonRpcV1 | Self::HttpJsonV1 | Self::GrpcV1 => ProtocolVersion::V1_0,
            Self::JsonRpcV03 | Self::HttpJsonV03 | Self::GrpcV03 => ProtocolVersion::V0_3,
        }
    }

    /// Returns the binding of a wire binding and version, if we speak it.
    pub fn of(wire: WireBinding, version: ProtocolVersion) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|b| b.wire() == wire && b.version() == version)
    }

    /// Reads the binding journaled with an attempt or agent: both columns NULL (a row written
    /// before bindings were journaled) is v1.0 JSON-RPC; `None` for names we do not speak.
    pub fn from_journal(binding: Option<&str>, version: Option<&str>) -> Option<Self> {
        match (binding, version) {
            (None, None) => Some(Self::JsonRpcV1),
            (b, v) => Self::of(
                WireBinding::from_card_name(b.unwrap_or("JSONRPC"))?,
                ProtocolVersion::from_card(v.unwrap_or("1.0"))?,
            ),
        }
    }

    /// Returns whether the binding has `ListTasks`: a look before a resend can search the
    /// agent only when it does (v0.3 has no `tasks/list`).
    pub fn can_list_tasks(self) -> bool {
        match self {
            Self::JsonRpcV1 | Self::HttpJsonV1 | Self::GrpcV1 => true,
            Self::JsonRpcV03 | Self::HttpJsonV03 | Self::GrpcV03 => false,
        }
    }
}
