//! `compensate` end to end: the binary against scripted agents and a tiny booking system on
//! loopback (the independent read path the verify recipes use), with real journals.

use a2a_recover::scripted_agent::{ScriptedAgent, Stats};
use serde_json::Value;

use insta::assert_snapshot;

use crate::common::bookings::bookings;
use crate::common::child::Guarded;
use crate::common::commands::{
    attempts, crashing, journal_bytes, latest, reconcile, register, task_of,
};
use crate::common::snapshot::snapshot_of;
use crate::common::wait::{GUARD, wait_until};
use crate::common::{
    Background, TestEnv, agent, code, fast_with_skills, json_lines, stderr, stdout, write,
};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Counts every user message all these agents received.
fn messages(agents: &[&Background<ScriptedAgent>]) -> usize {
    agents.iter().map(|a| a.stats().messages.len()).sum()
}

fn compensation_messages(stats: &Stats) -> Vec<String> {
    stats
        .messages
        .iter()
        .filter(|m| m.text.starts_with("cancel"))
        .map(|m| m.message_id.clone())
        .collect()
}

fn compensate_json(env: &TestEnv, workflow: &str) -> (i32, Vec<Value>) {
    let out = env.run(["--format", "json", "compensate", workflow]);
    let c = code(&out);
    assert!(matches!(c, 0 | 3 | 4), "{}", stderr(&out));
    (c, json_lines(&out))
}

