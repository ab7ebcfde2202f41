//! `follow` end to end: the binary against the scripted agent (drops, a task that finished while
//! we were away, a crash mid-stream, an agent that cannot stream), against the official Python
//! and JS servers, against a server that leaves a stream open at AUTH_REQUIRED, and the engine
//! following 1,000 running tasks at once in one process.
//!
//! The backoff is the contract's (`min(2^streak s, 30 s)`, full jitter), so a reconnect after an
//! event waits up to 1 s: the drop tests run for a few seconds.

use std::cell::Cell;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

use a2a_recover::a2a::TaskView;
use a2a_recover::a2a::{A2aClient, ClientConfig, Endpoint, ProtocolBinding, types};
use a2a_recover::journal::{
    self, Attempt, AttemptState, IntentOutcome, Journal, NewIntent, Source, StepName, StepSpec,
};
use a2a_recover::recovery::follow::{
    FollowEnd, FollowOptions, FollowTarget, Progress, follow_many,
};
use a2a_recover::scripted_agent::{AgentConfig, DropMode, ScriptedAgent};
use serde_json::Value;

use crate::common::in_runtime::{guard, run_with};
use crate::common::interop::{InteropAgent, start_js_agent, start_python_agent};
use crate::common::journal::{events_of, journaled};
use crate::common::{TestEnv, code, explain, json_lines, stderr, stdout, summary_of};

async fn delegate(env: &TestEnv, step: &str, url: &str, text: &str) {
    let o = run_with(env, &["delegate", step, "--agent", url, text], &[]).await;
    assert_eq!(code(&o), 0, "{}", explain(&o));
}

fn delegate_sync(env: &TestEnv, step: &str, url: &str, text: &str) {
    let o = env.run(["delegate", step, "--agent", url, text]);
    assert_eq!(code(&o), 0, "{}", explain(&o));
}

fn chunks(n: u32) -> String {
    use std::fmt::Write as _;
    (1..=n).fold(String::new(), |mut s, i| {
        let _ = write!(s, "chunk {i};");
        s
    })
}

async fn drops_reach_completed(mode: DropMode) {
    let agent = ScriptedAgent::start(
        AgentConfig {
            drop_stream_after: Some(3),
            drop_mode: mode,
            tick: Duration::from_millis(100),
            ..AgentConfig::default()
        },
        0,
    )
    .await
    .unwrap();
    let env = TestEnv::new();
    delegate(&env, "w/s", &agent.url(), "work:20").await;
    let o = run_with(&env, &["follow", "w/s", "--format", "json"], &[]).await;
    assert_eq!(code(&o), 0, "{}", explain(&o));
    let s = summary_of(&o, "follow");
    assert_eq!(s["state"], "COMPLETED", "{s}");
    let (attempt, texts) = journaled(&env.journal(), "w/s");
    assert_eq!(attempt.state, AttemptState::Completed);
    assert_eq!(texts, [chunks(20)], "the artifact is stored once, whole");
    // Every stream but the last was cut after 3 events; each cut cost exactly one resubscribe.
    let reconnects = s["reconnects"].as_u64().unwrap();
    assert!(reconnects >= 1, "{s}");
    assert_eq!(s["polls"], 0);
    let stats = agent.stats();
    assert_eq!(stats.requests["SubscribeToTask"], reconnects + 1, "{s}");
    // Resets are journaled failures; a clean end is not a failure.
    let failures = events_of(&env.journal(), "w/s")
        .iter()
        .filter(|e| e.kind == "read-failed")
        .count() as u64;
    match mode {
        DropMode::Reset => assert_eq!(failures, reconnects, "{s}"),
        DropMode::Eof => assert_eq!(failures, 0, "{s}"),
    }
    // JSON Lines: begin, the journaled events (never the ones from before the command), summary.
    let all = json_lines(&o);
    let printed: Vec<&Value> = all.iter().filter(|l| l["type"] == "event").collect();
    assert!(printed.iter().all(|e| e["kind"] != "intent"));
    assert_eq!(printed.last().unwrap()["to"], "COMPLETED");
    agent.shutdown().await;
}

#[tokio::test]
async fn drops_as_a_clean_end_are_followed_to_completed() {
    guard(drops_reach_completed(DropMode::Eof)).await;
}

#[tokio::test]
async fn drops_as_a_reset_are_followed_to_completed() {
    guard(drops_reach_completed(DropMode::Reset)).await;
}

