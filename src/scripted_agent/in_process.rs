//! The scripted agent without a socket, for the deterministic simulator (`--features sim`):
//! the same router and task logic, called as a tower service.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use tokio::sync::watch;

use super::{AgentConfig, Shared, Stats, router};

/// A scripted agent answering requests handed to it in-process.
pub struct InProcessAgent {
    shared: Arc<Shared>,
    router: Router,
    /// Held so the agent's work drivers keep running; dropping it stops them.
    _shutdown: watch::Sender<bool>,
}

impl std::fmt::Debug for InProcessAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcessAgent").finish_non_exhaustive()
    }
}

impl InProcessAgent {
    /// An agent whose card names `base_url` as its JSON-RPC endpoint.
    pub fn new(cfg: AgentConfig, base_url: &str) -> std::io::Result<Self> {
        let (shutdown, shutdown_rx) = watch::channel(false);
        let shared = Shared::new(cfg, base_url, None, shutdown_rx)?;
        Ok(Self {
            router: router(Arc::clone(&shared)),
            shared,
            _shutdown: shutdown,
        })
    }

    /// Handles one request as the server would.
    pub async fn handle(&self, req: http::Request<Body>) -> http::Response<Body> {
        use tower::ServiceExt as _;
        match self.router.clone().oneshot(req).await {
            Ok(resp) => resp,
            Err(never) => match never {},
        }
    }

    /// Whether it files new tasks under context ids of its own (`replace_context_id`).
    pub fn replaces_context_ids(&self) -> bool {
        self.shared.cfg.replace_context_id
    }

    /// Returns a snapshot of what the agent has seen.
    pub fn stats(&self) -> Stats {
        self.shared.stats()
    }

    /// Steps the agent's clock back by `by` (its later timestamps may be older than earlier ones).
    pub fn step_clock_back(&self, by: std::time::Duration) {
        self.shared.lock().step_clock_back(by);
    }

    /// Forgets a task now, as retention would; returns false if unknown.
    pub fn forget_task(&self, task_id: &str) -> bool {
        self.shared.lock().forget(task_id)
    }
}
