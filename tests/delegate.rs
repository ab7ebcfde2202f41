//! `delegate` end to end: the binary against scripted agents on loopback and real journals.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use a2a_recover::scripted_agent::AgentConfig;
use serde_json::Value;

use crate::common::commands::{attempts, delegate, messages_with_id, the_attempt};
use crate::common::{Background, TestEnv, agent, code, fast, stderr, stdout};

/// Runs `delegate` with a crash point armed; asserts it aborted.
fn delegate_crashing(env: &TestEnv, point: &str, step: &str, url: &str, text: &str) {
    let out = env
        .cmd()
        .env("A2A_RECOVER_CRASH_AT", point)
        .args(["delegate", step, "--agent", url, text])
        .output()
        .expect("run");
    assert_eq!(
        out.status.signal(),
        Some(6),
        "expected SIGABRT at {point}: {out:?}"
    );
}

#[test]
fn every_scenario_is_delegated_and_inspected() {
    let env = TestEnv::new();
    let a = agent(fast());
    let scenarios = [
        ("work", "work:2 please", "SUBMITTED"),
        ("ask", "ask for a room", "SUBMITTED"),
        ("auth", "auth me", "SUBMITTED"),
        ("fail", "fail now", "SUBMITTED"),
        ("reject", "reject this", "SUBMITTED"),
        ("direct", "direct answer", "REPLIED"),
        ("echo", "hello there", "SUBMITTED"),
    ];
    for (step, text, _) in scenarios {
        let out = delegate(&env, &format!("trip-42/{step}"), &a.url(), text, &[]);
        assert_eq!(code(&out), 0, "{step}: {}", stderr(&out));
        assert!(
            stdout(&out).starts_with(&format!("delegated trip-42/{step} to http://127.0.0.1:"))
        );
    }
    let stats = a.stats();
    let rows = attempts(&env, Some("trip-42"));
    assert_eq!(rows.len(), scenarios.len());
    for ((step, text, state), row) in scenarios.iter().zip(&rows) {
        assert_eq!(row["step"], *step);
        assert_eq!(row["state"], *state, "{row}");
        assert_eq!(row["workflow"], "trip-42");
        assert_eq!(row["attempt"], 1);
        assert_eq!(row["workflowState"], "ACTIVE");
        let mid = row["messageId"].as_str().unwrap();
        let seen: Vec<_> = stats
            .messages
            .iter()
            .filter(|m| m.message_id == mid)
            .collect();
        assert_eq!(seen.len(), 1, "{step}");
        assert_eq!(seen[0].text, *text);
        assert_eq!(seen[0].context_id.as_deref(), row["contextId"].as_str());
        if *state == "REPLIED" {
            assert!(row["taskId"].is_null());
        } else {
            let task = stats.tasks.iter().find(|t| t.message_id == mid).unwrap();
            assert_eq!(row["taskId"], task.id.as_str());
        }
    }
    // The table shows every step, piped as a plain layout.
    let table = env.run(["inspect", "trip-42"]);
    assert_eq!(code(&table), 0);
    let text = stdout(&table);
    assert!(text.starts_with("STEP  "), "{text}");
    for (step, _, state) in scenarios {
        assert!(
            text.lines().any(|l| l.contains(step) && l.contains(state)),
            "{step} missing:\n{text}"
        );
    }
}

#[test]
fn a_re_run_on_a_recorded_step_sends_nothing() {
    let env = TestEnv::new();
    let a = agent(fast());
    assert_eq!(code(&delegate(&env, "w/s", &a.url(), "hello", &[])), 0);
    let before = a.stats().messages.len();
    let again = delegate(&env, "w/s", &a.url(), "hello", &[]);
    assert_eq!(code(&again), 0, "{}", stderr(&again));
    assert!(
        stdout(&again).contains("is already delegated"),
        "{}",
        stdout(&again)
    );
    assert_eq!(a.stats().messages.len(), before);
    // In JSON the re-run reports the existing attempt and prints its row.
    let json = delegate(&env, "w/s", &a.url(), "hello", &["--format", "json"]);
    let types: Vec<String> = stdout(&json)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(types, ["begin", "action", "attempt", "summary"]);
    assert_eq!(a.stats().messages.len(), before);
    // A direct reply is recorded too: a re-run sends nothing either.
    assert_eq!(code(&delegate(&env, "w/d", &a.url(), "direct hi", &[])), 0);
    let before = a.stats().messages.len();
    let again = delegate(&env, "w/d", &a.url(), "direct hi", &[]);
    assert_eq!(code(&again), 0);
    assert!(stdout(&again).contains("REPLIED"));
    assert_eq!(a.stats().messages.len(), before);
}

