//! A child process read line by line as it runs: a test waits for what it says (a JSON line on
//! stdout, a line on stderr), acts (a signal, a lock released), then reads the rest.

use std::io::{BufRead as _, BufReader, Read};
use std::process::{ExitStatus, Output};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};
use serde_json::Value;

use super::child::Guarded;
use super::wait::{GUARD, poll};

/// The longest a process may take to exit once told to (a signal, a lock released) before the
/// test calls it hung.
pub const HANG_GUARD: Duration = Duration::from_secs(15);

/// A running child whose stdout and stderr are read line by line on threads; killed when
/// dropped.
pub struct Running {
    child: Guarded,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
    err_lines: mpsc::Receiver<String>,
    err_seen: Vec<String>,
}

/// Sends each line of `from` on a channel (bytes that are not UTF-8 replaced), from a thread
/// of its own that reads to the end.
fn lines_of(from: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).split(b'\n') {
            let Ok(line) = line else { break };
            let _ = tx.send(String::from_utf8_lossy(&line).into_owned());
        }
    });
    lines
}

/// Receives into `seen` until `enough(seen)` holds; panics naming `what` after `until`.
fn receive_until(
    lines: &mpsc::Receiver<String>,
    seen: &mut Vec<String>,
    what: &str,
    until: Instant,
    enough: impl Fn(&[String]) -> bool,
) {
    while !enough(seen) {
        let left = until.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => seen.push(line),
            Err(e) => panic!("no {what} ({e}); seen:\n{}", seen.join("\n")),
        }
    }
}

impl Running {
    /// Reads `child`, spawned with stdout and stderr piped.
    pub fn new(child: impl Into<Guarded>) -> Self {
        let mut child = child.into();
        let out = child.stdout.take().expect("piped stdout");
        let err = child.stderr.take().expect("piped stderr");
        Self {
            child,
            lines: lines_of(out),
            seen: Vec::new(),
            err_lines: lines_of(err),
            err_seen: Vec::new(),
        }
    }

    /// Waits until `enough` holds for the JSON lines seen so far on stdout (hang guard: 60 s).
    pub fn wait_for(&mut self, what: &str, enough: impl Fn(&[Value]) -> bool) {
        let until = Instant::now() + GUARD;
        receive_until(&self.lines, &mut self.seen, what, until, |seen| {
            enough(&json_of(seen))
        });
    }

    /// Waits until the child writes a stderr line containing `needle` (hang guard: 60 s).
    pub fn wait_for_stderr(&mut self, needle: &str) {
        let what = format!("stderr line with {needle:?}");
        let until = Instant::now() + GUARD;
        receive_until(&self.err_lines, &mut self.err_seen, &what, until, |seen| {
            seen.iter().any(|l| l.contains(needle))
        });
    }

    /// Returns the next line of stdout (it is also kept among those seen); panics at `until`.
    pub fn next_line(&mut self, until: Instant) -> String {
        let before = self.seen.len();
        receive_until(&self.lines, &mut self.seen, "line", until, |seen| {
            seen.len() > before
        });
        self.seen[before].clone()
    }

    /// The JSON lines seen so far on stdout (other lines are skipped).
    pub fn json(&self) -> Vec<Value> {
        json_of(&self.seen)
    }

    /// Sends `sig`.
    pub fn signal(&self, sig: Signal) {
        let pid = Pid::from_raw(i32::try_from(self.child.id()).unwrap()).unwrap();
        rustix::process::kill_process(pid, sig).expect("kill");
    }

    /// Waits for the exit (at most [`HANG_GUARD`]), then reads the rest of its output; returns
    /// the status, stderr and the JSON lines of stdout.
    pub fn finish(self) -> (ExitStatus, String, Vec<Value>) {
        let out = self.output();
        let text = String::from_utf8_lossy(&out.stdout);
        let json = json_of(text.lines());
        (out.status, super::stderr(&out), json)
    }

    /// Waits for the exit (at most [`HANG_GUARD`]), then reads the rest of its output.
    pub fn output(mut self) -> Output {
        let exited = poll(HANG_GUARD, || {
            self.child.try_wait().expect("wait").ok_or(())
        });
        let Ok(status) = exited else {
            panic!(
                "still running {HANG_GUARD:?} after it was told to end; stdout:\n{}",
                self.seen.join("\n")
            );
        };
        for (lines, seen) in [
            (&self.lines, &mut self.seen),
            (&self.err_lines, &mut self.err_seen),
        ] {
            while let Ok(line) = lines.recv_timeout(Duration::from_secs(10)) {
                seen.push(line);
            }
        }
        let text = |seen: &[String]| {
            let mut text = seen.join("\n");
            if !text.is_empty() {
                text.push('\n');
            }
            text
        };
        Output {
            status,
            stdout: text(&self.seen).into_bytes(),
            stderr: text(&self.err_seen).into_bytes(),
        }
    }
}

/// The lines that are JSON, parsed (other lines are skipped).
fn json_of<S: AsRef<str>>(lines: impl IntoIterator<Item = S>) -> Vec<Value> {
    lines
        .into_iter()
        .filter_map(|l| serde_json::from_str(l.as_ref()).ok())
        .collect()
}
