//! `agents add|list|remove` and `delegate --skill`, through the binary, against real agents on
//! 127.0.0.1: the in-crate scripted agent, tiny static card servers, and the official Python SDK.

use std::path::Path;
use std::time::Duration;

use a2a_recover::a2a::{A2aClient, ClientConfig, Endpoint};
use a2a_recover::journal::{Binding, Journal, StepName};
use serde_json::{Value, json};

use insta::assert_snapshot;

use crate::common::in_runtime::{
    CardServer, assert_code, attempts, guard, records_after_begin, run, run_with, scripted,
};
use crate::common::interop::start_python_agent;
use crate::common::snapshot::snapshot_of;
use crate::common::{TestEnv, code, stderr, stdout};

/// Returns a URL on 127.0.0.1 where nothing listens (a port bound, then released).
fn dead_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/")
}

/// Returns the number of rows of `table` in the journal at `path`.
fn count(path: &Path, table: &str) -> i64 {
    let c = rusqlite::Connection::open(path).expect("open the journal");
    c.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .expect("count")
}

/// Returns the `agent` records of `agents list --format json`.
async fn listed(env: &TestEnv) -> Vec<Value> {
    let o = run(env, &["agents", "list", "--format", "json"]).await;
    assert_code(&o, 0);
    records_after_begin(&o, "agents list")
}

#[tokio::test]
async fn add_stores_the_card_and_list_shows_the_registry_in_order() {
    guard(async {
        let env = TestEnv::new();
        let hotel = scripted("Hotel agent", &["hotel"]).await;
        let cars = scripted("Car agent", &["car", "hotel"]).await;

        let o = run(&env, &["agents", "add", &hotel.url()]).await;
        assert_code(&o, 0);
        assert_eq!(
            stdout(&o),
            format!(
                "registered Hotel agent ({}) with skills hotel; 1st of 1 in the registry (first \
                 added, first tried).\n",
                hotel.url()
            )
        );
        let o = run_with(
            &env,
            &[
                "agents",
                "add",
                &cars.card_url(),
                "--token-env",
                "CAR_TOKEN",
            ],
            &[("CAR_TOKEN", "s3cret")],
        )
        .await;
        assert_code(&o, 0);
        assert!(
            stdout(&o).contains("2nd of 2 in the registry"),
            "{}",
            stdout(&o)
        );

        let agents = listed(&env).await;
        assert_eq!(agents.len(), 2);
        let first = &agents[0];
        assert_eq!(first["type"], "agent");
        assert_eq!(first["url"], hotel.card_url());
        assert_eq!(first["name"], "Hotel agent");
        assert_eq!(first["interfaceUrl"], hotel.url());
        assert_eq!(first["protocolVersion"], "1.0");
        assert_eq!(
            first["skills"],
            json!([{"id": "hotel", "name": "hotel", "tags": ["hotel"]}])
        );
        assert_eq!(first["capabilities"], json!({"streaming": true}));
        assert_eq!(first["tokenEnv"], Value::Null);
        assert_eq!(first["acceptsContextId"], Value::Null);
        assert_eq!(first["order"], 1);
        assert!(first["registeredAt"].is_string() && first["fetchedAt"].is_string());
        assert_eq!(agents[1]["url"], cars.card_url());
        assert_eq!(agents[1]["tokenEnv"], "CAR_TOKEN");
        assert_eq!(
            agents[1]["skills"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["id"].as_str().unwrap())
                .collect::<Vec<_>>(),
            ["car", "hotel"]
        );
        // The credential's value is never stored, only its name.
        let raw = std::fs::read(env.journal()).unwrap();
        assert!(!raw.windows(6).any(|w| w == b"s3cret"));

        // Piped: the plain table, in registration order, with names, skills and variables.
        let o = run(&env, &["agents", "list"]).await;
        assert_snapshot!(snapshot_of(&env, &o));

        // Adding again refreshes the card and keeps the order and the variable.
        let o = run_with(
            &env,
            &["agents", "add", &cars.url()],
            &[("CAR_TOKEN", "s3cret")],
        )
        .await;
        assert_code(&o, 0);
        assert!(
            stdout(&o).starts_with("refreshed Car agent")
                && stdout(&o).contains("2nd of 2 in the registry"),
            "{}",
            stdout(&o)
        );
        let again = listed(&env).await;
        assert_eq!(again.len(), 2);
        assert_eq!(again[0]["url"], hotel.card_url());
        assert_eq!(again[1]["url"], cars.card_url());
        assert_eq!(again[1]["tokenEnv"], "CAR_TOKEN");
        assert_eq!(again[1]["registeredAt"], agents[1]["registeredAt"]);
        assert!(
            again[1]["fetchedAt"].as_str() >= agents[1]["fetchedAt"].as_str(),
            "{again:?}"
        );
        assert_eq!(count(&env.journal(), "agents"), 2);
    })
    .await;
}

