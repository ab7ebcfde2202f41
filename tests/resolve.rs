//! `resolve` and `inspect STEP`'s chain of attempts, through the binary, against real agents on
//! 127.0.0.1 and the real journal.
//!
//! What each decision changes is checked in the journal (state, decision, event) and in what
//! the next command does: `inspect --pending`, and a `delegate` re-run, which sends an approved
//! resend once without a look. (`reconcile` reads the same journal state; it is tested on its
//! own branch.)

use std::os::unix::process::ExitStatusExt;
use std::process::Output;
use std::time::Duration;

use a2a_recover::journal::{Journal, WorkflowState};
use a2a_recover::scripted_agent::{AgentConfig, ScriptedAgent};
use serde_json::{Value, json};

use crate::common::in_runtime::{
    CardServer, assert_code, attempts, guard, records_after_begin, refusing_card, run, run_with,
    scripted,
};
use crate::common::snapshot::{compile, redact};
use crate::common::{TestEnv, code, stderr, stdout};

/// Returns the `attempt` records of `inspect --pending --format json`.
async fn pending(env: &TestEnv) -> Vec<Value> {
    let o = run(env, &["inspect", "--pending", "--format", "json"]).await;
    assert_code(&o, 0);
    records_after_begin(&o, "inspect")
}

/// Returns the events of a step (`inspect STEP --events --format json`).
async fn events(env: &TestEnv, step: &str) -> Vec<Value> {
    let o = run(env, &["inspect", step, "--events", "--format", "json"]).await;
    assert_code(&o, 0);
    records_after_begin(&o, "inspect")
        .into_iter()
        .filter(|r| r["type"] == "event")
        .collect()
}

/// Delegates `step` to a scripted agent without ListTasks and crashes right after the send, then
/// re-runs it: the look is inconclusive, so the step is `UNCERTAIN` (exit 4). Returns the agent.
async fn uncertain_step(env: &TestEnv, step: &str) -> ScriptedAgent {
    let agent = ScriptedAgent::start(
        AgentConfig {
            no_list_tasks: true,
            tick: Duration::from_millis(15),
            ..AgentConfig::default()
        },
        0,
    )
    .await
    .unwrap();
    let url = agent.url();
    let args = ["delegate", step, "--agent", &url, "echo book it"];
    let crash = format!("after-send:{step}");
    let o = run_with(env, &args, &[("A2A_RECOVER_CRASH_AT", &crash)]).await;
    assert_eq!(o.status.signal(), Some(6), "{}", stderr(&o));
    assert_eq!(
        agent.stats().tasks.len(),
        1,
        "the crashed send created a task"
    );
    let o = run(env, &args).await;
    assert_code(&o, 4);
    assert!(stdout(&o).contains("is UNCERTAIN"), "{}", stdout(&o));
    agent
}

