//! A2A v0.3 payloads ⇄ the v1.0 model, whatever the binding that carries them.
//!
//! Pure `serde_json::Value` rewrites, used by the v0.3 JSON-RPC binding (`jsonrpc03.rs`), by a
//! v0.3 HTTP+JSON binding (same payloads, other envelope), and in reverse by the scripted agent
//! when it serves v0.3. What differs between the versions:
//!
//! | v0.3 | v1.0 |
//! | --- | --- |
//! | a `kind` on every object (`task`, `message`, `status-update`, `artifact-update`, part kinds) | no `kind`; a wrapper member (`task`, `message`, `statusUpdate`, `artifactUpdate`) |
//! | states `submitted`, `working`, `input-required`, `completed`, `canceled`, `failed`, `rejected`, `auth-required`, `unknown` | `TASK_STATE_SUBMITTED` … `TASK_STATE_AUTH_REQUIRED`, `TASK_STATE_UNSPECIFIED` |
//! | roles `user`, `agent` | `ROLE_USER`, `ROLE_AGENT` |
//! | parts `{kind:text,text}`, `{kind:file,file:{bytes\|uri,mimeType,name}}`, `{kind:data,data}` | `{text}`, `{raw}`, `{url}`, `{data}` with `mediaType`, `filename` |
//! | `configuration.blocking` | `configuration.returnImmediately` (its inverse; absent = blocking) |
//! | `pushNotificationConfig.authentication.schemes[]` | `taskPushNotificationConfig.authentication.scheme` |
//! | a status-update's `final: true` ends the stream | the stream's end ends it |
//! | error `data`: any JSON | error `data`: an array of `@type` objects |
//!
//! Reading (`*_to_v1`) keeps every field it does not rewrite, so nothing an agent sent is lost
//! from the raw JSON the journal keeps; `final` stays on a converted `statusUpdate` (the v1.0
//! types ignore it, the event stream ends on it). Unknown state or role spellings are left as
//! sent: the normalizer reads them as unspecified and logs them. Timestamps need no rewrite:
//! v0.3 servers send RFC 3339 with an offset (`+00:00`), which every reader here accepts.

use serde_json::{Map, Value};

/// The v0.3 JSON-RPC method names.
pub mod methods {
    /// `SendMessage`.
    pub const SEND: &str = "message/send";
    /// `SendStreamingMessage`.
    pub const STREAM: &str = "message/stream";
    /// `GetTask`.
    pub const GET: &str = "tasks/get";
    /// `CancelTask`.
    pub const CANCEL: &str = "tasks/cancel";
    /// `SubscribeToTask` (v0.3 calls it resubscribe).
    pub const RESUBSCRIBE: &str = "tasks/resubscribe";
    /// `DeleteTaskPushNotificationConfig`.
    pub const DELETE_PUSH_CONFIG: &str = "tasks/pushNotificationConfig/delete";
}

/// The `historyLength` a v0.3 `tasks/get` sends for a caller's `None` ("the whole history", as
/// an unset v1.0 `historyLength` means). v0.3 leaves an unset one to the server's default, and
/// @a2a-js/sdk 0.3.14 then answers an empty `history`; so "all" is asked for explicitly, as the
/// largest int32 (a server may still apply a lower limit).
pub const ALL_HISTORY: i32 = i32::MAX;

/// Returns the `historyLength` a v0.3 `tasks/get` sends: `n`, or [`ALL_HISTORY`].
pub fn history_length(n: Option<i32>) -> i32 {
    n.unwrap_or(ALL_HISTORY)
}

/// v0.3 task states and their v1.0 names.
const STATES: &[(&str, &str)] = &[
    ("submitted", "TASK_STATE_SUBMITTED"),
    ("working", "TASK_STATE_WORKING"),
    ("input-required", "TASK_STATE_INPUT_REQUIRED"),
    ("completed", "TASK_STATE_COMPLETED"),
    ("canceled", "TASK_STATE_CANCELED"),
    ("failed", "TASK_STATE_FAILED"),
    ("rejected", "TASK_STATE_REJECTED"),
    ("auth-required", "TASK_STATE_AUTH_REQUIRED"),
    ("unknown", "TASK_STATE_UNSPECIFIED"),
];

const ROLES: &[(&str, &str)] = &[("user", "ROLE_USER"), ("agent", "ROLE_AGENT")];

