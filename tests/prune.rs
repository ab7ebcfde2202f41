//! `prune` end to end: the binary on a real journal whose events a real scripted agent caused
//! (status refreshes of running tasks, a question, a completed task), aged by rewriting event
//! times in the file. It deletes the old refreshes and nothing else, a pass and `compensate`
//! act the same after it, `--dry-run` changes no byte, and usage and lock errors exit as
//! documented.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use a2a_recover::scripted_agent::AgentConfig;
use serde_json::Value;

use insta::assert_snapshot;

use crate::common::commands::{delegate, reconcile, the_attempt};
use crate::common::snapshot::{compile, snapshot_of, snapshot_with};
use crate::common::{Background, TestEnv, agent, code, json_lines, stderr, stdout, summary_record};

/// Forty days, in milliseconds: how far the first rounds of events are moved into the past.
const AGED_MS: i64 = 40 * 86_400_000;

/// The journal file, its WAL and the pass lock file, for byte comparisons (a missing file reads
/// as empty: a read-only open may leave an empty WAL behind, as `inspect` does).
fn snapshot(env: &TestEnv) -> [Vec<u8>; 3] {
    let j = env.journal();
    [
        "journal.sqlite3",
        "journal.sqlite3-wal",
        "journal.sqlite3.lock",
    ]
    .map(|name| std::fs::read(j.with_file_name(name)).unwrap_or_default())
}

/// Every event of the journal by id: (attempt's step, kind, at).
fn events(path: &Path) -> BTreeMap<i64, (String, String, i64)> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT e.id, COALESCE(s.name, ''), e.kind, e.at FROM events e
             LEFT JOIN steps s ON s.id = e.step_id ORDER BY e.id",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?))))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// `inspect STEP --events --format json`: the attempt rows and the events, as printed.
