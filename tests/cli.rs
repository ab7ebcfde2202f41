//! The command line itself: help, version, usage errors.

use crate::common::{TestEnv, code, stderr, stdout};

#[test]
fn help_lists_exit_codes() {
    let env = TestEnv::new();
    let out = env.run(["--help"]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("Exit codes:"), "{}", stdout(&out));
}

#[test]
fn bad_duration_is_a_usage_error() {
    let env = TestEnv::new();
    let out = env.run(["--timeout", "5", "inspect"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("has no unit"), "{}", stderr(&out));
}

/// Logs (`-v`) piped into a file are plain text: no escape codes, as for every other output
/// that is not a terminal; `--color always` still colors them.
#[test]
fn verbose_logs_carry_no_escape_codes_off_a_terminal() {
    let env = TestEnv::new();
    // A new journal is migrated (an info line); the agent's port is closed (nothing is sent).
    let delegate = ["delegate", "w/s", "hi", "--agent", "http://127.0.0.1:1/"];
    let out = env.cmd().arg("-v").args(delegate).output().unwrap();
    let err = stderr(&out);
    assert!(err.contains("applying journal migration"), "{err}");
    assert!(!err.contains('\x1b'), "{err:?}");
    let env = TestEnv::new();
    let out = env
        .cmd()
        .args(["-v", "--color", "always"])
        .args(delegate)
        .output()
        .unwrap();
    assert!(stderr(&out).contains('\x1b'), "{:?}", stderr(&out));
}
