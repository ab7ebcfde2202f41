//! SIGINT and SIGTERM during `reconcile` (a pass over many tasks of a slow agent), `follow` (a
//! long `work:N`) and `compensate` (a slow agent's cancellations): the process ends promptly with
//! exit 130 / 143 and says so, every observation it reported is committed, no attempt is
//! half-written (the journal's rows and event chains agree), and the pass lock or the row lease
//! is free at once for the next process, which finishes the work without sending anything twice.
//!
//! "Promptly" is checked without timing the process: the work left when the signal arrives
//! would take far longer than the hang guard.

use std::process::ExitStatus;
use std::time::Duration;

use rustix::process::Signal;
use serde_json::Value;

use crate::common::agent::SlowProxy;
use crate::common::commands::{attempts, events, spawn};
use crate::common::journal::{artifacts_of, assert_consistent};
use crate::common::running::Running;
use crate::common::wait::{GUARD, wait_until};
use crate::common::{TestEnv, agent, code, fast, stderr, stdout};

/// A signal, its exit code, and the status line a human sees (JSON output has none: its
/// consumers read the exit code).
struct Case {
    sig: Signal,
    code: i32,
    message: &'static str,
    json: bool,
}

/// SIGINT with JSON output (every reported observation is checked), SIGTERM with human output
/// (the status line is checked).
const SIGNALS: [Case; 2] = [
    Case {
        sig: Signal::INT,
        code: 130,
        message: "interrupted; everything seen so far is journaled.",
        json: true,
    },
    Case {
        sig: Signal::TERM,
        code: 143,
        message: "terminated; everything seen so far is journaled.",
        json: false,
    },
];

impl Case {
    /// `args`, with `--format json` when this case reads JSON.
    fn args<'a>(&self, args: &[&'a str]) -> Vec<&'a str> {
        let mut v = args.to_vec();
        if self.json {
            v.extend(["--format", "json"]);
        }
        v
    }

    /// Asserts the exit code, and the status line in human output.
    #[track_caller]
    fn assert_signalled(&self, status: ExitStatus, err: &str) {
        assert_eq!(status.code(), Some(self.code), "{status:?}; stderr:\n{err}");
        if !self.json {
            assert!(err.contains(self.message), "stderr:\n{err}");
        }
    }

    /// Asserts, in JSON output, that the last record is the `summary` the cut pass still owes:
    /// the signal, the exit code, and the counts of the records written before it.
    #[track_caller]
    fn assert_summary(&self, lines: &[Value], command: &str) {
        if !self.json {
            return;
        }
        let last = lines.last().expect("no JSON output");
        assert_eq!(last["type"], "summary", "last record: {last}");
        assert_eq!(last["command"], command, "{last}");
        assert_eq!(last["interrupted"], "SIGINT", "{last}");
        assert_eq!(last["exitCode"], self.code, "{last}");
        let mut outcomes = serde_json::Map::new();
        for a in actions(lines) {
            let n = outcomes
                .entry(a["outcome"].as_str().unwrap())
                .or_insert(Value::from(0));
            *n = Value::from(n.as_u64().unwrap() + 1);
        }
        assert_eq!(last["outcomes"], Value::Object(outcomes), "{last}");
        let events = lines.iter().filter(|v| v["type"] == "event").count();
        assert_eq!(last["events"], events, "{last}");
        assert_eq!(
            lines.iter().filter(|v| v["type"] == "summary").count(),
            1,
            "one summary"
        );
    }
}

/// Counts the journal's rows matching `sql` (a `SELECT count(*) …`), read beside the writer.
fn count(env: &TestEnv, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(env.journal()).expect("open the journal");
    conn.busy_timeout(Duration::from_secs(10)).unwrap();
    conn.query_row(sql, [], |r| r.get(0)).expect("count")
}

/// Counts like [`count`], but 0 while the journal's schema is not committed yet.
fn count_if_ready(env: &TestEnv, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(env.journal()).expect("open the journal");
    conn.busy_timeout(Duration::from_secs(10)).unwrap();
    match conn.query_row(sql, [], |r| r.get(0)) {
        Ok(n) => n,
        Err(e) if e.to_string().contains("no such table") => 0,
        Err(e) => panic!("count: {e}"),
    }
}

fn actions(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|v| v["type"] == "action").collect()
}

