//! The human output of every command, pinned: each snapshot holds the exit status, stdout and
//! stderr of one run (tests/snapshots/*.snap), with ports, ids, times and paths redacted
//! (`common::snapshot`). Agents are left to settle before a command reads them, so what it
//! prints does not depend on timing.
//!
//! `inspect` (table, `--pending`, `--events`), `prune` and `agents list` are pinned beside
//! their journals in tests/inspect.rs, tests/prune.rs and tests/agents.rs; completions in
//! tests/generated.rs.

use std::process::Output;

use insta::assert_snapshot;

use crate::common::bookings::bookings;
use crate::common::commands::{delegate, reconcile, task_of};
use crate::common::snapshot::{compile, snapshot_of, snapshot_with};
use crate::common::{TestEnv, agent, fast, fast_with_skills, stdout};

/// Runs `args` in `env` and renders the run as a snapshot.
fn run(env: &TestEnv, args: &[&str]) -> String {
    snapshot_of(env, &env.run(args))
}

/// Renders a run already made.
fn shown(env: &TestEnv, out: &Output) -> String {
    snapshot_of(env, out)
}

#[test]
fn help() {
    let env = TestEnv::new();
    assert_snapshot!("help", run(&env, &["--help"]));
    assert_snapshot!("help_short", run(&env, &["-h"]));
    assert_snapshot!(
        "scripted_agent_help",
        run(&env, &["scripted-agent", "--help"])
    );
    assert_snapshot!("no_command", run(&env, &[]));
    for columns in ["80", "200"] {
        let out = env
            .cmd()
            .env("COLUMNS", columns)
            .args(["inspect", "--help"])
            .output()
            .unwrap();
        assert_snapshot!(format!("inspect_help_{columns}"), shown(&env, &out));
    }
}

#[test]
fn delegate_says_where_each_step_went_and_why_not() {
    let env = TestEnv::new();
    let a = agent(fast());
    let out = delegate(&env, "trip/hotel", &a.url(), "work:2 book a room", &[]);
    assert_snapshot!("delegate", shown(&env, &out));
    let again = delegate(&env, "trip/hotel", &a.url(), "work:2 book a room", &[]);
    assert_snapshot!("delegate_again", shown(&env, &again));
    let other = delegate(&env, "trip/hotel", &a.url(), "book two rooms", &[]);
    assert_snapshot!("delegate_other_text", shown(&env, &other));
    assert_snapshot!(
        "delegate_without_agent",
        run(&env, &["delegate", "trip/car", "book a car"])
    );
    // Nothing listens there: the intent stays journaled for the next pass.
    let dead = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        format!(
            "http://127.0.0.1:{}/",
            listener.local_addr().unwrap().port()
        )
    };
    let out = delegate(&env, "trip/car", &dead, "book a car", &[]);
    assert_snapshot!("delegate_unreachable", shown(&env, &out));
    a.settle();
}

