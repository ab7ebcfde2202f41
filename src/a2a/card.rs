//! Agent cards: the card URL, parsing a fetched card, and choosing the interface to speak.
//!
//! Rules: the card lives at `/.well-known/agent-card.json` under the agent's base URL. Its
//! interfaces are the v1.0 `supportedInterfaces` entries (one without `protocolVersion` is
//! v1.0), then the v0.3 top-level `url` with `preferredTransport` (default JSONRPC) and
//! `protocolVersion` (default 0.3.0), and its `additionalInterfaces` `[{url, transport}]`. The
//! chosen one is the first we speak in the order of [`ProtocolBinding::ALL`] (v1.0 first, then
//! JSON-RPC), the card's order breaking ties, within what `--binding` / `--protocol` force; its
//! `tenant` (empty means none) goes into every request. A card with none we speak is refused,
//! naming what it offers.
//!
//! URLs are http or https only, and never carry userinfo: credentials live in environment
//! variables or come from a command. [`redact_url`] is what every log line and error shows.
//! Where the credential goes (a bearer, or the header, query parameter or cookie an `apiKey`
//! scheme names) is read from the card's security schemes ([`card_placement`]).

use serde_json::Value;
use url::Url;

use super::credentials::{parse_http_url, redact_url};
use super::error::A2aError;
use super::normalize;
use super::security::{self, Placement};
use super::types;
use crate::model::{InterfaceChoice, ProtocolBinding};

/// The well-known path of the agent card.
pub const WELL_KNOWN_CARD_PATH: &str = "/.well-known/agent-card.json";

/// A fetched and validated agent card, with the interface chosen by default (v1.0 first,
/// then JSON-RPC; [`AgentCardInfo::choose`] chooses under a forced binding or version).
#[derive(Debug, Clone)]
pub struct AgentCardInfo {
    /// The card URL that was requested (before any redirect).
    pub card_url: String,
    /// The origin of `card_url` (`scheme://host:port`); credentials go only there.
    pub origin: String,
    /// The chosen interface URL.
    pub interface_url: String,
    /// The chosen interface's tenant (`Some("")` is read as `None`).
    pub tenant: Option<String>,
    /// The binding the chosen interface speaks.
    pub binding: ProtocolBinding,
    /// Every interface the card offers (v1.0 `supportedInterfaces`, then the v0.3 top-level
    /// `url` / `preferredTransport` and `additionalInterfaces`), in the card's order.
    pub interfaces: Vec<CardInterface>,
    /// Where a credential goes on each request to this agent.
    pub placement: Placement,
    /// The card, normalized and typed.
    pub card: types::AgentCard,
    /// The card as received.
    pub raw: Value,
}

/// One interface a card offers, as declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardInterface {
    /// Its URL as written (possibly relative to the card URL).
    pub url: String,
    /// Its `protocolBinding` (v0.3: `transport`).
    pub binding: String,
    /// Its `protocolVersion`; a v1.0 `supportedInterfaces` entry without one reads `1.0` (an
    /// official SDK then writes v0.3 fields into the card, which must not make it v0.3).
    pub protocol_version: String,
    /// Its tenant (`None` for empty).
    pub tenant: Option<String>,
    /// The binding we would speak to it, if any.
    pub speaks: Option<ProtocolBinding>,
}

/// An interface chosen for a send: where, with which tenant, over which binding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    /// The interface URL, absolute.
    pub interface_url: String,
    /// Its tenant.
    pub tenant: Option<String>,
    /// Its binding.
    pub binding: ProtocolBinding,
}

impl AgentCardInfo {
    /// Returns the `protocolVersion` of the chosen interface (the card's first interface of
    /// the chosen binding), trimmed.
    pub fn protocol_version(&self) -> Option<String> {
        self.interfaces
            .iter()
            .find(|i| i.speaks == Some(self.binding))
            .map(|i| i.protocol_version.trim().to_owned())
    }

    /// Chooses the interface a forced `--binding` / `--protocol` allows (v1.0 first, then
    /// JSON-RPC, then the card's order); [`A2aError::NoJsonRpcInterface`] names what the card
    /// offers when none fits.
    pub fn choose(&self, want: InterfaceChoice) -> Result<Chosen, A2aError> {
        choose(
            &self.card_url,
            &self.interfaces,
            want,
            self.raw.get("url").is_some(),
        )
    }