#[test]
fn a_crash_after_the_intent_then_a_re_run_sends_exactly_once() {
    let env = TestEnv::new();
    let a = agent(fast());
    delegate_crashing(&env, "after-intent", "trip/hotel", &a.url(), "book a room");
    let row = the_attempt(&env, "trip/hotel");
    assert_eq!(row["state"], "INTENT");
    assert!(row["interfaceUrl"].is_null(), "never sent: {row}");
    assert!(a.stats().messages.is_empty());
    let out = delegate(&env, "trip/hotel", &a.url(), "book a room", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let after = the_attempt(&env, "trip/hotel");
    assert_eq!(after["messageId"], row["messageId"]);
    assert_eq!(after["state"], "SUBMITTED");
    let stats = a.stats();
    assert_eq!(stats.messages.len(), 1);
    assert_eq!(
        messages_with_id(&stats, row["messageId"].as_str().unwrap()),
        1
    );
}

#[test]
fn a_crash_after_the_send_is_found_not_resent() {
    let env = TestEnv::new();
    let a = agent(fast());
    delegate_crashing(
        &env,
        "after-send:trip/hotel",
        "trip/hotel",
        &a.url(),
        "ask please",
    );
    let row = the_attempt(&env, "trip/hotel");
    assert_eq!(row["state"], "INTENT");
    assert!(row["interfaceUrl"].is_string(), "{row}");
    let mid = row["messageId"].as_str().unwrap().to_owned();
    assert_eq!(a.stats().tasks_per_message_id.get(&mid), Some(&1));

    let out = delegate(&env, "trip/hotel", &a.url(), "ask please", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("found trip/hotel"),
        "{}",
        stdout(&out)
    );
    let stats = a.stats();
    assert_eq!(
        stats.tasks_per_message_id.get(&mid),
        Some(&1),
        "a second task"
    );
    assert_eq!(messages_with_id(&stats, &mid), 1);
    let row = the_attempt(&env, "trip/hotel");
    let task = stats.tasks.iter().find(|t| t.message_id == mid).unwrap();
    assert_eq!(row["taskId"], task.id.as_str());
    // The ask scenario has reached its question by now; the look recorded what it found.
    assert_eq!(row["state"], "INPUT_REQUIRED", "{row}");
    assert_eq!(row["pendingQuestion"], "two rooms or one?");
}

#[test]
fn a_crash_after_the_send_to_an_agent_refusing_context_ids_is_found_by_time() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        refuse_context_id: true,
        ..fast()
    });
    // A first step teaches the journal that this agent refuses client context ids.
    let first = delegate(&env, "trip/flight", &a.url(), "hello", &[]);
    assert_eq!(code(&first), 0, "{}", stderr(&first));
    let flight = the_attempt(&env, "trip/flight");
    assert_eq!(flight["state"], "SUBMITTED");
    let agent_ctx = flight["contextId"].as_str().unwrap();
    let flight_task = a
        .stats()
        .tasks
        .into_iter()
        .find(|t| t.id == flight["taskId"].as_str().unwrap())
        .unwrap();
    assert_eq!(
        flight_task.context_id, agent_ctx,
        "the agent's context id is journaled"
    );

    delegate_crashing(&env, "after-send", "trip/hotel", &a.url(), "hello hotel");
    let row = the_attempt(&env, "trip/hotel");
    assert!(
        row["contextId"].is_null(),
        "no client context id for this agent: {row}"
    );
    let mid = row["messageId"].as_str().unwrap().to_owned();
    assert_eq!(a.stats().tasks_per_message_id.get(&mid), Some(&1));

    let out = delegate(&env, "trip/hotel", &a.url(), "hello hotel", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("found trip/hotel"),
        "{}",
        stdout(&out)
    );
    let stats = a.stats();
    assert_eq!(
        stats.tasks_per_message_id.get(&mid),
        Some(&1),
        "a second task"
    );
    assert_eq!(messages_with_id(&stats, &mid), 1);
    let row = the_attempt(&env, "trip/hotel");
    assert!(row["contextId"].is_string());
    assert_eq!(
        row["taskId"],
        stats
            .tasks
            .iter()
            .find(|t| t.message_id == mid)
            .unwrap()
            .id
            .as_str()
    );
}

