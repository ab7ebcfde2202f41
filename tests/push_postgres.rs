//! Two `listen` processes on one PostgreSQL journal: the same pushes delivered to both, at once
//! and again, are each applied once (one state change, one artifact, one read-back's change).

use std::time::Duration;

use a2a_recover::scripted_agent::{AgentConfig, PushFault};
use serde_json::{Value, json};

use crate::common::commands::events;
use crate::common::commands::the_attempt;
use crate::common::journal::assert_consistent;
use crate::common::listen::{Listen, post, status_update, wait_state};
use crate::common::{Store, TestEnv, agent, code, fast, stderr};

/// How often each listener gets each push.
const TIMES: usize = 3;

#[test]
fn two_listeners_on_one_postgres_journal_apply_each_push_once() {
    let env = TestEnv::on(Store::Postgres).real_clock();
    // The agent's own pushes carry a forged token: only this test's posts are ours.
    let a = agent(AgentConfig {
        push: true,
        push_faults: vec![PushFault::ForgedToken],
        tick: Duration::from_millis(50),
        ..fast()
    });
    let one = Listen::start(&env, "0");
    let two = Listen::start(&env, "0");
    let out = env.run([
        "delegate",
        "w/s",
        "--agent",
        &a.url(),
        "work:1",
        "--push",
        &one.base(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    a.settle();
    let config = a.stats().messages[0].push_config.clone().expect("a config");
    let token = config["token"].as_str().unwrap().to_owned();
    let path = format!("/push/{}", config["id"].as_str().unwrap());
    let task = the_attempt(&env, "w/s")["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let artifact = json!({"artifactUpdate": {"taskId": task, "contextId": "c",
        "artifact": {"artifactId": "pushed", "parts": [{"text": "once"}]}, "lastChunk": true}})
    .to_string()
    .into_bytes();
    let pushes = [
        status_update(&task, "TASK_STATE_WORKING"),
        artifact,
        status_update(&task, "TASK_STATE_COMPLETED"),
    ];
    let headers = [
        ("Content-Type", "application/json"),
        ("X-A2A-Notification-Token", token.as_str()),
    ];
    for body in &pushes {
        // Both listeners at once, each several times.
        std::thread::scope(|s| {
            let posts: Vec<_> = [&one.addr, &two.addr]
                .into_iter()
                .flat_map(|addr| std::iter::repeat_n(addr, TIMES))
                .map(|addr| s.spawn(|| post(addr, &path, &headers, body).0))
                .collect();
            for p in posts {
                let status = p.join().expect("a post");
                assert!((200..300).contains(&status), "{status}");
            }
        });
    }
    wait_state(&env, "w/s", "COMPLETED");

    let seen = events(&env, "w/s");
    let changes: Vec<&Value> = seen
        .iter()
        .filter(|e| e["from"].is_string() && e["from"] != e["to"])
        .collect();
    for to in ["WORKING", "COMPLETED"] {
        assert_eq!(
            changes.iter().filter(|e| e["to"] == to).count(),
            1,
            "{to}: {seen:?}"
        );
    }
    let pushed = seen
        .iter()
        .filter(|e| e["kind"] == "artifact" && e["detail"]["artifactId"] == "pushed")
        .count();
    assert_eq!(
        pushed, 1,
        "the artifact was journaled more than once: {seen:?}"
    );
    for l in [one, two] {
        let (exit, err) = l.stop();
        assert_eq!(exit, 0, "{}", String::from_utf8_lossy(&err));
    }
    assert_eq!(events(&env, "w/s"), seen);
    assert_consistent(&env.journal());
}
