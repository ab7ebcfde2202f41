//! Running a `--token-cmd` command: its own process group, a bound on the whole run (the
//! wait and the read of its output), and the group ended afterwards.
//!
//! Invariants: [`run`] returns within [`TOKEN_CMD_TIMEOUT`] (plus the moment a killed
//! process takes to die), whatever the command or the processes it starts do with its output;
//! when it returns, nothing of the command's process group is left running; a command still
//! running when the process ends (its caller was dropped on a signal) is ended by
//! [`end_all`]. Callers on the async runtime run it on a blocking thread
//! (`Credential::resolve`).

use std::io::Read as _;
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitId, WaitIdOptions};

/// How long a `--token-cmd` command may run, from its start to the end of its output.
pub(crate) const TOKEN_CMD_TIMEOUT: Duration = Duration::from_secs(10);

/// The most a `--token-cmd` command may print on stdout.
pub(crate) const TOKEN_CMD_MAX_OUTPUT: usize = 64 * 1024;

/// How often the command is checked for its exit.
const POLL: Duration = Duration::from_millis(5);

/// The process groups of the commands running now (each led by its command).
static RUNNING: Mutex<Vec<Pid>> = Mutex::new(Vec::new());

/// Why a command gave no output to use; the caller words it.
#[derive(Debug)]
pub(crate) enum Failure {
    /// It could not be started.
    Start(std::io::ErrorKind),
    /// It did not exit within [`TOKEN_CMD_TIMEOUT`].
    Timeout,
    /// It exited, but its output stayed open past [`TOKEN_CMD_TIMEOUT`]: a process outside its
    /// process group holds it.
    OutputHeld,
    /// Its output could not be read, or it could not be waited for.
    Io(std::io::ErrorKind),
    /// It exited with this status.
    Status(ExitStatus),
}

/// Runs `argv` (program first) in its own process group, stdin and stderr closed, and returns
/// what it printed on stdout (at most [`TOKEN_CMD_MAX_OUTPUT`] + 1 bytes: more is too much).
///
/// Once the command has exited (or at the deadline), its whole process group is killed: a
/// child it left behind holding its stdout (`sleep 60 &`) neither holds the read up nor
/// outlives it.
pub(crate) fn run(argv: &[String]) -> Result<Vec<u8>, Failure> {
    let deadline = Instant::now() + TOKEN_CMD_TIMEOUT;
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| Failure::Start(e.kind()))?;
    let group = Group::led_by(&child);
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let limit = u64::try_from(TOKEN_CMD_MAX_OUTPUT).unwrap_or(u64::MAX) + 1;
        let read = (&mut stdout).take(limit).read_to_end(&mut out);
        // Drain the rest so the command is not blocked writing to a full pipe.
        let _ = std::io::copy(&mut stdout, &mut std::io::sink());
        let _ = tx.send(read.map(|_| out));
    });
    let exited = exited_by(&child, deadline);
    // The leader has exited (it is not reaped yet, so its group id cannot be reused) or has
    // run out of time: end it and whatever it started, which closes their ends of the pipe.
    drop(group);
    let status = child.wait().map_err(|e| Failure::Io(e.kind()))?;
    match exited {
        Ok(true) => {}
        Ok(false) => return Err(Failure::Timeout),
        Err(kind) => return Err(Failure::Io(kind)),
    }
    let out = match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(read) => read.map_err(|e| Failure::Io(e.kind()))?,
        Err(_) => return Err(Failure::OutputHeld),
    };
    if !status.success() {
        return Err(Failure::Status(status));
    }
    Ok(out)
}

/// Waits until the command has exited (left unreaped) or `deadline` passes; `Ok(false)` at the
/// deadline.
fn exited_by(child: &Child, deadline: Instant) -> Result<bool, std::io::ErrorKind> {
    let pid = Pid::from_child(child);
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    loop {
        match rustix::process::waitid(WaitId::Pid(pid), options) {
            Ok(Some(_)) => return Ok(true),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL),
            Ok(None) => return Ok(false),
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(std::io::Error::from(e).kind()),
        }
    }
}

/// A running command's process group, killed (every process in it) on drop.
struct Group(Pid);

impl Group {
    fn led_by(child: &Child) -> Self {
        let pid = Pid::from_child(child);
        RUNNING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(pid);
        Self(pid)
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        let _ = rustix::process::kill_process_group(self.0, Signal::KILL);
        RUNNING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|p| *p != self.0);
    }
}

/// Kills the process group of every command still running: the process is ending (a signal
/// dropped the command that waited for one; its thread would finish it only later).
pub fn end_all() {
    let running = std::mem::take(
        &mut *RUNNING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    for pid in running {
        let _ = rustix::process::kill_process_group(pid, Signal::KILL);
    }
}