#[test]
fn a_crash_at_the_context_id_refusal_creates_one_task_in_the_end() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        refuse_context_id: true,
        ..fast()
    });
    // The refusal is the first answer: the crash comes before it is journaled.
    delegate_crashing(&env, "after-send", "trip/car", &a.url(), "hello car");
    let mid = the_attempt(&env, "trip/car")["messageId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        a.stats()
            .tasks_per_message_id
            .get(&mid)
            .copied()
            .unwrap_or(0),
        0
    );
    let out = delegate(
        &env,
        "trip/car",
        &a.url(),
        "hello car",
        &["--format", "json"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let actions: Vec<(String, String)> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "action")
        .map(|v| {
            (
                v["action"].as_str().unwrap().to_owned(),
                v["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        actions,
        [
            ("look".to_owned(), "absent".to_owned()),
            ("send".to_owned(), "context-refused".to_owned()),
            ("send".to_owned(), "SUBMITTED".to_owned()),
        ]
    );
    assert_eq!(a.stats().tasks_per_message_id.get(&mid), Some(&1));
}

#[test]
fn without_list_tasks_a_crash_after_the_send_ends_uncertain() {
    let env = TestEnv::new();
    let a = agent(AgentConfig {
        no_list_tasks: true,
        ..fast()
    });
    delegate_crashing(&env, "after-send", "trip/hotel", &a.url(), "hello");
    let mid = the_attempt(&env, "trip/hotel")["messageId"]
        .as_str()
        .unwrap()
        .to_owned();
    for _ in 0..2 {
        let out = delegate(&env, "trip/hotel", &a.url(), "hello", &[]);
        assert_eq!(code(&out), 4, "{}", stderr(&out));
        assert!(stdout(&out).contains("UNCERTAIN"), "{}", stdout(&out));
        assert!(stdout(&out).contains("nothing was resent"));
        assert_eq!(messages_with_id(&a.stats(), &mid), 1, "resent");
    }
    let row = the_attempt(&env, "trip/hotel");
    assert_eq!(row["state"], "UNCERTAIN");
    assert!(
        row["remedy"]["command"]
            .as_str()
            .unwrap()
            .contains("resolve trip/hotel")
    );
}

#[test]
fn an_unreachable_agent_leaves_the_intent_and_exits_3() {
    let env = TestEnv::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/");
    let out = delegate(&env, "w/s", &url, "hello", &[]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(stdout(&out).contains("stays INTENT"), "{}", stdout(&out));
    assert!(stderr(&out).contains("hint:"), "{}", stderr(&out));
    let row = the_attempt(&env, "w/s");
    assert_eq!(row["state"], "INTENT");
    assert!(row["error"].as_str().unwrap().contains("connect"), "{row}");
}

/// An agent whose card is fine but whose JSON-RPC endpoint answers HTTP 403.
fn refusing_agent() -> Background<(String, tokio::task::JoinHandle<()>)> {
    use axum::routing::{get, post};
    Background::start(|| async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!(
            "http://127.0.0.1:{}/",
            listener.local_addr().unwrap().port()
        );
        let card = serde_json::json!({
            "name": "refuser", "description": "refuses everything", "version": "1",
            "supportedInterfaces": [{"url": format!("{base}rpc"), "protocolBinding": "JSONRPC",
                                     "protocolVersion": "1.0"}],
            "capabilities": {}, "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"], "skills": []
        });
        let app = axum::Router::new()
            .route(
                "/.well-known/agent-card.json",
                get(move || async move { axum::Json(card) }),
            )
            .route(
                "/rpc",
                post(|| async { (axum::http::StatusCode::FORBIDDEN, "forbidden") }),
            );
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        (base, server)
    })
}

#[test]
fn a_definitive_refusal_is_refused_and_exits_4() {
    let env = TestEnv::new();
    let server = refusing_agent();
    let url = server.get().0.clone();
    let out = delegate(&env, "w/s", &url, "hello", &[]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    assert!(stdout(&out).contains("REFUSED"), "{}", stdout(&out));
    assert!(stderr(&out).contains("HTTP 403"), "{}", stderr(&out));
    let row = the_attempt(&env, "w/s");
    assert_eq!(row["state"], "REFUSED");
    assert!(row["remedy"]["command"].is_string());
    // A re-run reports it and sends nothing new.
    let again = delegate(&env, "w/s", &url, "hello", &[]);
    assert_eq!(code(&again), 4);
}

#[test]
fn usage_errors_journal_nothing() {
    let env = TestEnv::new();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["delegate", "w/s", "--agent", "not a url", "hi"],
            "bad --agent",
        ),
        (
            vec!["delegate", "w/s", "--agent", "ftp://127.0.0.1/", "hi"],
            "http",
        ),
        (
            vec![
                "delegate",
                "w/s",
                "--agent",
                "http://user:pw@127.0.0.1:9/",
                "hi",
            ],
            "user:password@",
        ),
        (
            vec![
                "delegate",
                "w/s",
                "--agent",
                "http://127.0.0.1:9/",
                "--metadata",
                "[1]",
                "hi",
            ],
            "JSON object",
        ),
        (
            vec![
                "delegate",
                "w/s",
                "--agent",
                "http://127.0.0.1:9/",
                "--metadata",
                "{bad",
                "hi",
            ],
            "not valid JSON",
        ),
        (
            vec![
                "delegate",
                "w/s",
                "--agent",
                "http://127.0.0.1:9/",
                "--token-env",
                "A2A_TEST_UNSET_TOKEN",
                "hi",
            ],
            "A2A_TEST_UNSET_TOKEN",
        ),
        (
            vec!["delegate", "a/b/c", "--agent", "http://127.0.0.1:9/", "hi"],
            "bad name",
        ),
        (
            vec!["delegate", "w/s~x", "--agent", "http://127.0.0.1:9/", "hi"],
            "`~`",
        ),
        (vec!["delegate", "w/s", "hi"], "--agent URL"),
        (
            vec!["delegate", "w/s", "--skill", "book", "hi"],
            "no registered agent advertises the skill `book`",
        ),
        (
            vec!["delegate", "--plan", "trip.toml"],
            "cannot read the plan",
        ),
        (
            vec!["delegate", "--plan", "trip.toml", "--follow"],
            "--follow cannot be combined with --plan",
        ),
    ];
    for (args, needle) in cases {
        let out = env.run(&args);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("hint:"), "{args:?}: {}", stderr(&out));
        assert!(!env.journal().exists(), "{args:?} created the journal");
    }
    // The userinfo never shows, even in the error.
    let out = env.run([
        "delegate",
        "w/s",
        "--agent",
        "http://user:pw@127.0.0.1:9/",
        "hi",
    ]);
    assert!(!stderr(&out).contains("pw"), "{}", stderr(&out));
}

