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
