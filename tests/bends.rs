//! Real frameworks bend the spec: each bend the scripted agent can reproduce (`Bends`) is read
//! as what it is, and recovery goes on as with a well-behaved agent.

use a2a_recover::scripted_agent::{AgentConfig, Bends};

use crate::common::commands::{delegate, reconcile, the_attempt};
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
