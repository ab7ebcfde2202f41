//! The journal URL: `postgres://USER[:PASSWORD]@HOST[:PORT]/DB?schema=NAME&sslmode=MODE`.
//!
//! Parsed here, before tokio-postgres sees anything: our own parameters (`schema`, `sslmode`,
//! `sslrootcert`) and the password are taken out, and tokio-postgres parses the rest without
//! them (so no error of its parser can hold the password). The password comes from the URL,
//! else `PGPASSWORD`, else the password file (`PGPASSFILE`, else `~/.pgpass`; libpq's format,
//! ignored unless only its owner can read it). [`PgUrl::redacted`] is the URL without its
//! password: the only form that may reach an error, a log or a JSON record.
//!
//! TLS (`sslmode`): `disable`; `prefer` (the default, as libpq's: TLS when the server offers
//! it); `require`, `verify-ca` and `verify-full` all verify the server's certificate chain *and*
//! its name (libpq's `verify-full`): `require` verifies too, unlike libpq's. The CA bundle is
//! `sslrootcert=PATH` (PEM), else the Mozilla roots built into the binary (`sslrootcert=system`
//! says the same).

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use tokio_postgres::config::{Host, SslMode};

/// The schema when the URL names none.
pub(in crate::journal) const DEFAULT_SCHEMA: &str = "a2a_recover";

/// How long a connection attempt may take when the URL sets no `connect_timeout`.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether `s` names a PostgreSQL journal rather than a file.
pub(in crate::journal) fn is_postgres_url(s: &str) -> bool {
    let lower = s.get(..13).unwrap_or(s).to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

/// What TLS a connection uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::journal) enum Tls {
    /// Never.
    Disable,
    /// When the server offers it (then verified).
    Prefer,
    /// Always, verified.
    Require,
}

/// A parsed journal URL.
#[derive(Clone)]
pub(in crate::journal) struct PgUrl {
    config: tokio_postgres::Config,
    schema: String,
    #[cfg_attr(not(test), allow(dead_code, reason = "the tests read it"))]
    tls: Tls,
    root_cert: Option<PathBuf>,
    redacted: String,
    /// Kept only to scrub it from error texts that might quote it.
    password: Option<String>,
}

impl fmt::Debug for PgUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PgUrl").field(&self.redacted).finish()
    }
}

/// A journal URL that cannot be used; names only the redacted URL.
#[derive(Debug, thiserror::Error)]
#[error("the journal URL `{url}` {why}")]
pub(in crate::journal) struct UrlError {
    /// The URL without its password.
    pub(in crate::journal) url: String,
    /// What is wrong, a lowercase fragment.
    pub(in crate::journal) why: String,
}

/// Where the password lookup reads the environment (tests pass their own).
pub(in crate::journal) trait Environment {
    /// Returns the variable `name`, when set and not empty.
    fn var(&self, name: &str) -> Option<String>;
}

/// The process's own environment.
pub(in crate::journal) struct ProcessEnv;

impl Environment for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    }
}

impl PgUrl {
    /// Parses `url` with the process's environment.
    pub(in crate::journal) fn parse(url: &str) -> Result<Self, UrlError> {
        Self::parse_with(url, &ProcessEnv)
    }

