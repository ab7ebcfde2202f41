//! The holes of issue 16 that sloppy or hostile agents opened in the look before a resend,
//! each pinned against a [`Hostile`] agent on loopback, through the real binary and the real
//! journal: a task in another context adopted (1), a send still in flight taken as absence
//! (2), an agent that replaces client context ids (3), two tasks holding our messageId (the
//! duplicate report), and `ListTasks` paging for ever with large pages (5). Where a send could
//! be repeated, the agent's own counters prove one task per messageId.

use std::path::Path;
use std::time::Duration;

use a2a_recover::journal::{self, Attempt, Journal, StepName};
use serde_json::{Value, json};

use crate::common::commands::{crashing, reconcile, the_attempt};
use crate::common::hostile::{Hostile, Script, run_measured};
use crate::common::journal::events_of;
use crate::common::wait::wait_past_send_horizon;
use crate::common::{TestEnv, code, explain, stderr, stdout};

/// The step's only attempt and its artifacts, read from the journal file.
fn journaled(path: &Path, step: &str) -> (Attempt, Vec<journal::Artifact>) {
    let j = Journal::open_read_only(path, Duration::from_secs(10)).unwrap();
    let record = j.step(&StepName::parse(step).unwrap()).unwrap().unwrap();
    assert_eq!(record.attempts.len(), 1, "{:?}", record.attempts);
    let attempt = record.attempts[0].clone();
    let artifacts = j.artifacts(attempt.id).unwrap();
    (attempt, artifacts)
}

/// The step's events: kind and details.
fn events(path: &Path, step: &str) -> Vec<(String, Value)> {
    events_of(path, step)
        .into_iter()
        .map(|e| (e.kind, e.detail.unwrap_or_default()))
        .collect()
}

/// Starts an agent with `script`, delegates `step` to it and crashes right after the send
/// (the agent processed it, nothing of its answer is journaled); returns the agent, the
/// attempt, and the reconcile run after it with the real in-flight horizon.
fn crash_after_send_then_reconcile(
    script: Script,
    step: &str,
) -> (Hostile, Attempt, std::process::Output, TestEnv) {
    let env = TestEnv::new().in_flight_horizon();
    let h = Hostile::start();
    h.set_script(script);
    crashing(
        &env,
        "after-send",
        &["delegate", step, "--agent", h.url(), "book a room"],
    );
    let (a, _) = journaled(&env.journal(), step);
    let o = reconcile(&env, &[]);
    (h, a, o, env)
}

/// Asserts the step's attempt is journaled with the agent's first task, after one send only,
/// and that `holding` tasks hold its messageId (the agent's own count).
fn assert_found_once(
    env: &TestEnv,
    h: &Hostile,
    step: &str,
    o: &std::process::Output,
    holding: usize,
) {
    let (after, _) = journaled(&env.journal(), step);
    assert_eq!(after.task_id.as_deref(), Some("task-1"), "{}", explain(o));
    assert_eq!(h.count("SendMessage"), 1, "{}", explain(o));
    assert_eq!(h.tasks_holding(&after.message_id), holding);
}