#[tokio::test]
#[expect(
    clippy::too_many_lines,
    reason = "one retry story, ending in the table it builds"
)]
async fn retry_after_a_refusal_adds_a_linked_attempt_and_inspect_shows_the_chain() {
    guard(async {
        let env = TestEnv::new();
        let server = CardServer::start(|base| refusing_card(base, &["car"])).await;
        let args = [
            "delegate",
            "trip/car",
            "--agent",
            &server.url,
            "--max-attempts",
            "2",
            "rent a car",
        ];
        assert_code(&run(&env, &args).await, 4);

        // resend is only for UNCERTAIN: the message names the state, nothing is written.
        let before = events(&env, "trip/car").await.len();
        let o = run(
            &env,
            &["resolve", "trip/car", "--as", "resend", "--reason", "try"],
        )
        .await;
        assert_code(&o, 2);
        assert_eq!(
            stderr(&o),
            "error: cannot resolve `trip/car` as resend: attempt 1 of step `trip/car` is \
             REFUSED: only an UNCERTAIN attempt is resent with its own messageId\n\n\
             hint: resend reuses the messageId of an UNCERTAIN attempt; for a new attempt use \
             `a2a-recover resolve trip/car --as retry --reason \"…\"`\n"
        );
        assert_eq!(events(&env, "trip/car").await.len(), before);

        let o = run(
            &env,
            &[
                "resolve",
                "trip/car",
                "--as",
                "retry",
                "--reason",
                "endpoint fixed",
            ],
        )
        .await;
        assert_code(&o, 0);
        assert_eq!(
            stdout(&o),
            format!(
                "resolved trip/car as retry: attempt 2 to {} is journaled (INTENT, fresh ids, \
                 after attempt 1); `a2a-recover reconcile` sends it.\n",
                server.url
            )
        );

        let chain = attempts(&env, "trip/car").await;
        assert_eq!(chain.len(), 2);
        assert_eq!(chain[0]["state"], "REFUSED");
        assert_eq!(chain[0]["latest"], false);
        assert_eq!(chain[0]["resolution"]["as"], "retry");
        assert_eq!(chain[0]["resolution"]["reason"], "endpoint fixed");
        assert_eq!(chain[0]["resolution"]["resendPending"], false);
        assert!(chain[0]["resolution"]["resolvedAt"].is_string());
        assert_eq!(chain[1]["state"], "INTENT");
        assert_eq!(chain[1]["previousAttempt"], 1);
        assert_eq!(
            chain[1]["previousTaskId"],
            Value::Null,
            "a refusal has no task"
        );
        assert_eq!(chain[1]["resolution"], Value::Null);
        assert_eq!(chain[1]["agent"], chain[0]["agent"]);
        assert_ne!(chain[1]["messageId"], chain[0]["messageId"]);
        assert_ne!(chain[1]["contextId"], chain[0]["contextId"]);
        assert!(pending(&env).await.is_empty(), "the retry answered it");
        let resolved: Vec<Value> = events(&env, "trip/car")
            .await
            .into_iter()
            .filter(|e| e["kind"] == "resolved")
            .collect();
        assert_eq!(resolved.len(), 1);
        assert_eq!(resolved[0]["attempt"], 1);
        assert_eq!(
            resolved[0]["detail"],
            json!({"resolution": "retry", "reason": "endpoint fixed", "newAttempt": 2,
                   "resendApproved": false})
        );

        // An INTENT attempt is not settled: no retry beside it.
        let o = run(
            &env,
            &["resolve", "trip/car", "--as", "retry", "--reason", "again"],
        )
        .await;
        assert_code(&o, 2);
        assert!(
            stderr(&o).contains("attempt 2 of step `trip/car` is INTENT"),
            "{}",
            stderr(&o)
        );

        // The re-run sends attempt 2 (refused again); the budget of 2 is then spent.
        assert_code(&run(&env, &args).await, 4);
        let o = run(
            &env,
            &["resolve", "trip/car", "--as", "retry", "--reason", "third"],
        )
        .await;
        assert_code(&o, 2);
        assert_eq!(
            stderr(&o),
            "error: cannot resolve `trip/car` as retry: step `trip/car` has used its 2 \
             attempts\n\nhint: decide with `a2a-recover resolve trip/car --as abandoned \
             --reason \"…\"`\n"
        );

        let o = run(
            &env,
            &[
                "resolve",
                "trip/car",
                "--as",
                "abandoned",
                "--reason",
                "no cars today",
            ],
        )
        .await;
        assert_code(&o, 0);
        assert!(pending(&env).await.is_empty());

        // The full view of `inspect STEP`: the chain, each attempt's previous one and decision.
        let o = run(&env, &["inspect", "trip/car"]).await;
        assert_code(&o, 0);
        let view = stdout(&o).replace(&server.url, "http://127.0.0.1:PORT0/");
        // The events table cuts the message id short.
        let cut_id = compile(&[(r"message [0-9a-f]+…", "message [ID]…")]);
        insta::assert_snapshot!("retried_then_abandoned", redact(&env, &view, &cut_id));
    })
    .await;
}

