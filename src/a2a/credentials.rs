//! Credentials and what may be shown: the [`Credential`] and where it is placed on a request
//! ([`Placed`]), the cross-origin rule, URL origins and redaction, and the scrub of a token an
//! agent echoes back.
//!
//! Invariants: a credential goes only to the card's origin unless cross-origin is allowed; its
//! token is never logged, put into an error or journaled; URLs never carry userinfo.

use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;

use reqwest::RequestBuilder;
use reqwest::header::{AUTHORIZATION, COOKIE, HeaderName, HeaderValue};
use serde_json::Value;
use url::Url;

use super::error::A2aError;
use super::memo::Memo;
use super::security::{Placement, is_cookie_value_byte};
use super::token_cmd::{self, Failure, TOKEN_CMD_MAX_OUTPUT, TOKEN_CMD_TIMEOUT};
use crate::scrub::{self, REDACTED};

/// Where a credential comes from: the name of an environment variable (`--token-env`) or a
/// command that prints it (`--token-cmd`). Either is journaled; the token never is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenSource {
    /// The name of an environment variable.
    Env(String),
    /// A command line, split into argv without a shell.
    Cmd(String),
}

impl fmt::Display for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Env(var) => f.write_str(var),
            Self::Cmd(cmd) => write!(f, "`{}`", crate::sanitize::inert(cmd)),
        }
    }
}

/// A secret (a bearer token or an API key) and where it came from; where it goes on a request
/// is the card's ([`Placement`], on the endpoint).
///
/// `Debug` and `Display` show only the variable's name or the command, never the token.
#[derive(Clone)]
pub struct Credential {
    source: TokenSource,
    header: HeaderValue,
    /// The token itself, to place it as an API key and to scrub it from what an agent echoes
    /// back.
    token: Arc<str>,
    /// What an agent's answer is scrubbed of: the token (in any encoding `crate::scrub` finds).
    secrets: Arc<[Arc<str>]>,
}

