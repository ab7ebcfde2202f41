//! Agent cards: the card URL, parsing a fetched card, and choosing the JSON-RPC interface.
//!
//! Rules: the card lives at `/.well-known/agent-card.json` under the agent's
//! base URL; the endpoint is the first `supportedInterfaces` entry with `protocolBinding`
//! `"JSONRPC"` and protocol version major 1, else the first `"HTTP+JSON"` one; its `tenant` (empty means none) goes into every
//! request. A v0.3-only card (top-level `url`, no such interface) is refused with a hint.
//!
//! URLs are http or https only, and never carry userinfo: credentials live in environment
//! variables. [`redact_url`] is what every log line and error shows.

use serde_json::Value;
use url::Url;

use super::binding::ProtocolBinding;
use super::credentials::{parse_http_url, redact_url};
use super::error::A2aError;
use super::normalize;
use super::types;

/// The well-known path of the agent card.
pub const WELL_KNOWN_CARD_PATH: &str = "/.well-known/agent-card.json";

/// A fetched and validated agent card, with the interface chosen for JSON-RPC.
#[derive(Debug, Clone)]
pub struct AgentCardInfo {
    /// The card URL that was requested (before any redirect).
    pub card_url: String,
    /// The origin of `card_url` (`scheme://host:port`); credentials go only there.
    pub origin: String,
    /// The chosen JSON-RPC interface URL.
    pub interface_url: String,
    /// The chosen interface's tenant (`Some("")` is read as `None`).
    pub tenant: Option<String>,
    /// The binding the chosen interface speaks.
    pub binding: ProtocolBinding,
    /// The card, normalized and typed.
    pub card: types::AgentCard,
    /// The card as received.
    pub raw: Value,
}

/// Returns the card URL for a base URL; a URL whose path already ends in `.json` is the card
/// URL itself.
pub fn card_url_for(url: &str) -> Result<String, A2aError> {
    let mut parsed = parse_http_url(url)?;
    parsed.set_fragment(None);
    let is_json = std::path::Path::new(parsed.path())
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if is_json {
        return Ok(parsed.into());
    }
    let path = format!(
        "{}{WELL_KNOWN_CARD_PATH}",
        parsed.path().trim_end_matches('/')
    );
    parsed.set_path(&path);
    Ok(parsed.into())
}

