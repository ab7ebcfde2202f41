//! The remote side of a follow, abstracted so the loop runs without a network in tests: the
//! [`Remote`] trait and its adapter over the real wire.

use serde_json::Value;

use super::FollowTarget;
use crate::a2a::TaskView;
use crate::a2a::types;
use crate::a2a::{A2aClient, A2aError, Endpoint};
use crate::journal::{AttemptId, Journal, JournalError};
use crate::recovery::moved::{self, Rechosen};

/// One stream item: a `StreamResponse` member and its raw JSON.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Item {
    /// `task`: a snapshot.
    Task(Value),
    /// `statusUpdate`.
    Status(Value),
    /// `artifactUpdate`.
    Artifact(Value),
    /// `message` (not expected on a task stream; ignored).
    Message,
}

/// Where a follow reads a task.
pub(crate) trait Remote {
    /// The event stream of one subscription.
    type Stream: RemoteStream;
    /// Sends `SubscribeToTask`.
    async fn subscribe(&self, task_id: &str) -> Result<Self::Stream, A2aError>;
    /// Sends `GetTask` and returns the task's raw JSON.
    async fn get_task(&self, task_id: &str) -> Result<Value, A2aError>;
    /// After `e`, re-chooses the interface if it left the agent's card ([`moved::rechoose`]):
    /// later calls go to the one it returns.
    async fn rechoose(&self, e: &A2aError) -> Result<Rechosen, JournalError>;
}

/// The events of one subscription.
pub(crate) trait RemoteStream {
    /// Returns the next item; `None` is a clean end; the stream ends after its first error.
    async fn next(&mut self) -> Option<Result<Item, A2aError>>;
}

/// The wire: an [`A2aClient`] and the attempt's endpoint (re-chosen when it leaves the card).
pub(super) struct Wire<'a> {
    client: &'a A2aClient,
    journal: &'a Journal,
    attempt: AttemptId,
    endpoint: std::sync::Mutex<Endpoint>,
}

impl<'a> Wire<'a> {
    pub(super) fn new(client: &'a A2aClient, journal: &'a Journal, target: &FollowTarget) -> Self {
        Self {
            client,
            journal,
            attempt: target.attempt,
            endpoint: std::sync::Mutex::new(target.endpoint.clone()),
        }
    }

    fn endpoint(&self) -> Endpoint {
        self.endpoint
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl Remote for Wire<'_> {
    type Stream = crate::a2a::EventStream;

    async fn subscribe(&self, task_id: &str) -> Result<Self::Stream, A2aError> {
        self.client.subscribe(&self.endpoint(), task_id).await
    }

    async fn get_task(&self, task_id: &str) -> Result<Value, A2aError> {
        // No history: the status message (a question) is in `status`, and history can be long;
        // unless the agent keeps its answer or question only there.
        let endpoint = self.endpoint();
        let raw = self.client.get_task(&endpoint, task_id, Some(0)).await?.raw;
        if TaskView::from_value(&raw, String::new()).is_ok_and(|v| v.wants_history) {
            return self
                .client
                .get_task(&endpoint, task_id, None)
                .await
                .map(|t| t.raw);
        }
        Ok(raw)
    }

    async fn rechoose(&self, e: &A2aError) -> Result<Rechosen, JournalError> {
        let attempt = self.journal.attempt(self.attempt)?;
        let from = self.endpoint();
        let rechosen = moved::rechoose(self.client, self.journal, &attempt, &from, e).await?;
        if let Rechosen::Moved(to) = &rechosen {
            *self
                .endpoint
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = to.clone();
        }
        Ok(rechosen)
    }
}

impl RemoteStream for crate::a2a::EventStream {
    async fn next(&mut self) -> Option<Result<Item, A2aError>> {
        let event = match crate::a2a::EventStream::next(self).await? {
            Ok(event) => event,
            Err(e) => return Some(Err(e)),
        };
        let mut raw = event.raw;
        let mut take = |key: &str| raw.get_mut(key).map_or(Value::Null, Value::take);
        Some(Ok(match event.value {
            types::StreamResponse::Task(_) => Item::Task(take("task")),
            types::StreamResponse::StatusUpdate(_) => Item::Status(take("statusUpdate")),
            types::StreamResponse::ArtifactUpdate(_) => Item::Artifact(take("artifactUpdate")),
            types::StreamResponse::Message(_) => Item::Message,
        }))
    }
}
