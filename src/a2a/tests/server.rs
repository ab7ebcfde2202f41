//! The client against a real axum server on 127.0.0.1: headers, error mapping, size caps,
//! streams, cross-origin credentials.
//!
//! The server is bound to port 0 before it is spawned, so no test waits for readiness. The
//! path of each request picks the server's behaviour (see [`answer`]).

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::super::types::{self, StreamResponse, TaskState};
use super::super::{
    A2aClient, A2aError, ClientConfig, Credential, Endpoint, ErrorClass, Placement, ProtocolBinding,
};
use super::fixture_bytes;
use crate::exit;

const MIB: u64 = 1024 * 1024;

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    query: Option<String>,
    headers: HeaderMap,
    body: Value,
}

#[derive(Default)]
struct State {
    seen: Mutex<Vec<Seen>>,
    /// The JSON-RPC interface URL the served card names.
    interface_url: Mutex<String>,
}

struct Server {
    url: String,
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    async fn start() -> Self {
        let state = Arc::new(State::default());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let app = axum::Router::new().fallback({
            let state = state.clone();
            move |uri: Uri, headers: HeaderMap, body: Bytes| {
                let state = state.clone();
                async move { answer(&state, &uri, headers, &body).await }
            }
        });
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        *state.interface_url.lock().unwrap() = format!("{url}/task");
        Self { url, state, task }
    }

    fn seen(&self) -> Vec<Seen> {
        self.state.seen.lock().unwrap().clone()
    }

    fn endpoint(&self, path: &str) -> Endpoint {
        Endpoint {
            url: format!("{}{path}", self.url),
            tenant: None,
            binding: ProtocolBinding::default(),
            card_origin: self.url.clone(),
            credential: None,
            placement: crate::a2a::Placement::Bearer,
            allow_cross_origin: false,
        }
    }
}

fn rpc_json(id: &Value, member: &str, value: &Value) -> Response {
    json_response(
        StatusCode::OK,
        &json!({"jsonrpc": "2.0", "id": id, member: value}),
    )
}

fn json_response(status: StatusCode, value: &Value) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(serde_json::to_vec(value).unwrap()))
        .unwrap()
}

fn plain(status: StatusCode, content_type: &str, body: impl Into<Body>) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type)
        .body(body.into())
        .unwrap()
}

fn a_task(id: &str) -> Value {
    json!({"id": id, "contextId": "ctx-1",
           "status": {"state": "TASK_STATE_WORKING", "timestamp": "2026-11-30T01:08:43.415935Z"}})
}

static XS: [u8; 64 * 1024] = [b'x'; 64 * 1024];

/// A body of `chunks` × 64 KiB produced lazily (chunked, no `Content-Length`).
fn huge_body(prefix: &'static [u8], chunk: &'static [u8], chunks: usize) -> Body {
    let head = std::iter::once(Ok::<_, Infallible>(Bytes::from_static(prefix)));
    let tail = (0..chunks).map(move |_| Ok(Bytes::from_static(chunk)));
    Body::from_stream(futures_util::stream::iter(head.chain(tail)))
}

/// A body delivered in `size`-byte chunks.
fn chunked(bytes: &[u8], size: usize) -> Body {
    let chunks: Vec<Result<Bytes, Infallible>> = bytes
        .chunks(size)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    Body::from_stream(futures_util::stream::iter(chunks))
}

/// A body that sends `first`, then never ends.
fn then_hang(first: Vec<u8>) -> Body {
    let first = futures_util::stream::iter([Ok::<_, Infallible>(Bytes::from(first))]);
    let hang = futures_util::stream::pending::<Result<Bytes, Infallible>>();
    Body::from_stream(futures_util::StreamExt::chain(first, hang))
}

/// `first`, then `filler` every 100 ms, forever.
fn then_drip(first: Vec<u8>, filler: &'static [u8]) -> Body {
    let first = futures_util::stream::iter([Ok::<_, Infallible>(Bytes::from(first))]);
    let drip = futures_util::stream::unfold((), move |()| async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        Some((Ok::<_, Infallible>(Bytes::from_static(filler)), ()))
    });
    Body::from_stream(futures_util::StreamExt::chain(first, drip))
}

fn sse(body: Body) -> Response {
    plain(StatusCode::OK, "text/event-stream; charset=utf-8", body)
}

