//! An HTTP+JSON agent (A2A v1.0, or v0.3 under `/v1`) that names every task it creates with one
//! id the test chooses, however unusable (`..`, `.`): the misbehaving agent of issue 30's hole
//! 4. It processes every send (the task exists, WORKING, for ever), serves each task at its own
//! path, answers the task collection as its binding does (v1.0: a `ListTasks` page; v0.3: the
//! `a2a-sdk` 404 `{"message": "Task not found"}` that used to be read as the agent's word), and
//! records every request, so a test can count sends and see which resources were read.

use std::sync::{Arc, Mutex, PoisonError};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::Background;

/// Which binding the agent speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaks {
    /// A2A v1.0 HTTP+JSON: `POST /message:send`, `GET /tasks/{id}`, `GET /tasks` (ListTasks).
    V1,
    /// A2A v0.3 HTTP+JSON: `POST /v1/message:send`, `GET /v1/tasks/{id}`; no listing.
    V03,
}

#[derive(Debug)]
struct Shared {
    base: String,
    speaks: Speaks,
    task_id: String,
    /// Every request: verb and path.
    seen: Vec<(Method, String)>,
    /// Every task created, as the agent holds it (v1.0 JSON).
    tasks: Vec<Value>,
}

type Held = Arc<Mutex<Shared>>;

fn lock(h: &Held) -> std::sync::MutexGuard<'_, Shared> {
    h.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A running agent.
pub struct OddIds {
    url: String,
    held: Held,
}

/// Starts an agent on `127.0.0.1:0` whose every task is named `task_id`.
pub fn odd_ids(speaks: Speaks, task_id: &str) -> Background<OddIds> {
    let task_id = task_id.to_owned();
    Background::start(move || async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let held: Held = Arc::new(Mutex::new(Shared {
            base: url.clone(),
            speaks,
            task_id,
            seen: Vec::new(),
            tasks: Vec::new(),
        }));
        let app = axum::Router::new()
            .fallback(answer)
            .with_state(Arc::clone(&held));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        OddIds { url, held }
    })
}

impl Background<OddIds> {
    /// The base URL (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> String {
        self.get().url.clone()
    }

    /// Every request so far: verb and path.
    pub fn seen(&self) -> Vec<(Method, String)> {
        lock(&self.get().held).seen.clone()
    }

    /// How many sends the agent received (each created a task).
    pub fn sends(&self) -> usize {
        self.seen()
            .iter()
            .filter(|(m, p)| m == Method::POST && p.ends_with("/message:send"))
            .count()
    }

    /// The tasks the agent holds, as it holds them.
    pub fn tasks(&self) -> Vec<Value> {
        lock(&self.get().held).tasks.clone()
    }
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn card(s: &Shared) -> Value {
    let skills = json!([{"id": "odd", "name": "Odd", "description": "odd ids", "tags": []}]);
    match s.speaks {
        Speaks::V1 => json!({
            "name": "odd ids", "description": "names its tasks oddly", "version": "1.0.0",
            "supportedInterfaces": [
                {"url": s.base, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
            ],
            "capabilities": {}, "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"], "skills": skills
        }),
        Speaks::V03 => json!({
            "name": "odd ids", "description": "names its tasks oddly", "version": "1.0.0",
            "protocolVersion": "0.3.0", "url": s.base, "preferredTransport": "HTTP+JSON",
            "capabilities": {}, "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"], "skills": skills
        }),
    }
}

/// The task as this binding sends it (v0.3: `content` for `parts`).
fn on_the_wire(speaks: Speaks, task: &Value) -> Value {
    let mut task = task.clone();
    if speaks == Speaks::V03
        && let Some(Value::Array(history)) = task.get_mut("history")
    {
        for m in history {
            if let Some(parts) = m.as_object_mut().and_then(|m| m.remove("parts")) {
                m["content"] = parts;
            }
        }
    }
    task
}

fn not_found(speaks: Speaks) -> Response {
    match speaks {
        Speaks::V1 => json_response(
            StatusCode::NOT_FOUND,
            &json!({"error": {"code": 404, "status": "NOT_FOUND", "message": "Task not found",
                "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                             "reason": "TASK_NOT_FOUND", "domain": "a2a-protocol.org"}]}}),
        ),
        Speaks::V03 => json_response(StatusCode::NOT_FOUND, &json!({"message": "Task not found"})),
    }
}

async fn answer(State(held): State<Held>, method: Method, uri: Uri, body: Bytes) -> Response {
    let mut s = lock(&held);
    let path = uri.path().to_owned();
    s.seen.push((method.clone(), path.clone()));
    let speaks = s.speaks;
    let prefix = if speaks == Speaks::V03 { "/v1" } else { "" };
    if method == Method::GET && path == "/.well-known/agent-card.json" {
        return json_response(StatusCode::OK, &card(&s));
    }
    let Some(rest) = path.strip_prefix(prefix) else {
        return not_found(speaks);
    };
    match (method, rest) {
        (Method::POST, "/message:send") => {
            let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let mut message = request["message"].clone();
            if let Some(content) = message.as_object_mut().and_then(|m| m.remove("content")) {
                message["parts"] = content;
            }
            let context = message["contextId"]
                .as_str()
                .map_or_else(|| format!("ctx-{}", s.tasks.len() + 1), str::to_owned);
            let task = json!({
                "id": s.task_id, "contextId": context,
                "status": {"state": "TASK_STATE_WORKING",
                           "timestamp": a2a_recover::clock::rfc3339(a2a_recover::clock::system_now())},
                "history": [message],
            });
            s.tasks.push(task.clone());
            json_response(StatusCode::OK, &json!({"task": on_the_wire(speaks, &task)}))
        }
        // The collection: where `GET /tasks/..` lands once the URL library drops the `..`.
        (Method::GET, "/tasks" | "/tasks/") => match speaks {
            Speaks::V1 => {
                let tasks = s.tasks.clone();
                let n = tasks.len();
                json_response(
                    StatusCode::OK,
                    &json!({"tasks": tasks, "nextPageToken": "", "pageSize": 100,
                            "totalSize": n}),
                )
            }
            Speaks::V03 => not_found(speaks),
        },
        (Method::GET, task_path) => {
            let id = task_path.strip_prefix("/tasks/").unwrap_or_default();
            match s.tasks.iter().find(|t| t["id"] == id) {
                Some(task) => json_response(StatusCode::OK, &on_the_wire(speaks, task)),
                None => not_found(speaks),
            }
        }
        _ => not_found(speaks),
    }
}
