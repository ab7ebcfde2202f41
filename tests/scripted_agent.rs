//! The scripted A2A agent, driven over real HTTP with reqwest and serde_json (not our client).

use std::future::Future;
use std::time::Duration;

use a2a_recover::scripted_agent::{AgentConfig, DropMode, FailMode, ScriptedAgent, ServedBinding};
use serde_json::{Value, json};

use crate::common::wait::{GUARD, poll_for};
use crate::common::{TestEnv, code, fast, stderr};

/// Fails a test that hangs (a guard, not a time limit on the behaviour).
async fn guard<F: Future<Output = ()>>(f: F) {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .expect("test hung for 30 s");
}

/// Reads a response body as JSON (reqwest's `json` feature is off in this crate).
trait JsonBody {
    async fn json_value(self) -> Value;
}

impl JsonBody for reqwest::Response {
    async fn json_value(self) -> Value {
        let bytes = self.bytes().await.expect("response body");
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&bytes)))
    }
}

struct Client {
    http: reqwest::Client,
    url: String,
    next_id: std::cell::Cell<u64>,
}

/// What a streaming call answered.
struct Streamed {
    content_type: String,
    /// The SSE events' JSON-RPC responses (or the single plain JSON body).
    events: Vec<Value>,
    /// Whether the body ended cleanly (false: the connection broke).
    clean_end: bool,
}

impl Client {
    fn new(agent: &ScriptedAgent) -> Self {
        Self {
            http: reqwest::Client::new(),
            url: agent.url(),
            next_id: std::cell::Cell::new(1),
        }
    }

    fn envelope(&self, method: &str, params: &Value) -> Value {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    async fn post(&self, body: &Value, version: Option<&str>) -> reqwest::Response {
        let mut req = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(v) = version {
            req = req.header("A2A-Version", v);
        }
        req.send().await.expect("POST")
    }

    /// Calls a method and returns the whole JSON-RPC response (HTTP 200 asserted).
    async fn call(&self, method: &str, params: Value) -> Value {
        let resp = self
            .post(&self.envelope(method, &params), Some("1.0"))
            .await;
        assert_eq!(resp.status(), 200);
        resp.json_value().await
    }

    /// Calls a method and returns its `result`, failing on an error.
    async fn ok(&self, method: &str, params: Value) -> Value {
        let v = self.call(method, params).await;
        assert!(v.get("error").is_none(), "{method} failed: {v}");
        v["result"].clone()
    }

    /// Calls a method and returns its `error`, failing on a result.
    async fn err(&self, method: &str, params: Value) -> Value {
        let v = self.call(method, params).await;
        assert!(v.get("result").is_none(), "{method} did not fail: {v}");
        v["error"].clone()
    }

    async fn send(&self, message: Value, immediate: bool) -> Value {
        self.ok(
            "SendMessage",
            json!({"message": message, "configuration": {"returnImmediately": immediate}}),
        )
        .await
    }

    async fn get(&self, id: &str) -> Value {
        self.ok("GetTask", json!({"id": id})).await
    }

    /// Polls GetTask until the state is `state`.
    async fn wait_state(&self, id: &str, state: &str) -> Value {
        poll_for(&format!("task {id} to become {state}"), GUARD, || async {
            let task = self.get(id).await;
            if task["status"]["state"] == state {
                Ok(task)
            } else {
                Err(task)
            }
        })
        .await
    }

    async fn stream(&self, method: &str, params: Value) -> Streamed {
        let mut resp = self
            .post(&self.envelope(method, &params), Some("1.0"))
            .await;
        assert_eq!(resp.status(), 200);
        let content_type = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        if content_type.starts_with("application/json") {
            let v: Value = resp.json_value().await;
            return Streamed {
                content_type,
                events: vec![v],
                clean_end: true,
            };
        }
        let mut buf = Vec::new();
        let mut events = Vec::new();
        let clean_end = loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => buf.extend_from_slice(&chunk),
                Ok(None) => break true,
                Err(_) => break false,
            }
            while let Some(end) = buf.windows(2).position(|w| w == b"\n\n") {
                let frame: Vec<u8> = buf.drain(..end + 2).collect();
                let text = std::str::from_utf8(&frame).expect("UTF-8 event");
                let data = text
                    .strip_prefix("data: ")
                    .unwrap_or_else(|| panic!("not a data line: {text:?}"));
                events.push(serde_json::from_str(data.trim_end()).expect("event JSON"));
            }
        };
        assert!(buf.is_empty() || !clean_end, "trailing bytes: {buf:?}");
        Streamed {
            content_type,
            events,
            clean_end,
        }
    }
}