/// The server's behaviour, chosen by path.
#[expect(
    clippy::too_many_lines,
    reason = "a table: one arm per path the test server answers"
)]
async fn answer(state: &State, uri: &Uri, headers: HeaderMap, body: &[u8]) -> Response {
    let path = uri.path().to_owned();
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    // What an agent echoing its request back would show: the URL with its query, the headers.
    let echo = format!(
        "you sent {uri} with {}",
        headers
            .iter()
            .filter(|(name, _)| !matches!(name.as_str(), "host" | "accept" | "content-type"))
            .map(|(name, value)| format!("{name}: {}", String::from_utf8_lossy(value.as_bytes())))
            .collect::<Vec<_>>()
            .join(", ")
    );
    state.seen.lock().unwrap().push(Seen {
        path: path.clone(),
        query: uri.query().map(str::to_owned),
        headers,
        body: request.clone(),
    });
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match segments.as_slice() {
        [".well-known", "agent-card.json"] => json_response(
            StatusCode::OK,
            &json!({"name": "test", "description": "d", "version": "1", "capabilities": {},
                    "supportedInterfaces": [{"url": *state.interface_url.lock().unwrap(),
                        "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": "acme"}],
                    "skills": []}),
        ),
        ["task"] => {
            let task_id = request["params"]["id"]
                .as_str()
                .unwrap_or("t-new")
                .to_owned();
            match request["method"].as_str() {
                Some("SendMessage") => rpc_json(&id, "result", &json!({"task": a_task("t-new")})),
                _ => rpc_json(&id, "result", &a_task(&task_id)),
            }
        }
        ["code", code] => {
            let code: i64 = code.parse().unwrap();
            rpc_json(
                &id,
                "error",
                &json!({"code": code, "message": format!("error {code}"),
                       "data": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                 "reason": "TEST", "domain": "a2a-protocol.org"}]}),
            )
        }
        ["http", "503"] => Response::builder()
            .status(StatusCode::SERVICE_UNAVAILABLE)
            .header(header::RETRY_AFTER, "2")
            .body(Body::from("overloaded"))
            .unwrap(),
        ["http", "502"] => plain(
            StatusCode::BAD_GATEWAY,
            "text/html",
            "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n\
             <center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n\
             </body>\r\n</html>\r\n",
        ),
        ["http", "401"] => plain(StatusCode::UNAUTHORIZED, "text/plain", "no token"),
        ["echo"] => plain(StatusCode::BAD_REQUEST, "text/plain", echo),
        ["http", "500-rpc"] => json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32603, "message": "Internal error"}}),
        ),
        ["hang"] => std::future::pending().await,
        ["wrong-id"] => rpc_json(&json!("not-yours"), "result", &a_task("t-1")),
        ["numeric-id"] => rpc_json(&json!(1), "result", &a_task("t-1")),
        ["invalid-json"] => plain(
            StatusCode::OK,
            "application/json",
            "{\"jsonrpc\": \"2.0\", ",
        ),
        ["html-200"] => plain(
            StatusCode::OK,
            "text/html",
            "<html><body>login</body></html>",
        ),
        ["invalid-utf8"] => {
            let mut body =
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"id":"t-"#).into_bytes();
            body.extend_from_slice(b"\xff\xfe\"}}");
            plain(StatusCode::OK, "application/json", body)
        }
        ["no-result"] => json_response(StatusCode::OK, &json!({"jsonrpc": "2.0", "id": id})),
        ["big"] => plain(
            StatusCode::OK,
            "application/json",
            huge_body(b"{\"result\":\"", &XS, 1600),
        ),
        ["declared-big"] => plain(StatusCode::OK, "application/json", vec![b' '; 4096]),
        ["list", "mixed"] => rpc_json(
            &id,
            "result",
            &json!({"tasks": [a_task("t-1"), {"contextId": "no id"}, a_task("t-3")],
                   "nextPageToken": "p2", "pageSize": 3, "totalSize": 7}),
        ),
        ["sse", "fixture", name] => {
            let text = String::from_utf8(fixture_bytes(name)).unwrap();
            let text = text.replace("\"REQ-ID\"", &id.to_string());
            sse(chunked(text.as_bytes(), 7))
        }
        ["sse", "terminal"] => rpc_json(
            &id,
            "error",
            &json!({"code": -32004, "message": "Task t-1 is in terminal state: TASK_STATE_COMPLETED"}),
        ),
        ["sse", "json-result"] => rpc_json(&id, "result", &json!({"task": a_task("t-1")})),
        ["sse", "idle"] => {
            let event = format!(
                "data: {}\n\n",
                json!({"jsonrpc": "2.0", "id": id, "result": {"task": a_task("t-1")}})
            );
            sse(then_hang(event.into_bytes()))
        }
        ["sse", "empty-data"] => {
            let event = format!(
                "data: {}\n\n",
                json!({"jsonrpc": "2.0", "id": id, "result": {"task": a_task("t-1")}})
            );
            sse(then_drip(event.into_bytes(), b"data: \n\n"))
        }
        ["sse", "cut"] => {
            let event = json!({"jsonrpc": "2.0", "id": id, "result": {"task": a_task("t-1")}});
            let body =
                format!("data: {event}\n\ndata: {{\"jsonrpc\": \"2.0\", \"id\": {id}, \"res");
            sse(Body::from(body))
        }
        ["sse", "big"] => sse(huge_body(b": hello\n\ndata: ", &XS, 1600)),
        ["sse", "plain-text"] => plain(StatusCode::OK, "text/plain", "hello"),
        ["status", code] => plain(
            StatusCode::from_u16(code.parse().unwrap()).unwrap(),
            "text/plain",
            "x",
        ),
        ["slow-body"] => plain(StatusCode::OK, "text/plain", then_hang(b"partial".to_vec())),
        ["redirect", n] => {
            let n: u32 = n.parse().unwrap();
            if n == 0 {
                plain(StatusCode::OK, "text/plain", "arrived")
            } else {
                Response::builder()
                    .status(StatusCode::FOUND)
                    .header(header::LOCATION, format!("/redirect/{}", n - 1))
                    .body(Body::empty())
                    .unwrap()
            }
        }
        _ => plain(StatusCode::NOT_FOUND, "text/plain", "no such path"),
    }
}

