//! `reconcile` end to end: the binary against scripted agents on loopback and real journals —
//! crashes at every crash point, retention gaps, 503 after processing, concurrent passes and
//! delegates, re-delegation, exit codes, dry runs and the pass lock.

use std::os::unix::process::ExitStatusExt as _;
use std::process::Output;
use std::time::Duration;

use a2a_recover::a2a::card_url_for;
use a2a_recover::journal::{Binding, IntentOutcome, Journal, NewIntent, StepName, StepSpec};
use a2a_recover::scripted_agent::{AgentConfig, FailMode, ScriptedAgent, Stats};
use serde_json::Value;

use crate::common::commands::{
    attempts, crashing, delegate, journal_bytes, messages_with_id, reconcile, register, settled,
    spawn, the_attempt,
};
use crate::common::journal::assert_consistent;
use crate::common::wait::{last_lease_expiry, wait_past};
use crate::common::{
    Background, Store, TestEnv, agent, block_on, code, fast, json_lines, stderr, stdout,
};

/// The agent's state of the task created by `message_id`, as `TASK_STATE_…` without the prefix.
fn agent_state(stats: &Stats, message_id: &str) -> Option<String> {
    stats
        .tasks
        .iter()
        .find(|t| t.message_id == message_id)
        .map(|t| {
            serde_json::to_value(&t.state)
                .unwrap()
                .as_str()
                .unwrap()
                .trim_start_matches("TASK_STATE_")
                .to_owned()
        })
}

fn open(env: &TestEnv) -> Journal {
    env.open_journal()
}

// ---------------------------------------------------------------------------------------------
// The crash matrix
// ---------------------------------------------------------------------------------------------

