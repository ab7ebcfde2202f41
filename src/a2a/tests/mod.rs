//! Tests of the wire: fixtures of real server output (this file) and a real local HTTP server
//! (`server.rs`).
//!
//! Each fixture in `tests/fixtures/wire/` is one quirk the official SDK servers show on the wire, or one normalizer rule
//! of §9; unary fixtures are whole JSON-RPC answers with the id `REQ-ID`.

mod server;

use chrono::{TimeZone as _, Utc};
use serde_json::Value;

use super::error::{A2aError, ErrorClass};
use super::jsonrpc::test_support::{
    decode_answer, decode_list_page, decode_transcript, retry_after,
};
use super::normalize;
use super::types::{PartContent, Role, SendMessageResponse, StreamResponse, Task, TaskState};

const ID: &str = "REQ-ID";

/// Returns the bytes of a fixture file.
pub(super) fn fixture_bytes(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/wire/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

fn task(name: &str) -> Task {
    decode_answer::<Task>(&fixture_bytes(name), ID, normalize::task)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .value
}

fn send_response(name: &str) -> SendMessageResponse {
    decode_answer::<SendMessageResponse>(&fixture_bytes(name), ID, normalize::send_message_response)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .value
}

fn reply_message(name: &str) -> super::types::Message {
    match send_response(name) {
        SendMessageResponse::Message(m) => m,
        SendMessageResponse::Task(t) => panic!("{name}: expected a message, got task {}", t.id),
    }
}

fn card(name: &str) -> Result<super::AgentCardInfo, A2aError> {
    let raw: Value = serde_json::from_slice(&fixture_bytes(name)).expect("fixture is JSON");
    super::card::parse_card("http://127.0.0.1:8001/.well-known/agent-card.json", raw)
}

fn list_page(name: &str) -> super::ListTasksPage {
    decode_list_page(&fixture_bytes(name), ID).unwrap_or_else(|e| panic!("{name}: {e}"))
}

// ---- What the SDK servers really send ---------------------------------------------------

#[test]
fn unrecognized_role_is_unspecified() {
    let t = task("role-unrecognized.json");
    let history = t.history.expect("history");
    assert_eq!(history[0].role, Role::Unspecified);
    assert_eq!(history[1].role, Role::Agent);
    assert_eq!(t.status.state, TaskState::Completed);
}

#[test]
fn unrecognized_state_is_unspecified() {
    assert_eq!(
        task("state-unrecognized.json").status.state,
        TaskState::Unspecified
    );
}

#[test]
fn python_card_skill_without_tags_parses() {
    let info = card("card-python-skill-without-tags.json").unwrap();
    assert_eq!(info.card.skills[0].id, "hotel");
    assert!(info.card.skills[0].tags.is_empty());
    assert_eq!(info.interface_url, "http://127.0.0.1:8001/");
    assert_eq!(info.card.capabilities.streaming, Some(true));
    assert!(
        info.raw["skills"][0].get("tags").is_none(),
        "raw keeps what was received"
    );
}

#[test]
fn message_without_role_in_python_member_order() {
    let m = reply_message("message-without-role.json");
    assert_eq!(m.role, Role::Unspecified);
    assert_eq!(m.text(), Some("direct answer"));
}

#[test]
fn python_microsecond_timestamps_keep_full_precision() {
    let t = task("timestamps-python-microseconds.json");
    let want = Utc.with_ymd_and_hms(2026, 11, 30, 1, 8, 43).unwrap()
        + chrono::Duration::microseconds(415_935);
    assert_eq!(t.status.timestamp, Some(want));
}

#[test]
fn js_millisecond_timestamps_parse() {
    let t = task("timestamps-js-milliseconds.json");
    let want =
        Utc.with_ymd_and_hms(2026, 11, 30, 1, 9, 10).unwrap() + chrono::Duration::milliseconds(20);
    assert_eq!(t.status.timestamp, Some(want));
}

#[test]
fn python_list_tasks_with_printed_defaults() {
    let page = list_page("list-tasks-python-defaults.json");
    assert_eq!(page.tasks.len(), 2);
    assert_eq!(page.next_page_token, "");
    assert_eq!((page.page_size, page.total_size), (50, 2));
    let first = page.tasks[0].as_ref().unwrap();
    assert_eq!(first.value.status.state, TaskState::InputRequired);
    let question = first.value.status.message.as_ref().unwrap();
    assert_eq!(question.text(), Some("two rooms or one?"));
    assert_eq!(question.parts[0].filename.as_deref(), Some(""));
    assert_eq!(first.value.history.as_ref().unwrap()[0].role, Role::User);
    assert_eq!(first.raw["history"][0]["messageId"], "m-1");
    let second = page.tasks[1].as_ref().unwrap();
    assert_eq!(second.value.context_id, "");
    assert_eq!(second.value.history.as_deref().map(<[_]>::len), Some(0));
}

#[test]
fn js_card_verbatim_with_empty_fields() {
    let info = card("card-js-verbatim.json").unwrap();
    assert_eq!(info.interface_url, "http://127.0.0.1:8003/a2a/jsonrpc");
    assert_eq!(info.tenant, None, "an empty tenant is no tenant");
    assert_eq!(info.card.description, "");
    assert_eq!(info.card.skills[0].name, "Car rental");
    assert_eq!(info.card.capabilities.push_notifications, Some(false));
}

#[test]
fn integer_state_is_read_by_its_proto_number() {
    // ProtoJSON parsers accept an enum's number: 3 is COMPLETED. Reading it
    // as UNSPECIFIED (the §9 measurement's choice) would keep such an agent "unfinished" forever.
    assert_eq!(
        task("state-integer.json").status.state,
        TaskState::Completed
    );
}

#[test]
fn unknown_integer_state_is_unspecified() {
    assert_eq!(
        task("state-integer-unknown.json").status.state,
        TaskState::Unspecified
    );
}

fn first_artifact_part(t: &Task) -> &super::types::Part {
    &t.artifacts.as_ref().expect("artifacts")[0].parts[0]
}

#[test]
fn url_safe_base64_raw_part_decodes() {
    let t = task("part-raw-urlsafe.json");
    let part = first_artifact_part(&t);
    assert_eq!(part.content, PartContent::Raw(vec![0xfb, 0xff]));
    assert_eq!(part.filename.as_deref(), Some("b.bin"));
}

#[test]
fn unpadded_base64_raw_part_decodes() {
    let t = task("part-raw-unpadded.json");
    assert_eq!(
        first_artifact_part(&t).content,
        PartContent::Raw(b"hi".to_vec())
    );
}

#[test]
fn part_without_content_is_empty_text() {
    let t = task("part-no-content.json");
    let part = first_artifact_part(&t);
    assert_eq!(part.content, PartContent::Text(String::new()));
    assert_eq!(part.media_type.as_deref(), Some("text/plain"));
}

#[test]
fn python_sse_with_crlf_pings_and_spaced_separators() {
    let items = decode_transcript(&fixture_bytes("sse-python-crlf-pings.txt"), ID);
    let items: Vec<_> = items.into_iter().map(|i| i.unwrap()).collect();
    assert_eq!(items.len(), 4);
    let StreamResponse::Task(t) = &items[0].value else {
        panic!("{:?}", items[0])
    };
    assert_eq!(t.status.state, TaskState::Submitted);
    assert_eq!(items[0].raw["task"]["id"], "t-1");
    let StreamResponse::ArtifactUpdate(a) = &items[2].value else {
        panic!("{:?}", items[2])
    };
    assert_eq!(a.artifact.parts[0].as_text(), Some("room 12"));
    assert_eq!(a.last_chunk, Some(true));
    let StreamResponse::StatusUpdate(s) = &items[3].value else {
        panic!("{:?}", items[3])
    };
    assert_eq!(s.status.state, TaskState::Completed);
}

#[test]
fn js_sse_with_lf() {
    let items = decode_transcript(&fixture_bytes("sse-js-lf.txt"), ID);
    let states: Vec<_> = items
        .into_iter()
        .map(|i| match i.unwrap().value {
            StreamResponse::Task(t) => t.status.state,
            StreamResponse::StatusUpdate(s) => s.status.state,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        states,
        [
            TaskState::Submitted,
            TaskState::Working,
            TaskState::Completed
        ]
    );
}

#[test]
fn error_as_event_error_ends_the_items() {
    let items = decode_transcript(&fixture_bytes("sse-error-event.txt"), ID);
    assert_eq!(items.len(), 2, "the stream stops at the error");
    assert!(items[0].is_ok());
    let err = items[1].as_ref().unwrap_err();
    assert_eq!(err.rpc_code(), Some(-32603));
    assert_eq!(err.class(), ErrorClass::Ambiguous);
    let data = &err.rpc_error().unwrap().data;
    assert_eq!(data.as_ref().unwrap()[0]["reason"], "INTERNAL_ERROR");
}

#[test]
fn error_in_a_plain_data_event() {
    let items = decode_transcript(&fixture_bytes("sse-error-plain-data.txt"), ID);
    assert_eq!(items.len(), 2);
    let err = items[1].as_ref().unwrap_err();
    assert_eq!(err.rpc_code(), Some(-32001));
    assert_eq!(err.class(), ErrorClass::Remote);
}

#[test]
fn stream_events_with_omitted_defaults() {
    let items = decode_transcript(&fixture_bytes("sse-omitted-defaults.txt"), ID);
    let items: Vec<_> = items.into_iter().map(|i| i.unwrap().value).collect();
    let StreamResponse::StatusUpdate(s) = &items[0] else {
        panic!("{:?}", items[0])
    };
    assert_eq!(s.context_id, "");
    assert_eq!(s.status.state, TaskState::Unspecified);
    assert_eq!(s.status.message.as_ref().unwrap().role, Role::Unspecified);
    let StreamResponse::ArtifactUpdate(a) = &items[1] else {
        panic!("{:?}", items[1])
    };
    assert_eq!(a.artifact.artifact_id, "");
    assert_eq!(
        a.artifact.parts[0].content,
        PartContent::Raw(vec![0xfb, 0xff])
    );
}

// ---- The normalizer rules one by one ------------------------------------------------------

#[test]
fn integer_role_is_read_by_its_proto_number() {
    assert_eq!(reply_message("role-integer.json").role, Role::Agent);
}

#[test]
fn missing_state_is_unspecified() {
    let t = task("state-missing.json");
    assert_eq!(t.status.state, TaskState::Unspecified);
    assert!(t.status.timestamp.is_some());
}

#[test]
fn missing_parts_are_empty() {
    assert!(reply_message("message-without-parts.json").parts.is_empty());
}

#[test]
fn missing_message_id_is_empty() {
    assert_eq!(
        reply_message("message-without-message-id.json").message_id,
        ""
    );
}

#[test]
fn missing_artifact_id_is_empty() {
    let t = task("artifact-without-artifact-id.json");
    let artifact = &t.artifacts.unwrap()[0];
    assert_eq!(artifact.artifact_id, "");
    assert_eq!(artifact.name.as_deref(), Some("report"));
}

#[test]
fn missing_task_context_id_is_empty() {
    let SendMessageResponse::Task(t) = send_response("task-without-context-id.json") else {
        panic!("expected a task")
    };
    assert_eq!(t.context_id, "");
    assert_eq!(t.status.state, TaskState::Submitted);
}

#[test]
fn missing_task_status_is_unspecified() {
    let t = task("task-without-status.json");
    assert_eq!(t.status.state, TaskState::Unspecified);
    assert_eq!(t.status.timestamp, None);
}

#[test]
fn missing_list_tasks_members_default() {
    let page = list_page("list-tasks-without-tasks.json");
    assert!(page.tasks.is_empty());
    assert_eq!(page.page_size, 50);
    let page = list_page("list-tasks-without-next-page-token.json");
    assert_eq!(page.next_page_token, "");
    assert_eq!(page.tasks.len(), 1);
    let page = list_page("list-tasks-without-sizes.json");
    assert_eq!((page.page_size, page.total_size), (0, 0));
}

#[test]
fn missing_card_capabilities_are_empty() {
    let info = card("card-without-capabilities.json").unwrap();
    assert_eq!(
        info.card.capabilities,
        super::types::AgentCapabilities::default()
    );
}

#[test]
fn missing_supported_interfaces_parse_then_fail_the_interface_choice() {
    let err = card("card-without-supported-interfaces.json").unwrap_err();
    assert!(
        matches!(err, A2aError::NoJsonRpcInterface { legacy: false, .. }),
        "{err}"
    );
}

#[test]
fn interface_without_binding_and_version_is_skipped() {
    let info = card("card-interface-without-binding-and-version.json").unwrap();
    assert_eq!(info.card.supported_interfaces[0].protocol_binding, "");
    assert_eq!(info.card.supported_interfaces[0].protocol_version, "");
    assert_eq!(info.interface_url, "http://127.0.0.1:8001/");
}

#[test]
fn missing_skill_description_is_empty() {
    let info = card("card-skill-without-description.json").unwrap();
    assert_eq!(info.card.skills[0].description, "");
}

#[test]
fn v03_only_card_is_read_as_v03_jsonrpc() {
    let info = card("card-v03-only.json").unwrap();
    assert_eq!(info.binding, super::ProtocolBinding::JsonRpcV03);
    assert_eq!(info.interface_url, "http://127.0.0.1:8009/");
    assert!(!info.binding.can_list_tasks());
}

#[test]
fn v03_security_scheme_entries_do_not_break_the_card() {
    let info = card("card-security-scheme-v03.json").unwrap();
    let schemes = info.card.security_schemes.as_ref().unwrap();
    assert!(schemes.contains_key("bearer"));
    assert!(!schemes.contains_key("legacy"));
    assert!(info.raw["securitySchemes"].get("legacy").is_some());
}

#[test]
fn every_fixture_is_used() {
    let dir = format!("{}/tests/fixtures/wire", env!("CARGO_MANIFEST_DIR"));
    let this = include_str!("mod.rs");
    let sse = include_str!("../sse.rs");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.starts_with('.') {
            continue;
        }
        let quoted = format!("\"{name}\"");
        assert!(
            this.contains(&quoted) || sse.contains(&quoted),
            "fixture {name} has no test"
        );
    }
}

#[test]
fn raw_keeps_the_json_as_received() {
    let raw = decode_answer::<Task>(
        &fixture_bytes("state-unrecognized.json"),
        ID,
        normalize::task,
    )
    .unwrap()
    .raw;
    assert_eq!(raw["status"]["state"], "UNRECOGNIZED");
}

#[test]
fn genuinely_invalid_shapes_still_fail() {
    let body = br#"{"jsonrpc":"2.0","id":"REQ-ID","result":{"contextId":"c","status":{}}}"#;
    let err = decode_answer::<Task>(body, ID, normalize::task).unwrap_err();
    assert!(
        matches!(
            err,
            A2aError::Decode {
                kind: super::DecodeKind::WrongShape,
                ..
            }
        ),
        "{err}"
    );
    // A v0.3 `kind`-style result is not a v1.0 SendMessageResponse.
    let body = br#"{"jsonrpc":"2.0","id":"REQ-ID","result":{"kind":"task","id":"t","contextId":"c","status":{"state":"completed"}}}"#;
    let err = decode_answer::<SendMessageResponse>(body, ID, normalize::send_message_response)
        .unwrap_err();
    assert_eq!(err.class(), ErrorClass::Ambiguous);
}

#[test]
fn retry_after_accepts_seconds_and_http_dates() {
    assert_eq!(retry_after("2"), Some(std::time::Duration::from_secs(2)));
    assert_eq!(
        retry_after(" 120 "),
        Some(std::time::Duration::from_secs(120))
    );
    assert_eq!(
        retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
        Some(std::time::Duration::ZERO)
    );
    let future = crate::clock::system_now() + chrono::Duration::hours(1);
    let header = future.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    let wait = retry_after(&header).unwrap();
    assert!(
        wait > std::time::Duration::from_secs(3500) && wait <= std::time::Duration::from_secs(3600)
    );
    assert_eq!(retry_after("soon"), None);
}

#[test]
fn retry_after_of_years_never_panics_nor_overflows() {
    let max = std::time::Duration::from_secs(u64::MAX);
    assert_eq!(retry_after(&u64::MAX.to_string()), Some(max));
    assert_eq!(retry_after("99999999999999999999999999"), Some(max));
    assert_eq!(
        retry_after("315360000"),
        Some(std::time::Duration::from_secs(315_360_000))
    );
    let year_9999 = retry_after("Fri, 31 Dec 9999 23:59:59 GMT").unwrap();
    assert!(year_9999 > std::time::Duration::from_secs(7000 * 365 * 86_400));
    // However far ahead a date is, the wait until it is what it reads as.
    let far = retry_after("Fri, 31 Dec 99999 23:59:59 GMT").unwrap();
    assert!(far > year_9999);
    for odd in ["", "-1", "1.5", "+3", "9999-12-31T23:59:59Z"] {
        assert!(retry_after(odd).is_none(), "{odd}");
    }
}

fn rpc_error(code: i64, message: &str, data: Option<Value>) -> A2aError {
    A2aError::Rpc {
        url: "http://127.0.0.1/".to_owned(),
        method: "SendMessage",
        error: super::RpcError {
            code,
            message: message.to_owned(),
            data,
        },
    }
}

#[test]
fn context_id_refusals_are_recognized() {
    let by_violation = rpc_error(
        -32602,
        "Invalid parameters",
        Some(serde_json::json!([
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "INVALID_PARAMS"},
            {"@type": "type.googleapis.com/google.rpc.BadRequest",
             "fieldViolations": [{"field": "message.context_id", "description": "not accepted"}]}
        ])),
    );
    assert!(by_violation.is_context_id_refusal());
    assert!(rpc_error(-32602, "client contextId not accepted", None).is_context_id_refusal());
    assert!(!rpc_error(-32602, "message.parts must not be empty", None).is_context_id_refusal());
    assert!(!rpc_error(-32001, "contextId unknown", None).is_context_id_refusal());
    assert_eq!(by_violation.class(), ErrorClass::Refused);
    assert_eq!(by_violation.exit_code(), crate::exit::NEEDS_HUMAN);
}

