//! What an artifact holds, shown: `inspect WORKFLOW/STEP` prints each artifact's content
//! (bounded, inert, its lines under the remote-line prefix) and its JSON adds an `artifact`
//! record per artifact; `inspect STEP --artifact NAME` prints one value, raw when piped.

use serde_json::Value;

use crate::common::hostile::{Hostile, Script};
use crate::common::pty::run_on_terminal;
use crate::common::{TestEnv, code, explain, json_lines, stderr, stdout};

/// A completed step whose agent returned `artifacts` as (name, text).
fn completed(env: &TestEnv, artifacts: &[(&str, &str)]) -> Hostile {
    let h = Hostile::start();
    h.set_script(Script {
        state: "TASK_STATE_COMPLETED".to_owned(),
        artifact_texts: artifacts
            .iter()
            .map(|(n, t)| ((*n).to_owned(), (*t).to_owned()))
            .collect(),
        ..Script::default()
    });
    let out = env.run(["delegate", "trip/hotel", "--agent", h.url(), "a room"]);
    assert_eq!(code(&out), 0, "{}", explain(&out));
    h
}

const RECEIPT: &str = "Booked room 12\nconfirmation \u{1b}[31mX-42\u{1b}[0m";

#[test]
fn the_step_view_and_its_json_show_what_artifacts_hold() {
    let env = TestEnv::new();
    let _agent = completed(&env, &[("receipt", RECEIPT)]);
    let view = env.run(["inspect", "trip/hotel"]);
    assert_eq!(code(&view), 0, "{}", explain(&view));
    let text = stdout(&view);
    assert!(text.contains("    receipt (id a-"), "{text}");
    assert!(
        text.contains("      Booked room 12\n      │ confirmation X-42"),
        "{text}"
    );
    assert!(!text.contains('\u{1b}'), "{text:?}");

    let json = json_lines(&env.run(["inspect", "trip/hotel", "-o", "json"]));
    let records: Vec<&Value> = json.iter().filter(|r| r["type"] == "artifact").collect();
    assert_eq!(records.len(), 1, "{json:?}");
    assert_eq!(records[0]["name"], "receipt");
    assert_eq!(records[0]["step"], "hotel");
    assert_eq!(records[0]["parts"][0]["text"], RECEIPT);
}

#[test]
fn artifact_name_prints_one_value_raw_when_piped_and_inert_on_a_terminal() {
    let env = TestEnv::new();
    let _agent = completed(&env, &[("receipt", RECEIPT), ("note", "n")]);
    let piped = env.run(["inspect", "trip/hotel", "--artifact", "receipt"]);
    assert_eq!(code(&piped), 0, "{}", explain(&piped));
    assert_eq!(stdout(&piped), RECEIPT);

    let mut cmd = env.std_cmd();
    cmd.args(["inspect", "trip/hotel", "--artifact", "receipt"]);
    let tty = run_on_terminal(cmd, 80);
    assert_eq!(stdout(&tty), "Booked room 12\nconfirmation X-42\n");

    let missing = env.run(["inspect", "trip/hotel", "--artifact", "invoice"]);
    assert_eq!(code(&missing), 2, "{}", explain(&missing));
    assert!(
        stderr(&missing).contains("receipt, note"),
        "{}",
        stderr(&missing)
    );
    let no_step = env.run(["inspect", "trip", "--artifact", "receipt"]);
    assert_eq!(code(&no_step), 2, "{}", explain(&no_step));
}

#[test]
fn a_name_two_artifacts_share_exits_2_listing_their_ids() {
    let env = TestEnv::new();
    let _agent = completed(&env, &[("receipt", "one"), ("receipt", "two")]);
    let out = env.run(["inspect", "trip/hotel", "--artifact", "receipt"]);
    assert_eq!(code(&out), 2, "{}", explain(&out));
    let err = stderr(&out);
    assert!(err.contains("a-0") && err.contains("a-1"), "{err}");
    assert!(stdout(&out).is_empty());
}
