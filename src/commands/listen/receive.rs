//! One push, received: authenticated by a token we issued, bounded, read as A2A v1.0
//! `StreamResponse` or v0.3 `Task`, and journaled before it is answered 2xx.
//!
//! Every refusal (an unknown config id, a bad token, a task that is not the attempt's, a body
//! too large, too slow or unreadable) gets the same answer ([`refused`]) and journals nothing.
//! A push that would make a step terminal, record a question or append to an artifact is kept
//! as a hint and read back (GetTask over the attempt's binding) after the answer, unless its
//! agent is registered `--trust-push`; the reconcile pass reads it again when that read fails.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use serde_json::{Value, json};

use super::Listener;
use crate::a2a::Credential;
use crate::crash::{self, Point};
use crate::journal::{
    Attempt, AttemptId, AttemptState, PushConfig, PushRecord, Source, StreamObservation,
};
use crate::model::{ArtifactUpdate, TaskView};
use crate::recovery::push::{TOKEN_HEADER, token_matches};
use crate::recovery::send::{self, Outgoing};

/// The one answer to every refused push.
fn refused() -> Response {
    StatusCode::NOT_FOUND.into_response()
}

/// A push read and authenticated, before it is journaled.
enum Pushed {
    /// A task snapshot or a status update.
    Task(TaskView),
    /// An artifact update.
    Artifact(ArtifactUpdate),
    /// Something else (a message): nothing to journal.
    Other,
}

impl Pushed {
    fn task_id(&self) -> Option<&str> {
        match self {
            Self::Task(v) => Some(&v.task_id),
            Self::Artifact(a) => Some(&a.task_id),
            Self::Other => None,
        }
    }

    /// Whether it must be read back before it counts.
    fn needs_read_back(&self) -> bool {
        match self {
            Self::Task(v) => v.state.is_terminal() || v.state.is_interrupted(),
            Self::Artifact(a) => a.append,
            Self::Other => false,
        }
    }
}

/// Returns the tokens a push carries: `X-A2A-Notification-Token`, and `Authorization: Bearer`.
fn tokens(headers: &HeaderMap) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(t) = headers.get(TOKEN_HEADER).and_then(|v| v.to_str().ok()) {
        out.push(t.trim().to_owned());
    }
    if let Some(auth) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        && let Some((scheme, t)) = auth.trim().split_once(' ')
        && scheme.eq_ignore_ascii_case("bearer")
    {
        out.push(t.trim().to_owned());
    }
    out
}

/// Whether a config id can be one of ours (32 hex digits) before the journal is asked.
fn plausible_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Whether the body is JSON (`application/json` or `application/a2a+json`, any parameters).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .is_some_and(|m| m == "application/json" || m == "application/a2a+json")
}

/// Reads a push body as a v1.0 `StreamResponse` (a v0.3 body, a bare `Task`, is rewritten).
fn parse(body: &[u8]) -> Option<Pushed> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let wrapped = ["task", "statusUpdate", "artifactUpdate", "message"]
        .iter()
        .any(|k| value.get(k).is_some());
    let v1 = if wrapped {
        value
    } else {
        crate::a2a::v03::stream_result_to_v1(value).ok()?
    };
    if let Some(task) = v1.get("task") {
        return TaskView::from_value(task, task.to_string())
            .ok()
            .map(Pushed::Task);
    }
    if let Some(update) = v1.get("statusUpdate") {
        return TaskView::from_status_update(update).ok().map(Pushed::Task);
    }
    if let Some(update) = v1.get("artifactUpdate") {
        return ArtifactUpdate::from_value(update)
            .ok()
            .map(Pushed::Artifact);
    }
    Some(Pushed::Other)
}

