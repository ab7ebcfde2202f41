//! Real frameworks bend the spec: each bend the scripted agent can reproduce (`Bends`) is read
//! as what it is, and recovery goes on as with a well-behaved agent.

use std::time::Duration;

use a2a_recover::a2a::parts_text;
use a2a_recover::journal::{Journal, StepName};
use a2a_recover::scripted_agent::{AgentConfig, Bends, QuestionIn};
use insta::assert_snapshot;

use crate::common::commands::{crashing, delegate, reconcile, the_attempt};
use crate::common::hostile::{Hostile, Script};
use crate::common::snapshot::snapshot_of;
use crate::common::{TestEnv, agent, code, fast, stderr, stdout};

fn bent(bends: Bends) -> AgentConfig {
    AgentConfig { bends, ..fast() }
}

/// Status timestamps without a UTC offset are read as UTC: the send is journaled (not an
/// "invalid answer"), the task is followed to COMPLETED, and the habit is noted once per agent
/// and process, as a warning, never an error.
#[test]
fn offset_less_timestamps_are_read_as_utc_and_noted_once() {
    let env = TestEnv::new();
    let a = agent(bent(Bends {
        naive_timestamps: true,
        ..Bends::default()
    }));
    let out = delegate(&env, "w/naive", &a.url(), "work:2", &[]);
    let err = stderr(&out);
    assert_eq!(code(&out), 0, "{}{err}", stdout(&out));
    assert_eq!(err.matches("without a UTC offset").count(), 1, "{err}");
    assert!(!err.contains("invalid answer"), "{err}");
    let row = the_attempt(&env, "w/naive");
    assert_eq!(row["state"], "SUBMITTED", "{row}");
    a.settle();
    let out = reconcile(&env, &[]);
    let err = stderr(&out);
    assert_eq!(code(&out), 0, "{}{err}", stdout(&out));
    assert_eq!(err.matches("without a UTC offset").count(), 1, "{err}");
    let row = the_attempt(&env, "w/naive");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    assert_eq!(a.stats().tasks.len(), 1);
}

/// A decode error names the field and the agent, in our words: never the date parser's
/// ("premature end of input", "input contains invalid characters") nor serde's.
#[test]
fn a_decode_error_names_the_field_and_the_agent() {
    let env = TestEnv::new();
    let h = Hostile::start();
    h.set_script(Script {
        timestamp: Some("yesterday at noon".to_owned()),
        ..Script::default()
    });
    let out = delegate(&env, "w/garbled", h.url(), "hello", &[]);
    let err = stderr(&out);
    assert_eq!(code(&out), 3, "{}{err}", stdout(&out));
    assert!(
        err.contains("`task.status.timestamp` is not a date-time: `yesterday at noon`"),
        "{err}"
    );
    assert!(err.contains(h.url().trim_end_matches('/')), "{err}");
    for parser_words in [
        "input contains invalid characters",
        "premature end",
        "line 1 column",
    ] {
        assert!(!err.contains(parser_words), "{err}");
    }
}

/// The question of an INPUT_REQUIRED task is taken from the status message, else from a
/// question-like artifact, else from the last agent message of the history; the reply then
/// answers it on the same task.
#[test]
fn the_question_is_found_in_an_artifact_or_the_history() {
    for place in [QuestionIn::Artifact, QuestionIn::History] {
        let env = TestEnv::new();
        let a = agent(bent(Bends {
            question_in: place,
            ..Bends::default()
        }));
        let step = "w/ask";
        let out = delegate(&env, step, &a.url(), "ask about rooms", &[]);
        assert_eq!(code(&out), 0, "{place:?}: {}", stderr(&out));
        let out = reconcile(&env, &[]);
        assert_eq!(code(&out), 4, "{place:?}: {}{}", stdout(&out), stderr(&out));
        let row = the_attempt(&env, step);
        assert_eq!(row["state"], "INPUT_REQUIRED", "{place:?}: {row}");
        assert_eq!(
            row["pendingQuestion"], "two rooms or one?",
            "{place:?}: {row}"
        );
        let pending = env.run(["inspect", "--pending"]);
        assert!(
            stdout(&pending).contains("two rooms or one?"),
            "{place:?}: {}",
            stdout(&pending)
        );
        let out = env.run(["reply", step, "one room"]);
        assert_eq!(code(&out), 0, "{place:?}: {}{}", stdout(&out), stderr(&out));
        assert_eq!(the_attempt(&env, step)["state"], "COMPLETED");
    }
}

