//! Effect verification: the independent read that decides whether a step's effect exists.
//!
//! A COMPLETED status is the agent's claim, not proof. A step declared with an effect carries a
//! `verify` recipe the operator wrote ([`Verification`]):
//!
//! - a command, run with `sh -c` ([`run_command`]): exit 0 = the effect exists, 1 = absent,
//!   anything else — another code, a signal, a timeout (`--command-timeout`), a spawn failure —
//!   = unknown;
//! - a URL, placeholders percent-encoded: 2xx = exists, 404 = absent, anything else (another
//!   status, a connection error, a timeout) = unknown.
//!
//! # Invariants
//!
//! - Unknown is never read as "gone": only exit 1 or HTTP 404 give [`Found::Absent`].
//! - Commands get remote values only through environment variables (`placeholders`);
//!   stdin is null; stdout and stderr are captured and bounded ([`OUTPUT_LIMIT`] each, the rest
//!   read and dropped); the command runs in its own process group, which is killed (SIGKILL)
//!   once the command exits or at the timeout, so a `sleep` under `sh` cannot outlive it, and a
//!   child left holding the output (`sleep 60 &`) does not hold the run up.
//! - [`verify_effect`] is what the reconcile pass calls for a COMPLETED step with a declared
//!   effect: it records `claimed`, then `verified`, `absent` or `unknown`, and never touches an
//!   effect that `compensate` owns (`compensating`, `compensated`, `compensation-failed`).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::a2a::A2aClient;
use crate::a2a::error::one_line;
use crate::journal::{Attempt, EffectState, Journal, JournalError, Step};
use crate::placeholders::{self, Collision, CommandEnv, Fill, FillError, Values};
use crate::plan_file::Verification;

/// The most bytes kept of a command's stdout, and of its stderr.
pub const OUTPUT_LIMIT: usize = 64 * 1024;
/// The exit status reported when the command could not be started (as a shell would).
pub const SPAWN_FAILED: i32 = 127;

/// What an independent read found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// The effect exists (exit 0, 2xx).
    Exists,
    /// The effect does not exist (exit 1, 404).
    Absent,
    /// The read could not tell.
    Unknown,
}

impl Found {
    /// Returns the effect state a verification of a claimed effect records.
    pub const fn as_effect(self) -> EffectState {
        match self {
            Self::Exists => EffectState::Verified,
            Self::Absent => EffectState::Absent,
            Self::Unknown => EffectState::Unknown,
        }
    }

    /// Returns `exists`, `absent` or `unknown`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Exists => "exists",
            Self::Absent => "absent",
            Self::Unknown => "unknown",
        }
    }
}

/// The result of one verification, with a one-line inert detail (exit code, status, error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// What was found.
    pub found: Found,
    /// How it was found, one line.
    pub detail: String,
    /// Nothing was run: two artifacts map to a variable the command would get, or to a
    /// placeholder of the URL (`found` is then [`Found::Unknown`]; a human decides).
    pub collision: Option<Collision>,
}

impl Check {
    /// A check that found `found`, and how.
    pub fn found(found: Found, detail: String) -> Self {
        Self {
            found,
            detail,
            collision: None,
        }
    }

    /// A check that ran nothing because of a collision: unknown.
    pub fn collided(what: &str, collision: Collision) -> Self {
        Self {
            found: Found::Unknown,
            detail: one_line(&format!("{what} not run: {collision}")),
            collision: Some(collision),
        }
    }
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandStatus {
    /// It exited with this code.
    Exited(i32),
    /// It was killed by this signal.
    Signaled(i32),
    /// It ran past the timeout and was killed with its process group.
    TimedOut(Duration),
    /// It could not be started.
    SpawnFailed(String),
}

/// A finished command: how it ended and its bounded output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRun {
    /// How it ended.
    pub status: CommandStatus,
    /// The first [`OUTPUT_LIMIT`] bytes of stdout (lossy UTF-8).
    pub stdout: String,
    /// The first [`OUTPUT_LIMIT`] bytes of stderr (lossy UTF-8).
    pub stderr: String,
}