/// Hole 1: an agent whose `ListTasks` ignores the `contextId` filter lists another client's
/// COMPLETED task (with an artifact). After a crash before our send, reconcile's look must not
/// take it: our step keeps its own contextId, stores no foreign artifact, and our work is sent.
#[test]
fn a_listed_task_in_another_context_is_never_taken_as_ours() {
    let env = TestEnv::new().in_flight_horizon();
    let h = Hostile::start();
    h.seed_task(json!({
        "id": "foreign-1", "contextId": "someone-elses-context",
        "status": {"state": "TASK_STATE_COMPLETED",
                   "timestamp": a2a_recover::clock::rfc3339(a2a_recover::clock::system_now())},
        "history": [{"messageId": "their-message", "role": "ROLE_USER",
                     "parts": [{"text": "their work"}]}],
        "artifacts": [{"artifactId": "a-foreign", "name": "theirs",
                       "parts": [{"text": "someone else's result"}]}]
    }));
    // Our send times out unanswered and the agent never gets to it: its outcome is unknown.
    h.set_script(Script {
        hold_sends: true,
        ..Script::default()
    });
    let step = "w/ours";
    let o = env.run([
        "--timeout",
        "1s",
        "delegate",
        step,
        "--agent",
        h.url(),
        "book a room",
    ]);
    assert_eq!(code(&o), 3, "{}", explain(&o));
    let (before, _) = journaled(&env.journal(), step);
    assert!(
        before.interface_url.is_some(),
        "possibly sent: the look runs"
    );
    h.set_script(Script {
        list_ignores_filter: true,
        ..Script::default()
    });
    // Past the in-flight horizon of that send (2 × its 1 s timeout): an empty look is then
    // proof of absence.
    wait_past_send_horizon(&env, step);

    let o = reconcile(&env, &["--timeout", "1s"]);
    let (after, artifacts) = journaled(&env.journal(), step);
    assert_ne!(
        after.task_id.as_deref(),
        Some("foreign-1"),
        "{}",
        explain(&o)
    );
    assert_eq!(
        after.context_id, before.context_id,
        "our contextId was overwritten"
    );
    assert!(
        artifacts.iter().all(|a| a.artifact_id != "a-foreign"),
        "a foreign artifact was stored: {artifacts:?}"
    );
    // Our work was sent again (same messageId), in our own context, and journaled: one task.
    assert_eq!(h.tasks_holding(&before.message_id), 1);
    assert_eq!(h.count("SendMessage"), 2, "the held send and the resend");
    assert_eq!(after.state.as_str(), "WORKING", "{}", explain(&o));
    let ours = h
        .tasks()
        .into_iter()
        .find(|t| t["history"][0]["messageId"] == before.message_id.as_str())
        .expect("our task");
    assert_eq!(after.task_id.as_deref(), ours["id"].as_str());
    assert_eq!(ours["contextId"].as_str(), before.context_id.as_deref());
}

/// Hole 2: an overloaded agent processes a `SendMessage` only after the client gave up (its
/// `--timeout`). A re-run `delegate` and a `reconcile` inside the in-flight horizon (twice the
/// timeout journaled with the send, not theirs) send nothing and exit 3; once the agent has
/// processed the send and the horizon passed, the look finds the task. The agent's counters
/// prove one task for the messageId.
#[test]
fn a_send_still_in_flight_is_not_taken_as_absent() {
    let env = TestEnv::new().in_flight_horizon();
    let h = Hostile::start();
    h.set_script(Script {
        hold_sends: true,
        ..Script::default()
    });
    let step = "w/slow";
    let args = |timeout: &'static str| {
        vec![
            "--timeout",
            timeout,
            "delegate",
            step,
            "--agent",
            h.url(),
            "book a room",
        ]
    };
    let o = env.run(args("4s"));
    assert_eq!(code(&o), 3, "{}", explain(&o));
    assert_eq!(h.count("SendMessage"), 1);
    assert_eq!(h.tasks_created(), 0, "held, not processed yet");
    let (a, _) = journaled(&env.journal(), step);

    // Inside the horizon (8 s from the send), with a shorter timeout of their own.
    let o = env.run(args("1s"));
    assert_eq!(code(&o), 3, "{}", explain(&o));
    assert!(stdout(&o).contains("in flight"), "{}", explain(&o));
    let o = reconcile(&env, &["--timeout", "1s", "--format", "json"]);
    assert_eq!(code(&o), 3, "{}", explain(&o));
    assert!(stdout(&o).contains("\"in-flight\""), "{}", explain(&o));
    // The human view says when the step is looked for again, in words.
    let o = reconcile(&env, &["--timeout", "1s"]);
    assert_eq!(code(&o), 3, "{}", explain(&o));
    assert!(
        stderr(&o).contains("w/slow (attempt 1): sent, and its answer is unknown")
            && stderr(&o).contains("looked for again after 20"),
        "{}",
        explain(&o)
    );
    assert_eq!(h.count("SendMessage"), 1, "a send inside the horizon");
    assert_eq!(journaled(&env.journal(), step).0.state.as_str(), "INTENT");
    assert!(
        events(&env.journal(), step)
            .iter()
            .any(|(kind, _)| kind == "in-flight"),
        "an in-flight event"
    );

    // The agent gets to it late; past the horizon the look finds it.
    assert_eq!(h.release_held(), 1);
    wait_past_send_horizon(&env, step);
    let o = reconcile(&env, &["--timeout", "1s"]);
    assert_found_once(&env, &h, step, &o, 1);
    assert_eq!(journaled(&env.journal(), step).0.message_id, a.message_id);
    assert_eq!(h.tasks_created(), 1);
}

