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
//! A card is bounded ([`read_card`]): at most `--max-card-size` bytes (default
//! [`DEFAULT_MAX_CARD_SIZE`]), [`MAX_CARD_INTERFACES`] interfaces and [`MAX_CARD_SKILLS`]
//! skills, counted while it is read; a card over a bound is one we cannot use
//! ([`A2aError::CardOverBound`]). Only the members a2a-recover reads are kept (the trimmed
//! snapshot the journal stores); the rest is skipped unread.
//!
//! URLs are http or https only, and never carry userinfo: credentials live in environment
//! variables or come from a command. [`redact_url`] is what every log line and error shows.
//! Where the credential goes (a bearer, or the header, query parameter or cookie an `apiKey`
//! scheme names) is read from the card's security schemes ([`card_placement`]).

use std::cell::Cell;
use std::fmt;

use serde::Deserialize as _;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use url::Url;

use super::credentials::{parse_http_url, redact_url};
use super::error::A2aError;
use super::memo::Memo;
use super::normalize;
use super::security::{self, Placement};
use super::transport::{Op, decode_json_with};
use super::types;
use crate::model::{InterfaceChoice, ProtocolBinding};

/// The well-known path of the agent card.
pub const WELL_KNOWN_CARD_PATH: &str = "/.well-known/agent-card.json";

/// The default of `--max-card-size`: 1 MiB. Real cards are 1 to 20 KiB (a skill is a few
/// hundred bytes), so this is some fifty times the largest, and a card's read and parse then
/// cost a few MiB at most.
pub const DEFAULT_MAX_CARD_SIZE: u64 = 1024 * 1024;
/// The most interfaces a card may list (v1.0 `supportedInterfaces`, the v0.3 top-level `url`
/// and `additionalInterfaces`, together): real cards list one per binding, a handful.
pub const MAX_CARD_INTERFACES: usize = 64;
/// The most skills a card may list: real cards list one to a few dozen.
pub const MAX_CARD_SKILLS: usize = 1024;

/// The members of a card that are read (interfaces, security, capabilities, skills, and what
/// typing the card needs); the others are skipped while reading and never kept.
const CARD_MEMBERS: [&str; 13] = [
    "name",
    "description",
    "version",
    "protocolVersion",
    "url",
    "preferredTransport",
    "additionalInterfaces",
    "supportedInterfaces",
    "capabilities",
    "skills",
    "securitySchemes",
    "securityRequirements",
    "security",
];
/// The members of a skill that are read (the registry and `agent` records).
const SKILL_MEMBERS: [&str; 3] = ["id", "name", "tags"];

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

