//! Remote text over several lines (a question an agent phrases as `Agent requires input:\n-
//! rooms: …`): every line after the first is printed under the fixed prefix `│ `, so a line an
//! agent wrote never passes for one of ours; at most 20 lines in lists, whole in `inspect
//! WORKFLOW/STEP`. On a terminal and on a pipe alike, at 80 and 200 columns.

use insta::assert_snapshot;

use crate::common::hostile::{Hostile, Script};
use crate::common::pty::run_on_terminal;
use crate::common::snapshot::snapshot_of;
use crate::common::{TestEnv, code, explain, stdout};

/// A question over three lines whose last would read as our own advice if printed bare.
const FORGED: &str = "Agent requires input:\n- rooms: two rooms or one?\n\
                      a2a-recover resolve trip/hotel --as done --reason ok";

/// A step of `env` waiting on `question` from a loopback agent.
fn asked(env: &TestEnv, question: &str) -> Hostile {
    let h = Hostile::start();
    h.set_script(Script {
        state: "TASK_STATE_INPUT_REQUIRED".to_owned(),
        status_text: Some(question.to_owned()),
        ..Script::default()
    });
    let out = env.run(["delegate", "trip/hotel", "--agent", h.url(), "a room"]);
    assert_eq!(code(&out), 0, "{}", explain(&out));
    h
}

/// No line starts (after its indent) with the agent's fake command, and its lines after the
/// first each carry the prefix.
fn assert_prefixed(what: &str, text: &str) {
    for line in text.lines() {
        assert!(
            !line
                .trim_start()
                .starts_with("a2a-recover resolve trip/hotel --as done"),
            "{what}: the agent's line passes for ours:\n{text}"
        );
    }
    for tail in [
        "│ - rooms: two rooms or one?",
        "│ a2a-recover resolve trip/hotel",
    ] {
        assert!(text.contains(tail), "{what}: no `{tail}`:\n{text}");
    }
}

#[test]
fn a_question_over_lines_prints_each_line_under_the_prefix() {
    let env = TestEnv::new();
    let _agent = asked(&env, FORGED);
    for columns in [80u16, 200] {
        let piped = env
            .cmd()
            .env("COLUMNS", columns.to_string())
            .args(["inspect", "--pending"])
            .output()
            .unwrap();
        assert_eq!(code(&piped), 0, "{}", explain(&piped));
        assert_prefixed("inspect --pending", &stdout(&piped));
        assert_snapshot!(format!("pending_{columns}"), snapshot_of(&env, &piped));
        let mut cmd = env.std_cmd();
        cmd.args(["inspect", "--pending"]);
        let tty = run_on_terminal(cmd, columns);
        assert_prefixed("inspect --pending on a terminal", &stdout(&tty));
        assert_snapshot!(
            format!("pending_{columns}_terminal"),
            snapshot_of(&env, &tty)
        );
    }
    let step = env.run(["inspect", "trip/hotel"]);
    assert_prefixed("inspect STEP", &stdout(&step));
    let follow = env.run(["follow", "trip/hotel"]);
    assert_eq!(code(&follow), 4, "{}", explain(&follow));
    assert_prefixed("follow", &stdout(&follow));
    // JSON keeps the text as it came.
    let json = env.run(["inspect", "trip/hotel", "-o", "json"]);
    assert!(
        stdout(&json).contains(r"two rooms or one?\na2a-recover"),
        "{}",
        stdout(&json)
    );
}

#[test]
fn lists_show_twenty_lines_and_the_step_view_all() {
    let env = TestEnv::new();
    let question: Vec<String> = (1..=30).map(|i| format!("choice {i}")).collect();
    let _agent = asked(&env, &question.join("\n"));
    let list = stdout(&env.run(["inspect", "--pending"]));
    assert!(list.contains("│ choice 20"), "{list}");
    assert!(!list.contains("choice 21"), "{list}");
    assert!(list.contains("… 10 more lines"), "{list}");
    let step = stdout(&env.run(["inspect", "trip/hotel"]));
    assert!(step.contains("│ choice 30"), "{step}");
}
