//! A tiny booking system on loopback: `GET /bookings/{id}` answers 200 or 404, `DELETE`
//! removes the booking (and logs the order). The independent read path the verify recipes of
//! `compensate` use.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::{OriginalUri, Path as UrlPath, State};
use axum::http::StatusCode;
use axum::routing::get;

use super::Background;

/// What the booking system holds and has seen.
#[derive(Debug, Default)]
pub struct Ledger {
    /// Live bookings.
    pub live: BTreeSet<String>,
    /// Deleted bookings, in the order they were deleted.
    pub deleted: Vec<String>,
    /// The raw paths of every GET, in order.
    pub reads: Vec<String>,
}

/// A running booking system.
pub struct Bookings {
    url: String,
    ledger: Arc<Mutex<Ledger>>,
}

type Shared = Arc<Mutex<Ledger>>;

fn lock(l: &Shared) -> std::sync::MutexGuard<'_, Ledger> {
    l.lock().unwrap_or_else(PoisonError::into_inner)
}

async fn read_booking(
    State(l): State<Shared>,
    UrlPath(id): UrlPath<String>,
    OriginalUri(uri): OriginalUri,
) -> StatusCode {
    let mut l = lock(&l);
    l.reads.push(uri.path().to_owned());
    if l.live.contains(&id) {
        StatusCode::OK
    } else {
        StatusCode::NOT_FOUND
    }
}

async fn delete_booking(State(l): State<Shared>, UrlPath(id): UrlPath<String>) -> StatusCode {
    let mut l = lock(&l);
    if l.live.remove(&id) {
        l.deleted.push(id);
        StatusCode::NO_CONTENT
    } else {
        StatusCode::NOT_FOUND
    }
}

/// Starts the booking system on `127.0.0.1:0` (bound before it serves).
pub fn bookings() -> Background<Bookings> {
    Background::start(|| async {
        let ledger: Shared = Arc::default();
        let app = axum::Router::new()
            .route("/bookings/{id}", get(read_booking).delete(delete_booking))
            .with_state(Arc::clone(&ledger));
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Bookings {
            url: format!("http://127.0.0.1:{port}"),
            ledger,
        }
    })
}

impl Background<Bookings> {
    /// The base URL, without a trailing slash.
    pub fn url(&self) -> String {
        self.get().url.clone()
    }

    /// Books `id` (what the agent's side effect looks like to the independent read).
    pub fn book(&self, id: &str) {
        lock(&self.get().ledger).live.insert(id.to_owned());
    }

    /// Removes `id` as if its owner had cancelled it.
    pub fn cancel(&self, id: &str) {
        lock(&self.get().ledger).live.remove(id);
    }

    pub fn is_booked(&self, id: &str) -> bool {
        lock(&self.get().ledger).live.contains(id)
    }

    pub fn deleted(&self) -> Vec<String> {
        lock(&self.get().ledger).deleted.clone()
    }

    pub fn reads(&self) -> Vec<String> {
        lock(&self.get().ledger).reads.clone()
    }

    /// The verify recipe of a booking keyed by the step's task id.
    pub fn verify_url(&self) -> String {
        format!("{}/bookings/{{task_id}}", self.url())
    }

    /// The compensation command that deletes the step's booking (values from the environment).
    pub fn delete_cmd(&self) -> String {
        format!(
            "curl -fsS -o /dev/null -X DELETE {}/bookings/\"$A2A_TASK_ID\"",
            self.url()
        )
    }
}