    /// Returns whether the card still offers an interface at this URL over this binding (the
    /// one an attempt journaled).
    pub fn offers(&self, interface_url: &str, binding: ProtocolBinding) -> bool {
        let Ok(base) = Url::parse(&self.card_url) else {
            return false;
        };
        self.interfaces.iter().any(|i| {
            i.speaks == Some(binding)
                && base
                    .join(i.url.trim())
                    .is_ok_and(|u| String::from(u) == interface_url)
        })
    }
}

/// Reads every interface a card offers: v1.0 `supportedInterfaces` first, then the v0.3
/// top-level `url` (`preferredTransport`, default JSONRPC; `protocolVersion`, default 0.3.0)
/// and its `additionalInterfaces`.
fn interfaces_of(card: &types::AgentCard, raw: &Value) -> Vec<CardInterface> {
    let mut out: Vec<CardInterface> = card
        .supported_interfaces
        .iter()
        .map(|i| {
            let version = if i.protocol_version.trim().is_empty() {
                "1.0".to_owned()
            } else {
                i.protocol_version.clone()
            };
            CardInterface {
                speaks: ProtocolBinding::of_interface(&i.protocol_binding, &version),
                url: i.url.clone(),
                binding: i.protocol_binding.clone(),
                protocol_version: version,
                tenant: i.tenant.clone().filter(|t| !t.is_empty()),
            }
        })
        .collect();
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    if let Some(url) = text(raw, "url") {
        let version = text(raw, "protocolVersion").unwrap_or_else(|| "0.3.0".to_owned());
        let mut legacy = vec![(
            url,
            text(raw, "preferredTransport").unwrap_or_else(|| "JSONRPC".to_owned()),
        )];
        if let Some(Value::Array(more)) = raw.get("additionalInterfaces") {
            legacy.extend(
                more.iter()
                    .filter_map(|i| Some((text(i, "url")?, text(i, "transport")?))),
            );
        }
        for (url, binding) in legacy {
            let dup = out.iter().any(|i| {
                i.url == url
                    && i.binding.eq_ignore_ascii_case(&binding)
                    && i.protocol_version == version
            });
            if !dup {
                out.push(CardInterface {
                    speaks: ProtocolBinding::of_interface(&binding, &version),
                    url,
                    binding,
                    protocol_version: version.clone(),
                    tenant: None,
                });
            }
        }
    }
    out
}

/// Chooses among a card's interfaces (see [`AgentCardInfo::choose`]).
fn choose(
    card_url: &str,
    interfaces: &[CardInterface],
    want: InterfaceChoice,
    legacy: bool,
) -> Result<Chosen, A2aError> {
    let shown = redact_url(card_url);
    let rank = |b: ProtocolBinding| {
        ProtocolBinding::ALL
            .iter()
            .position(|x| *x == b)
            .unwrap_or(usize::MAX)
    };
    let chosen = interfaces
        .iter()
        .filter_map(|i| i.speaks.filter(|b| want.admits(*b)).map(|b| (i, b)))
        .min_by_key(|(_, b)| rank(*b));
    let Some((chosen, binding)) = chosen else {
        let found = if interfaces.is_empty() {
            "it lists no interfaces".to_owned()
        } else {
            let list: Vec<String> = interfaces
                .iter()
                .map(|i| format!("{} {}", i.binding, i.protocol_version))
                .collect();
            format!("found: {}", list.join(", "))
        };
        let found = if want.is_free() {
            found
        } else {
            format!("{} asked; {found}", want.describe())
        };
        return Err(A2aError::NoJsonRpcInterface {
            url: shown,
            found,
            legacy,
        });
    };
    let invalid = |detail: String| A2aError::InvalidCard {
        url: shown.clone(),
        detail,
    };
    let base = Url::parse(card_url).map_err(|e| invalid(e.to_string()))?;
    let interface = base
        .join(chosen.url.trim())
        .map_err(|e| invalid(format!("its interface URL does not parse: {e}")))?;
    let interface_url: String = interface.into();
    if let Err(A2aError::InvalidUrl { reason, .. }) = parse_http_url(&interface_url) {
        return Err(invalid(format!(
            "its interface URL `{}` is unusable: {reason}",
            redact_url(&interface_url)
        )));
    }
    Ok(Chosen {
        interface_url,
        tenant: chosen.tenant.clone(),
        binding,
    })
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
    let base = Url::parse(card_url).map_err(|e| invalid(e.to_string()))?;
    let interfaces = interfaces_of(&card, &raw);
    let chosen = choose(
        card_url,
        &interfaces,
        InterfaceChoice::default(),
        raw.get("url").is_some(),
    )?;
    Ok(AgentCardInfo {
        card_url: card_url.to_owned(),
        origin: base.origin().ascii_serialization(),
        interface_url: chosen.interface_url,
        tenant: chosen.tenant,
        binding: chosen.binding,
        interfaces,
        placement: card_placement(card_url, &raw)?,
        card,
        raw,
    })
}