/// Card members that turn a v1.0 card's `supportedInterfaces` into a v0.3 WebSocket-only card.
const V03_WEBSOCKET_FIELDS: &str =
    r#""url":"http://127.0.0.1:1/","preferredTransport":"WEBSOCKET","unused""#;

#[tokio::test]
async fn add_refuses_unreachable_agents_and_invalid_cards_and_stores_nothing() {
    guard(async {
        let env = TestEnv::new();
        // A fresh journal: a failed add does not even create it.
        let o = run(&env, &["agents", "add", &dead_url()]).await;
        assert_code(&o, 1);
        assert!(
            stderr(&o).contains("was not registered; nothing was stored")
                && stderr(&o).contains("could not connect"),
            "{}",
            stderr(&o)
        );
        assert!(!env.journal().exists());

        let good = scripted("Good agent", &["echo"]).await;
        assert_code(&run(&env, &["agents", "add", &good.url()]).await, 0);

        let skill = json!([{"id": "s", "name": "S", "description": "d", "tags": []}]);
        let websocket_only = json!({
            "name": "WebSocket only", "description": "d", "version": "1", "capabilities": {},
            "supportedInterfaces": [
                {"url": "http://127.0.0.1:1/", "protocolBinding": "WEBSOCKET", "protocolVersion": "1.0"}
            ],
            "defaultInputModes": [], "defaultOutputModes": [], "skills": skill,
        })
        .to_string();
        // The same card in v0.3's shape: a top-level `url` whose transport is WebSocket.
        let v03_websocket =
            websocket_only.replace("\"supportedInterfaces\"", V03_WEBSOCKET_FIELDS);
        let card_with = |skills: Value| {
            move |base: &str| {
                json!({
                    "name": "n", "description": "d", "version": "1", "capabilities": {},
                    "supportedInterfaces": [
                        {"url": base, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
                    ],
                    "defaultInputModes": [], "defaultOutputModes": [], "skills": skills.clone(),
                })
                .to_string()
            }
        };
        let cases: Vec<(&str, CardServer, &str)> = vec![
            (
                "no interface we speak",
                CardServer::start(move |_| websocket_only.clone()).await,
                "offers no interface a2a-recover speaks (found: WEBSOCKET 1.0)",
            ),
            (
                "a v0.3 card offering only WebSocket",
                CardServer::start(move |_| v03_websocket.clone()).await,
                "offers no interface a2a-recover speaks (found: WEBSOCKET 0.3.0)",
            ),
            (
                "not JSON",
                CardServer::start(|_| "{\"name\": \"cut".to_owned()).await,
                "invalid JSON",
            ),
            (
                "a skill without an id",
                CardServer::start(card_with(
                    json!([{"name": "S", "description": "d", "tags": []}]),
                ))
                .await,
                "invalid agent card",
            ),
            (
                "a skill with an empty id",
                CardServer::start(card_with(
                    json!([{"id": " ", "name": "S", "description": "d", "tags": []}]),
                ))
                .await,
                "skill 1 of the card has an empty `id`",
            ),
            (
                "no skills",
                CardServer::start(card_with(json!([]))).await,
                "the card lists no skills",
            ),
        ];
        for (what, server, says) in &cases {
            let o = run(&env, &["agents", "add", &server.url]).await;
            assert_eq!(code(&o), 1, "{what}: {}", stderr(&o));
            let err = stderr(&o);
            assert!(
                err.starts_with(&format!(
                    "error: `{}` was not registered; nothing was stored\n",
                    server.url
                )),
                "{what}: {err}"
            );
            assert!(err.contains(says), "{what}: {err}");
            assert!(err.contains("\nhint: "), "{what}: {err}");
            assert!(stdout(&o).is_empty(), "{what}: {}", stdout(&o));
        }
        let o = run(&env, &["agents", "add", &dead_url(), "--format", "json"]).await;
        assert_code(&o, 1);
        assert!(records_after_begin(&o, "agents add").is_empty());
        assert_eq!(count(&env.journal(), "agents"), 1, "only the good agent");
        let agents = listed(&env).await;
        assert_eq!(agents.len(), 1);
        assert_eq!(agents[0]["url"], good.card_url());
    })
    .await;
}

#[tokio::test]
async fn add_checks_the_token_variable_before_anything() {
    guard(async {
        let env = TestEnv::new();
        let agent = scripted("Agent", &["echo"]).await;
        let o = run(
            &env,
            &["agents", "add", &agent.url(), "--token-env", "NOT_SET"],
        )
        .await;
        assert_code(&o, 2);
        assert_eq!(
            stderr(&o),
            "error: --token-env: environment variable `NOT_SET` is not set\n\n\
             hint: export `NOT_SET` with the agent's bearer token, or drop --token-env\n"
        );
        assert!(!env.journal().exists());
        let o = run(&env, &["agents", "add", "http://user:pw@127.0.0.1:1/"]).await;
        assert_code(&o, 2);
        assert!(!stderr(&o).contains("pw"), "{}", stderr(&o));
        assert!(!env.journal().exists());
    })
    .await;
}

#[tokio::test]
async fn remove_takes_an_agent_out_and_unknown_ones_are_usage_errors() {
    guard(async {
        let env = TestEnv::new();
        let a = scripted("A", &["car"]).await;
        let b = scripted("B", &["car"]).await;
        let o = run(&env, &["agents", "remove", &a.url()]).await;
        assert_code(&o, 2);
        assert_eq!(
            stderr(&o),
            format!(
                "error: `{}` is not in the registry\n\n\
                 hint: `a2a-recover agents list` shows the registered agents\n",
                a.url()
            )
        );
        assert_code(&run(&env, &["agents", "add", &a.url()]).await, 0);
        assert_code(&run(&env, &["agents", "add", &b.url()]).await, 0);
        let o = run(&env, &["agents", "remove", &a.card_url()]).await;
        assert_code(&o, 0);
        assert_eq!(
            stdout(&o),
            format!(
                "removed {} from the registry; steps already delegated to it keep it.\n",
                a.url()
            )
        );
        assert_code(&run(&env, &["agents", "remove", &a.url()]).await, 2);
        let agents = listed(&env).await;
        assert_eq!(agents.len(), 1);
        assert_eq!(agents[0]["url"], b.card_url());
        // Added again, it goes last: registration order is the order of trial.
        assert_code(&run(&env, &["agents", "add", &a.url()]).await, 0);
        let urls: Vec<Value> = listed(&env)
            .await
            .iter()
            .map(|r| r["url"].clone())
            .collect();
        assert_eq!(urls, [json!(b.card_url()), json!(a.card_url())]);
    })
    .await;
}

#[tokio::test]
async fn delegate_skill_picks_the_first_registered_agent_with_the_skill() {
    guard(async {
        let env = TestEnv::new();
        let flights = scripted("Flights", &["flight"]).await;
        let cars1 = scripted("Cars 1", &["car"]).await;
        let cars2 = scripted("Cars 2", &["car", "hotel"]).await;
        for agent in [&flights, &cars1, &cars2] {
            assert_code(&run(&env, &["agents", "add", &agent.url()]).await, 0);
        }

        let o = run(
            &env,
            &["delegate", "trip/car", "--skill", "car", "rent a car"],
        )
        .await;
        assert_code(&o, 0);
        assert!(stdout(&o).contains(&cars1.url()), "{}", stdout(&o));
        let o = run(
            &env,
            &["delegate", "trip/hotel", "--skill", "hotel", "book a room"],
        )
        .await;
        assert_code(&o, 0);

        // Each task was created where the registry said, from our messageId.
        let car = &attempts(&env, "trip/car").await[0];
        assert_eq!(car["agent"], cars1.card_url());
        let stats = cars1.stats();
        assert_eq!(stats.tasks.len(), 1);
        assert_eq!(Some(stats.tasks[0].id.as_str()), car["taskId"].as_str());
        assert_eq!(
            Some(stats.tasks[0].message_id.as_str()),
            car["messageId"].as_str()
        );
        assert_eq!(
            attempts(&env, "trip/hotel").await[0]["agent"],
            cars2.card_url()
        );
        assert_eq!(cars2.stats().tasks.len(), 1);
        assert!(flights.stats().tasks.is_empty());

        // The step is bound to the skill (re-delegation finds alternatives through it).
        let j = Journal::open_read_only(&env.journal(), Duration::from_secs(10)).unwrap();
        let step = j
            .step(&StepName::parse("trip/car").unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(step.step.spec.binding, Binding::Skill("car".to_owned()));
        drop(j);

        // A re-run continues with the step's agent, even once it left the registry.
        assert_code(&run(&env, &["agents", "remove", &cars1.url()]).await, 0);
        let o = run(
            &env,
            &["delegate", "trip/car", "--skill", "car", "rent a car"],
        )
        .await;
        assert_code(&o, 0);
        assert!(
            stdout(&o).contains(&format!("is already delegated to {}", cars1.url())),
            "{}",
            stdout(&o)
        );
        assert_eq!(cars1.stats().tasks.len(), 1, "nothing was sent again");

        // No agent with the skill: a usage error, nothing journaled.
        let events = count(&env.journal(), "events");
        let o = run(&env, &["delegate", "trip/boat", "--skill", "boat", "sail"]).await;
        assert_code(&o, 2);
        assert_eq!(
            stderr(&o),
            "error: no registered agent advertises the skill `boat`\n\n\
             hint: register one with `a2a-recover agents add URL`; `a2a-recover agents list` \
             shows each agent's skills\n"
        );
        assert_unknown_step(&env, "trip/boat").await;
        assert_eq!(count(&env.journal(), "events"), events);
    })
    .await;
}

#[tokio::test]
async fn delegate_skill_uses_the_registered_credential_variable() {
    guard(async {
        let env = TestEnv::new();
        let agent = scripted("Cars", &["car"]).await;
        let o = run_with(
            &env,
            &["agents", "add", &agent.url(), "--token-env", "CAR_TOKEN"],
            &[("CAR_TOKEN", "t0ken")],
        )
        .await;
        assert_code(&o, 0);
        // Unset at delegate time: a usage error before anything is committed.
        let o = run(&env, &["delegate", "a/car", "--skill", "car", "rent"]).await;
        assert_code(&o, 2);
        assert!(
            stderr(&o).contains("`CAR_TOKEN` is not set") && stderr(&o).contains("export"),
            "{}",
            stderr(&o)
        );
        assert_unknown_step(&env, "a/car").await;
        assert!(agent.stats().tasks.is_empty());

        let o = run_with(
            &env,
            &["delegate", "a/car", "--skill", "car", "rent"],
            &[("CAR_TOKEN", "t0ken")],
        )
        .await;
        assert_code(&o, 0);
        let a = &attempts(&env, "a/car").await[0];
        assert_eq!(a["tokenEnv"], "CAR_TOKEN");
        assert_eq!(agent.stats().tasks.len(), 1);
    })
    .await;
}

/// The official Python SDK server, registered like any agent, is picked by `--skill` and the task
/// is created there: GetTask on it returns the journaled task with our message in its history.
#[tokio::test]
async fn the_official_python_agent_is_registered_and_picked_by_skill() {
    guard(async {
        let env = TestEnv::new();
        let py = start_python_agent();
        let o = run(&env, &["agents", "add", &py.url]).await;
        assert!(code(&o) == 0, "{}\n{}", stderr(&o), py.context());
        let agents = listed(&env).await;
        assert_eq!(agents.len(), 1);
        assert_eq!(agents[0]["skills"][0]["id"], "interop");

        let o = run(
            &env,
            &["delegate", "py/echo", "--skill", "interop", "hello there"],
        )
        .await;
        assert!(code(&o) == 0, "{}\n{}", stderr(&o), py.context());
        let a = &attempts(&env, "py/echo").await[0];
        assert_eq!(a["agent"], agents[0]["url"]);
        let task_id = a["taskId"].as_str().expect("a task id is journaled");

        let client = A2aClient::new(ClientConfig {
            timeout: Duration::from_secs(20),
            max_response_size: 16 * 1024 * 1024,
            stream_idle_timeout: Duration::from_secs(20),
            max_look_size: 64 * 1024 * 1024,
            max_card_size: a2a_recover::a2a::DEFAULT_MAX_CARD_SIZE,
        })
        .unwrap();
        let info = client.fetch_card(&py.url, None).await.unwrap();
        let task = client
            .get_task(&Endpoint::from_card(&info, None, false), task_id, None)
            .await
            .unwrap_or_else(|e| panic!("GetTask {task_id}: {e}\n{}", py.context()));
        assert_eq!(task.value.id, task_id);
        let history = task.raw["history"].as_array().cloned().unwrap_or_default();
        assert!(
            history.iter().any(|m| m["messageId"] == a["messageId"]),
            "our messageId is not in the task's history: {}",
            task.raw
        );
    })
    .await;
}

/// Nothing was journaled for `step`: `inspect` says it is unknown (exit 2).
async fn assert_unknown_step(env: &TestEnv, step: &str) {
    let o = run(env, &["inspect", step]).await;
    assert_code(&o, 2);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("unknown step"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
