//! `reply` end to end: answers on the same task id, the state checks, and the crash points, with
//! `reconcile` finding an undelivered reply in the task's history before it sends it again.

use std::time::Duration;

use a2a_recover::scripted_agent::{AgentConfig, Stats};

use crate::common::commands::{crashing, delegate, reconcile, the_attempt};
use crate::common::{TestEnv, agent, code, fast, json_lines, stderr, stdout};

/// The messages the agent received with this text.
fn received(stats: &Stats, text: &str) -> Vec<(String, Option<String>)> {
    stats
        .messages
        .iter()
        .filter(|m| m.text == text)
        .map(|m| (m.message_id.clone(), m.task_id.clone()))
        .collect()
}

/// Delegates `ask` and runs a pass, so the question is journaled; returns the task id.
fn asked(env: &TestEnv, url: &str, step: &str) -> String {
    let out = delegate(env, step, url, "ask about rooms", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = reconcile(env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(env, step);
    assert_eq!(row["state"], "INPUT_REQUIRED");
    assert_eq!(row["pendingQuestion"], "two rooms or one?");
    row["taskId"].as_str().unwrap().to_owned()
}

/// The same answer again (a script or an operator repeating themselves) is idempotent: exit 0,
/// nothing sent; another text still says there is no question.
#[test]
fn the_same_reply_twice_is_sent_once_and_exits_0() {
    let env = TestEnv::new();
    let a = agent(fast());
    asked(&env, &a.url(), "trip/room");
    let out = env.run(["reply", "trip/room", "one room"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let again = env.run(["reply", "trip/room", "one room", "--format", "json"]);
    assert_eq!(code(&again), 0, "{}{}", stdout(&again), stderr(&again));
    let lines = json_lines(&again);
    assert_eq!(lines[1]["outcome"], "already-delivered", "{lines:?}");
    assert_eq!(received(&a.stats(), "one room").len(), 1);
    let other = env.run(["reply", "trip/room", "two rooms"]);
    assert_eq!(code(&other), 2, "{}", stderr(&other));
}

/// `-` reads the answer from standard input (a long text, or one full of shell metacharacters);
/// the trailing newline is not part of it.
#[test]
fn a_reply_text_of_dash_is_read_from_stdin() {
    let env = TestEnv::new();
    let a = agent(fast());
    asked(&env, &a.url(), "trip/stdin");
    let out = env
        .cmd()
        .args(["reply", "trip/stdin", "-"])
        .write_stdin("one room, 'quoted' $HOME\n")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(received(&a.stats(), "one room, 'quoted' $HOME").len(), 1);
    assert!(received(&a.stats(), "-").is_empty());
}

#[test]
fn a_reply_answers_on_the_same_task_and_exits_0() {
    let env = TestEnv::new();
    let a = agent(fast());
    let task = asked(&env, &a.url(), "trip/hotel");
    let out = env.run(["reply", "trip/hotel", "two rooms", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(lines[0]["command"], "reply");
    assert_eq!(lines[1]["replyState"], "DELIVERED");
    assert_eq!(lines[1]["detail"]["taskId"], task.as_str());
    let row = the_attempt(&env, "trip/hotel");
    assert_eq!(row["taskId"], task.as_str());
    assert_eq!(row["state"], "COMPLETED");
    let got = received(&a.stats(), "two rooms");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1.as_deref(), Some(task.as_str()));
    // The step has no question any more.
    let out = env.run(["reply", "trip/hotel", "again"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("step `trip/hotel` has no pending question: it is COMPLETED"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_reply_needs_a_pending_question() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        tick: Duration::from_secs(3600),
        ..AgentConfig::default()
    });
    let out = env.run(["reply", "nope/x", "hi"]);
    assert_eq!(code(&out), 1, "no journal yet: {}", stderr(&out));
    let out = delegate(&env, "w/s", &a.url(), "work:3", &[]);
    assert_eq!(code(&out), 0);
    let out = env.run(["reply", "nope/x", "hi"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("unknown step `nope/x`"),
        "{}",
        stderr(&out)
    );
    let out = env.run(["reply", "w/s", "hi"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("has no pending question: it is SUBMITTED"),
        "{}",
        stderr(&out)
    );
    assert!(received(&a.stats(), "hi").is_empty());
}

#[test]
fn a_crash_after_the_reply_is_sent_is_found_in_the_history_not_resent() {
    let env = TestEnv::new();
    let a = agent(fast());
    let task = asked(&env, &a.url(), "trip/hotel");
    crashing(&env, "after-send", &["reply", "trip/hotel", "two rooms"]);
    // The agent has the answer; the journal does not know it yet.
    assert_eq!(received(&a.stats(), "two rooms").len(), 1);
    // Replying again with the same text resends nothing blindly.
    let out = env.run(["reply", "trip/hotel", "two rooms"]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let out = env.run(["reply", "trip/hotel", "one room"]);
    assert_eq!(code(&out), 2, "{}{}", stdout(&out), stderr(&out));
    let out = reconcile(&env, &["--format", "json"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let reply = json_lines(&out)
        .into_iter()
        .find(|v| v["action"] == "reply")
        .expect("a reply action");
    assert_eq!(reply["outcome"], "DELIVERED");
    assert_eq!(reply["detail"]["found"], true);
    let got = received(&a.stats(), "two rooms");
    assert_eq!(got.len(), 1, "the reply was sent twice");
    assert_eq!(got[0].1.as_deref(), Some(task.as_str()));
    let row = the_attempt(&env, "trip/hotel");
    assert_eq!(row["state"], "COMPLETED");
    assert_eq!(row["taskId"], task.as_str());
}

#[test]
fn a_crash_before_the_reply_is_sent_is_resent_with_the_same_message_id() {
    let env = TestEnv::new();
    let a = agent(fast());
    let task = asked(&env, &a.url(), "trip/hotel");
    crashing(&env, "after-intent", &["reply", "trip/hotel", "one room"]);
    assert!(received(&a.stats(), "one room").is_empty());
    let out = reconcile(&env, &["--format", "json"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let reply = json_lines(&out)
        .into_iter()
        .find(|v| v["action"] == "reply")
        .expect("a reply action");
    assert_eq!(reply["outcome"], "DELIVERED");
    assert_eq!(reply["detail"]["resent"], true);
    let got = received(&a.stats(), "one room");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, reply["detail"]["messageId"].as_str().unwrap());
    assert_eq!(got[0].1.as_deref(), Some(task.as_str()));
    assert_eq!(the_attempt(&env, "trip/hotel")["state"], "COMPLETED");
}

#[test]
fn auth_required_is_resumed_by_a_reply() {
    let env = TestEnv::new();
    let a = agent(fast());
    let out = delegate(&env, "w/secure", &a.url(), "auth", &[]);
    assert_eq!(code(&out), 0);
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4);
    assert!(
        stdout(&out).contains("the agent needs authentication"),
        "{}",
        stdout(&out)
    );
    let out = env.run(["reply", "w/secure", "granted"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(the_attempt(&env, "w/secure")["state"], "COMPLETED");
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
}

/// A bare name is a step of `default` (DESIGN §1); when it names a workflow instead, the error
/// keeps that meaning and its hint names the workflow's steps.
#[test]
fn a_workflow_named_where_a_step_is_expected_gets_its_steps_as_a_hint() {
    let env = TestEnv::new();
    let a = agent(fast());
    for step in ["trip-7/hotel", "trip-7/car"] {
        assert_eq!(code(&delegate(&env, step, &a.url(), "ask", &[])), 0);
    }
    for args in [&["reply", "trip-7", "x"][..], &["follow", "trip-7"]] {
        let out = env.run(args);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("unknown step `default/trip-7`"), "{err}");
        assert!(
            err.contains("`trip-7` is a workflow (a bare name is a step of `default`); name one of its steps: `trip-7/hotel`, `trip-7/car`"),
            "{err}"
        );
    }
    // An unknown name that is no workflow keeps the plain hint.
    let out = env.run(["reply", "nowhere", "x"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("inspect --pending"),
        "{}",
        stderr(&out)
    );
}

/// `reply --data` sends one data part (agents built to take only a structured answer), on
/// v1.0 and v0.3 alike; the journal keeps what was answered, text or data: the `reply-intent`
/// event's `answer` and the attempt record's `lastAnswer`.
#[test]
fn a_data_reply_reaches_the_agent_as_a_data_part_and_the_journal_keeps_the_words() {
    for v03 in [false, true] {
        let env = TestEnv::new();
        let a = agent(AgentConfig {
            protocol_v03: v03,
            ..fast()
        });
        asked(&env, &a.url(), "trip/rooms");
        let out = env.run(["reply", "trip/rooms", "--data", r#"{"rooms": "one"}"#]);
        assert_eq!(code(&out), 0, "v03 {v03}: {}{}", stdout(&out), stderr(&out));
        let stats = a.stats();
        let last = stats.messages.last().unwrap();
        assert_eq!(
            last.data,
            [serde_json::json!({"rooms": "one"})],
            "v03 {v03}: {last:?}"
        );
        assert_eq!(last.text, "", "no text part beside the data");
        let row = the_attempt(&env, "trip/rooms");
        assert_eq!(
            row["lastAnswer"],
            serde_json::json!({"data": {"rooms": "one"}})
        );
        let out = env.run(["inspect", "trip/rooms", "--events", "--format", "json"]);
        let intent = json_lines(&out)
            .into_iter()
            .find(|r| r["kind"] == "reply-intent")
            .expect("a reply-intent event");
        assert_eq!(
            intent["detail"]["answer"],
            serde_json::json!({"data": {"rooms": "one"}}),
            "{intent}"
        );
        assert!(
            intent["detail"]["answers"].is_string(),
            "`answers` keeps its meaning"
        );
    }
    // A text reply's words are kept too; data that is not a JSON object is refused.
    let env = TestEnv::new();
    let a = agent(fast());
    asked(&env, &a.url(), "trip/text");
    for bad in ["[1, 2]", "not json"] {
        let out = env.run(["reply", "trip/text", "--data", bad]);
        assert_eq!(code(&out), 2, "{bad}: {}", stderr(&out));
    }
    let out = env.run(["reply", "trip/text", "one room"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let row = the_attempt(&env, "trip/text");
    assert_eq!(row["lastAnswer"], serde_json::json!({"text": "one room"}));
}

/// A reply left undelivered (answered 503), its step then resolved `abandoned` and its task
/// forgotten by the agent: the next pass still settles the reply (the task is gone: `LOST`), but
/// the step no longer counts toward exit 4 (found by the simulator, seed 424:
/// tests/sim-cases/0006-abandoned-step-reply.json).
#[test]
fn the_reply_of_an_abandoned_step_no_longer_counts_toward_exit_4() {
    let env = TestEnv::new();
    let a = agent(fast());
    let task = asked(&env, &a.url(), "trip/hotel");
    a.get().fail_next(1);
    let out = env.run(["reply", "trip/hotel", "one room"]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let out = env.run([
        "resolve",
        "trip/hotel",
        "--as",
        "abandoned",
        "--reason",
        "booked by phone",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(a.get().forget_task(&task));
    let out = reconcile(&env, &["--format", "json"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(
        json_lines(&out).iter().any(|v| v["action"] == "reply"),
        "the reply is still settled: {}",
        stdout(&out)
    );
    assert_eq!(the_attempt(&env, "trip/hotel")["state"], "LOST");
}