/// Returns the v1.0 name of a v0.3 state (case-insensitive, `_` read as `-`); `None` when the
/// spelling is unknown.
pub fn state_to_v1(state: &str) -> Option<&'static str> {
    let wanted = state.trim().to_ascii_lowercase().replace('_', "-");
    STATES.iter().find(|(v03, _)| *v03 == wanted).map(|s| s.1)
}

/// Returns the v0.3 spelling of a v1.0 state name; `None` when the name is unknown.
pub fn state_from_v1(state: &str) -> Option<&'static str> {
    STATES.iter().find(|(_, v1)| *v1 == state).map(|s| s.0)
}

/// Rewrites one string member through `map`, leaving an unknown spelling as it is.
fn rename_enum(
    obj: &mut Map<String, Value>,
    key: &str,
    map: impl Fn(&str) -> Option<&'static str>,
) {
    if let Some(Value::String(s)) = obj.get_mut(key)
        && let Some(to) = map(s)
    {
        *s = to.to_owned();
    }
}

/// Applies `f` to each element of an array member, if present.
fn each(obj: &mut Map<String, Value>, key: &str, f: fn(&mut Value)) {
    if let Some(Value::Array(items)) = obj.get_mut(key) {
        items.iter_mut().for_each(f);
    }
}

fn kind_of(v: &Value) -> Option<&str> {
    v.get("kind").and_then(Value::as_str)
}

// ---------------------------------------------------------------------------------------------
// v0.3 → v1.0 (what an agent sends us)
// ---------------------------------------------------------------------------------------------

/// Rewrites a v0.3 part as a v1.0 part.
pub fn part_to_v1(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    let kind = obj.remove("kind");
    if kind.as_ref().and_then(Value::as_str) != Some("file") {
        return;
    }
    let Some(Value::Object(mut file)) = obj.remove("file") else {
        return;
    };
    if let Some(bytes) = file.remove("bytes") {
        obj.insert("raw".to_owned(), bytes);
    }
    if let Some(uri) = file.remove("uri") {
        obj.insert("url".to_owned(), uri);
    }
    if let Some(mime) = file.remove("mimeType") {
        obj.insert("mediaType".to_owned(), mime);
    }
    if let Some(name) = file.remove("name") {
        obj.insert("filename".to_owned(), name);
    }
}

/// Rewrites a v0.3 message as a v1.0 message.
pub fn message_to_v1(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    obj.remove("kind");
    rename_enum(obj, "role", |r| {
        ROLES.iter().find(|(v03, _)| *v03 == r).map(|x| x.1)
    });
    each(obj, "parts", part_to_v1);
}

/// Rewrites a v0.3 artifact as a v1.0 artifact.
pub fn artifact_to_v1(v: &mut Value) {
    if let Some(obj) = v.as_object_mut() {
        each(obj, "parts", part_to_v1);
    }
}

/// Rewrites a v0.3 task status as a v1.0 one.
fn status_to_v1(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    rename_enum(obj, "state", state_to_v1);
    if let Some(m) = obj.get_mut("message") {
        message_to_v1(m);
    }
}

/// Rewrites a v0.3 task as a v1.0 task.
pub fn task_to_v1(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    obj.remove("kind");
    if let Some(s) = obj.get_mut("status") {
        status_to_v1(s);
    }
    each(obj, "history", message_to_v1);
    each(obj, "artifacts", artifact_to_v1);
}

/// Tells a bare v0.3 result apart: by its `kind`, else by its members (a server that leaves
/// `kind` out).
fn guess_kind(v: &Value) -> Option<&str> {
    if let Some(kind) = kind_of(v) {
        return Some(kind);
    }
    let has = |k: &str| v.get(k).is_some();
    if has("artifact") && has("taskId") {
        Some("artifact-update")
    } else if has("status") && has("taskId") && !has("id") {
        Some("status-update")
    } else if has("status") && has("id") {
        Some("task")
    } else if has("messageId") || has("role") {
        Some("message")
    } else {
        None
    }
}

