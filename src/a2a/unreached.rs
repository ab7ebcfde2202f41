//! Why an agent could not be reached, as a kind: the command layer words it once per agent
//! instead of printing the HTTP library's error chain once per step.

use std::time::Duration;

use super::error::A2aError;

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
            Self::Connect { detail, .. } => {
                let d = detail.to_ascii_lowercase();
                Some(if d.contains("connection refused") {
                    Unreached::Refused
                } else if d.contains("dns error")
                    || d.contains("failed to lookup address")
                    || d.contains("name or service not known")
                {
                    Unreached::NoSuchHost
                } else if d.contains("certificate") || d.contains("tls") || d.contains("handshake")
                {
                    Unreached::Tls
                } else {
                    Unreached::NoConnection
                })
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn connect(detail: &str) -> A2aError {
        A2aError::Connect {
            url: "http://127.0.0.1:1/".into(),
            method: "GetTask",
            detail: detail.into(),
        }
    }

    #[test]
    fn connection_failures_are_told_apart() {
        let refused = "error sending request: client error (Connect): tcp connect error: \
                       Connection refused (os error 111)";
        assert_eq!(connect(refused).unreached(), Some(Unreached::Refused));
        let dns = "client error (Connect): dns error: failed to lookup address information";
        assert_eq!(connect(dns).unreached(), Some(Unreached::NoSuchHost));
        let tls = "client error (Connect): invalid peer certificate: UnknownIssuer";
        assert_eq!(connect(tls).unreached(), Some(Unreached::Tls));
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