/// Every crash point × every scenario (`work`, `ask`, …), on both stores.
#[rstest::rstest]
fn every_scenario_recovers_from_every_crash_point(
    #[values(Store::Sqlite, Store::Postgres)] store: Store,
) {
    let scenarios = [
        ("work:2", "COMPLETED", 0),
        ("ask", "INPUT_REQUIRED", 4),
        ("auth", "AUTH_REQUIRED", 4),
        ("fail", "FAILED", 4),
        ("reject", "REJECTED", 4),
        ("direct", "REPLIED", 0),
    ];
    for (scenario, ends_in, exit) in scenarios {
        for point in ["after-intent", "after-send"] {
            let env = TestEnv::on(store);
            let a = agent(fast());
            let step = "trip/x";
            // The crashed process's lease lapses after 1 s. On SQLite it is broken at once (a
            // dead pid on this host); on PostgreSQL, shared by hosts, only by its expiry.
            let out = env
                .cmd()
                .env("A2A_RECOVER_CRASH_AT", point)
                .env("A2A_RECOVER_TEST_SEND_LEASE_TTL", "1s")
                .args(["delegate", step, "--agent", &a.url(), scenario])
                .output()
                .unwrap();
            assert_eq!(out.status.signal(), Some(6), "{point}: {out:?}");
            if store == Store::Postgres {
                let crashed = env.open_journal().step(&StepName::parse(step).unwrap());
                let attempts = crashed.unwrap().map(|r| r.attempts).unwrap_or_default();
                if let Some(lapses) = last_lease_expiry(&attempts) {
                    wait_past("the crashed send's lease to lapse", lapses);
                }
            }
            let out = settled(&env, 200);
            let why = format!(
                "{store:?}: {scenario} × {point}: {}{}",
                stdout(&out),
                stderr(&out)
            );
            assert_eq!(code(&out), exit, "{why}");
            let row = the_attempt(&env, step);
            let mid = row["messageId"].as_str().unwrap();
            let stats = a.stats();
            assert_eq!(row["state"], ends_in, "{why}");
            if scenario == "direct" {
                // A direct Message creates no task, so a crash after it cannot be detected
                // remotely: the resend may run the agent again (documented).
                let runs = messages_with_id(&stats, mid);
                let expected = if point == "after-send" { 2 } else { 1 };
                assert_eq!(runs, expected, "{why}");
                assert_eq!(stats.tasks_per_message_id.get(mid).copied().unwrap_or(0), 0);
            } else {
                assert_eq!(
                    stats.tasks_per_message_id.get(mid),
                    Some(&1),
                    "{why}: {stats:?}"
                );
                assert_eq!(stats.tasks.len(), 1, "{why}");
                assert_eq!(agent_state(&stats, mid).as_deref(), Some(ends_in), "{why}");
            }
            assert_eq!(assert_consistent(&env.journal()), 1, "{why}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reads: running work, retention, 503 after processing
// ---------------------------------------------------------------------------------------------

#[test]
fn a_pass_over_unchanged_running_work_writes_nothing_and_exits_3() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        tick: Duration::from_secs(3600),
        ..AgentConfig::default()
    });
    let out = delegate(&env, "w/long", &a.url(), "work:5", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // The first pass records WORKING (the send answered SUBMITTED).
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(the_attempt(&env, "w/long")["state"], "WORKING");
    let events = open(&env).event_count().unwrap();
    let before = journal_bytes(&env);
    for _ in 0..2 {
        let out = reconcile(&env, &["--format", "json"]);
        assert_eq!(code(&out), 3, "{}", stderr(&out));
        let lines = json_lines(&out);
        let summary = lines.last().unwrap();
        assert_eq!(summary["type"], "summary");
        assert_eq!(summary["outcomes"]["WORKING"], 1, "{summary}");
        assert_eq!(summary["exitCode"], 3);
    }
    assert_eq!(
        journal_bytes(&env),
        before,
        "an unchanged pass wrote to the journal"
    );
    assert_eq!(open(&env).event_count().unwrap(), events);
}

#[test]
fn a_task_forgotten_before_we_saw_it_end_is_lost_and_never_resent() {
    let env = TestEnv::new();
    let a = agent(fast());
    let out = delegate(&env, "w/echo", &a.url(), "hello", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let row = the_attempt(&env, "w/echo");
    // The send answered SUBMITTED; the agent completed it at once, and now forgets it.
    assert_eq!(row["state"], "SUBMITTED");
    let task = row["taskId"].as_str().unwrap();
    assert!(a.get().forget_task(task));
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("the agent forgot the task"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("a2a-recover resolve w/echo"),
        "{}",
        stdout(&out)
    );
    assert_eq!(the_attempt(&env, "w/echo")["state"], "LOST");
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4);
    let stats = a.stats();
    assert_eq!(stats.messages.len(), 1, "resent after a retention gap");
    assert_eq!(stats.tasks.len(), 1);
}

#[test]
fn a_503_after_processing_is_found_and_not_resent() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        fail_mode: FailMode::After,
        ..fast()
    });
    a.get().fail_next(1);
    let out = delegate(&env, "w/s", &a.url(), "hello", &[]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "w/s");
    assert_eq!(row["state"], "INTENT");
    let mid = row["messageId"].as_str().unwrap().to_owned();
    let out = reconcile(&env, &["--format", "json"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let actions: Vec<(String, String)> = json_lines(&out)
        .iter()
        .filter(|v| v["type"] == "action")
        .map(|v| {
            (
                v["action"].as_str().unwrap().into(),
                v["outcome"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(actions, [("look".to_owned(), "COMPLETED".to_owned())]);
    let stats = a.stats();
    assert_eq!(messages_with_id(&stats, &mid), 1);
    assert_eq!(stats.tasks_per_message_id.get(&mid), Some(&1));
    assert_eq!(the_attempt(&env, "w/s")["state"], "COMPLETED");
}

// ---------------------------------------------------------------------------------------------
// Concurrency: the pass lock and the leases
// ---------------------------------------------------------------------------------------------

/// Commits `n` INTENT attempts `w/s0…` for one agent directly through the journal API.
fn intents(env: &TestEnv, agent_url: &str, n: usize) -> Vec<String> {
    let card = card_url_for(agent_url).unwrap();
    let journal = open(env);
    let new: Vec<NewIntent> = (0..n)
        .map(|i| NewIntent {
            spec: StepSpec::to_agent(
                StepName::parse(&format!("w/s{i}")).unwrap(),
                format!("step {i}"),
                card.clone(),
            ),
            agent_url: Some(card.clone()),
            message_id: uuid::Uuid::new_v4().to_string(),
            context_id: Some(uuid::Uuid::new_v4().to_string()),
        })
        .collect();
    let created = journal.create_intents(&new).unwrap();
    assert!(
        created
            .iter()
            .all(|c| matches!(c, IntentOutcome::Created(_)))
    );
    new.into_iter().map(|n| n.message_id).collect()
}

#[test]
fn two_passes_and_racing_delegates_send_every_intent_exactly_once() {
    let env = TestEnv::new();
    let a = agent(AgentConfig::default());
    let n = 200;
    let ids = intents(&env, &a.url(), n);
    let url = a.url();
    // Two reconcile passes at once (one may find the lock held), and delegates of the same steps,
    // which take no pass lock: only the row leases stand between them and a double send.
    let passes: Vec<_> = (0..2)
        .map(|_| spawn(&env, &["reconcile", "--concurrency", "16"]))
        .collect();
    std::thread::scope(|s| {
        for chunk in 0..4 {
            let env = &env;
            let url = &url;
            s.spawn(move || {
                for i in (chunk..n).step_by(4) {
                    let out = delegate(env, &format!("w/s{i}"), url, &format!("step {i}"), &[]);
                    assert!(
                        matches!(code(&out), 0 | 3),
                        "delegate w/s{i}: {}{}",
                        stdout(&out),
                        stderr(&out)
                    );
                }
            });
        }
    });
    for p in passes {
        let out = p.wait_with_output().unwrap();
        assert!(
            matches!(code(&out), 0 | 3),
            "{}{}",
            stdout(&out),
            stderr(&out)
        );
    }
    // Whatever a lease made someone skip, a last pass finishes.
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let stats = a.stats();
    for mid in &ids {
        assert_eq!(
            stats.tasks_per_message_id.get(mid),
            Some(&1),
            "message {mid} was not sent exactly once"
        );
    }
    assert_eq!(stats.tasks.len(), n);
    assert!(
        attempts(&env, None)
            .iter()
            .all(|a| a["state"] == "COMPLETED")
    );
}

#[test]
fn a_held_lock_exits_3_naming_its_owner_and_touching_nothing() {
    let env = TestEnv::new();
    let a = agent(fast());
    let out = delegate(&env, "w/s", &a.url(), "work:3", &[]);
    assert_eq!(code(&out), 0);
    let lock =
        a2a_recover::recovery::lock::acquire(&env.journal(), 4242, "2026-11-30T01:00:00.000Z")
            .unwrap();
    let before = journal_bytes(&env);
    let requests = a.stats().requests;
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stderr(&out).contains(
            "another pass (pid 4242, started 2026-11-30T01:00:00.000Z) holds the journal lock"
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(journal_bytes(&env), before);
    assert_eq!(a.stats().requests, requests);
    drop(lock);
    let out = settled(&env, 200);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

// ---------------------------------------------------------------------------------------------
// Re-delegation
// ---------------------------------------------------------------------------------------------

/// Commits `w/car` bound to skill `book`, attempt 1 to `first`.
fn skill_step(env: &TestEnv, first: &Background<ScriptedAgent>, max_attempts: u32) -> String {
    let card = card_url_for(&first.url()).unwrap();
    let spec = StepSpec {
        binding: Binding::Skill("book".into()),
        max_attempts,
        ..StepSpec::to_agent(
            StepName::parse("w/car").unwrap(),
            "book a car",
            card.clone(),
        )
    };
    let mid = uuid::Uuid::new_v4().to_string();
    open(env)
        .create_intents(&[NewIntent {
            spec,
            agent_url: Some(card),
            message_id: mid.clone(),
            context_id: Some(uuid::Uuid::new_v4().to_string()),
        }])
        .unwrap();
    mid
}

fn scripted(scenario: &str) -> Background<ScriptedAgent> {
    agent(AgentConfig {
        scenario: Some(scenario.into()),
        skills: vec!["book".into()],
        ..fast()
    })
}

#[test]
fn a_failed_step_is_redelegated_along_the_registry_until_it_completes() {
    let env = TestEnv::new();
    let (a, b, c) = (scripted("reject"), scripted("fail"), scripted("echo"));
    register(&env, &[&a, &b, &c], "book");
    skill_step(&env, &a, 3);
    let out = settled(&env, 20);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let rows = attempts(&env, Some("w/car"));
    let states: Vec<&str> = rows.iter().map(|r| r["state"].as_str().unwrap()).collect();
    assert_eq!(states, ["REJECTED", "FAILED", "COMPLETED"]);
    let task = |i: usize| rows[i]["taskId"].as_str().unwrap().to_owned();
    assert_eq!(rows[0]["previousTaskId"], Value::Null);
    assert_eq!(rows[1]["previousTaskId"], task(0));
    assert_eq!(rows[2]["previousTaskId"], task(1));
    for (agent, prev, state, why) in [
        (&b, task(0), "REJECTED", "rejected: no availability"),
        (&c, task(1), "FAILED", "failed: scripted failure"),
    ] {
        let stats = agent.stats();
        assert_eq!(stats.messages.len(), 1, "{stats:?}");
        let m = &stats.messages[0];
        assert_eq!(
            m.text,
            format!("[previous attempt: task {prev} {state}: {why}]\nbook a car")
        );
        let meta = m.metadata.as_ref().expect("metadata");
        assert_eq!(meta["previousTaskId"], prev.as_str());
        assert_eq!(meta["previousFailure"], format!("{state}: {why}"));
    }
    assert_eq!(a.stats().messages.len(), 1);
    assert_eq!(a.stats().messages[0].text, "book a car");
}

#[test]
fn the_budget_is_per_step_across_agents() {
    let env = TestEnv::new();
    let (a, b, c) = (scripted("reject"), scripted("reject"), scripted("reject"));
    register(&env, &[&a, &b, &c], "book");
    skill_step(&env, &a, 2);
    let out = settled(&env, 20);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("the attempt budget (2) is spent"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("a2a-recover compensate w"),
        "{}",
        stdout(&out)
    );
    assert_eq!(attempts(&env, Some("w/car")).len(), 2);
    assert_eq!(c.stats().messages.len(), 0);
    // inspect --pending says why, with the command that answers it.
    let out = env.run(["inspect", "--pending", "--format", "json"]);
    let pending: Vec<Value> = json_lines(&out)
        .into_iter()
        .filter(|v| v["type"] == "attempt")
        .collect();
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0]["attempt"], 2);
}

#[test]
fn one_rejecting_agent_fails_the_step_for_good_without_a_loop() {
    let env = TestEnv::new();
    let a = scripted("reject");
    register(&env, &[&a], "book");
    skill_step(&env, &a, 3);
    let out = settled(&env, 20);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("no other registered agent advertises skill `book`"),
        "{}",
        stdout(&out)
    );
    let events = open(&env).event_count().unwrap();
    let before = journal_bytes(&env);
    for _ in 0..3 {
        let out = reconcile(&env, &[]);
        assert_eq!(code(&out), 4);
    }
    assert_eq!(attempts(&env, Some("w/car")).len(), 1);
    assert_eq!(a.stats().messages.len(), 1);
    assert_eq!(open(&env).event_count().unwrap(), events);
    assert_eq!(journal_bytes(&env), before);
}

#[test]
fn a_crash_after_the_redelegation_intent_ends_with_one_task_on_the_second_agent() {
    let env = TestEnv::new();
    let (a, b) = (scripted("reject"), scripted("echo"));
    register(&env, &[&a, &b], "book");
    skill_step(&env, &a, 3);
    // Pass 1 sends attempt 1; pass 2 sees it REJECTED and dies right before re-delegating.
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    crashing(&env, "after-intent", &["reconcile"]);
    assert_eq!(b.stats().messages.len(), 0);
    let rows = attempts(&env, Some("w/car"));
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["state"], "INTENT");
    let out = settled(&env, 20);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let stats = b.stats();
    assert_eq!(stats.tasks.len(), 1, "{stats:?}");
    assert_eq!(stats.messages.len(), 1);
    assert_eq!(attempts(&env, Some("w/car"))[1]["state"], "COMPLETED");
}

#[test]
fn the_same_crash_after_the_send_of_a_redelegation_is_found_not_resent() {
    let env = TestEnv::new();
    let (a, b) = (scripted("reject"), scripted("echo"));
    register(&env, &[&a, &b], "book");
    skill_step(&env, &a, 3);
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 3);
    crashing(&env, "after-send", &["reconcile"]);
    let out = settled(&env, 20);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let stats = b.stats();
    assert_eq!(stats.tasks.len(), 1, "{stats:?}");
    assert_eq!(stats.messages.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Exit codes, dry runs, usage
// ---------------------------------------------------------------------------------------------

#[test]
fn exit_codes_0_3_and_4() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        tick: Duration::from_secs(3600),
        ..AgentConfig::default()
    });
    // No journal: an error (a pass over a journal that is not there checks nothing), and
    // none is created; an empty one made by `journal init` is nothing to do.
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(!env.journal().exists(), "reconcile created a journal");
    let out = env.run(["journal", "init"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = delegate(&env, "done/s", &a.url(), "hello", &[]);
    assert_eq!(code(&out), 0);
    let out = reconcile(&env, &["done"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let out = delegate(&env, "running/s", &a.url(), "work:5", &[]);
    assert_eq!(code(&out), 0);
    let out = reconcile(&env, &["running"]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let out = delegate(&env, "asking/s", &a.url(), "ask", &[]);
    assert_eq!(code(&out), 0);
    let out = reconcile(&env, &["asking", "--format", "json"]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(lines[0]["type"], "begin");
    assert_eq!(lines[0]["command"], "reconcile");
    let action = &lines[1];
    assert_eq!(action["type"], "action");
    assert_eq!(
        (
            action["workflow"].as_str(),
            action["step"].as_str(),
            action["attempt"].as_i64()
        ),
        (Some("asking"), Some("s"), Some(1))
    );
    assert_eq!(action["action"], "read");
    assert_eq!(action["outcome"], "INPUT_REQUIRED");
    assert_eq!(action["detail"]["question"], "two rooms or one?");
    assert_eq!(
        action["remedy"]["command"],
        "a2a-recover reply asking/s \"…\""
    );
    assert_eq!(
        action["remedy"]["what"],
        "answer the agent's question: \"two rooms or one?\""
    );
    assert_eq!(lines.last().unwrap()["exitCode"], 4);
    // All together: 4 wins over 3 over 0, and the human output names the answer.
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4);
    assert!(
        stdout(&out).contains(
            "asking/s (attempt 1): answer the agent's question: \"two rooms or one?\"\n  \
             a2a-recover reply asking/s \"…\"\n"
        ),
        "{}",
        stdout(&out)
    );
    // An unknown workflow is a usage error.
    let out = reconcile(&env, &["nope"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("unknown workflow `nope`"),
        "{}",
        stderr(&out)
    );
    let out = reconcile(&env, &["--dry-run", "--follow-for", "1m"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("--dry-run cannot be combined with --follow-for"));
    // A resolved step no longer counts.
    let out = resolve(&env, "asking/s", "abandoned");
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let out = reconcile(&env, &["asking"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
}

#[test]
fn a_dry_run_changes_nothing_locally_or_remotely() {
    let env = TestEnv::new();
    let (a, b) = (scripted("reject"), scripted("echo"));
    register(&env, &[&a, &b], "book");
    skill_step(&env, &a, 3);
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 3);
    // An intent crashed after its commit, and the rejected car to re-delegate.
    let c = agent(fast());
    crashing(
        &env,
        "after-intent",
        &["delegate", "w/hotel", "--agent", &c.url(), "ask"],
    );
    let before = journal_bytes(&env);
    let lock_file = a2a_recover::recovery::lock::lock_path(&env.journal());
    let lock_before = std::fs::read(&lock_file).unwrap();
    let (sa, sb, sc) = (a.stats(), b.stats(), c.stats());
    let out = reconcile(&env, &["--dry-run", "--format", "json"]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let outcomes: Vec<String> = json_lines(&out)
        .iter()
        .filter(|v| v["type"] == "action")
        .map(|v| v["outcome"].as_str().unwrap().to_owned())
        .collect();
    assert!(outcomes.contains(&"would-send".to_owned()), "{outcomes:?}");
    assert!(
        outcomes.contains(&"would-record-REJECTED".to_owned()),
        "{outcomes:?}"
    );
    assert_eq!(json_lines(&out).last().unwrap()["dryRun"], true);
    assert_eq!(journal_bytes(&env), before);
    assert_eq!(std::fs::read(&lock_file).unwrap(), lock_before);
    for (agent, seen) in [(&a, sa), (&b, sb), (&c, sc)] {
        let now = agent.stats();
        assert_eq!(now.messages.len(), seen.messages.len());
        assert_eq!(now.tasks.len(), seen.tasks.len());
        assert_eq!(now.cancels.len(), seen.cancels.len());
    }
    assert_eq!(b.stats().messages.len(), 0);
}

// ---------------------------------------------------------------------------------------------
// Operator decisions, deadlines, unreachable agents
// ---------------------------------------------------------------------------------------------

/// Runs `resolve STEP --as DECISION --reason …`.
fn resolve(env: &TestEnv, step: &str, decision: &str) -> Output {
    env.run([
        "resolve",
        step,
        "--as",
        decision,
        "--reason",
        "operator test",
    ])
}

#[test]
fn an_uncertain_step_is_resent_only_on_the_operators_resend() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        no_list_tasks: true,
        ..fast()
    });
    crashing(
        &env,
        "after-send",
        &["delegate", "w/s", "--agent", &a.url(), "hello"],
    );
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("--as resend"), "{}", stdout(&out));
    let row = the_attempt(&env, "w/s");
    assert_eq!(row["state"], "UNCERTAIN");
    let mid = row["messageId"].as_str().unwrap().to_owned();
    // Never resent on its own.
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4);
    assert_eq!(a.stats().tasks_per_message_id.get(&mid), Some(&1));
    let out = resolve(&env, "w/s", "resend");
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let out = settled(&env, 50);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    // Same messageId, the risk accepted: the agent without dedup ran it twice.
    assert_eq!(a.stats().tasks_per_message_id.get(&mid), Some(&2));
    let row = the_attempt(&env, "w/s");
    assert_eq!(row["messageId"], mid.as_str());
    assert_eq!(row["state"], "COMPLETED");
    let rec = open(&env)
        .step(&StepName::parse("w/s").unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(
        rec.step.resolution, None,
        "the resolution was not cleared once acted on"
    );
}

#[test]
fn a_retry_adds_a_linked_attempt_within_the_budget() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        scenario: Some("fail".into()),
        ..fast()
    });
    let out = delegate(&env, "w/s", &a.url(), "book", &[]);
    assert_eq!(code(&out), 0);
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("bound to one agent"),
        "{}",
        stdout(&out)
    );
    for n in 2..=3 {
        let out = resolve(&env, "w/s", "retry");
        assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
        let out = settled(&env, 20);
        assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
        let rows = attempts(&env, Some("w/s"));
        assert_eq!(rows.len(), n);
        assert_eq!(rows[n - 1]["previousTaskId"], rows[n - 2]["taskId"]);
        assert_eq!(rows[n - 1]["state"], "FAILED");
    }
    let texts: Vec<String> = a.stats().messages.iter().map(|m| m.text.clone()).collect();
    assert_eq!(texts[0], "book");
    assert!(
        texts[1].starts_with("[previous attempt: task "),
        "{texts:?}"
    );
    assert!(
        texts[1].ends_with(" FAILED: failed: scripted failure]\nbook"),
        "{texts:?}"
    );
    // The budget (3) is spent: a fourth retry is refused and adds nothing.
    let out = resolve(&env, "w/s", "retry");
    assert_eq!(code(&out), 2, "{}{}", stdout(&out), stderr(&out));
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(attempts(&env, Some("w/s")).len(), 3);
    assert_eq!(a.stats().messages.len(), 3);
}

#[test]
fn the_deadline_ends_a_pass_cleanly_with_exit_3() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        tick: Duration::from_secs(3600),
        ..AgentConfig::default()
    });
    let out = delegate(&env, "w/s", &a.url(), "work:5", &[]);
    assert_eq!(code(&out), 0);
    let out = reconcile(&env, &["--deadline", "0s", "--format", "json"]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let summary = json_lines(&out).pop().unwrap();
    assert_eq!(summary["unvisited"], 1, "{summary}");
    assert_eq!(summary["outcomes"]["deadline"], 1, "{summary}");
}