fn client_with(timeout: Duration, max: u64, idle: Duration) -> A2aClient {
    A2aClient::new(ClientConfig {
        timeout,
        max_response_size: max,
        stream_idle_timeout: idle,
        max_look_size: 64 * 1024 * 1024,
        max_card_size: crate::a2a::DEFAULT_MAX_CARD_SIZE,
    })
    .unwrap()
}

/// A client with generous limits (hang guards only).
fn client() -> A2aClient {
    client_with(Duration::from_secs(20), 16 * MIB, Duration::from_secs(20))
}

async fn get_task_at(server: &Server, path: &str) -> Result<types::Task, A2aError> {
    client()
        .get_task(&server.endpoint(path), "t-1", None)
        .await
        .map(|r| r.value)
}

fn message_request(text: &str) -> types::SendMessageRequest {
    let mut message = types::Message::new(types::Role::User, vec![types::Part::text(text)]);
    message.message_id = "m-1".to_owned();
    message.context_id = Some("ctx-1".to_owned());
    types::SendMessageRequest {
        message,
        configuration: Some(types::SendMessageConfiguration {
            accepted_output_modes: None,
            task_push_notification_config: None,
            history_length: None,
            return_immediately: Some(true),
        }),
        metadata: None,
        tenant: None,
    }
}

/// Callers spawn these futures (`tokio::spawn` needs `Send`).
#[test]
fn client_futures_and_streams_are_send() {
    fn is_send<T: Send>(_: &T) {}
    let c = client();
    let ep = Endpoint {
        url: "http://127.0.0.1:1/".to_owned(),
        tenant: None,
        binding: ProtocolBinding::default(),
        card_origin: "http://127.0.0.1:1".to_owned(),
        credential: None,
        placement: crate::a2a::Placement::Bearer,
        allow_cross_origin: false,
    };
    let req = message_request("x");
    is_send(&c.fetch_card("http://127.0.0.1:1/", None));
    is_send(&c.send_message(&ep, &req));
    is_send(&c.get_task(&ep, "t", None));
    is_send(&c.cancel_task(&ep, "t"));
    is_send(&c.subscribe(&ep, "t"));
    is_send(&c.send_streaming_message(&ep, &req));
    is_send(&c.get_url_status("http://127.0.0.1:1/"));
    is_send(&super::super::retry_read(2, || c.get_task(&ep, "t", None)));
    fn stream_next_is_send(s: &mut super::super::EventStream) {
        is_send(&s.next());
    }
    let _ = stream_next_is_send;
}

// ---- requests ------------------------------------------------------------------------------

#[tokio::test]
async fn requests_carry_protocol_headers_tenant_and_a_fresh_string_id() {
    let server = Server::start().await;
    let c = client();
    let info = c.fetch_card(&server.url, None).await.unwrap();
    assert_eq!(info.tenant.as_deref(), Some("acme"));
    assert_eq!(
        info.card_url,
        format!("{}/.well-known/agent-card.json", server.url)
    );
    let ep = Endpoint::from_card(&info, None, false);
    let sent = c
        .send_message(&ep, &message_request("hello"))
        .await
        .unwrap();
    let types::SendMessageResponse::Task(t) = sent.value else {
        panic!("{sent:?}")
    };
    assert_eq!(t.id, "t-new");
    assert_eq!(
        sent.raw["task"]["status"]["timestamp"],
        "2026-11-30T01:08:43.415935Z"
    );
    c.get_task(&ep, "t-1", Some(0)).await.unwrap();

    let seen = server.seen();
    let (card, rpcs) = seen.split_first().unwrap();
    assert_eq!(card.path, "/.well-known/agent-card.json");
    assert_eq!(card.headers[header::USER_AGENT], super::super::USER_AGENT);
    let mut ids = Vec::new();
    for r in rpcs {
        assert_eq!(r.path, "/task");
        assert_eq!(r.headers[header::CONTENT_TYPE], "application/json");
        assert_eq!(r.headers["a2a-version"], "1.0");
        assert_eq!(r.headers[header::ACCEPT], "application/json");
        assert!(
            r.headers[header::USER_AGENT]
                .to_str()
                .unwrap()
                .starts_with("a2a-recover/")
        );
        assert!(r.headers.get(header::AUTHORIZATION).is_none());
        assert_eq!(r.body["jsonrpc"], "2.0");
        assert_eq!(r.body["params"]["tenant"], "acme");
        ids.push(r.body["id"].as_str().expect("string id").to_owned());
    }
    assert_eq!(rpcs[0].body["method"], "SendMessage");
    assert_eq!(rpcs[0].body["params"]["message"]["messageId"], "m-1");
    assert_eq!(rpcs[0].body["params"]["message"]["role"], "ROLE_USER");
    assert_eq!(
        rpcs[0].body["params"]["configuration"]["returnImmediately"],
        true
    );
    assert_eq!(rpcs[1].body["method"], "GetTask");
    assert_eq!(rpcs[1].body["params"]["historyLength"], 0);
    assert_ne!(ids[0], ids[1]);
}

