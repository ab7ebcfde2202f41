//! Real frameworks bend the spec: each bend the scripted agent can reproduce (`Bends`) is read
//! as what it is, and recovery goes on as with a well-behaved agent.

use std::time::Duration;

use a2a_recover::a2a::parts_text;
use a2a_recover::journal::{Journal, StepName};
use a2a_recover::scripted_agent::{AgentConfig, Bends, QuestionIn};

use crate::common::commands::{crashing, delegate, reconcile, the_attempt};
use crate::common::hostile::{Hostile, Script};
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