#[test]
fn an_unreachable_agent_does_not_stop_the_pass_for_the_others() {
    let env = TestEnv::new();
    let up = agent(fast());
    let down = agent(fast());
    for (step, a) in [("w/up", &up), ("w/down", &down)] {
        let out = delegate(&env, step, &a.url(), "hello", &[]);
        assert_eq!(code(&out), 0);
    }
    drop(down);
    let out = reconcile(&env, &["--format", "json"]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let lines = json_lines(&out);
    let failed = lines
        .iter()
        .find(|v| v["type"] == "action" && v["step"] == "down")
        .unwrap();
    assert_eq!(failed["outcome"], "read-failed", "{failed}");
    assert_eq!(the_attempt(&env, "w/up")["state"], "COMPLETED");
    assert_eq!(the_attempt(&env, "w/down")["state"], "SUBMITTED");
    let events = open(&env)
        .events_of_step(&StepName::parse("w/down").unwrap())
        .unwrap();
    assert_eq!(events.last().unwrap().kind, "read-failed");
}

#[test]
fn a_task_canceled_by_the_agent_fails_the_step_for_good_without_redelegation() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        scenario: Some("work:100".into()),
        skills: vec!["book".into()],
        tick: Duration::from_secs(3600),
        ..AgentConfig::default()
    });
    let b = scripted("echo");
    register(&env, &[&a, &b], "book");
    skill_step(&env, &a, 3);
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let task = attempts(&env, Some("w/car"))[0]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    // Someone else cancels it on the agent: not a2a-recover's `compensate`.
    let url = a.url();
    block_on(async {
        let client = a2a_recover::a2a::A2aClient::new(a2a_recover::a2a::ClientConfig {
            timeout: Duration::from_secs(30),
            max_response_size: 1 << 20,
            stream_idle_timeout: Duration::from_secs(60),
            max_look_size: 64 * 1024 * 1024,
            max_card_size: a2a_recover::a2a::DEFAULT_MAX_CARD_SIZE,
        })
        .unwrap();
        let ep = a2a_recover::a2a::Endpoint {
            url: url.clone(),
            tenant: None,
            binding: a2a_recover::a2a::ProtocolBinding::default(),
            card_origin: a2a_recover::a2a::origin_of(&url).unwrap(),
            credential: None,
            placement: a2a_recover::a2a::Placement::Bearer,
            allow_cross_origin: false,
        };
        client.cancel_task(&ep, &task).await.unwrap();
    });
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("the agent canceled the task"),
        "{}",
        stdout(&out)
    );
    assert_eq!(attempts(&env, Some("w/car")).len(), 1);
    assert!(b.stats().messages.is_empty());
}

