//! A2A task parsing: the views an observation carries, read from the raw JSON an agent sent.
//!
//! [`TaskView`] and [`ArtifactUpdate`] keep what the journal records (the state as spelled, the
//! status timestamp at full precision, artifacts by id, the raw text); nothing here knows the
//! journal, which imports these types to apply them.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::parts::parts_say_something;

/// A state as a remote agent reports it (the `TaskState` of A2A, without the prefix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RemoteState {
    /// `TASK_STATE_SUBMITTED`.
    Submitted,
    /// `TASK_STATE_WORKING`.
    Working,
    /// `TASK_STATE_INPUT_REQUIRED`.
    InputRequired,
    /// `TASK_STATE_AUTH_REQUIRED`.
    AuthRequired,
    /// `TASK_STATE_COMPLETED`.
    Completed,
    /// `TASK_STATE_FAILED`.
    Failed,
    /// `TASK_STATE_CANCELED`.
    Canceled,
    /// `TASK_STATE_REJECTED`.
    Rejected,
    /// `TASK_STATE_UNSPECIFIED`, a missing state, or any spelling we do not know.
    Unknown,
}

impl RemoteState {
    /// Every remote state.
    pub const ALL: [Self; 9] = [
        Self::Submitted,
        Self::Working,
        Self::InputRequired,
        Self::AuthRequired,
        Self::Completed,
        Self::Failed,
        Self::Canceled,
        Self::Rejected,
        Self::Unknown,
    ];

    /// Reads a wire name (`TASK_STATE_WORKING`); anything else is [`RemoteState::Unknown`].
    pub fn from_wire(s: &str) -> Self {
        match s {
            "TASK_STATE_SUBMITTED" => Self::Submitted,
            "TASK_STATE_WORKING" => Self::Working,
            "TASK_STATE_INPUT_REQUIRED" => Self::InputRequired,
            "TASK_STATE_AUTH_REQUIRED" => Self::AuthRequired,
            "TASK_STATE_COMPLETED" => Self::Completed,
            "TASK_STATE_FAILED" => Self::Failed,
            "TASK_STATE_CANCELED" => Self::Canceled,
            "TASK_STATE_REJECTED" => Self::Rejected,
            _ => Self::Unknown,
        }
    }

    /// Returns whether the task can no longer change (COMPLETED, FAILED, CANCELED, REJECTED).
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Failed | Self::Canceled | Self::Rejected
        )
    }

    /// Returns whether the task waits for us (INPUT_REQUIRED, AUTH_REQUIRED).
    pub const fn is_interrupted(self) -> bool {
        matches!(self, Self::InputRequired | Self::AuthRequired)
    }
}

/// A remote status timestamp: the text as sent and its parsed value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusTimestamp {
    /// As the agent sent it (full precision).
    pub text: String,
    /// Parsed.
    pub at: DateTime<Utc>,
}

/// An artifact as seen in a task snapshot or an artifact update.
#[derive(Debug, Clone, PartialEq)]
pub struct ArtifactView {
    /// Its id (unique within the task).
    pub artifact_id: String,
    /// Its name.
    pub name: Option<String>,
    /// Its description.
    pub description: Option<String>,
    /// Its parts (JSON array, as received).
    pub parts: Value,
    /// Its metadata.
    pub metadata: Option<Value>,
}

/// A remote task's state at one moment, as an observation.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskView {
    /// The task id.
    pub task_id: String,
    /// The context id (`None` when absent or empty).
    pub context_id: Option<String>,
    /// The state.
    pub state: RemoteState,
    /// The state name as sent.
    pub remote_state: String,
    /// The status timestamp.
    pub timestamp: Option<StatusTimestamp>,
    /// The status message (JSON), e.g. the question of INPUT_REQUIRED.
    pub status_message: Option<Value>,
    /// The artifacts; `None` when the snapshot does not include them (ListTasks).
    pub artifacts: Option<Vec<ArtifactView>>,
    /// The raw JSON of the task (`None` for a stream status update).
    pub raw_json: Option<String>,
    /// What the agent left out that its history may hold: the task stops (COMPLETED without
    /// artifacts, or interrupted without a question) and the snapshot carries no history. A
    /// read without history asks again with it.
    pub wants_history: bool,
}

/// A remote value that is not a usable Task.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a task: {0}")]
pub struct ViewError(pub String);