#[tokio::test]
async fn resend_reopens_an_uncertain_attempt_and_the_rerun_sends_it_once_unlooked() {
    guard(async {
        let env = TestEnv::new();
        let agent = uncertain_step(&env, "trip/hotel").await;
        let first = attempts(&env, "trip/hotel").await.remove(0);
        assert_eq!(first["state"], "UNCERTAIN");
        assert_eq!(pending(&env).await.len(), 1);

        let o = run(
            &env,
            &[
                "resolve",
                "trip/hotel",
                "--as",
                "resend",
                "--reason",
                "the agent's log shows nothing arrived",
            ],
        )
        .await;
        assert_code(&o, 0);
        assert_eq!(
            stdout(&o),
            "resolved trip/hotel as resend: attempt 1 is INTENT again with its own messageId; \
             the next `a2a-recover reconcile` sends it once, without looking.\n"
        );
        let reopened = attempts(&env, "trip/hotel").await.remove(0);
        assert_eq!(reopened["state"], "INTENT");
        assert_eq!(reopened["messageId"], first["messageId"]);
        assert_eq!(reopened["resolution"]["as"], "resend");
        assert_eq!(reopened["resolution"]["resendPending"], true);
        assert!(pending(&env).await.is_empty());
        let o = run(&env, &["inspect", "trip/hotel"]).await;
        assert!(
            stdout(&o).contains("resend (resend pending): the agent's log shows nothing arrived"),
            "{}",
            stdout(&o)
        );

        // A second resend: the attempt is INTENT now, not UNCERTAIN.
        let o = run(
            &env,
            &["resolve", "trip/hotel", "--as", "resend", "--reason", "x"],
        )
        .await;
        assert_code(&o, 2);
        assert!(stderr(&o).contains("is INTENT"), "{}", stderr(&o));

        // The re-run sends it without a look (ListTasks would fail again), same messageId.
        let o = run(
            &env,
            &[
                "delegate",
                "trip/hotel",
                "--agent",
                &agent.url(),
                "echo book it",
                "--format",
                "json",
            ],
        )
        .await;
        assert_code(&o, 0);
        let actions = records_after_begin(&o, "delegate");
        assert_eq!(actions[0]["action"], "look");
        assert_eq!(actions[0]["outcome"], "resend-approved");
        let mid = first["messageId"].as_str().unwrap();
        let stats = agent.stats();
        assert_eq!(
            stats.tasks_per_message_id.get(mid),
            Some(&2),
            "the accepted risk: the crashed send's task and the resend's"
        );
        assert_eq!(
            stats.requests.get("ListTasks"),
            Some(&1),
            "only the first look"
        );
        let sent = attempts(&env, "trip/hotel").await.remove(0);
        assert_ne!(sent["state"], "INTENT");
        assert_eq!(sent["resolution"]["resendPending"], false);
        let kinds: Vec<Value> = events(&env, "trip/hotel")
            .await
            .into_iter()
            .map(|e| e["kind"].clone())
            .collect();
        let used = kinds.iter().position(|k| k == "resend-approval-used");
        let resolved = kinds.iter().position(|k| k == "resolved");
        assert!(resolved < used && used.is_some(), "{kinds:?}");

        // The approval was used once: another re-run only reports the task.
        let o = run(
            &env,
            &[
                "delegate",
                "trip/hotel",
                "--agent",
                &agent.url(),
                "echo book it",
            ],
        )
        .await;
        assert_code(&o, 0);
        assert_eq!(agent.stats().tasks_per_message_id.get(mid), Some(&2));
    })
    .await;
}