impl CommandRun {
    /// Returns the exit code, with [`SPAWN_FAILED`] for a command that could not start.
    pub fn code(&self) -> Option<i32> {
        match self.status {
            CommandStatus::Exited(c) => Some(c),
            CommandStatus::SpawnFailed(_) => Some(SPAWN_FAILED),
            CommandStatus::Signaled(_) | CommandStatus::TimedOut(_) => None,
        }
    }

    /// Returns one inert line saying how it ended (and the start of stderr, if any).
    pub fn summary(&self) -> String {
        let head = match &self.status {
            CommandStatus::Exited(c) => format!("exit {c}"),
            CommandStatus::Signaled(s) => format!("killed by signal {s}"),
            CommandStatus::TimedOut(d) => {
                format!("timed out after {}", crate::a2a::error::fmt_duration(*d))
            }
            CommandStatus::SpawnFailed(e) => format!("could not start `sh`: {e}"),
        };
        let err = self.stderr.trim();
        if err.is_empty() {
            head
        } else {
            one_line(&format!("{head}: {err}"))
        }
    }
}

/// How long a command's output is still read once it has exited and its process group has
/// been killed (a process outside the group may hold a pipe open).
const OUTPUT_GRACE: Duration = Duration::from_secs(2);

/// Reads a pipe to its end, keeping the first `limit` bytes.
async fn read_bounded(pipe: Option<impl AsyncRead + Unpin>, limit: usize) -> Vec<u8> {
    let Some(mut pipe) = pipe else {
        return Vec::new();
    };
    let mut kept = Vec::new();
    let mut buf = vec![0u8; 8192];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = limit.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    kept
}

/// Runs `command` with `sh -c` in `cwd`, with `env` added to (and the `A2A_*` value variables
/// cleared from) the inherited environment; kills its process group at `timeout`.
///
/// `env.files` are written first, each to a file of its own (0600) in a fresh private
/// directory (0700) under the system temporary directory, named by position (never by a
/// remote name); the directory is removed when the command has ended.
pub async fn run_command(
    command: &str,
    cwd: Option<&Path>,
    env: &CommandEnv,
    timeout: Duration,
) -> CommandRun {
    let failed = |e: String| CommandRun {
        status: CommandStatus::SpawnFailed(e),
        stdout: String::new(),
        stderr: String::new(),
    };
    if let Some((name, _)) = env.vars.iter().find(|(_, v)| v.contains('\0')) {
        return failed(format!(
            "`{name}` holds a NUL byte, which an environment variable cannot carry"
        ));
    }
    let files = match ValueFiles::write(&env.files) {
        Ok(files) => files,
        Err(e) => return failed(format!("could not write the artifact files: {e}")),
    };
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    // Values of another step must not leak in from our own environment.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with(placeholders::ARTIFACT_ENV_PREFIX)
            || [
                placeholders::STEP_ENV,
                placeholders::TASK_ID_ENV,
                placeholders::CONTEXT_ID_ENV,
            ]
            .contains(&name.as_ref())
        {
            cmd.env_remove(name.as_ref());
        }
    }
    cmd.envs(env.vars.iter().map(|(k, v)| (k, v)));
    cmd.envs(files.vars());
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => return failed(e.to_string()),
    };
    let pid = child.id();
    // The pipes are read beside the wait (a command that fills one must not block), but the
    // run ends with the command itself: a child it left behind holding its output (`sleep 60 &`)
    // neither holds the run up nor outlives it.
    let stdout = tokio::spawn(read_bounded(child.stdout.take(), OUTPUT_LIMIT));
    let stderr = tokio::spawn(read_bounded(child.stderr.take(), OUTPUT_LIMIT));
    let Ok(status) = tokio::time::timeout(timeout, child.wait()).await else {
        kill_group(pid);
        let _ = child.kill().await;
        stdout.abort();
        stderr.abort();
        return CommandRun {
            status: CommandStatus::TimedOut(timeout),
            stdout: String::new(),
            stderr: String::new(),
        };
    };
    // The command has exited: end whatever it started, which closes their ends of the pipes.
    // (Its group id is not reused while a member of the group lives.)
    kill_group(pid);
    let drained = |task: tokio::task::JoinHandle<Vec<u8>>| async move {
        // A process that left the group (`setsid`) may still hold a pipe: what was read by
        // then is what the command printed.
        match tokio::time::timeout(OUTPUT_GRACE, task).await {
            Ok(Ok(bytes)) => bytes,
            _ => Vec::new(),
        }
    };
    let (out, err) = tokio::join!(drained(stdout), drained(stderr));
    let status = match status {
        Ok(s) => match (s.code(), std::os::unix::process::ExitStatusExt::signal(&s)) {
            (Some(c), _) => CommandStatus::Exited(c),
            (None, Some(sig)) => CommandStatus::Signaled(sig),
            (None, None) => CommandStatus::SpawnFailed("no exit status".to_owned()),
        },
        Err(e) => CommandStatus::SpawnFailed(e.to_string()),
    };
    CommandRun {
        status,
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err).into_owned(),
    }
}

