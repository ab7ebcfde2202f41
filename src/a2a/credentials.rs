//! Credentials and what may be shown: the bearer [`Credential`], the cross-origin rule, URL
//! origins and redaction, and the scrub of a token an agent echoes back.
//!
//! Invariants: a credential goes only to the card's origin unless cross-origin is allowed; its
//! token is never logged, put into an error or journaled; URLs never carry userinfo.

use std::fmt;
use std::sync::Arc;

use reqwest::header::HeaderValue;
use serde_json::Value;
use url::Url;

use super::error::A2aError;

/// A bearer token and the name of the environment variable it came from.
///
/// `Debug` and `Display` show only the variable's name, never the token.
#[derive(Clone)]
pub struct Credential {
    var: String,
    header: HeaderValue,
    /// The token itself, only to scrub it from what an agent echoes back.
    token: Arc<str>,
}

impl Credential {
    /// Reads the token from an environment variable; unset or empty is an error naming it.
    pub fn from_env(var: &str) -> Result<Self, A2aError> {
        match std::env::var(var) {
            Ok(token) => Self::new(var, &token),
            Err(std::env::VarError::NotPresent) => Err(A2aError::Credential {
                var: var.to_owned(),
                problem: "is not set",
            }),
            Err(std::env::VarError::NotUnicode(_)) => Err(A2aError::Credential {
                var: var.to_owned(),
                problem: "is not valid UTF-8",
            }),
        }
    }

    /// Builds a credential from a token already read from the variable `var`.
    pub fn new(var: &str, token: &str) -> Result<Self, A2aError> {
        let token = token.trim();
        if token.is_empty() {
            return Err(A2aError::Credential {
                var: var.to_owned(),
                problem: "is empty",
            });
        }
        let mut header = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
            A2aError::Credential {
                var: var.to_owned(),
                problem: "holds characters that cannot be sent in an HTTP header",
            }
        })?;
        header.set_sensitive(true);
        Ok(Self {
            var: var.to_owned(),
            header,
            token: Arc::from(token),
        })
    }

    /// Returns the name of the environment variable holding the token.
    pub fn env_var(&self) -> &str {
        &self.var
    }

    /// Returns the `Authorization` header value, marked sensitive.
    pub(crate) fn header(&self) -> HeaderValue {
        self.header.clone()
    }

    /// Returns the token, only to scrub it from answers.
    pub(crate) fn token(&self) -> Arc<str> {
        Arc::clone(&self.token)
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credential")
            .field("env_var", &self.var)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.var)
    }
}

/// Returns the credential to send to an interface on `origin` (shown as `shown` in logs): the
/// endpoint's, if `origin` is the card's origin or the endpoint allows cross-origin.
pub(crate) fn credential_for<'a>(
    credential: Option<&'a Credential>,
    card_origin: &str,
    allow_cross_origin: bool,
    origin: &str,
    shown: &str,
) -> Option<&'a Credential> {
    let credential = credential?;
    if allow_cross_origin || origin == card_origin {
        Some(credential)
    } else {
        tracing::debug!(
            url = %shown,
            "not sending the credential to an interface on another origin than the card"
        );
        None
    }
}

/// Returns a body with every occurrence of `secret` replaced by `REDACTED`.
pub(crate) fn scrub_bytes<'b>(secret: &[u8], body: &'b [u8]) -> std::borrow::Cow<'b, [u8]> {
    if secret.is_empty() || !body.windows(secret.len()).any(|w| w == secret) {
        return std::borrow::Cow::Borrowed(body);
    }
    let mut out = Vec::with_capacity(body.len());
    let mut rest = body;
    while !rest.is_empty() {
        if rest.starts_with(secret) {
            out.extend_from_slice(REDACTED.as_bytes());
            rest = &rest[secret.len()..];
        } else {
            out.push(rest[0]);
            rest = &rest[1..];
        }
    }
    std::borrow::Cow::Owned(out)
}

/// What replaces a credential echoed back by an agent.
const REDACTED: &str = "REDACTED";

/// Replaces `secret` in every string and object key of a JSON value.
pub(crate) fn scrub_json(value: &mut Value, secret: &str) {
    match value {
        Value::String(s) if s.contains(secret) => *s = s.replace(secret, REDACTED),
        Value::Array(items) => items.iter_mut().for_each(|v| scrub_json(v, secret)),
        Value::Object(map) => {
            if map.keys().any(|k| k.contains(secret)) {
                *map = std::mem::take(map)
                    .into_iter()
                    .map(|(k, v)| (k.replace(secret, REDACTED), v))
                    .collect();
            }
            map.values_mut().for_each(|v| scrub_json(v, secret));
        }
        _ => {}
    }
}

/// Returns the origin (`scheme://host:port`, default ports left out) of an http(s) URL.
pub fn origin_of(url: &str) -> Result<String, A2aError> {
    Ok(parse_http_url(url)?.origin().ascii_serialization())
}

/// Parses an http(s) URL without userinfo.
pub(crate) fn parse_http_url(url: &str) -> Result<Url, A2aError> {
    let invalid = |reason: &str| A2aError::InvalidUrl {
        url: redact_url(url),
        reason: reason.to_owned(),
    };
    if !url.contains("://") {
        return Err(invalid("it has no scheme (http:// or https://)"));
    }
    let parsed = Url::parse(url.trim()).map_err(|e| invalid(&e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid("only http:// and https:// URLs are supported"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(invalid("URLs with user:password@ are refused"));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(invalid("the URL has no host"));
    }
    Ok(parsed)
}

/// Returns a URL safe for logs and errors: userinfo dropped, query values replaced by
/// `REDACTED`, fragment dropped.
pub fn redact_url(url: &str) -> String {
    match Url::parse(url.trim()) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_fragment(None);
            if let Some(query) = parsed.query().map(redact_query) {
                parsed.set_query(Some(&query));
            }
            parsed.into()
        }
        Err(_) => redact_unparsed(url),
    }
}

fn redact_query(query: &str) -> String {
    query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, _)) => format!("{key}=REDACTED"),
            None => pair.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// Best effort for strings that do not parse as URLs: drop anything that could be a secret.
fn redact_unparsed(url: &str) -> String {
    let mut s = url.split(['?', '#']).next().unwrap_or_default().to_owned();
    let authority_start = s.find("://").map_or(0, |i| i + 3);
    let authority_end = s[authority_start..]
        .find('/')
        .map_or(s.len(), |i| authority_start + i);
    if let Some(at) = s[authority_start..authority_end].rfind('@') {
        s.replace_range(authority_start..=authority_start + at, "");
    }
    if url.contains('?') {
        s.push_str("?REDACTED");
    }
    super::error::truncate_chars(&crate::sanitize::inert(&s), 200)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_drops_userinfo_and_query_values() {
        assert_eq!(
            redact_url("https://user:secret@a.example/p?token=abc&x&y=1#frag"),
            "https://a.example/p?token=REDACTED&x&y=REDACTED"
        );
        assert_eq!(redact_url("http://127.0.0.1:9/"), "http://127.0.0.1:9/");
        let unparsed = redact_url("not a url://user:pw@host/x?token=abc");
        assert!(
            !unparsed.contains("pw") && !unparsed.contains("abc"),
            "{unparsed}"
        );
    }

    #[test]
    fn origins_normalize_default_ports() {
        assert_eq!(
            origin_of("https://a.example:443/x").unwrap(),
            "https://a.example"
        );
        assert_eq!(
            origin_of("http://127.0.0.1:8001/x").unwrap(),
            "http://127.0.0.1:8001"
        );
    }
}
