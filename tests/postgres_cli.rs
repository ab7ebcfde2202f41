//! Every command on a PostgreSQL journal (`--journal postgres://…`, here through
//! `A2A_RECOVER_JOURNAL`): the happy path of each, the pass locks as advisory locks naming their
//! holder, and the password, which no output may show. The crash matrix runs on both stores in
//! tests/reconcile.rs. A missing server fails these tests (tests/common/postgres.rs).

use a2a_recover::journal::{LockAttempt, LockScope};

use crate::common::commands::{attempts, delegate, latest, settle, spawn};
use crate::common::journal::assert_consistent;
use crate::common::postgres::pg_password;
use crate::common::running::Running;
use crate::common::{
    Store, TestEnv, agent, code, explain, fast, json_lines, stderr, stdout, summary_record,
};

/// The shown form of the test journal: the URL without its password.
fn shown(env: &TestEnv) -> String {
    env.location().to_string()
}

#[test]
fn every_command_works_on_a_postgres_journal() {
    let env = TestEnv::on(Store::Postgres);
    let a = agent(fast());
    // A pass on a schema without a journal: exit 1, naming it and how it was chosen.
    let out = env.run(["reconcile"]);
    assert_eq!(code(&out), 1, "{}", explain(&out));
    assert!(
        stderr(&out).contains(&format!("no journal at `{}`", shown(&env)))
            && stderr(&out).contains("A2A_RECOVER_JOURNAL"),
        "{}",
        explain(&out)
    );
    // delegate creates it, as it creates a SQLite file.
    let out = delegate(
        &env,
        "trip/flight",
        &a.url(),
        "work:2",
        &["--format", "json"],
    );
    assert!(matches!(code(&out), 0 | 3), "{}", explain(&out));
    assert_eq!(summary_record(&out)["journal"], shown(&env));
    let out = delegate(&env, "trip/hotel", &a.url(), "ask", &[]);
    assert!(matches!(code(&out), 0 | 3 | 4), "{}", explain(&out));
    assert_eq!(settle(&env), 4);
    // follow: the flight is done.
    let out = env.run(["follow", "trip/flight", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", explain(&out));
    assert_eq!(summary_record(&out)["state"], "COMPLETED");
    // reply: the hotel's question is answered, and the task completes.
    let out = env.run(["reply", "trip/hotel", "one room"]);
    assert!(matches!(code(&out), 0 | 3), "{}", explain(&out));
    assert_eq!(settle(&env), 0);
    assert_eq!(latest(&env, "trip/hotel")["state"], "COMPLETED");
    // inspect and status.
    assert_eq!(attempts(&env, None).len(), 2);
    let out = env.run(["inspect", "trip/hotel"]);
    assert_eq!(code(&out), 0, "{}", explain(&out));
    let out = env.run(["status", "--check", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", explain(&out));
    let status = json_lines(&out)
        .into_iter()
        .find(|r| r["type"] == "status")
        .unwrap();
    assert_eq!(status["journal"], shown(&env));
    assert_eq!(status["store"], "postgres");
    assert_eq!(status["chosenBy"], "env");
    assert_eq!(status["locks"], serde_json::json!([]));
    // compensate: nothing declared an effect, so nothing changes (exit 0).
    let out = env.run(["compensate", "trip", "--yes"]);
    assert_eq!(code(&out), 0, "{}", explain(&out));
    // resolve: a failed step is taken as done by a human.
    let out = delegate(&env, "ops/check", &a.url(), "fail", &[]);
    assert!(matches!(code(&out), 0 | 3 | 4), "{}", explain(&out));
    assert_eq!(settle(&env), 4);
    assert_eq!(latest(&env, "ops/check")["state"], "FAILED");
    let out = env.run([
        "resolve",
        "ops/check",
        "--as",
        "done",
        "--reason",
        "checked",
    ]);
    assert_eq!(code(&out), 0, "{}", explain(&out));
    assert_eq!(settle(&env), 0);
    // prune, under the whole journal's lock.
    let out = env.run(["prune", "--older-than", "0s", "--yes", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", explain(&out));
    assert_eq!(summary_record(&out)["journal"], shown(&env));
    assert_eq!(assert_consistent(&env.journal()), 3);
}

#[test]
fn journal_init_creates_the_schema_and_says_so() {
    let env = TestEnv::on(Store::Postgres);
    let out = env.run(["journal", "init", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", explain(&out));
    let s = summary_record(&out);
    assert_eq!(s["created"], true, "{s}");
    assert_eq!(s["store"], "postgres", "{s}");
    let out = env.run(["journal", "init", "--format", "json"]);
    assert_eq!(summary_record(&out)["created"], false);
    let out = env.run(["status"]);
    assert_eq!(code(&out), 0, "{}", explain(&out));
    assert!(stdout(&out).contains(&shown(&env)), "{}", explain(&out));
}

#[test]
fn the_password_shows_nowhere() {
    let env = TestEnv::on(Store::Postgres);
    let password = pg_password();
    let a = agent(fast());
    let mut outs = Vec::new();
    // Failing: no journal yet; an unknown workflow; a bad schema name (a usage error).
    outs.push(env.run(["-vvv", "status", "--format", "json"]));
    outs.push(env.run(["-vvv", "reconcile"]));
    let bad = format!("{}&schema=Bad-Name", env.journal().display());
    outs.push(env.run(["-vvv", "--journal", &bad, "status"]));
    // Succeeding.
    outs.push(delegate(
        &env,
        "w/s",
        &a.url(),
        "work:1",
        &["-vvv", "--format", "json"],
    ));
    outs.push(env.run(["-vvv", "reconcile", "--format", "json"]));
    outs.push(env.run(["-vvv", "status", "--format", "json"]));
    outs.push(env.run(["-vvv", "compensate", "nope"]));
    outs.push(env.run(["-vvv", "inspect", "--format", "json"]));
    for o in &outs {
        assert!(!stdout(o).contains(&password), "{}", explain(o));
        assert!(!stderr(o).contains(&password), "{}", explain(o));
    }
    assert_eq!(code(&outs[0]), 1, "{}", explain(&outs[0]));
    assert_eq!(code(&outs[2]), 2, "{}", explain(&outs[2]));
    assert!(matches!(code(&outs[3]), 0 | 3), "{}", explain(&outs[3]));
    assert_eq!(code(&outs[6]), 2, "{}", explain(&outs[6]));
    // Something was logged at -vvv, so the check above read real text.
    assert!(stderr(&outs[4]).len() > 100, "{}", explain(&outs[4]));
    assert_eq!(summary_record(&outs[4])["journal"], shown(&env));
}

#[test]
fn a_held_postgres_lock_names_its_holder_and_wait_waits_for_it() {
    let env = TestEnv::on(Store::Postgres);
    let a = agent(fast());
    let out = delegate(&env, "w1/s", &a.url(), "work:1", &[]);
    assert!(matches!(code(&out), 0 | 3), "{}", explain(&out));
    let out = delegate(&env, "w2/s", &a.url(), "work:1", &[]);
    assert!(matches!(code(&out), 0 | 3), "{}", explain(&out));
    // This test process holds w1's lock, on a connection of its own.
    let holder = env.open_journal();
    let Some(LockAttempt::Taken(lock)) = holder.try_lock(LockScope::Workflow("w1")).unwrap() else {
        panic!("w1's lock was not taken");
    };
    let me = format!("pid {}", std::process::id());
    // A pass over both skips w1 (exit 3, naming the holder) and settles w2.
    let out = env.run(["reconcile"]);
    assert_eq!(code(&out), 3, "{}", explain(&out));
    assert!(
        stderr(&out).contains("workflow `w1` skipped") && stderr(&out).contains(&me),
        "{}",
        explain(&out)
    );
    assert_eq!(latest(&env, "w2/s")["state"], "COMPLETED");
    // status lists the holder.
    let out = env.run(["status", "--format", "json"]);
    let status = json_lines(&out)
        .into_iter()
        .find(|r| r["type"] == "status")
        .unwrap();
    let locks = status["locks"].as_array().unwrap();
    assert_eq!(locks.len(), 1, "{status}");
    assert_eq!(locks[0]["scope"], "w1", "{status}");
    assert!(
        locks[0]["holder"].as_str().unwrap().starts_with(&me),
        "{status}"
    );
    // prune needs the whole journal: refused while a workflow is held (exit 3, nothing done).
    let out = env.run(["prune", "--older-than", "0s", "--yes"]);
    assert_eq!(code(&out), 3, "{}", explain(&out));
    assert!(
        stderr(&out).contains(&me) && stderr(&out).contains("advisory lock"),
        "{}",
        explain(&out)
    );
    // --wait waits for the lock: released while the pass waits, it then runs.
    let mut pass = Running::new(spawn(&env, &["-vv", "--wait", "30s", "reconcile", "w1"]));
    pass.wait_for_stderr("waiting for the lock");
    drop(lock);
    let out = pass.output();
    assert_eq!(code(&out), 0, "{}", explain(&out));
    assert_eq!(latest(&env, "w1/s")["state"], "COMPLETED");
    // The whole journal's lock, held here, keeps every workflow pass out.
    let Some(LockAttempt::Taken(_whole)) = holder.try_lock(LockScope::Journal).unwrap() else {
        panic!("the journal's lock was not taken");
    };
    let out = env.run(["reconcile", "w2"]);
    assert_eq!(code(&out), 3, "{}", explain(&out));
    assert!(stderr(&out).contains(&me), "{}", explain(&out));
}
