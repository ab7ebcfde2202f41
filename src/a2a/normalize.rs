//! The JSON normalizer in front of the `a2a-lf` types.
//!
//! Real servers leave out proto3 default values and echo enum values the types do not know,
//! and `a2a-lf` then rejects a whole response. This pass runs over a `serde_json::Value`
//! before `serde_json::from_value`, and only along the typed paths: it never enters `data`,
//! `metadata` or extension `params`, which are the sender's own JSON. The raw JSON is kept
//! separately by the caller (the journal stores what was received, not this).
//!
//! Rules, each with a fixture in `tests/fixtures/wire/`:
//! - `role` and `status.state`: unknown, missing or null → `ROLE_UNSPECIFIED` /
//!   `TASK_STATE_UNSPECIFIED` (the original is logged at debug); a known proto enum *number*
//!   (`"state": 3`) becomes its name, as every ProtoJSON parser reads it —
//!   otherwise an agent that sends numbers would look unfinished forever;
//! - missing `parts` → `[]`; missing `messageId` / `artifactId` → `""`;
//! - Task `contextId` → `""`, `status` → `{}`;
//! - ListTasks `tasks` → `[]`, `nextPageToken` → `""`, `pageSize` / `totalSize` → `0`;
//! - card `capabilities` → `{}`, `supportedInterfaces` → `[]`, interface `protocolVersion` /
//!   `protocolBinding` → `""`, skill `tags` → `[]`, `description` → `""`;
//! - `Part.raw` in URL-safe or unpadded base64 → standard padded;
//! - a part with no content field → `"text": ""`.
//!
//! Two additions, found by reading `a2a-lf`: the stream events `statusUpdate` /
//! `artifactUpdate` get the same `contextId` and `status` defaults as a Task (the types require
//! them and proto3 omits empty strings), and a card `securitySchemes` entry without any v1.0
//! scheme wrapper (a v0.3 OpenAPI-style entry merged into the card) is dropped from the typed
//! value instead of failing the whole card; the raw card keeps it.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::sanitize::inert;

const ROLES: &[&str] = &["ROLE_USER", "ROLE_AGENT", "ROLE_UNSPECIFIED"];
/// Role names indexed by their proto enum number.
const ROLES_BY_NUMBER: &[&str] = &["ROLE_UNSPECIFIED", "ROLE_USER", "ROLE_AGENT"];
const STATES: &[&str] = &[
    "TASK_STATE_UNSPECIFIED",
    "TASK_STATE_SUBMITTED",
    "TASK_STATE_WORKING",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_REJECTED",
    "TASK_STATE_AUTH_REQUIRED",
];
const SCHEME_WRAPPERS: &[&str] = &[
    "apiKeySecurityScheme",
    "httpAuthSecurityScheme",
    "oauth2SecurityScheme",
    "openIdConnectSecurityScheme",
    "mtlsSecurityScheme",
];

/// Normalizes a `SendMessage` result (`{"task":…}` or `{"message":…}`).
pub(crate) fn send_message_response(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    if let Some(t) = obj.get_mut("task") {
        task(t);
    }
    if let Some(m) = obj.get_mut("message") {
        message(m);
    }
}

/// Normalizes one `StreamResponse` (`task`, `message`, `statusUpdate` or `artifactUpdate`).
pub(crate) fn stream_response(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    if let Some(t) = obj.get_mut("task") {
        task(t);
    }
    if let Some(m) = obj.get_mut("message") {
        message(m);
    }
    if let Some(Value::Object(u)) = obj.get_mut("statusUpdate") {
        default_to(u, "contextId", || Value::from(""));
        status(u.entry("status").or_insert(Value::Null));
    }
    if let Some(Value::Object(u)) = obj.get_mut("artifactUpdate") {
        default_to(u, "contextId", || Value::from(""));
        if let Some(a) = u.get_mut("artifact") {
            artifact(a);
        }
    }
}

/// Normalizes the top level of a `ListTasks` result; each task goes through [`task`] on its
/// own, so that one bad task costs one entry.
pub(crate) fn list_tasks_response(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    default_to(obj, "tasks", || Value::Array(Vec::new()));
    default_to(obj, "nextPageToken", || Value::from(""));
    default_to(obj, "pageSize", || Value::from(0));
    default_to(obj, "totalSize", || Value::from(0));
}

/// Normalizes a Task.
pub(crate) fn task(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    default_to(obj, "contextId", || Value::from(""));
    status(obj.entry("status").or_insert(Value::Null));
    for_each(obj, "history", message);
    for_each(obj, "artifacts", artifact);
}

