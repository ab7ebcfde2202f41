//! `inspect --watch`: a real agent changes a step's state while the watch runs piped; the
//! changed record arrives (JSON: an `attempt` record; text: a line `FROM → TO`), on SQLite and
//! PostgreSQL alike (both polled); on a terminal the view is redrawn; SIGINT ends it with 130.

use std::process::Stdio;

use rstest::rstest;
use rustix::process::Signal;
use serde_json::Value;

use crate::common::child::Guarded;
use crate::common::commands::{delegate, reconcile};
use crate::common::pty::run_on_terminal;
use crate::common::running::Running;
use crate::common::{Store, TestEnv, agent, code, fast, stderr, stdout};

/// `a2a-recover ARGS` started with its stdout and stderr piped.
fn watching(env: &TestEnv, args: &[&str]) -> Running {
    Running::new(Guarded::spawn(
        env.std_cmd()
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
        "a2a-recover",
    ))
}

fn hotel_in(lines: &[Value], state: &str) -> bool {
    lines
        .iter()
        .any(|r| r["type"] == "attempt" && r["step"] == "hotel" && r["state"] == state)
}

#[rstest]
fn a_piped_json_watch_prints_the_record_a_real_agent_changed_and_sigint_ends_it(
    #[values(Store::Sqlite, Store::Postgres)] store: Store,
) {
    let env = TestEnv::on(store);
    let a = agent(fast());
    for (step, text) in [("trip/hotel", "ask"), ("trip/flight", "work:1")] {
        let out = delegate(&env, step, &a.url(), text, &[]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let mut watch = watching(
        &env,
        &[
            "inspect",
            "trip",
            "--watch",
            "--interval",
            "100ms",
            "-o",
            "json",
        ],
    );
    watch.wait_for("the view", |l| hotel_in(l, "SUBMITTED"));
    let first = watch.json().len();

    // The agent asks its question; the pass journals it.
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    watch.wait_for("the changed record", |l| {
        hotel_in(&l[first..], "INPUT_REQUIRED")
    });
    let changed: Vec<Value> = watch.json()[first..].to_vec();
    let hotel = changed.iter().find(|r| r["step"] == "hotel").unwrap();
    assert_eq!(hotel["pendingQuestion"], "two rooms or one?", "{hotel}");

    watch.signal(Signal::INT);
    let (status, err, lines) = watch.finish();
    assert_eq!(status.code(), Some(130), "{err}");
    // Only what changed after the view: never the same record twice in a row.
    let after: Vec<&Value> = lines[first..]
        .iter()
        .filter(|r| r["step"] == "hotel")
        .collect();
    assert_eq!(after.len(), 1, "{after:?}");
}

#[test]
fn a_piped_text_watch_prints_a_line_per_change_with_its_time() {
    let env = TestEnv::new();
    let a = agent(fast());
    let out = delegate(&env, "trip/hotel", &a.url(), "ask", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let mut watch = watching(
        &env,
        &["inspect", "--pending", "--watch", "--interval", "100ms"],
    );
    // Nothing needs a human yet: the view says so on stderr, stdout stays empty.
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let mut line = String::new();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !line.contains("trip/hotel #1: new, INPUT_REQUIRED") {
        line = watch.next_line(until);
    }
    assert!(
        line.starts_with("2000-01-01T00:00:00"),
        "the time it was seen: {line}"
    );
    assert!(line.ends_with("two rooms or one?"), "{line}");
    let out = env.run(["reply", "trip/hotel", "two"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    // Answered, it leaves the list: printed once more as it now is.
    while !line.contains("trip/hotel #1: INPUT_REQUIRED → ") {
        line = watch.next_line(until);
    }
    watch.signal(Signal::INT);
    let (status, err, _) = watch.finish();
    assert_eq!(status.code(), Some(130), "{err}");
}

#[test]
fn on_a_terminal_the_watch_redraws_the_view() {
    let env = TestEnv::new();
    let a = agent(fast());
    let out = delegate(&env, "trip/hotel", &a.url(), "ask", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // SIGINT after a few redraws, as an operator's Ctrl-C.
    let mut cmd = std::process::Command::new("timeout");
    cmd.args(["--preserve-status", "-s", "INT", "1"])
        .arg(assert_cmd::cargo::cargo_bin("a2a-recover"))
        .args(["inspect", "trip", "--watch", "--interval", "100ms"]);
    env.hermetic(&mut cmd);
    let out = run_on_terminal(cmd, 80);
    assert_eq!(code(&out), 130, "{}", stderr(&out));
    let shown = stdout(&out);
    let redraws = shown.matches("\x1b[H\x1b[2J").count();
    assert!(redraws >= 2, "redrawn, not appended: {shown:?}");
    assert_eq!(
        shown.matches("every 100ms: ").count(),
        redraws,
        "each redraw says what it watches: {shown:?}"
    );
    assert_eq!(shown.matches("trip/hotel").count(), redraws, "{shown:?}");
}