fn user(id: &str, text: &str) -> Value {
    json!({"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]})
}

fn artifact_texts(task: &Value, artifact_id: &str) -> Vec<String> {
    task["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["artifactId"] == artifact_id)
        .flat_map(|a| a["parts"].as_array().cloned().unwrap_or_default())
        .map(|p| p["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn reason(error: &Value) -> &str {
    error["data"][0]["reason"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn card_is_a_v1_card_with_etag() {
    guard(async {
        let agent = ScriptedAgent::start(
            AgentConfig {
                name: "hotel-agent".to_owned(),
                skills: vec!["hotel".to_owned(), "car".to_owned()],
                ..fast()
            },
            0,
        )
        .await
        .unwrap();
        let http = reqwest::Client::new();
        let resp = http.get(agent.card_url()).send().await.unwrap();
        assert_eq!(resp.status(), 200);
        let etag = resp.headers()["etag"].to_str().unwrap().to_owned();
        let card: Value = resp.json_value().await;
        assert_eq!(card["name"], "hotel-agent");
        assert!(card["description"].as_str().is_some_and(|d| !d.is_empty()));
        assert!(card["version"].is_string());
        assert_eq!(
            card["supportedInterfaces"],
            json!([{"url": agent.url(), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}])
        );
        assert_eq!(card["capabilities"], json!({"streaming": true}));
        assert_eq!(card["defaultInputModes"], json!(["text/plain"]));
        assert_eq!(card["defaultOutputModes"], json!(["text/plain"]));
        let skills = card["skills"].as_array().unwrap();
        assert_eq!(skills.len(), 2);
        assert_eq!(skills[0]["id"], "hotel");
        assert_eq!(skills[0]["name"], "hotel");
        assert_eq!(skills[0]["tags"], json!(["hotel"]));
        assert!(skills[1]["description"].is_string());
        let cached = http
            .get(agent.card_url())
            .header("If-None-Match", &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(cached.status(), 304);
        agent.shutdown().await;

        let agent = ScriptedAgent::start(
            AgentConfig {
                no_streaming: true,
                ..fast()
            },
            0,
        )
        .await
        .unwrap();
        let card: Value = http
            .get(agent.card_url())
            .send()
            .await
            .unwrap()
            .json_value()
            .await;
        assert_eq!(card["capabilities"], json!({"streaming": false}));
        assert_eq!(card["skills"][0]["id"], "echo");
        let c = Client::new(&agent);
        let e = c
            .err("SendStreamingMessage", json!({"message": user("m1", "hi")}))
            .await;
        assert_eq!(e["code"], -32004);
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn each_scenario_reaches_its_state() {
    guard(async {
        let agent = ScriptedAgent::start(fast(), 0).await.unwrap();
        let c = Client::new(&agent);
        let cases = [
            ("work:2", "TASK_STATE_COMPLETED", None),
            ("work", "TASK_STATE_COMPLETED", None),
            ("work:0", "TASK_STATE_COMPLETED", None),
            (
                "ask for rooms",
                "TASK_STATE_INPUT_REQUIRED",
                Some("two rooms or one?"),
            ),
            (
                "auth",
                "TASK_STATE_AUTH_REQUIRED",
                Some("authorization needed"),
            ),
            (
                "fail",
                "TASK_STATE_FAILED",
                Some("failed: scripted failure"),
            ),
            (
                "reject",
                "TASK_STATE_REJECTED",
                Some("rejected: no availability"),
            ),
            ("book a hotel", "TASK_STATE_COMPLETED", None),
        ];
        for (i, (text, state, question)) in cases.into_iter().enumerate() {
            let result = c.send(user(&format!("m{i}"), text), false).await;
            let task = &result["task"];
            assert_eq!(task["status"]["state"], state, "{text}: {task}");
            let status_text = &task["status"]["message"]["parts"][0]["text"];
            match question {
                Some(q) => {
                    assert_eq!(status_text, q, "{text}");
                    assert_eq!(task["status"]["message"]["role"], "ROLE_AGENT");
                }
                None => assert!(status_text.is_null(), "{text}: {task}"),
            }
            assert_eq!(task["history"][0]["messageId"], format!("m{i}"));
            assert_eq!(task["history"][0]["taskId"], task["id"]);
        }
        let work2 = c.send(user("w2", "work:2"), false).await;
        assert_eq!(
            artifact_texts(&work2["task"], "result"),
            ["chunk 1;", "chunk 2;"]
        );
        let steps: Vec<_> = work2["task"]["history"]
            .as_array()
            .unwrap()
            .iter()
            .skip(1)
            .map(|m| m["parts"][0]["text"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(steps, ["step 1/2", "step 2/2"]);
        let work0 = c.send(user("w0", "work:0"), false).await;
        assert_eq!(artifact_texts(&work0["task"], "result"), ["done;"]);
        let echo = c.send(user("e", "book a hotel"), false).await;
        assert_eq!(artifact_texts(&echo["task"], "echo"), ["book a hotel"]);
        let redelegated = c
            .send(user("r", "[previous task t-1 failed]\nfail now"), false)
            .await;
        assert_eq!(redelegated["task"]["status"]["state"], "TASK_STATE_FAILED");

        let direct = c.send(user("d", "direct hello"), false).await;
        assert!(direct.get("task").is_none(), "{direct}");
        assert_eq!(direct["message"]["role"], "ROLE_AGENT");
        assert!(direct["message"]["contextId"].is_string());
        assert_eq!(
            direct["message"]["parts"][0]["text"],
            "direct: direct hello"
        );
        let stats = agent.stats();
        assert_eq!(stats.tasks_per_message_id["d"], 0);
        assert_eq!(stats.tasks_per_message_id["m0"], 1);
        assert_eq!(stats.requests["SendMessage"], 13);
        agent.shutdown().await;

        let agent = ScriptedAgent::start(
            AgentConfig {
                scenario: Some("fail".to_owned()),
                ..fast()
            },
            0,
        )
        .await
        .unwrap();
        let c = Client::new(&agent);
        let forced = c.send(user("m", "work:3"), false).await;
        assert_eq!(forced["task"]["status"]["state"], "TASK_STATE_FAILED");
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn a_reply_on_the_same_task_completes_ask_and_auth() {
    guard(async {
        let agent = ScriptedAgent::start(fast(), 0).await.unwrap();
        let c = Client::new(&agent);
        let created = c.send(user("q1", "ask"), true).await;
        assert_eq!(created["task"]["status"]["state"], "TASK_STATE_SUBMITTED");
        let id = created["task"]["id"].as_str().unwrap().to_owned();
        let ctx = created["task"]["contextId"].as_str().unwrap().to_owned();
        let asked = c.wait_state(&id, "TASK_STATE_INPUT_REQUIRED").await;
        let question_ts = asked["status"]["timestamp"].as_str().unwrap().to_owned();
        let mut reply = user("q2", "two rooms");
        reply["taskId"] = json!(id);
        reply["contextId"] = json!(ctx);
        let done = c.send(reply.clone(), false).await;
        let task = &done["task"];
        assert_eq!(task["id"], id.as_str());
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(artifact_texts(task, "booking"), ["booked: two rooms"]);
        let history: Vec<_> = task["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["role"].as_str().unwrap().to_owned(),
                    m["parts"][0]["text"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        assert_eq!(
            history,
            [
                ("ROLE_USER".to_owned(), "ask".to_owned()),
                ("ROLE_AGENT".to_owned(), "two rooms or one?".to_owned()),
                ("ROLE_USER".to_owned(), "two rooms".to_owned()),
            ]
        );
        let ts = |t: &Value| {
            chrono::DateTime::parse_from_rfc3339(t["status"]["timestamp"].as_str().unwrap())
                .unwrap()
        };
        assert!(ts(task) > chrono::DateTime::parse_from_rfc3339(&question_ts).unwrap());
        // The task is terminal now: another message on it is refused.
        reply["messageId"] = json!("q3");
        let e = c.err("SendMessage", json!({"message": reply})).await;
        assert_eq!(e["code"], -32004);
        assert_eq!(reason(&e), "UNSUPPORTED_OPERATION");

        let auth = c.send(user("a1", "auth"), false).await;
        let auth_id = auth["task"]["id"].as_str().unwrap();
        let mut go = user("a2", "token ready");
        go["taskId"] = json!(auth_id);
        let done = c.send(go, false).await;
        assert_eq!(done["task"]["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(
            artifact_texts(&done["task"], "result"),
            ["authorized: token ready"]
        );

        let mut unknown = user("u", "hello");
        unknown["taskId"] = json!("no-such-task");
        let e = c.err("SendMessage", json!({"message": unknown})).await;
        assert_eq!(e["code"], -32001);
        assert_eq!(reason(&e), "TASK_NOT_FOUND");

        let stats = agent.stats();
        let on_task: Vec<_> = stats
            .messages
            .iter()
            .filter(|m| m.task_id.as_deref() == Some(id.as_str()))
            .map(|m| m.message_id.as_str())
            .collect();
        assert_eq!(on_task, ["q2", "q3"]);
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn blocking_send_waits_for_terminal_or_interrupted() {
    guard(async {
        let agent = ScriptedAgent::start(fast(), 0).await.unwrap();
        let c = Client::new(&agent);
        let immediate = c.send(user("i", "work:3"), true).await;
        assert_eq!(immediate["task"]["status"]["state"], "TASK_STATE_SUBMITTED");
        assert!(immediate["task"].get("artifacts").is_none());
        let blocking = c
            .ok("SendMessage", json!({"message": user("b", "work:3")}))
            .await;
        assert_eq!(blocking["task"]["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(
            artifact_texts(&blocking["task"], "result"),
            ["chunk 1;", "chunk 2;", "chunk 3;"]
        );
        let interrupted = c.send(user("q", "ask"), false).await;
        assert_eq!(
            interrupted["task"]["status"]["state"],
            "TASK_STATE_INPUT_REQUIRED"
        );
        let capped = c
            .ok(
                "SendMessage",
                json!({"message": user("h", "work:2"),
                       "configuration": {"historyLength": 1}}),
            )
            .await;
        let history = capped["task"]["history"].as_array().unwrap();
        assert_eq!(history.len(), 1);
        assert_eq!(history[0]["parts"][0]["text"], "step 2/2");
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn get_task_history_length() {
    guard(async {
        let agent = ScriptedAgent::start(fast(), 0).await.unwrap();
        let c = Client::new(&agent);
        let t = c.send(user("m", "work:2"), false).await;
        let id = t["task"]["id"].as_str().unwrap();
        let all = c.get(id).await;
        assert_eq!(all["history"].as_array().unwrap().len(), 3);
        let none = c.ok("GetTask", json!({"id": id, "historyLength": 0})).await;
        assert!(none.get("history").is_none(), "{none}");
        let two = c.ok("GetTask", json!({"id": id, "historyLength": 2})).await;
        let texts: Vec<_> = two["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["parts"][0]["text"].clone())
            .collect();
        assert_eq!(texts, [json!("step 1/2"), json!("step 2/2")]);
        let e = c
            .err("GetTask", json!({"id": id, "historyLength": -1}))
            .await;
        assert_eq!(e["code"], -32602);
        let e = c.err("GetTask", json!({"id": "nope"})).await;
        assert_eq!(e["code"], -32001);
        assert_eq!(e["data"][0]["metadata"]["taskId"], "nope");
        // Timestamps are RFC 3339 UTC with `Z` and at most µs precision.
        let ts = all["status"]["timestamp"].as_str().unwrap();
        assert!(ts.ends_with('Z'), "{ts}");
        let fraction = ts.split('.').nth(1).map_or(0, |f| f.len() - 1);
        assert!([0, 3, 6].contains(&fraction), "{ts}");
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn list_tasks_pages_by_status_timestamp_descending() {
    guard(async {
        let agent = ScriptedAgent::start(fast(), 0).await.unwrap();
        let c = Client::new(&agent);
        let mut created = Vec::new();
        for i in 0..7 {
            let mut m = user(&format!("m{i}"), "echo this");
            m["contextId"] = json!(if i % 2 == 0 { "even" } else { "odd" });
            let t = c.send(m, false).await;
            created.push(t["task"]["id"].as_str().unwrap().to_owned());
        }
        let mut seen = Vec::new();
        let mut token = String::new();
        let mut pages = 0;
        loop {
            let mut params = json!({"pageSize": 2});
            if !token.is_empty() {
                params["pageToken"] = json!(token);
            }
            let page = c.ok("ListTasks", params).await;
            pages += 1;
            assert_eq!(page["totalSize"], 7);
            assert_eq!(page["pageSize"], 2);
            for t in page["tasks"].as_array().unwrap() {
                assert!(t.get("artifacts").is_none(), "artifacts omitted by default");
                seen.push(t["id"].as_str().unwrap().to_owned());
            }
            token = page["nextPageToken"]
                .as_str()
                .expect("nextPageToken always present")
                .to_owned();
            if token.is_empty() {
                break;
            }
            assert!(pages < 10, "pagination does not end");
        }
        assert_eq!(pages, 4);
        let mut newest_first = created.clone();
        newest_first.reverse();
        assert_eq!(seen, newest_first, "status timestamp descending");
        // The first task created is only on page 4 of 2-task pages.
        assert_eq!(seen.iter().position(|id| *id == created[0]), Some(6));

        let with = c
            .ok(
                "ListTasks",
                json!({"includeArtifacts": true, "historyLength": 0, "pageSize": 1}),
            )
            .await;
        let t = &with["tasks"][0];
        assert_eq!(artifact_texts(t, "echo"), ["echo this"]);
        assert!(t.get("history").is_none(), "{t}");

        // A task that changes moves to the front.
        c.send(
            json!({"messageId": "late", "role": "ROLE_USER", "contextId": "odd",
                   "parts": [{"text": "work:1"}]}),
            false,
        )
        .await;
        let first = c.ok("ListTasks", json!({"pageSize": 1})).await;
        assert_eq!(first["tasks"][0]["history"][0]["messageId"], "late");
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn list_tasks_filters_and_bad_params() {
    guard(async {
        let agent = ScriptedAgent::start(fast(), 0).await.unwrap();
        let c = Client::new(&agent);
        let mut ids = Vec::new();
        for (i, (ctx, text)) in [("a", "echo"), ("b", "ask"), ("a", "fail"), ("b", "echo")]
            .into_iter()
            .enumerate()
        {
            let mut m = user(&format!("m{i}"), text);
            m["contextId"] = json!(ctx);
            let t = c.send(m, false).await;
            ids.push(t["task"].clone());
        }
        let in_a = c.ok("ListTasks", json!({"contextId": "a"})).await;
        let a_ids: Vec<_> = in_a["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].clone())
            .collect();
        assert_eq!(a_ids, [ids[2]["id"].clone(), ids[0]["id"].clone()]);
        assert_eq!(in_a["totalSize"], 2);
        assert_eq!(in_a["nextPageToken"], "");
        let a_paged = c
            .ok("ListTasks", json!({"contextId": "a", "pageSize": 1}))
            .await;
        assert_eq!(a_paged["tasks"][0]["id"], ids[2]["id"]);
        let a_rest = c
            .ok(
                "ListTasks",
                json!({"contextId": "a", "pageSize": 1,
                                    "pageToken": a_paged["nextPageToken"]}),
            )
            .await;
        assert_eq!(a_rest["tasks"][0]["id"], ids[0]["id"]);
        assert_eq!(a_rest["nextPageToken"], "");

        // Inclusive: a task whose status timestamp equals the bound is listed.
        let bound = ids[2]["status"]["timestamp"].clone();
        let after = c
            .ok("ListTasks", json!({"statusTimestampAfter": bound}))
            .await;
        let after_ids: Vec<_> = after["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].clone())
            .collect();
        assert_eq!(after_ids, [ids[3]["id"].clone(), ids[2]["id"].clone()]);
        assert_eq!(after["totalSize"], 2);

        let waiting = c
            .ok("ListTasks", json!({"status": "TASK_STATE_INPUT_REQUIRED"}))
            .await;
        assert_eq!(waiting["tasks"].as_array().unwrap().len(), 1);
        assert_eq!(waiting["tasks"][0]["id"], ids[1]["id"]);
        let none = c.ok("ListTasks", json!({"contextId": "zzz"})).await;
        assert_eq!(
            none,
            json!({"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0})
        );

        for bad in [
            json!({"pageSize": 0}),
            json!({"pageSize": 101}),
            json!({"pageToken": "not-a-token"}),
            json!({"historyLength": -2}),
            json!({"status": "working"}),
        ] {
            let e = c.err("ListTasks", bad.clone()).await;
            assert_eq!(e["code"], -32602, "{bad}");
            assert_eq!(reason(&e), "INVALID_PARAMS", "{bad}");
        }
        agent.shutdown().await;

        let agent = ScriptedAgent::start(
            AgentConfig {
                no_list_tasks: true,
                ..fast()
            },
            0,
        )
        .await
        .unwrap();
        let c = Client::new(&agent);
        let e = c.err("ListTasks", json!({})).await;
        assert_eq!(e["code"], -32601);
        assert_eq!(agent.stats().requests["ListTasks"], 1);
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn envelope_and_version_errors() {
    guard(async {
        let agent = ScriptedAgent::start(fast(), 0).await.unwrap();
        let c = Client::new(&agent);
        let get = json!({"jsonrpc": "2.0", "id": "x1", "method": "GetTask", "params": {"id": "t"}});
        for version in [None, Some("0.3"), Some("2.0")] {
            let resp = c.post(&get, version).await;
            assert_eq!(resp.status(), 200);
            let v: Value = resp.json_value().await;
            assert_eq!(v["id"], "x1");
            assert_eq!(v["error"]["code"], -32009, "{version:?}: {v}");
            assert_eq!(reason(&v["error"]), "VERSION_NOT_SUPPORTED");
            assert_eq!(v["error"]["data"][0]["domain"], "a2a-protocol.org");
            assert_eq!(
                v["error"]["data"][0]["@type"],
                "type.googleapis.com/google.rpc.ErrorInfo"
            );
        }
        let v: Value = c.post(&get, Some("1.1")).await.json_value().await;
        assert_eq!(v["error"]["code"], -32001, "any 1.x is accepted: {v}");

        let raw = |body: &'static str| {
            let http = c.http.clone();
            let url = c.url.clone();
            async move {
                let resp = http
                    .post(url)
                    .header("A2A-Version", "1.0")
                    .header("content-type", "application/json")
                    .body(body)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(resp.status(), 200);
                resp.json_value().await
            }
        };
        assert_eq!(raw("{nope").await["error"]["code"], -32700);
        assert_eq!(raw("[]").await["error"]["code"], -32600);
        assert_eq!(
            raw(r#"{"jsonrpc":"1.0","id":1,"method":"GetTask"}"#).await["error"]["code"],
            -32600
        );
        let unknown = raw(r#"{"jsonrpc":"2.0","id":1,"method":"message/send"}"#).await;
        assert_eq!(unknown["error"]["code"], -32601);
        assert!(unknown["error"].get("data").is_none());

        for (message, field) in [
            (
                json!({"role": "ROLE_USER", "parts": [{"text": "x"}]}),
                "message.messageId",
            ),
            (
                json!({"messageId": "m", "parts": [{"text": "x"}]}),
                "message.role",
            ),
            (
                json!({"messageId": "m", "role": "ROLE_USER", "parts": []}),
                "message.parts",
            ),
        ] {
            let e = c.err("SendMessage", json!({"message": message})).await;
            assert_eq!(e["code"], -32602);
            assert_eq!(e["data"][1]["fieldViolations"][0]["field"], field);
        }
        let e = c.err("CreateTaskPushNotificationConfig", json!({})).await;
        assert_eq!(e["code"], -32003);

        let too_big = "x".repeat(2 * 1024 * 1024);
        let resp = c
            .post(
                &json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                          "params": {"message": user("big", &too_big)}}),
                Some("1.0"),
            )
            .await;
        assert_eq!(resp.status(), 413);
        assert!(agent.stats().messages.is_empty());
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn dedup_by_message_id_is_off_by_default() {
    guard(async {
        for dedup in [false, true] {
            let agent = ScriptedAgent::start(AgentConfig { dedup, ..fast() }, 0)
                .await
                .unwrap();
            let c = Client::new(&agent);
            let first = c.send(user("same", "echo"), true).await;
            let second = c.send(user("same", "echo"), true).await;
            let stats = agent.stats();
            assert_eq!(stats.messages.len(), 2);
            if dedup {
                assert_eq!(stats.tasks_per_message_id["same"], 1);
                assert_eq!(first["task"]["id"], second["task"]["id"]);
                assert_eq!(stats.tasks.len(), 1);
            } else {
                assert_eq!(stats.tasks_per_message_id["same"], 2);
                assert_ne!(first["task"]["id"], second["task"]["id"]);
                assert_eq!(stats.tasks.len(), 2);
                assert!(stats.tasks.iter().all(|t| t.message_id == "same"));
            }
            agent.shutdown().await;
        }
    })
    .await;
}

#[tokio::test]
async fn refused_context_id_names_the_field_and_creates_nothing() {
    guard(async {
        let agent = ScriptedAgent::start(
            AgentConfig {
                refuse_context_id: true,
                ..fast()
            },
            0,
        )
        .await
        .unwrap();
        let c = Client::new(&agent);
        let mut m = user("m1", "echo");
        m["contextId"] = json!("client-chosen");
        let e = c.err("SendMessage", json!({"message": m})).await;
        assert_eq!(e["code"], -32602);
        assert_eq!(reason(&e), "INVALID_PARAMS");
        assert!(e["message"].as_str().unwrap().contains("contextId"));
        assert_eq!(
            e["data"][1],
            json!({"@type": "type.googleapis.com/google.rpc.BadRequest",
                   "fieldViolations": [{"field": "message.contextId",
                                        "description": e["data"][1]["fieldViolations"][0]["description"]}]})
        );
        assert!(agent.stats().tasks.is_empty());
        assert!(agent.stats().tasks_per_message_id.is_empty());
        // Same messageId without a context id: the agent chooses one.
        let t = c.send(user("m1", "echo"), false).await;
        let ctx = t["task"]["contextId"].as_str().unwrap();
        assert_ne!(ctx, "client-chosen");
        assert!(!ctx.is_empty());
        // The agent's own context ids are accepted for follow-ups.
        let mut follow = user("m2", "echo again");
        follow["contextId"] = json!(ctx);
        let t2 = c.send(follow, false).await;
        assert_eq!(t2["task"]["contextId"], ctx);
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn scripted_503_before_or_after_processing() {
    guard(async {
        for mode in [FailMode::Before, FailMode::After] {
            let agent = ScriptedAgent::start(
                AgentConfig {
                    fail_rate: 1.0,
                    fail_mode: mode,
                    ..fast()
                },
                0,
            )
            .await
            .unwrap();
            let c = Client::new(&agent);
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                              "params": {"message": user("m1", "echo")}});
            let resp = c.post(&body, Some("1.0")).await;
            assert_eq!(resp.status(), 503);
            assert_eq!(resp.headers()["retry-after"], "1");
            let stats = agent.stats();
            match mode {
                FailMode::Before => {
                    assert!(stats.tasks.is_empty());
                    assert!(stats.messages.is_empty());
                }
                FailMode::After => {
                    assert_eq!(stats.tasks.len(), 1);
                    assert_eq!(stats.tasks_per_message_id["m1"], 1);
                    let listed = c.ok("ListTasks", json!({})).await;
                    assert_eq!(listed["tasks"][0]["history"][0]["messageId"], "m1");
                }
            }
            // Other methods never fail.
            c.ok("ListTasks", json!({})).await;
            agent.shutdown().await;
        }
        // A budget: the first two sends fail, then the agent works; the control re-arms it.
        let agent = ScriptedAgent::start(
            AgentConfig {
                fail_first: 2,
                ..fast()
            },
            0,
        )
        .await
        .unwrap();
        let c = Client::new(&agent);
        let mut codes = Vec::new();
        for i in 0..3 {
            let body = json!({"jsonrpc": "2.0", "id": i, "method": "SendMessage",
                              "params": {"message": user("same", "echo")}});
            codes.push(c.post(&body, Some("1.0")).await.status().as_u16());
        }
        assert_eq!(codes, [503, 503, 200]);
        assert_eq!(agent.stats().tasks.len(), 1);
        let resp = c
            .http
            .post(format!("{}_scripted/fail-next/1", agent.url()))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 204);
        let body = json!({"jsonrpc": "2.0", "id": 9, "method": "SendMessage",
                          "params": {"message": user("again", "echo")}});
        assert_eq!(c.post(&body, Some("1.0")).await.status(), 503);
        assert_eq!(c.post(&body, Some("1.0")).await.status(), 200);
        agent.shutdown().await;

        // A fractional rate fails some sends and not others, repeatably for a seed.
        let run = || async {
            let agent = ScriptedAgent::start(
                AgentConfig {
                    fail_rate: 0.5,
                    seed: 7,
                    ..fast()
                },
                0,
            )
            .await
            .unwrap();
            let c = Client::new(&agent);
            let mut codes = Vec::new();
            for i in 0..40 {
                let body = json!({"jsonrpc": "2.0", "id": i, "method": "SendMessage",
                                  "params": {"message": user(&format!("m{i}"), "echo")}});
                codes.push(c.post(&body, Some("1.0")).await.status().as_u16());
            }
            agent.shutdown().await;
            codes
        };
        let codes = run().await;
        assert!(codes.contains(&503) && codes.contains(&200), "{codes:?}");
        assert_eq!(codes, run().await);
    })
    .await;
}

#[tokio::test]
async fn terminal_tasks_are_forgotten_after_retention() {
    guard(async {
        let agent = ScriptedAgent::start(
            AgentConfig {
                forget_after: Some(Duration::from_millis(30)),
                ..fast()
            },
            0,
        )
        .await
        .unwrap();
        let c = Client::new(&agent);
        let done = c.send(user("m1", "echo"), false).await;
        let waiting = c.send(user("m2", "ask"), false).await;
        let id = done["task"]["id"].as_str().unwrap();
        poll_for("the finished task to be forgotten", GUARD, || async {
            let v = c.call("GetTask", json!({"id": id})).await;
            if v["error"]["code"] == -32001 {
                return Ok(());
            }
            assert_eq!(v["result"]["id"], id);
            Err(v)
        })
        .await;
        // Interrupted tasks are not terminal: they stay.
        let w = c.get(waiting["task"]["id"].as_str().unwrap()).await;
        assert_eq!(w["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
        let stats = agent.stats();
        assert!(stats.tasks.iter().any(|t| t.id == id && t.forgotten));
        let listed = c.ok("ListTasks", json!({})).await;
        assert_eq!(listed["totalSize"], 1);

        // The controls: complete and forget on demand.
        let http = reqwest::Client::new();
        let wid = waiting["task"]["id"].as_str().unwrap();
        let resp = http
            .post(format!("{}_scripted/complete/{wid}", agent.url()))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        let t: Value = resp.json_value().await;
        assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED");
        let again = http
            .post(format!("{}_scripted/complete/{wid}", agent.url()))
            .send()
            .await
            .unwrap();
        assert!(again.status() == 409 || again.status() == 404);
        let kept = c.send(user("m3", "ask"), false).await;
        let kid = kept["task"]["id"].as_str().unwrap();
        let resp = http
            .post(format!("{}_scripted/forget/{kid}", agent.url()))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 204);
        let e = c.err("GetTask", json!({"id": kid})).await;
        assert_eq!(e["code"], -32001);
        let stats: Value = http
            .get(format!("{}_scripted/stats", agent.url()))
            .send()
            .await
            .unwrap()
            .json_value()
            .await;
        assert_eq!(stats["tasksPerMessageId"]["m3"], 1);
        assert_eq!(stats["requests"]["SendMessage"], 3);
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn cancel_cancels_once_then_refuses() {
    guard(async {
        let agent = ScriptedAgent::start(fast(), 0).await.unwrap();
        let c = Client::new(&agent);
        let t = c.send(user("m", "work:1000"), true).await;
        let id = t["task"]["id"].as_str().unwrap();
        let canceled = c.ok("CancelTask", json!({"id": id})).await;
        assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
        let e = c.err("CancelTask", json!({"id": id})).await;
        assert_eq!(e["code"], -32002);
        assert_eq!(reason(&e), "TASK_NOT_CANCELABLE");
        let e = c.err("CancelTask", json!({"id": "nope"})).await;
        assert_eq!(e["code"], -32001);
        assert_eq!(agent.stats().cancels, [id, id, "nope"]);
        // The work stopped: the state stays CANCELED (that nothing happens takes time to see).
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(c.get(id).await["status"]["state"], "TASK_STATE_CANCELED");
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn streams_start_with_the_task_and_end_at_terminal() {
    guard(async {
        let agent = ScriptedAgent::start(fast(), 0).await.unwrap();
        let c = Client::new(&agent);
        let s = c
            .stream(
                "SendStreamingMessage",
                json!({"message": user("s1", "work:2")}),
            )
            .await;
        assert!(
            s.content_type.starts_with("text/event-stream"),
            "{}",
            s.content_type
        );
        assert!(s.clean_end);
        let kinds: Vec<String> = s
            .events
            .iter()
            .map(|e| {
                let r = e["result"].as_object().unwrap();
                assert_eq!(r.len(), 1, "{e}");
                r.keys().next().unwrap().clone()
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "task",
                "statusUpdate",
                "statusUpdate",
                "artifactUpdate",
                "statusUpdate",
                "artifactUpdate",
                "statusUpdate"
            ]
        );
        let id = s.events[0]["result"]["task"]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            s.events
                .iter()
                .all(|e| e["jsonrpc"] == "2.0" && e["id"].is_u64())
        );
        let last = &s.events[6]["result"]["statusUpdate"];
        assert_eq!(last["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(last["taskId"], id.as_str());
        let first_chunk = &s.events[3]["result"]["artifactUpdate"];
        assert!(first_chunk.get("append").is_none());
        let second_chunk = &s.events[5]["result"]["artifactUpdate"];
        assert_eq!(second_chunk["append"], true);
        assert_eq!(second_chunk["lastChunk"], true);

        // Subscribing to the terminal task: a plain JSON -32004, not SSE.
        let s = c.stream("SubscribeToTask", json!({"id": id})).await;
        assert!(s.content_type.starts_with("application/json"));
        assert_eq!(s.events[0]["error"]["code"], -32004);
        let s = c.stream("SubscribeToTask", json!({"id": "nope"})).await;
        assert_eq!(s.events[0]["error"]["code"], -32001);

        // Subscribing to running work: the Task snapshot first, then updates to the end.
        let t = c.send(user("s2", "work:3"), true).await;
        let id = t["task"]["id"].as_str().unwrap();
        let s = c.stream("SubscribeToTask", json!({"id": id})).await;
        assert!(s.clean_end);
        assert_eq!(s.events[0]["result"]["task"]["id"], id);
        let last = s.events.last().unwrap();
        assert_eq!(
            last["result"]["statusUpdate"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );

        // An interrupted task (a subscription to it stays open: tests/scripted_grpc.rs).
        let q = c.send(user("s3", "ask"), false).await;
        let qid = q["task"]["id"].as_str().unwrap();
        // The reply streams from a statusUpdate (like Python) to COMPLETED.
        let mut reply = user("s4", "one room");
        reply["taskId"] = json!(qid);
        let s = c
            .stream("SendStreamingMessage", json!({"message": reply}))
            .await;
        assert_eq!(
            s.events[0]["result"]["statusUpdate"]["status"]["state"],
            "TASK_STATE_WORKING"
        );
        assert_eq!(
            s.events.last().unwrap()["result"]["statusUpdate"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );

        // A direct answer streams one message.
        let s = c
            .stream(
                "SendStreamingMessage",
                json!({"message": user("s5", "direct")}),
            )
            .await;
        assert_eq!(s.events.len(), 1);
        assert_eq!(s.events[0]["result"]["message"]["role"], "ROLE_AGENT");
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn streams_are_cut_after_k_events() {
    guard(async {
        for mode in [DropMode::Eof, DropMode::Reset] {
            let agent = ScriptedAgent::start(
                AgentConfig {
                    drop_stream_after: Some(2),
                    drop_mode: mode,
                    ..fast()
                },
                0,
            )
            .await
            .unwrap();
            let c = Client::new(&agent);
            let s = c
                .stream(
                    "SendStreamingMessage",
                    json!({"message": user("d1", "work:5")}),
                )
                .await;
            assert_eq!(s.events.len(), 2, "{mode:?}");
            assert!(s.events[0]["result"]["task"].is_object());
            assert_eq!(s.clean_end, mode == DropMode::Eof, "{mode:?}");
            // The work goes on without a listener; a new subscription is cut the same way.
            let id = s.events[0]["result"]["task"]["id"].as_str().unwrap();
            let s = c.stream("SubscribeToTask", json!({"id": id})).await;
            assert!(s.events.len() <= 2, "{mode:?}");
            c.wait_state(id, "TASK_STATE_COMPLETED").await;
            agent.shutdown().await;
        }
    })
    .await;
}

#[tokio::test]
async fn the_command_prints_its_url_and_serves_the_card() {
    use tokio::io::AsyncBufReadExt;
    guard(async {
        let env = TestEnv::new();
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-recover"))
            .args([
                "scripted-agent",
                "--port",
                "0",
                "--tick",
                "20ms",
                "--skill",
                "hotel",
            ])
            .env_clear()
            .env("HOME", env.path().join("home"))
            .env("NO_COLOR", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn a2a-recover");
        let stdout = child.stdout.take().unwrap();
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let line = lines.next_line().await.unwrap().expect("a first line");
        let url = line
            .strip_prefix("listening on http://127.0.0.1:")
            .and_then(|rest| rest.strip_suffix('/'))
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"));
        assert!(url.parse::<u16>().is_ok_and(|p| p > 0), "{line}");
        let base = line.strip_prefix("listening on ").unwrap();
        let card: Value = reqwest::get(format!("{base}.well-known/agent-card.json"))
            .await
            .unwrap()
            .json_value()
            .await;
        assert_eq!(card["supportedInterfaces"][0]["url"], base);
        assert_eq!(card["skills"][0]["id"], "hotel");
        let pid = rustix::process::Pid::from_raw(child.id().unwrap() as i32).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
        let status = child.wait().await.unwrap();
        assert_eq!(status.code(), Some(143));
    })
    .await;
}

#[test]
fn bad_flags_are_usage_errors() {
    let env = TestEnv::new();
    let out = env.run(["scripted-agent", "--fail-rate", "1.5"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("not a probability"),
        "{}",
        stderr(&out)
    );
    let out = env.run(["scripted-agent", "--fail-mode", "sometimes"]);
    assert_eq!(code(&out), 2);
}

#[tokio::test]
async fn every_answer_parses_as_a2a_lf_types() {
    guard(async {
        let agent = ScriptedAgent::start(fast(), 0).await.unwrap();
        let c = Client::new(&agent);
        let card = reqwest::get(agent.card_url())
            .await
            .unwrap()
            .json_value()
            .await;
        let card: a2a::AgentCard = serde_json::from_value(card).expect("AgentCard");
        assert_eq!(card.supported_interfaces[0].url, agent.url());
        for text in ["work:2", "ask", "fail", "reject", "auth", "echo", "direct"] {
            let sent = c.send(user(text, text), false).await;
            let parsed: a2a::SendMessageResponse =
                serde_json::from_value(sent.clone()).expect("SendMessageResponse");
            if let a2a::SendMessageResponse::Task(task) = parsed {
                let got = c.get(&task.id).await;
                let got: a2a::Task = serde_json::from_value(got).expect("Task");
                assert_eq!(got.id, task.id);
                assert!(got.status.timestamp.is_some());
            } else {
                assert_eq!(text, "direct");
            }
        }
        let listed = c.ok("ListTasks", json!({"includeArtifacts": true})).await;
        let listed: a2a::ListTasksResponse =
            serde_json::from_value(listed).expect("ListTasksResponse");
        assert_eq!(listed.tasks.len(), 6);
        assert_eq!(listed.total_size, 6);
        let s = c
            .stream(
                "SendStreamingMessage",
                json!({"message": user("s", "work:2")}),
            )
            .await;
        for event in s.events {
            let _: a2a::StreamResponse =
                serde_json::from_value(event["result"].clone()).expect("StreamResponse");
        }
        let t = c.send(user("c", "work:100"), true).await;
        let canceled = c.ok("CancelTask", json!({"id": t["task"]["id"]})).await;
        let canceled: a2a::Task = serde_json::from_value(canceled).expect("Task");
        assert_eq!(canceled.status.state, a2a::TaskState::Canceled);
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn completed_tasks_make_bookings_that_cancel_removes() {
    guard(async {
        let agent = ScriptedAgent::start(fast(), 0).await.unwrap();
        let c = Client::new(&agent);
        let booking_url = |id: &str| format!("{}_scripted/bookings/{id}", agent.url());
        let http = reqwest::Client::new();
        let status = |url: String| {
            let http = http.clone();
            async move { http.get(url).send().await.unwrap().status().as_u16() }
        };
        let t = c.send(user("m1", "book a hotel"), false).await;
        let id = t["task"]["id"].as_str().unwrap().to_owned();
        assert_eq!(status(booking_url(&id)).await, 200);
        // A task that did not complete books nothing.
        let r = c.send(user("m2", "reject"), false).await;
        let rejected = r["task"]["id"].as_str().unwrap().to_owned();
        assert_eq!(status(booking_url(&rejected)).await, 404);
        // `cancel <id>` removes the booking, and makes none itself.
        let k = c.send(user("m3", &format!("cancel {id}")), false).await;
        let cancel_id = k["task"]["id"].as_str().unwrap().to_owned();
        assert_eq!(
            artifact_texts(&k["task"], "cancellation"),
            [format!("canceled: {id}")]
        );
        assert_eq!(status(booking_url(&id)).await, 404);
        assert_eq!(status(booking_url(&cancel_id)).await, 404);
        // A second cancel finds nothing to cancel.
        let k2 = c.send(user("m4", &format!("cancel {id}")), false).await;
        assert_eq!(
            artifact_texts(&k2["task"], "cancellation"),
            ["nothing to cancel"]
        );
        agent.shutdown().await;
    })
    .await;
}

/// Conformance: snake_case request fields (`history_length`, `message_id`, …) are read beside
/// lowerCamelCase, over JSON-RPC and in HTTP+JSON queries; the card is served with
/// `Cache-Control` and `Last-Modified`; over HTTP+JSON a push-config request is a 400
/// `PushNotificationNotSupportedError` in JSON, not a plain-text 404.
#[tokio::test]
async fn snake_case_fields_card_caching_and_push_config_refusal_are_as_the_spec_asks() {
    guard(async {
        let agent = ScriptedAgent::start(fast(), 0).await.unwrap();
        let c = Client::new(&agent);
        let task = c
            .ok(
                "SendMessage",
                json!({"message": {"message_id": "m-1", "role": "ROLE_USER",
                    "parts": [{"text": "hello"}]},
                    "configuration": {"return_immediately": true}}),
            )
            .await;
        let id = task["task"]["id"].as_str().unwrap().to_owned();
        c.wait_state(&id, "TASK_STATE_COMPLETED").await;
        let full = c.ok("GetTask", json!({"id": id})).await;
        assert!(!full["history"].as_array().unwrap().is_empty(), "{full}");
        let cut = c
            .ok("GetTask", json!({"id": id, "history_length": 0}))
            .await;
        assert!(
            cut["history"].as_array().is_none_or(Vec::is_empty),
            "history_length is read: {cut}"
        );

        let http = reqwest::Client::new();
        let resp = http.get(agent.card_url()).send().await.unwrap();
        assert!(
            resp.headers()["cache-control"]
                .to_str()
                .unwrap()
                .contains("max-age")
        );
        let modified = resp.headers()["last-modified"].to_str().unwrap().to_owned();
        assert!(modified.ends_with(" GMT"), "{modified}");

        let rest = ScriptedAgent::start(
            AgentConfig {
                binding: ServedBinding::HttpJson,
                ..fast()
            },
            0,
        )
        .await
        .unwrap();
        let url = format!("{}tasks/{id}/pushNotificationConfigs", rest.url());
        let resp = http
            .post(&url)
            .header("A2A-Version", "1.0")
            .header("content-type", "application/json")
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 400);
        let body = resp.json_value().await;
        assert_eq!(
            body["error"]["details"][0]["reason"], "PUSH_NOTIFICATION_NOT_SUPPORTED",
            "{body}"
        );
    })
    .await;
}
