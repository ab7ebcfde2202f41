//! The binary run from inside a tokio test, off the runtime's thread, so agents served
//! in-process keep answering: `run`, a hang guard, in-process scripted agents and static
//! Agent Card servers.

use std::future::IntoFuture;
use std::process::Output;
use std::time::Duration;

use a2a_recover::scripted_agent::{AgentConfig, ScriptedAgent};
use axum::Router;
use axum::http::{StatusCode, header};
use axum::routing::get;
use serde_json::{Value, json};

use super::{TestEnv, code, fast_with_skills, stderr, stdout};

/// Fails a test that hangs (a guard, not a time limit on the behaviour).
pub async fn guard<F: Future<Output = ()>>(f: F) {
    tokio::time::timeout(Duration::from_secs(180), f)
        .await
        .expect("test hung for 180 s");
}

/// Runs the binary off the runtime's thread, so agents served in-process keep answering.
pub async fn run(env: &TestEnv, args: &[&str]) -> Output {
    run_with(env, args, &[]).await
}

/// As [`run`], with extra environment variables.
pub async fn run_with(env: &TestEnv, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut cmd = env.cmd();
    cmd.args(args);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    tokio::task::spawn_blocking(move || cmd.output().expect("run the binary"))
        .await
        .expect("join the binary's thread")
}

/// Returns the JSON Lines of stdout after the first, asserting it is `begin` for `command`.
pub fn records_after_begin(o: &Output, command: &str) -> Vec<Value> {
    let mut lines = super::json_lines(o);
    assert!(!lines.is_empty(), "no output: {}", stderr(o));
    let begin = lines.remove(0);
    assert_eq!(
        begin,
        json!({"type": "begin", "formatVersion": 1, "command": command})
    );
    lines
}

/// Asserts the exit code, showing the output otherwise.
#[track_caller]
pub fn assert_code(o: &Output, want: i32) {
    assert_eq!(
        code(o),
        want,
        "stdout:\n{}\nstderr:\n{}",
        stdout(o),
        stderr(o)
    );
}

/// Starts a scripted agent on this runtime, named `name`, with these skills
/// ([`fast_with_skills`]).
pub async fn scripted(name: &str, skills: &[&str]) -> ScriptedAgent {
    ScriptedAgent::start(
        AgentConfig {
            name: name.to_owned(),
            ..fast_with_skills(skills)
        },
        0,
    )
    .await
    .expect("start the scripted agent")
}

/// A static HTTP server on 127.0.0.1 serving one body as its Agent Card; every other path is
/// 404 (so a card pointing its JSON-RPC interface here gets every send refused).
pub struct CardServer {
    /// `http://127.0.0.1:PORT/`.
    pub url: String,
    task: tokio::task::JoinHandle<()>,
}

impl CardServer {
    /// Binds `127.0.0.1:0` first, then serves `body` at `/.well-known/agent-card.json`.
    pub async fn start(body: impl Fn(&str) -> String) -> Self {
        Self::start_on(0, body).await
    }

    /// As [`CardServer::start`], on `port` (0: a free one).
    pub async fn start_on(port: u16, body: impl Fn(&str) -> String) -> Self {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("bind");
        let url = format!(
            "http://127.0.0.1:{}/",
            listener.local_addr().unwrap().port()
        );
        let body = body(&url);
        let app = Router::new()
            .route(
                "/.well-known/agent-card.json",
                get(move || {
                    let body = body.clone();
                    async move { ([(header::CONTENT_TYPE, "application/json")], body) }
                }),
            )
            .fallback(|| async { (StatusCode::NOT_FOUND, "no such path\n") });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).into_future().await;
        });
        Self { url, task }
    }
}

impl Drop for CardServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A valid v1.0 card whose JSON-RPC interface is `{base}rpc` (404 here: sends are REFUSED).
pub fn refusing_card(base: &str, skills: &[&str]) -> String {
    json!({
        "name": "Refusing agent",
        "description": "its JSON-RPC endpoint answers 404",
        "version": "1.0.0",
        "capabilities": {},
        "supportedInterfaces": [
            {"url": format!("{base}rpc"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": skills.iter().map(|id| json!({
            "id": id, "name": id, "description": "d", "tags": []
        })).collect::<Vec<_>>(),
    })
    .to_string()
}

/// Returns the `attempt` records of `inspect STEP --format json`.
pub async fn attempts(env: &TestEnv, step: &str) -> Vec<Value> {
    let o = run(env, &["inspect", step, "--format", "json"]).await;
    assert_code(&o, 0);
    records_after_begin(&o, "inspect")
}