/// An agent that keeps its answer only in the history (GetTask and ListTasks carry no
/// artifacts): the result is taken from the history, whether the task is read with GetTask or
/// found by a look after a crash.
#[test]
fn results_are_taken_from_the_history_when_a_task_has_no_artifacts() {
    let env = TestEnv::new();
    let a = agent(bent(Bends {
        history_only: true,
        ..Bends::default()
    }));
    let out = delegate(&env, "w/read", &a.url(), "book a hotel", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    crashing(
        &env,
        "after-send",
        &["delegate", "w/found", "--agent", &a.url(), "book a car"],
    );
    a.settle();
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    for step in ["w/read", "w/found"] {
        let row = the_attempt(&env, step);
        assert_eq!(row["state"], "COMPLETED", "{row}");
        assert_eq!(row["artifacts"], 1, "{row}");
    }
    assert_eq!(a.stats().tasks.len(), 2, "nothing was resent");
    let journal = Journal::open(&env.journal(), Duration::from_secs(10)).unwrap();
    let text = journal_texts(&journal, "w/found");
    assert_eq!(text, ["book a car"]);
}

fn journal_texts(journal: &Journal, step: &str) -> Vec<String> {
    let step = StepName::parse(step).unwrap();
    let rec = journal.step(&step).unwrap().unwrap();
    let attempt = rec.attempts.last().unwrap();
    journal
        .artifacts(attempt.id)
        .unwrap()
        .iter()
        .map(|a| parts_text(&a.parts))
        .collect()
}

/// A `SendMessage` that blocks past `--timeout` although `returnImmediately` was asked is an
/// ambiguous send: the attempt stays INTENT (exit 3), nothing is resent, and the next pass
/// looks and finds the task.
#[test]
fn a_send_that_blocks_past_the_timeout_is_looked_for_never_resent() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        tick: Duration::from_millis(300),
        ..bent(Bends {
            block_send: true,
            ..Bends::default()
        })
    });
    let out = delegate(&env, "w/slow", &a.url(), "work:10", &["--timeout", "1s"]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains("timed out"), "{}", stderr(&out));
    assert_eq!(the_attempt(&env, "w/slow")["state"], "INTENT");
    a.settle();
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "w/slow");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    let stats = a.stats();
    assert_eq!(stats.tasks.len(), 1, "nothing was resent");
    assert_eq!(stats.requests["SendMessage"], 1, "{:?}", stats.requests);
}

