//! Host names resolved by a2a-recover's own resolver (the system's, on a blocking thread, as
//! the HTTP library's default does), so that a name that does not resolve is a typed error
//! ([`NoSuchHost`]) in a failed connection's chain: [`super::Unreached`] reads kinds, not text.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use hyper_util::client::legacy::connect::dns::Name;

/// A host name that did not resolve.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct NoSuchHost(#[source] pub(super) std::io::Error);

/// The resolver of both HTTP stacks (reqwest's, and the gRPC binding's hyper client).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Resolver;

type Addrs = std::vec::IntoIter<SocketAddr>;

async fn lookup(host: String) -> Result<Addrs, NoSuchHost> {
    tokio::net::lookup_host((host.as_str(), 0))
        .await
        .map(|addrs| addrs.collect::<Vec<_>>().into_iter())
        .map_err(NoSuchHost)
}

impl reqwest::dns::Resolve for Resolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs = lookup(host).await?;
            Ok(Box::new(addrs) as reqwest::dns::Addrs)
        })
    }
}

impl tonic::codegen::Service<Name> for Resolver {
    type Response = Addrs;
    type Error = NoSuchHost;
    type Future = Pin<Box<dyn Future<Output = Result<Addrs, NoSuchHost>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), NoSuchHost>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        Box::pin(lookup(name.as_str().to_owned()))
    }
}