/// Tokens printed by commands, cached for the process (command line → token).
static TOKEN_CMD_CACHE: std::sync::Mutex<Vec<(String, Arc<str>)>> =
    std::sync::Mutex::new(Vec::new());

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

    /// Returns the credential of `--token-env VAR` or `--token-cmd CMD` (the command wins
    /// when a step somehow carries both), or `None` without either.
    ///
    /// A command that must run (this process has not run it yet) runs on a blocking thread: it
    /// may take up to its 10 s (`TOKEN_CMD_TIMEOUT`), and the other requests and streams of the
    /// runtime go on meanwhile.
    pub async fn resolve(
        token_env: Option<&str>,
        token_cmd: Option<&str>,
    ) -> Result<Option<Self>, A2aError> {
        match (token_cmd, token_env) {
            (Some(cmd), _) => Self::from_cmd(cmd).await.map(Some),
            (None, Some(var)) => Self::from_env(var).map(Some),
            (None, None) => Ok(None),
        }
    }

    /// Runs `cmd` (split into argv without a shell) for the token it prints on stdout, on a
    /// blocking thread, or returns the token it printed earlier in this process.
    pub async fn from_cmd(cmd: &str) -> Result<Self, A2aError> {
        if Self::cached(cmd).is_some() {
            return Self::from_cmd_blocking(cmd);
        }
        let owned = cmd.to_owned();
        off_runtime(cmd, move || Self::from_cmd_blocking(&owned)).await
    }

    /// [`Self::from_cmd`] on this thread: blocks while the command runs.
    fn from_cmd_blocking(cmd: &str) -> Result<Self, A2aError> {
        let token = match Self::cached(cmd) {
            Some(token) => token,
            None => Self::run_cmd(cmd)?,
        };
        Self::build(TokenSource::Cmd(cmd.to_owned()), &token)
    }

    /// Returns the token `cmd` printed earlier in this process.
    fn cached(cmd: &str) -> Option<Arc<str>> {
        TOKEN_CMD_CACHE
            .lock()
            .ok()
            .and_then(|c| c.iter().find(|(k, _)| k == cmd).map(|(_, t)| Arc::clone(t)))
    }

    /// Runs `cmd` again (after the agent refused the token it printed), on a blocking thread,
    /// replacing the cached token; reads a variable again.
    pub async fn refresh(&self) -> Result<Self, A2aError> {
        match &self.source {
            TokenSource::Cmd(cmd) => {
                // Another call already ran it again since this token was printed.
                let newer = TOKEN_CMD_CACHE.lock().ok().and_then(|c| {
                    c.iter()
                        .find(|(k, t)| k == cmd && **t != *self.token)
                        .map(|(_, t)| Arc::clone(t))
                });
                if let Some(token) = newer {
                    return Self::build(self.source.clone(), &token);
                }
                Self::forget(cmd);
                Self::from_cmd(cmd).await
            }
            TokenSource::Env(var) => Self::from_env(var),
        }
    }

    fn forget(cmd: &str) {
        if let Ok(mut cache) = TOKEN_CMD_CACHE.lock() {
            cache.retain(|(k, _)| k != cmd);
        }
    }

    /// Runs the command with a timeout and a bound on its output (`token_cmd`); caches what
    /// it printed.
    fn run_cmd(cmd: &str) -> Result<Arc<str>, A2aError> {
        let fail = |problem: String| A2aError::TokenCommand {
            cmd: crate::sanitize::inert(cmd),
            problem,
        };
        let argv = shlex::split(cmd)
            .filter(|argv| !argv.is_empty())
            .ok_or_else(|| fail("cannot be split into a program and its arguments".into()))?;
        let out = token_cmd::run(&argv).map_err(|failure| {
            fail(match failure {
                Failure::Start(kind) => format!("could not be started: {kind}"),
                Failure::Timeout => {
                    format!("did not finish within {}s", TOKEN_CMD_TIMEOUT.as_secs())
                }
                Failure::OutputHeld => format!(
                    "exited, but a process it started outside its process group kept its \
                     output open past {}s",
                    TOKEN_CMD_TIMEOUT.as_secs()
                ),
                Failure::Io(kind) => format!("could not be read: {kind}"),
                Failure::Status(status) => match status.code() {
                    Some(code) => format!("exited with status {code}"),
                    None => "was killed by a signal".to_owned(),
                },
            })
        })?;
        if out.len() > TOKEN_CMD_MAX_OUTPUT {
            return Err(fail(format!(
                "printed more than {} KiB",
                TOKEN_CMD_MAX_OUTPUT / 1024
            )));
        }
        let token = String::from_utf8(out)
            .map_err(|_| fail("printed something that is not UTF-8".into()))?;
        let token = token.trim();
        if token.is_empty() {
            return Err(fail("printed nothing on stdout".into()));
        }
        let token: Arc<str> = Arc::from(token);
        if let Ok(mut cache) = TOKEN_CMD_CACHE.lock() {
            cache.retain(|(k, _)| k != cmd);
            cache.push((cmd.to_owned(), Arc::clone(&token)));
        }
        Ok(token)
    }

    /// Builds a credential from a token already read from the variable `var`.
    pub fn new(var: &str, token: &str) -> Result<Self, A2aError> {
        Self::build(TokenSource::Env(var.to_owned()), token)
    }

    fn build(source: TokenSource, token: &str) -> Result<Self, A2aError> {
        let token = token.trim();
        if token.is_empty() {
            return Err(problem(&source, "is empty"));
        }
        let mut header = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
            problem(
                &source,
                "holds characters that cannot be sent in an HTTP header",
            )
        })?;
        header.set_sensitive(true);
        let token: Arc<str> = Arc::from(token);
        Ok(Self {
            source,
            header,
            secrets: Arc::from([Arc::clone(&token)]),
            token,
        })
    }

    /// Checks that the token can be placed as `placement` says (a cookie value is narrower
    /// than a header's); the error names where the token came from, never the token.
    pub(crate) fn check_placement(&self, placement: &Placement) -> Result<(), A2aError> {
        match placement {
            Placement::Cookie { .. } if !self.token.bytes().all(is_cookie_value_byte) => {
                Err(problem(
                    &self.source,
                    "holds characters that cannot be sent in a cookie",
                ))
            }
            _ => Ok(()),
        }
    }

    /// Returns the name of the environment variable holding the token, if it came from one.
    pub fn env_var(&self) -> Option<&str> {
        match &self.source {
            TokenSource::Env(var) => Some(var),
            TokenSource::Cmd(_) => None,
        }
    }

    /// Returns the command that printed the token, if it came from one.
    pub fn command(&self) -> Option<&str> {
        match &self.source {
            TokenSource::Cmd(cmd) => Some(cmd),
            TokenSource::Env(_) => None,
        }
    }

    /// Returns a key naming where the token came from (for per-credential limits; never
    /// the token).
    pub fn key(&self) -> String {
        match &self.source {
            TokenSource::Env(var) => format!("env:{var}"),
            TokenSource::Cmd(cmd) => format!("cmd:{cmd}"),
        }
    }

    /// Returns where the token came from.
    pub fn source(&self) -> &TokenSource {
        &self.source
    }

    /// Returns the `Authorization` header value, marked sensitive.
    pub(crate) fn header(&self) -> HeaderValue {
        self.header.clone()
    }

    /// Returns what answers are scrubbed of: the token, found in any encoding
    /// `crate::scrub` knows.
    pub(crate) fn secrets(&self) -> Arc<[Arc<str>]> {
        Arc::clone(&self.secrets)
    }

    /// Returns a header value, marked sensitive (the token was checked to fit in a header).
    fn sensitive(value: &str) -> Option<HeaderValue> {
        let mut value = HeaderValue::from_str(value).ok()?;
        value.set_sensitive(true);
        Some(value)
    }
}

