//! `follow --workflow WORKFLOW`: every unfinished step of a workflow followed at once against the
//! scripted agent, each state change on a line with its time; the exit code is that of all of
//! them (4 over 3 over 0). A bare name keeps its meaning (a step of `default`), and its hint
//! names the flag. The binary against a real agent on 127.0.0.1; the real journal.

use serde_json::Value;

use crate::common::commands::{delegate, the_attempt};
use crate::common::{TestEnv, agent, code, fast, json_lines, stderr, stdout};

fn trip(env: &TestEnv, url: &str) {
    for (step, text) in [
        ("trip/flight", "work:2"),
        ("trip/hotel", "ask"),
        ("trip/note", "direct"),
    ] {
        let out = delegate(env, step, url, text, &[]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
}

#[test]
fn following_a_workflow_follows_each_unfinished_step_and_times_each_change() {
    let env = TestEnv::new();
    let a = agent(fast());
    trip(&env, &a.url());
    let out = env.run(["follow", "--workflow", "trip"]);
    let (said, err) = (stdout(&out), stderr(&out));
    assert_eq!(code(&out), 4, "the hotel's question: {said}{err}");
    // The direct reply has nothing to follow; the two others are followed to their end.
    let ends: Vec<&str> = said.lines().collect();
    assert_eq!(ends.len(), 2, "{said}");
    assert!(ends[0].starts_with("trip/flight"), "{said}");
    assert!(ends[0].contains("COMPLETED"), "{said}");
    assert!(ends[1].starts_with("trip/hotel"), "{said}");
    assert!(ends[1].contains("two rooms or one?"), "{said}");
    // Each change with the time it was seen (the displayed clock is pinned in tests).
    assert!(
        err.lines()
            .any(|l| l.starts_with("2000-01-01T00:00:00Z trip/flight: ")
                && l.ends_with("→ COMPLETED")),
        "{err}"
    );
    assert!(
        err.lines()
            .any(|l| l.starts_with("2000-01-01T00:00:00Z trip/hotel: ")
                && l.ends_with("→ INPUT_REQUIRED")),
        "{err}"
    );
    assert_eq!(the_attempt(&env, "trip/flight")["state"], "COMPLETED");
    assert_eq!(the_attempt(&env, "trip/hotel")["state"], "INPUT_REQUIRED");

    // Again: only the hotel waits (for a human), and JSON ends with one summary of them all.
    let out = env.run(["follow", "--workflow", "trip", "-o", "json"]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let lines = json_lines(&out);
    let summary = lines.last().unwrap();
    assert_eq!(summary["type"], "summary", "{summary}");
    assert_eq!(summary["workflow"], "trip", "{summary}");
    assert_eq!(summary["exitCode"], 4, "{summary}");
    let steps: Vec<&Value> = summary["steps"].as_array().unwrap().iter().collect();
    assert_eq!(steps.len(), 1, "{summary}");
    assert_eq!(steps[0]["step"], "hotel", "{summary}");
    assert_eq!(steps[0]["exitCode"], 4, "{summary}");
}

#[test]
fn a_bare_name_is_still_a_step_of_default_and_its_hint_names_the_flag() {
    let env = TestEnv::new();
    let a = agent(fast());
    trip(&env, &a.url());
    let out = env.run(["follow", "trip"]);
    assert_eq!(code(&out), 2, "{}{}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("default/trip"), "{err}");
    assert!(err.contains("--workflow"), "{err}");
    let out = env.run(["follow", "--workflow", "nope"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("unknown workflow `nope`"),
        "{}",
        stderr(&out)
    );
    let out = env.run(["follow", "trip/hotel", "--workflow", "trip"]);
    assert_eq!(
        code(&out),
        2,
        "a step or a workflow, not both: {}",
        stderr(&out)
    );
}