/// Asserts that nobody holds the pass lock: a second pass can take it at once.
fn assert_lock_free(env: &TestEnv) {
    let lock = a2a_recover::recovery::lock::acquire(&env.journal(), 1, "test");
    assert!(lock.is_ok(), "the pass lock is still held: {lock:?}");
}

// ---------------------------------------------------------------------------------------------
// reconcile
// ---------------------------------------------------------------------------------------------

#[test]
fn a_signal_during_a_reconcile_pass_commits_every_observation_and_frees_the_lock() {
    for case in SIGNALS {
        let env = TestEnv::new();
        let a = agent(fast());
        let slow = SlowProxy::start(a.url());
        // Half the tasks complete at once; the other half run for minutes.
        let steps = 24;
        for i in 0..steps {
            let text = if i % 2 == 0 {
                format!("hello {i}")
            } else {
                "work:10000".to_owned()
            };
            let out = env.run([
                "delegate",
                &format!("w/s{i}"),
                "--agent",
                &slow.url(),
                &text,
            ]);
            assert_eq!(code(&out), 0, "{}", stderr(&out));
        }
        // One read a second: the pass would take about `steps` seconds.
        slow.set_delay(1000);
        let mut pass = Running::new(spawn(
            &env,
            &case.args(&["reconcile", "--concurrency", "1"]),
        ));
        if case.json {
            pass.wait_for("three actions", |lines| actions(lines).len() >= 3);
        } else {
            let seen = "SELECT count(*) FROM attempts WHERE state <> 'SUBMITTED'";
            wait_until("three observations", GUARD, || count(&env, seen) >= 3);
        }
        pass.signal(case.sig);
        let (status, err, lines) = pass.finish();
        case.assert_signalled(status, &err);
        case.assert_summary(&lines, "reconcile");
        // Every observation reported was committed, routine ones (still running) included.
        let reported = actions(&lines);
        let rows = attempts(&env, Some("w"));
        for action in &reported {
            let step = action["step"].as_str().unwrap();
            let row = rows.iter().find(|r| r["step"] == step).unwrap();
            assert_eq!(
                row["state"], action["outcome"],
                "{step}: reported {action}, journaled {row}"
            );
        }
        let observed = rows.iter().filter(|r| r["state"] != "SUBMITTED").count();
        assert!(observed < steps, "the pass ran to its end");
        if case.json {
            assert!(
                reported.iter().any(|a| a["outcome"] == "WORKING"),
                "no routine observation among {reported:?}"
            );
        }
        assert_eq!(assert_consistent(&env.journal()), steps);
        assert_lock_free(&env);
        // The next pass takes the lock at once and reads what is left.
        slow.set_delay(0);
        let out = env.run(["reconcile"]);
        assert_eq!(code(&out), 3, "{}", stderr(&out));
        let rows = attempts(&env, Some("w"));
        for (i, row) in rows.iter().enumerate() {
            let want = if i % 2 == 0 { "COMPLETED" } else { "WORKING" };
            assert_eq!(row["state"], want, "{row}");
        }
        let stats = a.stats();
        assert!(stats.tasks_per_message_id.values().all(|&n| n == 1));
        assert_eq!(stats.tasks.len(), steps);
    }
}

// ---------------------------------------------------------------------------------------------
// follow
// ---------------------------------------------------------------------------------------------