/// Returns where a credential goes for the card `raw` fetched from `card_url`
/// (`security::card_placement`); an `apiKey` scheme that cannot be used makes the card
/// invalid, the error naming the agent and the scheme.
pub fn card_placement(card_url: &str, raw: &Value) -> Result<Placement, A2aError> {
    security::card_placement(raw).map_err(|detail| A2aError::InvalidCard {
        url: redact_url(card_url),
        detail,
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
    fn a_v03_card_is_read_from_its_top_level_fields() {
        let raw = json!({"name": "n", "version": "1", "description": "d", "capabilities": {},
            "protocolVersion": "0.3.0", "url": "http://a.example/rpc",
            "preferredTransport": "HTTP+JSON",
            "additionalInterfaces": [{"url": "http://a.example/rpc", "transport": "HTTP+JSON"},
                                     {"url": "http://a.example/jsonrpc", "transport": "JSONRPC"},
                                     {"url": "http://a.example/grpc", "transport": "GRPC"}],
            "skills": []});
        let info = parse_card("http://a.example/.well-known/agent-card.json", raw).unwrap();
        assert_eq!(info.binding, ProtocolBinding::JsonRpcV03);
        assert_eq!(info.interface_url, "http://a.example/jsonrpc");
        assert_eq!(info.interfaces.len(), 3, "{:?}", info.interfaces);
        assert!(info.offers("http://a.example/jsonrpc", ProtocolBinding::JsonRpcV03));
        assert!(!info.offers("http://a.example/jsonrpc", ProtocolBinding::JsonRpcV1));
        // JSON-RPC is preferred; forcing HTTP+JSON (or offering nothing else) picks v0.3 REST.
        let forced = info
            .choose(InterfaceChoice {
                binding: Some(crate::a2a::WireBinding::HttpJson),
                protocol: None,
            })
            .unwrap();
        assert_eq!(forced.binding, ProtocolBinding::HttpJsonV03);
        assert_eq!(forced.interface_url, "http://a.example/rpc");
        let rest_only = json!({"name": "n", "version": "1", "description": "d",
            "capabilities": {}, "protocolVersion": "0.3.0", "url": "http://a.example/rest",
            "preferredTransport": "HTTP+JSON", "skills": []});
        let info = parse_card("http://a.example/.well-known/agent-card.json", rest_only).unwrap();
        assert_eq!(info.binding, ProtocolBinding::HttpJsonV03);
        assert!(info.offers("http://a.example/rest", ProtocolBinding::HttpJsonV03));
    }

    #[test]
    fn a_v1_interface_without_a_version_is_v1_despite_injected_v03_fields() {
        // What an official 1.x SDK serves when the interface has no protocolVersion.
        let raw = json!({"name": "n", "version": "1", "description": "d", "capabilities": {},
            "supportedInterfaces": [{"url": "http://a.example/", "protocolBinding": "JSONRPC"}],
            "url": "http://a.example/", "preferredTransport": "JSONRPC",
            "protocolVersion": "0.3", "skills": []});
        let info = parse_card("http://a.example/.well-known/agent-card.json", raw).unwrap();
        assert_eq!(info.binding, ProtocolBinding::JsonRpcV1);
        assert_eq!(info.interfaces[0].protocol_version, "1.0");
        // Forcing 0.3 picks the legacy entry.
        let forced = info
            .choose(InterfaceChoice {
                binding: None,
                protocol: Some(crate::a2a::ProtocolVersion::V0_3),
            })
            .unwrap();
        assert_eq!(forced.binding, ProtocolBinding::JsonRpcV03);
    }

    #[test]
    fn v1_wins_over_v03_and_a_forced_choice_names_itself_when_refused() {
        let raw = card(&json!([
            {"url": "http://a.example/old", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": "http://a.example/new", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ]));
        let info = parse_card("http://a.example/.well-known/agent-card.json", raw).unwrap();
        assert_eq!(info.interface_url, "http://a.example/new");
        let want = InterfaceChoice {
            binding: Some(crate::a2a::WireBinding::HttpJson),
            protocol: None,
        };
        let err = info.choose(want).unwrap_err();
        assert!(matches!(err, A2aError::NoJsonRpcInterface { .. }), "{err}");
        assert!(err.to_string().contains("--binding http-json"), "{err}");
        assert!(err.to_string().contains("JSONRPC 0.3"), "{err}");
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