/// `reconcile -q` prints nothing at all when nothing needs a human (cron mails only what needs
/// someone), and still says what does.
#[test]
fn quiet_prints_nothing_unless_a_human_must_act() {
    let env = TestEnv::new();
    let a = agent(fast());
    let out = delegate(&env, "w/done", &a.url(), "book it", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = env.run(["reconcile", "-q"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!((stdout(&out).as_str(), stderr(&out).as_str()), ("", ""));
    let out = env.run(["reconcile", "-q"]);
    assert_eq!((stdout(&out).as_str(), stderr(&out).as_str()), ("", ""));

    let out = delegate(&env, "w/asks", &a.url(), "ask", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = env.run(["reconcile", "-q"]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    assert!(stdout(&out).contains("w/asks"), "{}", stdout(&out));
}

/// A failed look is said once, without stuttering its action (`look look-failed`).
#[test]
fn a_failed_read_line_does_not_repeat_its_action() {
    let env = TestEnv::new();
    // An intent whose endpoint is journaled (so it may have been sent) on a closed port.
    let out = env.run(["delegate", "w/s", "hi", "--agent", "http://127.0.0.1:9/"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let out = env.run(["reconcile"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let err = stderr(&out);
    for stutter in [
        "look look-failed",
        "card card-failed",
        "read read-failed",
        "send send-failed",
    ] {
        assert!(!err.contains(stutter), "{err}");
    }
}

/// Three tasks that completed meanwhile: the summary counts three attempts, COMPLETED, not six
/// actions (the read and the record of each); the JSON summary has both.
#[test]
fn the_summary_counts_attempts_by_outcome_not_actions() {
    let env = TestEnv::new();
    let a = agent(fast());
    for step in ["trip/flight", "trip/hotel", "trip/car"] {
        let out = delegate(&env, step, &a.url(), "work:2", &[]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    a.settle();
    let out = reconcile(&env, &["--dry-run", "--format", "json"]);
    let summary = json_lines(&out).pop().unwrap();
    assert_eq!(
        summary["attempts"],
        serde_json::json!({"would-record-COMPLETED": 3})
    );
    let out = reconcile(&env, &["--format", "json"]);
    let summary = json_lines(&out).pop().unwrap();
    assert_eq!(
        summary["attempts"],
        serde_json::json!({"COMPLETED": 3}),
        "{summary}"
    );
    assert_eq!(summary["outcomes"]["COMPLETED"], 6, "{summary}");
    // The human line says the same of attempts.
    for step in ["trip/train", "trip/bus"] {
        assert_eq!(code(&delegate(&env, step, &a.url(), "work:2", &[])), 0);
    }
    a.settle();
    let out = reconcile(&env, &[]);
    let text = stdout(&out);
    assert!(
        text.contains("2 attempt(s) visited: 2 COMPLETED; done."),
        "{text}"
    );
}

/// An agent gone: one line for the agent, naming the cause in words and the steps that wait on
/// it, and the hint once; each step's error chain only at `-v`.
#[test]
fn an_unreachable_agent_is_one_line_for_all_its_steps() {
    let env = TestEnv::new();
    let a = agent(fast());
    for step in ["w/a", "w/b", "w/c"] {
        assert_eq!(code(&delegate(&env, step, &a.url(), "work:500", &[])), 0);
    }
    let base = a.url();
    drop(a);
    let out = reconcile(&env, &["--timeout", "2s"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        !err.contains("os error"),
        "no error chain by default: {err}"
    );
    assert_eq!(err.matches("is unreachable").count(), 1, "{err}");
    assert!(
        err.contains(&format!("agent {base} is unreachable: connection refused")),
        "{err}"
    );
    assert!(err.contains("3 steps wait on it: w/a, w/b, w/c"), "{err}");
    assert_eq!(err.matches("hint:").count(), 1, "{err}");

    let out = reconcile(&env, &["--timeout", "2s", "-v"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let err = stderr(&out);
    let failures: Vec<&str> = err.lines().filter(|l| l.contains("read failed:")).collect();
    assert_eq!(failures.len(), 3, "{err}");
    assert!(
        failures.iter().all(|l| l.contains("Connection refused")),
        "{err}"
    );
    assert!(!err.contains("read read failed"), "{err}");
}

/// A dry run that finds a question journals nothing, so `inspect --pending` cannot list it yet:
/// its verdict names the step instead of pointing at that command.
#[test]
fn a_dry_run_that_needs_a_human_names_the_step() {
    let env = TestEnv::new();
    let a = agent(fast());
    assert_eq!(
        code(&delegate(&env, "trip-3/hotel", &a.url(), "ask", &[])),
        0
    );
    let out = reconcile(&env, &["--dry-run"]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("a human would have to act on trip-3/hotel (exit 4)"),
        "{text}"
    );
    assert!(!text.contains("inspect --pending"), "{text}");
}