/// Rewrites a v0.3 `message/send` result (a bare Task or Message) as a v1.0
/// `SendMessageResponse` (`{"task":…}` or `{"message":…}`); `Err` says what it was instead.
pub fn send_result_to_v1(mut v: Value) -> Result<Value, String> {
    if !v.is_object() {
        return Err("the result is not a JSON object".to_owned());
    }
    match guess_kind(&v) {
        Some("task") => {
            task_to_v1(&mut v);
            Ok(wrap("task", v))
        }
        Some("message") => {
            message_to_v1(&mut v);
            Ok(wrap("message", v))
        }
        Some(other) => Err(format!(
            "the result's `kind` is `{}`, neither `task` nor `message`",
            crate::sanitize::inert(&crate::a2a::error::truncate_chars(other, 40))
        )),
        None => Err("the result is neither a Task nor a Message (no `kind`)".to_owned()),
    }
}

/// Rewrites a v0.3 task result (`tasks/get`, `tasks/cancel`) as a v1.0 Task.
pub fn task_result_to_v1(mut v: Value) -> Result<Value, String> {
    if !v.is_object() {
        return Err("the result is not a JSON object".to_owned());
    }
    if let Some(kind) = kind_of(&v)
        && kind != "task"
    {
        return Err(format!(
            "the result's `kind` is `{}`, not `task`",
            crate::sanitize::inert(&crate::a2a::error::truncate_chars(kind, 40))
        ));
    }
    task_to_v1(&mut v);
    Ok(v)
}

/// Rewrites one v0.3 stream event's result (a bare Task, Message, status-update or
/// artifact-update) as a v1.0 `StreamResponse`. A status-update keeps its `final`.
pub fn stream_result_to_v1(mut v: Value) -> Result<Value, String> {
    if !v.is_object() {
        return Err("the event is not a JSON object".to_owned());
    }
    match guess_kind(&v).map(str::to_owned).as_deref() {
        Some("task") => {
            task_to_v1(&mut v);
            Ok(wrap("task", v))
        }
        Some("message") => {
            message_to_v1(&mut v);
            Ok(wrap("message", v))
        }
        Some("status-update") => {
            if let Some(obj) = v.as_object_mut() {
                obj.remove("kind");
                if let Some(s) = obj.get_mut("status") {
                    status_to_v1(s);
                }
            }
            Ok(wrap("statusUpdate", v))
        }
        Some("artifact-update") => {
            if let Some(obj) = v.as_object_mut() {
                obj.remove("kind");
                if let Some(a) = obj.get_mut("artifact") {
                    artifact_to_v1(a);
                }
            }
            Ok(wrap("artifactUpdate", v))
        }
        Some(other) => Err(format!(
            "the event's `kind` is `{}`, not one of task, message, status-update, \
             artifact-update",
            crate::sanitize::inert(&crate::a2a::error::truncate_chars(other, 40))
        )),
        None => Err("the event is not a Task, Message or update (no `kind`)".to_owned()),
    }
}

/// Returns whether a converted v1.0 stream item carries v0.3's `final: true` (the stream ends).
pub fn is_final(v1_item: &Value) -> bool {
    v1_item
        .get("statusUpdate")
        .and_then(|u| u.get("final"))
        .and_then(Value::as_bool)
        == Some(true)
}

fn wrap(key: &str, v: Value) -> Value {
    let mut m = Map::new();
    m.insert(key.to_owned(), v);
    Value::Object(m)
}

