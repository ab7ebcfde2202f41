//! The commands as the tests run them: `delegate`, `reconcile`, a crash point armed, a child
//! left running, and the `attempt` records of `inspect --format json`.

use std::os::unix::process::ExitStatusExt;
use std::process::{Output, Stdio};

use a2a_recover::a2a::card_url_for;
use a2a_recover::journal::AgentCard;
use a2a_recover::scripted_agent::{ScriptedAgent, Stats};
use serde_json::Value;

use std::time::Duration;

use super::child::Guarded;
use super::wait::wait_for;
use super::{Background, TestEnv, code, json_lines, stderr, stdout};

/// Runs `delegate STEP --agent URL TEXT [extra…]`.
pub fn delegate(env: &TestEnv, step: &str, url: &str, text: &str, extra: &[&str]) -> Output {
    let mut args = vec!["delegate", step, "--agent", url, text];
    args.extend_from_slice(extra);
    env.run(args)
}

/// Runs `reconcile [extra…]`.
pub fn reconcile(env: &TestEnv, extra: &[&str]) -> Output {
    let mut args = vec!["reconcile"];
    args.extend_from_slice(extra);
    env.run(args)
}

/// Runs `reconcile` until it stops answering 3 (work remains); returns its exit code.
pub fn settle(env: &TestEnv) -> i32 {
    code(&settled(env, 50))
}

/// Runs `reconcile` until it stops answering 3, at most `max` passes; returns the last run.
pub fn settled(env: &TestEnv, max: usize) -> Output {
    let mut passes = 0;
    wait_for(
        "reconcile to stop answering 3",
        Duration::from_secs(600),
        || {
            passes += 1;
            assert!(
                passes <= max,
                "reconcile still answers 3 after {max} passes"
            );
            let out = reconcile(env, &[]);
            if code(&out) == 3 {
                Err(stderr(&out))
            } else {
                Ok(out)
            }
        },
    )
}

/// Runs the binary with a crash point armed; asserts it aborted (SIGABRT).
pub fn crashing(env: &TestEnv, point: &str, args: &[&str]) {
    let out = env
        .cmd()
        .env("A2A_RECOVER_CRASH_AT", point)
        .args(args)
        .output()
        .expect("run");
    assert_eq!(
        out.status.signal(),
        Some(6),
        "expected SIGABRT at {point} for {args:?}: {out:?}"
    );
}

/// Starts the binary in the test's environment without waiting for it (output piped); it is
/// killed when the handle drops.
pub fn spawn(env: &TestEnv, args: &[&str]) -> Guarded {
    spawn_with(env, &[], args)
}

/// Starts the binary as [`spawn`] does, with more environment variables.
pub fn spawn_with(env: &TestEnv, vars: &[(&str, &str)], args: &[&str]) -> Guarded {
    Guarded::spawn(
        env.std_cmd()
            .envs(vars.iter().copied())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
        "a2a-recover",
    )
}

/// Returns the `attempt` records of `inspect --format json [target]`.
pub fn attempts(env: &TestEnv, target: Option<&str>) -> Vec<Value> {
    let mut args = vec!["inspect", "--format", "json"];
    args.extend(target);
    let out = env.run(args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    stdout(&out)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("JSON line"))
        .filter(|v| v["type"] == "attempt")
        .collect()
}

/// The step's events, oldest first, as `inspect STEP --events --format json` prints them.
pub fn events(env: &TestEnv, step: &str) -> Vec<Value> {
    let out = env.run(["inspect", step, "--events", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    json_lines(&out)
        .into_iter()
        .filter(|v| v["type"] == "event")
        .collect()
}

/// The texts of the parts of every artifact of `step`, in order, as `inspect STEP --format json`
/// prints them.
pub fn artifact_texts(env: &TestEnv, step: &str) -> String {
    let out = env.run(["inspect", step, "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    json_lines(&out)
        .iter()
        .filter(|r| r["type"] == "artifact")
        .flat_map(|r| r["parts"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p["text"].as_str().map(str::to_owned))
        .collect()
}

/// Returns the only attempt of a step.
pub fn the_attempt(env: &TestEnv, step: &str) -> Value {
    let mut all = attempts(env, Some(step));
    assert_eq!(all.len(), 1, "{all:?}");
    all.remove(0)
}

/// Returns the latest attempt of a step (`WORKFLOW/STEP`).
pub fn latest(env: &TestEnv, step: &str) -> Value {
    attempts(env, Some(step))
        .pop()
        .unwrap_or_else(|| panic!("no attempt of {step}"))
}

/// Returns a step's task id.
pub fn task_of(env: &TestEnv, step: &str) -> String {
    latest(env, step)["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{step} has no task id"))
        .to_owned()
}

/// Registers scripted agents in the registry through the journal API, in order, each
/// advertising `skill`.
pub fn register(env: &TestEnv, agents: &[&Background<ScriptedAgent>], skill: &str) {
    let journal = env.open_journal();
    for a in agents {
        let url = a.url();
        journal
            .register_agent(
                &AgentCard {
                    card_url: card_url_for(&url).unwrap(),
                    interface_url: url.clone(),
                    protocol_version: Some("1.0".into()),
                    binding: a2a_recover::a2a::ProtocolBinding::JsonRpcV1,
                    tenant: None,
                    card_json: "{}".into(),
                    skills: vec![skill.to_owned()],
                },
                None,
                None,
                false,
            )
            .unwrap();
    }
}

/// Returns the journal's bytes and its WAL's.
pub fn journal_bytes(env: &TestEnv) -> (Vec<u8>, Vec<u8>) {
    let file = env.journal_file();
    let wal = std::fs::read(file.with_extension("sqlite3-wal")).unwrap_or_default();
    (std::fs::read(&file).expect("journal"), wal)
}

/// How many messages with this messageId the scripted agent received (resends included).
pub fn messages_with_id(stats: &Stats, message_id: &str) -> usize {
    stats
        .messages
        .iter()
        .filter(|m| m.message_id == message_id)
        .count()
}
