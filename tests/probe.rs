//! `agents probe`: the recovery profile measured against the scripted agent and its bends, what
//! the journal keeps of it, and how `reconcile` uses it.

use std::process::Output;

use a2a_recover::scripted_agent::{AgentConfig, ScriptedAgent, ServedBinding};
use serde_json::Value;

use crate::common::commands::{crashing, delegate, reconcile, the_attempt};
use crate::common::{Background, TestEnv, agent, code, fast, json_lines, stderr, stdout};

/// Runs `agents probe URL [extra…] --format json`.
fn probe(env: &TestEnv, url: &str, extra: &[&str]) -> Output {
    let mut args = vec!["agents", "probe", url, "--format", "json"];
    args.extend_from_slice(extra);
    env.run(args)
}

/// Probes and returns the `probe` record, asserting exit 0.
fn probed(env: &TestEnv, url: &str, extra: &[&str]) -> Value {
    let out = probe(env, url, extra);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(lines[0]["type"], "begin");
    assert_eq!(lines[0]["command"], "agents probe");
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[1]["type"], "probe");
    lines[1].clone()
}

/// How many tasks the agent holds.
fn tasks(a: &Background<ScriptedAgent>) -> usize {
    a.stats().tasks.len()
}

/// Delegates one echo step and waits until the agent finished it: the agent then has a task.
fn one_finished_task(env: &TestEnv, a: &Background<ScriptedAgent>) {
    let step = format!(
        "w/seed-{}",
        a.url().trim_end_matches('/').rsplit(':').next().unwrap()
    );
    let out = delegate(env, &step, &a.url(), "hello", &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    a.settle();
}

#[test]
fn a_probe_without_send_test_measures_the_profile_and_creates_no_task() {
    let env = TestEnv::new();
    let a = agent(fast());
    one_finished_task(&env, &a);
    let before = a.stats();
    let record = probed(&env, &a.url(), &[]);
    let after = a.stats();
    assert_eq!(after.tasks.len(), before.tasks.len(), "no remote task");
    assert_eq!(after.messages.len(), before.messages.len(), "no message");
    assert_eq!(
        after.requests.get("SendMessage"),
        before.requests.get("SendMessage")
    );
    let p = &record["profile"];
    assert_eq!(p["listTasks"], "ok", "{p}");
    assert_eq!(p["timestampFilter"], "ok", "{p}");
    assert_eq!(p["subscribe"], "ok", "{p}");
    assert_eq!(p["unknownTaskSubscribeCode"], "-32001", "{p}");
    assert_eq!(p["terminalSubscribeCode"], "-32004", "{p}");
    // The delegation taught the journal that the agent keeps client context ids.
    assert_eq!(p["clientContextId"], "accepted", "{p}");
    assert_eq!(p["dedup"], Value::Null);
    assert_eq!(p["historyKept"], Value::Null);
    assert_eq!(p["sendTest"], false);
    assert!(
        p["probedAt"].as_str().is_some_and(|t| t.ends_with('Z')),
        "{p}"
    );
    let bindings = p["bindings"].as_array().unwrap();
    assert_eq!(bindings.len(), 1, "{p}");
    assert_eq!(bindings[0]["binding"], "JSONRPC");
    assert_eq!(bindings[0]["protocolVersion"], "1.0");
    assert_eq!(bindings[0]["spoken"], true);
    assert_eq!(bindings[0]["chosen"], true);
    assert_eq!(record["testTasks"], serde_json::json!([]));
}

#[test]
fn an_agent_without_tasks_leaves_the_filters_unknown() {
    let env = TestEnv::new();
    let a = agent(fast());
    let p = probed(&env, &a.url(), &[])["profile"].clone();
    assert_eq!(tasks(&a), 0);
    assert_eq!(
        p["listTasks"], "unknown",
        "nothing to tell a filter by: {p}"
    );
    assert_eq!(p["timestampFilter"], "unknown", "{p}");
    assert_eq!(p["clientContextId"], "unknown", "{p}");
    assert_eq!(p["subscribe"], "ok", "{p}");
    assert_eq!(
        p["terminalSubscribeCode"],
        Value::Null,
        "no terminal task to ask: {p}"
    );
}

#[test]
fn the_profile_is_journaled_and_shown_by_agents_list() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        skills: vec!["echo".into()],
        ..fast()
    });
    let out = env.run(["agents", "add", &a.url()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = env.run(["agents", "list", "--format", "json"]);
    assert_eq!(
        json_lines(&out)[1]["profile"],
        Value::Null,
        "not probed yet"
    );
    let out = env.run(["agents", "probe", &a.url(), "--send-test", "hello"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let human = stdout(&out);
    assert!(human.contains("the profile is journaled"), "{human}");
    assert!(human.contains("  listTasks         ok\n"), "{human}");
    assert!(human.contains("  dedup             no\n"), "{human}");
    let out = env.run(["agents", "list", "--format", "json"]);
    let record = &json_lines(&out)[1];
    assert_eq!(record["profile"]["listTasks"], "ok", "{record}");
    assert_eq!(record["profile"]["dedup"], "no", "{record}");
    assert_eq!(record["acceptsContextId"], true, "the test send taught it");
    let out = env.run(["agents", "list"]);
    assert!(
        stdout(&out).contains("list ok, dedup no"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn send_test_measures_dedup_context_ids_and_history() {
    let env = TestEnv::new();
    let plain = agent(fast());
    let record = probed(&env, &plain.url(), &["--send-test", "hello"]);
    let p = &record["profile"];
    assert_eq!(p["dedup"], "no", "{p}");
    assert_eq!(p["historyKept"], "yes", "{p}");
    assert_eq!(p["clientContextId"], "accepted", "{p}");
    assert_eq!(p["sendTest"], true);
    assert_eq!(p["listTasks"], "ok", "its own test tasks are visible: {p}");
    assert_eq!(record["testTasks"].as_array().unwrap().len(), 2, "{record}");
    assert_eq!(tasks(&plain), 2, "the same messageId ran twice");

    let dedup = agent(AgentConfig {
        dedup: true,
        ..fast()
    });
    let record = probed(&env, &dedup.url(), &["--send-test", "hello"]);
    assert_eq!(record["profile"]["dedup"], "yes", "{record}");
    assert_eq!(record["testTasks"].as_array().unwrap().len(), 1);
    assert_eq!(tasks(&dedup), 1);
}

/// Starts an agent bent by `cfg`, gives it one finished task if `seeded`, and returns it and
/// the profile `agents probe [extra…]` measured.
fn profile_of(
    env: &TestEnv,
    cfg: AgentConfig,
    seeded: bool,
    extra: &[&str],
) -> (Background<ScriptedAgent>, Value) {
    let a = agent(cfg);
    if seeded {
        one_finished_task(env, &a);
    }
    let p = probed(env, &a.url(), extra)["profile"].clone();
    (a, p)
}

#[test]
fn the_scripted_agents_bends_show_in_the_profile() {
    let env = TestEnv::new();
    let bent = |cfg: AgentConfig, seeded, extra: &[&str]| profile_of(&env, cfg, seeded, extra).1;
    let p = bent(
        AgentConfig {
            list_ignores_filters: true,
            ..fast()
        },
        true,
        &[],
    );
    assert_eq!(p["listTasks"], "ignores-filter", "{p}");
    assert_eq!(p["timestampFilter"], "none", "{p}");

    let p = bent(
        AgentConfig {
            no_list_tasks: true,
            ..fast()
        },
        true,
        &[],
    );
    assert_eq!(p["listTasks"], "none", "{p}");
    assert_eq!(p["timestampFilter"], "none", "{p}");

    let p = bent(
        AgentConfig {
            replace_context_id: true,
            ..fast()
        },
        false,
        &["--send-test", "hello"],
    );
    assert_eq!(p["clientContextId"], "replaced", "{p}");

    let (refusing, p) = profile_of(
        &env,
        AgentConfig {
            refuse_context_id: true,
            ..fast()
        },
        false,
        &["--send-test", "hello"],
    );
    assert_eq!(p["clientContextId"], "refused", "{p}");
    assert_eq!(p["dedup"], "no", "{p}");
    let sent = refusing.stats().messages;
    assert!(
        sent[0].context_id.is_some() && sent[1].context_id.is_none(),
        "{sent:?}"
    );

    let p = bent(
        AgentConfig {
            no_streaming: true,
            ..fast()
        },
        false,
        &[],
    );
    assert_eq!(p["subscribe"], "none", "{p}");
    assert_eq!(p["unknownTaskSubscribeCode"], "-32004", "{p}");
}

#[test]
fn a_card_that_cannot_be_read_exits_1_and_stores_nothing() {
    let env = TestEnv::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    drop(listener);
    let out = probe(&env, &url, &[]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("was not probed; nothing was stored"),
        "{}",
        stderr(&out)
    );
    assert!(!env.journal().exists(), "no journal was created");
    let out = env.run(["agents", "probe", &url, "--send-test", " "]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
}

#[test]
fn a_probe_after_the_intent_lets_an_unlookable_send_be_resent_once() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        no_list_tasks: true,
        dedup: true,
        ..fast()
    });
    crashing(
        &env,
        "after-send",
        &["delegate", "w/s", "--agent", &a.url(), "hello"],
    );
    let mid = the_attempt(&env, "w/s")["messageId"]
        .as_str()
        .unwrap()
        .to_owned();
    let p = probed(&env, &a.url(), &["--send-test", "ping"])["profile"].clone();
    assert_eq!(
        (p["listTasks"].as_str(), p["dedup"].as_str()),
        (Some("none"), Some("yes"))
    );
    let out = reconcile(&env, &[]);
    assert_ne!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    let row = the_attempt(&env, "w/s");
    assert_ne!(row["state"], "UNCERTAIN", "{row}");
    assert!(
        row["taskId"].is_string(),
        "the resend found the task: {row}"
    );
    assert_eq!(
        a.stats().tasks_per_message_id.get(&mid),
        Some(&1),
        "the agent de-duplicated the resend"
    );
    let events = env.run(["inspect", "w/s", "--events", "--format", "json"]);
    assert!(
        stdout(&events).contains("dedup-trusted"),
        "{}",
        stdout(&events)
    );
}

#[test]
fn a_probe_older_than_the_intent_does_not_count() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        no_list_tasks: true,
        dedup: true,
        ..fast()
    });
    let p = probed(&env, &a.url(), &["--send-test", "ping"])["profile"].clone();
    assert_eq!(p["dedup"], "yes");
    crashing(
        &env,
        "after-send",
        &["delegate", "w/s", "--agent", &a.url(), "hello"],
    );
    let mid = the_attempt(&env, "w/s")["messageId"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = reconcile(&env, &[]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(the_attempt(&env, "w/s")["state"], "UNCERTAIN");
    assert_eq!(a.stats().tasks_per_message_id.get(&mid), Some(&1));
}

#[test]
fn a_probe_over_http_json_asks_the_same_questions_on_that_binding() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        binding: ServedBinding::HttpJson,
        ..fast()
    });
    one_finished_task(&env, &a);
    let before = a.stats().tasks.len();
    let p = probed(&env, &a.url(), &[])["profile"].clone();
    assert_eq!(a.stats().tasks.len(), before, "no remote task");
    let bindings = p["bindings"].as_array().unwrap();
    assert_eq!(bindings.len(), 1, "{p}");
    assert_eq!(bindings[0]["binding"], "HTTP+JSON");
    assert_eq!(bindings[0]["chosen"], true);
    assert_eq!(p["listTasks"], "ok", "{p}");
    assert_eq!(p["timestampFilter"], "ok", "{p}");
    assert_eq!(p["subscribe"], "ok", "{p}");
    // HTTP+JSON names its errors by reason.
    assert_eq!(p["unknownTaskSubscribeCode"], "TASK_NOT_FOUND", "{p}");
    assert_eq!(p["terminalSubscribeCode"], "UNSUPPORTED_OPERATION", "{p}");
    assert_eq!(p["clientContextId"], "accepted", "{p}");
    let p = probed(&env, &a.url(), &["--send-test", "hello"])["profile"].clone();
    assert_eq!(
        (p["dedup"].as_str(), p["historyKept"].as_str()),
        (Some("no"), Some("yes")),
        "{p}"
    );
}
