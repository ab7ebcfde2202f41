//! The servers of `listen`: pushes (plain or TLS by rustls) and metrics, the heartbeat that
//! `status` reads, and the stop on SIGTERM or SIGINT once the pushes in flight are recorded.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Context as _;
use axum::Router;
use axum::routing::{get, post};
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use super::{ListenArgs, Listener};
use crate::context::Context;

/// How often the listener's row is renewed (`status` shows it running).
const HEARTBEAT: Duration = Duration::from_secs(30);

/// How long a TLS handshake may take.
const HANDSHAKE: Duration = Duration::from_secs(10);

/// Reads a PEM certificate chain and private key into a TLS server configuration.
pub(super) fn tls_config(cert: &Path, key: &Path) -> anyhow::Result<Arc<rustls::ServerConfig>> {
    let certs = CertificateDer::pem_file_iter(cert)
        .with_context(|| format!("{}", cert.display()))?
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("{}", cert.display()))?;
    let key = PrivateKeyDer::from_pem_file(key).with_context(|| format!("{}", key.display()))?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(certs, key)?;
    Ok(Arc::new(config))
}

/// A TCP listener whose connections are TLS, for `axum::serve`; a failed handshake is dropped.
struct TlsListener {
    tcp: TcpListener,
    acceptor: TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, addr)) = self.tcp.accept().await else {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            if let Ok(Ok(tls)) = tokio::time::timeout(HANDSHAKE, self.acceptor.accept(stream)).await
            {
                return (tls, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

/// Resolves on SIGTERM or SIGINT.
async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = int.recv() => {}
        _ = term.recv() => {}
    }
}

/// The metrics page.
fn metrics(st: &Listener) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# HELP a2a_recover_push_recorded_total Pushes journaled by this listener.\n\
         # TYPE a2a_recover_push_recorded_total counter\n\
         a2a_recover_push_recorded_total {}",
        st.recorded.load(Ordering::Relaxed)
    );
    if let Some(at) = st.last_push() {
        let _ = writeln!(
            out,
            "# HELP a2a_recover_push_last_timestamp_seconds When this listener last journaled a push.\n\
             # TYPE a2a_recover_push_last_timestamp_seconds gauge\n\
             a2a_recover_push_last_timestamp_seconds {}",
            at.timestamp()
        );
    }
    st.passes.metrics(&mut out);
    out
}

/// Serves pushes and metrics until SIGTERM or SIGINT, renewing the listener's row meanwhile.
pub(super) async fn serve(
    ctx: &Context,
    st: &Arc<Listener>,
    pushes: TcpListener,
    metrics_tcp: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    args: &ListenArgs,
    started: chrono::DateTime<chrono::Utc>,
) -> anyhow::Result<()> {
    let bound = pushes.local_addr()?.to_string();
    let app = Router::new()
        .route("/push/{config_id}", post(super::receive::receive))
        .with_state(Arc::clone(st));
    let m = Arc::clone(st);
    let metrics_app = Router::new()
        .route("/metrics", get(move || async move { metrics(&m) }))
        .route("/healthz", get(|| async { "ok\n" }));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    let metrics_server = tokio::spawn(
        axum::serve(metrics_tcp, metrics_app)
            .with_graceful_shutdown(stopped(stop_rx.clone()))
            .into_future(),
    );
    let hb = Arc::clone(st);
    let heartbeat = tokio::spawn(async move {
        let mut tick = tokio::time::interval(HEARTBEAT);
        tick.tick().await;
        loop {
            tick.tick().await;
            if let Err(e) = hb
                .journal
                .listener_heartbeat(&bound, started, hb.last_push())
            {
                tracing::warn!("failed to renew the listener's row: {e}");
            }
        }
    });
    let backstop = (!args.reconcile_every.is_zero()).then(|| {
        tokio::spawn(super::backstop::run(
            Arc::clone(st),
            args.reconcile_every,
            stop_rx.clone(),
        ))
    });
    let signal = async move {
        stop_signal().await;
        let _ = stop_tx.send(true);
    };
    let served = match tls {
        Some(config) => {
            let listener = TlsListener {
                tcp: pushes,
                acceptor: TlsAcceptor::from(config),
            };
            axum::serve(listener, app)
                .with_graceful_shutdown(signal)
                .await
        }
        None => {
            axum::serve(pushes, app)
                .with_graceful_shutdown(signal)
                .await
        }
    };
    heartbeat.abort();
    let _ = metrics_server.await;
    if let Some(pass) = backstop {
        let _ = pass.await;
    }
    ctx.out
        .status("stopped; every push answered was journaled first.");
    served.context("the push server failed")
}