/// A 401 or 403 is a refusal of the credentials whatever A2A error its body carries (alone,
/// -32603 leaves the outcome unknown and -32001 is the caller's to read); other 4xx statuses
/// let the body's error decide.
#[test]
fn http_401_and_403_are_refused_whatever_their_body_says() {
    let http = |status: u16, code: i64| A2aError::Http {
        url: "http://127.0.0.1/".to_owned(),
        method: "SendMessage",
        status,
        retry_after: None,
        snippet: String::new(),
        rpc: Some(Box::new(super::RpcError {
            code,
            message: "no".to_owned(),
            data: None,
        })),
        reason: None,
        unattributed: false,
    };
    for status in [401, 403] {
        for code in [-32603, -32001, -32600] {
            let e = http(status, code);
            assert_eq!(e.class(), ErrorClass::Refused, "{status} {code}");
            assert_eq!(e.exit_code(), crate::exit::NEEDS_HUMAN, "{status} {code}");
            assert_eq!(
                e.hint(),
                Some(crate::a2a::Hint::CredentialsRefused),
                "{status} {code}"
            );
        }
    }
    assert_eq!(http(400, -32603).class(), ErrorClass::Ambiguous);
    assert_eq!(http(409, -32001).class(), ErrorClass::Remote);
}

#[test]
fn summaries_are_one_inert_line() {
    let e = rpc_error(-32001, "Task not found:\n\u{1b}[31mt-9\u{1b}[0m", None);
    let s = e.summary();
    assert!(!s.contains('\n') && !s.contains('\u{1b}'), "{s}");
    assert!(s.contains("-32001") && s.contains("t-9"), "{s}");
}

