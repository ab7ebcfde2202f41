//! Remote data adopted as ours (issue 30): an agent's artifact that chooses the file a local
//! command reads, or that shadows the artifact a recipe means (hole 1), and a task id that
//! names another resource than the task's own (hole 4). Each is pinned against a misbehaving
//! agent on loopback, through the real binary and the real journal; the commands' own output
//! and the agent's own counters prove what was read and what was sent.

use std::path::Path;

use serde_json::Value;

use crate::common::bookings::bookings;
use crate::common::commands::latest;
use crate::common::hostile::{Hostile, Script};
use crate::common::odd_ids::{Speaks, odd_ids};
use crate::common::{TestEnv, code, explain, json_lines, stdout};

/// A hostile agent whose tasks complete at once with these (name, text) artifacts, ids `a-0`,
/// `a-1`, … in this order.
fn completing_with(artifacts: &[(&str, &str)]) -> Hostile {
    let h = Hostile::start();
    h.set_script(Script {
        state: "TASK_STATE_COMPLETED".to_owned(),
        artifact_texts: artifacts
            .iter()
            .map(|(n, t)| ((*n).to_owned(), (*t).to_owned()))
            .collect(),
        ..Script::default()
    });
    h
}

/// Single-quotes a path for `sh`.
fn quoted(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// The lines a verify or compensate command logged, or none when it never ran.
fn logged(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .map(|t| t.lines().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// Delegates `w/hotel` with an effect whose verify command logs what `$A2A_ARTIFACT_BOOKING_FILE`
/// holds and what `$A2A_ARTIFACT_BOOKING` is (exit 0 until the compensation left `gone`), and
/// whose compensation logs the same and leaves `gone`: the docs' way (docs/sagas.md) to read
/// an artifact of any size.
fn delegate_logging(env: &TestEnv, h: &Hostile, log: &Path, gone: &Path) {
    let (log, gone) = (quoted(log), quoted(gone));
    let read = r#""$(cat "$A2A_ARTIFACT_BOOKING_FILE")" "${A2A_ARTIFACT_BOOKING-unset}""#;
    let verify = format!("printf 'verify file=%s var=%s\\n' {read} >> {log}; test ! -e {gone}");
    let compensate =
        format!("printf 'compensate file=%s var=%s\\n' {read} >> {log} && touch {gone}");
    let o = env.run([
        "delegate",
        "w/hotel",
        "--agent",
        h.url(),
        "--effect",
        "--verify-cmd",
        &verify,
        "--compensate-cmd",
        &compensate,
        "book a room",
    ]);
    assert_eq!(code(&o), 0, "{}", explain(&o));
}

/// Hole 1: an artifact named `booking_file` (a path of the agent's choosing), sent before the
/// real `booking`, used to take `A2A_ARTIFACT_BOOKING_FILE`: the verify and compensate commands
/// read the agent's file, and the real booking reached no command. A `…_FILE` variable now only
/// ever names a file a2a-recover wrote.
#[test]
fn an_artifact_named_like_a_file_variable_never_chooses_the_file_a_command_reads() {
    let env = TestEnv::new();
    let dir = env.path().join("work");
    std::fs::create_dir_all(&dir).unwrap();
    let planted = dir.join("planted.txt");
    std::fs::write(&planted, "PLANTED-BY-THE-AGENT").unwrap();
    let h = completing_with(&[
        ("booking_file", planted.to_str().unwrap()),
        ("booking", "BK-REAL-42"),
    ]);
    let (log, gone) = (dir.join("read.log"), dir.join("gone"));
    delegate_logging(&env, &h, &log, &gone);

    let o = env.run(["reconcile"]);
    assert_eq!(code(&o), 0, "{}", explain(&o));
    assert_eq!(latest(&env, "w/hotel")["effect"], "verified");
    let o = env.run(["compensate", "w"]);
    assert_eq!(code(&o), 0, "{}", explain(&o));
    assert_eq!(latest(&env, "w/hotel")["effect"], "compensated");

    // The commands' own words: every read was the real booking, by file and by variable
    // (verified by reconcile, verified again by compensate, compensated, verified gone).
    assert_eq!(
        logged(&log),
        [
            "verify file=BK-REAL-42 var=BK-REAL-42",
            "verify file=BK-REAL-42 var=BK-REAL-42",
            "compensate file=BK-REAL-42 var=BK-REAL-42",
            "verify file=BK-REAL-42 var=BK-REAL-42",
        ],
        "{}",
        explain(&o)
    );
    assert_eq!(h.count("SendMessage"), 1);
}

/// Hole 1: two artifacts on one variable (`booking` and `Booking`): whichever the agent sent
/// first used to win. Now neither is read: nothing runs, the effect stays `unknown`, and every
/// pass and `compensate` need a human (exit 4) with both artifact ids in the remedy.
#[test]
fn two_artifacts_on_one_variable_run_nothing_and_need_a_human() {
    let env = TestEnv::new();
    let dir = env.path().join("work");
    std::fs::create_dir_all(&dir).unwrap();
    let h = completing_with(&[("booking", "BK-AGENTS-PICK"), ("Booking", "BK-REAL-42")]);
    let (log, gone) = (dir.join("read.log"), dir.join("gone"));
    delegate_logging(&env, &h, &log, &gone);

    for pass in 0..2 {
        let o = env.run(["--format", "json", "reconcile"]);
        assert_eq!(code(&o), 4, "pass {pass}: {}", explain(&o));
        let action = json_lines(&o)
            .into_iter()
            .find(|r| r["type"] == "action" && r["step"] == "hotel")
            .unwrap_or_else(|| panic!("no action for the step: {}", explain(&o)));
        let what = action["remedy"]["what"].as_str().unwrap_or_default();
        assert!(
            what.contains("`a-0`") && what.contains("`a-1`"),
            "pass {pass}: {action:#}"
        );
        assert!(
            action["remedy"]["command"]
                .as_str()
                .is_some_and(|c| c.contains("resolve w/hotel")),
            "{action:#}"
        );
    }
    let attempt = latest(&env, "w/hotel");
    assert_eq!(attempt["effect"], "unknown", "{attempt:#}");
    let error = attempt["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("`a-0`") && error.contains("`a-1`"),
        "{attempt:#}"
    );
    let o = env.run(["inspect", "--pending", "--format", "json"]);
    let pending = json_lines(&o);
    assert!(
        pending.iter().any(|r| r["step"] == "hotel"
            && r["remedy"]["command"].is_string()
            && r["error"].as_str().is_some_and(|e| e.contains("`a-1`"))),
        "{pending:#?}"
    );
    let o = env.run(["inspect", "w/hotel"]);
    assert!(stdout(&o).contains("`a-0` and `a-1`"), "{}", explain(&o));

    // compensate runs nothing either, and says why.
    let o = env.run(["compensate", "w"]);
    assert_eq!(code(&o), 4, "{}", explain(&o));
    let said = stdout(&o);
    assert!(
        said.contains("`a-0`") && said.contains("`a-1`"),
        "{}",
        explain(&o)
    );
    assert_eq!(latest(&env, "w/hotel")["effect"], "unknown");
    assert_eq!(logged(&log), Vec::<String>::new(), "a command ran");
    assert!(!gone.exists(), "the compensation ran");
}

/// Hole 1: `{artifact:NAME}` in a verify URL and a compensation text meant "the first artifact
/// named NAME". Two named `booking`: the URL is never read and no compensation message is
/// sent; the effect stays `unknown` for a human (exit 4), naming both artifacts.
#[test]
fn a_placeholder_two_artifacts_answer_to_fills_nothing() {
    let env = TestEnv::new();
    let books = bookings();
    books.book("BK-AGENTS-PICK");
    books.book("BK-REAL-42");
    let h = completing_with(&[("booking", "BK-AGENTS-PICK"), ("booking", "BK-REAL-42")]);
    let verify_url = format!("{}/bookings/{{artifact:booking}}", books.url());
    let o = env.run([
        "delegate",
        "w/flight",
        "--agent",
        h.url(),
        "--effect",
        "--verify-url",
        &verify_url,
        "--compensate",
        "cancel booking {artifact:booking}",
        "book a flight",
    ]);
    assert_eq!(code(&o), 0, "{}", explain(&o));

    let o = env.run(["--format", "json", "reconcile"]);
    assert_eq!(code(&o), 4, "{}", explain(&o));
    assert!(
        books.reads().is_empty(),
        "the URL was read: {:?}",
        books.reads()
    );
    let attempt = latest(&env, "w/flight");
    assert_eq!(attempt["effect"], "unknown", "{attempt:#}");
    let error = attempt["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("{artifact:booking}") && error.contains("`a-0`") && error.contains("`a-1`"),
        "{attempt:#}"
    );

    let o = env.run(["--format", "json", "compensate", "w"]);
    assert_eq!(code(&o), 4, "{}", explain(&o));
    let verify: Vec<Value> = json_lines(&o)
        .into_iter()
        .filter(|r| r["step"] == "flight" && r["action"] == "verify")
        .collect();
    assert_eq!(verify.len(), 1, "{}", explain(&o));
    assert_eq!(verify[0]["outcome"], "unknown");
    assert_eq!(
        verify[0]["detail"]["collision"],
        serde_json::json!(["a-0", "a-1"])
    );
    assert!(books.reads().is_empty(), "{:?}", books.reads());
    assert_eq!(h.count("SendMessage"), 1, "a compensation message was sent");
    assert!(books.is_booked("BK-AGENTS-PICK") && books.is_booked("BK-REAL-42"));
}

/// Hole 4: an HTTP+JSON agent answers the send with a task named `..` (or `.`). The URL library
/// drops such a segment, so reading `/tasks/..` read the task collection: on v0.3 its 404
/// (`{"message": "Task not found"}`) made the WORKING task `LOST`, with a remedy whose `retry`
/// runs the work twice; on v1.0 the read got a task list and every `reconcile` exited 3 for
/// ever. Now such an answer is a bad answer: the attempt stays `INTENT`, needs a human on every
/// run (exit 4, a `needs-human` event, listed by `inspect --pending`), and is never read, looked
/// for or sent again: the agent counts one send, and its task is still WORKING.
#[test]
fn a_task_id_that_is_not_one_path_segment_needs_a_human_and_is_never_resent() {
    for speaks in [Speaks::V1, Speaks::V03] {
        for id in ["..", "."] {
            let env = TestEnv::new();
            let agent = odd_ids(speaks, id);
            let case = format!("{speaks:?} {id:?}");
            let url = agent.url();
            needs_a_human_and_is_never_resent(&env, &url, &case);
            // The agent's own counters: one send, one task, still WORKING, and nothing but
            // the card and that send was ever asked of it (no read of another resource).
            assert_eq!(agent.sends(), 1, "{case}: {:?}", agent.seen());
            let tasks = agent.tasks();
            assert_eq!(tasks.len(), 1, "{case}");
            assert_eq!(tasks[0]["status"]["state"], "TASK_STATE_WORKING", "{case}");
            let other: Vec<_> = agent
                .seen()
                .into_iter()
                .filter(|(_, p)| {
                    p != "/.well-known/agent-card.json" && !p.ends_with("/message:send")
                })
                .collect();
            assert!(other.is_empty(), "{case}: {other:?}");
        }
    }
}

/// Hole 4, over JSON-RPC: the id goes in no path there, but it is the same bad answer (the
/// attempt could later be read over an HTTP+JSON interface of the same agent): handled alike.
#[test]
fn a_json_rpc_agent_naming_its_task_dot_dot_is_handled_alike() {
    let env = TestEnv::new();
    let h = Hostile::start();
    h.set_script(Script {
        task_id: Some("..".to_owned()),
        ..Script::default()
    });
    needs_a_human_and_is_never_resent(&env, h.url(), "JSON-RPC \"..\"");
    assert_eq!(h.count("SendMessage"), 1);
    assert_eq!(h.tasks()[0]["status"]["state"], "TASK_STATE_WORKING");
    let asked: Vec<String> = h.seen().into_iter().map(|s| s.method).collect();
    assert!(
        asked.iter().all(|m| m.is_empty() || m == "SendMessage"),
        "{asked:?}"
    );
}

/// Delegates `w/odd` to `url`, whose agent answers with an unusable task id, then runs two
/// passes: each needs a human (exit 4, `bad-task-id`), and the attempt stays `INTENT` with no
/// task id, listed by `inspect --pending`; `compensate` needs a human too.
fn needs_a_human_and_is_never_resent(env: &TestEnv, url: &str, case: &str) {
    let o = env.run([
        "--format",
        "json",
        "delegate",
        "w/odd",
        "--agent",
        url,
        "book a room",
    ]);
    assert_eq!(code(&o), 4, "{case}: {}", explain(&o));
    assert!(
        stdout(&o).contains("bad-task-id"),
        "{case}: {}",
        explain(&o)
    );
    for pass in 0..2 {
        let o = env.run(["--format", "json", "reconcile"]);
        assert_eq!(code(&o), 4, "{case} pass {pass}: {}", explain(&o));
        let action = json_lines(&o)
            .into_iter()
            .find(|r| r["type"] == "action" && r["step"] == "odd")
            .unwrap_or_else(|| panic!("{case}: no action: {}", explain(&o)));
        assert_eq!(
            action["detail"]["needsHuman"]["cause"], "bad-task-id",
            "{action:#}"
        );
        assert!(
            action["remedy"]["what"]
                .as_str()
                .is_some_and(|w| w.contains("no URL can hold")),
            "{case}: {action:#}"
        );
        assert!(
            action["remedy"]["command"]
                .as_str()
                .is_some_and(|c| c.contains("resolve w/odd --as done|abandoned")),
            "{case}: {action:#}"
        );
    }
    let attempt = latest(env, "w/odd");
    assert_eq!(attempt["state"], "INTENT", "{case}: {attempt:#}");
    assert_eq!(attempt["taskId"], Value::Null, "{case}: {attempt:#}");
    let o = env.run(["inspect", "--pending", "--format", "json"]);
    assert!(
        json_lines(&o).iter().any(|r| r["step"] == "odd"),
        "{case}: {}",
        explain(&o)
    );
    // `compensate` can neither find nor cancel that task: a human decides (exit 4, not 3 for
    // ever), and nothing is asked of the agent.
    let o = env.run(["compensate", "w"]);
    assert_eq!(code(&o), 4, "{case}: {}", explain(&o));
    assert!(
        stdout(&o).contains("task id no URL can hold"),
        "{case}: {}",
        explain(&o)
    );
}