/// Runs `f` (which may run the token command `cmd`) on the runtime's blocking threads, or
/// here outside a runtime.
async fn off_runtime<T: Send + 'static>(
    cmd: &str,
    f: impl FnOnce() -> Result<T, A2aError> + Send + 'static,
) -> Result<T, A2aError> {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return f();
    };
    match runtime.spawn_blocking(f).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => Err(A2aError::TokenCommand {
            cmd: crate::sanitize::inert(cmd),
            problem: "was cancelled: the process is ending".to_owned(),
        }),
    }
}

/// The error of a token that cannot be used, naming its source.
fn problem(source: &TokenSource, problem: &'static str) -> A2aError {
    match source {
        TokenSource::Env(var) => A2aError::Credential {
            var: var.clone(),
            problem,
        },
        TokenSource::Cmd(cmd) => A2aError::TokenCommand {
            cmd: crate::sanitize::inert(cmd),
            problem: problem.replace("is empty", "printed nothing on stdout"),
        },
    }
}

/// A credential and where it goes on one request.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Placed<'a> {
    pub(crate) credential: &'a Credential,
    pub(crate) placement: &'a Placement,
}

impl Placed<'_> {
    /// Returns the credential as one header (gRPC metadata): `Authorization: Bearer`, the
    /// card's API key header, or `Cookie`, marked sensitive; `None` for a query parameter
    /// (gRPC has no URL query) or a token no header can hold.
    pub(crate) fn header_pair(self) -> Option<(HeaderName, HeaderValue)> {
        let c = self.credential;
        match self.placement {
            Placement::Bearer => Some((AUTHORIZATION, c.header())),
            Placement::Header { name, .. } => {
                Some((name.clone(), Credential::sensitive(&c.token)?))
            }
            Placement::Query { .. } => None,
            Placement::Cookie { name, .. } => Some((
                COOKIE,
                Credential::sensitive(&format!("{name}={}", c.token))?,
            )),
        }
    }

    /// Puts the credential on a request: `Authorization: Bearer`, or the card's API key header,
    /// query parameter or cookie. Header values are marked sensitive; the request's URL is
    /// never logged or shown unredacted (`Op`, `redact_url`).
    pub(crate) fn apply(self, req: RequestBuilder) -> RequestBuilder {
        let c = self.credential;
        match self.placement {
            Placement::Bearer => req.header(AUTHORIZATION, c.header()),
            Placement::Header { name, .. } => match Credential::sensitive(&c.token) {
                Some(value) => req.header(name.clone(), value),
                None => req,
            },
            Placement::Query { name, .. } => req.query(&[(name.as_str(), &*c.token)]),
            Placement::Cookie { name, .. } => {
                match Credential::sensitive(&format!("{name}={}", c.token)) {
                    Some(value) => req.header(COOKIE, value),
                    None => req,
                }
            }
        }
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credential")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.source.fmt(f)
    }
}

