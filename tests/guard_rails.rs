//! Operator commands that re-send or undo finished work refuse without `--force`, take a
//! decision back while nothing was sent, leave a workflow with nothing to undo as it was, and
//! ask on a terminal (never without one). Real agents on 127.0.0.1, the real journal.

use std::io::Write as _;
use std::process::Stdio;

use crate::common::child::Guarded;
use crate::common::commands::{attempts, delegate, journal_bytes, latest, settle};
use crate::common::{TestEnv, agent, code, fast, stderr, stdout};

#[test]
fn retry_of_a_completed_step_is_refused_without_force() {
    let env = TestEnv::new();
    let a = agent(fast());
    let out = delegate(&env, "trip-7/flight", &a.url(), "book it", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(settle(&env), 0);
    assert_eq!(latest(&env, "trip-7/flight")["state"], "COMPLETED");
    let before = journal_bytes(&env);
    for decision in ["retry", "resend"] {
        let out = env.run([
            "resolve",
            "trip-7/flight",
            "--as",
            decision,
            "--reason",
            "again",
        ]);
        assert_eq!(code(&out), 2, "{decision}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!(
                "refusing to {decision} `trip-7/flight`: attempt 1 COMPLETED"
            )),
            "{err}"
        );
        assert!(err.contains("add --force"), "{err}");
    }
    assert!(journal_bytes(&env) == before, "a refused decision wrote");
    let out = env.run([
        "resolve",
        "trip-7/flight",
        "--as",
        "retry",
        "--reason",
        "the customer wants a second seat",
        "--force",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(attempts(&env, Some("trip-7/flight")).len(), 2);
}

#[test]
fn undo_takes_a_decision_back_while_nothing_was_sent() {
    let env = TestEnv::new();
    let a = agent(fast());
    // done on a pending question: taken back, the question is pending again.
    let out = delegate(&env, "w/asking", &a.url(), "ask", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(settle(&env), 4);
    let out = env.run([
        "resolve", "w/asking", "--as", "done", "--reason", "by phone",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(settle(&env), 0);
    let out = env.run(["resolve", "w/asking", "--undo"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("took back `done`"),
        "{}",
        stdout(&out)
    );
    assert_eq!(code(&env.run(["reconcile"])), 4, "pending again");
    let out = env.run(["resolve", "w/asking", "--undo"]);
    assert_eq!(code(&out), 2, "nothing left to undo");
    assert!(
        stderr(&out).contains("has no decision to take back"),
        "{}",
        stderr(&out)
    );

    // retry of a failed step: the new attempt, never sent, goes away.
    let out = delegate(
        &env,
        "w/failing",
        &a.url(),
        "fail",
        &["--max-attempts", "3"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    settle(&env);
    assert_eq!(latest(&env, "w/failing")["state"], "FAILED");
    let retry = ["resolve", "w/failing", "--as", "retry", "--reason", "flaky"];
    assert_eq!(code(&env.run(retry)), 0);
    assert_eq!(attempts(&env, Some("w/failing")).len(), 2);
    let out = env.run(["resolve", "w/failing", "--undo", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("\"removedAttempt\":2"),
        "{}",
        stdout(&out)
    );
    let now = attempts(&env, Some("w/failing"));
    assert_eq!(now.len(), 1, "{now:?}");
    assert_eq!(now[0]["state"], "FAILED");
    // Once the pass sent the retry, it cannot be taken back.
    assert_eq!(code(&env.run(retry)), 0);
    let out = env.run(["reconcile"]);
    assert!([3, 4].contains(&code(&out)), "{}", stderr(&out));
    assert_ne!(latest(&env, "w/failing")["state"], "INTENT");
    let out = env.run(["resolve", "w/failing", "--undo"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("was already sent"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn compensate_with_nothing_to_undo_changes_nothing_and_default_needs_force() {
    let env = TestEnv::new();
    let a = agent(fast());
    let out = delegate(&env, "w/s", &a.url(), "hello", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(settle(&env), 0);
    let before = journal_bytes(&env);
    let out = env.run(["compensate", "w"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("nothing to undo"), "{}", stdout(&out));
    assert!(
        journal_bytes(&env) == before,
        "compensate changed the journal"
    );
    assert_eq!(latest(&env, "w/s")["workflowState"], "ACTIVE");
    // The workflow still takes new steps.
    let out = delegate(&env, "w/t", &a.url(), "more", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));

    // `default`, the workflow of bare names, is never compensated as a whole without --force.
    let out = delegate(
        &env,
        "bare",
        &a.url(),
        "hello",
        &[
            "--effect",
            "--compensate-cmd",
            "true",
            "--verify-cmd",
            "true",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    settle(&env);
    let before = journal_bytes(&env);
    let out = env.run(["compensate", "default"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("refusing to compensate `default` as a whole"),
        "{}",
        stderr(&out)
    );
    assert!(journal_bytes(&env) == before, "a refused compensate wrote");
    let out = env.run(["compensate", "default", "--dry-run"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let out = env.run(["compensate", "default", "--force"]);
    assert_ne!(code(&out), 2, "{}", stderr(&out));
    assert_ne!(latest(&env, "default/bare")["workflowState"], "ACTIVE");
}

/// Runs the binary on a pseudo-terminal (util-linux `script`) with `input` typed on it;
/// returns the exit code and what the terminal showed.
fn on_a_terminal(env: &TestEnv, args: &[&str], input: &str) -> (i32, String) {
    let script = std::path::Path::new("/usr/bin/script");
    assert!(
        script.exists(),
        "this test needs util-linux `script` to run the binary on a pseudo-terminal"
    );
    // Only local values (the binary's path, our flags) go into this line.
    let line = std::iter::once(env!("CARGO_BIN_EXE_a2a-recover"))
        .chain(args.iter().copied())
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let mut child = Guarded::spawn(
        env.hermetic(&mut std::process::Command::new(script))
            .args(["-q", "-e", "-c", &line, "/dev/null"])
            .env("TERM", "dumb")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
        "script",
    );
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    // Closing our end would end the terminal before the answer is read: keep it open until
    // the child is done.
    let out = child.wait_with_output().expect("script");
    drop(stdin);
    (code(&out), stdout(&out))
}

#[test]
fn on_a_terminal_destructive_commands_ask_and_yes_answers() {
    let env = TestEnv::new();
    let a = agent(fast());
    let out = delegate(&env, "w/asking", &a.url(), "ask", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(settle(&env), 4);
    let args = [
        "resolve", "w/asking", "--as", "done", "--reason", "by phone",
    ];
    // No: nothing changes, exit 1.
    let before = journal_bytes(&env);
    let (status, shown) = on_a_terminal(&env, &args, "n\n");
    assert_eq!(status, 1, "{shown}");
    assert!(
        shown.contains("resolve w/asking (attempt 1, INPUT_REQUIRED) as done"),
        "{shown}"
    );
    assert!(shown.contains("Proceed? [y/N]"), "{shown}");
    assert!(shown.contains("nothing was changed"), "{shown}");
    assert!(journal_bytes(&env) == before, "a declined resolve wrote");
    // Yes: done.
    let (status, shown) = on_a_terminal(&env, &args, "y\n");
    assert_eq!(status, 0, "{shown}");
    assert!(shown.contains("resolved w/asking as done"), "{shown}");
    // --yes answers: no question at all.
    let (status, shown) = on_a_terminal(&env, &["resolve", "w/asking", "--undo", "--yes"], "");
    assert_eq!(status, 0, "{shown}");
    assert!(!shown.contains("Proceed?"), "{shown}");
    let (status, shown) = on_a_terminal(&env, &["prune", "--older-than", "30d"], "\n");
    assert_eq!(status, 1, "an empty answer is no: {shown}");
    assert!(
        shown.contains("delete the status refreshes older than 30d"),
        "{shown}"
    );
    // Without a terminal nothing is asked (stdin is not one here).
    let out = env.run(["prune", "--older-than", "30d"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!stderr(&out).contains("Proceed?"), "{}", stderr(&out));
}
