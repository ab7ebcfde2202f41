//! TLS for tokio-postgres with rustls (the ring provider reqwest already brings): a small
//! `MakeTlsConnect` that always verifies the server's certificate chain and name
//! (`sslmode=verify-full` semantics), against `sslrootcert` or the Mozilla roots built in.

use std::future::Future;
use std::io;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};

/// Makes a verifying rustls connector per connection.
#[derive(Clone)]
pub(super) struct MakeRustls(Arc<rustls::ClientConfig>);

impl MakeRustls {
    /// Trusts the PEM certificates in `root_cert`, else the built-in Mozilla roots.
    pub(super) fn new(root_cert: Option<&Path>) -> Result<Self, String> {
        let mut roots = RootCertStore::empty();
        match root_cert {
            Some(path) => {
                let certs = CertificateDer::pem_file_iter(path)
                    .and_then(Iterator::collect::<Result<Vec<_>, _>>)
                    .map_err(|e| format!("cannot read sslrootcert `{}`: {e}", path.display()))?;
                let (added, _) = roots.add_parsable_certificates(certs);
                if added == 0 {
                    return Err(format!(
                        "sslrootcert `{}` holds no usable certificate",
                        path.display()
                    ));
                }
            }
            None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("cannot set up TLS: {e}"))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Self(Arc::new(config)))
    }
}

impl<S> MakeTlsConnect<S> for MakeRustls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type TlsConnect = RustlsConnect;
    type Error = rustls_pki_types::InvalidDnsNameError;

    fn make_tls_connect(&mut self, domain: &str) -> Result<RustlsConnect, Self::Error> {
        Ok(RustlsConnect {
            config: self.0.clone(),
            name: ServerName::try_from(domain.to_owned())?,
        })
    }
}

/// Connects one stream, verifying the server as `name`.
pub(super) struct RustlsConnect {
    config: Arc<rustls::ClientConfig>,
    name: ServerName<'static>,
}

impl<S> TlsConnect<S> for RustlsConnect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<RustlsStream<S>>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        let connector = tokio_rustls::TlsConnector::from(self.config);
        Box::pin(async move {
            connector
                .connect(self.name, stream)
                .await
                .map(|s| RustlsStream(Box::new(s)))
        })
    }
}

/// A TLS stream to the server.
pub(super) struct RustlsStream<S>(Box<tokio_rustls::client::TlsStream<S>>);

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for RustlsStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for RustlsStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut *self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> TlsStream for RustlsStream<S> {
    /// No channel binding: SCRAM then authenticates without it (tokio-postgres's default
    /// `channel_binding=prefer` allows that); the certificate check above is what binds the
    /// session to the server.
    fn channel_binding(&self) -> ChannelBinding {
        ChannelBinding::none()
    }
}