/// Returns the key [`Credential::key`] gives the credential journaled as `token_env` /
/// `token_cmd`, without reading or running it.
pub fn source_key(token_env: Option<&str>, token_cmd: Option<&str>) -> Option<String> {
    match (token_cmd, token_env) {
        (Some(cmd), _) => Some(format!("cmd:{cmd}")),
        (None, Some(var)) => Some(format!("env:{var}")),
        (None, None) => None,
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

/// Returns a body with every occurrence of each secret (raw, percent-encoded or JSON-escaped,
/// in any mixture: `crate::scrub`) replaced by `REDACTED`.
pub(crate) fn scrub_all<'b>(secrets: &[Arc<str>], body: &'b [u8]) -> std::borrow::Cow<'b, [u8]> {
    scrub::scrub_bytes(secrets, body, REDACTED)
}

/// Replaces each secret, in any encoding `crate::scrub` finds, in every string and object key
/// of a JSON value; returns whether it replaced any.
pub(crate) fn scrub_json(value: &mut Value, secrets: &[Arc<str>]) -> bool {
    let scrubbed = |s: &str| match scrub::scrub_str(secrets, s, REDACTED) {
        std::borrow::Cow::Owned(s) => Some(s),
        std::borrow::Cow::Borrowed(_) => None,
    };
    match value {
        Value::String(s) => scrubbed(s).map(|clean| *s = clean).is_some(),
        Value::Array(items) => {
            // Every item, not up to the first that held one.
            let mut any = false;
            for v in items {
                any |= scrub_json(v, secrets);
            }
            any
        }
        Value::Object(map) => {
            let mut any = map.keys().any(|k| scrubbed(k).is_some());
            if any {
                *map = std::mem::take(map)
                    .into_iter()
                    .map(|(k, v)| (scrubbed(&k).unwrap_or(k), v))
                    .collect();
            }
            for v in map.values_mut() {
                any |= scrub_json(v, secrets);
            }
            any
        }
        _ => false,
    }
}

/// Returns the origin (`scheme://host:port`, default ports left out) of an http(s) URL.
pub fn origin_of(url: &str) -> Result<String, A2aError> {
    static ORIGINS: Memo = Memo::new();
    ORIGINS.get(url, |url| {
        Ok(parse_http_url(url)?.origin().ascii_serialization())
    })
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
    static REDACTED_URLS: Memo = Memo::new();
    let Ok(shown) = REDACTED_URLS.get(url, |url| Ok::<_, Infallible>(redact_now(url)));
    shown
}

fn redact_now(url: &str) -> String {
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

    /// A token command runs off the runtime's thread: here it waits for a file that only a
    /// task on the same (current-thread) runtime creates, so a command run on the runtime's
    /// thread would time out instead of printing its token.
    #[tokio::test]
    async fn a_token_command_leaves_the_runtime_free_while_it_runs() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let ready = dir.path().join("ready");
        let script = dir.path().join("token.sh");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\nwhile [ ! -e '{}' ]; do sleep 0.01; done\necho the-token\n",
                ready.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let cmd = script.display().to_string();
        let other_work = async {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            std::fs::write(&ready, "").unwrap();
        };
        let (credential, ()) = tokio::join!(Credential::from_cmd(&cmd), other_work);
        let credential = credential.unwrap();
        assert_eq!(&*credential.token, "the-token");
        assert_eq!(credential.command(), Some(cmd.as_str()));
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
