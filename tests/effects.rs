//! Effect verification end to end: commands that cannot run or hang are `unknown` (never
//! `absent`), remote values reach commands as data only, and URL placeholders are encoded.

use crate::common::bookings::bookings;
use crate::common::commands::{attempts, latest};
use crate::common::{TestEnv, agent, code, fast, fast_with_skills, json_lines, stderr, stdout};

#[test]
fn verifications_that_cannot_run_or_hang_are_unknown_never_absent() {
    let env = TestEnv::new();
    let a = agent(fast_with_skills(&["x"]));
    for (step, verify) in [
        ("w/missing", "a2a-recover-no-such-command --check"),
        ("w/hangs", "sleep 30"),
    ] {
        let out = env.run([
            "delegate",
            step,
            "--agent",
            &a.url(),
            "--effect",
            "--compensate-cmd",
            "true",
            "--verify-cmd",
            verify,
            "book it",
        ]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    // reconcile verifies the claimed effects: unknown, a human must act.
    let out = env.run(["reconcile", "--command-timeout", "1s"]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    for step in ["w/missing", "w/hangs"] {
        assert_eq!(latest(&env, step)["effect"], "unknown", "{step}");
    }
    let out = env.run(["inspect", "--pending", "--format", "json"]);
    let pending = json_lines(&out);
    assert_eq!(
        pending.iter().filter(|r| r["type"] == "attempt").count(),
        2,
        "{pending:#?}"
    );

    // compensate: unknown before, so each compensation runs; unknown after, so exit 4.
    let out = env.run([
        "--format",
        "json",
        "compensate",
        "w",
        "--command-timeout",
        "1s",
    ]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    let records = json_lines(&out);
    let text = stdout(&out);
    assert!(!text.contains("\"absent\""), "{text}");
    assert!(!text.contains("\"compensated\""), "{text}");
    assert!(text.contains("exit 127"), "{text}");
    assert!(text.contains("timed out after 1s"), "{text}");
    let summary = records.last().unwrap();
    assert_eq!(summary["workflowState"], "COMPENSATING", "{summary}");
    assert_eq!(summary["effects"]["unknown"], 2, "{summary}");
    for step in ["w/missing", "w/hangs"] {
        let a = latest(&env, step);
        assert_eq!(a["effect"], "unknown", "{step}");
        assert_eq!(a["workflowState"], "COMPENSATING");
        // The compensation ran once.
        assert_eq!(attempts(&env, Some(&format!("{step}~compensate"))).len(), 1);
    }
    // Again: still unknown, still exit 4, and no compensation is run blind a second time.
    let out = env.run(["compensate", "w", "--command-timeout", "1s"]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    for step in ["w/missing", "w/hangs"] {
        assert_eq!(latest(&env, step)["effect"], "unknown");
        assert_eq!(attempts(&env, Some(&format!("{step}~compensate"))).len(), 1);
    }
    // An operator settles both by hand (`resolve --as done`): compensate skips them, and the
    // workflow is COMPENSATED.
    let journal =
        a2a_recover::journal::Journal::open(&env.journal(), std::time::Duration::from_secs(10))
            .unwrap();
    for step in ["w/missing", "w/hangs"] {
        journal
            .resolve_step(
                &a2a_recover::journal::StepName::parse(step).unwrap(),
                a2a_recover::journal::Resolution::Done,
                "cancelled by phone",
            )
            .unwrap();
    }
    drop(journal);
    let out = env.run(["compensate", "w", "--command-timeout", "1s"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("resolved by an operator"),
        "{}",
        stdout(&out)
    );
    for step in ["w/missing", "w/hangs"] {
        assert_eq!(latest(&env, step)["effect"], "unknown");
        assert_eq!(latest(&env, step)["workflowState"], "COMPENSATED");
        assert_eq!(attempts(&env, Some(&format!("{step}~compensate"))).len(), 1);
    }
    // No event ever said absent or compensated.
    let out = env.run(["inspect", "w/hangs", "--events", "--format", "json"]);
    let events = stdout(&out);
    assert!(events.contains("\"effect\""), "{events}");
    assert!(!events.contains("\"absent\""), "{events}");
    assert!(!events.contains("\"compensated\""), "{events}");
}

#[test]
fn an_artifact_full_of_shell_metacharacters_reaches_commands_as_data_only() {
    let env = TestEnv::new();
    let books = bookings();
    let a = agent(fast_with_skills(&["x"]));
    let work = env.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("x"), "keep me").unwrap();
    // The agent echoes the request into its artifact `echo`: the remote value is this.
    let evil = "$(touch pwned); rm -rf x `touch pwned2` \"'|&>out";
    let out = env
        .cmd()
        .current_dir(&work)
        .args([
            "delegate",
            "w/evil",
            "--agent",
            &a.url(),
            "--effect",
            "--compensate-cmd",
            "printf '%s' \"$A2A_ARTIFACT_ECHO\" > undone-with",
            "--verify-cmd",
            "printf '%s' \"$A2A_ARTIFACT_ECHO\" > seen; test ! -e undone-with",
            evil,
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let verify_url = format!("{}/bookings/{{artifact:echo}}", books.url());
    let out = env.run([
        "delegate",
        "w/url",
        "--agent",
        &a.url(),
        "--effect",
        "--compensate-cmd",
        "true",
        "--verify-url",
        &verify_url,
        evil,
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    books.book(evil);

    // reconcile runs from elsewhere; the command runs in the directory journaled at delegate.
    let out = env.run(["reconcile"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(latest(&env, "w/evil")["effect"], "verified");
    assert_eq!(latest(&env, "w/url")["effect"], "verified");
    assert_eq!(std::fs::read(work.join("seen")).unwrap(), evil.as_bytes());
    // The URL carried the value percent-encoded, as one path segment.
    let encoded = "/bookings/%24%28touch%20pwned%29%3B%20rm%20-rf%20x%20%60touch%20pwned2%60%20%22%27%7C%26%3Eout";
    assert!(
        books.reads().iter().any(|r| r == encoded),
        "{:?}",
        books.reads()
    );

    // Its owner cancelled the URL-checked booking meanwhile: found absent, nothing to undo.
    books.cancel(evil);
    let out = env.run(["compensate", "w"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(latest(&env, "w/evil")["effect"], "compensated");
    assert_eq!(latest(&env, "w/url")["effect"], "absent");
    assert_eq!(
        std::fs::read(work.join("undone-with")).unwrap(),
        evil.as_bytes()
    );
    // Nothing in the value ever ran.
    for dir in [&work, &env.path().to_path_buf()] {
        for f in ["pwned", "pwned2", "out"] {
            assert!(!dir.join(f).exists(), "{} exists", dir.join(f).display());
        }
    }
    assert_eq!(std::fs::read_to_string(work.join("x")).unwrap(), "keep me");
}

/// Writes a plan of one effect step whose echoed artifact is `size` bytes, compensated and
/// verified by commands that read the artifact from its file (a marker file is the effect).
///
/// Values over 64 KiB must come as the file only: the compensation checks that the variable
/// is unset for them.
fn big_artifact_plan(env: &TestEnv, dir: &std::path::Path, agent_url: &str, size: usize) {
    let var_check = if size > 64 * 1024 {
        r#" && [ -z "${A2A_ARTIFACT_ECHO+set}" ]"#
    } else {
        r#" && [ -n "$A2A_ARTIFACT_ECHO" ]"#
    };
    std::fs::create_dir_all(dir).unwrap();
    let text = format!("{}\n", "x".repeat(size));
    let plan = format!(
        r#"workflow = "big"

[[step]]
name = "booking"
agent = "{agent_url}"
text = "{}"
effect = true
compensate = {{ command = '[ "$(wc -c < "$A2A_ARTIFACT_ECHO_FILE")" -ge {size} ]{var_check} && touch gone' }}
verify = {{ command = '[ -s "$A2A_ARTIFACT_ECHO_FILE" ] && [ ! -e gone ] || exit 1' }}
"#,
        text.trim_end()
    );
    std::fs::write(dir.join("plan.toml"), plan).unwrap();
    let out = env.run([
        "delegate",
        "--plan",
        dir.join("plan.toml").to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

/// An artifact larger than an environment variable may be (Linux refuses one over 128 KiB)
/// reaches verify and compensate commands as a private file; the commands run.
#[test]
fn a_large_artifact_reaches_commands_as_a_file() {
    let env = TestEnv::new();
    let a = agent(fast());
    let dir = env.path().join("plan");
    big_artifact_plan(&env, &dir, &a.url(), 200 * 1024);
    let out = env.run(["reconcile"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(latest(&env, "big/booking")["effect"], "verified");
    let out = env.run(["compensate", "big"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(dir.join("gone").exists(), "the compensation did not run");
    assert_eq!(latest(&env, "big/booking")["effect"], "compensated");
    let comp = attempts(&env, Some("big/booking~compensate"));
    assert_eq!(comp.len(), 1);
    assert_eq!(comp[0]["state"], "REPLIED", "{comp:#?}");
}

/// A compensation command that cannot be started is journaled as not run (its attempt stays
/// INTENT), the effect needs a human, and the next run starts it once it can.
#[test]
fn a_compensation_that_could_not_start_is_journaled_as_not_run() {
    let env = TestEnv::new();
    let a = agent(fast());
    let dir = env.path().join("plan");
    big_artifact_plan(&env, &dir, &a.url(), 10);
    let out = env.run(["reconcile"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    // The plan's directory (where its commands run) is gone: `sh` cannot be started there.
    std::fs::remove_dir_all(&dir).unwrap();
    let out = env.run(["--format", "json", "compensate", "big"]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let records = json_lines(&out);
    assert!(
        records
            .iter()
            .any(|r| r["action"] == "compensate" && r["outcome"] == "not-run"),
        "{records:#?}"
    );
    let comp = attempts(&env, Some("big/booking~compensate"));
    assert_eq!(comp.len(), 1);
    assert_eq!(comp[0]["state"], "INTENT", "{comp:#?}");
    assert_eq!(latest(&env, "big/booking")["effect"], "compensation-failed");
    // Restored: the same compensation attempt runs now, and the effect is gone.
    std::fs::create_dir_all(&dir).unwrap();
    let out = env.run(["compensate", "big"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let comp = attempts(&env, Some("big/booking~compensate"));
    assert_eq!(comp.len(), 1, "{comp:#?}");
    assert_eq!(comp[0]["state"], "REPLIED", "{comp:#?}");
    assert_eq!(latest(&env, "big/booking")["effect"], "compensated");
}
