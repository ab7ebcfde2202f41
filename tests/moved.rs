//! An agent that upgrades between the delegation and a later command: the interface the attempt
//! was sent to leaves its card. Every command that reads the task (`follow`, `reply` and the
//! look `reconcile` makes before resending it, `compensate`, `reconcile --dry-run`) re-chooses
//! an interface from the card, and when the card offers nothing we speak the attempt needs a
//! human. The agent keeps its tasks across the upgrade (a durable store), on the same port.

use serde_json::Value;

use crate::common::bindings::{
    assert_pending_gone, calls, delegated_then_gone, http_json, moves, unspoken_only_on,
};
use crate::common::commands::{delegate, latest, reconcile, spawn, task_of, the_attempt};
use crate::common::journal::artifact_texts_of;
use crate::common::wait::{GUARD, wait_for};
use crate::common::{Background, TestEnv, agent, code, explain, fast, json_lines, stderr, stdout};
use a2a_recover::scripted_agent::ScriptedAgent;

/// Delegates `text` as `step` to a JSON-RPC scripted agent, lets it settle when `settle`, then
/// upgrades it to HTTP+JSON only (same port, same tasks).
fn delegated_then_upgraded(
    env: &TestEnv,
    step: &str,
    text: &str,
    settle: bool,
) -> Background<ScriptedAgent> {
    let a = agent(fast());
    let out = delegate(env, step, &a.url(), text, &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    if settle {
        a.settle();
    }
    a.restart(http_json(fast()))
}

/// The step is `state`, read over the re-chosen HTTP+JSON interface, moved once.
fn assert_moved(env: &TestEnv, step: &str, state: &str) {
    let row = the_attempt(env, step);
    assert_eq!(row["state"], state, "{row}");
    assert_eq!(row["binding"], "HTTP+JSON", "{row}");
    assert_eq!(moves(env, step), 1);
}

#[test]
fn follow_reads_a_moved_agent_at_its_new_interface() {
    let env = TestEnv::new();
    let a = delegated_then_upgraded(&env, "w/up", "work:2", true);
    let out = env.run(["follow", "w/up", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_moved(&env, "w/up", "COMPLETED");
    assert_eq!(
        artifact_texts_of(&env.journal(), "w/up"),
        ["chunk 1;chunk 2;"]
    );
    assert_eq!(calls(&a.stats(), "SendMessage"), 0);
}

#[test]
fn follow_of_an_agent_that_offers_nothing_we_speak_needs_a_human() {
    let env = TestEnv::new();
    let (before, _server) = delegated_then_gone(&env, "w/gone", "work:2");
    let out = env.run(["follow", "w/gone", "--format", "json"]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    assert!(
        json_lines(&out)
            .iter()
            .any(|r| r["end"] == "interface-gone"),
        "{}",
        stdout(&out)
    );
    let row = the_attempt(&env, "w/gone");
    assert_eq!(row["state"], before, "nothing is proven of the task: {row}");
    assert_pending_gone(&env, "w/gone");
    // A human decides to do the work again (the task cannot be read any more): a retry of the
    // running attempt is allowed, and the step needs nobody any more.
    let out = env.run([
        "resolve",
        "w/gone",
        "--as",
        "retry",
        "--reason",
        "the agent dropped JSON-RPC; its operator says the task is lost",
    ]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let latest = latest(&env, "w/gone");
    assert_eq!(latest["attempt"], 2, "{latest}");
    assert_eq!(latest["state"], "INTENT", "{latest}");
    let out = env.run(["status", "--check"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
}

#[test]
fn delegate_follow_outlives_the_agents_upgrade() {
    let env = TestEnv::new();
    let a = agent(fast());
    let url = a.url();
    let child = spawn(
        &env,
        &[
            "delegate",
            "w/up",
            "--agent",
            &url,
            "--follow",
            "work:100000",
        ],
    );
    // Once the task is journaled, the agent upgrades under the running follow (which read
    // the old card before its send).
    let task = wait_for("the delegation to journal its task", GUARD, || {
        let out = env.run(["inspect", "--format", "json"]);
        let journaled = json_lines(&out)
            .into_iter()
            .find_map(|r| r["taskId"].as_str().map(str::to_owned));
        match (code(&out), journaled) {
            (0, Some(task)) => Ok(task),
            _ => Err(explain(&out)),
        }
    });
    let a = a.restart(http_json(fast()));
    assert!(a.get().complete_task(&task));
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_moved(&env, "w/up", "COMPLETED");
    assert_eq!(calls(&a.stats(), "SendMessage"), 0);
}

#[test]
fn reconcile_follow_for_reads_a_moved_agent_at_its_new_interface() {
    let env = TestEnv::new();
    let _a = delegated_then_upgraded(&env, "w/up", "work:2", true);
    let out = reconcile(&env, &["--follow-for", "30s"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_moved(&env, "w/up", "COMPLETED");
}

#[test]
fn the_dry_run_says_it_would_move_and_writes_nothing() {
    let env = TestEnv::new();
    let a = delegated_then_upgraded(&env, "w/up", "work:2", true);
    let before = std::fs::read(env.journal()).unwrap();
    let out = reconcile(&env, &["--dry-run", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let actions = json_lines(&out);
    let moved = actions
        .iter()
        .find(|r| r["outcome"] == "would-move-interface")
        .unwrap_or_else(|| panic!("{}", stdout(&out)));
    assert_eq!(moved["detail"]["from"]["binding"], "JSONRPC", "{moved}");
    assert_eq!(moved["detail"]["to"]["binding"], "HTTP+JSON", "{moved}");
    assert!(
        actions
            .iter()
            .any(|r| r["outcome"] == "would-record-COMPLETED"),
        "{}",
        stdout(&out)
    );
    // Nothing written: the journal's bytes, the attempt's interface, its events.
    assert_eq!(std::fs::read(env.journal()).unwrap(), before);
    let row = the_attempt(&env, "w/up");
    assert_eq!(row["binding"], "JSONRPC", "{row}");
    assert_eq!(moves(&env, "w/up"), 0);
    assert_eq!(calls(&a.stats(), "SendMessage"), 0);

    // When the card offers nothing we speak, it says so, exit 4, still writing nothing.
    let _server = unspoken_only_on(a);
    let out = reconcile(&env, &["--dry-run", "--format", "json"]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let gone = json_lines(&out)
        .into_iter()
        .find(|r| r["outcome"] == "would-mark-interface-gone")
        .unwrap_or_else(|| panic!("{}", stdout(&out)));
    assert!(gone["remedy"]["command"].is_string(), "{gone}");
    assert_eq!(std::fs::read(env.journal()).unwrap(), before);
    let out = env.run(["status", "--check"]);
    assert_eq!(
        code(&out),
        0,
        "nothing journaled as pending: {}",
        stdout(&out)
    );
}

#[test]
fn a_reply_to_a_moved_agent_is_sent_there_only_after_a_look() {
    let env = TestEnv::new();
    let a = agent(fast());
    let out = delegate(&env, "trip/hotel", &a.url(), "ask", &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    a.settle();
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let task = task_of(&env, "trip/hotel");
    let a = a.restart(http_json(fast()));

    // The reply's send finds the old interface gone: not delivered, nothing sent elsewhere.
    let out = env.run(["reply", "trip/hotel", "two rooms", "--format", "json"]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let record: Value = json_lines(&out)
        .into_iter()
        .find(|r| !matches!(r["type"].as_str(), Some("summary" | "begin")))
        .unwrap_or_else(|| panic!("{}", stdout(&out)));
    assert_eq!(record["outcome"], "interface-moved", "{record}");
    assert_eq!(calls(&a.stats(), "SendMessage"), 0);
    assert_eq!(the_attempt(&env, "trip/hotel")["binding"], "HTTP+JSON");

    // `reconcile` looks at the new interface first (GetTask), then sends it there, once.
    let gets = calls(&a.stats(), "GetTask");
    let out = reconcile(&env, &[]);
    assert!(
        [0, 3].contains(&code(&out)),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let stats = a.stats();
    assert!(calls(&stats, "GetTask") > gets, "{:?}", stats.requests);
    let replies: Vec<_> = stats
        .messages
        .iter()
        .filter(|m| m.text == "two rooms")
        .collect();
    assert_eq!(replies.len(), 1, "{:?}", stats.messages);
    assert_eq!(replies[0].task_id.as_deref(), Some(task.as_str()));
    a.settle();
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(the_attempt(&env, "trip/hotel")["state"], "COMPLETED");
    assert_eq!(moves(&env, "trip/hotel"), 1);
}

#[test]
fn compensate_cancels_a_moved_agents_task_at_its_new_interface() {
    let env = TestEnv::new();
    let a = delegated_then_upgraded(&env, "trip/hotel", "work:100000", false);
    let task = task_of(&env, "trip/hotel");
    let out = env.run(["compensate", "trip"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(a.stats().cancels, [task]);
    assert_moved(&env, "trip/hotel", "CANCELED");
}

#[test]
fn compensate_of_an_agent_that_offers_nothing_we_speak_needs_a_human() {
    let env = TestEnv::new();
    let (_, _server) = delegated_then_gone(&env, "trip/hotel", "work:100000");
    let out = env.run(["compensate", "trip", "--format", "json"]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    assert!(
        json_lines(&out)
            .iter()
            .any(|r| r["action"] == "cancel" && r["outcome"] == "interface-gone"),
        "{}",
        stdout(&out)
    );
    assert_pending_gone(&env, "trip/hotel");
}
