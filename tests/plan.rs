//! `delegate --plan` end to end: bad plans (line and column, nothing journaled), one commit for
//! all intents, re-runs that change nothing, a changed plan refused with a diff, and the effect
//! flags of a single step.

use std::fmt::Write as _;

use crate::common::agent::SlowProxy;
use crate::common::commands::{
    attempts, crashing, journal_bytes, latest, reconcile, spawn, spawn_with,
};
use crate::common::wait::{GUARD, last_lease_expiry, wait_for, wait_past};
use crate::common::{
    Background, TestEnv, agent, code, fast_with_skills, json_lines, stderr, stdout, write,
};

fn plan_text(url: &str, hotel_text: &str) -> String {
    format!(
        r#"workflow = "trip"

[[step]]
name = "flight"
agent = "{url}"
text = "book flight"
metadata = {{ trip = 42 }}

[[step]]
name = "hotel"
agent = "{url}"
text = "{hotel_text}"
effect = true
compensate = {{ text = "cancel {{artifact:echo}}" }}
verify = {{ command = "test -e booked" }}

[[step]]
name = "car"
agent = "{url}"
text = "rent a car"
"#
    )
}

#[test]
fn each_bad_plan_names_its_line_and_column_and_journals_nothing() {
    let env = TestEnv::new();
    let a = agent(fast_with_skills(&["x"]));
    // A journal with something in it, to prove bad plans leave it byte for byte.
    let out = env.run(["delegate", "w/s", "--agent", &a.url(), "hi"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let before = journal_bytes(&env);
    let url = a.url();
    let head = "workflow = \"trip\"\n\n[[step]]\nname = \"a\"\n";
    let cases: Vec<(String, &str)> = vec![
        (
            format!("{head}agent = \"{url}\"\ntext = \"t\"\ncolour = \"red\"\n"),
            "bad.toml:7:1: unknown field `colour`",
        ),
        (
            format!("{head}agent = \"{url}\"\n"),
            "bad.toml:3:1: step `a` has no `text`",
        ),
        (
            format!("{head}agent = \"{url}\"\nskill = \"s\"\ntext = \"t\"\n"),
            "bad.toml:6:9: step `a` has both `agent` and `skill`",
        ),
        (
            format!("{head}text = \"t\"\n"),
            "bad.toml:3:1: step `a` has neither `agent` nor `skill`",
        ),
        (
            format!("{head}agent = \"{url}\"\ntext = \"t\"\neffect = true\n"),
            "bad.toml:7:10: step `a` has `effect = true` but no `compensate`",
        ),
        (
            format!(
                "{head}agent = \"{url}\"\ntext = \"t\"\neffect = true\n\
                 compensate = {{ command = \"true\" }}\n"
            ),
            "bad.toml:7:10: step `a` has `effect = true` but no `verify`",
        ),
        (
            format!(
                "{head}agent = \"{url}\"\ntext = \"t\"\n\n[[step]]\nname = \"a\"\n\
                 agent = \"{url}\"\ntext = \"u\"\n"
            ),
            "bad.toml:9:8: step `a` appears twice (first at 4:8)",
        ),
        (
            format!(
                "workflow = \"trip\"\n\n[[step]]\nname = \"a/b\"\nagent = \"{url}\"\ntext = \"t\"\n"
            ),
            "bad.toml:4:8: bad step name `a/b`",
        ),
        (
            format!(
                "workflow = \"trip\"\n\n[[step]]\nname = \"a~b\"\nagent = \"{url}\"\ntext = \"t\"\n"
            ),
            "bad.toml:4:8: bad step name `a~b`",
        ),
        (
            format!("{head}agent = \"{url}\"\ntext = \"t\"\ntoken_env = \"A2A_TEST_PLAN_UNSET\"\n"),
            "bad.toml:7:13: environment variable `A2A_TEST_PLAN_UNSET`",
        ),
        (
            format!(
                "{head}agent = \"{url}\"\ntext = \"t\"\neffect = true\n\
                 compensate = {{ command = \"rm {{task_id}}\" }}\nverify = {{ url = \"http://h/\" }}\n"
            ),
            "bad.toml:8:26: `compensate` command of step `a`: placeholders are never substituted",
        ),
        (
            format!("{head}agent = \"{url}\"\ntext = \"t\n"),
            "bad.toml:6:",
        ),
        (
            "[[step]]\nname = \"a\"\n".to_owned(),
            "bad.toml:1:1: the plan has no `workflow`",
        ),
    ];
    for (text, want) in cases {
        let path = write(env.path(), "bad.toml", &text);
        let out = env.run(["delegate", "--plan", path.to_str().unwrap()]);
        assert_eq!(code(&out), 2, "{want}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(want), "want {want:?} in:\n{err}");
        assert!(err.contains("nothing was journaled"), "{err}");
        assert!(err.contains("hint:"), "{err}");
        assert_eq!(journal_bytes(&env), before, "{want}: the journal changed");
    }
    assert_eq!(a.stats().messages.len(), 1);
}

#[test]
fn all_intents_are_committed_before_the_first_send_and_reruns_change_nothing() {
    let env = TestEnv::new();
    let a = agent(fast_with_skills(&["x"]));
    let path = write(env.path(), "trip.toml", &plan_text(&a.url(), "book hotel"));
    let plan = path.to_str().unwrap();
    // Abort right after the commit: all three intents are there, nothing was sent.
    crashing(&env, "after-intent", &["delegate", "--plan", plan]);
    let rows = attempts(&env, Some("trip"));
    assert_eq!(rows.len(), 3, "{rows:#?}");
    assert!(rows.iter().all(|r| r["state"] == "INTENT"), "{rows:#?}");
    let names: Vec<&str> = rows.iter().map(|r| r["step"].as_str().unwrap()).collect();
    assert_eq!(names, ["flight", "hotel", "car"], "plan order");
    assert!(a.stats().messages.is_empty());

    // The same plan again sends what is still INTENT (never sent, so no look needed).
    let out = env.run(["delegate", "--plan", plan]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(a.stats().messages.len(), 3);
    let ids: Vec<String> = rows
        .iter()
        .map(|r| r["messageId"].as_str().unwrap().to_owned())
        .collect();
    for id in &ids {
        assert_eq!(a.stats().tasks_per_message_id.get(id), Some(&1), "{id}");
    }
    // Plan sends run concurrently: find the flight's message by its journaled messageId.
    let flight_id = &ids[0];
    let stats = a.stats();
    let flight = stats
        .messages
        .iter()
        .find(|m| &m.message_id == flight_id)
        .expect("the flight's message reached the agent");
    assert_eq!(
        flight.metadata.as_ref().unwrap()["trip"],
        42,
        "metadata from the plan's table"
    );
    // Commands run in the plan's directory, journaled absolute; the hotel's effect is declared.
    let journal =
        a2a_recover::journal::Journal::open(&env.journal(), std::time::Duration::from_secs(10))
            .unwrap();
    let hotel = journal
        .step(&a2a_recover::journal::StepName::parse("trip/hotel").unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(
        hotel.step.spec.cwd.as_deref(),
        Some(env.path().canonicalize().unwrap().to_str().unwrap())
    );
    assert!(hotel.step.spec.effect.is_some());
    drop(journal);

    // And again: nothing new is journaled or sent.
    let before = a.stats().messages.len();
    let out = env.run(["delegate", "--plan", plan]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("already delegated"),
        "{}",
        stdout(&out)
    );
    assert_eq!(a.stats().messages.len(), before);
    assert_eq!(attempts(&env, Some("trip")).len(), 3);
}

/// `-q` prints errors and data only: a plan whose every step went as asked says nothing on
/// stdout (the journal and the exit code say it); without `-q`, a line per step.
#[test]
fn a_quiet_plan_prints_no_line_for_a_step_that_went_as_asked() {
    let env = TestEnv::new();
    let a = agent(fast_with_skills(&["x"]));
    let path = write(env.path(), "trip.toml", &plan_text(&a.url(), "book hotel"));
    let plan = path.to_str().unwrap();
    let out = env.run(["-q", "delegate", "--plan", plan]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "", "{}", stderr(&out));
    assert_eq!(a.stats().messages.len(), 3);
    let rows = attempts(&env, Some("trip"));
    assert!(rows.iter().all(|r| r["taskId"].is_string()), "{rows:#?}");

    let path = write(
        env.path(),
        "again.toml",
        &plan_text(&a.url(), "book hotel").replace("\"trip\"", "\"again\""),
    );
    let out = env.run(["delegate", "--plan", path.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let said = stdout(&out);
    assert_eq!(said.matches("delegated again/").count(), 3, "{said}");
}

#[test]
fn a_crash_after_one_send_of_a_plan_is_found_not_resent() {
    let env = TestEnv::new();
    let a = agent(fast_with_skills(&["x"]));
    let path = write(env.path(), "trip.toml", &plan_text(&a.url(), "book hotel"));
    let plan = path.to_str().unwrap();
    crashing(&env, "after-send:trip/hotel", &["delegate", "--plan", plan]);
    let hotel_id = latest(&env, "trip/hotel")["messageId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(a.stats().tasks_per_message_id.get(&hotel_id), Some(&1));
    let out = env.run(["delegate", "--plan", plan]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // Looked for and found: still one task for the hotel's messageId.
    assert_eq!(a.stats().tasks_per_message_id.get(&hotel_id), Some(&1));
    for step in ["trip/flight", "trip/hotel", "trip/car"] {
        assert!(latest(&env, step)["taskId"].is_string(), "{step}");
    }
}

#[test]
fn a_plan_that_differs_from_the_journal_is_refused_with_a_diff() {
    let env = TestEnv::new();
    let a = agent(fast_with_skills(&["x"]));
    let path = write(env.path(), "trip.toml", &plan_text(&a.url(), "book hotel"));
    let out = env.run(["delegate", "--plan", path.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let before = journal_bytes(&env);
    let sent = a.stats().messages.len();
    let changed = plan_text(&a.url(), "book two rooms").replace(
        "[[step]]\nname = \"car\"",
        "[[step]]\nname = \"boat\"\nagent = \"http://127.0.0.1:9/\"\ntext = \"sail\"\n\n[[step]]\nname = \"car\"",
    );
    let path = write(env.path(), "changed.toml", &changed);
    let out = env.run(["delegate", "--plan", path.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("step `hotel`: text: \"book hotel\" → \"book two rooms\""),
        "{err}"
    );
    assert!(
        err.contains("step `boat`: added (in the plan, not journaled)"),
        "{err}"
    );
    assert!(err.contains("differs from what is journaled"), "{err}");
    let dropped = plan_text(&a.url(), "book hotel").replace("name = \"car\"", "name = \"bike\"");
    let path = write(env.path(), "dropped.toml", &dropped);
    let out = env.run(["delegate", "--plan", path.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("step `car`: removed (journaled, not in the plan)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(journal_bytes(&env), before);
    assert_eq!(a.stats().messages.len(), sent);
}

#[test]
fn effect_flags_are_journaled_and_checked() {
    let env = TestEnv::new();
    let a = agent(fast_with_skills(&["x"]));
    let url = a.url();
    // Placeholders in commands are refused before anything is journaled.
    for (flag, cmd, var) in [
        ("--verify-cmd", "test -e {task_id}", "$A2A_TASK_ID"),
        (
            "--compensate-cmd",
            "rm {artifact:booking}",
            "$A2A_ARTIFACT_BOOKING",
        ),
    ] {
        let mut args = vec!["delegate", "w/s", "--agent", &url, "--effect"];
        if flag == "--verify-cmd" {
            args.extend(["--compensate", "cancel", flag, cmd, "hi"]);
        } else {
            args.extend([flag, cmd, "--verify-url", "http://h/{task_id}", "hi"]);
        }
        let out = env.run(&args);
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        assert!(stderr(&out).contains(var), "{}", stderr(&out));
        assert!(!env.journal().exists());
    }
    // --effect needs both recipes (clap).
    let out = env.run(["delegate", "w/s", "--agent", &url, "--effect", "hi"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(!env.journal().exists());
    let out = env.run([
        "delegate",
        "w/s",
        "--agent",
        &url,
        "--effect",
        "--compensate",
        "cancel {task_id}",
        "--verify-url",
        "http://127.0.0.1:9/b/{task_id}",
        "hi",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // The same step with another verification is a usage error.
    let out = env.run([
        "delegate",
        "w/s",
        "--agent",
        &url,
        "--effect",
        "--compensate",
        "cancel {task_id}",
        "--verify-url",
        "http://127.0.0.1:9/other/{task_id}",
        "hi",
    ]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("different verification"),
        "{}",
        stderr(&out)
    );
    assert_eq!(a.stats().messages.len(), 1);
}

/// Writes a plan of `n` steps `s0`…, all to the agent at `url`.
fn big_plan(env: &TestEnv, url: &str, n: usize) -> String {
    let mut text = String::from("workflow = \"big\"\n");
    for i in 0..n {
        let _ = write!(
            text,
            "\n[[step]]\nname = \"s{i}\"\nagent = \"{url}\"\ntext = \"step {i}\"\n"
        );
    }
    let path = write(env.path(), "big.toml", &text);
    path.to_str().unwrap().to_owned()
}

#[test]
fn a_batch_killed_after_one_answer_is_rerun_with_one_task_per_message_id() {
    let env = TestEnv::new();
    let a = agent(fast_with_skills(&["x"]));
    let plan = big_plan(&env, &a.url(), 50);
    // Killed once the answer of s17 arrived, before anything of it was journaled: a step the
    // batch had claimed (its endpoint journaled) counts as possibly sent; one it had not
    // claimed yet was never sent.
    crashing(&env, "after-send:big/s17", &["delegate", "--plan", &plan]);
    let rows = attempts(&env, Some("big"));
    assert_eq!(rows.len(), 50);
    let sent = a.stats();
    for row in &rows {
        let id = row["messageId"].as_str().unwrap();
        assert!(
            row["interfaceUrl"].is_string() || !sent.tasks_per_message_id.contains_key(id),
            "sent before its endpoint was journaled: {row:#?}"
        );
    }
    let s17 = latest(&env, "big/s17");
    assert_eq!(s17["state"], "INTENT", "the answer was not journaled");
    let s17_id = s17["messageId"].as_str().unwrap().to_owned();
    assert_eq!(a.stats().tasks_per_message_id.get(&s17_id), Some(&1));
    let sent_before = a.stats().messages.len();
    assert!(
        sent_before < 50,
        "the crash stopped the batch: {sent_before}"
    );

    let out = env.run(["--format", "json", "delegate", "--plan", &plan]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    // s17 (and any other step whose answer was lost) was looked for and found, not resent.
    assert!(stdout(&out).contains("\"found\""), "{}", stdout(&out));
    assert_each_step_sent_once(&env, &a, 50);
    for row in &attempts(&env, Some("big")) {
        assert!(row["taskId"].is_string(), "{row:#?}");
    }
}

/// The `n` steps of the `big` workflow each made exactly one task at the agent, and hold no
/// lease.
fn assert_each_step_sent_once(
    env: &TestEnv,
    a: &Background<a2a_recover::scripted_agent::ScriptedAgent>,
    n: usize,
) {
    let stats = a.stats();
    let rows = attempts(env, Some("big"));
    assert_eq!(rows.len(), n);
    for row in &rows {
        let id = row["messageId"].as_str().unwrap();
        assert_eq!(
            stats.tasks_per_message_id.get(id),
            Some(&1),
            "{}: not sent exactly once",
            row["step"]
        );
    }
    assert_eq!(stats.tasks.len(), n);
    assert_eq!(leases_held(env, "big", n), 0, "no lease left behind");
}

/// Counts the steps `s0`… of a workflow whose attempt still holds a lease.
fn leases_held(env: &TestEnv, workflow: &str, n: usize) -> usize {
    let journal =
        a2a_recover::journal::Journal::open(&env.journal(), std::time::Duration::from_secs(10))
            .unwrap();
    (0..n)
        .filter(|i| {
            let step = a2a_recover::journal::StepName::parse(&format!("{workflow}/s{i}")).unwrap();
            let record = journal.step(&step).unwrap().unwrap();
            record.attempts.iter().any(|a| a.lease.is_some())
        })
        .count()
}

/// The latest lease expiry journaled on `workflow`'s first `n` steps.
fn last_lease(env: &TestEnv, workflow: &str, n: usize) -> Option<chrono::DateTime<chrono::Utc>> {
    let journal =
        a2a_recover::journal::Journal::open(&env.journal(), std::time::Duration::from_secs(10))
            .unwrap();
    (0..n)
        .filter_map(|i| {
            let step = a2a_recover::journal::StepName::parse(&format!("{workflow}/s{i}")).unwrap();
            let record = journal.step(&step).unwrap().unwrap();
            last_lease_expiry(&record.attempts)
        })
        .max()
}

#[test]
fn a_batch_fetches_an_unregistered_agents_card_once_and_releases_every_lease() {
    let env = TestEnv::new();
    let a = agent(fast_with_skills(&["x"]));
    let plan = big_plan(&env, &a.url(), 40);
    let out = env.run(["--format", "json", "delegate", "--plan", &plan]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let stats = a.stats();
    assert_eq!(stats.card_fetches, 1, "one card fetch for 40 steps");
    assert_eq!(stats.messages.len(), 40);
    // Every step's records: its intent, then its send.
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for i in 0..40 {
        let step = format!("s{i}");
        let mine: Vec<&str> = lines
            .iter()
            .filter(|l| l["type"] == "action" && l["step"] == step.as_str())
            .map(|l| l["action"].as_str().unwrap())
            .collect();
        assert_eq!(mine, ["intent", "send"], "{step}");
    }
    for row in attempts(&env, Some("big")) {
        assert!(row["taskId"].is_string(), "{row:#?}");
    }
    assert_eq!(leases_held(&env, "big", 40), 0, "no lease left behind");
}

/// A lease that lapsed before its step's turn may have been broken, used and released by
/// another process meanwhile: the pass re-reads the attempt under the lease it takes again and
/// looks for it on its own before any send. Leases of 2 s (a testing aid; in use they are at
/// least two minutes) over a page of 60 possibly-sent steps sent one at a time through a slow
/// agent (about 3.3 s in all) lapse for every step after the first 2 s; a `delegate --plan`
/// re-run races the pass over the same steps from then on. Every step is sent exactly once, and no lease is left.
#[test]
fn leases_that_lapse_before_their_turn_are_reread_and_looked_for_never_sent_twice() {
    const TTL: &str = "A2A_RECOVER_TEST_SEND_LEASE_TTL";
    let env = TestEnv::new();
    let a = agent(fast_with_skills(&["x"]));
    let proxy = SlowProxy::start(a.url());
    proxy.set_delay(50);
    let n = 60;
    let plan = big_plan(&env, &proxy.url(), n);
    // Killed once the first answer arrived: every step's endpoint is journaled (possibly sent,
    // so a resend must look first), and the dead process's leases lapse after 2 s.
    let out = env
        .cmd()
        .env(TTL, "2s")
        .env("A2A_RECOVER_CRASH_AT", "after-send:big/s0")
        .args(["delegate", "--plan", &plan])
        .output()
        .unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&out.status),
        Some(6),
        "{out:?}"
    );
    let crashed = last_lease(&env, "big", n);
    if let Some(crashed) = crashed {
        wait_past("the crashed plan's leases to lapse", crashed);
    }
    let passing = spawn_with(
        &env,
        &[(TTL, "2s")],
        &["-vv", "reconcile", "--concurrency", "1"],
    );
    // The re-run starts once the leases the pass took have lapsed.
    let taken = wait_for("the pass to take its leases", GUARD, || {
        last_lease(&env, "big", n)
            .filter(|t| Some(*t) > crashed)
            .ok_or("only the crashed plan's")
    });
    wait_past("the pass's leases to lapse", taken);
    let rerun = spawn_with(&env, &[(TTL, "2s")], &["delegate", "--plan", &plan]);
    let pass = passing.wait_with_output().unwrap();
    let rerun = rerun.wait_with_output().unwrap();
    assert!(matches!(code(&pass), 0 | 3), "{}", stderr(&pass));
    assert!(matches!(code(&rerun), 0 | 3), "{}", stderr(&rerun));
    assert!(
        stderr(&pass).contains("the lease lapsed before this step's turn"),
        "no lease lapsed in the pass: {}{}",
        stdout(&pass),
        stderr(&pass)
    );
    proxy.set_delay(0);
    let out = reconcile(&env, &[]);
    assert!(matches!(code(&out), 0 | 3), "{}", stderr(&out));
    assert_each_step_sent_once(&env, &a, n);
}

#[test]
fn a_batch_racing_two_reconcile_passes_sends_every_step_exactly_once() {
    let env = TestEnv::new();
    let a = agent(fast_with_skills(&["x"]));
    // A slow agent widens the windows: a pass holds an intent's lease while it fetches the
    // card, and the batch claims its leases after its own card fetch.
    let proxy = SlowProxy::start(a.url());
    proxy.set_delay(15);
    let n = 200;
    let plan = big_plan(&env, &proxy.url(), n);
    // The passes may start before the plan made the journal: it must exist for them.
    assert_eq!(code(&env.run(["journal", "init"])), 0);
    let delegating = spawn(&env, &["delegate", "--plan", &plan]);
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                // Passes one after another for as long as the plan runs (one may find the
                // other's lock held: exit 3).
                while !done.load(std::sync::atomic::Ordering::SeqCst) {
                    let out = reconcile(&env, &["--concurrency", "16"]);
                    assert!(matches!(code(&out), 0 | 3), "{}", stderr(&out));
                }
            });
        }
        let out = delegating.wait_with_output().unwrap();
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        assert!(
            matches!(code(&out), 0 | 3),
            "{}{}",
            stdout(&out),
            stderr(&out)
        );
    });
    proxy.set_delay(0);
    let out = env.run(["delegate", "--plan", &plan]);
    assert!(matches!(code(&out), 0 | 3), "{}", stderr(&out));
    let out = reconcile(&env, &[]);
    assert!(matches!(code(&out), 0 | 3), "{}", stderr(&out));
    assert_each_step_sent_once(&env, &a, n);
}

#[test]
fn reconcile_finds_a_killed_batchs_lost_answers_with_grouped_commits_and_no_lease_left() {
    let env = TestEnv::new();
    let a = agent(fast_with_skills(&["x"]));
    let plan = big_plan(&env, &a.url(), 50);
    crashing(&env, "after-send:big/s30", &["delegate", "--plan", &plan]);
    let before: Vec<String> = attempts(&env, Some("big"))
        .iter()
        .filter(|r| r["state"] == "INTENT")
        .map(|r| r["step"].as_str().unwrap().to_owned())
        .collect();
    assert!(before.contains(&"s30".to_owned()), "{before:?}");
    // Bucket 1: every INTENT with a journaled endpoint is looked for under a lease its page
    // claimed; found ones are journaled in a group commit, absent ones sent once.
    let out = env.run(["--format", "json", "reconcile"]);
    assert!(
        matches!(code(&out), 0 | 3),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let found: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["type"] == "action" && l["action"] == "look")
        .collect();
    let s30 = found
        .iter()
        .find(|l| l["step"] == "s30")
        .expect("s30 was looked for");
    assert_eq!(s30["detail"]["found"], true, "{s30}");
    assert_ne!(s30["outcome"], "INTENT", "reported as journaled: {s30}");
    let stats = a.stats();
    for row in attempts(&env, Some("big")) {
        let id = row["messageId"].as_str().unwrap();
        assert_eq!(stats.tasks_per_message_id.get(id), Some(&1), "{row:#?}");
        assert!(row["taskId"].is_string(), "journaled: {row:#?}");
    }
    assert_eq!(stats.tasks.len(), 50);
    assert_eq!(leases_held(&env, "big", 50), 0, "no lease left behind");
}

#[test]
fn a_pass_cut_by_its_deadline_releases_the_leases_its_pages_claimed() {
    let env = TestEnv::new();
    let a = agent(fast_with_skills(&["x"]));
    let proxy = SlowProxy::start(a.url());
    let plan = big_plan(&env, &proxy.url(), 30);
    crashing(&env, "after-send:big/s0", &["delegate", "--plan", &plan]);
    // Slow looks, one at a time, and a deadline that leaves most of the page unvisited.
    proxy.set_delay(100);
    let out = env.run([
        "reconcile",
        "--concurrency",
        "1",
        "--deadline",
        "300ms",
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    // Every step is visited or counted unvisited, though the pass never counted them before.
    let summary = json_lines(&out).pop().unwrap();
    let (visited, unvisited) = (&summary["visited"], &summary["unvisited"]);
    assert!(unvisited.as_u64().unwrap() > 0, "{summary}");
    assert_eq!(
        visited.as_u64().unwrap() + unvisited.as_u64().unwrap(),
        30,
        "{summary}"
    );
    assert_eq!(
        leases_held(&env, "big", 30),
        0,
        "unvisited intents are released"
    );
    proxy.set_delay(0);
    let out = env.run(["reconcile"]);
    assert!(matches!(code(&out), 0 | 3), "{}", stderr(&out));
    let stats = a.stats();
    for row in attempts(&env, Some("big")) {
        let id = row["messageId"].as_str().unwrap();
        assert_eq!(stats.tasks_per_message_id.get(id), Some(&1), "{row:#?}");
    }
}

#[test]
fn a_reconcile_sending_never_sent_intents_fetches_the_agents_card_once() {
    let env = TestEnv::new();
    let a = agent(fast_with_skills(&["x"]));
    let plan = big_plan(&env, &a.url(), 12);
    // Killed once every intent is committed, before any card is fetched or anything sent.
    crashing(&env, "after-intent:big/s0", &["delegate", "--plan", &plan]);
    assert_eq!(a.stats().card_fetches, 0);
    assert_eq!(a.stats().messages.len(), 0);
    // The pass sends each step on its own (the one-step path), fetching the card once.
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
    let stats = a.stats();
    assert_eq!(stats.messages.len(), 12);
    assert_eq!(stats.card_fetches, 1, "one card fetch for 12 sends");
    assert!(stats.tasks_per_message_id.values().all(|&n| n == 1));
}

#[test]
fn reconcile_finds_a_killed_batch_by_time_with_one_listing_per_page() {
    let env = TestEnv::new();
    let a = agent(a2a_recover::scripted_agent::AgentConfig {
        refuse_context_id: true,
        ..fast_with_skills(&["x"])
    });
    let plan = big_plan(&env, &a.url(), 40);
    // The agent refuses our context ids (the batch learns it at the first answer and sends
    // without one); killed once the answer of s25 arrived, before it was journaled.
    crashing(&env, "after-send:big/s25", &["delegate", "--plan", &plan]);
    let sent_before = a.stats().tasks.len();
    assert!(
        sent_before < 40,
        "the crash stopped the batch: {sent_before}"
    );
    let lists_before = a.stats().requests.get("ListTasks").copied().unwrap_or(0);
    // One pass: every unjournaled answer is found by time and every unsent step sent once.
    let out = reconcile(&env, &[]);
    assert!(
        matches!(code(&out), 0 | 3),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let stats = a.stats();
    let rows = attempts(&env, Some("big"));
    for row in &rows {
        let id = row["messageId"].as_str().unwrap();
        assert_eq!(
            stats.tasks_per_message_id.get(id),
            Some(&1),
            "{}: not exactly one task",
            row["step"]
        );
        assert!(row["taskId"].is_string(), "{row:#?}");
    }
    assert_eq!(stats.tasks.len(), 40);
    // The 40 intents fit one page: one listing by time (a page of tasks), not one per intent.
    let lists = stats.requests.get("ListTasks").copied().unwrap_or(0) - lists_before;
    assert_eq!(lists, 1, "ListTasks calls: {lists}");
}

#[test]
fn looks_by_time_made_with_different_credentials_never_share_a_listing() {
    let env = TestEnv::new();
    let a = agent(a2a_recover::scripted_agent::AgentConfig {
        refuse_context_id: true,
        ..fast_with_skills(&["x"])
    });
    // Two credentials for one agent: an agent may list to each caller only its own tasks, so
    // what one credential lists proves nothing about a send made with the other.
    let mut text = String::from("workflow = \"creds\"\n");
    for i in 0..20 {
        let var = if i % 2 == 0 {
            "A2A_TEST_TOKEN_A"
        } else {
            "A2A_TEST_TOKEN_B"
        };
        let _ = write!(
            text,
            "\n[[step]]\nname = \"s{i}\"\nagent = \"{}\"\ntext = \"step {i}\"\ntoken_env = \"{var}\"\n",
            a.url()
        );
    }
    let plan = write(env.path(), "creds.toml", &text);
    let run = |args: &[&str], crash: Option<&str>| {
        let mut cmd = env.cmd();
        cmd.env("A2A_TEST_TOKEN_A", "token-a")
            .env("A2A_TEST_TOKEN_B", "token-b")
            .args(args);
        if let Some(point) = crash {
            cmd.env("A2A_RECOVER_CRASH_AT", point);
        }
        cmd.output().expect("run")
    };
    let out = run(
        &["delegate", "--plan", plan.to_str().unwrap()],
        Some("after-send:creds/s12"),
    );
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&out.status),
        Some(6),
        "{}",
        stderr(&out)
    );
    let lists_before = a.stats().requests.get("ListTasks").copied().unwrap_or(0);
    let out = run(&["reconcile"], None);
    assert!(
        matches!(code(&out), 0 | 3),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let stats = a.stats();
    for row in attempts(&env, Some("creds")) {
        let id = row["messageId"].as_str().unwrap();
        assert_eq!(stats.tasks_per_message_id.get(id), Some(&1), "{row:#?}");
    }
    // One listing per credential, not one for both.
    let lists = stats.requests.get("ListTasks").copied().unwrap_or(0) - lists_before;
    assert_eq!(lists, 2, "ListTasks calls: {lists}");
}