    /// Parses `url`, looking up the password in `env` when the URL has none.
    pub(in crate::journal) fn parse_with(
        url: &str,
        env: &dyn Environment,
    ) -> Result<Self, UrlError> {
        let bad = |why: String| UrlError {
            url: redact_raw(url),
            why,
        };
        if !is_postgres_url(url) {
            return Err(bad(
                "does not start with postgres:// or postgresql://".to_owned()
            ));
        }
        let mut parsed = url::Url::parse(url).map_err(|e| bad(format!("is not a URL ({e})")))?;
        let mut password = match parsed.password() {
            Some(p) => {
                Some(decode(p).map_err(|()| bad("has a password that is not UTF-8".into()))?)
            }
            None => None,
        };
        parsed
            .set_password(None)
            .map_err(|()| bad("cannot hold a password".to_owned()))?;

        let mut schema = DEFAULT_SCHEMA.to_owned();
        let mut tls = Tls::Prefer;
        let mut root_cert = None;
        let mut rest: Vec<(String, String)> = Vec::new();
        for (key, value) in parsed.query_pairs() {
            match &*key {
                "schema" => schema = value.into_owned(),
                "password" => password = Some(value.into_owned()),
                "sslmode" => {
                    tls = match &*value {
                        "disable" => Tls::Disable,
                        "allow" | "prefer" => Tls::Prefer,
                        "require" | "verify-ca" | "verify-full" => Tls::Require,
                        other => {
                            return Err(bad(format!(
                                "has sslmode={other}; use disable, prefer, require or verify-full"
                            )));
                        }
                    }
                }
                "sslrootcert" if value == "system" => root_cert = None,
                "sslrootcert" => root_cert = Some(PathBuf::from(&*value)),
                "sslcert" | "sslkey" | "sslpassword" | "sslnegotiation" => {
                    return Err(bad(format!(
                        "has {key}, which a2a-recover does not support"
                    )));
                }
                _ => rest.push((key.into_owned(), value.into_owned())),
            }
        }
        check_schema(&schema).map_err(|why| bad(why.to_owned()))?;

        // The redacted form keeps every parameter but the password.
        let mut shown = parsed.clone();
        set_query(
            &mut shown,
            parsed
                .query_pairs()
                .filter(|(k, _)| k != "password")
                .map(|(k, v)| (k.into_owned(), v.into_owned())),
        );
        let redacted = shown.to_string();
        let bad = |why: String| UrlError {
            url: redacted.clone(),
            why,
        };

        // tokio-postgres parses what is left: no password, none of our parameters.
        let mut plain = parsed;
        set_query(&mut plain, rest.into_iter());
        let mut config = tokio_postgres::Config::from_str(plain.as_str())
            .map_err(|e| bad(format!("cannot be used: {e}")))?;
        if config.get_hosts().is_empty() {
            return Err(bad("names no host".to_owned()));
        }
        if password.is_none() {
            password = env
                .var("PGPASSWORD")
                .or_else(|| password_from_file(&config, env));
        }
        if let Some(p) = &password {
            config.password(p.as_bytes());
        }
        config.ssl_mode(match tls {
            Tls::Disable => SslMode::Disable,
            Tls::Prefer => SslMode::Prefer,
            Tls::Require => SslMode::Require,
        });
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(DEFAULT_CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("a2a-recover");
        }
        Ok(Self {
            config,
            schema,
            tls,
            root_cert,
            redacted,
            password: password.filter(|p| !p.is_empty()),
        })
    }

    /// Whether `other` names the same server, database, role, password, schema and options.
    pub(in crate::journal) fn same_as(&self, other: &Self) -> bool {
        self.redacted == other.redacted && self.password == other.password
    }

    /// Returns the URL without its password: the only form errors, logs and JSON may show.
    pub(in crate::journal) fn redacted(&self) -> &str {
        &self.redacted
    }

    /// Returns the schema the journal lives in.
    pub(in crate::journal) fn schema(&self) -> &str {
        &self.schema
    }

    /// Returns the TLS mode.
    #[cfg_attr(
        not(test),
        allow(dead_code, reason = "the tests read it; the mode lives in config")
    )]
    pub(in crate::journal) fn tls(&self) -> Tls {
        self.tls
    }

    /// Returns the CA bundle named by `sslrootcert`, if any.
    pub(in crate::journal) fn root_cert(&self) -> Option<&Path> {
        self.root_cert.as_deref()
    }

    /// Returns tokio-postgres's configuration (password included: never print it).
    pub(in crate::journal) fn config(&self) -> &tokio_postgres::Config {
        &self.config
    }

    /// Returns whether a password was found (in the URL, `PGPASSWORD` or the password file).
    #[allow(
        dead_code,
        reason = "kept for a status line that says where the password came from"
    )]
    pub(in crate::journal) fn has_password(&self) -> bool {
        self.password.is_some()
    }

    /// Returns `text` with the password replaced by `***`, for error texts from below; raw,
    /// percent-encoded (a URL quoting it) or JSON-escaped, as every secret is
    /// ([`crate::scrub`]).
    pub(in crate::journal) fn scrub(&self, text: &str) -> String {
        match &self.password {
            Some(p) => crate::scrub::scrub_str(&[p], text, "***").into_owned(),
            None => text.to_owned(),
        }
    }
}

/// Checks a schema name: a lowercase SQL identifier, never `public` nor `pg_…`.
fn check_schema(schema: &str) -> Result<(), &'static str> {
    let mut chars = schema.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    if !first_ok
        || schema.len() > 63
        || !schema
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    {
        return Err(
            "has a schema that is not a lowercase identifier (a-z, 0-9 and _, at most 63, not \
             starting with a digit)",
        );
    }
    if schema == "public" || schema.starts_with("pg_") || schema == "information_schema" {
        return Err("names a schema the journal must not use (public, pg_…, information_schema)");
    }
    Ok(())
}