#[tokio::test]
async fn a_task_finished_while_away_is_read_with_get_task() {
    guard(async {
        let agent = ScriptedAgent::start(
            AgentConfig {
                tick: Duration::from_secs(60),
                ..AgentConfig::default()
            },
            0,
        )
        .await
        .unwrap();
        let env = TestEnv::new();
        delegate(&env, "trip/flight", &agent.url(), "work:5").await;
        let (attempt, _) = journaled(&env.journal(), "trip/flight");
        assert!(agent.complete_task(attempt.task_id.as_deref().unwrap()));
        let o = run_with(&env, &["follow", "trip/flight"], &[]).await;
        assert_eq!(code(&o), 0, "{}", explain(&o));
        assert!(
            stdout(&o).contains("trip/flight is COMPLETED"),
            "{}",
            explain(&o)
        );
        let (attempt, texts) = journaled(&env.journal(), "trip/flight");
        assert_eq!(attempt.state, AttemptState::Completed);
        assert_eq!(texts, ["completed by control"]);
        let stats = agent.stats();
        assert_eq!(stats.requests["SubscribeToTask"], 1);
        assert_eq!(stats.requests["GetTask"], 1);
        // A terminal step has nothing left to follow: exit 0 at once, nothing sent.
        let o = run_with(&env, &["follow", "trip/flight"], &[]).await;
        assert_eq!(code(&o), 0, "{}", explain(&o));
        assert_eq!(agent.stats().requests["SubscribeToTask"], 1);
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn a_crash_after_event_2_then_follow_again_duplicates_and_regresses_nothing() {
    guard(async {
        let agent = ScriptedAgent::start(
            AgentConfig {
                tick: Duration::from_millis(150),
                ..AgentConfig::default()
            },
            0,
        )
        .await
        .unwrap();
        let env = TestEnv::new();
        delegate(&env, "w/s", &agent.url(), "work:8").await;
        let before = events_of(&env.journal(), "w/s").len();
        let crashed = run_with(
            &env,
            &["follow", "w/s", "--format", "json"],
            &[("A2A_RECOVER_CRASH_AT", "after-event:2:w/s")],
        )
        .await;
        assert_eq!(
            crashed.status.code(),
            None,
            "killed by SIGABRT: {}",
            explain(&crashed)
        );
        // Journaled before shown: the second event is in the journal, but was never printed.
        let printed = json_lines(&crashed)
            .into_iter()
            .filter(|l| l["type"] == "event")
            .count();
        let journaled_by_follow = events_of(&env.journal(), "w/s").len() - before;
        assert_eq!(
            (printed, journaled_by_follow),
            (1, 2),
            "{}",
            explain(&crashed)
        );
        let (mid, texts) = journaled(&env.journal(), "w/s");
        assert_eq!(mid.state, AttemptState::Working, "{}", explain(&crashed));
        assert!(texts.len() <= 1, "{texts:?}");

        let o = run_with(&env, &["follow", "w/s", "--format", "json"], &[]).await;
        assert_eq!(code(&o), 0, "{}", explain(&o));
        let (done, texts) = journaled(&env.journal(), "w/s");
        assert_eq!(done.state, AttemptState::Completed);
        assert_eq!(texts, [chunks(8)], "no chunk duplicated");
        // No status regressed: the journaled states and status timestamps only move forward.
        let order = |s: &str| match s {
            "INTENT" => 0,
            "SUBMITTED" => 1,
            "WORKING" => 2,
            "COMPLETED" => 3,
            other => panic!("unexpected state {other}"),
        };
        let all = events_of(&env.journal(), "w/s");
        let mut last_ts = String::new();
        for e in &all {
            if let (Some(from), Some(to)) = (&e.from, &e.to) {
                assert!(order(from) <= order(to), "{e:?}");
            }
            let ts = e
                .detail
                .as_ref()
                .and_then(|d| d["statusTimestamp"].as_str())
                .map(str::to_owned);
            if let Some(ts) = ts {
                // The scripted agent's timestamps have one format: text order is time order.
                assert!(ts >= last_ts, "{ts} after {last_ts}");
                last_ts = ts;
            }
        }
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn an_agent_that_cannot_stream_is_polled_to_completed() {
    guard(async {
        let agent = ScriptedAgent::start(
            AgentConfig {
                no_streaming: true,
                tick: Duration::from_millis(150),
                ..AgentConfig::default()
            },
            0,
        )
        .await
        .unwrap();
        let env = TestEnv::new();
        delegate(&env, "w/poll", &agent.url(), "work:4").await;
        let o = run_with(&env, &["follow", "w/poll", "--format", "json"], &[]).await;
        assert_eq!(code(&o), 0, "{}", explain(&o));
        let s = summary_of(&o, "follow");
        assert_eq!(s["state"], "COMPLETED");
        let polls = s["polls"].as_u64().unwrap();
        assert!(polls >= 1, "{s}");
        let stats = agent.stats();
        assert_eq!(stats.requests["SubscribeToTask"], 1);
        assert_eq!(stats.requests["GetTask"], polls + 1, "{s}");
        let (_, texts) = journaled(&env.journal(), "w/poll");
        assert_eq!(texts, [chunks(4)]);
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn a_stream_ending_at_input_required_exits_4_with_the_question_journaled() {
    guard(async {
        let agent = ScriptedAgent::start(AgentConfig::default(), 0)
            .await
            .unwrap();
        let env = TestEnv::new();
        delegate(&env, "trip/hotel", &agent.url(), "ask").await;
        let o = run_with(&env, &["follow", "trip/hotel"], &[]).await;
        assert_eq!(code(&o), 4, "{}", explain(&o));
        assert!(stdout(&o).contains("two rooms or one?"), "{}", explain(&o));
        assert!(stdout(&o).contains("a2a-recover reply trip/hotel"));
        let (a, _) = journaled(&env.journal(), "trip/hotel");
        assert_eq!(a.state, AttemptState::InputRequired);
        assert_eq!(a.question_text().as_deref(), Some("two rooms or one?"));
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn replied_unknown_and_intent_steps() {
    guard(async {
        let agent = ScriptedAgent::start(AgentConfig::default(), 0)
            .await
            .unwrap();
        let env = TestEnv::new();
        delegate(&env, "d", &agent.url(), "direct hello").await;
        let o = run_with(&env, &["follow", "d"], &[]).await;
        assert_eq!(code(&o), 0, "{}", explain(&o));
        assert!(stdout(&o).contains("REPLIED"));
        let o = run_with(&env, &["follow", "nope/never", "--format", "json"], &[]).await;
        assert_eq!(code(&o), 2, "{}", explain(&o));
        assert!(stderr(&o).contains("unknown step `nope/never`"));
        // An intent whose send crashed: the look finds the task, records it, follows it.
        let o = run_with(
            &env,
            &[
                "delegate",
                "w/lost-reply",
                "--agent",
                &agent.url(),
                "work:0",
            ],
            &[("A2A_RECOVER_CRASH_AT", "after-send:w/lost-reply")],
        )
        .await;
        assert_eq!(o.status.code(), None, "{}", explain(&o));
        assert_eq!(
            journaled(&env.journal(), "w/lost-reply").0.state,
            AttemptState::Intent
        );
        let o = run_with(&env, &["follow", "w/lost-reply"], &[]).await;
        assert_eq!(code(&o), 0, "{}", explain(&o));
        let (a, texts) = journaled(&env.journal(), "w/lost-reply");
        assert_eq!(a.state, AttemptState::Completed);
        assert_eq!(texts, ["done;"]);
        assert_eq!(agent.stats().tasks.len(), 1, "nothing was resent");
        // An intent that was never sent: nothing to follow, reconcile's job (exit 3).
        let o = run_with(
            &env,
            &["delegate", "w/unsent", "--agent", &agent.url(), "work:0"],
            &[("A2A_RECOVER_CRASH_AT", "after-intent:w/unsent")],
        )
        .await;
        assert_eq!(o.status.code(), None, "{}", explain(&o));
        let o = run_with(&env, &["follow", "w/unsent"], &[]).await;
        assert_eq!(code(&o), 3, "{}", explain(&o));
        assert!(stdout(&o).contains("never sent"), "{}", explain(&o));
        agent.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn until_stops_a_running_follow_with_exit_3() {
    guard(async {
        let agent = ScriptedAgent::start(
            AgentConfig {
                tick: Duration::from_secs(60),
                ..AgentConfig::default()
            },
            0,
        )
        .await
        .unwrap();
        let env = TestEnv::new();
        delegate(&env, "w/long", &agent.url(), "work:5").await;
        let o = run_with(
            &env,
            &["follow", "w/long", "--until", "300ms", "--format", "json"],
            &[],
        )
        .await;
        assert_eq!(code(&o), 3, "{}", explain(&o));
        assert_eq!(summary_of(&o, "follow")["end"], "deadline");
        let (a, _) = journaled(&env.journal(), "w/long");
        assert_eq!(a.state, AttemptState::Working);
        assert!(a.lease.is_none(), "the lease is released");
        agent.shutdown().await;
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// A server that leaves the stream open after AUTH_REQUIRED (as the JS SDK does)
// ---------------------------------------------------------------------------------------------

/// Serves one SubscribeToTask: a snapshot in AUTH_REQUIRED, then `: ping` comments and no end.
async fn open_stream_server(listener: tokio::net::TcpListener, task_id: String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    loop {
        let Ok((mut sock, _)) = listener.accept().await else {
            return;
        };
        let task_id = task_id.clone();
        tokio::spawn(async move {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            let body = loop {
                let n = sock.read(&mut chunk).await.unwrap_or(0);
                if n == 0 {
                    return;
                }
                buf.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&buf).into_owned();
                if let Some(end) = text.find("\r\n\r\n") {
                    let len: usize = text[..end]
                        .lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case("content-length")
                                .then(|| v.trim().parse().ok())?
                        })
                        .unwrap_or(0);
                    if buf.len() >= end + 4 + len {
                        break buf[end + 4..end + 4 + len].to_vec();
                    }
                }
            };
            let request: Value = serde_json::from_slice(&body).unwrap();
            let task = serde_json::json!({
                "id": task_id, "contextId": "c-1",
                "status": {"state": "TASK_STATE_AUTH_REQUIRED",
                           "timestamp": "2026-11-30T01:00:00.000Z",
                           "message": {"messageId": "q", "role": "ROLE_AGENT",
                                       "parts": [{"text": "sign in at \u{1b}[31mhttps://auth.example\u{1b}[0m"}]}}});
            let event = serde_json::json!({"jsonrpc": "2.0", "id": request["id"], "result": {"task": task}});
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n\
                        cache-control: no-cache\r\n\r\n";
            let _ = sock.write_all(head.as_bytes()).await;
            let _ = sock
                .write_all(format!(": ping\r\ndata: {event}\r\n\r\n").as_bytes())
                .await;
            loop {
                // The agent's pace: a keep-alive a second holds the stream open, as a real one.
                tokio::time::sleep(Duration::from_secs(1)).await;
                if sock.write_all(b": ping - keep open\r\n").await.is_err() {
                    return;
                }
            }
        });
    }
}

#[tokio::test]
async fn a_stream_left_open_at_auth_required_stops_by_itself() {
    guard(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!(
            "http://127.0.0.1:{}/",
            listener.local_addr().unwrap().port()
        );
        let server = tokio::spawn(open_stream_server(listener, "t-auth".to_owned()));
        let env = TestEnv::new();
        {
            let j = Journal::open(&env.journal(), Duration::from_secs(10)).unwrap();
            let card = format!("{url}.well-known/agent-card.json");
            let a = created(&j, "w/auth", &card);
            j.set_endpoint(
                a.id,
                &journal::JournaledEndpoint {
                    binding: a2a_recover::a2a::ProtocolBinding::JsonRpcV1,
                    interface_url: url.clone(),
                    tenant: None,
                },
            )
            .unwrap();
            let raw =
                r#"{"id":"t-auth","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}"#;
            j.apply_task(a.id, &TaskView::from_raw(raw).unwrap(), Source::Send)
                .unwrap();
        }
        let o = run_with(&env, &["follow", "w/auth"], &[]).await;
        assert_eq!(code(&o), 4, "{}", explain(&o));
        let out = stdout(&o);
        assert!(out.contains("AUTH_REQUIRED"), "{}", explain(&o));
        // Remote text is inert in human output: the escape sequence is gone.
        assert!(out.contains("sign in at https://auth.example"), "{out}");
        assert!(!out.contains('\u{1b}'), "{out:?}");
        let (a, _) = journaled(&env.journal(), "w/auth");
        assert_eq!(a.state, AttemptState::AuthRequired);
        // JSON keeps the remote text as data.
        assert!(a.question_text().unwrap().contains('\u{1b}'));
        server.abort();
    })
    .await;
}

fn created(j: &Journal, step: &str, card: &str) -> Attempt {
    let name = StepName::parse(step).unwrap();
    match j
        .create_intents(&[NewIntent {
            spec: StepSpec::to_agent(name, "work", card),
            agent_url: Some(card.to_owned()),
            message_id: uuid::Uuid::new_v4().to_string(),
            context_id: Some(uuid::Uuid::new_v4().to_string()),
        }])
        .unwrap()
        .remove(0)
    {
        IntentOutcome::Created(a) => a,
        IntentOutcome::Existing(_) => panic!("{step} existed"),
    }
}

// ---------------------------------------------------------------------------------------------
// The official SDK servers
// ---------------------------------------------------------------------------------------------

fn interop_follow(agent: &InteropAgent, env: &TestEnv, step: &str) -> Output {
    let o = env.run(["follow", step, "--format", "json"]);
    assert!(
        matches!(code(&o), 0 | 4),
        "{}\n{}",
        explain(&o),
        agent.context()
    );
    o
}

fn interop_checks(agent: &InteropAgent, artifact_id_free_text: &str) {
    let env = TestEnv::new();
    // work:5: five 100 ms steps, an artifact chunk each, then COMPLETED.
    delegate_sync(&env, "i/work", &agent.url, "work:5");
    let o = interop_follow(agent, &env, "i/work");
    assert_eq!(code(&o), 0, "{}\n{}", explain(&o), agent.context());
    assert_eq!(summary_of(&o, "follow")["state"], "COMPLETED");
    let (a, texts) = journaled(&env.journal(), "i/work");
    assert_eq!(a.state, AttemptState::Completed);
    assert_eq!(texts, [artifact_id_free_text], "{}", agent.context());
    // ask: the stream ends (or stays open) at INPUT_REQUIRED: exit 4, the question journaled.
    delegate_sync(&env, "i/ask", &agent.url, "ask");
    let o = interop_follow(agent, &env, "i/ask");
    assert_eq!(code(&o), 4, "{}\n{}", explain(&o), agent.context());
    let (a, _) = journaled(&env.journal(), "i/ask");
    assert_eq!(a.state, AttemptState::InputRequired);
    assert_eq!(a.question_text().as_deref(), Some("two rooms or one?"));
    // auth: AUTH_REQUIRED (the JS server leaves its stream open there): exit 4.
    delegate_sync(&env, "i/auth", &agent.url, "auth");
    let o = interop_follow(agent, &env, "i/auth");
    assert_eq!(code(&o), 4, "{}\n{}", explain(&o), agent.context());
    let (a, _) = journaled(&env.journal(), "i/auth");
    assert_eq!(a.state, AttemptState::AuthRequired);
    assert!(a.question_text().is_some_and(|q| q.contains("authorize")));
}

#[test]
fn follows_the_official_python_server() {
    let agent = start_python_agent();
    interop_checks(&agent, "step 1\nstep 2\nstep 3\nstep 4\nstep 5\n");
}

#[test]
fn follows_the_official_js_server() {
    let agent = start_js_agent();
    interop_checks(&agent, "step 1\nstep 2\nstep 3\nstep 4\nstep 5\n");
}

// ---------------------------------------------------------------------------------------------
// 1,000 running tasks followed at once in one process
// ---------------------------------------------------------------------------------------------

#[tokio::test]
#[expect(
    clippy::too_many_lines,
    reason = "one run of 1,000 follows, from start to the last check"
)]
async fn a_thousand_running_tasks_are_followed_at_once_in_one_process() {
    const N: usize = 1000;
    guard(async {
        // Tasks that would run for an hour: every one is running when its follow subscribes.
        let agent = ScriptedAgent::start(
            AgentConfig {
                tick: Duration::from_secs(3600),
                ..AgentConfig::default()
            },
            0,
        )
        .await
        .unwrap();
        // The journal sits in memory-backed /dev/shm where there is one: this test is about
        // 1,000 streams in one process, and ~7,000 fsyncs on a busy shared disk would make it a
        // disk benchmark (examples/follow_bench.rs measures that on a real disk).
        let shm = Path::new("/dev/shm");
        let dir = if shm.is_dir() {
            tempfile::tempdir_in(shm).unwrap()
        } else {
            tempfile::tempdir().unwrap()
        };
        let j = Journal::open(&dir.path().join("j.sqlite3"), Duration::from_secs(30)).unwrap();
        let client = A2aClient::new(ClientConfig {
            timeout: Duration::from_secs(30),
            max_response_size: 1 << 20,
            stream_idle_timeout: Duration::from_secs(60),
            max_look_size: 64 * 1024 * 1024,
            max_card_size: a2a_recover::a2a::DEFAULT_MAX_CARD_SIZE,
        })
        .unwrap();
        let intents: Vec<NewIntent> = (0..N)
            .map(|i| NewIntent {
                spec: StepSpec::to_agent(
                    StepName::parse(&format!("many/s{i}")).unwrap(),
                    "work:2",
                    agent.card_url(),
                ),
                agent_url: Some(agent.card_url()),
                message_id: uuid::Uuid::new_v4().to_string(),
                context_id: Some(uuid::Uuid::new_v4().to_string()),
            })
            .collect();
        let attempts: Vec<Attempt> = j
            .create_intents(&intents)
            .unwrap()
            .into_iter()
            .map(|o| match o {
                IntentOutcome::Created(a) => a,
                IntentOutcome::Existing(_) => panic!("existed"),
            })
            .collect();
        let endpoint = Endpoint {
            url: agent.url(),
            tenant: None,
            binding: ProtocolBinding::default(),
            card_origin: agent.url().trim_end_matches('/').to_owned(),
            credential: None,
            placement: a2a_recover::a2a::Placement::Bearer,
            allow_cross_origin: false,
        };
        let mut targets = Vec::with_capacity(N);
        for (i, a) in attempts.iter().enumerate() {
            let a = j
                .set_endpoint(
                    a.id,
                    &journal::JournaledEndpoint {
                        binding: a2a_recover::a2a::ProtocolBinding::JsonRpcV1,
                        interface_url: agent.url(),
                        tenant: None,
                    },
                )
                .unwrap();
            let sent = client
                .send_message(&endpoint, &send_request(&a))
                .await
                .unwrap();
            let raw = sent.raw["task"].clone();
            j.apply_task(
                a.id,
                &TaskView::from_value(&raw, raw.to_string()).unwrap(),
                Source::Send,
            )
            .unwrap();
            let a = j.attempt(a.id).unwrap();
            let name = StepName::parse(&format!("many/s{i}")).unwrap();
            targets.push(
                FollowTarget::new(
                    &name,
                    &a,
                    false,
                    a2a_recover::recovery::send::JournaledWire::default(),
                )
                .await
                .unwrap(),
            );
        }
        let task_ids: Vec<String> = targets.iter().map(|t| t.task_id.clone()).collect();
        // Once every follow has its first snapshot, the agent completes every task.
        let snapshots = Cell::new(0usize);
        let all_subscribed = tokio::sync::Notify::new();
        let observer = a2a_recover::recovery::event::OnFollow(|_: &FollowTarget, p: &Progress| {
            if let Progress::Observed {
                source: Source::Stream,
                events: 1,
                ..
            } = p
            {
                snapshots.set(snapshots.get() + 1);
                if snapshots.get() == N {
                    all_subscribed.notify_one();
                }
            }
        });
        let opts = FollowOptions {
            seed: Some(42),
            ..FollowOptions::default()
        };
        let completer = async {
            all_subscribed.notified().await;
            for id in &task_ids {
                assert!(agent.complete_task(id));
            }
        };
        let (results, ()) = tokio::join!(
            follow_many(&j, &client, targets, &opts, N, &observer),
            completer
        );
        assert_eq!(results.len(), N);
        for (target, outcome) in &results {
            let o = outcome.as_ref().unwrap();
            assert_eq!(
                o.end,
                FollowEnd::Terminal(AttemptState::Completed),
                "{}",
                target.step
            );
            assert_eq!(o.reconnects, 0);
            let texts: Vec<String> = j
                .artifacts(target.attempt)
                .unwrap()
                .iter()
                .map(journal::Artifact::text)
                .collect();
            assert_eq!(texts, ["completed by control"]);
        }
        assert_eq!(agent.stats().requests["SubscribeToTask"], N as u64);
        agent.shutdown().await;
    })
    .await;
}

fn send_request(a: &Attempt) -> types::SendMessageRequest {
    types::SendMessageRequest {
        message: types::Message {
            message_id: a.message_id.clone(),
            context_id: a.context_id.clone(),
            task_id: None,
            role: types::Role::User,
            parts: vec![types::Part::text("work:2")],
            metadata: None,
            extensions: None,
            reference_task_ids: None,
        },
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
