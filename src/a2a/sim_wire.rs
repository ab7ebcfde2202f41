//! The wire's seam for the deterministic simulator (`--features sim` only): every HTTP exchange
//! of this thread goes to an installed function instead of the network. Everything above the
//! exchange (bindings, encoding, decoding, limits, timeouts) stays the real code.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// What answers a request instead of the network: a future of the response; one that never
/// completes is a request lost, and the transport's own timeout ends it.
pub type Exchange = Arc<
    dyn Fn(reqwest::Request) -> Pin<Box<dyn Future<Output = reqwest::Response> + Send>>
        + Send
        + Sync,
>;

thread_local! {
    static EXCHANGE: RefCell<Option<Exchange>> = const { RefCell::new(None) };
}

/// Installs (or, with `None`, removes) this thread's exchange.
pub fn install(exchange: Option<Exchange>) {
    EXCHANGE.with(|e| *e.borrow_mut() = exchange);
}

/// Returns this thread's exchange, if one is installed.
pub(super) fn exchange() -> Option<Exchange> {
    EXCHANGE.with(|e| e.borrow().clone())
}
