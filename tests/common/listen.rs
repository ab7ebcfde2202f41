//! A running `listen` process for tests, raw POSTs to it, and waits on what it journals.

use std::fmt::Write as _;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use rustix::process::{Pid, Signal};
use serde_json::{Value, json};

use super::TestEnv;
use super::child::Guarded;
use super::commands::the_attempt;
use super::wait::{GUARD, wait_for};

/// A running `listen` and what it wrote on stderr; killed when dropped.
pub struct Listen {
    child: Guarded,
    /// The address pushes are received on.
    pub addr: String,
    /// The address `/metrics` is served on.
    pub metrics_addr: String,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Listen {
    /// Starts `listen -vvv` on free ports with `--reconcile-every every`.
    pub fn start(env: &TestEnv, every: &str) -> Self {
        Self::start_with(env, every, &[], &[])
    }

    /// As [`Listen::start`], with global flags before `listen` and variables set.
    pub fn start_with(env: &TestEnv, every: &str, global: &[&str], vars: &[(&str, &str)]) -> Self {
        let mut cmd = env.std_cmd();
        cmd.args(global);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let mut child = Guarded::spawn(
            cmd.args([
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
            .stderr(Stdio::piped()),
            "listen",
        );
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
        // `listening for pushes on ADDR (metrics on ADDR); …`
        let (addr, metrics_addr) = loop {
            let line = lines
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|e| panic!("listen did not start ({e}): {seen:?}"));
            seen.push(line.clone());
            if let Some(rest) = line.strip_prefix("listening for pushes on ") {
                let metrics = rest
                    .split("(metrics on ")
                    .nth(1)
                    .and_then(|m| m.split(')').next())
                    .expect("the metrics address");
                break (
                    rest.split_whitespace().next().unwrap().to_owned(),
                    metrics.to_owned(),
                );
            }
        };
        Self {
            child,
            addr,
            metrics_addr,
            lines,
            seen,
        }
    }

    /// The base URL agents are asked to push to.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Returns its `/metrics` page.
    pub fn metrics(&self) -> String {
        let mut s = TcpStream::connect(&self.metrics_addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let req = format!(
            "GET /metrics HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.metrics_addr
        );
        s.write_all(req.as_bytes()).unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        answer
    }

    /// Stops it with SIGTERM; returns its exit code and everything it wrote on stderr.
    pub fn stop(self) -> (i32, Vec<u8>) {
        let pid = Pid::from_raw(i32::try_from(self.child.id()).unwrap()).unwrap();
        rustix::process::kill_process(pid, Signal::TERM).expect("kill");
        self.wait_exit()
    }

    /// Waits for it to end by itself (a crash point); returns what [`Listen::stop`] returns
    /// (-1 for a death by a signal).
    pub fn wait_exit(mut self) -> (i32, Vec<u8>) {
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
pub fn post(addr: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> (u16, String) {
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

/// Waits until `step`'s attempt is in `state` (hang guard: [`GUARD`]).
pub fn wait_state(env: &TestEnv, step: &str, state: &str) -> Value {
    wait_for(&format!("{step} to become {state}"), GUARD, || {
        let row = the_attempt(env, step);
        if row["state"] == state {
            Ok(row)
        } else {
            Err(row)
        }
    })
}

/// A v1.0 push body: a status update of `task` to `state`.
pub fn status_update(task: &str, state: &str) -> Vec<u8> {
    json!({"statusUpdate": {"taskId": task, "contextId": "c",
                            "status": {"state": state}}})
    .to_string()
    .into_bytes()
}