#[tokio::test]
async fn done_and_abandoned_take_steps_out_of_pending() {
    guard(async {
        let env = TestEnv::new();
        let _agent = uncertain_step(&env, "trip/hotel").await;
        let server = CardServer::start(|base| refusing_card(base, &["car"])).await;
        assert_code(
            &run(
                &env,
                &["delegate", "trip/car", "--agent", &server.url, "rent"],
            )
            .await,
            4,
        );
        let asker = scripted("Asker", &["echo"]).await;
        let o = run(
            &env,
            &["delegate", "trip/flight", "--agent", &asker.url(), "ask"],
        )
        .await;
        assert_code(&o, 0);
        assert_eq!(pending(&env).await.len(), 2, "UNCERTAIN and REFUSED");

        let o = run(
            &env,
            &[
                "resolve",
                "trip/hotel",
                "--as",
                "done",
                "--reason",
                "booked by phone",
            ],
        )
        .await;
        assert_code(&o, 0);
        assert_eq!(
            stdout(&o),
            "resolved trip/hotel as done: attempt 1 (UNCERTAIN) is accepted as finished; it no \
             longer counts toward exit 4.\n"
        );
        let o = run(
            &env,
            &[
                "resolve",
                "trip/car",
                "--as",
                "abandoned",
                "--reason",
                "walking",
            ],
        )
        .await;
        assert_code(&o, 0);
        assert!(stdout(&o).contains("counts as failed for compensation"));
        assert!(pending(&env).await.is_empty());

        let hotel = attempts(&env, "trip/hotel").await.remove(0);
        assert_eq!(
            hotel["state"], "UNCERTAIN",
            "done does not touch the remote state"
        );
        assert_eq!(hotel["resolution"]["as"], "done");
        assert_eq!(hotel["resolution"]["reason"], "booked by phone");
        assert_eq!(hotel["remedy"], Value::Null);
        let car = attempts(&env, "trip/car").await.remove(0);
        assert_eq!(car["resolution"]["as"], "abandoned");

        // Done on a step still running on the agent warns that nothing was cancelled there.
        let o = run(
            &env,
            &["resolve", "trip/flight", "--as", "done", "--reason", "fine"],
        )
        .await;
        assert_code(&o, 0);
        assert!(
            stderr(&o).contains("warning: attempt 1 is still SUBMITTED on the agent"),
            "{}",
            stderr(&o)
        );
        // A later retry reopens a resolved step.
        let o = run(
            &env,
            &["resolve", "trip/car", "--as", "retry", "--reason", "cars"],
        )
        .await;
        assert_code(&o, 0);
        let car = attempts(&env, "trip/car").await;
        assert_eq!(car[0]["resolution"]["as"], "retry");
        assert_eq!(car[1]["state"], "INTENT");
    })
    .await;
}

#[tokio::test]
async fn a_skill_step_retries_with_an_agent_not_yet_tried() {
    guard(async {
        let env = TestEnv::new();
        let refusing = CardServer::start(|base| refusing_card(base, &["car"])).await;
        let cars = scripted("Cars", &["car"]).await;
        assert_code(&run(&env, &["agents", "add", &refusing.url]).await, 0);
        assert_code(&run(&env, &["agents", "add", &cars.url()]).await, 0);
        let args = ["delegate", "trip/car", "--skill", "car", "rent a car"];
        assert_code(&run(&env, &args).await, 4);

        let o = run(
            &env,
            &[
                "resolve",
                "trip/car",
                "--as",
                "retry",
                "--reason",
                "the first agent refuses",
                "--format",
                "json",
            ],
        )
        .await;
        assert_code(&o, 0);
        let action = records_after_begin(&o, "resolve").remove(0);
        assert_eq!(
            action,
            json!({"type": "action", "workflow": "trip", "step": "car", "attempt": 1,
                   "action": "resolve", "outcome": "retry",
                   "detail": {"reason": "the first agent refuses", "from": "REFUSED",
                              "state": "REFUSED", "newAttempt": 2, "agent": cars.card_url()}})
        );
        // The re-run continues with the latest attempt: sent to the second agent.
        let o = run(&env, &args).await;
        assert_code(&o, 0);
        assert!(stdout(&o).contains(&cars.url()), "{}", stdout(&o));
        let chain = attempts(&env, "trip/car").await;
        assert_eq!(chain[1]["agent"], cars.card_url());
        assert_eq!(chain[1]["previousAttempt"], 1);
        assert_eq!(cars.stats().tasks.len(), 1);
        assert_eq!(
            Some(cars.stats().tasks[0].id.as_str()),
            chain[1]["taskId"].as_str()
        );
    })
    .await;
}

