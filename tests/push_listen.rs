//! `listen` against a real process: pushes with our token are journaled (a terminal one after
//! a read-back), and a forged token, an unknown config id, a foreign task and an oversized body
//! get the same answer and journal nothing; the token is in no output and no journal file.

use std::fmt::Write as _;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use a2a_recover::scripted_agent::AgentConfig;
use rustix::process::{Pid, Signal};
use serde_json::{Value, json};

use crate::common::commands::{attempts, the_attempt};
use crate::common::transcript::Transcript;
use crate::common::{TestEnv, agent, code, fast, json_lines, stderr};

/// A running `listen` and what it wrote on stderr.
struct Listen {
    child: Child,
    addr: String,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Listen {
    fn start(env: &TestEnv, every: &str) -> Self {
        let mut child = env
            .std_cmd()
            .args([
                "-vvv",
                "listen",
                "--bind",
                "127.0.0.1:0",
                "--metrics-bind",
                "127.0.0.1:0",
                "--reconcile-every",
                every,
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn listen");
        let err = child.stderr.take().expect("stderr");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut seen = Vec::new();
        let addr = loop {
            let line = lines
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|e| panic!("listen did not start ({e}): {seen:?}"));
            seen.push(line.clone());
            if let Some(rest) = line.strip_prefix("listening for pushes on ") {
                break rest.split_whitespace().next().unwrap().to_owned();
            }
        };
        Self {
            child,
            addr,
            lines,
            seen,
        }
    }

    fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops it with SIGTERM; returns its exit code and everything it wrote on stderr.
    fn stop(mut self) -> (i32, Vec<u8>) {
        let pid = Pid::from_raw(i32::try_from(self.child.id()).unwrap()).unwrap();
        rustix::process::kill_process(pid, Signal::TERM).expect("kill");
        let status = self.child.wait().expect("wait");
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(line);
        }
        (
            status.code().unwrap_or(-1),
            self.seen.join("\n").into_bytes(),
        )
    }
}

/// POSTs `body` to `addr` + `path` with `headers`; returns the status and the answer's body.
fn post(addr: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut req = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        let _ = write!(req, "{k}: {v}\r\n");
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let _ = s.write_all(body);
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = answer
        .split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    (status, body)
}

/// The events of a step, as `inspect --events` prints them.
fn events(env: &TestEnv, step: &str) -> Vec<Value> {
    let out = env.run(["inspect", step, "--events", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    json_lines(&out)
        .into_iter()
        .filter(|r| r["type"] == "event")
        .collect()
}

/// Waits until `step`'s attempt is in `state` (hang guard: 30 s).
fn wait_state(env: &TestEnv, step: &str, state: &str) -> Value {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let row = the_attempt(env, step);
        if row["state"] == state {
            return row;
        }
        assert!(Instant::now() < until, "{step} never became {state}: {row}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn status_update(task: &str, state: &str) -> Vec<u8> {
    json!({"statusUpdate": {"taskId": task, "contextId": "c",
                            "status": {"state": state}}})
    .to_string()
    .into_bytes()
}

#[test]
fn pushes_are_journaled_and_forgeries_journal_nothing() {
    let env = TestEnv::new().real_clock();
    let a = agent(AgentConfig {
        push: true,
        tick: Duration::from_millis(50),
        ..fast()
    });
    let listen = Listen::start(&env, "0");
    let mut transcript = Transcript::default();
    let out = env.run([
        "delegate",
        "w/s",
        "--agent",
        &a.url(),
        "work:1",
        "--push",
        &listen.base(),
    ]);
    transcript.keep("delegate", &out);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let config = a.stats().messages[0].push_config.clone().expect("a config");
    let token = config["token"].as_str().unwrap().to_owned();
    let id = config["id"].as_str().unwrap().to_owned();
    let path = format!("/push/{id}");
    let task = the_attempt(&env, "w/s")["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let json_ct = ("Content-Type", "application/json");

    // Refused, all alike, and nothing journaled.
    let before = events(&env, "w/s").len();
    let forged = post(
        &listen.addr,
        &path,
        &[json_ct, ("X-A2A-Notification-Token", "forged")],
        &status_update(&task, "TASK_STATE_WORKING"),
    );
    let unknown = post(
        &listen.addr,
        "/push/0123456789abcdef0123456789abcdef",
        &[json_ct, ("X-A2A-Notification-Token", &token)],
        &status_update(&task, "TASK_STATE_WORKING"),
    );
    let foreign = post(
        &listen.addr,
        &path,
        &[json_ct, ("X-A2A-Notification-Token", &token)],
        &status_update("another-task", "TASK_STATE_COMPLETED"),
    );
    let big = vec![b' '; (1 << 20) + 1];
    let oversized = post(
        &listen.addr,
        &path,
        &[json_ct, ("X-A2A-Notification-Token", &token)],
        &big,
    );
    assert_eq!(forged.0, 404);
    for refused in [&unknown, &foreign, &oversized] {
        assert_eq!(refused, &forged);
    }
    assert_eq!(events(&env, "w/s").len(), before);

    // A terminal push (the token as a bearer credential) is read back, then journaled. The
    // agent's task must be done by then: a read that still says WORKING wins over the push.
    a.settle();
    let auth = format!("Bearer {token}");
    let (status, _) = post(
        &listen.addr,
        &path,
        &[
            ("Content-Type", "application/a2a+json"),
            ("Authorization", &auth),
        ],
        &status_update(&task, "TASK_STATE_COMPLETED"),
    );
    assert!((200..300).contains(&status), "{status}");
    let row = wait_state(&env, "w/s", "COMPLETED");
    assert_eq!(row["push"]["configId"], id.as_str());
    // The same push again changes nothing a second time.
    let settled = events(&env, "w/s").len();
    let (status, _) = post(
        &listen.addr,
        &path,
        &[json_ct, ("X-A2A-Notification-Token", &token)],
        &status_update(&task, "TASK_STATE_WORKING"),
    );
    assert!((200..300).contains(&status), "{status}");
    assert_eq!(the_attempt(&env, "w/s")["state"], "COMPLETED");
    assert_eq!(events(&env, "w/s").len(), settled);
    assert_eq!(attempts(&env, None).len(), 1);

    // While it runs: the database and its WAL.
    transcript.keep_journal_files(&env.journal_file());
    let (exit, err) = listen.stop();
    assert_eq!(exit, 0, "{}", String::from_utf8_lossy(&err));
    transcript.keep_bytes("listen's stderr".to_owned(), err);
    transcript.assert_free_of(&token);
}

#[test]
fn a_lost_push_is_caught_by_the_timers_pass() {
    let env = TestEnv::new().real_clock();
    // The agent takes push configs and never pushes: every push is lost.
    let a = agent(AgentConfig {
        push: true,
        tick: Duration::from_millis(20),
        ..fast()
    });
    let listen = Listen::start(&env, "1s");
    let out = env.run([
        "delegate",
        "w/s",
        "--agent",
        &a.url(),
        "work:1",
        "--push",
        &listen.base(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    wait_state(&env, "w/s", "COMPLETED");
    let status = env.run(["status"]);
    let shown = crate::common::stdout(&status);
    assert!(
        shown
            .lines()
            .any(|l| l.contains("Listener:") && l.contains(&listen.addr)),
        "{shown}"
    );
    let (exit, err) = listen.stop();
    assert_eq!(exit, 0, "{}", String::from_utf8_lossy(&err));
}