impl CardInterface {
    /// Returns its URL resolved against the card URL as a send to it would use it (a gRPC
    /// `host:port` gets its scheme, as `choose` resolves it); `None` when it does not parse.
    pub fn resolved_url(&self, card_url: &str) -> Option<String> {
        let base = Url::parse(card_url).ok()?;
        let url = match self.speaks {
            Some(binding) => resolve_interface(&base, &self.url, binding),
            None => base.join(self.url.trim()),
        };
        url.ok().map(String::from)
    }
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
                && resolve_interface(&base, &i.url, binding)
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
    let interface = resolve_interface(&base, &chosen.url, binding)
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

/// Resolves an interface URL as a card writes it against the card URL. A gRPC interface given
/// as `host:port`, without a scheme (as the SDKs' cards give it), is plaintext (`http://`) only
/// when the card itself came over `http`; otherwise it is TLS (`https://`).
pub(crate) fn resolve_interface(
    card_url: &Url,
    url: &str,
    binding: ProtocolBinding,
) -> Result<Url, url::ParseError> {
    let url = url.trim();
    let bare = !url.contains("://") && !url.starts_with(['/', '.', '?', '#']);
    if bare && binding.wire() == crate::model::WireBinding::Grpc {
        let scheme = if card_url.scheme() == "http" {
            "http"
        } else {
            "https"
        };
        return Url::parse(&format!("{scheme}://{url}"));
    }
    card_url.join(url)
}

/// Returns the card URL for a base URL; a URL whose path already ends in `.json` is the card
/// URL itself.
pub fn card_url_for(url: &str) -> Result<String, A2aError> {
    static CARD_URLS: Memo = Memo::new();
    CARD_URLS.get(url, card_url_now)
}

fn card_url_now(url: &str) -> Result<String, A2aError> {
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
    let card: types::AgentCard = normalize::typed_value(&value).map_err(invalid)?;
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

/// Reads a card body (at most the size bound, already checked) into its trimmed snapshot:
/// only [`CARD_MEMBERS`] (of each skill, only [`SKILL_MEMBERS`]), counting interfaces and
/// skills as they are read, so a card listing 100,000 of them is refused after the bound's
/// worth, never held whole. Invalid UTF-8 or JSON is the error
/// [`super::transport::decode_json`] gives.
pub(crate) fn read_card(op: &Op, card_url: &str, body: &[u8]) -> Result<Value, A2aError> {
    let tally = Tally::default();
    let parsed = decode_json_with(op, body, |bytes| {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let value = Reader {
            shape: Shape::Card,
            tally: &tally,
        }
        .deserialize(&mut de)?;
        de.end()?;
        Ok(value)
    });
    match tally.over.get() {
        Some((bound, what)) => Err(A2aError::CardOverBound {
            url: redact_url(card_url),
            what: format!("lists more than {bound} {what} (the bound on a card)"),
            flag: None,
        }),
        None => parsed,
    }
}

/// Returns the error of a card body over `limit` bytes, naming the flag that set it.
pub(crate) fn card_too_large(card_url: &str, limit: u64, max_card_size: u64) -> A2aError {
    let flag = if limit < max_card_size {
        "--max-response-size"
    } else {
        "--max-card-size"
    };
    A2aError::CardOverBound {
        url: redact_url(card_url),
        what: format!("is larger than the {limit}-byte bound of {flag}"),
        flag: Some(flag),
    }
}

/// What a card reader counted, and the bound it went over.
#[derive(Default)]
struct Tally {
    interfaces: Cell<usize>,
    skills: Cell<usize>,
    over: Cell<Option<(usize, &'static str)>>,
}

impl Tally {
    /// Counts one item; `Err` once there are more than `bound`.
    fn count<E: de::Error>(
        &self,
        counter: &Cell<usize>,
        bound: usize,
        what: &'static str,
    ) -> Result<(), E> {
        counter.set(counter.get().saturating_add(1));
        if counter.get() > bound {
            self.over.set(Some((bound, what)));
            return Err(E::custom(format_args!("more than {bound} {what}")));
        }
        Ok(())
    }
}

/// Where in a card a value is read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// The card: only [`CARD_MEMBERS`].
    Card,
    /// An array of interfaces: counted.
    Interfaces,
    /// The array of skills: counted, each a [`Shape::Skill`].
    Skills,
    /// A skill: only [`SKILL_MEMBERS`].
    Skill,
    /// Anything else: kept whole.
    Whole,
}

/// Reads a value of a card as its [`Shape`] says.
struct Reader<'t> {
    shape: Shape,
    tally: &'t Tally,
}

impl<'de> DeserializeSeed<'de> for Reader<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Reader<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let t = self.tally;
        let (counter, bound, what, item) = match self.shape {
            Shape::Interfaces => (
                &t.interfaces,
                MAX_CARD_INTERFACES,
                "interfaces",
                Shape::Whole,
            ),
            Shape::Skills => (&t.skills, MAX_CARD_SKILLS, "skills", Shape::Skill),
            Shape::Card | Shape::Skill | Shape::Whole => {
                return Value::deserialize(SeqAccessDeserializer::new(seq));
            }
        };
        let mut items = Vec::new();
        while let Some(v) = seq.next_element_seed(Reader {
            shape: item,
            tally: t,
        })? {
            t.count(counter, bound, what)?;
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let kept: &[&str] = match self.shape {
            Shape::Card => &CARD_MEMBERS,
            Shape::Skill => &SKILL_MEMBERS,
            Shape::Interfaces | Shape::Skills | Shape::Whole => {
                return Value::deserialize(MapAccessDeserializer::new(map));
            }
        };
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if !kept.contains(&key.as_str()) {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let shape = match (self.shape, key.as_str()) {
                (Shape::Card, "supportedInterfaces" | "additionalInterfaces") => Shape::Interfaces,
                (Shape::Card, "skills") => Shape::Skills,
                _ => Shape::Whole,
            };
            let value = map.next_value_seed(Reader {
                shape,
                tally: self.tally,
            })?;
            // The v0.3 top-level `url` is an interface too.
            if self.shape == Shape::Card && key == "url" {
                let t = self.tally;
                t.count(&t.interfaces, MAX_CARD_INTERFACES, "interfaces")?;
            }
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
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
    use crate::a2a::Hint;

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
            ("127.0.0.1:8001", "127.0.0.1:8001"),
            ("localhost:8001/", "localhost:8001/"),
            ("agent.example.com", "agent.example.com"),
        ] {
            let err = card_url_for(given).unwrap_err();
            assert_eq!(
                err.hint(),
                Some(Hint::SchemeMissing(suggested.to_owned())),
                "{given}"
            );
        }
        let err = card_url_for("http://u:p@a.example/").unwrap_err();
        assert_eq!(err.hint(), Some(Hint::UserInfo));
        // No suggestion that would repeat a credential typed without a scheme.
        let err = card_url_for("u:secret@a.example").unwrap_err();
        assert_eq!(err.hint(), Some(Hint::BadUrl));
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
    fn grpc_comes_after_json_rpc_and_http_json_but_v1_before_v03() {
        let card_url = "http://a.example/.well-known/agent-card.json";
        let grpc =
            json!({"url": "a.example:50051", "protocolBinding": "GRPC", "protocolVersion": "1.0"});
        let rest =
            json!({"url": "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"});
        let rpc03 = json!({"url": "/v03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"});
        let cases = [
            (json!([grpc, rest]), ProtocolBinding::HttpJsonV1),
            // The changed default: v1.0 over gRPC before v0.3 over JSON-RPC.
            (json!([rpc03, grpc]), ProtocolBinding::GrpcV1),
            (json!([grpc]), ProtocolBinding::GrpcV1),
        ];
        for (interfaces, want) in cases {
            let info = parse_card(card_url, card(&interfaces)).unwrap();
            assert_eq!(info.binding, want, "{interfaces}");
        }
    }

    #[test]
    fn a_bare_grpc_host_port_is_plaintext_only_for_a_card_over_http() {
        let grpc = json!([{"url": "a.example:50051", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]);
        for (card_url, want) in [
            (
                "http://a.example/.well-known/agent-card.json",
                "http://a.example:50051/",
            ),
            (
                "https://a.example/.well-known/agent-card.json",
                "https://a.example:50051/",
            ),
        ] {
            let info = parse_card(card_url, card(&grpc)).unwrap();
            assert_eq!(info.interface_url, want, "{card_url}");
            assert!(info.offers(want, ProtocolBinding::GrpcV1), "{card_url}");
            let found = ProtocolBinding::of_card_interface(card_url, &info.raw.to_string(), want);
            assert_eq!(found, Some(ProtocolBinding::GrpcV1), "{card_url}");
        }
        // A URL with its scheme keeps it.
        let tls = json!([{"url": "https://g.example:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]);
        let info = parse_card("http://a.example/.well-known/agent-card.json", card(&tls)).unwrap();
        assert_eq!(info.interface_url, "https://g.example/");
    }

    #[test]
    fn no_spoken_interface_is_a_clear_error() {
        let raw = card(&json!([
            {"url": "http://a.example/", "protocolBinding": "WEBSOCKET", "protocolVersion": "1.0"}
        ]));
        let err = parse_card("http://a.example/.well-known/agent-card.json", raw).unwrap_err();
        assert!(
            matches!(err, A2aError::NoJsonRpcInterface { legacy: false, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("WEBSOCKET 1.0"), "{err}");
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

    const URL: &str = "http://a.example/.well-known/agent-card.json";

    fn read(card: &Value) -> Result<Value, A2aError> {
        read_card(&Op::new(URL, "card"), URL, card.to_string().as_bytes())
    }

    #[test]
    fn a_card_is_read_into_the_members_it_is_used_for() {
        let mut raw = card(&json!([
            {"url": "http://a.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0",
             "tenant": "t"}
        ]));
        raw["signatures"] = json!([{"protected": "x".repeat(1000), "signature": "y"}]);
        raw["defaultInputModes"] = json!(["text/plain"]);
        raw["securitySchemes"] = json!({"k": {"apiKeySecurityScheme": {"location": "header",
                                                                      "name": "X-Key"}}});
        raw["capabilities"] = json!({"streaming": true, "extensions": [{"uri": "u"}]});
        raw["skills"] = json!([{"id": "s", "name": "S", "tags": ["t"], "description": "long",
                                "examples": ["e".repeat(1000)]}]);
        let got = read(&raw).unwrap();
        let keys: Vec<&str> = got
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "capabilities",
                "description",
                "name",
                "securitySchemes",
                "skills",
                "supportedInterfaces",
                "version"
            ]
        );
        assert_eq!(got["supportedInterfaces"], raw["supportedInterfaces"]);
        assert_eq!(got["capabilities"], raw["capabilities"]);
        assert_eq!(
            got["skills"],
            json!([{"id": "s", "name": "S", "tags": ["t"]}])
        );
        // What is kept still makes the card: its interface, its credential placement.
        let info = parse_card(URL, got).unwrap();
        assert_eq!(info.interface_url, "http://a.example/rpc");
        assert!(matches!(info.placement, Placement::Header { .. }));
    }

    #[test]
    fn interfaces_and_skills_are_counted_while_read() {
        let interface = json!({"url": "http://a.example/rpc", "protocolBinding": "JSONRPC"});
        let mut raw = card(&json!(vec![interface.clone(); MAX_CARD_INTERFACES]));
        assert!(read(&raw).is_ok());
        // The v0.3 top-level `url` and `additionalInterfaces` count with them.
        raw["url"] = json!("http://a.example/v03");
        let err = read(&raw).unwrap_err();
        assert!(
            matches!(err, A2aError::CardOverBound { flag: None, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("more than 64 interfaces"), "{err}");
        let raw = card(&json!([]));
        let mut v03 = raw.clone();
        v03["additionalInterfaces"] = json!(vec![interface; MAX_CARD_INTERFACES + 1]);
        assert!(read(&v03).is_err());

        let skill = json!({"id": "s", "name": "S", "tags": []});
        let mut many = raw.clone();
        many["skills"] = json!(vec![skill.clone(); MAX_CARD_SKILLS]);
        assert!(read(&many).is_ok());
        many["skills"] = json!(vec![skill; MAX_CARD_SKILLS + 1]);
        let err = read(&many).unwrap_err();
        assert!(err.to_string().contains("more than 1024 skills"), "{err}");
        assert_eq!(err.hint(), Some(Hint::CardOverBound(None)), "{err:?}");
    }

    #[test]
    fn a_card_read_keeps_the_errors_of_json_and_of_shape() {
        // Not JSON: the decode error, as for any answer.
        let err = read_card(&Op::new(URL, "card"), URL, b"{\"name\": ").unwrap_err();
        assert!(matches!(err, A2aError::Decode { .. }), "{err}");
        let err = read_card(&Op::new(URL, "card"), URL, b"{} trailing").unwrap_err();
        assert!(matches!(err, A2aError::Decode { .. }), "{err}");
        // Not a card: read as given, refused by the parse.
        for body in [json!([1, 2]), json!("card"), json!({"skills": "yes"})] {
            let got = read(&body).unwrap();
            assert_eq!(got, body);
            assert!(parse_card(URL, got).is_err(), "{body}");
        }
    }

    #[test]
    fn a_card_over_its_bytes_names_the_flag_that_bounds_it() {
        let err = card_too_large(URL, 1024 * 1024, 1024 * 1024);
        assert_eq!(
            err.to_string(),
            format!(
                "the agent card at `{URL}` is larger than the 1048576-byte bound of --max-card-size"
            )
        );
        assert_eq!(
            err.hint(),
            Some(Hint::CardOverBound(Some("--max-card-size")))
        );
        let err = card_too_large(URL, 65536, 1024 * 1024);
        assert!(
            err.to_string()
                .contains("65536-byte bound of --max-response-size"),
            "{err}"
        );
    }
}