// ---------------------------------------------------------------------------------------------
// The travel story
// ---------------------------------------------------------------------------------------------

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "the travel story of the demo, told in order"
)]
fn the_travel_story_is_undone_in_reverse_order_and_verified() {
    let env = TestEnv::new();
    let books = bookings();
    let flights = agent(fast_with_skills(&["flights"]));
    let hotels = agent(fast_with_skills(&["hotels"]));
    let car1 = agent(fast_with_skills(&["cars"]));
    let car2 = agent(fast_with_skills(&["cars"]));
    register(&env, &[&car1, &car2], "cars");
    let plan = format!(
        r#"workflow = "trip-42"

[[step]]
name = "flight"
agent = "{flights}"
text = "book flight FL-42"
effect = true
compensate = {{ command = '{delete}' }}
verify = {{ url = "{verify}" }}

[[step]]
name = "hotel"
agent = "{hotels}"
text = "book hotel for two nights"
effect = true
compensate = {{ command = '{delete}' }}
verify = {{ url = "{verify}" }}

[[step]]
name = "car"
skill = "cars"
text = "reject rent a car"
max_attempts = 2
"#,
        flights = flights.url(),
        hotels = hotels.url(),
        delete = books.delete_cmd(),
        verify = books.verify_url(),
    );
    let plan = write(env.path(), "trip.toml", &plan);
    let plan = plan.to_str().unwrap();
    let out = env.run(["delegate", "--plan", plan]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let (flight, hotel) = (
        task_of(&env, "trip-42/flight"),
        task_of(&env, "trip-42/hotel"),
    );
    // The agents' side effects, as the booking system sees them.
    books.book(&flight);
    books.book(&hotel);

    // Pass 1: flight and hotel completed and verified by the independent read; the car is
    // rejected and re-delegated to the second car agent. Pass 2: rejected again, budget spent.
    let out = reconcile(&env, &[]);
    assert!(
        matches!(code(&out), 3 | 4),
        "{}: {}{}",
        code(&out),
        stdout(&out),
        stderr(&out)
    );
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(latest(&env, "trip-42/flight")["effect"], "verified");
    assert_eq!(latest(&env, "trip-42/hotel")["effect"], "verified");
    let car = attempts(&env, Some("trip-42/car"));
    assert_eq!(car.len(), 2, "{car:?}");
    assert!(car.iter().all(|a| a["state"] == "REJECTED"), "{car:?}");
    assert_eq!(car1.stats().messages.len(), 1);
    assert_eq!(car2.stats().messages.len(), 1);
    assert_eq!(
        car2.stats().messages[0].metadata.as_ref().unwrap()["previousTaskId"],
        car[0]["taskId"]
    );

    // The user cancels the trip.
    let (c, records) = compensate_json(&env, "trip-42");
    assert_eq!(c, 0, "{records:#?}");
    assert_eq!(
        books.deleted(),
        [hotel.clone(), flight.clone()],
        "hotel first, then flight"
    );
    assert!(!books.is_booked(&flight) && !books.is_booked(&hotel));
    let compensated: Vec<&str> = records
        .iter()
        .filter(|r| r["type"] == "action" && r["outcome"] == "compensated")
        .map(|r| r["step"].as_str().unwrap())
        .collect();
    assert_eq!(compensated, ["hotel", "flight"]);
    let summary = records.last().unwrap();
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["workflowState"], "COMPENSATED");
    assert_eq!(summary["exitCode"], 0);
    for step in ["trip-42/flight", "trip-42/hotel"] {
        let a = latest(&env, step);
        assert_eq!(a["effect"], "compensated", "{a}");
        assert_eq!(a["workflowState"], "COMPENSATED");
    }
    // Each compensation is a journaled step of its own.
    for step in ["trip-42/flight~compensate", "trip-42/hotel~compensate"] {
        assert_eq!(latest(&env, step)["state"], "REPLIED", "{step}");
    }

    // The table shows each effect, each compensation, and the workflow's state.
    let out = env.run(["inspect", "trip-42"]);
    assert_snapshot!(snapshot_of(&env, &out));

    // Nothing is sent for a compensated workflow: not by reconcile, not by the plan again.
    let agents = [&flights, &hotels, &car1, &car2];
    let before = messages(&agents);
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let out = env.run(["delegate", "--plan", plan]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("COMPENSATED"), "{}", stderr(&out));
    let out = env.run(["delegate", "trip-42/boat", "--agent", &car1.url(), "sail"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert_eq!(messages(&agents), before);
    // A second compensate changes nothing.
    let out = env.run(["compensate", "trip-42"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("already COMPENSATED"),
        "{}",
        stdout(&out)
    );
    assert_eq!(books.deleted().len(), 2);
}

// ---------------------------------------------------------------------------------------------
// A task that completes while its cancel is in flight
// ---------------------------------------------------------------------------------------------

#[test]
fn a_task_that_completed_before_its_cancel_is_found_and_compensated() {
    let env = TestEnv::new();
    let books = bookings();
    let flights = agent(fast_with_skills(&["flights"]));
    let (delete, verify) = (books.delete_cmd(), books.verify_url());
    let out = env.run([
        "delegate",
        "trip-7/flight",
        "--agent",
        &flights.url(),
        "--effect",
        "--compensate-cmd",
        &delete,
        "--verify-url",
        &verify,
        "work:100000",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let task = task_of(&env, "trip-7/flight");
    // The journal still says it runs; meanwhile the agent finishes it and books the flight.
    assert_ne!(latest(&env, "trip-7/flight")["state"], "COMPLETED");
    assert!(flights.get().complete_task(&task));
    books.book(&task);

    let (c, records) = compensate_json(&env, "trip-7");
    assert_eq!(c, 0, "{records:#?}");
    // The cancel reached the agent, which refused it (-32002: already terminal); the task was
    // read again, found COMPLETED, and its effect undone.
    assert_eq!(flights.stats().cancels, std::slice::from_ref(&task));
    let cancel = records
        .iter()
        .find(|r| r["action"] == "cancel")
        .expect("a cancel action");
    assert_eq!(cancel["outcome"], "COMPLETED", "{cancel}");
    assert_eq!(cancel["detail"]["cancel"]["code"], -32002, "{cancel}");
    assert_eq!(books.deleted(), [task]);
    let a = latest(&env, "trip-7/flight");
    assert_eq!(a["state"], "COMPLETED");
    assert_eq!(a["effect"], "compensated");
    assert_eq!(a["workflowState"], "COMPENSATED");
}

#[test]
fn a_running_task_is_cancelled_and_its_effect_verified_absent() {
    let env = TestEnv::new();
    let books = bookings();
    let hotels = agent(fast_with_skills(&["hotels"]));
    let (delete, verify) = (books.delete_cmd(), books.verify_url());
    let out = env.run([
        "delegate",
        "trip-8/hotel",
        "--agent",
        &hotels.url(),
        "--effect",
        "--compensate-cmd",
        &delete,
        "--verify-url",
        &verify,
        "work:100000",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let task = task_of(&env, "trip-8/hotel");
    let out = env.run(["compensate", "trip-8"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(hotels.stats().cancels, [task]);
    let a = latest(&env, "trip-8/hotel");
    assert_eq!(a["state"], "CANCELED");
    assert_eq!(a["effect"], "absent");
    assert!(books.deleted().is_empty(), "nothing to delete");
    // A second run sends no second cancel.
    let out = env.run(["compensate", "trip-8"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(hotels.stats().cancels.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// A crash during compensation
// ---------------------------------------------------------------------------------------------

#[test]
fn a_crash_after_the_compensation_send_sends_exactly_one_compensation_message() {
    let env = TestEnv::new();
    let books = bookings();
    let flights = agent(fast_with_skills(&["flights"]));
    let hotels = agent(fast_with_skills(&["hotels"]));
    let (delete, verify) = (books.delete_cmd(), books.verify_url());
    // The flight is undone by a command, the hotel by a message to its agent.
    for (step, a, how, undo, text) in [
        (
            "trip-9/flight",
            &flights,
            "--compensate-cmd",
            delete.as_str(),
            "book flight",
        ),
        (
            "trip-9/hotel",
            &hotels,
            "--compensate",
            "cancel {artifact:echo} (task {task_id})",
            "book hotel",
        ),
    ] {
        let out = env.run([
            "delegate",
            step,
            "--agent",
            &a.url(),
            "--effect",
            how,
            undo,
            "--verify-url",
            &verify,
            text,
        ]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let (flight, hotel) = (
        task_of(&env, "trip-9/flight"),
        task_of(&env, "trip-9/hotel"),
    );
    books.book(&flight);
    books.book(&hotel);

    // The dry run says what it would do and changes nothing.
    let journal_before = journal_bytes(&env);
    let out = env.run(["compensate", "trip-9", "--dry-run"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("would verify trip-9/hotel"),
        "{}",
        stdout(&out)
    );
    assert_eq!(journal_bytes(&env), journal_before);
    assert!(compensation_messages(&hotels.stats()).is_empty());

    // Hotel first (reverse order): the process dies right after its compensation is sent.
    crashing(
        &env,
        "after-compensate-send:trip-9/hotel",
        &["compensate", "trip-9"],
    );
    let sent = compensation_messages(&hotels.stats());
    assert_eq!(sent.len(), 1);
    let text = hotels.stats().messages.last().unwrap().text.clone();
    assert_eq!(text, format!("cancel book hotel (task {hotel})"));
    assert_eq!(latest(&env, "trip-9/hotel")["effect"], "compensating");
    assert_eq!(latest(&env, "trip-9/hotel~compensate")["state"], "INTENT");
    // The flight was not touched yet, and the workflow blocks sends already.
    assert_eq!(latest(&env, "trip-9/flight")["effect"], Value::Null);
    assert_eq!(
        latest(&env, "trip-9/flight")["workflowState"],
        "COMPENSATING"
    );
    reconcile_names_the_compensation_in_flight(&env, "trip-9");
    assert_eq!(compensation_messages(&hotels.stats()), sent);
    // The hotel agent undoes the booking on that message.
    books.cancel(&hotel);

    let (c, records) = compensate_json(&env, "trip-9");
    assert_eq!(c, 0, "{records:#?}");
    // The journaled compensation intent was looked for and found: nothing resent.
    assert_eq!(compensation_messages(&hotels.stats()), sent);
    assert!(
        records
            .iter()
            .any(|r| r["step"] == "hotel" && r["action"] == "look" && r["outcome"] == "found"),
        "{records:#?}"
    );
    assert_eq!(latest(&env, "trip-9/hotel")["effect"], "compensated");
    assert_eq!(latest(&env, "trip-9/flight")["effect"], "compensated");
    assert_eq!(books.deleted(), [flight]);
    assert!(compensation_messages(&flights.stats()).is_empty());
    assert_eq!(
        latest(&env, "trip-9/flight")["workflowState"],
        "COMPENSATED"
    );
    let out = env.run(["reconcile"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
}

/// A pass over a workflow whose compensation is in flight sends nothing for it, says so with
/// the `compensate` command that finishes it, exits 3 and lists it in its summary's
/// `compensating` (before, it said "nothing to do" and exited 0).
fn reconcile_names_the_compensation_in_flight(env: &TestEnv, workflow: &str) {
    let out = env.run(["reconcile"]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let command = format!("run `a2a-recover compensate {workflow}`");
    assert!(stdout(&out).contains(&command), "{}", stdout(&out));
    let out = env.run(["--format", "json", "reconcile", workflow]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let listed = format!(r#""compensating":["{workflow}"]"#);
    assert!(stdout(&out).contains(&listed), "{}", stdout(&out));
}

#[test]
fn an_unknown_workflow_and_a_held_lock_touch_nothing() {
    let env = TestEnv::new();
    // No journal yet: an error naming the path and the way to create one; nothing created.
    let out = env.run(["compensate", "nope"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("journal init"), "{}", stderr(&out));
    assert!(!env.journal().exists());
    let a = agent(fast_with_skills(&["x"]));
    let out = env.run(["delegate", "w/s", "--agent", &a.url(), "hi"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = env.run(["compensate", "nope"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    // Another pass holds the lock: exit 3, nothing touched.
    let lock = a2a_recover::recovery::lock::acquire(&env.journal(), 4242, "2026-11-30T01:00:00Z")
        .expect("lock");
    let before = journal_bytes(&env);
    let out = env.run(["compensate", "w"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(stderr(&out).contains("pid 4242"), "{}", stderr(&out));
    assert_eq!(journal_bytes(&env), before);
    drop(lock);
    let out = env.run(["compensate", "w"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(latest(&env, "w/s")["workflowState"], "COMPENSATED");
}

#[test]
fn an_unreachable_agent_leaves_the_effect_undecided_and_exits_3() {
    let env = TestEnv::new();
    let books = bookings();
    let flights = agent(fast_with_skills(&["flights"]));
    let (delete, verify) = (books.delete_cmd(), books.verify_url());
    let out = env.run([
        "delegate",
        "trip-5/flight",
        "--agent",
        &flights.url(),
        "--effect",
        "--compensate-cmd",
        &delete,
        "--verify-url",
        &verify,
        "work:100000",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let task = task_of(&env, "trip-5/flight");
    books.book(&task);
    // The agent goes away while its task runs: the cancel cannot be sent, the task not read.
    drop(flights);
    let out = env.run(["--format", "json", "compensate", "trip-5"]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let records = json_lines(&out);
    assert!(
        records
            .iter()
            .any(|r| r["action"] == "wait" && r["step"] == "flight"),
        "{records:#?}"
    );
    // Nothing was decided or undone while the task may still book something.
    let a = latest(&env, "trip-5/flight");
    assert_eq!(a["effect"], Value::Null, "{a}");
    assert_eq!(a["workflowState"], "COMPENSATING");
    assert!(books.deleted().is_empty());
}

// ---------------------------------------------------------------------------------------------
// Compensation messages against the agent's own booking system
// ---------------------------------------------------------------------------------------------

/// Delegates `step` to `a` with a message compensation, verified through the agent's booking
/// system (`GET /_scripted/bookings/{task_id}`).
fn delegate_booking(
    env: &TestEnv,
    a: &Background<ScriptedAgent>,
    step: &str,
    compensate: &str,
    extra: &[&str],
) {
    let url = a.url();
    let verify = format!("{url}_scripted/bookings/{{task_id}}");
    let mut args = vec![
        "delegate",
        step,
        "--agent",
        &url,
        "--effect",
        "--compensate",
        compensate,
        "--verify-url",
        &verify,
    ];
    args.extend_from_slice(extra);
    args.push("book a room");
    let out = env.run(&args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn a_compensation_message_undoes_the_booking_and_is_verified_gone() {
    let env = TestEnv::new();
    let hotels = agent(fast_with_skills(&["hotels"]));
    delegate_booking(&env, &hotels, "trip-3/hotel", "cancel {task_id}", &[]);
    let task = task_of(&env, "trip-3/hotel");
    let out = env.run(["compensate", "trip-3"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let last = hotels.stats().messages.last().cloned().unwrap();
    assert_eq!(last.text, format!("cancel {task}"));
    assert_eq!(
        last.metadata.as_ref().unwrap()["compensates"]["taskId"],
        task.as_str()
    );
    // The undone task is named in `referenceTaskIds` too, its own agent being the recipient.
    assert_eq!(last.reference_task_ids, std::slice::from_ref(&task));
    assert_eq!(latest(&env, "trip-3/hotel")["effect"], "compensated");
    assert_eq!(
        latest(&env, "trip-3/hotel~compensate")["state"],
        "COMPLETED"
    );
    // The compensation task is followed like any step (inspect names it so; follow takes it).
    let out = env.run(["follow", "trip-3/hotel~compensate", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary = lines.last().unwrap();
    assert_eq!(summary["type"], "summary", "{summary}");
    assert_eq!(summary["state"], "COMPLETED", "{summary}");
    assert_eq!(hotels.stats().messages.len(), 2, "follow sends nothing");
}

#[test]
fn a_failed_compensation_is_retried_within_its_budget_then_left_to_a_human() {
    let env = TestEnv::new();
    let hotels = agent(fast_with_skills(&["hotels"]));
    // This agent does not understand the request: the booking stays.
    delegate_booking(
        &env,
        &hotels,
        "trip-4/hotel",
        "please undo {task_id}",
        &["--max-attempts", "2"],
    );
    let undo_messages = || {
        hotels
            .stats()
            .messages
            .iter()
            .filter(|m| m.text.starts_with("please undo"))
            .count()
    };
    for (run, sent) in [(1, 1), (2, 2), (3, 2)] {
        let out = env.run(["compensate", "trip-4"]);
        assert_eq!(code(&out), 4, "run {run}: {}{}", stdout(&out), stderr(&out));
        assert_eq!(undo_messages(), sent, "run {run}");
        assert_eq!(
            latest(&env, "trip-4/hotel")["effect"],
            "compensation-failed",
            "run {run}"
        );
        if run == 3 {
            assert!(
                stdout(&out).contains("budget of 2 attempts"),
                "{}",
                stdout(&out)
            );
        }
    }
    assert_eq!(attempts(&env, Some("trip-4/hotel~compensate")).len(), 2);
    let out = env.run(["inspect", "--pending"]);
    assert!(stdout(&out).contains("trip-4"), "{}", stdout(&out));
    // The operator cancels it by phone and says so; compensate then finishes the workflow.
    let out = env.run([
        "resolve",
        "trip-4/hotel",
        "--as",
        "done",
        "--reason",
        "cancelled by phone",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = env.run(["compensate", "trip-4"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(undo_messages(), 2);
    assert_eq!(latest(&env, "trip-4/hotel")["workflowState"], "COMPENSATED");
}

#[test]
fn a_question_left_in_a_compensating_workflow_points_to_compensate_not_reply() {
    let env = TestEnv::new();
    let hotels = agent(fast_with_skills(&["hotels"]));
    let out = env.run([
        "delegate",
        "trip-8/hotel",
        "--agent",
        &hotels.url(),
        "ask which hotel?",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    // The agent goes away: compensate cannot cancel the waiting task, and stops half-way.
    drop(hotels);
    let (c, _) = compensate_json(&env, "trip-8");
    assert_eq!(c, 3, "the agent is unreachable");
    let row = latest(&env, "trip-8/hotel");
    assert_eq!(row["state"], "INPUT_REQUIRED", "{row}");
    assert_eq!(row["workflowState"], "COMPENSATING", "{row}");
    // `reply` refuses a compensating workflow, so the remedy is to finish the compensation.
    let out = env.run(["--format", "json", "inspect", "--pending"]);
    let pending: Vec<Value> = json_lines(&out)
        .into_iter()
        .filter(|r| r["type"] == "attempt")
        .collect();
    assert_eq!(pending.len(), 1, "{pending:?}");
    let remedy = &pending[0]["remedy"];
    assert_eq!(
        remedy["command"], "a2a-recover compensate trip-8",
        "{remedy}"
    );
    assert_eq!(
        remedy["alternatives"][0],
        "a2a-recover resolve trip-8/hotel --as done|abandoned --reason \"…\"",
        "{remedy}"
    );
    let out = env.run(["reply", "trip-8/hotel", "the Plaza"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    // Each command on a line of its own, the alternative on the next.
    let out = env.run(["inspect", "--pending"]);
    assert!(
        stdout(&out).contains(
            "  a2a-recover compensate trip-8\n    or: a2a-recover resolve trip-8/hotel --as \
             done|abandoned"
        ),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_compensation_task_running_when_its_effect_was_verified_gone_is_read_again() {
    use a2a_recover::scripted_agent::AgentConfig;
    let env = TestEnv::new();
    let books = bookings();
    // Ticks of 2 s: the compensation (`work:3`) outlives compensate's wait for it (2 s).
    let hotels = agent(AgentConfig {
        tick: std::time::Duration::from_secs(2),
        ..fast_with_skills(&["hotels"])
    });
    let verify = format!("{}/bookings/{{task_id}}", books.url());
    let url = hotels.url();
    let out = env.run([
        "delegate",
        "trip-9/hotel",
        "--agent",
        &url,
        "--effect",
        "--compensate",
        "work:3",
        "--verify-url",
        &verify,
        "book a room",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let task = task_of(&env, "trip-9/hotel");
    books.book(&task);
    let child = Guarded::spawn(
        env.std_cmd()
            .args(["compensate", "trip-9", "--command-timeout", "2s"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped()),
        "compensate",
    );
    // The booking goes by another path once the compensation is sent, as a real undo may.
    wait_until("the compensation message", GUARD, || {
        hotels.stats().messages.iter().any(|m| m.text == "work:3")
    });
    books.cancel(&task);
    let out = child.wait_with_output().expect("compensate");
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(latest(&env, "trip-9/hotel")["effect"], "compensated");
    let comp = latest(&env, "trip-9/hotel~compensate");
    assert_ne!(comp["state"], "COMPLETED", "{comp}");
    let comp_task = comp["taskId"].as_str().expect("task id").to_owned();

    // The workflow is COMPENSATED; its compensation task then finishes on the agent.
    wait_until("the compensation task completed", GUARD, || {
        hotels
            .stats()
            .tasks
            .iter()
            .any(|t| t.id == comp_task && t.state == a2a::TaskState::Completed)
    });
    let (c, records) = compensate_json(&env, "trip-9");
    assert_eq!(c, 0, "{records:?}");
    let read = records
        .iter()
        .find(|r| r["action"] == "read")
        .unwrap_or_else(|| panic!("no read record: {records:?}"));
    assert_eq!(read["outcome"], "COMPLETED", "{read}");
    assert_eq!(read["step"], "hotel", "{read}");
    assert_eq!(read["detail"]["taskId"], comp_task.as_str(), "{read}");
    assert_eq!(
        read["detail"]["compensation"], "trip-9/hotel~compensate",
        "{read}"
    );
    assert_eq!(
        latest(&env, "trip-9/hotel~compensate")["state"],
        "COMPLETED"
    );
    // Read once: a third run has nothing left to read.
    let (c, records) = compensate_json(&env, "trip-9");
    assert_eq!(c, 0);
    assert!(records.iter().all(|r| r["action"] != "read"), "{records:?}");
}