/// The handler of `POST /push/{config_id}`.
pub(super) async fn receive(
    State(st): State<Arc<Listener>>,
    Path(config_id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let Ok(_in_flight) = st.in_flight.clone().try_acquire_owned() else {
        return StatusCode::TOO_MANY_REQUESTS.into_response();
    };
    let presented = tokens(&headers);
    let held = if plausible_id(&config_id) {
        st.journal.push_config_by_id(&config_id).ok().flatten()
    } else {
        None
    };
    // Every presented token is hashed and compared, whatever the config: an unknown config id
    // costs what a bad token costs.
    let hashes = held.as_ref().map(|(_, h)| h.as_slice()).unwrap_or_default();
    let mut ok = false;
    for t in &presented {
        ok |= token_matches(t, hashes);
    }
    let Some((config, _)) = held.filter(|_| ok) else {
        return refused();
    };
    let too_big = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .is_some_and(|n| n > st.max_body);
    if too_big || !is_json(&headers) {
        return refused();
    }
    let Ok(Ok(bytes)) =
        tokio::time::timeout(st.request_timeout, axum::body::to_bytes(body, st.max_body)).await
    else {
        return refused();
    };
    let Ok(attempt) = st.journal.attempt(config.attempt) else {
        return refused();
    };
    let agent = attempt.agent_url.clone().unwrap_or_default();
    if !st.admit(&agent) {
        return StatusCode::TOO_MANY_REQUESTS.into_response();
    }
    let Some(pushed) = parse(&bytes) else {
        return refused();
    };
    let pushed_state = match &pushed {
        Pushed::Task(v) => Some(v.remote_state.clone()),
        _ => None,
    };
    let task = pushed.task_id().map(str::to_owned);
    match record(&st, &config, &attempt, pushed, &bytes).await {
        Ok(Recorded::Refused) => refused(),
        Ok(Recorded::Done) => StatusCode::OK.into_response(),
        Ok(then @ (Recorded::ReadBack | Recorded::Unsent)) => {
            let st = Arc::clone(&st);
            let id = attempt.id;
            tokio::spawn(async move {
                if matches!(then, Recorded::Unsent) && !sent(&st, id, task.as_deref()).await {
                    return;
                }
                if let Err(e) = read_back(&st, id, pushed_state).await {
                    tracing::warn!("the read-back of a push for attempt {id} failed: {e:#}");
                }
            });
            StatusCode::ACCEPTED.into_response()
        }
        Err(e) => {
            tracing::warn!("a push for attempt {} was not journaled: {e:#}", attempt.id);
            StatusCode::SERVICE_UNAVAILABLE.into_response()
        }
    }
}

/// What journaling a push came to.
enum Recorded {
    /// Nothing journaled: a push for another task.
    Refused,
    /// Journaled (applied, or nothing to apply).
    Done,
    /// Kept as a hint; read the task back.
    ReadBack,
    /// Kept as a hint for an attempt not yet sent; read the task back once its send's answer
    /// names that task.
    Unsent,
}

/// How often the journal is asked whether an attempt's send was answered.
const SENT_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// Waits (at most twice the request timeout) until attempt `id` holds an answer to its send
/// naming `task`; false when it does not by then, or names another task (the pass's look
/// decides then).
async fn sent(st: &Listener, id: AttemptId, task: Option<&str>) -> bool {
    let until = tokio::time::Instant::now() + st.request_timeout * 2;
    while tokio::time::Instant::now() < until {
        match st.journal.attempt(id) {
            Ok(a) if a.state != AttemptState::Intent || a.task_id.is_some() => {
                return task.is_some() && a.current_task_id() == task;
            }
            Ok(_) => tokio::time::sleep(SENT_POLL).await,
            Err(_) => return false,
        }
    }
    false
}

/// Journals a push (before its 2xx, in the group commit of the pushes handled at once):
/// applied when it may be, else kept as a hint.
async fn record(
    st: &Listener,
    config: &PushConfig,
    attempt: &Attempt,
    pushed: Pushed,
    body: &[u8],
) -> anyhow::Result<Recorded> {
    let Some(task_id) = pushed.task_id() else {
        return Ok(Recorded::Done);
    };
    let ours = attempt.task_id.as_deref() == Some(task_id)
        || attempt.continuation_task_id.as_deref() == Some(task_id);
    let unsent = attempt.state == AttemptState::Intent && attempt.task_id.is_none();
    if !ours && !unsent {
        return Ok(Recorded::Refused);
    }
    crash::at(Point::AfterPushReceive, "");
    let hint = || PushRecord::Hint {
        attempt: attempt.id,
        config_id: config.config_id.clone(),
        hint: String::from_utf8_lossy(body).into_owned(),
    };
    let (record, then) = if unsent {
        // The agent pushed before our send's answer was journaled: a hint for the look,
        // never a task adopted here.
        let then = if pushed.needs_read_back() {
            Recorded::Unsent
        } else {
            Recorded::Done
        };
        (hint(), then)
    } else if pushed.needs_read_back() && !st.trusted(attempt)? {
        (hint(), Recorded::ReadBack)
    } else {
        let observed = match pushed {
            Pushed::Task(view) => StreamObservation::Task {
                attempt: attempt.id,
                view,
                source: Source::Push,
            },
            Pushed::Artifact(update) => StreamObservation::Artifact {
                attempt: attempt.id,
                update,
            },
            Pushed::Other => {
                st.pushed();
                return Ok(Recorded::Done);
            }
        };
        (PushRecord::Applied(observed), Recorded::Done)
    };
    st.journal_push(record).await?;
    st.pushed();
    Ok(then)
}

/// Reads the task of a push back over the attempt's binding and journals what it says; a
/// state other than the pushed one is journaled as `push-disagrees` (the read wins).
pub(super) async fn read_back(
    st: &Listener,
    id: AttemptId,
    pushed: Option<String>,
) -> anyhow::Result<()> {
    let attempt = st.journal.attempt(id)?;
    let Some(task_id) = attempt.current_task_id().map(str::to_owned) else {
        return Ok(());
    };
    let credential =
        Credential::resolve(attempt.token_env.as_deref(), attempt.token_cmd.as_deref()).await?;
    let out = Outgoing {
        text: String::new(),
        metadata: None,
        credential,
        allow_cross_origin: false,
        reference_task_ids: Vec::new(),
        interface: crate::a2a::InterfaceChoice::default(),
        push: None,
        data: None,
    };
    let wire = send::journaled_wire(&st.journal, &attempt)?;
    let endpoint = send::endpoint_of(&attempt, &out, wire)?;
    let read = tokio::time::timeout(
        st.request_timeout * 2,
        st.client.get_task(&endpoint, &task_id, None),
    )
    .await
    .map_err(|_| anyhow::anyhow!("the read timed out"))??;
    let view = TaskView::from_value(&read.raw, read.raw.to_string())?;
    let disagrees = pushed
        .filter(|pushed| *pushed != view.remote_state)
        .map(|pushed| json!({"taskId": task_id, "pushed": pushed, "read": view.remote_state}));
    st.journal_push(PushRecord::read_back(id, view, disagrees))
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_body_forms_are_read() {
        let v1 = br#"{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}"#;
        let Some(Pushed::Task(view)) = parse(v1) else {
            panic!("v1.0 status update")
        };
        assert_eq!(view.task_id, "t");
        assert!(view.state.is_terminal());
        let v03 = br#"{"kind":"task","id":"t","contextId":"c","status":{"state":"working"}}"#;
        let Some(Pushed::Task(view)) = parse(v03) else {
            panic!("v0.3 task")
        };
        assert_eq!(
            view.state,
            crate::model::RemoteState::from_wire("TASK_STATE_WORKING")
        );
        let append = br#"{"artifactUpdate":{"taskId":"t","artifact":{"artifactId":"a","parts":[{"text":"x"}]},"append":true}}"#;
        assert!(parse(append).is_some_and(|p| p.needs_read_back()));
        assert!(parse(b"not json").is_none());
    }

    #[test]
    fn either_header_carries_the_token() {
        let mut h = HeaderMap::new();
        h.insert(TOKEN_HEADER, "abc".parse().unwrap());
        assert_eq!(tokens(&h), vec!["abc"]);
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, "Bearer xyz".parse().unwrap());
        assert_eq!(tokens(&h), vec!["xyz"]);
        assert!(plausible_id("0123456789abcdef0123456789abcdef"));
        assert!(!plausible_id("../etc"));
    }
}