#[tokio::test]
async fn list_and_cancel_round_trip() {
    let server = Server::start().await;
    let c = client();
    let page = c
        .list_tasks(
            &server.endpoint("/list/mixed"),
            &types::ListTasksRequest {
                context_id: Some("ctx-1".to_owned()),
                status: None,
                page_size: Some(3),
                page_token: None,
                history_length: None,
                status_timestamp_after: None,
                include_artifacts: None,
                tenant: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(page.tasks.len(), 3, "one bad task costs one entry");
    assert_eq!(page.tasks[0].as_ref().unwrap().value.id, "t-1");
    let bad = page.tasks[1].as_ref().unwrap_err();
    assert!(bad.to_string().contains("task 1 of the page"), "{bad}");
    assert_eq!(page.tasks[2].as_ref().unwrap().value.id, "t-3");
    assert_eq!((page.next_page_token.as_str(), page.total_size), ("p2", 7));
    let list = &server.seen()[0];
    assert_eq!(list.body["params"]["contextId"], "ctx-1");
    assert_eq!(list.body["params"]["pageSize"], 3);
    assert!(
        list.body["params"].get("tenant").is_none(),
        "no tenant, no member"
    );

    let canceled = c
        .cancel_task(&server.endpoint("/task"), "t-5")
        .await
        .unwrap();
    assert_eq!(canceled.value.id, "t-5");
    assert_eq!(server.seen()[1].body["method"], "CancelTask");
}

// ---- error mapping ---------------------------------------------------------------------------

#[tokio::test]
async fn every_json_rpc_error_code_maps_to_its_class() {
    let server = Server::start().await;
    let cases = [
        (-32001, ErrorClass::Remote),
        (-32002, ErrorClass::Remote),
        (-32003, ErrorClass::Remote),
        (-32004, ErrorClass::Remote),
        (-32005, ErrorClass::Refused),
        (-32006, ErrorClass::Remote),
        (-32007, ErrorClass::Remote),
        (-32008, ErrorClass::Remote),
        (-32009, ErrorClass::Refused),
        (-32700, ErrorClass::Remote),
        (-32600, ErrorClass::Refused),
        (-32601, ErrorClass::Refused),
        (-32602, ErrorClass::Refused),
        (-32603, ErrorClass::Ambiguous),
    ];
    for (code, class) in cases {
        let err = get_task_at(&server, &format!("/code/{code}"))
            .await
            .unwrap_err();
        assert!(matches!(err, A2aError::Rpc { .. }), "{code}: {err}");
        assert_eq!(err.rpc_code(), Some(code));
        assert_eq!(err.class(), class, "{code}");
        assert!(!err.is_transient(), "{code}");
        assert_eq!(err.http_status(), None);
        let data = err.rpc_error().unwrap().data.as_ref().unwrap();
        assert_eq!(data[0]["reason"], "TEST", "{code}: data array kept");
        let want_exit = if class == ErrorClass::Ambiguous {
            exit::WORK_REMAINS
        } else {
            exit::NEEDS_HUMAN
        };
        assert_eq!(err.exit_code(), want_exit, "{code}");
        assert!(
            err.summary().contains(&code.to_string()),
            "{}",
            err.summary()
        );
    }
}

#[tokio::test]
async fn http_503_with_retry_after_is_transient_and_ambiguous() {
    let server = Server::start().await;
    let err = get_task_at(&server, "/http/503").await.unwrap_err();
    assert_eq!(err.http_status(), Some(503));
    assert_eq!(err.retry_after(), Some(Duration::from_secs(2)));
    assert_eq!(err.class(), ErrorClass::Ambiguous);
    assert!(err.is_transient());
    assert_eq!(err.exit_code(), exit::WORK_REMAINS);
    assert!(err.to_string().contains("overloaded"), "{err}");
}

#[tokio::test]
async fn html_502_page_keeps_a_short_inert_snippet() {
    let server = Server::start().await;
    let err = get_task_at(&server, "/http/502").await.unwrap_err();
    assert_eq!(err.http_status(), Some(502));
    assert!(err.is_transient());
    assert_eq!(err.class(), ErrorClass::Ambiguous);
    let A2aError::Http { snippet, .. } = &err else {
        panic!("{err}")
    };
    assert!(
        snippet.contains("502 Bad Gateway") && snippet.contains("nginx"),
        "{snippet}"
    );
    assert!(
        !snippet.contains('<') && !snippet.contains('\n'),
        "{snippet}"
    );
}

#[tokio::test]
async fn http_401_is_a_refusal() {
    let server = Server::start().await;
    let err = get_task_at(&server, "/http/401").await.unwrap_err();
    assert_eq!(err.http_status(), Some(401));
    assert_eq!(err.class(), ErrorClass::Refused);
    assert!(!err.is_transient());
    assert_eq!(err.exit_code(), exit::NEEDS_HUMAN);
    assert_eq!(err.hint(), Some(crate::a2a::Hint::CredentialsRefused));
}

#[tokio::test]
async fn http_500_keeps_the_json_rpc_error_in_its_body() {
    let server = Server::start().await;
    let err = get_task_at(&server, "/http/500-rpc").await.unwrap_err();
    assert_eq!(err.http_status(), Some(500));
    assert_eq!(err.rpc_code(), Some(-32603));
    assert_eq!(err.class(), ErrorClass::Ambiguous);
    assert!(!err.is_transient());
}

#[tokio::test]
async fn connection_refused_was_never_sent() {
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", dead.local_addr().unwrap());
    drop(dead);
    let ep = Endpoint {
        url: url.clone(),
        tenant: None,
        binding: ProtocolBinding::default(),
        card_origin: url,
        credential: None,
        placement: crate::a2a::Placement::Bearer,
        allow_cross_origin: false,
    };
    let err = client()
        .send_message(&ep, &message_request("x"))
        .await
        .unwrap_err();
    assert!(matches!(err, A2aError::Connect { .. }), "{err}");
    assert_eq!(err.unreached(), Some(crate::a2a::Unreached::Refused));
    assert_eq!(err.class(), ErrorClass::NotSent);
    assert!(err.is_transient());
    assert_eq!(err.exit_code(), exit::WORK_REMAINS);
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let server = Server::start().await;
    let c = client_with(Duration::from_secs(1), 16 * MIB, Duration::from_secs(20));
    let err = c
        .get_task(&server.endpoint("/hang"), "t-1", None)
        .await
        .unwrap_err();
    assert!(matches!(err, A2aError::Timeout { .. }), "{err}");
    assert_eq!(err.class(), ErrorClass::Ambiguous);
    assert!(err.is_transient());
    // A body that starts and then stalls is bounded by the same timeout.
    let err = c
        .get_task(&server.endpoint("/slow-body"), "t-1", None)
        .await
        .unwrap_err();
    assert!(matches!(err, A2aError::Timeout { .. }), "{err}");
}

#[tokio::test]
async fn decode_errors_are_told_apart() {
    let server = Server::start().await;
    let cases = [
        ("/wrong-id", super::super::DecodeKind::WrongId),
        ("/numeric-id", super::super::DecodeKind::WrongId),
        ("/invalid-json", super::super::DecodeKind::InvalidJson),
        ("/html-200", super::super::DecodeKind::InvalidJson),
        ("/invalid-utf8", super::super::DecodeKind::InvalidUtf8),
        ("/no-result", super::super::DecodeKind::WrongShape),
    ];
    for (path, want) in cases {
        let err = get_task_at(&server, path).await.unwrap_err();
        let A2aError::Decode { kind, .. } = &err else {
            panic!("{path}: {err}")
        };
        assert_eq!(*kind, want, "{path}: {err}");
        assert_eq!(err.class(), ErrorClass::Ambiguous, "{path}");
        assert!(!err.is_transient(), "{path}");
        assert_eq!(err.exit_code(), exit::WORK_REMAINS, "{path}");
    }
}

#[tokio::test]
async fn declared_content_length_over_the_cap_is_refused_early() {
    let server = Server::start().await;
    let c = client_with(Duration::from_secs(20), 1024, Duration::from_secs(20));
    let err = c
        .get_task(&server.endpoint("/declared-big"), "t-1", None)
        .await
        .unwrap_err();
    assert!(err.is_too_large(), "{err}");
    assert_eq!(err.exit_code(), exit::NEEDS_HUMAN);
}

// ---- size caps and memory ----------------------------------------------------------------------

/// Serializes the memory tests: the peak is per process.
static MEMORY: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Resets the process's peak RSS and returns it, in bytes.
fn reset_peak_rss() -> u64 {
    // Writing 5 to clear_refs resets VmHWM to the current RSS (Linux ≥ 4.0).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    peak_rss()
}

fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

#[tokio::test]
async fn a_100_mb_answer_is_refused_without_buffering_it() {
    let _serial = MEMORY.lock().await;
    let server = Server::start().await;
    let c = client_with(Duration::from_secs(60), 16 * MIB, Duration::from_secs(60));
    let before = reset_peak_rss();
    let err = c
        .get_task(&server.endpoint("/big"), "t-1", None)
        .await
        .unwrap_err();
    let growth = peak_rss().saturating_sub(before);
    assert!(err.is_too_large(), "{err}");
    assert_eq!(err.exit_code(), exit::NEEDS_HUMAN);
    assert!(
        growth < 48 * MIB,
        "peak memory grew by {} MiB",
        growth / MIB
    );
}

#[tokio::test]
async fn a_100_mb_stream_event_is_refused_without_buffering_it() {
    let _serial = MEMORY.lock().await;
    let server = Server::start().await;
    let c = client_with(Duration::from_secs(60), 16 * MIB, Duration::from_secs(60));
    let before = reset_peak_rss();
    let mut stream = c
        .subscribe(&server.endpoint("/sse/big"), "t-1")
        .await
        .unwrap();
    let err = stream.next().await.unwrap().unwrap_err();
    let growth = peak_rss().saturating_sub(before);
    assert!(err.is_too_large(), "{err}");
    assert!(stream.next().await.is_none());
    assert!(
        growth < 48 * MIB,
        "peak memory grew by {} MiB",
        growth / MIB
    );
}

// ---- streams -----------------------------------------------------------------------------------

#[tokio::test]
async fn a_python_stream_in_seven_byte_chunks_ends_cleanly() {
    let server = Server::start().await;
    let c = client();
    let mut stream = c
        .subscribe(
            &server.endpoint("/sse/fixture/sse-python-crlf-pings.txt"),
            "t-1",
        )
        .await
        .unwrap();
    let mut states = Vec::new();
    while let Some(item) = stream.next().await {
        match item.unwrap().value {
            StreamResponse::Task(t) => states.push(t.status.state),
            StreamResponse::StatusUpdate(s) => states.push(s.status.state),
            StreamResponse::ArtifactUpdate(a) => assert_eq!(a.artifact.artifact_id, "a-1"),
            StreamResponse::Message(m) => panic!("{m:?}"),
        }
    }
    assert_eq!(
        states,
        [
            TaskState::Submitted,
            TaskState::Working,
            TaskState::Completed
        ]
    );
    assert!(stream.next().await.is_none());
    let seen = server.seen();
    assert_eq!(seen[0].headers[header::ACCEPT], "text/event-stream");
    assert_eq!(seen[0].body["method"], "SubscribeToTask");
    assert_eq!(seen[0].body["params"]["id"], "t-1");
}

#[tokio::test]
async fn an_error_event_ends_the_stream_without_a_flood() {
    let server = Server::start().await;
    let c = client();
    let mut stream = c
        .send_streaming_message(
            &server.endpoint("/sse/fixture/sse-error-event.txt"),
            &message_request("x"),
        )
        .await
        .unwrap();
    assert!(stream.next().await.unwrap().is_ok());
    let err = stream.next().await.unwrap().unwrap_err();
    assert_eq!(err.rpc_code(), Some(-32603));
    for _ in 0..3 {
        assert!(stream.next().await.is_none());
    }
    assert_eq!(server.seen()[0].body["method"], "SendStreamingMessage");
}

#[tokio::test]
async fn subscribing_to_a_terminal_task_is_a_plain_json_error() {
    let server = Server::start().await;
    let err = client()
        .subscribe(&server.endpoint("/sse/terminal"), "t-1")
        .await
        .unwrap_err();
    assert_eq!(err.rpc_code(), Some(-32004));
    assert_eq!(err.class(), ErrorClass::Remote);
}

#[tokio::test]
async fn a_plain_json_result_in_place_of_a_stream_is_one_event() {
    let server = Server::start().await;
    let mut stream = client()
        .subscribe(&server.endpoint("/sse/json-result"), "t-1")
        .await
        .unwrap();
    let first = stream.next().await.unwrap().unwrap();
    assert!(matches!(first.value, StreamResponse::Task(_)));
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn a_silent_stream_hits_the_idle_timeout() {
    let server = Server::start().await;
    let c = client_with(Duration::from_secs(20), 16 * MIB, Duration::from_secs(1));
    let mut stream = c
        .subscribe(&server.endpoint("/sse/idle"), "t-1")
        .await
        .unwrap();
    assert!(stream.next().await.unwrap().is_ok());
    let err = stream.next().await.unwrap().unwrap_err();
    assert!(matches!(err, A2aError::StreamIdle { .. }), "{err}");
    assert!(err.is_transient());
    assert!(stream.next().await.is_none());
}

/// Events with empty data every 100 ms carry nothing: the stream is as silent as one that
/// sends only comments, and hits the idle timeout (before, each reset it: `follow` never ended).
#[tokio::test]
async fn a_stream_of_empty_events_hits_the_idle_timeout() {
    let server = Server::start().await;
    let c = client_with(Duration::from_secs(20), 16 * MIB, Duration::from_secs(1));
    let mut stream = c
        .subscribe(&server.endpoint("/sse/empty-data"), "t-1")
        .await
        .unwrap();
    assert!(stream.next().await.unwrap().is_ok());
    let next = tokio::time::timeout(Duration::from_secs(30), stream.next()).await;
    let err = next.expect("cut by the idle timeout").unwrap().unwrap_err();
    assert!(matches!(err, A2aError::StreamIdle { .. }), "{err}");
}

#[tokio::test]
async fn a_stream_cut_mid_event_is_not_a_clean_end() {
    let server = Server::start().await;
    let mut stream = client()
        .subscribe(&server.endpoint("/sse/cut"), "t-1")
        .await
        .unwrap();
    assert!(stream.next().await.unwrap().is_ok());
    let err = stream.next().await.unwrap().unwrap_err();
    assert!(matches!(err, A2aError::StreamTruncated { .. }), "{err}");
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn a_stream_answer_of_another_content_type_is_refused() {
    let server = Server::start().await;
    let err = client()
        .subscribe(&server.endpoint("/sse/plain-text"), "t-1")
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            A2aError::Decode {
                kind: super::super::DecodeKind::ContentType,
                ..
            }
        ),
        "{err}"
    );
    let err = client()
        .subscribe(&server.endpoint("/http/503"), "t-1")
        .await
        .unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_secs(2)));
}