/// Normalizes a TaskStatus (a missing or null one becomes `{}` first).
fn status(v: &mut Value) {
    if v.is_null() {
        *v = Value::Object(Map::new());
    }
    let Some(obj) = v.as_object_mut() else { return };
    enum_field(obj, "state", STATES, STATES, "TASK_STATE_UNSPECIFIED");
    if let Some(Value::String(ts)) = obj.get_mut("timestamp")
        && let Some(utc) = crate::model::naive_as_utc(ts)
    {
        *ts = utc;
        NAIVE_SEEN.set(true);
    }
    if let Some(m) = obj.get_mut("message") {
        message(m);
    }
}

thread_local! {
    /// Set when the pass read an offset-less timestamp as UTC; [`take_naive_seen`] reads and
    /// clears it right after the pass (same thread, no await in between).
    static NAIVE_SEEN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Returns whether the last normalization read an offset-less timestamp as UTC, and clears it.
pub(crate) fn take_naive_seen() -> bool {
    NAIVE_SEEN.replace(false)
}

/// Agents whose offset-less timestamps were already noted (one warning per agent and process).
static NAIVE_NOTED: crate::sim_seam::OncePerProcess = crate::sim_seam::OncePerProcess::new();

/// Warns, once per agent and process, that its offset-less timestamps are read as UTC.
pub(crate) fn note_naive_timestamps(url: &str) {
    if !NAIVE_NOTED.first(url) {
        return;
    }
    tracing::warn!(
        "the agent at `{url}` sends status timestamps without a UTC offset; \
         a2a-recover reads them as UTC"
    );
}

/// Types a normalized value; a failure names the field and what is wrong with it in our own
/// words (never the parser's: "premature end of input" says nothing to an operator).
pub(crate) fn typed_value<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, String> {
    if let Ok(typed) = T::deserialize(value) {
        return Ok(typed);
    }
    // Only a value that fails is read again, tracking the path to name the field that failed.
    serde_path_to_error::deserialize(value).map_err(|e| {
        if e.path().iter().next().is_none()
            && let Some(found) = probe_member(value)
        {
            return found;
        }
        describe(value, e.path(), &e.inner().to_string())
    })
}

/// Types the one member of a wrapper (`{"task":…}`, `{"statusUpdate":…}`, …) on its own: the
/// wrappers are read through a buffer that loses the path to the field that failed.
fn probe_member(v: &Value) -> Option<String> {
    use crate::a2a::types;
    fn probe<T: serde::de::DeserializeOwned>(key: &str, member: &Value) -> Option<String> {
        let e = serde_path_to_error::deserialize::<_, T>(member.clone()).err()?;
        let wrapped = serde_json::json!({ key: member });
        let mut path = vec![serde_path_to_error::Segment::Map {
            key: key.to_owned(),
        }];
        path.extend(e.path().iter().cloned());
        Some(describe_segments(&wrapped, &path, &e.inner().to_string()))
    }
    let obj = v.as_object()?;
    let (key, member) = obj.iter().next().filter(|_| obj.len() == 1)?;
    match key.as_str() {
        "task" => probe::<types::Task>(key, member),
        "message" => probe::<types::Message>(key, member),
        "statusUpdate" => probe::<types::TaskStatusUpdateEvent>(key, member),
        "artifactUpdate" => probe::<types::TaskArtifactUpdateEvent>(key, member),
        _ => None,
    }
}

/// Describes why the value at `path` (in `root`) did not type, from the parser's message.
fn describe(root: &Value, path: &serde_path_to_error::Path, parser: &str) -> String {
    let segments: Vec<_> = path.iter().cloned().collect();
    describe_segments(root, &segments, parser)
}

/// [`describe`] over a path given as its segments.
fn describe_segments(root: &Value, path: &[serde_path_to_error::Segment], parser: &str) -> String {
    use serde_path_to_error::Segment;
    let mut at = Some(root);
    let mut names: Vec<String> = Vec::new();
    for segment in path {
        match segment {
            Segment::Seq { index } => {
                at = at.and_then(|v| v.get(*index));
                match names.last_mut() {
                    Some(last) => {
                        let _ = write!(last, "[{index}]");
                    }
                    None => names.push(format!("[{index}]")),
                }
            }
            Segment::Map { key } => {
                at = at.and_then(|v| v.get(key));
                names.push(inert(key));
            }
            Segment::Enum { variant } => names.push(inert(variant)),
            Segment::Unknown => names.push("?".to_owned()),
        }
    }
    let field = |names: &[String]| names.join(".");
    if let Some(rest) = parser.strip_prefix("missing field `")
        && let Some(missing) = rest.split('`').next()
    {
        let mut names = names.clone();
        names.push(inert(missing));
        return format!("`{}` is missing", field(&names));
    }
    let shown = at.map(|v| {
        let text = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        super::error::truncate_chars(&inert(&text), 80)
    });
    let name = if names.is_empty() {
        "the answer".to_owned()
    } else {
        format!("`{}`", field(&names))
    };
    let last = names.last().map(String::as_str).unwrap_or_default();
    let what = if last.ends_with("imestamp") || last.ends_with("Time") {
        "is not a date-time"
    } else if parser.starts_with("unknown variant") {
        "has a value this version of A2A does not define"
    } else if let Some(rest) = parser.strip_prefix("invalid type: ") {
        let expected = rest.split(", expected ").nth(1).unwrap_or("another type");
        return match shown {
            Some(v) => format!("{name} is not {expected}: `{v}`"),
            None => format!("{name} is not {expected}"),
        };
    } else {
        "does not have the expected form"
    };
    match shown {
        Some(v) => format!("{name} {what}: `{v}`"),
        None => format!("{name} {what}"),
    }
}

/// Normalizes a Message.
pub(crate) fn message(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    default_to(obj, "messageId", || Value::from(""));
    enum_field(obj, "role", ROLES, ROLES_BY_NUMBER, "ROLE_UNSPECIFIED");
    default_to(obj, "parts", || Value::Array(Vec::new()));
    for_each(obj, "parts", part);
}

/// Normalizes an Artifact.
fn artifact(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    default_to(obj, "artifactId", || Value::from(""));
    default_to(obj, "parts", || Value::Array(Vec::new()));
    for_each(obj, "parts", part);
}

/// Normalizes a Part: no content → empty text; `raw` → standard padded base64.
fn part(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    let has_content = ["text", "raw", "url", "data"]
        .iter()
        .any(|k| obj.get(*k).is_some_and(|v| !v.is_null()));
    if !has_content {
        obj.insert("text".to_owned(), Value::from(""));
        return;
    }
    if let Some(Value::String(raw)) = obj.get_mut("raw")
        && (raw.contains(['-', '_']) || raw.len() % 4 != 0)
    {
        *raw = standard_base64(raw);
    }
}

/// Rewrites URL-safe and/or unpadded base64 as standard padded base64, without decoding.
///
/// The alphabets differ only in `-`/`_` versus `+`/`/`; `a2a-lf` validates the result.
fn standard_base64(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    match out.len() % 4 {
        2 => out.push_str("=="),
        3 => out.push('='),
        _ => {}
    }
    out
}

/// Normalizes an AgentCard.
pub(crate) fn agent_card(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    default_to(obj, "capabilities", || Value::Object(Map::new()));
    default_to(obj, "supportedInterfaces", || Value::Array(Vec::new()));
    for_each(obj, "supportedInterfaces", |i| {
        if let Some(i) = i.as_object_mut() {
            default_to(i, "protocolVersion", || Value::from(""));
            default_to(i, "protocolBinding", || Value::from(""));
        }
    });
    for_each(obj, "skills", |s| {
        if let Some(s) = s.as_object_mut() {
            default_to(s, "tags", || Value::Array(Vec::new()));
            default_to(s, "description", || Value::from(""));
        }
    });
    if let Some(Value::Object(schemes)) = obj.get_mut("securitySchemes") {
        schemes.retain(|name, scheme| {
            let keep = scheme
                .as_object()
                .is_some_and(|s| SCHEME_WRAPPERS.iter().any(|w| s.contains_key(*w)));
            if !keep {
                tracing::debug!(
                    scheme = %inert(name),
                    "ignoring a security scheme without a v1.0 wrapper"
                );
            }
            keep
        });
    }
}

/// Sets a missing or null member to a default.
fn default_to(obj: &mut Map<String, Value>, key: &str, default: impl FnOnce() -> Value) {
    match obj.get_mut(key) {
        Some(v) if !v.is_null() => {}
        Some(v) => *v = default(),
        None => {
            obj.insert(key.to_owned(), default());
        }
    }
}

/// Applies `f` to every element of an array member, if it is an array.
fn for_each(obj: &mut Map<String, Value>, key: &str, f: impl FnMut(&mut Value)) {
    if let Some(Value::Array(items)) = obj.get_mut(key) {
        items.iter_mut().for_each(f);
    }
}

/// Replaces an enum member that is not one of `known` with `unspecified`.
fn enum_field(
    obj: &mut Map<String, Value>,
    key: &str,
    known: &[&str],
    by_number: &[&str],
    unspecified: &str,
) {
    let original = obj.get(key);
    let ok = match original {
        Some(Value::String(s)) => s.is_empty() || known.contains(&s.as_str()),
        _ => false,
    };
    if ok {
        return;
    }
    let numbered = original
        .and_then(Value::as_u64)
        .and_then(|n| by_number.get(usize::try_from(n).ok()?));
    if let Some(name) = numbered {
        obj.insert(key.to_owned(), Value::from(*name));
        return;
    }
    if let Some(v) = original {
        tracing::debug!(
            field = key,
            original = %inert(&v.to_string()),
            "unknown enum value read as {unspecified}"
        );
    } else {
        tracing::debug!(field = key, "missing enum value read as {unspecified}");
    }
    obj.insert(key.to_owned(), Value::from(unspecified));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn data_and_metadata_are_never_touched() {
        let mut v = json!({
            "id": "t", "status": {"state": "TASK_STATE_WORKING"},
            "metadata": {"role": 3, "parts": null, "status": null},
            "history": [{"messageId": "m", "role": "ROLE_USER",
                "parts": [{"data": {"role": "x", "state": 1, "raw": "-_8"}}],
                "metadata": {"messageId": null}}]
        });
        let before = v.clone();
        task(&mut v);
        assert_eq!(v["metadata"], before["metadata"]);
        assert_eq!(v["history"][0]["parts"], before["history"][0]["parts"]);
        assert_eq!(
            v["history"][0]["metadata"],
            before["history"][0]["metadata"]
        );
        assert_eq!(v["contextId"], "");
    }

    #[test]
    fn known_and_empty_enum_names_are_kept() {
        let mut v = json!({"messageId": "m", "role": "ROLE_AGENT", "parts": []});
        message(&mut v);
        assert_eq!(v["role"], "ROLE_AGENT");
        let mut v = json!({"messageId": "m", "role": "", "parts": []});
        message(&mut v);
        assert_eq!(v["role"], "");
    }

    #[test]
    fn raw_that_is_already_standard_is_left_alone() {
        let mut v = json!({"raw": "iVBORw0KGgo="});
        part(&mut v);
        assert_eq!(v["raw"], "iVBORw0KGgo=");
    }

    #[test]
    fn url_safe_and_unpadded_base64_become_standard() {
        assert_eq!(standard_base64("-_8"), "+/8=");
        assert_eq!(standard_base64("iVBORw0KGgo"), "iVBORw0KGgo=");
        assert_eq!(standard_base64("AA"), "AA==");
        assert_eq!(standard_base64("AA=="), "AA==");
    }

    #[test]
    fn offset_less_timestamps_become_utc_and_others_are_left_alone() {
        assert_eq!(
            crate::model::naive_as_utc("2026-03-12T10:00:00.123456").as_deref(),
            Some("2026-03-12T10:00:00.123456Z")
        );
        assert_eq!(
            crate::model::naive_as_utc("2026-03-12 10:00:00").as_deref(),
            Some("2026-03-12T10:00:00Z")
        );
        assert_eq!(crate::model::naive_as_utc("2026-03-12T10:00:00Z"), None);
        assert_eq!(
            crate::model::naive_as_utc("2026-03-12T10:00:00+02:00"),
            None
        );
        assert_eq!(crate::model::naive_as_utc("yesterday"), None);
        let mut v = json!({"id": "t", "status": {"state": "TASK_STATE_WORKING",
            "timestamp": "2026-03-12T10:00:00.5"}});
        let _ = take_naive_seen();
        task(&mut v);
        assert_eq!(v["status"]["timestamp"], "2026-03-12T10:00:00.500Z");
        assert!(take_naive_seen());
        assert!(!take_naive_seen(), "cleared once read");
    }

    #[test]
    fn typing_errors_name_the_field_in_our_words() {
        let bad = |v: Value| typed_value::<crate::a2a::types::Task>(&v).unwrap_err();
        let e = bad(json!({"id": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_WORKING", "timestamp": "soon"}}));
        assert_eq!(e, "`status.timestamp` is not a date-time: `soon`");
        let e = bad(json!({"contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}));
        assert_eq!(e, "`id` is missing");
        let e = bad(json!({"id": 7, "contextId": "c", "status": {}}));
        assert!(e.starts_with("`id` is not a string"), "{e}");
        let e = typed_value::<crate::a2a::types::SendMessageResponse>(&json!({"task": {
            "id": "t", "contextId": "c", "status": {"timestamp": "x\u{1b}[31m"}}}))
        .unwrap_err();
        assert!(
            e.starts_with("`task.status.timestamp` is not a date-time"),
            "{e}"
        );
        assert!(!e.contains('\u{1b}'), "remote text is inert: {e}");
    }

    #[test]
    fn null_members_count_as_missing() {
        let mut v = json!({"id": "t", "contextId": null, "status": null});
        task(&mut v);
        assert_eq!(
            v,
            json!({"id": "t", "contextId": "", "status": {"state": "TASK_STATE_UNSPECIFIED"}})
        );
    }
}