/// The kind a failure is journaled with is the A2A error's reason, whichever binding carried
/// it; an answer naming no A2A error (a bare status, an unnamed code, no answer) has none.
#[test]
fn kind_names_are_the_reasons_of_named_errors_only() {
    let http = |status: u16, rpc: Option<(i64, &str)>| A2aError::Http {
        url: "http://127.0.0.1/".to_owned(),
        method: "SendMessage",
        status,
        retry_after: None,
        snippet: String::new(),
        rpc: rpc.map(|(code, _)| {
            Box::new(super::RpcError {
                code,
                message: "no".to_owned(),
                data: None,
            })
        }),
        reason: rpc.map(|(_, reason)| reason.to_owned()),
        unattributed: false,
    };
    assert_eq!(
        rpc_error(-32602, "bad", None).kind_name(),
        Some("INVALID_PARAMS")
    );
    assert_eq!(
        http(400, Some((-32602, "INVALID_PARAMS"))).kind_name(),
        Some("INVALID_PARAMS")
    );
    assert_eq!(
        rpc_error(-32001, "gone", None).kind_name(),
        Some("TASK_NOT_FOUND")
    );
    for kind in super::ErrorKind::ALL {
        assert_eq!(
            rpc_error(kind.code(), "x", None).kind_name(),
            Some(kind.reason())
        );
    }
    assert_eq!(http(400, None).kind_name(), None);
    assert_eq!(rpc_error(-32099, "odd", None).kind_name(), None);
    let timeout = A2aError::Timeout {
        url: "http://127.0.0.1/".to_owned(),
        method: "SendMessage",
        after: std::time::Duration::from_secs(1),
        tries: None,
    };
    assert_eq!(timeout.kind_name(), None);
}