/// Returns why a task id cannot be one URL path segment, if it cannot: empty, `.` or `..`
/// (URL libraries drop those segments, so `GET /tasks/..` reads the task collection), or
/// holding a tab or a line break (URLs drop those characters: `a\tb` would read task `ab`).
/// Such an id names no task a request could reach; every binding refuses it, so that the
/// journal never holds an id whose reads go somewhere else.
pub fn task_id_problem(id: &str) -> Option<&'static str> {
    match id {
        "" => Some("it is empty"),
        "." | ".." => Some("a URL drops a `.` or `..` path segment"),
        _ if id.contains(['\t', '\n', '\r']) => Some("a URL drops tabs and line breaks"),
        _ => None,
    }
}

/// Returns the task id of a task, a status update or an artifact update (`key`), when it is
/// one a request can name.
fn task_id_of(value: &Value, key: &str, what: &str) -> Result<String, ViewError> {
    let id = non_empty_str(value.get(key))
        .ok_or_else(|| ViewError(format!("the {what} has no `{key}`")))?;
    match task_id_problem(&id) {
        Some(why) => Err(ViewError(format!(
            "the {what}'s task id `{}` cannot name a task in a URL: {why}",
            truncate_chars(&crate::sanitize::inert(&id), 80)
        ))),
        None => Ok(id),
    }
}

/// Cuts a string to at most `max` characters, marking the cut with `…`.
fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