/// A reply answered by a new task in the same context is the attempt's continuation: the reply
/// is delivered (not UNCERTAIN, no "bug" hint), `continuationTaskId` names the new task, and
/// later reads go to it: the step ends COMPLETED although the first task still waits.
#[test]
fn a_reply_answered_by_a_new_task_is_the_attempts_continuation() {
    let env = TestEnv::new();
    let a = agent(bent(Bends {
        reply_new_task: true,
        ..Bends::default()
    }));
    let step = "w/cont";
    let out = delegate(&env, step, &a.url(), "ask about rooms", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let first = the_attempt(&env, step)["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = env.run(["reply", step, "one room"]);
    let err = stderr(&out);
    assert_eq!(code(&out), 0, "{}{err}", stdout(&out));
    assert!(!err.contains("bug"), "{err}");
    let row = the_attempt(&env, step);
    assert_eq!(row["taskId"], first.as_str(), "{row}");
    let second = row["continuationTaskId"]
        .as_str()
        .expect("a continuation")
        .to_owned();
    assert_ne!(second, first);
    assert_eq!(row["state"], "COMPLETED", "{row}");
    let stats = a.stats();
    assert_eq!(stats.tasks.len(), 2);
    let old = stats.tasks.iter().find(|t| t.id == first).unwrap();
    assert_eq!(
        serde_json::to_value(&old.state).unwrap(),
        "TASK_STATE_INPUT_REQUIRED",
        "the first task still waits; only the continuation is read"
    );
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let out = env.run(["inspect", step, "--events"]);
    assert!(stdout(&out).contains(&second[..8]), "{}", stdout(&out));
}

/// A crash right after a reply was sent to an agent that answers replies with new tasks: the
/// next pass finds the reply by context and messageId in the new task (the continuation),
/// records it delivered, and resends nothing. Where the context cannot be searched (no
/// ListTasks), such an agent's unknown reply is UNCERTAIN, never resent blind.
#[test]
fn an_unknown_reply_to_a_continuing_agent_is_looked_for_by_context() {
    for list_tasks in [true, false] {
        let env = TestEnv::new();
        let a = agent(AgentConfig {
            no_list_tasks: !list_tasks,
            ..bent(Bends {
                reply_new_task: true,
                ..Bends::default()
            })
        });
        for step in ["w/first", "w/second"] {
            let out = delegate(&env, step, &a.url(), "ask about rooms", &[]);
            assert_eq!(code(&out), 0, "{}", stderr(&out));
        }
        let out = reconcile(&env, &[]);
        assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
        // The first reply goes through: the agent is now known to continue replies elsewhere.
        let out = env.run(["reply", "w/first", "one room"]);
        assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
        crashing(&env, "after-send", &["reply", "w/second", "two rooms"]);
        let out = reconcile(&env, &["--format", "json"]);
        let reply_outcomes: Vec<String> = stdout(&out)
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["type"] == "action" && v["action"] == "reply")
            .map(|v| v["outcome"].as_str().unwrap_or_default().to_owned())
            .collect();
        let row = the_attempt(&env, "w/second");
        let sent = a
            .stats()
            .messages
            .iter()
            .filter(|m| m.text == "two rooms")
            .count();
        assert_eq!(sent, 1, "list_tasks {list_tasks}: never resent");
        if list_tasks {
            assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
            assert_eq!(reply_outcomes, ["DELIVERED"], "{}", stdout(&out));
            assert!(row["continuationTaskId"].is_string(), "{row}");
            assert_eq!(row["state"], "COMPLETED", "{row}");
        } else {
            assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
            assert_eq!(reply_outcomes, ["UNCERTAIN"], "{}", stdout(&out));
        }
    }
}

/// An agent that takes only structured answers asks in text over two lines, refuses a text
/// reply (-32602) with a remedy naming `reply --data`, and completes on a data part shaped like
/// its question; the refused text is never resent.
#[test]
fn a_structured_answer_agent_takes_the_data_reply_and_the_refusal_names_it() {
    let env = TestEnv::new();
    let a = agent(bent(Bends {
        structured_answers: true,
        ..Bends::default()
    }));
    let out = delegate(&env, "trip/rooms", &a.url(), "ask about rooms", &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "trip/rooms");
    assert_eq!(row["state"], "INPUT_REQUIRED", "{row}");
    assert_eq!(
        row["pendingQuestion"],
        "Agent requires input:\n- rooms: two rooms or one?"
    );

    // The remedy names reply --data on a line of its own.
    let out = env.run(["reply", "trip/rooms", "one"]);
    assert_snapshot!("structured_reply_refused", snapshot_of(&env, &out));
    let row = the_attempt(&env, "trip/rooms");
    assert_eq!(row["state"], "INPUT_REQUIRED", "{row}");
    // After the refusal every remedy names the structured answer, and settling it by hand.
    let data = "  a2a-recover reply trip/rooms --data '{\"FIELD\": \"VALUE\"}'";
    let resolve = "a2a-recover resolve trip/rooms --as done|abandoned --reason \"…\"";
    assert_eq!(
        row["remedy"]["alternatives"],
        serde_json::json!([resolve]),
        "{row}"
    );
    assert_eq!(row["remedy"]["command"], data.trim_start(), "{row}");
    for args in [&["inspect", "--pending"][..], &["reconcile"]] {
        let out = env.run(args);
        let name = format!("structured_remedy_{}", args[0]);
        assert_snapshot!(name, snapshot_of(&env, &out));
    }

    let out = env.run(["reply", "trip/rooms", "--data", r#"{"rooms": "one"}"#]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "trip/rooms");
    assert_eq!(row["state"], "COMPLETED", "{row}");
    let texts: Vec<String> = a.stats().messages.iter().map(|m| m.text.clone()).collect();
    assert_eq!(
        texts,
        ["ask about rooms", "one", ""],
        "the refused text was sent once"
    );
    let last = a.stats().messages.last().cloned().unwrap();
    assert_eq!(last.data, [serde_json::json!({"rooms": "one"})]);
}