/// Rewrites v0.3 `message/send` params as a v1.0 `SendMessageRequest` (the scripted agent
/// serving v0.3 reads them this way): `blocking` becomes `returnImmediately`.
pub fn send_params_to_v1(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    if let Some(m) = obj.get_mut("message") {
        message_to_v1(m);
    }
    if let Some(Value::Object(cfg)) = obj.get_mut("configuration") {
        if let Some(blocking) = cfg.remove("blocking") {
            let blocking = blocking.as_bool().unwrap_or(true);
            cfg.insert("returnImmediately".to_owned(), Value::Bool(!blocking));
        }
        if let Some(mut push) = cfg.remove("pushNotificationConfig") {
            if let Some(Value::Object(auth)) = push.get_mut("authentication")
                && let Some(Value::Array(schemes)) = auth.remove("schemes")
                && let Some(first) = schemes.into_iter().next()
            {
                auth.insert("scheme".to_owned(), first);
            }
            cfg.insert("taskPushNotificationConfig".to_owned(), push);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// v1.0 → v0.3 (what we send a v0.3 agent; what the scripted agent answers in v0.3)
// ---------------------------------------------------------------------------------------------

/// Rewrites a v1.0 part as a v0.3 part (with its `kind`).
pub fn part_from_v1(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    if obj.contains_key("text") {
        obj.insert("kind".to_owned(), Value::from("text"));
        obj.remove("mediaType");
        obj.remove("filename");
        return;
    }
    if obj.contains_key("data") {
        obj.insert("kind".to_owned(), Value::from("data"));
        obj.remove("mediaType");
        obj.remove("filename");
        return;
    }
    let mut file = Map::new();
    if let Some(raw) = obj.remove("raw") {
        file.insert("bytes".to_owned(), raw);
    }
    if let Some(url) = obj.remove("url") {
        file.insert("uri".to_owned(), url);
    }
    if let Some(media) = obj.remove("mediaType") {
        file.insert("mimeType".to_owned(), media);
    }
    if let Some(name) = obj.remove("filename") {
        file.insert("name".to_owned(), name);
    }
    obj.insert("kind".to_owned(), Value::from("file"));
    obj.insert("file".to_owned(), Value::Object(file));
}

/// Rewrites a v1.0 message as a v0.3 message (with `kind: "message"`).
pub fn message_from_v1(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    obj.insert("kind".to_owned(), Value::from("message"));
    rename_enum(obj, "role", |r| {
        ROLES.iter().find(|(_, v1)| *v1 == r).map(|x| x.0)
    });
    each(obj, "parts", part_from_v1);
}

/// Rewrites a v1.0 artifact as a v0.3 artifact.
pub fn artifact_from_v1(v: &mut Value) {
    if let Some(obj) = v.as_object_mut() {
        each(obj, "parts", part_from_v1);
    }
}

fn status_from_v1(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    rename_enum(obj, "state", state_from_v1);
    if let Some(m) = obj.get_mut("message") {
        message_from_v1(m);
    }
}

/// Rewrites a v1.0 task as a v0.3 task (with `kind: "task"`).
pub fn task_from_v1(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    obj.insert("kind".to_owned(), Value::from("task"));
    if let Some(s) = obj.get_mut("status") {
        status_from_v1(s);
    }
    each(obj, "history", message_from_v1);
    each(obj, "artifacts", artifact_from_v1);
}

/// Rewrites a v1.0 `SendMessageRequest` as v0.3 `message/send` params: `returnImmediately`
/// becomes `blocking` (its inverse; v1.0's absent means blocking), `tenant` is dropped (v0.3
/// has none).
pub fn send_params_from_v1(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    obj.remove("tenant");
    if let Some(m) = obj.get_mut("message") {
        message_from_v1(m);
    }
    if let Some(Value::Object(cfg)) = obj.get_mut("configuration") {
        let immediately = cfg
            .remove("returnImmediately")
            .and_then(|b| b.as_bool())
            .unwrap_or(false);
        cfg.insert("blocking".to_owned(), Value::Bool(!immediately));
        if let Some(mut push) = cfg.remove("taskPushNotificationConfig") {
            if let Some(Value::Object(auth)) = push.get_mut("authentication")
                && let Some(scheme) = auth.remove("scheme")
            {
                auth.insert("schemes".to_owned(), Value::Array(vec![scheme]));
            }
            if let Some(p) = push.as_object_mut() {
                p.remove("taskId");
                p.remove("tenant");
            }
            cfg.insert("pushNotificationConfig".to_owned(), push);
        }
    }
}

/// Rewrites a v1.0 `SendMessageResponse` (`{"task"}` / `{"message"}`) as the bare v0.3 result.
pub fn send_result_from_v1(v: Value) -> Value {
    stream_result_from_v1(v, false)
}

/// Rewrites a v1.0 `StreamResponse` as the bare v0.3 event; a status-update gets `final`.
pub fn stream_result_from_v1(v: Value, last: bool) -> Value {
    let Value::Object(mut obj) = v else { return v };
    if let Some(mut t) = obj.remove("task") {
        task_from_v1(&mut t);
        return t;
    }
    if let Some(mut m) = obj.remove("message") {
        message_from_v1(&mut m);
        return m;
    }
    if let Some(mut u) = obj.remove("statusUpdate") {
        if let Some(o) = u.as_object_mut() {
            o.insert("kind".to_owned(), Value::from("status-update"));
            o.insert("final".to_owned(), Value::Bool(last));
            if let Some(s) = o.get_mut("status") {
                status_from_v1(s);
            }
        }
        return u;
    }
    if let Some(mut u) = obj.remove("artifactUpdate") {
        if let Some(o) = u.as_object_mut() {
            o.insert("kind".to_owned(), Value::from("artifact-update"));
            if let Some(a) = o.get_mut("artifact") {
                artifact_from_v1(a);
            }
        }
        return u;
    }
    Value::Object(obj)
}

/// Rewrites a v1.0 JSON-RPC error object for a v0.3 peer: the `data` array of `@type`
/// details becomes the first detail's `metadata` object (v0.3 `data` is free-form), or goes.
pub fn error_from_v1(error: &mut Value) {
    let Some(obj) = error.as_object_mut() else {
        return;
    };
    if let Some(Value::Array(details)) = obj.remove("data") {
        let meta = details
            .into_iter()
            .find_map(|d| d.get("metadata").filter(|m| m.is_object()).cloned());
        if let Some(meta) = meta.filter(|m| m.as_object().is_some_and(|o| !o.is_empty())) {
            obj.insert("data".to_owned(), meta);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_state_maps_both_ways() {
        for (v03, v1) in STATES {
            assert_eq!(state_to_v1(v03), Some(*v1));
            assert_eq!(state_from_v1(v1), Some(*v03));
        }
        assert_eq!(
            state_to_v1("INPUT_REQUIRED"),
            Some("TASK_STATE_INPUT_REQUIRED")
        );
        assert_eq!(state_to_v1("paused"), None);
        assert_eq!(state_from_v1("TASK_STATE_PAUSED"), None);
    }

    fn v03_task() -> Value {
        json!({"kind": "task", "id": "t-1", "contextId": "c-1",
          "status": {"state": "input-required", "timestamp": "2026-12-01T10:00:00.123456+00:00",
                     "message": {"kind": "message", "messageId": "m-2", "role": "agent",
                                 "parts": [{"kind": "text", "text": "two rooms or one?"}]}},
          "history": [{"kind": "message", "messageId": "m-1", "role": "user",
                       "parts": [{"kind": "text", "text": "book"}]}],
          "artifacts": [{"artifactId": "a-1", "name": "quote",
                         "parts": [{"kind": "data", "data": {"eur": 120}},
                                   {"kind": "file", "file": {"bytes": "aGk=", "mimeType": "text/plain", "name": "q.txt"}},
                                   {"kind": "file", "file": {"uri": "https://x.example/q.pdf"}}]}],
          "metadata": {"k": "v"}})
    }

    #[test]
    fn a_v03_task_becomes_v1() {
        let v = send_result_to_v1(v03_task()).unwrap();
        let t = &v["task"];
        assert!(t.get("kind").is_none());
        assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
        assert_eq!(t["status"]["message"]["role"], "ROLE_AGENT");
        assert_eq!(
            t["status"]["message"]["parts"][0],
            json!({"text": "two rooms or one?"})
        );
        assert_eq!(t["history"][0]["role"], "ROLE_USER");
        assert_eq!(t["artifacts"][0]["parts"][0], json!({"data": {"eur": 120}}));
        assert_eq!(
            t["artifacts"][0]["parts"][1],
            json!({"raw": "aGk=", "mediaType": "text/plain", "filename": "q.txt"})
        );
        assert_eq!(
            t["artifacts"][0]["parts"][2],
            json!({"url": "https://x.example/q.pdf"})
        );
        assert_eq!(t["metadata"], json!({"k": "v"}));
        // The v1.0 types and TaskView read it.
        let typed: crate::a2a::types::SendMessageResponse = {
            let mut n = v.clone();
            crate::a2a::normalize::send_message_response(&mut n);
            serde_json::from_value(n).unwrap()
        };
        assert!(matches!(
            typed,
            crate::a2a::types::SendMessageResponse::Task(_)
        ));
        let view = crate::a2a::TaskView::from_value(t, t.to_string()).unwrap();
        assert_eq!(view.state, crate::a2a::RemoteState::InputRequired);
        assert!(view.timestamp.is_some(), "an offset timestamp parses");
    }

    #[test]
    fn the_round_trip_is_lossless_for_what_we_use() {
        let mut back = send_result_to_v1(v03_task()).unwrap();
        back = send_result_from_v1(back);
        assert_eq!(back, v03_task());
    }

    #[test]
    fn a_message_result_and_a_kindless_one() {
        let m = json!({"kind": "message", "messageId": "m-9", "role": "agent",
                       "parts": [{"kind": "text", "text": "hi"}]});
        let v = send_result_to_v1(m).unwrap();
        assert_eq!(v["message"]["role"], "ROLE_AGENT");
        let kindless = json!({"id": "t-2", "status": {"state": "working"}});
        let v = send_result_to_v1(kindless).unwrap();
        assert_eq!(v["task"]["status"]["state"], "TASK_STATE_WORKING");
        assert!(send_result_to_v1(json!({"kind": "status-update"})).is_err());
        assert!(send_result_to_v1(json!({"x": 1})).is_err());
        assert!(send_result_to_v1(json!([1])).is_err());
    }

    #[test]
    fn stream_events_keep_final() {
        let status = json!({"kind": "status-update", "taskId": "t-1", "contextId": "c-1",
                            "status": {"state": "completed"}, "final": true});
        let v = stream_result_to_v1(status).unwrap();
        assert_eq!(v["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED");
        assert!(is_final(&v));
        let art = json!({"kind": "artifact-update", "taskId": "t-1", "contextId": "c-1",
                         "artifact": {"artifactId": "a", "parts": [{"kind": "text", "text": "x"}]},
                         "append": true, "lastChunk": false});
        let v = stream_result_to_v1(art).unwrap();
        assert_eq!(
            v["artifactUpdate"]["artifact"]["parts"][0],
            json!({"text": "x"})
        );
        assert_eq!(v["artifactUpdate"]["append"], true);
        assert!(!is_final(&v));
        let mut n = v.clone();
        crate::a2a::normalize::stream_response(&mut n);
        let _: crate::a2a::types::StreamResponse = serde_json::from_value(n).unwrap();
        assert!(stream_result_to_v1(json!({"kind": "bogus\u{1b}[31m"})).is_err());
    }

    #[test]
    fn v1_events_become_v03_with_final() {
        let v1 = json!({"statusUpdate": {"taskId": "t", "contextId": "c",
                        "status": {"state": "TASK_STATE_FAILED"}}});
        let v = stream_result_from_v1(v1, true);
        assert_eq!(
            v,
            json!({"kind": "status-update", "taskId": "t", "contextId": "c",
                   "status": {"state": "failed"}, "final": true})
        );
    }

    #[test]
    fn send_params_carry_blocking_as_the_inverse() {
        let mut v = json!({"tenant": "x",
            "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "go"}]},
            "configuration": {"returnImmediately": true,
                              "taskPushNotificationConfig": {"url": "https://h/", "taskId": "",
                                  "authentication": {"scheme": "Bearer"}}}});
        send_params_from_v1(&mut v);
        assert_eq!(
            v,
            json!({"message": {"kind": "message", "messageId": "m", "role": "user",
                               "parts": [{"kind": "text", "text": "go"}]},
                   "configuration": {"blocking": false,
                       "pushNotificationConfig": {"url": "https://h/",
                           "authentication": {"schemes": ["Bearer"]}}}})
        );
        let mut blocking = json!({"message": {}, "configuration": {}});
        send_params_from_v1(&mut blocking);
        assert_eq!(blocking["configuration"]["blocking"], true);
        // And back, as the scripted agent reads it.
        send_params_to_v1(&mut v);
        assert_eq!(v["configuration"]["returnImmediately"], true);
        assert_eq!(v["message"]["role"], "ROLE_USER");
        assert_eq!(v["message"]["parts"][0], json!({"text": "go"}));
        assert_eq!(
            v["configuration"]["taskPushNotificationConfig"]["authentication"]["scheme"],
            "Bearer"
        );
    }

    #[test]
    fn error_data_becomes_free_form() {
        let mut e = json!({"code": -32001, "message": "Task not found",
            "data": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND",
                      "metadata": {"taskId": "t-9"}}]});
        error_from_v1(&mut e);
        assert_eq!(
            e,
            json!({"code": -32001, "message": "Task not found", "data": {"taskId": "t-9"}})
        );
        let mut bare = json!({"code": -32601, "message": "Method not found"});
        error_from_v1(&mut bare);
        assert_eq!(bare, json!({"code": -32601, "message": "Method not found"}));
    }
}