#[test]
fn different_text_for_a_journaled_step_is_a_usage_error() {
    let env = TestEnv::new();
    let a = agent(fast());
    assert_eq!(
        code(&delegate(&env, "trip/hotel", &a.url(), "one room", &[])),
        0
    );
    let events = || {
        let out = env.run(["inspect", "trip/hotel", "--events", "--format", "json"]);
        stdout(&out)
            .lines()
            .filter(|l| l.contains(r#""type":"event""#))
            .count()
    };
    let before = (events(), a.stats().messages.len());
    let out = delegate(&env, "trip/hotel", &a.url(), "two rooms", &[]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("different text"), "{}", stderr(&out));
    assert!(stderr(&out).contains("hint: "), "{}", stderr(&out));
    let other_agent = delegate(&env, "trip/hotel", "http://127.0.0.1:9/", "one room", &[]);
    assert_eq!(code(&other_agent), 2);
    assert!(stderr(&other_agent).contains("different agent"));
    assert_eq!((events(), a.stats().messages.len()), before);
}

#[test]
fn a_corrupt_journal_exits_1_and_stays_untouched() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.journal().parent().unwrap()).unwrap();
    let garbage = b"this is not a journal\n".repeat(500);
    std::fs::write(env.journal(), &garbage).unwrap();
    for args in [
        vec!["delegate", "w/s", "--agent", "http://127.0.0.1:9/", "hi"],
        vec!["inspect"],
    ] {
        let out = env.run(&args);
        assert_eq!(code(&out), 1, "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("not an SQLite database"),
            "{}",
            stderr(&out)
        );
        assert!(stderr(&out).contains("hint: the file was left untouched"));
        assert_eq!(std::fs::read(env.journal()).unwrap(), garbage);
    }
}

