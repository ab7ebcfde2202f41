//! Locks that fit the work: passes lock per workflow, a pass over several skips one whose lock
//! is held (naming the holder, exit 3) and does the others, `prune` takes the whole journal,
//! and `--wait` waits for a held lock. Real agents on 127.0.0.1, the real journal.

use std::time::Duration;

use a2a_recover::recovery::lock::{self, Scope};
use a2a_recover::scripted_agent::AgentConfig;

use crate::common::commands::{delegate, latest, reconcile, spawn};
use crate::common::running::Running;
use crate::common::{TestEnv, agent, code, fast, json_lines, stderr, stdout};

#[test]
fn a_held_workflow_is_skipped_and_the_others_are_done() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        tick: Duration::from_millis(20),
        ..AgentConfig::default()
    });
    for step in ["a/s", "b/s"] {
        assert_eq!(code(&delegate(&env, step, &a.url(), "work:2", &[])), 0);
    }
    a.settle();
    // Another pass works on workflow `a`: it holds the journal's lock shared and `a`'s lock.
    let shared = lock::acquire_scoped(&env.journal(), Scope::Workflows, 4242, "then").unwrap();
    let a_lock = lock::acquire_workflow(&env.journal(), "a", 4242, "then").unwrap();
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stderr(&out).contains("workflow `a` skipped: another pass (pid 4242, started then)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(latest(&env, "b/s")["state"], "COMPLETED", "b was done");
    assert_ne!(
        latest(&env, "a/s")["state"],
        "COMPLETED",
        "a was left alone"
    );
    // Naming only the held workflow: nothing to do but wait.
    let out = reconcile(&env, &["a"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("nothing visited: 1 workflow(s) locked by another pass"),
        "{}",
        stdout(&out)
    );
    let out = env.run(["compensate", "a"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("holds the lock of workflow `a`"),
        "{}",
        stderr(&out)
    );
    // `status` names the holder, taking no lock.
    let out = env.run(["status", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let status = json_lines(&out).pop().unwrap();
    assert_eq!(status["locks"][0]["scope"], "a", "{status}");
    // `prune` takes the whole journal: a pass running is exit 3, nothing touched.
    let out = env.run(["prune", "--older-than", "30d"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    // --wait waits for a held lock: released meanwhile, the pass goes on.
    let mut pass = Running::new(spawn(&env, &["-vv", "reconcile", "--wait", "30s"]));
    pass.wait_for_stderr("waiting for the lock");
    drop(a_lock);
    drop(shared);
    let out = pass.output();
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(latest(&env, "a/s")["state"], "COMPLETED");
    let out = env.run(["prune", "--older-than", "30d"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn prune_holding_the_journal_stops_every_pass_and_wait_outlasts_it() {
    let env = TestEnv::new();
    let a = agent(AgentConfig::default());
    assert_eq!(code(&delegate(&env, "w/s", &a.url(), "hello", &[])), 0);
    let whole = lock::acquire_scoped(&env.journal(), Scope::Journal, 7, "now").unwrap();
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(stderr(&out).contains("pid 7"), "{}", stderr(&out));
    let mut pass = Running::new(spawn(&env, &["-vv", "reconcile", "--wait", "30s"]));
    pass.wait_for_stderr("waiting for the lock");
    drop(whole);
    let out = pass.output();
    assert!([0, 3].contains(&code(&out)), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("holds the journal lock"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_pass_names_ten_held_workflows_counts_the_rest_and_does_the_others() {
    let env = TestEnv::new();
    let a = agent(fast());
    let names: Vec<String> = (0..13).map(|i| format!("w{i:02}")).collect();
    for w in &names {
        let step = format!("{w}/s");
        assert_eq!(code(&delegate(&env, &step, &a.url(), "work:2", &[])), 0);
    }
    a.settle();
    // Another pass holds twelve of the thirteen workflows (the journal's lock shared, as a
    // pass does); the pass reaches each held one, skips it, and does the last.
    let shared = lock::acquire_scoped(&env.journal(), Scope::Workflows, 4242, "then").unwrap();
    let held: Vec<_> = names[..12]
        .iter()
        .map(|w| lock::acquire_workflow(&env.journal(), w, 4242, "then").unwrap())
        .collect();
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    let named = err
        .lines()
        .filter(|l| l.contains("skipped: another pass (pid 4242"))
        .count();
    assert_eq!(named, 10, "{err}");
    assert!(
        err.contains("2 more workflow(s) skipped: other passes hold their locks"),
        "{err}"
    );
    assert_eq!(
        latest(&env, "w12/s")["state"],
        "COMPLETED",
        "the free one was done"
    );
    for w in &names[..12] {
        assert_ne!(
            latest(&env, &format!("{w}/s"))["state"],
            "COMPLETED",
            "{w} was left alone"
        );
    }
    drop(held);
    drop(shared);
    // Released: the next pass does them all.
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
}
