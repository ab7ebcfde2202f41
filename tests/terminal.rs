//! Terminal safety: an agent whose card name, task ids, questions, artifact names and error
//! messages carry ANSI escapes, OSC titles and OSC 8 links, carriage returns, C1 controls and
//! bidi overrides. Every human output path of the real binary must show that text inert
//! (escape sequences dropped, other controls and bidi as visible `\u{…}`), on stdout and on
//! stderr at every verbosity; `--format json` must keep the exact text as data.

use serde_json::Value;

use crate::common::hostile::{Hostile, Mode, Script};
use crate::common::{TestEnv, code, json_lines_of, stderr, stdout};

/// Remote text built to attack a terminal: SGR colors, an OSC window title (BEL-terminated), an
/// OSC 8 hyperlink (ST-terminated), a carriage return that would overwrite the line, a bidi
/// override that would reverse it, and a C1 CSI that clears the screen.
const EVIL: &str = "\u{1b}[31mRED\u{1b}[0m \u{1b}]0;pwned-title\u{7} \
                    \u{1b}]8;;http://evil.example/\u{1b}\\click\u{1b}]8;;\u{1b}\\ \
                    over\rwrite \u{202e}drowssap\u{202c} \u{9b}2J end";

/// Asserts that text shown to a human carries nothing a terminal would act on.
fn assert_inert(what: &str, text: &str) {
    for c in text.chars() {
        assert!(
            c == '\n' || !(c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)),
            "{what}: {c:?} reached the terminal in:\n{text}"
        );
    }
    for hidden in ["pwned-title", "evil.example"] {
        assert!(
            !text.contains(hidden),
            "{what}: the payload of an escape sequence `{hidden}` was shown:\n{text}"
        );
    }
}

/// Runs the binary and checks both of its streams; returns (code, stdout, stderr).
fn run(env: &TestEnv, args: &[&str]) -> (i32, String, String) {
    let out = env.run(args);
    let (o, e) = (stdout(&out), stderr(&out));
    let what = args.join(" ");
    assert_inert(&format!("stdout of `{what}`"), &o);
    assert_inert(&format!("stderr of `{what}`"), &e);
    (code(&out), o, e)
}

fn question() -> String {
    format!("two rooms or one? {EVIL}")
}

fn evil_agent() -> Hostile {
    let h = Hostile::start();
    h.set_card_name(&format!("Hotel {EVIL}"));
    h.set_script(Script {
        state: "TASK_STATE_INPUT_REQUIRED".to_owned(),
        status_text: Some(question()),
        artifact_names: vec![format!("receipt {EVIL}")],
        task_prefix: "t\u{1b}[2J\u{202e}-".to_owned(),
        ..Script::default()
    });
    h
}

#[test]
fn questions_task_ids_and_card_text_are_inert_on_every_human_path() {
    let env = TestEnv::new();
    let h = evil_agent();

    let (c, o, _) = run(&env, &["agents", "add", h.url()]);
    assert_eq!(c, 0);
    assert!(o.contains("RED") && o.contains("\\u{202e}drowssap"), "{o}");
    let (c, o, _) = run(&env, &["agents", "list"]);
    assert_eq!(c, 0);
    assert!(o.contains("Hotel RED"), "{o}");

    let (c, o, _) = run(
        &env,
        &["delegate", "trip/hotel", "--agent", h.url(), "a room"],
    );
    assert_eq!(c, 0);
    assert!(o.contains("as task t\\u{202e}-1 (INPUT_REQUIRED)"), "{o}");

    // reconcile: the question is the remedy line, at every verbosity.
    for flags in [&[][..], &["-v"], &["-vvv"]] {
        let mut args = vec!["reconcile"];
        args.extend_from_slice(flags);
        let (c, o, _) = run(&env, &args);
        assert_eq!(c, 4, "a pending question");
        assert!(o.contains("two rooms or one? RED"), "{o}");
        assert!(
            o.contains("over\\u{d}write"),
            "a carriage return is shown, not obeyed: {o}"
        );
        assert!(
            o.contains("\\u{202e}drowssap\\u{202c}"),
            "bidi is shown: {o}"
        );
    }

    for args in [
        &["inspect", "--wide"][..],
        &["inspect", "--pending"],
        &["inspect", "trip/hotel"],
        &["inspect", "trip/hotel", "--events"],
        &["inspect", "trip"],
    ] {
        let (c, o, _) = run(&env, args);
        assert_eq!(c, 0);
        assert!(o.contains("t\\u{202e}-1"), "{args:?}: {o}");
    }
    let (_, o, _) = run(&env, &["inspect", "--pending"]);
    assert!(o.contains("two rooms or one? RED"), "{o}");
    assert!(o.contains("a2a-recover reply trip/hotel"), "{o}");

    // The reply goes to the same task; its line names it inert.
    h.set_script(Script {
        state: "TASK_STATE_COMPLETED".to_owned(),
        status_text: Some(format!("done {EVIL}")),
        artifact_names: vec![format!("receipt {EVIL}")],
        ..Script::default()
    });
    let (c, o, _) = run(&env, &["reply", "trip/hotel", "one room"]);
    assert_eq!(c, 0, "{o}");
    let (c, _, _) = run(&env, &["reconcile", "-vvv"]);
    assert_eq!(c, 0);
    let (_, o, _) = run(&env, &["inspect", "trip/hotel", "--events"]);
    assert!(o.contains("COMPLETED"), "{o}");
}