/// The private files of one command run; removed on drop.
struct ValueFiles {
    dir: Option<std::path::PathBuf>,
    vars: Vec<(String, std::path::PathBuf)>,
}

impl ValueFiles {
    fn write(files: &[(String, String)]) -> std::io::Result<Self> {
        use std::io::Write as _;
        use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
        if files.is_empty() {
            return Ok(Self {
                dir: None,
                vars: Vec::new(),
            });
        }
        let dir = std::env::temp_dir().join(format!("a2a-recover-{}", crate::sim_seam::new_uuid()));
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        let mut made = Self {
            dir: Some(dir.clone()),
            vars: Vec::new(),
        };
        for (i, (var, value)) in files.iter().enumerate() {
            let path = dir.join(format!("artifact-{i}"));
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)?;
            f.write_all(value.as_bytes())?;
            made.vars.push((var.clone(), path));
        }
        Ok(made)
    }

    fn vars(&self) -> impl Iterator<Item = (&str, &std::path::Path)> {
        self.vars.iter().map(|(k, p)| (k.as_str(), p.as_path()))
    }
}

impl Drop for ValueFiles {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Kills a command's whole process group (it leads its own, `process_group(0)`).
fn kill_group(pid: Option<u32>) {
    let Some(pid) = pid
        .and_then(|p| i32::try_from(p).ok())
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
}

/// Maps a verification command's run to what it found: 0 exists, 1 absent, else unknown.
pub fn found_by_command(run: &CommandRun) -> Found {
    match run.status {
        CommandStatus::Exited(0) => Found::Exists,
        CommandStatus::Exited(1) => Found::Absent,
        _ => Found::Unknown,
    }
}

/// Maps an HTTP status to what it says: 2xx exists, 404 absent, else unknown.
pub fn found_by_status(status: u16) -> Found {
    match status {
        200..=299 => Found::Exists,
        404 => Found::Absent,
        _ => Found::Unknown,
    }
}

/// Runs a verification recipe with the values of one attempt.
///
/// A placeholder the journal holds no value for makes the result unknown (never absent); two
/// artifacts that map to one variable of the command, or to one placeholder of the URL, run
/// nothing: unknown, with the [`Collision`] ([`Check::collision`]).
pub async fn check(
    client: &A2aClient,
    recipe: &Verification,
    values: &Values,
    cwd: Option<&Path>,
    command_timeout: Duration,
) -> Check {
    match recipe {
        Verification::Command(command) => {
            let env = match values.env() {
                Ok(env) => env,
                Err(c) => return Check::collided("verify command", c),
            };
            let run = run_command(command, cwd, &env, command_timeout).await;
            Check::found(
                found_by_command(&run),
                format!("verify command: {}", run.summary()),
            )
        }
        Verification::Url(template) => {
            let url = match placeholders::fill(template, values, Fill::Url) {
                Ok(url) => url,
                Err(FillError::Collision(c)) => return Check::collided("verify URL", c),
                Err(e @ FillError::Missing(_)) => {
                    return Check::found(Found::Unknown, one_line(&format!("verify URL: {e}")));
                }
            };
            match client.get_url_status(&url).await {
                Ok(status) => Check::found(
                    found_by_status(status),
                    format!("verify URL: HTTP {status}"),
                ),
                Err(e) => Check::found(Found::Unknown, format!("verify URL: {}", e.summary())),
            }
        }
    }
}

/// The verification of a step's effect as recorded on its attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// The effect state now journaled.
    pub effect: EffectState,
    /// How it was found, one line (empty when nothing was run).
    pub detail: String,
}