#[tokio::test]
async fn a_compensating_workflow_refuses_sends_but_not_done() {
    guard(async {
        let env = TestEnv::new();
        let _agent = uncertain_step(&env, "trip/hotel").await;
        {
            let j = Journal::open(&env.journal(), Duration::from_secs(10)).unwrap();
            j.set_workflow_state("trip", WorkflowState::Compensating)
                .unwrap();
        }
        for decision in ["resend", "retry"] {
            let o = run(
                &env,
                &["resolve", "trip/hotel", "--as", decision, "--reason", "x"],
            )
            .await;
            assert_code(&o, 2);
            assert!(
                stderr(&o).contains("workflow `trip` is COMPENSATING: it gets no sends"),
                "{}",
                stderr(&o)
            );
        }
        let o = run(
            &env,
            &[
                "resolve",
                "trip/hotel",
                "--as",
                "done",
                "--reason",
                "undone by hand",
            ],
        )
        .await;
        assert_code(&o, 0);
    })
    .await;
}

#[tokio::test]
async fn unknown_steps_and_bad_input_are_usage_errors() {
    guard(async {
        let env = TestEnv::new();
        let o = run(
            &env,
            &["resolve", "trip/car", "--as", "done", "--reason", "x"],
        )
        .await;
        assert_code(&o, 1);
        assert_eq!(
            stderr(&o),
            format!(
                "error: no journal at `{}` (chosen by A2A_RECOVER_JOURNAL); nothing was \
                 checked\n\n\
                 hint: create it with `a2a-recover journal init` (a first `delegate` creates one \
                 too), or point --journal or A2A_RECOVER_JOURNAL at the journal your \
                 delegations use\n",
                env.journal().display()
            )
        );
        assert!(
            !env.journal().exists(),
            "a failed resolve creates no journal"
        );
        let _agent = uncertain_step(&env, "trip/hotel").await;
        let o = run(
            &env,
            &["resolve", "trip/car", "--as", "done", "--reason", "x"],
        )
        .await;
        assert_code(&o, 2);
        let o = run(
            &env,
            &["resolve", "trip/hotel", "--as", "done", "--reason", "  "],
        )
        .await;
        assert_code(&o, 2);
        assert!(
            stderr(&o).contains("the --reason is empty"),
            "{}",
            stderr(&o)
        );
        let o = run(
            &env,
            &["resolve", "trip/ho~tel", "--as", "done", "--reason", "x"],
        )
        .await;
        assert_code(&o, 2);
        let o = run(
            &env,
            &["resolve", "trip/hotel", "--as", "maybe", "--reason", "x"],
        )
        .await;
        assert_code(&o, 2);
        // Nothing of the above touched the step.
        assert_eq!(
            attempts(&env, "trip/hotel").await[0]["resolution"],
            Value::Null
        );
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// What each decision does to the next `reconcile`
// ---------------------------------------------------------------------------------------------

/// Runs `reconcile` until it stops answering 3 (work remains); returns that last output.
async fn reconcile_settled(env: &TestEnv) -> Output {
    for _ in 0..20 {
        let o = run(env, &["reconcile"]).await;
        if code(&o) != 3 {
            return o;
        }
    }
    panic!("reconcile still answers 3 after 20 passes");
}

/// Resolves `step` as `decision`, asserting success.
async fn resolve(env: &TestEnv, step: &str, decision: &str, reason: &str) {
    let o = run(
        env,
        &["resolve", step, "--as", decision, "--reason", reason],
    )
    .await;
    assert_code(&o, 0);
}

#[tokio::test]
async fn done_ends_exit_4_and_the_pass_leaves_the_step_alone() {
    guard(async {
        let env = TestEnv::new();
        let agent = uncertain_step(&env, "w/s").await;
        let o = run(&env, &["reconcile"]).await;
        assert_code(&o, 4);
        resolve(&env, "w/s", "done", "confirmed on the agent's dashboard").await;
        let seen = agent.stats();
        let o = run(&env, &["reconcile"]).await;
        assert_code(&o, 0);
        let now = agent.stats();
        assert_eq!(
            now.requests, seen.requests,
            "the pass did not touch the agent"
        );
        assert_eq!(attempts(&env, "w/s").await[0]["state"], "UNCERTAIN");
    })
    .await;
}

#[tokio::test]
async fn abandoned_ends_exit_4_without_sending() {
    guard(async {
        let env = TestEnv::new();
        let server = CardServer::start(|base| refusing_card(base, &["car"])).await;
        let o = run(&env, &["delegate", "w/car", "--agent", &server.url, "rent"]).await;
        assert_code(&o, 4);
        assert_code(&run(&env, &["reconcile"]).await, 4);
        resolve(&env, "w/car", "abandoned", "no car needed").await;
        let o = run(&env, &["reconcile", "--format", "json"]).await;
        assert_code(&o, 0);
        let lines = records_after_begin(&o, "reconcile");
        assert_eq!(lines.last().unwrap()["exitCode"], 0);
        assert_eq!(
            attempts(&env, "w/car").await.len(),
            1,
            "nothing was retried"
        );
    })
    .await;
}

#[tokio::test]
async fn retry_is_sent_by_the_next_pass_to_an_untried_agent() {
    guard(async {
        let env = TestEnv::new();
        let refusing = CardServer::start(|base| refusing_card(base, &["car"])).await;
        let cars = scripted("Cars", &["car"]).await;
        assert_code(&run(&env, &["agents", "add", &refusing.url]).await, 0);
        assert_code(&run(&env, &["agents", "add", &cars.url()]).await, 0);
        let o = run(&env, &["delegate", "w/car", "--skill", "car", "rent a car"]).await;
        assert_code(&o, 4);
        assert_code(&run(&env, &["reconcile"]).await, 4);
        assert!(cars.stats().tasks.is_empty());

        resolve(&env, "w/car", "retry", "the first agent refuses us").await;
        let o = reconcile_settled(&env).await;
        assert_code(&o, 0);
        let chain = attempts(&env, "w/car").await;
        assert_eq!(chain.len(), 2, "the pass added no attempt of its own");
        assert_eq!(chain[1]["agent"], cars.card_url());
        assert_eq!(chain[1]["state"], "COMPLETED");
        assert_eq!(chain[1]["previousAttempt"], 1);
        let stats = cars.stats();
        assert_eq!(stats.tasks.len(), 1);
        assert_eq!(
            Some(stats.tasks[0].message_id.as_str()),
            chain[1]["messageId"].as_str()
        );
        assert_eq!(
            stats.messages[0].text.lines().last(),
            Some("rent a car"),
            "the original request follows the note about the previous attempt"
        );
        // Settled: another pass changes nothing and exits 0.
        assert_code(&run(&env, &["reconcile"]).await, 0);
        assert_eq!(cars.stats().tasks.len(), 1);
    })
    .await;
}

#[tokio::test]
async fn resend_is_sent_once_by_the_next_pass_without_a_look() {
    guard(async {
        let env = TestEnv::new();
        let agent = uncertain_step(&env, "w/s").await;
        let mid = attempts(&env, "w/s").await[0]["messageId"]
            .as_str()
            .unwrap()
            .to_owned();
        // Never resent on its own.
        assert_code(&run(&env, &["reconcile"]).await, 4);
        assert_code(&run(&env, &["reconcile"]).await, 4);
        assert_eq!(agent.stats().tasks_per_message_id.get(&mid), Some(&1));

        resolve(
            &env,
            "w/s",
            "resend",
            "the agent's log shows nothing arrived",
        )
        .await;
        let looks = agent.stats().requests.get("ListTasks").copied();
        let o = reconcile_settled(&env).await;
        assert_code(&o, 0);
        let stats = agent.stats();
        assert_eq!(
            stats.tasks_per_message_id.get(&mid),
            Some(&2),
            "sent again with the same messageId (the risk the operator accepted)"
        );
        assert_eq!(stats.requests.get("ListTasks").copied(), looks, "no look");
        let row = attempts(&env, "w/s").await.remove(0);
        assert_eq!(row["messageId"], mid.as_str());
        assert_eq!(row["state"], "COMPLETED");
        assert_eq!(row["resolution"]["as"], "resend");
        assert_eq!(row["resolution"]["resendPending"], false);
        // One approval, one send.
        assert_code(&run(&env, &["reconcile"]).await, 0);
        assert_eq!(agent.stats().tasks_per_message_id.get(&mid), Some(&2));
    })
    .await;
}
