//! Push notifications on the send path: which URL an attempt's agent is asked to push to, the
//! config each send carries (a random config id kept by every resend of the attempt's
//! messageId, a fresh random token per send), and the token checks `listen` makes.
//!
//! Only a hash of each token is journaled ([`token_hash`]), before the send that carries it;
//! the token itself lives in the request alone (and answers are scrubbed of it).

use anyhow::{Context as _, bail};
use sha2::Digest as _;
use subtle::ConstantTimeEq as _;

use crate::a2a::types;
use crate::journal::{Attempt, AttemptId, Journal, PushConfig};

/// The path under a listener's base URL that pushes are posted to: `BASE/push/CONFIG_ID`.
pub const PUSH_PATH: &str = "push";

/// The header a2a SDKs carry a push config's token in.
pub const TOKEN_HEADER: &str = "X-A2A-Notification-Token";

/// The scheme of the `authentication` we ask agents to put in `Authorization`.
pub const AUTH_SCHEME: &str = "Bearer";

/// Checks a listener's public base URL (`--push`, a plan's `push`, `agents add --push`,
/// `A2A_RECOVER_PUSH_URL`): absolute http or https, no userinfo, query or fragment. Returns it
/// without a trailing slash.
pub fn base_url(raw: &str) -> anyhow::Result<String> {
    let Ok(url) = url::Url::parse(raw) else {
        bail!(
            "the push URL {:?} is not an absolute URL",
            crate::sanitize::inert(raw)
        );
    };
    if !matches!(url.scheme(), "http" | "https") {
        bail!("the push URL must be http or https");
    }
    if !url.username().is_empty() || url.password().is_some() {
        bail!("the push URL must not carry a user name or password");
    }
    if url.query().is_some() || url.fragment().is_some() {
        bail!("the push URL must not carry a query or a fragment");
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

/// Returns a fresh config id: 128 random bits, hex.
pub fn fresh_config_id() -> String {
    crate::sim_seam::new_uuid().simple().to_string()
}

/// Returns a fresh token: 256 random bits, hex.
pub fn fresh_token() -> String {
    let bytes: [u8; 32] = rand::random();
    hex(&bytes)
}

/// Returns what the journal keeps of a token: `sha256:` and the hex of its SHA-256.
pub fn token_hash(token: &str) -> String {
    format!("sha256:{}", hex(&sha2::Sha256::digest(token.as_bytes())))
}

/// Whether `token` is one of those whose hashes are journaled, comparing every hash in
/// constant time (and all of them, whatever matched).
pub fn token_matches(token: &str, hashes: &[String]) -> bool {
    let mine = token_hash(token);
    let mut found = subtle::Choice::from(0);
    for h in hashes {
        found |= mine.as_bytes().ct_eq(h.as_bytes());
    }
    found.into()
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// Whether an agent's card (raw JSON) says `capabilities.pushNotifications: true`.
pub fn card_pushes(card_json: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(card_json).is_ok_and(|card| {
        card.pointer("/capabilities/pushNotifications")
            .and_then(serde_json::Value::as_bool)
            == Some(true)
    })
}

/// What an attempt is asked to push to, when its own send chose nothing (`given`: `delegate
/// --push`, else a plan step's `push`; `--no-push` never calls this): the base of the config
/// it already has (a resend keeps it), else `given`, else its previous attempt's, else its
/// agent's registration (`agents add --push`), else `A2A_RECOVER_PUSH_URL`.
pub fn base_for(
    journal: &Journal,
    attempt: &Attempt,
    given: Option<&str>,
) -> anyhow::Result<Option<String>> {
    let held = journal.push_config(attempt.id)?;
    base_with(journal, attempt, held.as_ref(), given)
}

/// [`base_for`] with the attempt's own config (`held`) already read: a plan reads those of
/// all its new attempts in one statement.
pub fn base_with(
    journal: &Journal,
    attempt: &Attempt,
    held: Option<&PushConfig>,
    given: Option<&str>,
) -> anyhow::Result<Option<String>> {
    if let Some(held) = held {
        return Ok(Some(base_of(held)));
    }
    if let Some(given) = given {
        return base_url(given).map(Some);
    }
    if let Some(prev) = attempt.previous_attempt
        && let Some(held) = journal.push_config(prev)?
    {
        return Ok(Some(base_of(&held)));
    }
    // The agent's row as read lately (a plan's sends to one agent read it once).
    if let Some(card) = attempt.agent_url.as_deref()
        && let Some(url) = journal.agent(card)?.and_then(|a| a.push_url)
    {
        return base_url(&url).map(Some);
    }
    match std::env::var(crate::env::PUSH_URL) {
        Ok(v) if !v.is_empty() => base_url(&v)
            .map(Some)
            .with_context(|| format!("{} is not usable", crate::env::PUSH_URL)),
        _ => Ok(None),
    }
}

/// The listener base of a journaled config: its URL less `/push/CONFIG_ID`.
fn base_of(held: &PushConfig) -> String {
    let tail = format!("/{PUSH_PATH}/{}", held.config_id);
    held.url.strip_suffix(&tail).unwrap_or(&held.url).to_owned()
}

/// Agents already warned, in this process, that their card offers no push.
static WARNED: crate::sim_seam::OncePerProcess = crate::sim_seam::OncePerProcess::new();

/// Warns once per agent and process that its card does not offer push notifications.
fn warn_no_push(card_url: &str) {
    if WARNED.first(card_url) {
        tracing::warn!(
            agent = %crate::sanitize::inert(card_url),
            "the agent's card does not offer push notifications: it is not asked to push"
        );
    }
}

/// Right before a send that asks for pushes to `base`: journals the attempt's config (kept
/// from an earlier send of its messageId) and the hash of a fresh token, and returns the
/// config the request must carry; `None` (nothing journaled) when the agent's journaled card
/// does not say `pushNotifications: true`.
pub fn register(
    journal: &Journal,
    attempt: AttemptId,
    card_url: &str,
    base: &str,
) -> anyhow::Result<Option<types::TaskPushNotificationConfig>> {
    let card = journal.agent(card_url)?.and_then(|a| a.card_json);
    if !card.as_deref().is_some_and(card_pushes) {
        warn_no_push(card_url);
        return Ok(None);
    }
    let config_id = fresh_config_id();
    let url = format!("{base}/{PUSH_PATH}/{config_id}");
    let token = fresh_token();
    let held = journal.register_push(attempt, &config_id, &url, &token_hash(&token))?;
    Ok(Some(wire_config(&held, token)))
}

/// The config a send carries: the journaled id and URL, the token, and the same token as
/// `Bearer` credentials (agents put one or the other, or both, on each push).
fn wire_config(held: &PushConfig, token: String) -> types::TaskPushNotificationConfig {
    types::TaskPushNotificationConfig {
        url: held.url.clone(),
        id: Some(held.config_id.clone()),
        task_id: String::new(),
        authentication: Some(types::AuthenticationInfo {
            scheme: AUTH_SCHEME.to_owned(),
            credentials: Some(token.clone()),
        }),
        token: Some(token),
        tenant: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_are_checked_and_trimmed() {
        assert_eq!(
            base_url("https://hooks.example/a2a/").unwrap(),
            "https://hooks.example/a2a"
        );
        assert_eq!(
            base_url("http://127.0.0.1:8787").unwrap(),
            "http://127.0.0.1:8787"
        );
        for bad in [
            "hooks.example",
            "ftp://hooks.example",
            "https://u:p@hooks.example",
            "https://hooks.example/?a=1",
            "https://hooks.example/#x",
        ] {
            assert!(base_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn tokens_match_their_hashes_only() {
        let a = fresh_token();
        let b = fresh_token();
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
        let hashes = vec![token_hash(&b), token_hash(&a)];
        assert!(token_matches(&a, &hashes));
        assert!(!token_matches("forged", &hashes));
        assert!(!token_matches(&a, &[]));
        assert!(!token_hash(&a).contains(&a));
    }

    #[test]
    fn only_a_card_saying_push_true_is_asked() {
        assert!(card_pushes(
            r#"{"capabilities":{"pushNotifications":true}}"#
        ));
        assert!(!card_pushes(
            r#"{"capabilities":{"pushNotifications":false}}"#
        ));
        assert!(!card_pushes(r#"{"capabilities":{}}"#));
        assert!(!card_pushes("not json"));
    }
}