/// Hole 3: an agent that silently replaces client context ids, a crash after the send (so
/// whether it keeps them is still unknown): the look by context is empty, the look by time
/// finds our messageId; nothing is resent.
#[test]
fn an_agent_that_replaces_context_ids_is_also_looked_at_by_time() {
    let script = Script {
        replace_context: true,
        ..Script::default()
    };
    let step = "w/replaced";
    let (h, a, o, env) = crash_after_send_then_reconcile(script, step);
    assert_ne!(
        h.tasks()[0]["contextId"].as_str(),
        a.context_id.as_deref(),
        "the agent replaced our contextId"
    );
    assert_found_once(&env, &h, step, &o, 1);
    assert_eq!(h.tasks_created(), 1);
}

/// Two remote tasks hold our messageId: the look journals one, and reports both (a
/// `duplicate-task` event naming them, and a line on stderr).
#[test]
fn two_remote_tasks_holding_our_message_are_reported() {
    let script = Script {
        twin_tasks: true,
        ..Script::default()
    };
    let step = "w/twice";
    let (h, a, o, env) = crash_after_send_then_reconcile(script, step);
    assert_eq!(h.tasks_holding(&a.message_id), 2);
    assert_found_once(&env, &h, step, &o, 2);
    let err = stderr(&o);
    assert!(
        err.lines()
            .any(|l| l.contains("task-1") && l.contains("task-2") && l.contains("duplicate")),
        "a line naming both tasks:\n{err}"
    );
    let dup: Vec<Value> = events(&env.journal(), step)
        .into_iter()
        .filter(|(kind, _)| kind == "duplicate-task")
        .map(|(_, detail)| detail)
        .collect();
    assert_eq!(dup.len(), 1, "{dup:?}");
    assert_eq!(dup[0]["taskIds"], json!(["task-1", "task-2"]));
}

/// Peak resident memory of a reconcile whose look meets endless large pages, in KiB.
const PAGING_RSS_BOUND_KIB: u64 = 96 * 1024;

/// Hole 5: `ListTasks` hands out a fresh `nextPageToken` for ever with ~230 KB pages. The look
/// keeps a summary per candidate, not the pages, and stops at `--max-look-size` (default
/// 64 MiB): the child's peak RSS stays under [`PAGING_RSS_BOUND_KIB`], and the attempt is
/// `UNCERTAIN`, never resent.
#[test]
fn endless_large_listtasks_pages_are_bounded_in_memory_and_bytes() {
    let env = TestEnv::new().in_flight_horizon();
    let h = Hostile::start();
    let step = "w/paged";
    // A send whose outcome is unknown (held unanswered, never processed).
    h.set_script(Script {
        hold_sends: true,
        ..Script::default()
    });
    let o = env.run([
        "--timeout",
        "1s",
        "delegate",
        step,
        "--agent",
        h.url(),
        "book a room",
    ]);
    assert_eq!(code(&o), 3, "{}", explain(&o));
    h.set_script(Script {
        endless_pages: Some(2048),
        ..Script::default()
    });

    let m = run_measured(&env, ["reconcile"], &[]);
    let a = the_attempt(&env, step);
    assert_eq!(a["state"], "UNCERTAIN", "{}", explain(&m.out));
    assert_eq!(h.count("SendMessage"), 1, "resent");
    assert!(
        m.peak_rss_kib < PAGING_RSS_BOUND_KIB,
        "reconcile peaked at {} KiB (bound {PAGING_RSS_BOUND_KIB} KiB) after {} pages",
        m.peak_rss_kib,
        h.pages_served()
    );
}
