//! Where a credential goes on each request ([`Placement`]), read from a card's security
//! schemes: `Authorization: Bearer`, or the header, query parameter or cookie an `apiKey` scheme
//! names.
//!
//! Both card shapes are read from the raw card: v1.0 `securityRequirements`
//! (`[{"schemes": {NAME: {"list": […]}}}]`) over oneof-wrapped schemes
//! (`{"apiKeySecurityScheme": {"location", "name"}}`), and v0.3 `security` (`[{NAME: […]}]`)
//! over OpenAPI-style schemes (`{"type": "apiKey", "in", "name"}`).
//!
//! Invariants: the placement depends on the card alone (never on which command reads it), so
//! every call on an attempt places its credential the same way; a bearer is kept whenever the
//! card allows one (an `http` bearer, OAuth 2 or OpenID Connect alternative, an anonymous one,
//! or no scheme), so a card that worked before keeps working the same way.

use std::fmt;

use reqwest::header::HeaderName;
use serde_json::{Map, Value};

/// Where the credential goes on each request to an agent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Placement {
    /// `Authorization: Bearer <token>` (no scheme, or a bearer-like one).
    #[default]
    Bearer,
    /// `<name>: <token>`, from the card's `apiKey` scheme `scheme` (location `header`).
    Header {
        /// The scheme's name in the card.
        scheme: String,
        /// The header.
        name: HeaderName,
    },
    /// `?<name>=<token>` on every request URL (location `query`).
    Query {
        /// The scheme's name in the card.
        scheme: String,
        /// The query parameter.
        name: String,
    },
    /// `Cookie: <name>=<token>` (location `cookie`).
    Cookie {
        /// The scheme's name in the card.
        scheme: String,
        /// The cookie.
        name: String,
    },
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inert = crate::sanitize::inert;
        match self {
            Self::Bearer => f.write_str("an Authorization bearer token"),
            Self::Header { scheme, name } => write!(
                f,
                "header `{}` (apiKey scheme `{}`)",
                name.as_str(),
                inert(scheme)
            ),
            Self::Query { scheme, name } => write!(
                f,
                "query parameter `{}` (apiKey scheme `{}`)",
                inert(name),
                inert(scheme)
            ),
            Self::Cookie { scheme, name } => write!(
                f,
                "cookie `{}` (apiKey scheme `{}`)",
                inert(name),
                inert(scheme)
            ),
        }
    }
}

/// Headers every request sets itself, or that frame it: an `apiKey` scheme cannot name them.
const RESERVED_HEADERS: [&str; 10] = [
    "host",
    "content-length",
    "content-type",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
    "accept",
    "cookie",
    "a2a-version",
];

/// What one security scheme asks of the client.
enum Kind {
    /// A bearer in `Authorization` (`http` bearer, OAuth 2, OpenID Connect).
    Bearer,
    /// An API key, or why its scheme cannot be used.
    ApiKey(Result<Placement, String>),
    /// Anything a single secret cannot satisfy (basic auth, mutual TLS, unknown kinds).
    Other,
}

/// Returns where a credential goes for the card `raw` (as served, either shape): among the
/// card's security requirements (alternatives; without any, each declared scheme is one), a
/// bearer whenever an alternative allows one, else the first alternative that is a single
/// `apiKey` scheme, else a bearer. `Err` (the reason, naming the scheme) when that `apiKey`
/// scheme cannot be used.
pub(crate) fn card_placement(raw: &Value) -> Result<Placement, String> {
    let Some(schemes) = raw
        .get("securitySchemes")
        .and_then(Value::as_object)
        .filter(|s| !s.is_empty())
    else {
        return Ok(Placement::Bearer);
    };
    let mut alternatives = requirements(raw);
    if alternatives.is_empty() {
        alternatives = schemes.keys().map(|k| vec![k.clone()]).collect();
    }
    let mut api_key = None;
    for names in &alternatives {
        let kinds: Vec<Kind> = names.iter().map(|n| kind_of(n, schemes.get(n))).collect();
        match kinds.as_slice() {
            // An anonymous alternative, or a bearer: the bearer as ever.
            [] | [Kind::Bearer] => return Ok(Placement::Bearer),
            [Kind::ApiKey(placement)] if api_key.is_none() => api_key = Some(placement.clone()),
            _ => {}
        }
    }
    api_key.unwrap_or(Ok(Placement::Bearer))
}