// ---- credentials -------------------------------------------------------------------------------

fn auth_of(seen: &Seen) -> Option<String> {
    seen.headers
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap().to_owned())
}

#[tokio::test]
async fn credentials_stay_on_the_card_origin_unless_allowed() {
    let card_server = Server::start().await;
    let rpc_server = Server::start().await; // another loopback port: another origin
    *card_server.state.interface_url.lock().unwrap() = format!("{}/task", rpc_server.url);
    let c = client();
    let credential = Credential::new("AGENT_TOKEN", "s3cr3t").unwrap();
    let info = c
        .fetch_card(&card_server.url, Some(&credential))
        .await
        .unwrap();
    assert_eq!(
        auth_of(&card_server.seen()[0]).as_deref(),
        Some("Bearer s3cr3t")
    );

    let ep = Endpoint::from_card(&info, Some(credential.clone()), false);
    c.get_task(&ep, "t-1", None).await.unwrap();
    assert_eq!(
        auth_of(&rpc_server.seen()[0]),
        None,
        "cross-origin: no credential"
    );

    let ep = Endpoint::from_card(&info, Some(credential.clone()), true);
    c.get_task(&ep, "t-1", None).await.unwrap();
    assert_eq!(
        auth_of(&rpc_server.seen()[1]).as_deref(),
        Some("Bearer s3cr3t")
    );

    // Same origin: sent.
    let info = c.fetch_card(&rpc_server.url, None).await.unwrap();
    let ep = Endpoint::from_card(&info, Some(credential), false);
    c.get_task(&ep, "t-1", None).await.unwrap();
    let seen = rpc_server.seen();
    assert_eq!(
        auth_of(seen.last().unwrap()).as_deref(),
        Some("Bearer s3cr3t")
    );
}

