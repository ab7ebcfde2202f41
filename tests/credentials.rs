//! Credentials: the bearer token named by `--token-env` reaches the agent's own origin and
//! nothing else — no byte of the journal (database, WAL, lock file), no event, no log line at
//! `-vvv`, no error message, no JSON output, no other origin (unless `--allow-cross-origin`),
//! even when a hostile agent echoes it back. URLs with userinfo are refused (exit 2); URLs shown
//! in logs and errors have their query secrets redacted.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Output;

use a2a_recover::scripted_agent::{AgentConfig, ApiKey, KeyLocation, ServedBinding};

use crate::common::child::Guarded;
use crate::common::hostile::{CardMode, Hostile, Mode, Script};
use crate::common::transcript::{Transcript, contains};
use crate::common::wait::poll;
use crate::common::{TestEnv, code, stderr, stdout};

const VAR: &str = "A2A_TEST_TOKEN";

fn token() -> String {
    format!("s3cr3t-{}", uuid::Uuid::new_v4().simple())
}

/// Runs the binary with the token in its environment.
fn run(env: &TestEnv, token: &str, args: &[&str]) -> Output {
    env.cmd()
        .env(VAR, token)
        .args(args)
        .output()
        .expect("run the binary")
}

/// Every file next to the journal: the database, its WAL and shared memory, the lock file.
fn journal_files(env: &TestEnv) -> Vec<(String, Vec<u8>)> {
    let dir = env.journal().parent().expect("a directory").to_owned();
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .expect("the journal directory")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.is_file())
        .map(|p| (name(&p), std::fs::read(&p).expect("read")))
        .collect();
    files.sort();
    files
}