#[test]
fn json_keeps_the_exact_remote_text_as_data() {
    let env = TestEnv::new();
    let h = evil_agent();
    let out = env.run(["agents", "add", h.url(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let agent = &json_lines_of(&stdout(&out))[1];
    assert_eq!(agent["name"], format!("Hotel {EVIL}"));

    let out = env.run([
        "delegate",
        "trip/hotel",
        "--agent",
        h.url(),
        "a room",
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // JSON escapes control characters: the stream itself is safe for a terminal.
    assert!(!stdout(&out).contains('\u{1b}'));

    let out = env.run(["reconcile", "--format", "json"]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    let lines = json_lines_of(&stdout(&out));
    let action = lines
        .iter()
        .find(|l| l["type"] == "action")
        .expect("an action");
    assert_eq!(action["detail"]["question"], question(), "{action}");

    let out = env.run(["inspect", "trip/hotel", "--events", "--format", "json"]);
    let lines = json_lines_of(&stdout(&out));
    let attempt = lines
        .iter()
        .find(|l| l["type"] == "attempt")
        .expect("attempt");
    assert_eq!(attempt["pendingQuestion"], question());
    assert_eq!(attempt["taskId"], "t\u{1b}[2J\u{202e}-1");
    let text = lines
        .iter()
        .filter(|l| l["type"] == "event")
        .map(Value::to_string)
        .collect::<String>();
    assert!(
        text.contains(&serde_json::to_string(&question()).unwrap()[1..20]),
        "events keep the question as data: {text}"
    );
}

#[test]
fn remote_error_messages_are_inert_in_errors_and_pass_lines() {
    let env = TestEnv::new();
    let h = Hostile::start();

    // An internal error whose message attacks the terminal: ambiguous, exit 3.
    h.set_mode(Mode::RpcError(-32603, format!("boom {EVIL}")));
    let (c, o, e) = run(&env, &["delegate", "w/internal", "--agent", h.url(), "go"]);
    assert_eq!(c, 3, "{e}");
    assert!(e.contains("boom RED"), "{e}");
    assert!(o.contains("stays INTENT"), "{o}");
    for flags in [&[][..], &["-vvv"]] {
        let mut args = vec!["reconcile"];
        args.extend_from_slice(flags);
        let (c, _, e) = run(&env, &args);
        assert_eq!(c, 3, "{e}");
        assert!(e.contains("boom RED"), "{e}");
    }

    // A refusal whose message attacks the terminal: REFUSED, exit 4, shown again on a re-run.
    h.set_mode(Mode::RpcError(-32602, format!("no {EVIL}")));
    let (c, _, e) = run(&env, &["delegate", "w/refused", "--agent", h.url(), "go"]);
    assert_eq!(c, 4, "{e}");
    assert!(e.contains("no RED"), "{e}");
    let (c, o, _) = run(&env, &["delegate", "w/refused", "--agent", h.url(), "go"]);
    assert_eq!(c, 4);
    assert!(o.contains("(REFUSED): ") && o.contains("no RED"), "{o}");
    let (_, o, _) = run(&env, &["inspect", "--pending", "--wide"]);
    assert!(o.contains("JSON-RPC error -"), "{o}");
    let (_, o, _) = run(&env, &["inspect", "w/refused", "--events"]);
    assert!(o.contains("REFUSED"), "{o}");

    // An HTML error page whose body attacks the terminal.
    h.set_mode(Mode::Html(503));
    let (c, _, e) = run(&env, &["delegate", "w/html", "--agent", h.url(), "go"]);
    assert_eq!(c, 3, "{e}");
    assert!(e.contains("HTTP 503"), "{e}");

    // Exact text in JSON.
    let out = env.run(["inspect", "w/refused", "--format", "json"]);
    let lines = json_lines_of(&stdout(&out));
    let error = lines[1]["error"].as_str().expect("an error");
    assert!(error.contains("no "), "{error}");
}

#[test]
fn follow_shows_state_changes_and_the_question_inert_and_keeps_them_exact_in_json() {
    let env = TestEnv::new();
    let h = Hostile::start();
    h.set_script(Script {
        task_prefix: "t\u{1b}[2J\u{202e}-".to_owned(),
        ..Script::default()
    });
    for step in ["trip/hotel", "trip/car"] {
        let (c, _, e) = run(&env, &["delegate", step, "--agent", h.url(), "a room"]);
        assert_eq!(c, 0, "{e}");
    }
    h.set_script(Script {
        state: "TASK_STATE_INPUT_REQUIRED".to_owned(),
        status_text: Some(question()),
        artifact_names: vec![format!("receipt {EVIL}")],
        ..Script::default()
    });
    h.restyle_tasks();

    for flags in [&[][..], &["-vvv"]] {
        let mut args = vec!["follow", "trip/hotel"];
        args.extend_from_slice(flags);
        let (c, o, e) = run(&env, &args);
        assert_eq!(c, 4, "{o}{e}");
        assert!(o.contains("two rooms or one? RED"), "{o}");
        assert!(o.contains("t\\u{202e}-1"), "{o}");
    }
    let (_, _, e) = run(&env, &["follow", "trip/car"]);
    assert!(
        e.contains("WORKING → INPUT_REQUIRED"),
        "a status line per change: {e}"
    );

    let out = env.run(["follow", "trip/car", "--format", "json"]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    let lines = json_lines_of(&stdout(&out));
    let summary = lines.last().expect("a summary");
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["pendingQuestion"], question(), "{summary}");
    assert_eq!(summary["taskId"], "t\u{1b}[2J\u{202e}-2", "{summary}");
}

/// Runs the binary on a pseudo-terminal (util-linux `script`), so tables get borders and
/// `reconcile` and `follow` draw their progress bar and spinner; returns the exit code and
/// everything the terminal received.
fn on_a_terminal(env: &TestEnv, args: &[&str]) -> (i32, String) {
    let script = std::path::Path::new("/usr/bin/script");
    assert!(
        script.exists(),
        "this test needs util-linux `script` to run the binary on a pseudo-terminal"
    );
    // Only local values (the binary's path, our flags, a loopback URL) go into this line.
    let line = std::iter::once(env!("CARGO_BIN_EXE_a2a-recover"))
        .chain(args.iter().copied())
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let out = env
        .hermetic(&mut std::process::Command::new(script))
        .args(["-q", "-e", "-c", &line, "/dev/null"])
        .env("TERM", "xterm")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run script");
    (code(&out), stdout(&out))
}

/// On a terminal the tool itself draws (spinner, bars, cursor moves), so instead of "no
/// escape at all", check that none of the remote text's sequences or payloads got through.
fn assert_no_remote_sequences(what: &str, text: &str) {
    for bad in [
        "\u{1b}]",
        "\u{1b}[31m",
        "\u{1b}[2J",
        "\u{9b}",
        "\u{202e}",
        "\u{202c}",
        "pwned-title",
        "evil.example",
    ] {
        assert!(
            !text.contains(bad),
            "{what}: {bad:?} reached the terminal:\n{text:?}"
        );
    }
}

#[test]
fn tables_progress_bars_and_spinners_on_a_real_terminal_stay_inert() {
    let env = TestEnv::new();
    let h = evil_agent();
    h.set_script(Script {
        task_prefix: "t\u{1b}[2J\u{202e}-".to_owned(),
        ..Script::default()
    });
    let (c, _) = on_a_terminal(&env, &["agents", "add", h.url()]);
    assert_eq!(c, 0);
    for step in ["trip/hotel", "trip/car"] {
        let (c, text) = on_a_terminal(&env, &["delegate", step, "--agent", h.url(), "go"]);
        assert_eq!(c, 0, "{text}");
    }
    h.set_script(Script {
        state: "TASK_STATE_INPUT_REQUIRED".to_owned(),
        status_text: Some(question()),
        artifact_names: vec![format!("receipt {EVIL}")],
        ..Script::default()
    });
    h.restyle_tasks();
    let (c, text) = on_a_terminal(&env, &["follow", "trip/hotel"]);
    assert_eq!(c, 4, "{text}");
    assert_no_remote_sequences("follow", &text);
    assert!(text.contains("two rooms or one? RED"), "{text:?}");
    let (c, text) = on_a_terminal(&env, &["reconcile"]);
    assert_eq!(c, 4, "{text}");
    assert_no_remote_sequences("reconcile", &text);
    assert!(
        text.contains("reconcile 2/2"),
        "the progress bar was drawn: {text:?}"
    );
    for args in [
        &["inspect", "--wide"][..],
        &["inspect", "--pending"],
        &["inspect", "trip/car", "--events"],
        &["agents", "list"],
    ] {
        let (c, text) = on_a_terminal(&env, args);
        assert_eq!(c, 0, "{text}");
        assert_no_remote_sequences(&args.join(" "), &text);
        assert!(
            text.contains('─') || text.contains('│'),
            "a bordered table: {text}"
        );
    }
}

#[test]
fn compensate_shows_remote_errors_and_task_ids_inert() {
    let env = TestEnv::new();
    let h = Hostile::start();
    h.set_script(Script {
        task_prefix: "t\u{1b}[2J\u{202e}-".to_owned(),
        status_text: Some(format!("working {EVIL}")),
        ..Script::default()
    });
    let (c, _, e) = run(&env, &["delegate", "trip/a", "--agent", h.url(), "go"]);
    assert_eq!(c, 0, "{e}");
    h.set_mode(Mode::RpcError(-32603, format!("cannot cancel {EVIL}")));
    let (c, o, e) = run(&env, &["compensate", "trip"]);
    assert_eq!(c, 3, "the task could not be read, so work remains: {o}{e}");
    assert!(o.contains("task t\\u{202e}-1"), "{o}");
    let (c, o, e) = run(&env, &["compensate", "trip", "-vvv"]);
    assert_eq!(c, 3, "{o}{e}");
}