/// The card's requirements as lists of scheme names: v1.0 `securityRequirements` when
/// present, else v0.3 `security`.
fn requirements(raw: &Value) -> Vec<Vec<String>> {
    let list = raw
        .get("securityRequirements")
        .and_then(Value::as_array)
        .or_else(|| raw.get("security").and_then(Value::as_array));
    list.into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .map(|req| {
            // v1.0 wraps the names in `schemes`; a v0.3 requirement maps them to scope arrays.
            let names: &Map<String, Value> =
                req.get("schemes").and_then(Value::as_object).unwrap_or(req);
            names.keys().cloned().collect()
        })
        .collect()
}

fn kind_of(scheme: &str, value: Option<&Value>) -> Kind {
    let Some(value) = value.and_then(Value::as_object) else {
        return Kind::Other;
    };
    let text = |obj: &Map<String, Value>, key: &str| {
        obj.get(key).and_then(Value::as_str).map(str::to_owned)
    };
    // v1.0: the kind is the wrapper member.
    if let Some(api) = value.get("apiKeySecurityScheme").and_then(Value::as_object) {
        return Kind::ApiKey(api_key(scheme, text(api, "location"), text(api, "name")));
    }
    if let Some(http) = value
        .get("httpAuthSecurityScheme")
        .and_then(Value::as_object)
    {
        return http_kind(text(http, "scheme"));
    }
    if value.contains_key("oauth2SecurityScheme")
        || value.contains_key("openIdConnectSecurityScheme")
    {
        return Kind::Bearer;
    }
    // v0.3: OpenAPI's `type`.
    match value.get("type").and_then(Value::as_str) {
        Some(t) if t.eq_ignore_ascii_case("apiKey") => {
            Kind::ApiKey(api_key(scheme, text(value, "in"), text(value, "name")))
        }
        Some(t) if t.eq_ignore_ascii_case("http") => http_kind(text(value, "scheme")),
        Some(t) if t.eq_ignore_ascii_case("oauth2") || t.eq_ignore_ascii_case("openIdConnect") => {
            Kind::Bearer
        }
        _ => Kind::Other,
    }
}

fn http_kind(scheme: Option<String>) -> Kind {
    if scheme.is_some_and(|s| s.eq_ignore_ascii_case("bearer")) {
        Kind::Bearer
    } else {
        Kind::Other
    }
}

/// The placement of an `apiKey` scheme, or why it cannot be used.
fn api_key(
    scheme: &str,
    location: Option<String>,
    name: Option<String>,
) -> Result<Placement, String> {
    let inert = crate::sanitize::inert;
    let refuse = |why: String| {
        format!(
            "its apiKey security scheme `{}` {why}",
            error_text(&inert(scheme))
        )
    };
    let name = name
        .filter(|n| !n.trim().is_empty())
        .ok_or_else(|| refuse("names no header, query parameter or cookie".to_owned()))?;
    let shown = error_text(&inert(&name));
    let location = location.unwrap_or_default().to_ascii_lowercase();
    let scheme = scheme.to_owned();
    match location.as_str() {
        "header" => {
            let header = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
                refuse(format!("names `{shown}`, which is not an HTTP header name"))
            })?;
            if RESERVED_HEADERS.contains(&header.as_str()) {
                return Err(refuse(format!(
                    "names the header `{shown}`, which a2a-recover sets itself"
                )));
            }
            Ok(Placement::Header {
                scheme,
                name: header,
            })
        }
        "query" => Ok(Placement::Query { scheme, name }),
        "cookie" => {
            if !name.bytes().all(is_cookie_name_byte) {
                return Err(refuse(format!(
                    "names `{shown}`, which is not a cookie name"
                )));
            }
            Ok(Placement::Cookie { scheme, name })
        }
        other => Err(refuse(format!(
            "has the location `{}` (not header, query or cookie)",
            error_text(&inert(other))
        ))),
    }
}

/// A card value shown in an error: short.
fn error_text(s: &str) -> String {
    super::error::truncate_chars(s, 60)
}