fn name(p: &Path) -> String {
    p.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one token followed through every place it could leak"
)]
fn the_token_is_in_no_journal_byte_log_line_error_or_json() {
    let env = TestEnv::new();
    let token = token();
    let h = Hostile::start();
    h.set_script(Script {
        state: "TASK_STATE_INPUT_REQUIRED".to_owned(),
        status_text: Some("which dates?".to_owned()),
        ..Script::default()
    });
    let mut seen = Transcript::default();
    let mut step = |what: &str, args: &[&str], want: i32| {
        let out = run(&env, &token, args);
        assert_eq!(code(&out), want, "{what}: {}", stderr(&out));
        seen.keep(what, &out);
    };
    let url = h.url().to_owned();
    step(
        "agents add",
        &["agents", "add", &url, "--token-env", VAR, "-vvv"],
        0,
    );
    step(
        "delegate",
        &[
            "delegate",
            "w/a",
            "--agent",
            &url,
            "--token-env",
            VAR,
            "go",
            "-vvv",
        ],
        0,
    );
    step(
        "delegate (json)",
        &[
            "delegate",
            "w/b",
            "--agent",
            &url,
            "--token-env",
            VAR,
            "go",
            "--format",
            "json",
            "-vvv",
        ],
        0,
    );
    step("reconcile", &["reconcile", "-vvv"], 4);
    step(
        "reconcile (json)",
        &["reconcile", "--format", "json", "-vvv"],
        4,
    );
    step("reply", &["reply", "w/a", "these", "-vvv"], 0);
    step("follow", &["follow", "w/a", "-vvv"], 4);
    step(
        "follow (json)",
        &["follow", "w/b", "--format", "json", "-vvv"],
        4,
    );
    step("inspect", &["inspect", "w/a", "--events", "-vvv"], 0);
    step(
        "inspect (json)",
        &["inspect", "w/a", "--events", "--format", "json", "-vvv"],
        0,
    );
    step(
        "agents list",
        &["agents", "list", "--format", "json", "-vvv"],
        0,
    );

    // A hostile agent that echoes the Authorization header back in its error answers.
    h.set_mode(Mode::EchoAuth);
    step(
        "delegate to an echoing agent",
        &[
            "delegate",
            "w/c",
            "--agent",
            &url,
            "--token-env",
            VAR,
            "go",
            "-vvv",
        ],
        4,
    );
    step(
        "reconcile against an echoing agent",
        &["reconcile", "-vvv"],
        4,
    );
    step(
        "follow against an echoing agent",
        &["follow", "w/a", "--max-reconnects", "0", "-vvv"],
        4,
    );
    step(
        "follow (json) against an echoing agent",
        &[
            "follow",
            "w/b",
            "--max-reconnects",
            "0",
            "--format",
            "json",
            "-vvv",
        ],
        4,
    );
    step(
        "reconcile (json) against an echoing agent",
        &["reconcile", "--format", "json", "-vvv"],
        4,
    );
    step("inspect --pending", &["inspect", "--pending", "-vvv"], 0);
    step(
        "inspect (json) after the echo",
        &["inspect", "--format", "json", "-vvv"],
        0,
    );

    // A crash right after a send leaves the journal's WAL as it was at that instant.
    h.set_mode(Mode::Honest);
    let out = env
        .cmd()
        .env(VAR, &token)
        .env("A2A_RECOVER_CRASH_AT", "after-send:w/d")
        .args([
            "delegate",
            "w/d",
            "--agent",
            &url,
            "--token-env",
            VAR,
            "go",
            "-vvv",
        ])
        .output()
        .expect("run");
    assert_eq!(out.status.signal(), Some(6), "{}", stderr(&out));
    seen.keep("a crashed delegate", &out);
    let files = journal_files(&env);
    assert!(
        files
            .iter()
            .any(|(n, b)| n.ends_with("-wal") && !b.is_empty()),
        "a WAL to search: {:?}",
        files.iter().map(|(n, b)| (n, b.len())).collect::<Vec<_>>()
    );
    for (n, bytes) in &files {
        assert!(
            !contains(bytes, &token),
            "the token is in the journal file `{n}`"
        );
    }
    seen.assert_free_of(&token);

    // The token was really used: the agent received it on every call.
    let calls: Vec<_> = h
        .seen()
        .into_iter()
        .filter(|s| !s.method.is_empty())
        .collect();
    assert!(calls.len() >= 6, "{calls:?}");
    let bearer = format!("Bearer {token}");
    for call in &calls {
        assert_eq!(
            call.authorization.as_deref(),
            Some(bearer.as_str()),
            "{call:?}"
        );
    }
    // And only its name was journaled.
    let out = env.run(["inspect", "w/a", "--format", "json"]);
    assert!(stdout(&out).contains(&format!("\"tokenEnv\":\"{VAR}\"")));
}

