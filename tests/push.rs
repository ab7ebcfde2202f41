//! Push notifications, registering: `delegate --push` sends a push config with a random config
//! id and a fresh token, journals the config id and only a hash of the token before the send,
//! and keeps the config id on a resend of the same messageId (with a fresh token).

use a2a_recover::journal::AttemptId;
use a2a_recover::recovery::push::{AUTH_SCHEME, token_hash, token_matches};
use std::os::unix::process::ExitStatusExt;

use a2a_recover::scripted_agent::{AgentConfig, ReceivedMessage};
use serde_json::Value;

use crate::common::commands::{delegate, the_attempt};
use crate::common::transcript::Transcript;
use crate::common::{TestEnv, agent, code, fast, stderr};

const BASE: &str = "http://127.0.0.1:9/hooks";

fn pushing() -> AgentConfig {
    AgentConfig {
        push: true,
        ..fast()
    }
}

/// The push config a received message carried, checked for its shape: `BASE/push/ID`, the
/// token in `token` and as `Bearer` credentials. Returns the config id and the token.
fn config_of(m: &ReceivedMessage) -> (String, String) {
    let c = m.push_config.as_ref().expect("a push config");
    let id = c["id"].as_str().expect("an id").to_owned();
    let token = c["token"].as_str().expect("a token").to_owned();
    assert_eq!(c["url"], format!("{BASE}/push/{id}"), "{c}");
    assert_eq!(c["authentication"]["scheme"], AUTH_SCHEME, "{c}");
    assert_eq!(c["authentication"]["credentials"], token.as_str(), "{c}");
    assert!(token.len() >= 32, "{c}");
    (id, token)
}

/// The config's journaled token hashes.
fn hashes(env: &TestEnv, config_id: &str) -> Vec<String> {
    env.open_journal()
        .push_config_by_id(config_id)
        .expect("read")
        .expect("the config is journaled")
        .1
}

#[test]
fn a_push_config_is_sent_and_only_its_tokens_hash_is_journaled() {
    let env = TestEnv::new();
    let a = agent(pushing());
    let mut transcript = Transcript::default();
    let out = delegate(&env, "w/s", &a.url(), "work:1", &["--push", BASE, "-vvv"]);
    transcript.keep("delegate", &out);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let stats = a.stats();
    assert_eq!(stats.messages.len(), 1);
    let (id, token) = config_of(&stats.messages[0]);
    let row = the_attempt(&env, "w/s");
    assert_eq!(row["push"]["configId"], id.as_str(), "{row}");
    assert_eq!(row["push"]["url"], format!("{BASE}/push/{id}"), "{row}");
    let held = hashes(&env, &id);
    assert_eq!(held, vec![token_hash(&token)]);
    assert!(token_matches(&token, &held));
    let inspect = env.run(["inspect", "w/s", "--format", "json", "-vvv"]);
    transcript.keep("inspect", &inspect);
    transcript.keep_journal_files(&env.journal_file());
    transcript.assert_free_of(&token);
}

#[test]
fn a_resend_keeps_the_config_id_with_a_fresh_token() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        no_list_tasks: true,
        dedup: true,
        ..pushing()
    });
    // The send went out, its answer was never journaled; the agent cannot be searched, so the
    // attempt is UNCERTAIN until the operator approves one resend of the same messageId.
    let crashed = env
        .cmd()
        .env("A2A_RECOVER_CRASH_AT", "after-send")
        .args([
            "delegate",
            "w/s",
            "--agent",
            &a.url(),
            "work:1",
            "--push",
            BASE,
        ])
        .output()
        .expect("run");
    assert_eq!(crashed.status.signal(), Some(6), "{crashed:?}");
    let look = env.run(["reconcile"]);
    assert_eq!(
        the_attempt(&env, "w/s")["state"],
        "UNCERTAIN",
        "{}",
        stderr(&look)
    );
    let resolve = env.run(["resolve", "w/s", "--as", "resend", "--reason", "drill"]);
    assert_eq!(code(&resolve), 0, "{}", stderr(&resolve));
    let resend = env.run(["reconcile"]);
    assert_eq!(code(&resend), 0, "{}", stderr(&resend));
    let stats = a.stats();
    assert_eq!(stats.messages.len(), 2, "{:?}", stats.messages);
    assert_eq!(stats.messages[0].message_id, stats.messages[1].message_id);
    let (id1, token1) = config_of(&stats.messages[0]);
    let (id2, token2) = config_of(&stats.messages[1]);
    assert_eq!(id1, id2);
    assert_ne!(token1, token2);
    let held = hashes(&env, &id1);
    assert_eq!(held.len(), 2);
    assert!(token_matches(&token1, &held) && token_matches(&token2, &held));
}

#[test]
fn an_agent_whose_card_offers_no_push_is_asked_nothing() {
    let env = TestEnv::new();
    let a = agent(fast());
    let out = env
        .cmd()
        .env("A2A_RECOVER_PUSH_URL", BASE)
        .args(["delegate", "w/s", "--agent", &a.url(), "work:1"])
        .output()
        .expect("run");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(a.stats().messages[0].push_config.is_none());
    assert_eq!(the_attempt(&env, "w/s")["push"], Value::Null);
    let journal = env.open_journal();
    assert!(journal.push_config(AttemptId(1)).expect("read").is_none());
}

#[test]
fn the_flag_wins_over_the_variable_and_no_push_over_both() {
    let env = TestEnv::new();
    let a = agent(pushing());
    let url = a.url();
    let run = |step: &str, extra: &[&str]| {
        let mut args = vec!["delegate", step, "--agent", &url, "work:1"];
        args.extend_from_slice(extra);
        let out = env
            .cmd()
            .env("A2A_RECOVER_PUSH_URL", "http://127.0.0.1:9/from-env")
            .args(args)
            .output()
            .expect("run");
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    };
    run("w/env", &[]);
    run("w/flag", &["--push", BASE]);
    run("w/off", &["--no-push"]);
    let urls: Vec<Option<String>> = a
        .stats()
        .messages
        .iter()
        .map(|m| {
            m.push_config
                .as_ref()
                .map(|c| c["url"].as_str().unwrap().to_owned())
        })
        .collect();
    assert!(
        urls[0]
            .as_deref()
            .unwrap()
            .starts_with("http://127.0.0.1:9/from-env/push/")
    );
    assert!(
        urls[1]
            .as_deref()
            .unwrap()
            .starts_with(&format!("{BASE}/push/"))
    );
    assert_eq!(urls[2], None);
    let bad = delegate(
        &env,
        "w/bad",
        &a.url(),
        "work:1",
        &["--push", "https://u:p@h.example"],
    );
    assert_eq!(code(&bad), 2, "{}", stderr(&bad));
}
