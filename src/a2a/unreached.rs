//! Why an agent could not be reached, as a kind: the command layer words it once per agent
//! instead of printing the HTTP library's error chain once per step.

use std::time::Duration;

use std::error::Error;

use super::error::A2aError;
use super::resolve::NoSuchHost;

/// Why a request got no answer from its agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Unreached {
    /// Nothing listens at the address (connection refused).
    Refused,
    /// The host name did not resolve.
    NoSuchHost,
    /// The TLS handshake failed (a certificate, a protocol).
    Tls,
    /// The connection could not be made for another reason (unreachable network, …).
    NoConnection,
    /// No complete answer within the timeout (how long was waited).
    TimedOut(Duration),
    /// The connection broke after the request may have left (reset, cut body).
    Cut,
    /// A gateway in front of the agent answered for it (HTTP 502, 503 or 504).
    Gateway(u16),
}

impl A2aError {
    /// Why the agent could not be reached, when that is what this error says; `None` for an
    /// answer (an error of the agent's own, a body we cannot read) and for local errors.
    pub fn unreached(&self) -> Option<Unreached> {
        match self {
            Self::Connect { why, .. } => Some(*why),
            Self::Timeout { after, .. } | Self::StreamIdle { after, .. } => {
                Some(Unreached::TimedOut(*after))
            }
            Self::Transport {
                transient: true, ..
            }
            | Self::StreamTruncated { .. } => Some(Unreached::Cut),
            Self::Http {
                status: status @ (502..=504),
                rpc: None,
                ..
            } => Some(Unreached::Gateway(*status)),
            _ => None,
        }
    }
}

/// Why a connection could not be made, read from the typed errors in its chain (the HTTP
/// library's, the resolver's, the TLS library's): [`Unreached::Refused`],
/// [`Unreached::NoSuchHost`], [`Unreached::Tls`], else [`Unreached::NoConnection`].
pub(super) fn connect_failure(error: &(dyn Error + 'static)) -> Unreached {
    let mut source = Some(error);
    while let Some(e) = source {
        if e.is::<NoSuchHost>() {
            return Unreached::NoSuchHost;
        }
        if e.is::<rustls::Error>() {
            return Unreached::Tls;
        }
        // An I/O error hides the error it wraps from `source()`: look inside.
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return Unreached::Refused;
            }
            if let Some(inner) = io.get_ref() {
                let inner: &(dyn Error + 'static) = inner;
                match connect_failure(inner) {
                    Unreached::NoConnection => {}
                    why => return why,
                }
            }
        }
        source = e.source();
    }
    Unreached::NoConnection
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A failure as the HTTP library reports it: its own error around `cause`.
    #[derive(Debug, thiserror::Error)]
    #[error("client error (Connect)")]
    struct Wrapped(#[source] Box<dyn Error + Send + Sync>);

    fn why(cause: impl Error + Send + Sync + 'static) -> Unreached {
        connect_failure(&Wrapped(Box::new(cause)))
    }

    #[test]
    fn connection_failures_are_told_apart_by_kind() {
        use std::io::{Error as Io, ErrorKind};
        let refused = Io::from(ErrorKind::ConnectionRefused);
        assert_eq!(why(refused), Unreached::Refused);
        let dns = NoSuchHost(Io::other("failed to lookup address information"));
        assert_eq!(why(dns), Unreached::NoSuchHost);
        let tls = Io::new(
            ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
        );
        assert_eq!(why(tls), Unreached::Tls);
        // Words alone decide nothing: a message that says "connection refused" is not one.
        assert_eq!(
            why(Io::other(
                "tcp connect error: Connection refused (os error 111)"
            )),
            Unreached::NoConnection
        );
        let timeout = A2aError::Timeout {
            url: "u".into(),
            method: "GetTask",
            after: Duration::from_secs(1),
            tries: None,
        };
        assert_eq!(
            timeout.unreached(),
            Some(Unreached::TimedOut(Duration::from_secs(1)))
        );
    }
}