/// Normalizes, types and validates a card body, and chooses its JSON-RPC interface.
pub(crate) fn parse_card(card_url: &str, raw: Value) -> Result<AgentCardInfo, A2aError> {
    let shown = redact_url(card_url);
    let invalid = |detail: String| A2aError::InvalidCard {
        url: shown.clone(),
        detail,
    };
    if !raw.is_object() {
        return Err(invalid("the card is not a JSON object".to_owned()));
    }
    let mut value = raw.clone();
    normalize::agent_card(&mut value);
    let card: types::AgentCard = normalize::typed_value(value).map_err(invalid)?;
    // The first interface of the most preferred binding we speak (JSON-RPC, then HTTP+JSON).
    let chosen = card
        .supported_interfaces
        .iter()
        .filter_map(|i| ProtocolBinding::of_interface(i).map(|b| (i, b)))
        .min_by_key(|(_, b)| b.preference());
    let Some((chosen, binding)) = chosen else {
        let found = if card.supported_interfaces.is_empty() {
            "it lists no supportedInterfaces".to_owned()
        } else {
            let list: Vec<String> = card
                .supported_interfaces
                .iter()
                .map(|i| format!("{} {}", i.protocol_binding, i.protocol_version))
                .collect();
            format!("found: {}", list.join(", "))
        };
        return Err(A2aError::NoJsonRpcInterface {
            url: shown,
            found,
            legacy: raw.get("url").is_some(),
        });
    };
    let base = Url::parse(card_url).map_err(|e| invalid(e.to_string()))?;
    let interface = base
        .join(chosen.url.trim())
        .map_err(|e| invalid(format!("its JSON-RPC interface URL does not parse: {e}")))?;
    let interface_url: String = interface.into();
    if let Err(A2aError::InvalidUrl { reason, .. }) = parse_http_url(&interface_url) {
        return Err(invalid(format!(
            "its JSON-RPC interface URL `{}` is unusable: {reason}",
            redact_url(&interface_url)
        )));
    }
    let tenant = chosen.tenant.clone().filter(|t| !t.is_empty());
    Ok(AgentCardInfo {
        card_url: card_url.to_owned(),
        origin: base.origin().ascii_serialization(),
        interface_url,
        tenant,
        binding,
        card,
        raw,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn card_url_from_base_urls() {
        let cases = [
            (
                "http://127.0.0.1:8001",
                "http://127.0.0.1:8001/.well-known/agent-card.json",
            ),
            (
                "http://127.0.0.1:8001/",
                "http://127.0.0.1:8001/.well-known/agent-card.json",
            ),
            (
                "https://a.example/agents/x/",
                "https://a.example/agents/x/.well-known/agent-card.json",
            ),
            ("https://a.example/card.json", "https://a.example/card.json"),
            (
                "https://a.example/.well-known/agent-card.json#frag",
                "https://a.example/.well-known/agent-card.json",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(card_url_for(input).unwrap(), want, "{input}");
        }
    }

    #[test]
    fn card_url_refuses_userinfo_and_other_schemes() {
        for bad in [
            "http://u:p@a.example/",
            "http://u@a.example/",
            "ftp://a.example/",
            "a.example",
            "",
        ] {
            let err = card_url_for(bad).unwrap_err();
            assert!(matches!(err, A2aError::InvalidUrl { .. }), "{bad}: {err}");
            assert!(!err.to_string().contains("u:p"), "{err}");
        }
    }

    #[test]
    fn a_url_without_its_scheme_gets_the_url_with_it_as_the_hint() {
        for (given, suggested) in [
            ("127.0.0.1:8001", "did you mean `http://127.0.0.1:8001`?"),
            ("localhost:8001/", "did you mean `http://localhost:8001/`?"),
            (
                "agent.example.com",
                "did you mean `http://agent.example.com`?",
            ),
        ] {
            let err = card_url_for(given).unwrap_err();
            let hint = err.hint().unwrap();
            assert!(hint.starts_with(suggested), "{given}: {hint}");
            assert!(!hint.contains("user:password"), "{given}: {hint}");
        }
        let err = card_url_for("http://u:p@a.example/").unwrap_err();
        assert!(err.hint().unwrap().contains("user:password@"));
        // No suggestion that would repeat a credential typed without a scheme.
        let err = card_url_for("u:secret@a.example").unwrap_err();
        assert!(!err.hint().unwrap().contains("secret"));
    }

    fn card(interfaces: &Value) -> Value {
        json!({"name": "n", "version": "1", "description": "d", "capabilities": {},
               "supportedInterfaces": interfaces, "skills": []})
    }

    #[test]
    fn the_first_jsonrpc_v1_interface_wins() {
        let raw = card(&json!([
            {"url": "http://a.example/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            {"url": "http://a.example/old", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": "http://a.example/v11", "protocolBinding": "JSONRPC", "protocolVersion": "1.1", "tenant": "t1"},
            {"url": "http://a.example/v10", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ]));
        let info = parse_card("http://a.example/.well-known/agent-card.json", raw).unwrap();
        assert_eq!(info.interface_url, "http://a.example/v11");
        assert_eq!(info.tenant.as_deref(), Some("t1"));
        assert_eq!(info.origin, "http://a.example");
    }

    #[test]
    fn http_json_is_chosen_only_when_no_jsonrpc_v1_interface_exists() {
        let raw = card(&json!([
            {"url": "http://a.example/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            {"url": "http://a.example/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0", "tenant": "t2"},
            {"url": "http://a.example/rest2", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
        ]));
        let info = parse_card("http://a.example/.well-known/agent-card.json", raw).unwrap();
        assert_eq!(info.interface_url, "http://a.example/rest");
        assert_eq!(info.binding, ProtocolBinding::HttpJsonV1);
        assert_eq!(info.tenant.as_deref(), Some("t2"));
        let raw = card(&json!([
            {"url": "http://a.example/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            {"url": "http://a.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ]));
        let info = parse_card("http://a.example/.well-known/agent-card.json", raw).unwrap();
        assert_eq!(info.interface_url, "http://a.example/rpc");
        assert_eq!(info.binding, ProtocolBinding::JsonRpcV1);
    }

    #[test]
    fn an_empty_tenant_is_none_and_relative_urls_resolve() {
        let raw = card(&json!([
            {"url": "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": ""}
        ]));
        let info = parse_card("http://a.example:81/x/.well-known/agent-card.json", raw).unwrap();
        assert_eq!(info.interface_url, "http://a.example:81/rpc");
        assert_eq!(info.tenant, None);
    }

    #[test]
    fn no_v1_jsonrpc_interface_is_a_clear_error() {
        let raw = card(&json!([
            {"url": "http://a.example/", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
        ]));
        let err = parse_card("http://a.example/.well-known/agent-card.json", raw).unwrap_err();
        assert!(
            matches!(err, A2aError::NoJsonRpcInterface { legacy: false, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("GRPC 1.0"), "{err}");
        assert_eq!(err.exit_code(), crate::exit::FAILURE);
    }

    #[test]
    fn interface_urls_with_userinfo_are_refused() {
        let raw = card(&json!([
            {"url": "http://u:p@a.example/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ]));
        let err = parse_card("http://a.example/.well-known/agent-card.json", raw).unwrap_err();
        assert!(matches!(err, A2aError::InvalidCard { .. }), "{err}");
        assert!(!err.to_string().contains("u:p"), "{err}");
    }
}