#[test]
fn the_journal_is_private() {
    let env = TestEnv::new();
    let a = agent(fast());
    let deep = env.path().join("new/dir/journal.sqlite3");
    let out = env
        .cmd()
        .args(["--journal", deep.to_str().unwrap()])
        .args(["delegate", "w/s", "--agent", &a.url(), "hi"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&env.path().join("new")), 0o700);
    assert_eq!(mode(&env.path().join("new/dir")), 0o700);
    assert_eq!(mode(&deep), 0o600);
}

#[test]
fn the_token_value_is_in_no_journal_byte() {
    let env = TestEnv::new();
    let a = agent(fast());
    let token = "tok-9f8e7d6c5b4a-SECRET";
    let run = |crash: Option<&str>| {
        let mut cmd = env.cmd();
        cmd.env("A2A_TEST_TOKEN", token);
        if let Some(point) = crash {
            cmd.env("A2A_RECOVER_CRASH_AT", point);
        }
        cmd.args([
            "delegate",
            "w/s",
            "--agent",
            &a.url(),
            "--token-env",
            "A2A_TEST_TOKEN",
            "hi",
        ])
        .output()
        .unwrap()
    };
    // A crash keeps the write-ahead log on disk: search it too.
    let crashed = run(Some("after-send"));
    assert_eq!(crashed.status.signal(), Some(6));
    let wal = env.journal().with_file_name("journal.sqlite3-wal");
    let check = |what: &str| {
        for path in [env.journal(), wal.clone()] {
            let bytes = std::fs::read(&path).unwrap_or_default();
            assert!(
                !bytes.windows(token.len()).any(|w| w == token.as_bytes()),
                "{what}: the token is in {}",
                path.display()
            );
        }
    };
    assert!(
        std::fs::metadata(&wal).unwrap().len() > 0,
        "no WAL to search"
    );
    check("after a crash");
    let out = run(None);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    check("after recovery");
    let row = the_attempt(&env, "w/s");
    assert_eq!(row["tokenEnv"], "A2A_TEST_TOKEN");
    assert!(!row.to_string().contains(token));
}