/// The endpoint of `path` with the credential `AGENT_KEY=key` placed as `placement`.
fn keyed(server: &Server, path: &str, key: &str, placement: Placement) -> Endpoint {
    Endpoint {
        credential: Some(Credential::new("AGENT_KEY", key).unwrap()),
        placement,
        ..server.endpoint(path)
    }
}

#[tokio::test]
async fn an_api_key_goes_where_the_card_says_and_never_back_out() {
    use crate::a2a::card::card_placement;
    let server = Server::start().await;
    let c = client();
    let key = "k3y+/&=x y";
    let card = |location: &str, name: &str| {
        json!({"securitySchemes": {"k": {"type": "apiKey", "in": location, "name": name}},
               "security": [{"k": []}]})
    };
    let header = card_placement("http://a.example/", &card("header", "X-Api-Key")).unwrap();
    c.get_task(&keyed(&server, "/task", key, header), "t-1", None)
        .await
        .unwrap();
    let query = card_placement("http://a.example/", &card("query", "api_key")).unwrap();
    c.get_task(&keyed(&server, "/task", key, query.clone()), "t-1", None)
        .await
        .unwrap();
    let seen = server.seen();
    assert_eq!(seen[0].headers.get("x-api-key").unwrap(), key);
    let pairs: Vec<(String, String)> =
        url::form_urlencoded::parse(seen[1].query.as_deref().unwrap().as_bytes())
            .into_owned()
            .collect();
    assert_eq!(pairs, [("api_key".to_owned(), key.to_owned())]);
    for s in &seen {
        assert_eq!(auth_of(s), None, "no bearer beside the key: {s:?}");
    }

    // A cookie holds what a cookie value may: a key with a space is refused, nothing sent.
    let cookie = card_placement("http://a.example/", &card("cookie", "sid")).unwrap();
    let err = c
        .get_task(&keyed(&server, "/task", key, cookie.clone()), "t-1", None)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("AGENT_KEY") && err.to_string().contains("cookie"),
        "{err}"
    );
    assert!(!err.to_string().contains("k3y"), "{err}");
    assert_eq!(server.seen().len(), 2, "nothing sent");
    c.get_task(&keyed(&server, "/task", "k3y+/x", cookie), "t-1", None)
        .await
        .unwrap();
    assert_eq!(
        server.seen()[2].headers.get(header::COOKIE).unwrap(),
        "sid=k3y+/x"
    );

    // An agent echoing its request (URL and headers) back: the key, raw or query-encoded, is
    // in no error.
    for placement in [
        query,
        card_placement("http://a.example/", &card("header", "K")).unwrap(),
    ] {
        let err = c
            .get_task(&keyed(&server, "/echo", key, placement), "t-1", None)
            .await
            .unwrap_err();
        let shown = format!("{err} {err:?}");
        for form in [key, "k3y%2B%2F%26%3Dx+y", "k3y%2B%2F%26%3Dx%20y"] {
            assert!(!shown.contains(form), "{form} in {shown}");
        }
        assert!(shown.contains("REDACTED"), "{shown}");
    }
}

