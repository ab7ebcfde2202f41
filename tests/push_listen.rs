//! `listen` against a real process: pushes with our token are journaled (a terminal one after
//! a read-back), and a forged token, an unknown config id, a foreign task and an oversized body
//! get the same answer and journal nothing; the token is in no output and no journal file.

use std::time::Duration;

use serde_json::Value;

use a2a_recover::scripted_agent::{AgentConfig, PushFault};

use crate::common::commands::events;
use crate::common::commands::{attempts, the_attempt};
use crate::common::listen::{Listen, post, status_update, wait_state};
use crate::common::transcript::Transcript;
use crate::common::wait::{GUARD, wait_for};
use crate::common::{TestEnv, agent, code, fast, json_lines, stderr};

#[test]
fn pushes_are_journaled_and_forgeries_journal_nothing() {
    let env = TestEnv::new().real_clock();
    // The agent's own pushes carry a forged token: only this test's posts are ours.
    let a = agent(AgentConfig {
        push: true,
        push_faults: vec![PushFault::ForgedToken],
        tick: Duration::from_millis(50),
        ..fast()
    });
    let listen = Listen::start(&env, "0");
    let mut transcript = Transcript::default();
    let out = env.run([
        "delegate",
        "w/s",
        "--agent",
        &a.url(),
        "work:1",
        "--push",
        &listen.base(),
    ]);
    transcript.keep("delegate", &out);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let config = a.stats().messages[0].push_config.clone().expect("a config");
    let token = config["token"].as_str().unwrap().to_owned();
    let id = config["id"].as_str().unwrap().to_owned();
    let path = format!("/push/{id}");
    let task = the_attempt(&env, "w/s")["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let json_ct = ("Content-Type", "application/json");

    // Refused, all alike, and nothing journaled.
    let before = events(&env, "w/s").len();
    let forged = post(
        &listen.addr,
        &path,
        &[json_ct, ("X-A2A-Notification-Token", "forged")],
        &status_update(&task, "TASK_STATE_WORKING"),
    );
    let unknown = post(
        &listen.addr,
        "/push/0123456789abcdef0123456789abcdef",
        &[json_ct, ("X-A2A-Notification-Token", &token)],
        &status_update(&task, "TASK_STATE_WORKING"),
    );
    let foreign = post(
        &listen.addr,
        &path,
        &[json_ct, ("X-A2A-Notification-Token", &token)],
        &status_update("another-task", "TASK_STATE_COMPLETED"),
    );
    let big = vec![b' '; (1 << 20) + 1];
    let oversized = post(
        &listen.addr,
        &path,
        &[json_ct, ("X-A2A-Notification-Token", &token)],
        &big,
    );
    assert_eq!(forged.0, 404);
    for refused in [&unknown, &foreign, &oversized] {
        assert_eq!(refused, &forged);
    }
    assert_eq!(events(&env, "w/s").len(), before);

    // A terminal push (the token as a bearer credential) is read back, then journaled. The
    // agent's task must be done by then: a read that still says WORKING wins over the push.
    a.settle();
    let auth = format!("Bearer {token}");
    let (status, _) = post(
        &listen.addr,
        &path,
        &[
            ("Content-Type", "application/a2a+json"),
            ("Authorization", &auth),
        ],
        &status_update(&task, "TASK_STATE_COMPLETED"),
    );
    assert!((200..300).contains(&status), "{status}");
    let row = wait_state(&env, "w/s", "COMPLETED");
    assert_eq!(row["push"]["configId"], id.as_str());
    // The same push again changes nothing a second time.
    let settled = events(&env, "w/s").len();
    let (status, _) = post(
        &listen.addr,
        &path,
        &[json_ct, ("X-A2A-Notification-Token", &token)],
        &status_update(&task, "TASK_STATE_WORKING"),
    );
    assert!((200..300).contains(&status), "{status}");
    assert_eq!(the_attempt(&env, "w/s")["state"], "COMPLETED");
    assert_eq!(events(&env, "w/s").len(), settled);
    assert_eq!(attempts(&env, None).len(), 1);
    // Every push of the agent's, with its forged token, got the refusal.
    let answers = a.stats().push_answers;
    assert!(
        !answers.is_empty() && answers.iter().all(|s| *s == 404),
        "{answers:?}"
    );

    // While it runs: the database and its WAL.
    transcript.keep_journal_files(&env.journal_file());
    let (exit, err) = listen.stop();
    assert_eq!(exit, 0, "{}", String::from_utf8_lossy(&err));
    transcript.keep_bytes("listen's stderr".to_owned(), err);
    transcript.assert_free_of(&token);
}

#[test]
fn a_lost_push_is_caught_by_the_timers_pass() {
    let env = TestEnv::new().real_clock();
    // The agent pushes SUBMITTED and WORKING, and loses the push of COMPLETED.
    let a = agent(AgentConfig {
        push: true,
        push_faults: vec![PushFault::Lose],
        tick: Duration::from_millis(20),
        ..fast()
    });
    let listen = Listen::start(&env, "1s");
    let out = env.run([
        "delegate",
        "w/s",
        "--agent",
        &a.url(),
        "work:1",
        "--push",
        &listen.base(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    wait_state(&env, "w/s", "COMPLETED");
    let stats = a.stats();
    assert!(stats.push_answers.contains(&200), "{stats:?}");
    let status = env.run(["status"]);
    let shown = crate::common::stdout(&status);
    assert!(
        shown
            .lines()
            .any(|l| l.contains("Listener:") && l.contains(&listen.addr)),
        "{shown}"
    );
    let status = env.run(["status", "--format", "json"]);
    let records = json_lines(&status);
    let record = records
        .iter()
        .find(|r| r["type"] == "status")
        .expect("a status record");
    assert_eq!(
        record["listeners"][0]["bind"],
        listen.addr.as_str(),
        "{record}"
    );
    assert!(record["listeners"][0]["startedAt"].is_string(), "{record}");
    // The pass that caught it is counted on /metrics (it ends after its commit: wait for it).
    let page = wait_for("a pass counted on /metrics", GUARD, || {
        let page = listen.metrics();
        let counted = page.contains("a2a_recover_listen_passes_total{outcome=\"ok\"} ")
            && !page.contains("a2a_recover_listen_passes_total{outcome=\"ok\"} 0");
        if counted { Ok(page) } else { Err(page) }
    });
    assert!(
        page.contains("a2a_recover_listen_pass_last_exit_code 0"),
        "{page}"
    );
    let (exit, err) = listen.stop();
    assert_eq!(exit, 0, "{}", String::from_utf8_lossy(&err));
}

#[test]
fn pushes_at_once_are_each_answered_and_journaled() {
    const STEPS: usize = 8;
    const EACH: usize = 4;
    let env = TestEnv::new().real_clock();
    // The agent's own pushes carry a forged token: only this test's posts are journaled.
    let a = agent(AgentConfig {
        push: true,
        push_faults: vec![PushFault::ForgedToken],
        tick: Duration::from_secs(30),
        ..fast()
    });
    let listen = Listen::start(&env, "0");
    let mut targets = Vec::new();
    for i in 0..STEPS {
        let step = format!("w/s{i}");
        let out = env.run([
            "delegate",
            &step,
            "--agent",
            &a.url(),
            "work:9",
            "--push",
            &listen.base(),
        ]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let config = a.stats().messages[i].push_config.clone().expect("a config");
        let task = the_attempt(&env, &step)["taskId"]
            .as_str()
            .unwrap()
            .to_owned();
        targets.push((step, config, task));
    }
    // Every step's pushes at once: SUBMITTED to WORKING, then the same again.
    let posts: Vec<_> = targets
        .iter()
        .flat_map(|(_, config, task)| (0..EACH).map(move |_| (config, task)))
        .map(|(config, task)| {
            let path = format!("/push/{}", config["id"].as_str().unwrap());
            let token = config["token"].as_str().unwrap().to_owned();
            let body = status_update(task, "TASK_STATE_WORKING");
            let addr = listen.addr.clone();
            std::thread::spawn(move || {
                post(
                    &addr,
                    &path,
                    &[
                        ("Content-Type", "application/json"),
                        ("X-A2A-Notification-Token", &token),
                    ],
                    &body,
                )
                .0
            })
        })
        .collect();
    for post in posts {
        assert_eq!(post.join().unwrap(), 200);
    }
    // Answered 200 means journaled: each step's first push moved it, the others changed
    // nothing more, and none was lost from a shared commit.
    for (step, _, _) in &targets {
        let pushed: Vec<Value> = events(&env, step)
            .into_iter()
            .filter(|e| e["detail"]["source"] == "push")
            .collect();
        assert_eq!(pushed.len(), 1, "{step}: {pushed:#?}");
        assert_eq!(pushed[0]["to"], "WORKING", "{step}: {pushed:#?}");
    }
    let page = listen.metrics();
    assert!(
        page.contains(&format!("a2a_recover_push_recorded_total {}", STEPS * EACH)),
        "{page}"
    );
    let (exit, err) = listen.stop();
    assert_eq!(exit, 0, "{}", String::from_utf8_lossy(&err));
    let err = String::from_utf8_lossy(&err);
    assert!(!err.contains("not journaled"), "{err}");
}