fn non_empty_str(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// Parses an RFC 3339 timestamp at any precision; an offset-less ISO 8601 date-time (some
/// agents send them) is read as UTC.
pub fn parse_timestamp(s: &str) -> Option<DateTime<Utc>> {
    match DateTime::parse_from_rfc3339(s) {
        Ok(t) => Some(t.with_timezone(&Utc)),
        Err(_) => naive_as_utc(s)
            .and_then(|utc| DateTime::parse_from_rfc3339(&utc).ok())
            .map(|t| t.with_timezone(&Utc)),
    }
}

/// Returns an offset-less ISO 8601 date-time (`2026-03-12T10:00:00.123456`, also with a space
/// for the `T`) as the same instant in UTC (`…Z`); `None` for anything else, an RFC 3339 time
/// included.
pub fn naive_as_utc(ts: &str) -> Option<String> {
    if chrono::DateTime::parse_from_rfc3339(ts).is_ok() {
        return None;
    }
    let naive = chrono::NaiveDateTime::parse_from_str(ts, "%Y-%m-%dT%H:%M:%S%.f")
        .or_else(|_| chrono::NaiveDateTime::parse_from_str(ts, "%Y-%m-%d %H:%M:%S%.f"))
        .ok()?;
    Some(format!("{}Z", naive.format("%Y-%m-%dT%H:%M:%S%.f")))
}

fn status_parts(
    status: Option<&Value>,
) -> (RemoteState, String, Option<StatusTimestamp>, Option<Value>) {
    let remote_state = status
        .and_then(|s| s.get("state"))
        .map(|s| match s {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default();
    let timestamp = status
        .and_then(|s| s.get("timestamp"))
        .and_then(Value::as_str)
        .and_then(|text| {
            parse_timestamp(text).map(|at| StatusTimestamp {
                text: text.to_owned(),
                at,
            })
        });
    let message = status
        .and_then(|s| s.get("message"))
        .filter(|m| m.is_object())
        .cloned();
    (
        RemoteState::from_wire(&remote_state),
        remote_state,
        timestamp,
        message,
    )
}

/// Reads one artifact object.
pub fn artifact_view(v: &Value) -> Option<ArtifactView> {
    let artifact_id = v.get("artifactId")?.as_str()?.to_owned();
    Some(ArtifactView {
        artifact_id,
        name: non_empty_str(v.get("name")),
        description: non_empty_str(v.get("description")),
        parts: v
            .get("parts")
            .filter(|p| p.is_array())
            .cloned()
            .unwrap_or_else(|| Value::Array(Vec::new())),
        metadata: v.get("metadata").filter(|m| m.is_object()).cloned(),
    })
}

impl TaskView {
    /// Builds a view from a Task's raw JSON (the bytes the agent sent for that task).
    ///
    /// Works from the raw JSON rather than the typed value so that unknown state spellings
    /// and unknown fields survive into the journal.
    pub fn from_raw(raw: &str) -> Result<Self, ViewError> {
        let value: Value = serde_json::from_str(raw).map_err(|e| ViewError(e.to_string()))?;
        Self::from_value(&value, raw.to_owned())
    }

    /// Builds a view from a Task's JSON value and its raw text.
    pub fn from_value(value: &Value, raw: String) -> Result<Self, ViewError> {
        let task_id = task_id_of(value, "id", "task")?;
        let (state, remote_state, timestamp, status_message) = status_parts(value.get("status"));
        let mut artifacts: Option<Vec<ArtifactView>> = value
            .get("artifacts")
            .and_then(Value::as_array)
            .map(|list| list.iter().filter_map(artifact_view).collect());
        let history = value.get("history").and_then(Value::as_array);
        // A status message with no parts at all asks nothing (an empty `{}` some servers send).
        let mut status_message = status_message.filter(|m| {
            m.get("parts")
                .and_then(Value::as_array)
                .is_some_and(|p| !p.is_empty())
        });
        let mut wants_history = false;
        if state.is_interrupted() && status_message.is_none() {
            status_message = artifacts
                .as_deref()
                .and_then(question_artifact)
                .or_else(|| history.and_then(|h| last_agent_message(h)).cloned());
            wants_history = status_message.is_none() && history.is_none();
        }
        if state == RemoteState::Completed && artifacts.as_ref().is_none_or(Vec::is_empty) {
            match history.map(|h| results_in_history(h)) {
                Some(found) if !found.is_empty() => artifacts = Some(found),
                Some(_) => {}
                None => wants_history = true,
            }
        }
        Ok(Self {
            task_id,
            context_id: non_empty_str(value.get("contextId")),
            state,
            remote_state,
            timestamp,
            status_message,
            artifacts,
            raw_json: Some(raw),
            wants_history,
        })
    }

    /// Builds a view from a stream `statusUpdate` object (`taskId`, `contextId`, `status`).
    pub fn from_status_update(value: &Value) -> Result<Self, ViewError> {
        let task_id = task_id_of(value, "taskId", "status update")?;
        let (state, remote_state, timestamp, status_message) = status_parts(value.get("status"));
        Ok(Self {
            task_id,
            context_id: non_empty_str(value.get("contextId")),
            state,
            remote_state,
            timestamp,
            status_message,
            artifacts: None,
            raw_json: None,
            wants_history: false,
        })
    }

    /// Returns whether `message_id` appears in the task's `history` (raw JSON).
    pub fn history_holds(&self, message_id: &str) -> bool {
        self.raw_json
            .as_deref()
            .and_then(|raw| serde_json::from_str::<Value>(raw).ok())
            .is_some_and(|v| history_holds(&v, message_id))
    }
}

/// Returns whether a message is the agent's (`ROLE_AGENT`, or v0.3's `agent`).
fn is_agent(m: &Value) -> bool {
    matches!(
        m.get("role").and_then(Value::as_str),
        Some("ROLE_AGENT" | "agent")
    )
}

/// Returns the last agent message of a history that says something (text or data).
fn last_agent_message(history: &[Value]) -> Option<&Value> {
    history
        .iter()
        .rev()
        .take_while(|m| {
            !matches!(
                m.get("role").and_then(Value::as_str),
                Some("ROLE_USER" | "user")
            )
        })
        .find(|m| is_agent(m) && says_something(m))
}

/// Returns whether a message has a text part with more than blanks, or a data part.
fn says_something(m: &Value) -> bool {
    m.get("parts").is_some_and(parts_say_something)
}

/// Returns an artifact that carries the question of an interrupted task, as a message: one
/// named (or with an id) like a question (LangGraph's `Interrupt`), else the only artifact that
/// says something (text or data).
fn question_artifact(artifacts: &[ArtifactView]) -> Option<Value> {
    let question_like = |a: &&ArtifactView| {
        let named = |s: &str| {
            let s = s.to_ascii_lowercase();
            ["question", "input", "prompt", "clarif", "interrupt"]
                .iter()
                .any(|w| s.contains(w))
        };
        named(&a.artifact_id) || a.name.as_deref().is_some_and(named)
    };
    let with_text: Vec<&ArtifactView> = artifacts
        .iter()
        .filter(|a| parts_say_something(&a.parts))
        .collect();
    let chosen = with_text
        .iter()
        .rev()
        .find(|a| question_like(a))
        .or_else(|| (with_text.len() == 1).then(|| &with_text[0]))?;
    Some(serde_json::json!({
        "messageId": format!("artifact:{}", chosen.artifact_id),
        "role": "ROLE_AGENT",
        "parts": chosen.parts,
    }))
}

/// Returns the results of a COMPLETED task that carries no artifacts: each agent message of
/// its history after the last user message, as an artifact `history:<messageId>` named
/// `answer`.
fn results_in_history(history: &[Value]) -> Vec<ArtifactView> {
    let start = history
        .iter()
        .rposition(|m| !is_agent(m))
        .map_or(0, |i| i + 1);
    history[start..]
        .iter()
        .filter(|m| is_agent(m) && says_something(m))
        .enumerate()
        .map(|(i, m)| {
            let id = m
                .get("messageId")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map_or_else(|| format!("history:{i}"), |id| format!("history:{id}"));
            ArtifactView {
                artifact_id: id,
                name: Some("answer".to_owned()),
                description: Some(
                    "taken from the task's history: it carried no artifact".to_owned(),
                ),
                parts: m
                    .get("parts")
                    .cloned()
                    .unwrap_or_else(|| Value::Array(Vec::new())),
                metadata: None,
            }
        })
        .collect()
}

/// Returns whether a Task JSON value's `history` holds a message with `message_id`.
pub fn history_holds(task: &Value, message_id: &str) -> bool {
    task.get("history")
        .and_then(Value::as_array)
        .is_some_and(|h| {
            h.iter()
                .any(|m| m.get("messageId").and_then(Value::as_str) == Some(message_id))
        })
}

/// An artifact update from a stream (`artifactUpdate`).
#[derive(Debug, Clone, PartialEq)]
pub struct ArtifactUpdate {
    /// The task it belongs to.
    pub task_id: String,
    /// The artifact (for an append, the parts to add).
    pub artifact: ArtifactView,
    /// Add these parts to the artifact held, instead of replacing it.
    pub append: bool,
    /// The final chunk of this artifact.
    pub last_chunk: bool,
}

impl ArtifactUpdate {
    /// Reads a stream `artifactUpdate` object.
    pub fn from_value(value: &Value) -> Result<Self, ViewError> {
        let task_id = task_id_of(value, "taskId", "artifact update")?;
        let artifact = value
            .get("artifact")
            .and_then(artifact_view)
            .ok_or_else(|| ViewError("the artifact update has no artifact".to_owned()))?;
        Ok(Self {
            task_id,
            artifact,
            append: value.get("append").and_then(Value::as_bool) == Some(true),
            last_chunk: value.get("lastChunk").and_then(Value::as_bool) == Some(true),
        })
    }
}

/// Joins the text parts of a JSON array of parts.
pub fn parts_text(parts: &Value) -> String {
    parts
        .as_array()
        .map(|ps| {
            ps.iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("")
        })
        .unwrap_or_default()
}

/// Returns a Message JSON value's text parts joined.
pub fn message_text(message: &Value) -> String {
    message.get("parts").map(parts_text).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_id_no_url_can_hold_is_no_task() {
        for id in ["", ".", "..", "a\tb", "x\n", "\r.."] {
            assert!(task_id_problem(id).is_some(), "{id:?}");
        }
        for id in ["t-1", "...", "%2e%2e", "a/b", " ", "..x"] {
            assert_eq!(task_id_problem(id), None, "{id:?}");
        }
        let status = serde_json::json!({"state": "TASK_STATE_WORKING"});
        for id in [".", ".."] {
            let task = serde_json::json!({"id": id, "contextId": "c", "status": status});
            let e = TaskView::from_value(&task, task.to_string()).unwrap_err();
            assert!(e.0.contains("cannot name a task in a URL"), "{e}");
            let update = serde_json::json!({"taskId": id, "contextId": "c", "status": status});
            assert!(TaskView::from_status_update(&update).is_err());
            let update = serde_json::json!({"taskId": id,
                "artifact": {"artifactId": "a", "parts": []}});
            assert!(ArtifactUpdate::from_value(&update).is_err());
        }
    }

    #[test]
    fn task_view_reads_raw_json_at_full_precision() {
        let raw = r#"{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_INPUT_REQUIRED",
            "message":{"messageId":"m-2","role":"ROLE_AGENT","parts":[{"text":"two rooms "},{"text":"or one?"}]},
            "timestamp":"2026-03-12T10:00:00.123456789Z"},
            "artifacts":[{"artifactId":"a-1","name":"report","parts":[{"text":"x"}]}],
            "history":[{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}]}"#;
        let v = TaskView::from_raw(raw).unwrap();
        assert_eq!(v.task_id, "t-1");
        assert_eq!(v.context_id.as_deref(), Some("c-1"));
        assert_eq!(v.state, RemoteState::InputRequired);
        assert_eq!(
            v.timestamp.as_ref().unwrap().text,
            "2026-03-12T10:00:00.123456789Z"
        );
        assert_eq!(
            v.timestamp.as_ref().unwrap().at.timestamp_subsec_nanos(),
            123_456_789
        );
        assert_eq!(
            message_text(v.status_message.as_ref().unwrap()),
            "two rooms or one?"
        );
        assert_eq!(v.artifacts.as_ref().unwrap().len(), 1);
        assert!(v.history_holds("m-1"));
        assert!(!v.history_holds("m-2"));

        let odd =
            TaskView::from_raw(r#"{"id":"t","contextId":"","status":{"state":"UNRECOGNIZED"}}"#)
                .unwrap();
        assert_eq!(odd.state, RemoteState::Unknown);
        assert_eq!(odd.remote_state, "UNRECOGNIZED");
        assert_eq!(odd.context_id, None);
        assert_eq!(odd.artifacts, None);
        assert!(TaskView::from_raw(r#"{"status":{}}"#).is_err());
    }

    #[test]
    fn a_question_and_results_are_found_outside_their_usual_place() {
        let asked = |extra: &str| {
            TaskView::from_raw(&format!(
                r#"{{"id":"t","status":{{"state":"TASK_STATE_INPUT_REQUIRED"}}{extra}}}"#
            ))
            .unwrap()
        };
        let q = |v: &TaskView| v.status_message.as_ref().map(message_text);
        let v = asked(
            r#","artifacts":[{"artifactId":"a","name":"draft","parts":[{"text":"x"}]},{"artifactId":"q","name":"Question","parts":[{"text":"which day?"}]}]"#,
        );
        assert_eq!(q(&v).as_deref(), Some("which day?"));
        let v = asked(
            r#","history":[{"messageId":"u","role":"ROLE_USER","parts":[{"text":"hi"}]},{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"which day?"}]}]"#,
        );
        assert_eq!(q(&v).as_deref(), Some("which day?"));
        assert!(!v.wants_history);
        // LangGraph's interrupt: an artifact named `Interrupt` whose one part is a data part.
        let v = asked(
            r#","artifacts":[{"artifactId":"x","name":"Interrupt","parts":[{"kind":"data","data":{"id":"i-1","value":"two rooms or one?"}}]}]"#,
        );
        let m = v.status_message.as_ref().unwrap();
        assert_eq!(super::super::message_said(m), "two rooms or one?");
        let v = asked(
            r#","history":[{"messageId":"m","role":"agent","parts":[{"kind":"data","data":{"rooms":"?"}}]}]"#,
        );
        assert!(v.status_message.is_some(), "a data part in history asks");
        let v = asked("");
        assert_eq!(q(&v), None);
        assert!(v.wants_history, "no history was sent: read it with history");

        let done = TaskView::from_raw(
            r#"{"id":"t","status":{"state":"TASK_STATE_COMPLETED"},"history":[
            {"messageId":"a0","role":"ROLE_AGENT","parts":[{"text":"earlier"}]},
            {"messageId":"u","role":"ROLE_USER","parts":[{"text":"go"}]},
            {"messageId":"a1","role":"ROLE_AGENT","parts":[{"text":"done: 42"}]}]}"#,
        )
        .unwrap();
        let artifacts = done.artifacts.unwrap();
        assert_eq!(artifacts.len(), 1);
        assert_eq!(artifacts[0].artifact_id, "history:a1");
        assert_eq!(parts_text(&artifacts[0].parts), "done: 42");
        let bare =
            TaskView::from_raw(r#"{"id":"t","status":{"state":"TASK_STATE_COMPLETED"}}"#).unwrap();
        assert!(bare.wants_history);
        assert_eq!(
            parse_timestamp("2026-03-12T10:00:00.25"),
            parse_timestamp("2026-03-12T10:00:00.25Z")
        );
    }
}