#[test]
fn json_output_has_begin_actions_and_a_summary() {
    let env = TestEnv::new();
    let a = agent(fast());
    let out = delegate(&env, "w/s", &a.url(), "hello", &["--format", "json"]);
    assert_eq!(code(&out), 0);
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines[0],
        serde_json::json!({"type": "begin", "formatVersion": 1, "command": "delegate"})
    );
    assert_eq!(lines[1]["type"], "action");
    assert_eq!(lines[1]["action"], "intent");
    assert_eq!(lines[2]["action"], "send");
    assert_eq!(lines[2]["outcome"], "SUBMITTED");
    assert!(lines[2]["detail"]["taskId"].is_string());
    for l in &lines[1..3] {
        assert_eq!(
            (l["workflow"].as_str(), l["step"].as_str()),
            (Some("w"), Some("s"))
        );
        assert_eq!(l["attempt"], 1);
    }
    assert_eq!(
        lines[3],
        serde_json::json!({"type": "summary", "command": "delegate",
                           "outcomes": {"SUBMITTED": 1}, "exitCode": 0,
                           "journal": env.journal().display().to_string()})
    );
    assert_eq!(lines.len(), 4);
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
}

#[test]
fn a_step_being_delegated_by_a_live_process_is_left_alone() {
    use a2a_recover::journal::{Claim, Journal, StepName};
    let env = TestEnv::new();
    let a = agent(fast());
    delegate_crashing(&env, "after-intent", "w/s", &a.url(), "hello");
    // This test process, alive on this host, holds the attempt's lease.
    let journal = Journal::open(&env.journal(), Duration::from_secs(10)).unwrap();
    let record = journal
        .step(&StepName::parse("w/s").unwrap())
        .unwrap()
        .unwrap();
    let id = record.latest().unwrap().id;
    assert!(matches!(
        journal.claim(id, Duration::from_secs(600)).unwrap(),
        Claim::Claimed(_)
    ));
    let out = delegate(&env, "w/s", &a.url(), "hello", &[]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("(pid {} on", std::process::id())),
        "{}",
        stdout(&out)
    );
    assert!(
        a.stats().messages.is_empty(),
        "sent while another process held it"
    );
    journal.release(id).unwrap();
    drop(journal);
    let out = delegate(&env, "w/s", &a.url(), "hello", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(a.stats().messages.len(), 1);
    assert!(the_attempt(&env, "w/s")["state"] == "SUBMITTED");
}

/// `delegate --data JSON` and a plan step's `data` send one data part beside the text; the
/// step keeps it (`inspect STEP` shows it), and data that is not a JSON object is refused
/// before anything is journaled.
#[test]
fn delegate_data_and_a_plan_steps_data_send_one_data_part_beside_the_text() {
    let env = TestEnv::new();
    let a = agent(fast());
    let out = delegate(
        &env,
        "w/rooms",
        &a.url(),
        "book",
        &["--data", r#"{"rooms": 1}"#],
    );
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let last = a.stats().messages.last().cloned().unwrap();
    assert_eq!(last.text, "book");
    assert_eq!(last.data, [serde_json::json!({"rooms": 1})]);
    let out = env.run(["inspect", "w/rooms"]);
    assert!(
        stdout(&out).contains("data:       \n    {\n      \"rooms\": 1\n    }"),
        "{}",
        stdout(&out)
    );

    let plan = crate::common::write(
        env.path(),
        "plan.toml",
        &format!(
            "workflow = \"p\"\n[[step]]\nname = \"s\"\nagent = \"{}\"\ntext = \"go\"\n\
             data = {{ nights = 2, guest = {{ name = \"Ada\" }} }}\n",
            a.url()
        ),
    );
    let out = env.run(["delegate", "--plan", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let last = a.stats().messages.last().cloned().unwrap();
    assert_eq!(last.text, "go");
    assert_eq!(
        last.data,
        [serde_json::json!({"nights": 2, "guest": {"name": "Ada"}})]
    );

    let sent = a.stats().messages.len();
    for bad in ["[1]", "{"] {
        let out = delegate(&env, "w/bad", &a.url(), "book", &["--data", bad]);
        assert_eq!(code(&out), 2, "{bad}: {}", stderr(&out));
    }
    assert_eq!(a.stats().messages.len(), sent, "nothing sent");
    let out = env.run(["inspect", "w/bad"]);
    assert!(stderr(&out).contains("unknown step"), "nothing journaled");
}