/// Verifies the declared effect of a step's attempt and journals it: `claimed` first (when the
/// attempt has no effect state yet), then `verified`, `absent` or `unknown`.
///
/// For the reconcile pass. A step without a `verify` recipe,
/// or with one the journal cannot read back, records `unknown`. An effect owned by `compensate`
/// (`compensating`, `compensated`, `compensation-failed`) is returned unchanged, nothing run.
pub async fn verify_effect(
    journal: &Journal,
    client: &A2aClient,
    step: &Step,
    attempt: &Attempt,
    command_timeout: Duration,
) -> Result<Verified, JournalError> {
    if let Some(
        held @ (EffectState::Compensating
        | EffectState::Compensated
        | EffectState::CompensationFailed),
    ) = attempt.effect
    {
        return Ok(Verified {
            effect: held,
            detail: String::new(),
        });
    }
    if attempt.effect.is_none() {
        journal.set_effect(
            attempt.id,
            Some(EffectState::Claimed),
            &json!({"reason": "the step completed"}),
        )?;
    }
    let check = match step.spec.verify.as_ref().map(Verification::from_json) {
        Some(Ok(recipe)) => {
            let artifacts = journal.artifacts(attempt.id)?;
            let values = Values::of_attempt(&step.spec.name, attempt, &artifacts);
            let cwd = step.spec.cwd.as_deref().map(Path::new);
            check(client, &recipe, &values, cwd, command_timeout).await
        }
        Some(Err(e)) => Check::found(Found::Unknown, e.to_string()),
        None => Check::found(
            Found::Unknown,
            "the step declares an effect but no verify recipe".to_owned(),
        ),
    };
    if let Some(c) = &check.collision {
        journal.record_collision(attempt.id, &check.detail, &c.artifact_ids())?;
        return Ok(Verified {
            effect: EffectState::Unknown,
            detail: check.detail,
        });
    }
    let effect = check.found.as_effect();
    journal.set_effect(
        attempt.id,
        Some(effect),
        &json!({"found": check.found.as_str(), "detail": check.detail}),
    )?;
    Ok(Verified {
        effect,
        detail: check.detail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t() -> Duration {
        Duration::from_secs(20)
    }

    #[tokio::test]
    async fn exit_codes_map_to_found() {
        for (cmd, found) in [
            ("exit 0", Found::Exists),
            ("exit 1", Found::Absent),
            ("exit 2", Found::Unknown),
            ("kill -9 $$", Found::Unknown),
            ("no-such-command-a2a-recover", Found::Unknown),
        ] {
            let run = run_command(cmd, None, &CommandEnv::default(), t()).await;
            assert_eq!(found_by_command(&run), found, "{cmd}: {run:?}");
        }
        let run = run_command(
            "no-such-command-a2a-recover",
            None,
            &CommandEnv::default(),
            t(),
        )
        .await;
        assert_eq!(run.code(), Some(127));
        assert!(run.summary().starts_with("exit 127: "), "{}", run.summary());
    }

    /// A command that exits leaving a child holding its output (`sleep 3600 &`) ends with
    /// the command: its output is read, its exit code counts, and the child is killed.
    #[tokio::test]
    async fn a_command_whose_child_holds_its_output_ends_with_it() {
        let dir = std::env::temp_dir().join(format!("a2a-recover-{}", crate::sim_seam::new_uuid()));
        std::fs::create_dir(&dir).unwrap();
        let pid_file = dir.join("pid");
        let cmd = format!(
            "sleep 3600 & echo $! > '{}'; echo found",
            pid_file.display()
        );
        let run = run_command(&cmd, None, &CommandEnv::default(), Duration::from_secs(30)).await;
        assert_eq!(run.status, CommandStatus::Exited(0), "{run:?}");
        assert_eq!(run.stdout.trim(), "found");
        assert_eq!(found_by_command(&run), Found::Exists);
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        let stat = format!("/proc/{}/stat", pid.trim());
        // Killed: gone, or a zombie until its new parent reaps it.
        let alive = || {
            std::fs::read_to_string(&stat)
                .ok()
                .and_then(|s| s.rsplit(") ").next().map(|r| !r.starts_with('Z')))
                .unwrap_or(false)
        };
        for _ in 0..200 {
            if !alive() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(!alive(), "the child outlived the command");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn a_hanging_command_is_killed_with_its_group() {
        let run = run_command(
            "sleep 30 & sleep 30; echo never",
            None,
            &CommandEnv::default(),
            Duration::from_millis(300),
        )
        .await;
        assert_eq!(
            run.status,
            CommandStatus::TimedOut(Duration::from_millis(300))
        );
        assert_eq!(found_by_command(&run), Found::Unknown);
    }

    #[tokio::test]
    async fn values_arrive_as_exact_environment_bytes() {
        let evil = "$(touch pwned); rm -rf x `id` \"'\n";
        let env = CommandEnv {
            vars: vec![("A2A_ARTIFACT_X".to_owned(), evil.to_owned())],
            files: Vec::new(),
        };
        let run = run_command("printf '%s' \"$A2A_ARTIFACT_X\"", None, &env, t()).await;
        assert_eq!(run.status, CommandStatus::Exited(0));
        assert_eq!(run.stdout, evil);
    }

    #[tokio::test]
    async fn output_is_bounded_and_the_command_still_finishes() {
        let run = run_command(
            "head -c 300000 /dev/zero | tr '\\0' a; echo done >&2",
            None,
            &CommandEnv::default(),
            t(),
        )
        .await;
        assert_eq!(run.status, CommandStatus::Exited(0));
        assert_eq!(run.stdout.len(), OUTPUT_LIMIT);
        assert_eq!(run.stderr, "done\n");
    }

    #[tokio::test]
    async fn cwd_is_honoured_and_nul_bytes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let run = run_command("pwd", Some(dir.path()), &CommandEnv::default(), t()).await;
        assert_eq!(
            std::path::PathBuf::from(run.stdout.trim())
                .canonicalize()
                .unwrap(),
            dir.path().canonicalize().unwrap()
        );
        let env = CommandEnv {
            vars: vec![("A2A_TASK_ID".to_owned(), "a\0b".to_owned())],
            files: Vec::new(),
        };
        let run = run_command("exit 0", None, &env, t()).await;
        assert!(matches!(run.status, CommandStatus::SpawnFailed(_)));
        assert_eq!(found_by_command(&run), Found::Unknown);
    }

    #[tokio::test]
    async fn large_values_arrive_as_private_files_removed_afterwards() {
        let big = "x".repeat(1024 * 1024);
        let env = CommandEnv {
            vars: Vec::new(),
            files: vec![("A2A_ARTIFACT_BIG_FILE".to_owned(), big.clone())],
        };
        let run = run_command(
            "f=\"$A2A_ARTIFACT_BIG_FILE\"; stat -c '%a' \"$f\" \"$(dirname \"$f\")\"; \
             wc -c < \"$f\"; echo \"$f\"",
            None,
            &env,
            t(),
        )
        .await;
        assert_eq!(run.status, CommandStatus::Exited(0), "{run:?}");
        let lines: Vec<&str> = run.stdout.lines().collect();
        assert_eq!(lines[..3], ["600", "700", "1048576"], "{}", run.stdout);
        assert!(
            !std::path::Path::new(lines[3]).exists(),
            "the file outlived the command"
        );
    }

    #[test]
    fn statuses_map_to_found() {
        assert_eq!(found_by_status(200), Found::Exists);
        assert_eq!(found_by_status(204), Found::Exists);
        assert_eq!(found_by_status(404), Found::Absent);
        for s in [301, 401, 403, 410, 429, 500, 503] {
            assert_eq!(found_by_status(s), Found::Unknown, "{s}");
        }
    }
}