/// A route that does not exist is a 501, or a 404 / 405 naming no A2A error; a 404 carrying
/// the agent's `TaskNotFound` is its word on a task, not on the route.
#[test]
fn an_unimplemented_route_is_told_by_its_status_and_a_missing_a2a_error() {
    let http = |status: u16, rpc: Option<i64>| A2aError::Http {
        url: "http://127.0.0.1/".to_owned(),
        method: "DeleteTaskPushNotificationConfig",
        status,
        retry_after: None,
        snippet: String::new(),
        rpc: rpc.map(|code| {
            Box::new(super::RpcError {
                code,
                message: "no".to_owned(),
                data: None,
            })
        }),
        reason: rpc.map(|_| "TASK_NOT_FOUND".to_owned()),
        unattributed: false,
    };
    for (status, rpc, unimplemented) in [
        (501, None, true),
        (501, Some(-32001), true),
        (404, None, true),
        (405, None, true),
        (404, Some(-32001), false),
        (400, None, false),
        (500, None, false),
    ] {
        assert_eq!(
            http(status, rpc).is_unimplemented_route(),
            unimplemented,
            "{status} {rpc:?}"
        );
    }
    assert!(!rpc_error(-32601, "no", None).is_unimplemented_route());
    let bad_url = A2aError::InvalidUrl {
        url: "x".to_owned(),
        reason: "no scheme".to_owned(),
    };
    assert!(bad_url.is_bad_setup());
    assert!(!rpc_error(-32602, "no", None).is_bad_setup());
}