#[test]
fn reconcile_reports_each_step_and_what_needs_a_human() {
    let env = TestEnv::new();
    let a = agent(fast());
    for (step, text) in [
        ("trip/flight", "work:2"),
        ("trip/hotel", "ask"),
        ("trip/car", "fail"),
    ] {
        let out = delegate(&env, step, &a.url(), text, &[]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }
    a.settle();
    // One at a time: lines come in the order the reads finish, which concurrency would make
    // depend on the machine's load.
    let one = ["--concurrency", "1"];
    assert_snapshot!(
        "reconcile_dry_run",
        run(&env, &["reconcile", "--dry-run", "--concurrency", "1"])
    );
    assert_snapshot!("reconcile", shown(&env, &reconcile(&env, &one)));
    assert_snapshot!("reconcile_again", shown(&env, &reconcile(&env, &one)));
    assert_snapshot!("reconcile_unknown", run(&env, &["reconcile", "nope"]));
}

#[test]
fn follow_and_reply_say_how_the_task_ended() {
    let env = TestEnv::new();
    let a = agent(fast());
    for (step, text) in [("trip/flight", "work:2"), ("trip/hotel", "ask")] {
        let out = delegate(&env, step, &a.url(), text, &[]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }
    a.settle();
    assert_snapshot!("follow", run(&env, &["follow", "trip/flight"]));
    assert_snapshot!(
        "follow_input_required",
        run(&env, &["follow", "trip/hotel"])
    );
    assert_snapshot!("follow_unknown", run(&env, &["follow", "nope/never"]));
    assert_snapshot!("reply", run(&env, &["reply", "trip/hotel", "one room"]));
    assert_snapshot!(
        "reply_again",
        run(&env, &["reply", "trip/hotel", "two rooms"])
    );
}

#[test]
fn compensate_undoes_and_verifies_and_says_so() {
    let env = TestEnv::new();
    let books = bookings();
    let a = agent(fast_with_skills(&["hotels"]));
    let (delete, verify) = (books.delete_cmd(), books.verify_url());
    let out = env.run([
        "delegate",
        "trip/hotel",
        "--agent",
        &a.url(),
        "--effect",
        "--compensate-cmd",
        &delete,
        "--verify-url",
        &verify,
        "book a room",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    a.settle();
    books.book(&task_of(&env, "trip/hotel"));
    let out = reconcile(&env, &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_snapshot!(
        "compensate_dry_run",
        run(&env, &["compensate", "trip", "--dry-run"])
    );
    assert_snapshot!("compensate", run(&env, &["compensate", "trip"]));
    assert_snapshot!("compensate_again", run(&env, &["compensate", "trip"]));
    assert_snapshot!("compensate_unknown", run(&env, &["compensate", "nope"]));
}

#[test]
fn resolve_records_the_decision_and_what_it_means() {
    let env = TestEnv::new();
    let a = agent(fast());
    let out = delegate(&env, "trip/car", &a.url(), "fail", &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    a.settle();
    assert_eq!(reconcile(&env, &[]).status.code(), Some(4));
    let abandon = [
        "resolve",
        "trip/car",
        "--as",
        "abandoned",
        "--reason",
        "no cars",
    ];
    assert_snapshot!("resolve", run(&env, &abandon));
    assert_snapshot!("resolve_again", run(&env, &abandon));
    assert_snapshot!(
        "resolve_empty_reason",
        run(
            &env,
            &["resolve", "trip/car", "--as", "done", "--reason", ""]
        )
    );
    assert_snapshot!(
        "resolve_unknown",
        run(
            &env,
            &["resolve", "nope/x", "--as", "done", "--reason", "r"]
        )
    );
}

#[test]
fn agents_add_list_and_remove_say_what_the_registry_holds() {
    let env = TestEnv::new();
    assert_snapshot!("agents_list_empty", run(&env, &["agents", "list"]));
    let a = agent(fast_with_skills(&["hotel", "car"]));
    assert_snapshot!("agents_add", run(&env, &["agents", "add", &a.url()]));
    assert_snapshot!("agents_list", run(&env, &["agents", "list"]));
    assert_snapshot!("agents_remove", run(&env, &["agents", "remove", &a.url()]));
    assert_snapshot!(
        "agents_remove_unknown",
        run(&env, &["agents", "remove", &a.url()])
    );
}

#[test]
fn demo_narrates_each_recovery() {
    let env = TestEnv::new();
    // The demo reads its own journal with the real clock: ages in its table, and the first
    // eight characters of task ids in its sentences, change from run to run.
    let extra = compile(&[
        (r"a2a-recover-demo-[0-9a-f]{12}", "a2a-recover-demo-[ID]"),
        (r"\b[0-9a-f]{8}\b", "[TASK]"),
        (r"  \d+s   ", "  [AGE]"),
    ]);
    // Without `COLUMNS` (piped), every line of narration fits 80 columns, but the commands it
    // ran (each whole on a line of its own) and the journal's path; the final table fits what
    // it can (its question column keeps 16 characters, past the width if it must).
    let out = env
        .cmd()
        .env_remove("COLUMNS")
        .arg("demo")
        .output()
        .unwrap();
    let text = stdout(&out);
    let (narration, table) = text
        .split_once("The journal, as an operator reads it:")
        .expect("the final table");
    assert!(table.lines().count() > 3, "{text}");
    for line in table.lines() {
        assert!(
            line.chars().count() <= 90,
            "wider than 90: {line:?}\n{text}"
        );
    }
    for line in narration.lines() {
        let whole = line.starts_with("   $ a2a-recover ") || line.starts_with("journal: ");
        assert!(
            whole || line.chars().count() <= 80,
            "wider than 80: {line:?}\n{text}"
        );
    }
    assert_snapshot!("demo", snapshot_with(&env, &out, &extra));
}
