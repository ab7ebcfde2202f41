//! Interop with the official A2A SDKs: the Python client against our scripted agent, and (with the
//! wire client) our client against the official Python and JS servers.
//!
//! The SDKs are installed, pinned, by `scripts/test`; see `tests/common/interop.rs`.

use std::process::{Command, Output};

use crate::common::interop::{
    InteropAgent, interop_dir, interop_python, start_js_agent, start_python_agent,
    start_scripted_agent,
};

/// Runs `tests/interop/python/client_check.py` (the official Python client) against `agent`.
fn run_client_check(agent: &InteropAgent) -> Output {
    Command::new(interop_python())
        .arg(interop_dir().join("python/client_check.py"))
        .arg(&agent.url)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run client_check.py")
}

/// Asserts that the client check passed, showing its output and the agent's stderr otherwise.
fn assert_client_check_passed(agent: &InteropAgent, out: &Output) {
    assert!(
        out.status.success(),
        "the official Python client failed against {}\n--- client_check.py stdout ---\n{}\
         --- client_check.py stderr ---\n{}\n--- agent ---\n{}",
        agent.url,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        agent.context()
    );
}

#[test]
fn official_python_client_drives_our_scripted_agent() {
    let agent = start_scripted_agent(&[]);
    let out = run_client_check(&agent);
    assert_client_check_passed(&agent, &out);
}

/// The same check against the official servers proves the check itself expects official
/// behaviour, so a failure against our scripted agent is our agent's fault.
#[test]
fn client_check_passes_against_the_official_python_agent() {
    let agent = start_python_agent();
    let out = run_client_check(&agent);
    assert_client_check_passed(&agent, &out);
}

#[test]
fn client_check_passes_against_the_official_js_agent() {
    let agent = start_js_agent();
    let out = run_client_check(&agent);
    assert_client_check_passed(&agent, &out);
}