#[test]
fn credentials_never_show_their_token() {
    let c = Credential::new("AGENT_TOKEN", "s3cr3t").unwrap();
    assert_eq!(c.env_var(), Some("AGENT_TOKEN"));
    assert!(!format!("{c:?}").contains("s3cr3t"));
    assert_eq!(c.to_string(), "AGENT_TOKEN");
    let err = Credential::new("AGENT_TOKEN", "  ").unwrap_err();
    assert!(err.to_string().contains("AGENT_TOKEN") && err.to_string().contains("empty"));
    let err = Credential::from_env("A2A_RECOVER_TEST_SURELY_UNSET_VARIABLE").unwrap_err();
    assert!(
        err.to_string()
            .contains("A2A_RECOVER_TEST_SURELY_UNSET_VARIABLE"),
        "{err}"
    );
    assert_eq!(err.exit_code(), exit::USAGE);
    let err = Credential::new("T", "bad\nvalue").unwrap_err();
    assert!(!err.to_string().contains("bad"), "{err}");
    assert_eq!(
        Credential::from_env("PATH").unwrap().env_var(),
        Some("PATH")
    );
}

// ---- cards and plain URLs -----------------------------------------------------------------------

#[tokio::test]
async fn card_errors_are_clear() {
    let server = Server::start().await;
    let err = client()
        .fetch_card(&format!("{}/nothing/card.json", server.url), None)
        .await
        .unwrap_err();
    assert_eq!(err.http_status(), Some(404));
    let err = client()
        .fetch_card("http://user:pw@127.0.0.1:1/", None)
        .await
        .unwrap_err();
    assert!(matches!(err, A2aError::InvalidUrl { .. }), "{err}");
    assert!(!err.to_string().contains("pw"), "{err}");
    assert_eq!(err.class(), ErrorClass::NotSent);
}

#[tokio::test]
async fn url_checks_return_the_status_and_follow_a_few_redirects() {
    let server = Server::start().await;
    let c = client();
    assert_eq!(
        c.get_url_status(&format!("{}/status/204", server.url))
            .await
            .unwrap(),
        204
    );
    assert_eq!(
        c.get_url_status(&format!("{}/status/404", server.url))
            .await
            .unwrap(),
        404
    );
    assert_eq!(
        c.get_url_status(&format!("{}/redirect/5", server.url))
            .await
            .unwrap(),
        200
    );
    let err = c
        .get_url_status(&format!("{}/redirect/6", server.url))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("too many redirects"), "{err}");
    assert!(!err.is_transient());
    // A body that never ends does not hide the status.
    let c = client_with(Duration::from_secs(1), 16 * MIB, Duration::from_secs(20));
    assert_eq!(
        c.get_url_status(&format!("{}/slow-body", server.url))
            .await
            .unwrap(),
        200
    );
}