#[test]
fn a_signal_during_follow_commits_every_event_and_frees_the_lease() {
    for case in SIGNALS {
        let env = TestEnv::new();
        let a = agent(fast());
        // 10 000 ticks of 20 ms: more than three minutes of work.
        let out = env.run(["delegate", "w/long", "--agent", &a.url(), "work:10000"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let mut follow = Running::new(spawn(&env, &case.args(&["follow", "w/long"])));
        if case.json {
            follow.wait_for("five events", |lines| {
                lines.iter().filter(|v| v["type"] == "event").count() >= 5
            });
        } else {
            wait_until("three chunks", GUARD, || {
                artifact_chunks(&env, "w/long") >= 3
            });
        }
        follow.signal(case.sig);
        let (status, err, lines) = follow.finish();
        case.assert_signalled(status, &err);
        case.assert_summary(&lines, "follow");
        // Every event shown was journaled first.
        let shown: Vec<&Value> = lines.iter().filter(|v| v["type"] == "event").collect();
        let journaled = events(&env, "w/long");
        for event in &shown {
            assert!(
                journaled.iter().any(|j| j["id"] == event["id"]),
                "shown but not journaled: {event}"
            );
        }
        let chunks = artifact_chunks(&env, "w/long");
        assert!(
            chunks >= shown.iter().filter(|e| e["kind"] == "artifact").count(),
            "artifact chunks shown but not journaled"
        );
        assert_eq!(assert_consistent(&env.journal()), 1);
        // The dead follower's lease is broken at once: the next one follows.
        let out = env.run(["follow", "w/long", "--until", "1s", "--format", "json"]);
        assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
        assert!(
            !stderr(&out).contains("another process"),
            "{}",
            stderr(&out)
        );
        assert!(artifact_chunks(&env, "w/long") >= chunks);
        let stats = a.stats();
        assert_eq!(stats.tasks.len(), 1);
        assert_eq!(stats.messages.len(), 1, "follow sends nothing");
    }
}

#[test]
fn a_signal_during_reconcile_follow_for_commits_every_event_and_frees_the_lock() {
    for case in SIGNALS {
        let env = TestEnv::new();
        let a = agent(fast());
        let steps = ["w/a", "w/b", "w/c"];
        for step in steps {
            let out = env.run(["delegate", step, "--agent", &a.url(), "work:10000"]);
            assert_eq!(code(&out), 0, "{}", stderr(&out));
        }
        // Following for two minutes: the signal comes long before.
        let mut pass = Running::new(spawn(
            &env,
            &case.args(&["reconcile", "--follow-for", "2m"]),
        ));
        let chunks = || -> usize { steps.iter().map(|s| artifact_chunks(&env, s)).sum() };
        if case.json {
            pass.wait_for("ten events", |lines| {
                lines.iter().filter(|v| v["type"] == "event").count() >= 10
            });
        } else {
            wait_until("ten chunks", GUARD, || chunks() >= 10);
        }
        pass.signal(case.sig);
        let (status, err, lines) = pass.finish();
        case.assert_signalled(status, &err);
        case.assert_summary(&lines, "reconcile");
        // Every event shown was journaled first.
        let journaled: Vec<Value> = steps.iter().flat_map(|s| events(&env, s)).collect();
        for event in lines.iter().filter(|v| v["type"] == "event") {
            assert!(
                journaled.iter().any(|j| j["id"] == event["id"]),
                "shown but not journaled: {event}"
            );
        }
        assert_eq!(assert_consistent(&env.journal()), steps.len());
        assert_lock_free(&env);
        let seen = chunks();
        // The next pass takes the lock at once; the tasks still run (exit 3).
        let out = env.run(["reconcile", "--follow-for", "1s"]);
        assert_eq!(code(&out), 3, "{}", stderr(&out));
        assert!(chunks() >= seen);
        let stats = a.stats();
        assert_eq!(stats.tasks.len(), steps.len());
        assert_eq!(stats.messages.len(), steps.len(), "following sends nothing");
    }
}

/// How many `chunk i;` pieces the step's `result` artifact holds.
fn artifact_chunks(env: &TestEnv, step: &str) -> usize {
    artifacts_of(&env.journal(), step)
        .iter()
        .map(|a| a.text().matches("chunk ").count())
        .sum()
}

// ---------------------------------------------------------------------------------------------
// compensate
// ---------------------------------------------------------------------------------------------

#[test]
fn a_signal_during_compensate_leaves_it_resumable_without_a_second_cancellation() {
    for case in SIGNALS {
        let env = TestEnv::new();
        let a = agent(fast());
        let slow = SlowProxy::start(a.url());
        let url = slow.url();
        let verify = format!("{url}_scripted/bookings/{{task_id}}");
        let steps = 8;
        for i in 0..steps {
            let out = env.run([
                "delegate",
                &format!("trip/s{i}"),
                "--agent",
                &url,
                "--effect",
                "--compensate",
                "cancel {task_id}",
                "--verify-url",
                &verify,
                &format!("book room {i}"),
            ]);
            assert_eq!(code(&out), 0, "{}", stderr(&out));
        }
        let out = env.run(["reconcile"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        // Each step costs a verification, a cancellation and a second verification.
        slow.set_delay(700);
        let comp = Running::new(spawn(&env, &case.args(&["compensate", "trip"])));
        let done = "SELECT count(*) FROM attempts WHERE effect = 'compensated'";
        wait_until("a compensated step", GUARD, || count(&env, done) >= 1);
        comp.signal(case.sig);
        let (status, err, lines) = comp.finish();
        case.assert_signalled(status, &err);
        case.assert_summary(&lines, "compensate");
        assert_eq!(
            attempts(&env, Some("trip"))[0]["workflowState"],
            "COMPENSATING"
        );
        let effects: Vec<Value> = attempts(&env, Some("trip"))
            .iter()
            .filter(|r| !r["step"].as_str().unwrap().contains('~'))
            .map(|r| r["effect"].clone())
            .collect();
        assert!(
            effects.iter().any(|e| e == "compensated") && effects.iter().any(|e| e == "verified"),
            "stopped mid-way: {effects:?}"
        );
        assert_consistent(&env.journal());
        assert_lock_free(&env);
        // The next run takes the lock at once and finishes; nothing was cancelled twice.
        slow.set_delay(0);
        let out = env.run(["compensate", "trip"]);
        assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
        let stats = a.stats();
        let mut cancels: Vec<&str> = stats
            .messages
            .iter()
            .filter_map(|m| m.text.strip_prefix("cancel "))
            .collect();
        cancels.sort_unstable();
        let before = cancels.len();
        cancels.dedup();
        assert_eq!(cancels.len(), before, "a booking was cancelled twice");
        assert_eq!(cancels.len(), steps);
        assert!(stats.tasks_per_message_id.values().all(|&n| n <= 1));
        assert_consistent(&env.journal());
    }
}

// ---------------------------------------------------------------------------------------------
// delegate --plan
// ---------------------------------------------------------------------------------------------

#[test]
fn a_signal_during_a_plans_batch_commits_the_answers_received_and_frees_every_lease() {
    for case in SIGNALS {
        let env = TestEnv::new();
        let a = agent(fast());
        let slow = SlowProxy::start(a.url());
        let steps = 40;
        let mut plan = String::from("workflow = \"big\"\n");
        for i in 0..steps {
            plan.push_str("\n[[step]]\nname = \"s");
            plan.push_str(&i.to_string());
            plan.push_str("\"\nagent = \"");
            plan.push_str(&slow.url());
            plan.push_str("\"\ntext = \"work:10000\"\n");
        }
        let file = env.path().join("big.toml");
        std::fs::write(&file, plan).unwrap();
        // Each send waits 300 ms at the proxy: the batch would take about 1.5 s.
        slow.set_delay(300);
        let file = file.to_str().unwrap();
        let mut run = Running::new(spawn(&env, &case.args(&["delegate", "--plan", file])));
        if case.json {
            run.wait_for("three sends", |lines| {
                actions(lines)
                    .iter()
                    .filter(|a| a["action"] == "send")
                    .count()
                    >= 3
            });
        } else {
            let seen = "SELECT count(*) FROM attempts WHERE task_id IS NOT NULL";
            wait_until("three journaled sends", GUARD, || {
                // The file exists before its schema is committed: until then, nothing is seen.
                env.journal().exists() && count_if_ready(&env, seen) >= 3
            });
        }
        run.signal(case.sig);
        let (status, err, lines) = run.finish();
        case.assert_signalled(status, &err);
        // Every answer that arrived was journaled: the agent created at most the sends that
        // were in flight (8) beyond what the journal holds; every reported send is journaled.
        let journaled = count(
            &env,
            "SELECT count(*) FROM attempts WHERE task_id IS NOT NULL",
        );
        let created = i64::try_from(a.stats().tasks.len()).unwrap();
        assert!(
            created - journaled <= 8,
            "{created} tasks created, {journaled} journaled"
        );
        for sent in actions(&lines).iter().filter(|a| a["action"] == "send") {
            let row = attempts(
                &env,
                Some(&format!("big/{}", sent["step"].as_str().unwrap())),
            );
            assert!(
                row[0]["taskId"].is_string(),
                "reported, not journaled: {sent}"
            );
        }
        assert_eq!(
            count(
                &env,
                "SELECT count(*) FROM attempts WHERE lease_owner_pid IS NOT NULL"
            ),
            0,
            "leases left behind"
        );
        assert_consistent(&env.journal());
        // The rest is sent (or found) by a re-run: one task per messageId.
        slow.set_delay(0);
        let out = env.run(["delegate", "--plan", file]);
        assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
        let stats = a.stats();
        for row in attempts(&env, Some("big")) {
            let id = row["messageId"].as_str().unwrap();
            assert_eq!(stats.tasks_per_message_id.get(id), Some(&1), "{row:#?}");
        }
    }
}