#[test]
fn the_token_never_goes_to_another_origin_unless_allowed() {
    let env = TestEnv::new();
    let token = token();
    let bearer = format!("Bearer {token}");
    let card = Hostile::start();
    let other = Hostile::start();
    card.set_interface_url(&format!("{}/rpc", other.url()));

    let out = run(
        &env,
        &token,
        &[
            "delegate",
            "w/x",
            "--agent",
            card.url(),
            "--token-env",
            VAR,
            "go",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = run(&env, &token, &["reconcile"]);
    assert_eq!(code(&out), 3, "a running task: {}", stderr(&out));
    let card_fetch = card.seen();
    assert_eq!(card_fetch.len(), 1, "{card_fetch:?}");
    assert_eq!(
        card_fetch[0].authorization.as_deref(),
        Some(bearer.as_str()),
        "the card's own origin gets the token"
    );
    let calls = other.seen();
    assert_eq!(
        calls.iter().map(|s| s.method.as_str()).collect::<Vec<_>>(),
        ["SendMessage", "GetTask"]
    );
    for call in &calls {
        assert_eq!(
            call.authorization, None,
            "the token went to another origin: {call:?}"
        );
    }

    let out = run(
        &env,
        &token,
        &[
            "delegate",
            "w/y",
            "--agent",
            card.url(),
            "--token-env",
            VAR,
            "--allow-cross-origin",
            "go",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let last = other.seen().pop().expect("a send");
    assert_eq!(last.method, "SendMessage");
    assert_eq!(
        last.authorization.as_deref(),
        Some(bearer.as_str()),
        "allowed"
    );

    // A card that redirects to another origin: the token is dropped at the redirect.
    let redirecting = Hostile::start();
    redirecting.set_card(CardMode::RedirectTo(format!(
        "{}/.well-known/agent-card.json",
        other.url()
    )));
    let before = other.seen().len();
    let out = run(
        &env,
        &token,
        &[
            "delegate",
            "w/z",
            "--agent",
            redirecting.url(),
            "--token-env",
            VAR,
            "go",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let after = other.seen();
    let fetched = &after[before];
    assert!(
        fetched.method.is_empty(),
        "the card fetch first: {fetched:?}"
    );
    assert_eq!(fetched.authorization, None, "the token followed a redirect");
    for call in &after[before..] {
        assert_eq!(call.authorization, None, "{call:?}");
    }
}

#[test]
fn urls_with_userinfo_are_refused_with_exit_2() {
    let env = TestEnv::new();
    let h = Hostile::start();
    let port = h.url().rsplit(':').next().expect("a port").to_owned();
    let with_userinfo = format!("http://operator:pa55-w0rd@127.0.0.1:{port}/");
    for args in [
        vec!["delegate", "w/u", "--agent", &with_userinfo, "go"],
        vec!["agents", "add", &with_userinfo],
        vec![
            "delegate",
            "w/u",
            "--agent",
            &with_userinfo,
            "go",
            "-vvv",
            "--format",
            "json",
        ],
    ] {
        let out = env.run(&args);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        let all = format!("{}{}", stdout(&out), stderr(&out));
        assert!(!all.contains("pa55-w0rd"), "{all}");
        assert!(stderr(&out).contains("hint: "), "{}", stderr(&out));
    }
    assert!(h.seen().is_empty(), "nothing was fetched or sent");
    assert!(!env.journal().exists(), "nothing was journaled");

    // A card whose interface URL carries userinfo is unusable; the password is never shown.
    h.set_interface_url(&format!("http://operator:pa55-w0rd@127.0.0.1:{port}/rpc"));
    let out = env.run(["delegate", "w/v", "--agent", h.url(), "go", "-vvv"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!all.contains("pa55-w0rd"), "{all}");
    assert!(stderr(&out).contains("user:password@"), "{}", stderr(&out));
    assert_eq!(h.count("SendMessage"), 0);
    let out = env.run(["agents", "add", h.url()]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(!stderr(&out).contains("pa55-w0rd"), "{}", stderr(&out));
}

#[test]
fn query_secrets_are_redacted_in_logs_and_errors() {
    let env = TestEnv::new();
    // A closed port: the connection is refused.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let agent = format!("http://127.0.0.1:{closed}/?api_key=QS3CR3T-1");
    let out = env.run(["delegate", "w/q", "--agent", &agent, "go", "-vvv"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(!err.contains("QS3CR3T"), "{err}");
    assert!(err.contains("api_key=REDACTED"), "{err}");
    assert!(!stdout(&out).contains("QS3CR3T"), "{}", stdout(&out));

    let out = env.run(["reconcile", "-vvv"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(!stderr(&out).contains("QS3CR3T"), "{}", stderr(&out));
    assert!(stderr(&out).contains("REDACTED"), "{}", stderr(&out));
    let out = env.run(["inspect", "-vvv"]);
    assert!(!stdout(&out).contains("QS3CR3T"), "{}", stdout(&out));

    // An interface URL with a query secret, answering 502: redacted in the error and the logs.
    let h = Hostile::start();
    h.set_interface_url(&format!("{}/rpc?key=QS3CR3T-2&x", h.url()));
    h.set_mode(Mode::Html(502));
    let out = env.run(["delegate", "w/r", "--agent", h.url(), "go", "-vvv"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(!err.contains("QS3CR3T"), "{err}");
    assert!(err.contains("/rpc?key=REDACTED&x"), "{err}");
    let out = env.run(["reconcile", "-vvv"]);
    assert!(!stderr(&out).contains("QS3CR3T"), "{}", stderr(&out));
}

/// Writes a token command: a script that counts its runs in `runs` and prints `first` on its
/// first run, `later` on every other one (a token that expires once).
fn token_script(dir: &Path, first: &str, later: &str) -> String {
    use std::os::unix::fs::PermissionsExt as _;
    let runs = dir.join("runs");
    let script = dir.join("token.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nn=$(cat '{runs}' 2>/dev/null || echo 0)\nn=$((n + 1))\n\
             echo \"$n\" > '{runs}'\nif [ \"$n\" -eq 1 ]; then echo '{first}'; else echo \
             '{later}'; fi\n",
            runs = runs.display()
        ),
    )
    .expect("write the script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    script.display().to_string()
}

fn runs(dir: &Path) -> u32 {
    std::fs::read_to_string(dir.join("runs")).map_or(0, |s| s.trim().parse().expect("a count"))
}

#[test]
fn a_token_command_is_run_again_after_a_401_and_only_the_command_is_journaled() {
    use crate::common::commands::the_attempt;
    use crate::common::{agent, fast};
    let env = TestEnv::new();
    let (expired, fresh) = (token(), token());
    let a = agent(a2a_recover::scripted_agent::AgentConfig {
        require_token: Some(fresh.clone()),
        ..fast()
    });
    let dir = tempfile::tempdir().expect("a temp dir");
    let script = token_script(dir.path(), &expired, &fresh);
    // The command line is split without a shell: an argument with a space stays one.
    let cmd = format!("{script} 'an argument'");
    let mut seen = Transcript::default();
    let url = a.url();
    let out = run(
        &env,
        "unused",
        &[
            "delegate",
            "w/a",
            "--agent",
            &url,
            "--token-cmd",
            &cmd,
            "hello",
            "-vvv",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    seen.keep("delegate", &out);
    // The first token was refused (401): the command ran once more, and the send went through.
    assert_eq!(runs(dir.path()), 2);
    assert_eq!(a.stats().messages.len(), 1, "one message reached the agent");
    let row = the_attempt(&env, "w/a");
    assert_eq!(row["tokenCmd"], cmd.as_str());
    assert!(row["tokenEnv"].is_null(), "{row}");
    // A later pass (another process) runs the journaled command again.
    a.settle();
    let out = run(&env, "unused", &["reconcile", "-vvv"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    seen.keep("reconcile", &out);
    assert!(runs(dir.path()) >= 3, "reconcile ran the command");
    assert_eq!(the_attempt(&env, "w/a")["state"], "COMPLETED");
    let out = run(
        &env,
        "unused",
        &["inspect", "w/a", "--format", "json", "-vvv"],
    );
    seen.keep("inspect", &out);
    for (file, bytes) in journal_files(&env) {
        seen.keep_bytes(file, bytes);
    }
    seen.assert_free_of(&expired);
    seen.assert_free_of(&fresh);
}

#[test]
fn a_token_command_that_fails_or_prints_nothing_sends_nothing() {
    use crate::common::{agent, fast};
    let env = TestEnv::new();
    let a = agent(fast());
    let url = a.url();
    let dir = tempfile::tempdir().expect("a temp dir");
    let secret = token();
    let failing = crate::common::write(
        dir.path(),
        "fail.sh",
        &format!("#!/bin/sh\necho '{secret}'\nexit 3\n"),
    );
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&failing, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let failing = failing.display().to_string();
    for (cmd, problem) in [
        (failing.as_str(), "exited with status 3"),
        ("true", "printed nothing on stdout"),
        ("/nonexistent/token-printer", "could not be started"),
        ("'unbalanced", "cannot be split"),
    ] {
        let out = run(
            &env,
            "unused",
            &[
                "delegate",
                "w/x",
                "--agent",
                &url,
                "--token-cmd",
                cmd,
                "hello",
            ],
        );
        assert_eq!(code(&out), 2, "{cmd}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("--token-cmd: token command `"), "{err}");
        assert!(err.contains(problem), "{cmd}: {err}");
        assert!(!err.contains(&secret), "the command's output is in: {err}");
    }
    assert!(a.stats().messages.is_empty(), "nothing was sent");
}

/// The forms a query string may carry `key` in (`+` for a space, or `%20`).
fn key_forms(key: &str) -> Vec<String> {
    let form: String = url::form_urlencoded::byte_serialize(key.as_bytes()).collect();
    let percent = form.replace('+', "%20");
    vec![key.to_owned(), form, percent]
}

/// An agent whose card asks for an API key (`location`, `name`) gets the `--token-env` secret
/// there on every call of every command and pass, never as a bearer: `delegate`, `follow` to
/// its question, `reply`, the look after a crash right after a send (ListTasks), `reconcile`;
/// the key is in no journal byte, no output at `-vvv`, no JSON.
fn an_api_key_goes_where_the_card_says_on_every_pass(
    location: KeyLocation,
    name: &str,
    binding: ServedBinding,
) {
    use crate::common::commands::the_attempt;
    use crate::common::{agent, fast};
    let env = TestEnv::new();
    // `+`, `/` and `=` are encoded in a query string: the scrub must know those forms too.
    let key = format!("k3y+/={}", uuid::Uuid::new_v4().simple());
    let a = agent(AgentConfig {
        require_api_key: Some(ApiKey {
            location,
            name: name.to_owned(),
            key: key.clone(),
        }),
        binding,
        ..fast()
    });
    let url = a.url();
    let mut seen = Transcript::default();
    let mut step = |what: &str, args: &[&str], want: i32| {
        let out = run(&env, &key, args);
        assert_eq!(code(&out), want, "{what}: {}{}", stdout(&out), stderr(&out));
        seen.keep(what, &out);
    };
    let delegate = |step: &str, text: &'static str| {
        [
            "delegate",
            step,
            "--agent",
            &url,
            "--token-env",
            VAR,
            text,
            "-vvv",
        ]
        .map(str::to_owned)
    };
    let args = delegate("w/ask", "ask about rooms");
    step("delegate", &args.each_ref().map(String::as_str), 0);
    step("follow to the question", &["follow", "w/ask", "-vvv"], 4);
    assert_eq!(the_attempt(&env, "w/ask")["state"], "INPUT_REQUIRED");
    step("reply", &["reply", "w/ask", "two rooms", "-vvv"], 0);
    let args = delegate("w/book", "book");
    step("delegate", &args.each_ref().map(String::as_str), 0);
    // A crash right after a send: the next pass looks the task up (ListTasks) before anything.
    let args = delegate("w/crash", "crash");
    let out = env
        .cmd()
        .env(VAR, &key)
        .env("A2A_RECOVER_CRASH_AT", "after-send:w/crash")
        .args(args)
        .output()
        .expect("run");
    assert_eq!(out.status.signal(), Some(6), "{}", stderr(&out));
    let crashed = out;
    a.settle();
    step("reconcile", &["reconcile", "-vvv"], 0);
    step("follow", &["follow", "w/ask", "-vvv"], 0);
    step(
        "inspect (json)",
        &["inspect", "--format", "json", "-vvv"],
        0,
    );
    step(
        "inspect events (json)",
        &["inspect", "w/crash", "--events", "--format", "json", "-vvv"],
        0,
    );
    for step in ["w/ask", "w/book", "w/crash"] {
        assert_eq!(the_attempt(&env, step)["state"], "COMPLETED", "{step}");
    }
    let stats = a.stats();
    let sent = |text: &str| stats.messages.iter().filter(|m| m.text == text).count();
    assert_eq!(
        (sent("ask about rooms"), sent("two rooms"), sent("crash")),
        (1, 1, 1),
        "each message sent once: the crashed send was found, not resent"
    );
    seen.keep("a crashed delegate", &crashed);
    for (file, bytes) in journal_files(&env) {
        seen.keep_bytes(file, bytes);
    }
    for form in key_forms(&key) {
        seen.assert_free_of(&form);
    }
}

#[test]
fn an_api_key_in_a_header_goes_on_every_call() {
    an_api_key_goes_where_the_card_says_on_every_pass(
        KeyLocation::Header,
        "X-API-Key",
        ServedBinding::Jsonrpc,
    );
}

#[test]
fn an_api_key_in_the_query_goes_on_every_call() {
    an_api_key_goes_where_the_card_says_on_every_pass(
        KeyLocation::Query,
        "api_key",
        ServedBinding::Jsonrpc,
    );
}

/// Over HTTP+JSON, where reads are `GET`s with their own query (ListTasks' filters), the key is
/// one more query parameter.
#[test]
fn an_api_key_in_the_query_goes_on_every_http_json_call() {
    an_api_key_goes_where_the_card_says_on_every_pass(
        KeyLocation::Query,
        "api_key",
        ServedBinding::HttpJson,
    );
}

#[test]
fn an_api_key_in_a_cookie_goes_on_every_call() {
    an_api_key_goes_where_the_card_says_on_every_pass(
        KeyLocation::Cookie,
        "agent_session",
        ServedBinding::Jsonrpc,
    );
}

/// An agent asking for an API key refuses a send without it, or with a wrong one: the attempt
/// is `REFUSED` (exit 4, in `inspect --pending`), nothing reached the agent, and the hint names
/// the credential flags. A v0.3 card's scheme (`type: apiKey`, `in`) is read the same way.
#[test]
fn a_missing_or_wrong_api_key_refuses_the_send_with_exit_4() {
    use crate::common::commands::the_attempt;
    use crate::common::{agent, fast};
    let env = TestEnv::new();
    let key = token();
    let a = agent(AgentConfig {
        require_api_key: Some(ApiKey {
            location: KeyLocation::Header,
            name: "X-API-Key".to_owned(),
            key: key.clone(),
        }),
        protocol_v03: true,
        ..fast()
    });
    let url = a.url();
    let out = run(&env, &key, &["delegate", "w/none", "--agent", &url, "book"]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    assert!(stderr(&out).contains("HTTP 401"), "{}", stderr(&out));
    assert!(stderr(&out).contains("--token-env"), "{}", stderr(&out));
    let out = env
        .cmd()
        .env(VAR, "not-the-key")
        .args(["delegate", "w/wrong", "--agent", &url, "--token-env", VAR])
        .arg("book")
        .output()
        .expect("run");
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    for step in ["w/none", "w/wrong"] {
        assert_eq!(the_attempt(&env, step)["state"], "REFUSED", "{step}");
    }
    let out = env.run(["inspect", "--pending"]);
    assert!(
        stdout(&out).contains("w/none") && stdout(&out).contains("w/wrong"),
        "{}",
        stdout(&out)
    );
    assert!(a.stats().messages.is_empty(), "nothing reached the agent");
    // The right key, in the header the v0.3 card names: delivered and followed to the end.
    let out = run(
        &env,
        &key,
        &[
            "delegate",
            "w/right",
            "--agent",
            &url,
            "--token-env",
            VAR,
            "book",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    a.settle();
    let out = run(&env, &key, &["reconcile"]);
    assert_eq!(
        the_attempt(&env, "w/right")["state"],
        "COMPLETED",
        "{}",
        stderr(&out)
    );
}

/// Issue 30, hole 5: a token command that prints its token and leaves a child holding its
/// stdout (`sleep 3600 &`) neither holds `delegate` up for the child's hour nor outlives it:
/// the whole read is bounded, and the command's process group is ended once it has exited.
#[test]
fn a_token_command_whose_child_holds_its_stdout_neither_hangs_nor_lingers() {
    use crate::common::{agent, fast};
    let env = TestEnv::new();
    let secret = token();
    let a = agent(AgentConfig {
        require_token: Some(secret.clone()),
        ..fast()
    });
    let dir = tempfile::tempdir().expect("a temp dir");
    let (leader, child) = (dir.path().join("leader"), dir.path().join("child"));
    let script = crate::common::write(
        dir.path(),
        "token.sh",
        &format!(
            "#!/bin/sh\necho $$ > '{leader}'\nsleep 3600 &\necho $! > '{child}'\necho '{secret}'\n",
            leader = leader.display(),
            child = child.display()
        ),
    );
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let url = a.url();
    let mut cmd = env.std_cmd();
    cmd.args(["delegate", "w/a", "--agent", &url, "--token-cmd"])
        .arg(&script)
        .args(["hello", "-vv"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let run = Guarded::spawn(&mut cmd, "the binary");
    let pid = run.id();
    // The bound is a minute, far past the documented 10 s and far short of the child's hour.
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let _ = tx.send(run.wait_with_output());
    });
    let Ok(out) = rx.recv_timeout(std::time::Duration::from_secs(60)) else {
        let sleeper = std::fs::read_to_string(&child).unwrap_or_default();
        for p in [pid.to_string(), sleeper.trim().to_owned()] {
            if let Some(p) = p.parse().ok().and_then(rustix::process::Pid::from_raw) {
                let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
            }
        }
        let _ = waiter.join();
        panic!("`delegate` still ran a minute after its token command printed the token");
    };
    let out = out.expect("wait for the binary");
    let _ = waiter.join();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        a.stats().messages.len(),
        1,
        "the send went through with the token"
    );
    // Nothing of the command's process group is left: not the child that held the pipe, nor
    // any other process of the group the command led.
    let read_pid = |path: &Path| -> i32 {
        std::fs::read_to_string(path)
            .expect("the script wrote it")
            .trim()
            .parse()
            .expect("a pid")
    };
    let (group, sleeper) = (read_pid(&leader), read_pid(&child));
    let gone = poll(std::time::Duration::from_secs(30), || {
        let left = live_in_group(group);
        if left.is_empty() { Ok(left) } else { Err(left) }
    });
    let (Ok(left) | Err(left)) = gone;
    if !left.is_empty() {
        for p in left.iter().chain([&sleeper]) {
            if let Some(p) = rustix::process::Pid::from_raw(*p) {
                let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
            }
        }
    }
    assert!(
        left.is_empty(),
        "processes of the token command's group {group} outlived it: {left:?} (the child was \
         {sleeper})"
    );
    assert!(
        !is_live(sleeper),
        "the child {sleeper} outlived the command"
    );
}

/// The live (not zombie) processes whose process group is `group`, from `/proc`.
fn live_in_group(group: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| stat_of(pid).is_some_and(|(state, pgrp)| state != 'Z' && pgrp == group))
        .collect()
}

/// Whether `pid` is a live process (not gone, not a zombie).
fn is_live(pid: i32) -> bool {
    stat_of(pid).is_some_and(|(state, _)| state != 'Z')
}

/// A process's state and process group, from `/proc/PID/stat` (after the parenthesized name,
/// which may hold spaces).
fn stat_of(pid: i32) -> Option<(char, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut rest = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = rest.next()?.chars().next()?;
    let pgrp = rest.nth(1)?.parse().ok()?;
    Some((state, pgrp))
}