fn inspect_events(env: &TestEnv, step: &str) -> (Vec<Value>, Vec<Value>) {
    let out = env.run(["inspect", step, "--events", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let lines = json_lines(&out);
    let of = |t: &str| {
        lines
            .iter()
            .filter(|v| v["type"] == t)
            .cloned()
            .collect::<Vec<_>>()
    };
    (of("attempt"), of("event"))
}

/// A journal with history: `w/slow` and `w/quiet` run (their agent reports progress between
/// passes), `w/ask` waits for an answer, `w/echo` completed. Three rounds of progress on both
/// running tasks, aged forty days; then two recent rounds on `w/slow` only, so that the newest
/// event of `w/quiet` is an old refresh.
fn journal_with_history(env: &TestEnv) -> Background<a2a_recover::scripted_agent::ScriptedAgent> {
    let a = agent(AgentConfig {
        // Nothing moves by itself: only `refresh_task` makes progress.
        tick: Duration::from_secs(3_600),
        ..AgentConfig::default()
    });
    for (step, text) in [
        ("w/slow", "work:5"),
        ("w/quiet", "work:5"),
        ("w/ask", "ask"),
        ("w/echo", "book"),
    ] {
        let out = delegate(env, step, &a.url(), text, &[]);
        assert_eq!(code(&out), 0, "{step}: {}", stderr(&out));
    }
    let task = |step: &str| {
        the_attempt(env, step)["taskId"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let (slow, quiet) = (task("w/slow"), task("w/quiet"));
    let round = |ids: &[&str], i: usize| {
        for id in ids {
            assert!(a.get().refresh_task(id, &format!("progress {i}")));
        }
        assert_eq!(code(&reconcile(env, &[])), 4, "a question is pending");
    };
    for i in 0..3 {
        round(&[&slow, &quiet], i);
    }
    let conn = rusqlite::Connection::open(env.journal()).unwrap();
    conn.execute("UPDATE events SET at = at - ?1", [AGED_MS])
        .unwrap();
    drop(conn);
    for i in 3..5 {
        round(&[&slow], i);
    }
    a
}

/// The ids `prune --older-than 30d` must delete, derived from the history above: the aged
/// `observed` events, except the newest event of each attempt.
fn expected_deletions(all: &BTreeMap<i64, (String, String, i64)>, now_ms: i64) -> BTreeSet<i64> {
    let cutoff = now_ms - 30 * 86_400_000;
    let newest: BTreeMap<&str, i64> = all
        .iter()
        .map(|(id, (step, _, _))| (step.as_str(), *id))
        .collect();
    all.iter()
        .filter(|(id, (step, kind, at))| {
            kind == "observed" && *at < cutoff && newest[step.as_str()] != **id
        })
        .map(|(id, _)| *id)
        .collect()
}

fn now_ms() -> i64 {
    a2a_recover::clock::system_now().timestamp_millis()
}

#[test]
fn prune_deletes_old_refreshes_and_nothing_else() {
    let env = TestEnv::new();
    let _agent = journal_with_history(&env);
    let before = events(&env.journal());
    let doomed = expected_deletions(&before, now_ms());
    // The first pass read the running tasks (SENT → WORKING: a state change, kept); the next
    // two journaled refreshes: two aged ones of `w/slow`, one of `w/quiet` (its second is its
    // newest event, kept).
    let by_step = |step: &str| doomed.iter().filter(|id| before[id].0 == step).count();
    assert_eq!((by_step("slow"), by_step("quiet"), doomed.len()), (2, 1, 3));
    let shown_before: Vec<_> = ["w/slow", "w/quiet", "w/ask", "w/echo"]
        .iter()
        .map(|s| inspect_events(&env, s))
        .collect();

    let out = env.run(["prune", "--older-than", "30d", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let s = summary_record(&out);
    assert_eq!(s["type"], "summary");
    assert_eq!(s["command"], "prune");
    assert_eq!(s["olderThan"], "30d");
    assert_eq!(s["deleted"], 3);
    assert_eq!(s["outcomes"]["deleted"], 3);
    assert_eq!(s["dryRun"], false);
    assert_eq!(s["exitCode"], 0);
    assert!(
        s["freedBytes"].is_u64() && s["fileBytes"].as_u64().unwrap() > 0,
        "{s}"
    );

    let after = events(&env.journal());
    let mut kept = before.clone();
    kept.retain(|id, _| !doomed.contains(id));
    assert_eq!(after, kept, "exactly the old refreshes went");
    // `inspect` shows the same rows, and the same history without those refreshes.
    for (i, step) in ["w/slow", "w/quiet", "w/ask", "w/echo"].iter().enumerate() {
        let (rows, shown) = inspect_events(&env, step);
        assert_eq!(rows, shown_before[i].0, "{step}");
        let expected: Vec<Value> = shown_before[i]
            .1
            .iter()
            .filter(|e| !doomed.contains(&e["id"].as_i64().unwrap_or_default()))
            .cloned()
            .collect();
        if step.ends_with("slow") || step.ends_with("quiet") {
            assert!(shown.len() < shown_before[i].1.len(), "{step}");
        }
        assert_eq!(shown, expected, "{step}");
    }

    // A second prune finds nothing more.
    let again = env.run(["prune", "--older-than", "30d", "--format", "json"]);
    assert_eq!(code(&again), 0, "{}", stderr(&again));
    assert_eq!(summary_record(&again)["deleted"], 0);
}

#[test]
fn a_pass_and_compensate_act_the_same_after_a_prune() {
    let env = TestEnv::new();
    let agent = journal_with_history(&env);
    // A copy of the journal that is not pruned: the control.
    let control = TestEnv::new();
    std::fs::create_dir_all(control.journal().parent().unwrap()).unwrap();
    // The file and its WAL: a closing process leaves a small WAL as it is.
    std::fs::copy(env.journal(), control.journal()).unwrap();
    let wal = |p: std::path::PathBuf| p.with_file_name("journal.sqlite3-wal");
    if wal(env.journal()).exists() {
        std::fs::copy(wal(env.journal()), wal(control.journal())).unwrap();
    }
    let out = env.run(["prune", "--older-than", "30d", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(summary_record(&out)["deleted"], 3);

    // The same agent, the same tasks: what each would do must be the same.
    let plan = |e: &TestEnv, args: &[&str]| {
        let out = e.run(args);
        let lines: Vec<Value> = json_lines(&out)
            .into_iter()
            .filter(|v| v["type"] == "action" || v["type"] == "summary")
            .map(|mut v| {
                // Each environment has its own journal path.
                if let Some(fields) = v.as_object_mut() {
                    fields.remove("journal");
                }
                v
            })
            .collect();
        (code(&out), lines)
    };
    for args in [
        &[
            "reconcile",
            "--dry-run",
            "--concurrency",
            "1",
            "--format",
            "json",
        ][..],
        &["compensate", "w", "--dry-run", "--format", "json"][..],
    ] {
        let pruned = plan(&env, args);
        assert_eq!(pruned, plan(&control, args), "{args:?}");
        assert!(!pruned.1.is_empty(), "{args:?}");
    }

    // And they run: a progress report is journaled, the question stays pending, compensate
    // cancels what runs.
    let slow = the_attempt(&env, "w/slow")["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(agent.get().refresh_task(&slow, "progress 9"));
    let pass = reconcile(&env, &["--format", "json"]);
    assert_eq!(code(&pass), 4, "{}", stderr(&pass));
    assert_eq!(
        summary_record(&pass)["outcomes"]["INPUT_REQUIRED"],
        1,
        "{}",
        stdout(&pass)
    );
    let comp = env.run(["compensate", "w", "--format", "json"]);
    assert_eq!(code(&comp), 0, "{}", stderr(&comp));
    assert_eq!(summary_record(&comp)["workflowState"], "COMPENSATED");
}

#[test]
fn a_dry_run_counts_and_changes_no_byte() {
    let env = TestEnv::new();
    let _agent = journal_with_history(&env);
    let before = snapshot(&env);
    let out = env.run([
        "prune",
        "--older-than",
        "30d",
        "--dry-run",
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let s = summary_record(&out);
    assert_eq!(s["deleted"], 3);
    assert_eq!(s["outcomes"]["would-delete"], 3);
    assert_eq!(s["dryRun"], true);
    assert_eq!(s["freedBytes"], Value::Null);
    assert!(snapshot(&env) == before, "the dry run changed the journal");
    // A human reads the same count.
    let human = env.run(["prune", "--older-than", "30d", "--dry-run"]);
    assert_snapshot!(snapshot_of(&env, &human));
    // A younger age than any event prunes nothing.
    let none = env.run(["prune", "--older-than", "50d", "--format", "json"]);
    assert_eq!(summary_record(&none)["deleted"], 0);
    // And what the real prune says (sizes depend on SQLite's pages).
    let sizes = compile(&[(r"\b\d+(\.\d+)? (B|kB|MB)\b", "[SIZE]")]);
    let human = env.run(["prune", "--older-than", "30d"]);
    assert_snapshot!("prune", snapshot_with(&env, &human, &sizes));
}

#[test]
fn a_bad_age_is_a_usage_error_with_a_hint() {
    let env = TestEnv::new();
    for (args, says) in [
        (
            vec!["prune", "--older-than", "30"],
            "has no unit; write e.g. `30d`",
        ),
        (
            vec!["prune", "--older-than", "1y"],
            "use ms, s, m, h, d or w",
        ),
        (vec!["prune"], "--older-than <DURATION>"),
    ] {
        let out = env.run(&args);
        assert_eq!(code(&out), 2, "{args:?}");
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
    assert!(!env.journal().exists(), "nothing was created");
}

#[test]
fn no_journal_is_an_error_and_an_empty_one_is_nothing_to_prune() {
    let env = TestEnv::new();
    let out = env.run(["prune", "--older-than", "1d", "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("journal init"), "{}", stderr(&out));
    assert!(!env.journal().exists());
    let out = env.run(["journal", "init"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = env.run(["prune", "--older-than", "1d", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let s = summary_record(&out);
    assert_eq!(
        (s["deleted"].as_u64(), s["exitCode"].as_u64()),
        (Some(0), Some(0))
    );
}

#[test]
fn a_pass_holding_the_lock_makes_prune_exit_3_untouched() {
    let env = TestEnv::new();
    let _agent = journal_with_history(&env);
    let _held = a2a_recover::recovery::lock::acquire(&env.journal(), 4242, "then").unwrap();
    let before = snapshot(&env);
    let out = env.run(["prune", "--older-than", "30d"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("holds the journal lock"),
        "{}",
        stderr(&out)
    );
    assert!(snapshot(&env) == before, "the journal changed");
}