/// RFC 6265 `cookie-name` (an RFC 7230 token).
fn is_cookie_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// RFC 6265 `cookie-octet`: what a cookie value may hold unquoted.
pub(crate) fn is_cookie_value_byte(b: u8) -> bool {
    matches!(b, 0x21 | 0x23..=0x2B | 0x2D..=0x3A | 0x3C..=0x5B | 0x5D..=0x7E)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn header(scheme: &str, name: &str) -> Placement {
        Placement::Header {
            scheme: scheme.to_owned(),
            name: HeaderName::from_bytes(name.as_bytes()).unwrap(),
        }
    }

    #[test]
    fn no_scheme_and_bearer_schemes_keep_the_bearer() {
        let cases = [
            json!({}),
            json!({"securitySchemes": {}}),
            json!({"securitySchemes": {"b": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
                   "securityRequirements": [{"schemes": {"b": {"list": []}}}]}),
            json!({"securitySchemes": {"b": {"type": "http", "scheme": "bearer"}},
                   "security": [{"b": []}]}),
            json!({"securitySchemes": {"o": {"oauth2SecurityScheme": {"flows": {}}}}}),
            json!({"securitySchemes": {"o": {"type": "openIdConnect", "openIdConnectUrl": "x"}}}),
            // A bearer alternative wins over an apiKey one, whatever the order.
            json!({"securitySchemes": {
                      "k": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}},
                      "b": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
                   "securityRequirements": [{"schemes": {"k": {"list": []}}},
                                            {"schemes": {"b": {"list": []}}}]}),
            // An anonymous alternative.
            json!({"securitySchemes": {"k": {"type": "apiKey", "in": "query", "name": "key"}},
                   "security": [{}, {"k": []}]}),
            // Basic auth and mutual TLS: nothing a key can do; the bearer as ever.
            json!({"securitySchemes": {"m": {"mtlsSecurityScheme": {}},
                                       "h": {"type": "http", "scheme": "basic"}}}),
        ];
        for card in cases {
            assert_eq!(card_placement(&card), Ok(Placement::Bearer), "{card}");
        }
    }

    #[test]
    fn an_api_key_scheme_places_the_credential_in_both_card_shapes() {
        let v1 = json!({"securitySchemes": {
                           "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}}},
                        "securityRequirements": [{"schemes": {"key": {"list": []}}}]});
        assert_eq!(card_placement(&v1), Ok(header("key", "x-api-key")));
        let v03 = json!({"securitySchemes": {"q": {"type": "apiKey", "in": "query", "name": "api_key"}},
                         "security": [{"q": []}]});
        assert_eq!(
            card_placement(&v03),
            Ok(Placement::Query {
                scheme: "q".into(),
                name: "api_key".into()
            })
        );
        // Declared without requirements: the declared scheme is the alternative.
        let cookie =
            json!({"securitySchemes": {"c": {"type": "apiKey", "in": "cookie", "name": "sid"}}});
        assert_eq!(
            card_placement(&cookie),
            Ok(Placement::Cookie {
                scheme: "c".into(),
                name: "sid".into()
            })
        );
        // A requirement needing two schemes at once cannot be met by one secret: skipped.
        let both = json!({"securitySchemes": {
                             "a": {"type": "apiKey", "in": "header", "name": "A"},
                             "b": {"type": "apiKey", "in": "header", "name": "B"}},
                          "security": [{"a": [], "b": []}, {"b": []}]});
        assert_eq!(card_placement(&both), Ok(header("b", "b")));
    }

    #[test]
    fn an_unusable_api_key_scheme_is_an_error_naming_it() {
        let cases = [
            (json!({"type": "apiKey", "in": "header"}), "names no header"),
            (
                json!({"type": "apiKey", "in": "body", "name": "k"}),
                "location `body`",
            ),
            (
                json!({"type": "apiKey", "in": "header", "name": "bad header"}),
                "not an HTTP header",
            ),
            (
                json!({"type": "apiKey", "in": "header", "name": "Content-Type"}),
                "sets itself",
            ),
            (
                json!({"type": "apiKey", "in": "cookie", "name": "a;b"}),
                "not a cookie name",
            ),
        ];
        for (scheme, want) in cases {
            let card = json!({"securitySchemes": {"agentKey": scheme}});
            let err = card_placement(&card).unwrap_err();
            assert!(err.contains("`agentKey`") && err.contains(want), "{err}");
        }
    }
}