fn set_query(url: &mut url::Url, pairs: impl Iterator<Item = (String, String)>) {
    let pairs: Vec<_> = pairs.collect();
    if pairs.is_empty() {
        url.set_query(None);
    } else {
        url.query_pairs_mut().clear().extend_pairs(pairs);
    }
}

fn decode(s: &str) -> Result<String, ()> {
    percent_decode(s).ok_or(())
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Redacts a URL that did not parse: whatever sits between `://` and the last `@` of the
/// authority loses everything after its first `:`.
fn redact_raw(url: &str) -> String {
    let Some(start) = url.find("://").map(|i| i + 3) else {
        return "(unreadable)".to_owned();
    };
    let authority_end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    let Some(at) = url[start..authority_end].rfind('@').map(|i| start + i) else {
        return url.to_owned();
    };
    let userinfo = &url[start..at];
    let user = userinfo.split(':').next().unwrap_or("");
    let query = url[authority_end..].split_once('?').map_or_else(
        || url[authority_end..].to_owned(),
        |(path, q)| {
            let kept: Vec<&str> = q
                .split('&')
                .filter(|kv| !kv.starts_with("password="))
                .collect();
            format!("{path}?{}", kept.join("&"))
        },
    );
    format!("{}{user}{}{query}", &url[..start], &url[at..authority_end])
}

/// The password file's entry for this connection: `PGPASSFILE`, else `~/.pgpass`; libpq's
/// format (`host:port:db:user:password`, `*` matches anything, `\:` and `\\` escape); ignored
/// unless it is a regular file only its owner can read or write (libpq's 0600 rule).
fn password_from_file(config: &tokio_postgres::Config, env: &dyn Environment) -> Option<String> {
    let path = env
        .var("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| env.var("HOME").map(|h| Path::new(&h).join(".pgpass")))?;
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o077 != 0 {
            tracing::warn!(
                "password file {} has group or world access; ignoring it (chmod 0600)",
                path.display()
            );
            return None;
        }
    }
    let text = std::fs::read_to_string(&path).ok()?;
    let host = match config.get_hosts().first()? {
        Host::Tcp(h) => h.clone(),
        #[cfg(unix)]
        Host::Unix(_) => "localhost".to_owned(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config
        .get_user()
        .map(str::to_owned)
        .or_else(|| env.var("USER"))?;
    let db = config
        .get_dbname()
        .map_or_else(|| user.clone(), str::to_owned);
    pgpass_lookup(&text, [&host, &port, &db, &user])
}

/// Returns the password of the first line of a password file matching the four fields.
fn pgpass_lookup(text: &str, want: [&str; 4]) -> Option<String> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .find_map(|line| {
            let fields = split_pgpass(line);
            if fields.len() < 5 {
                return None;
            }
            let matches = want.iter().zip(&fields).all(|(w, f)| f == "*" || f == w);
            matches.then(|| fields[4..].join(":"))
        })
}

fn split_pgpass(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    fields.last_mut().expect("one field").push(n);
                }
            }
            ':' => fields.push(String::new()),
            c => fields.last_mut().expect("one field").push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    struct Env(HashMap<&'static str, String>);

    impl Environment for Env {
        fn var(&self, name: &str) -> Option<String> {
            self.0.get(name).cloned()
        }
    }

    fn env(pairs: &[(&'static str, &str)]) -> Env {
        Env(pairs.iter().map(|(k, v)| (*k, (*v).to_owned())).collect())
    }

    fn password(url: &PgUrl) -> Option<Vec<u8>> {
        url.config().get_password().map(<[u8]>::to_vec)
    }

    #[test]
    fn postgres_urls_are_told_from_paths() {
        assert!(is_postgres_url("postgres://h/db"));
        assert!(is_postgres_url("PostgreSQL://h/db"));
        assert!(!is_postgres_url("./postgres/db"));
        assert!(!is_postgres_url("postgres:/h"));
    }

    #[test]
    fn postgres_url_password_comes_from_the_url_first_and_never_shows() {
        let e = env(&[("PGPASSWORD", "from-env")]);
        let url = PgUrl::parse_with(
            "postgres://alice:s%40cret@db.example:6543/jobs?schema=ops&sslmode=require",
            &e,
        )
        .unwrap();
        assert_eq!(password(&url).unwrap(), b"s@cret");
        assert_eq!(url.schema(), "ops");
        assert_eq!(url.tls(), Tls::Require);
        assert_eq!(
            url.redacted(),
            "postgres://alice@db.example:6543/jobs?schema=ops&sslmode=require"
        );
        assert!(!format!("{url:?}").contains("cret"));
        assert_eq!(url.scrub("x s@cret y"), "x *** y");
        assert_eq!(url.scrub(r"x s%40cret, s\u0040cret y"), "x ***, *** y");
    }

    #[test]
    fn postgres_url_password_parameter_is_taken_out_too() {
        let url =
            PgUrl::parse_with("postgresql://bob@h/db?password=hunter2&x=1", &env(&[])).unwrap_err();
        // `x` is no option tokio-postgres knows; the error still shows no password.
        assert!(!url.to_string().contains("hunter2"), "{url}");
        let url = PgUrl::parse_with("postgresql://bob@h/db?password=hunter2", &env(&[])).unwrap();
        assert_eq!(password(&url).unwrap(), b"hunter2");
        assert_eq!(url.redacted(), "postgresql://bob@h/db");
        assert_eq!(url.schema(), DEFAULT_SCHEMA);
        assert_eq!(url.tls(), Tls::Prefer);
    }

    #[test]
    fn postgres_url_password_falls_back_to_pgpassword_then_the_file() {
        let url = PgUrl::parse_with("postgres://bob@h/db", &env(&[("PGPASSWORD", "pw1")])).unwrap();
        assert_eq!(password(&url).unwrap(), b"pw1");

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(
            &file,
            "# comment\nother:*:*:*:nope\nh:5432:db:bob:pw\\:2\n*:*:*:*:fallback\n",
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let e = env(&[("PGPASSFILE", file.to_str().unwrap())]);
        let url = PgUrl::parse_with("postgres://bob@h/db", &e).unwrap();
        assert_eq!(password(&url).unwrap(), b"pw:2");
        let url = PgUrl::parse_with("postgres://bob@h:7/db", &e).unwrap();
        assert_eq!(password(&url).unwrap(), b"fallback");

        // ~/.pgpass when PGPASSFILE is unset.
        std::fs::copy(&file, dir.path().join(".pgpass")).unwrap();
        let e = env(&[("HOME", dir.path().to_str().unwrap())]);
        let url = PgUrl::parse_with("postgres://bob@h/db", &e).unwrap();
        assert_eq!(password(&url).unwrap(), b"pw:2");
    }

    #[cfg(unix)]
    #[test]
    fn postgres_password_file_readable_by_others_is_ignored() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(&file, "*:*:*:*:pw\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = env(&[("PGPASSFILE", file.to_str().unwrap())]);
        let url = PgUrl::parse_with("postgres://bob@h/db", &e).unwrap();
        assert_eq!(password(&url), None);
    }

    #[test]
    fn postgres_url_schema_must_be_a_plain_identifier() {
        for bad in ["public", "pg_x", "Ops", "1x", "a-b", "a%22b", ""] {
            let err = PgUrl::parse_with(&format!("postgres://u:pw@h/db?schema={bad}"), &env(&[]))
                .unwrap_err();
            assert!(err.why.contains("schema"), "{bad}: {err}");
            assert!(!err.to_string().contains(":pw@"), "{err}");
        }
        let ok = PgUrl::parse_with("postgres://u@h/db?schema=t_0a9", &env(&[])).unwrap();
        assert_eq!(ok.schema(), "t_0a9");
    }

    #[test]
    fn postgres_bad_urls_never_show_the_password() {
        for bad in [
            "postgres://u:topsecret@h:notaport/db",
            "postgres://u:topsecret@h/db?sslmode=sometimes",
            "postgres://u:topsecret@h/db?sslcert=x",
            "postgres://u:topsecret@h/db?connect_timeout=soon",
            "postgres://u:topsecret@[::1/db",
            "postgres://u:topsecret@/db",
        ] {
            let err = PgUrl::parse_with(bad, &env(&[])).unwrap_err();
            let text = err.to_string();
            assert!(!text.contains("topsecret"), "{bad}: {text}");
            assert!(text.contains("postgres://u@"), "{bad}: {text}");
        }
    }

    #[test]
    fn postgres_pgpass_fields_unescape() {
        assert_eq!(
            split_pgpass(r"a\:b:c\\:d:e:f:g"),
            vec!["a:b", "c\\", "d", "e", "f", "g"]
        );
        assert_eq!(
            pgpass_lookup("h:1:d:u:p:q\n", ["h", "1", "d", "u"]).as_deref(),
            Some("p:q")
        );
    }
}
