//! The backstop of `listen --reconcile-every`: the ordinary reconcile pass on a timer, run as
//! this same binary with the same global flags (so the same journal, locks and leases as cron's
//! pass), one at a time. A signal to `listen` passes SIGTERM on to a pass in progress, which
//! abandons it as `reconcile` does on a signal.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::watch;

use super::Listener;

/// How the timer's passes ended, for `/metrics`.
#[derive(Default)]
pub(super) struct Passes {
    /// Per outcome ([`OUTCOMES`]), how many passes ended so.
    ended: [AtomicU64; 5],
    /// When the last pass ended, and its exit code (-1: no code, a signal).
    last: Mutex<Option<(chrono::DateTime<chrono::Utc>, i32)>>,
}

/// The outcomes of a pass, by exit code: 0, 3, 4, another code, none (it did not start or was
/// lost).
const OUTCOMES: [&str; 5] = ["ok", "work-remains", "needs-human", "failed", "lost"];

impl Passes {
    /// Counts a pass that ended with `code` at `at`.
    fn ended(&self, code: Option<i32>, at: chrono::DateTime<chrono::Utc>) {
        let i = match code {
            Some(0) => 0,
            Some(3) => 1,
            Some(4) => 2,
            Some(_) => 3,
            None => 4,
        };
        self.ended[i].fetch_add(1, Ordering::Relaxed);
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Some((at, code.unwrap_or(-1)));
    }

    /// The passes' lines of the metrics page.
    pub(super) fn metrics(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "# HELP a2a_recover_listen_passes_total Reconcile passes run by this listener's timer, by outcome.\n\
             # TYPE a2a_recover_listen_passes_total counter"
        );
        for (name, n) in OUTCOMES.iter().zip(&self.ended) {
            let _ = writeln!(
                out,
                "a2a_recover_listen_passes_total{{outcome=\"{name}\"}} {}",
                n.load(Ordering::Relaxed)
            );
        }
        if let Some((at, code)) = *self.last.lock().unwrap_or_else(PoisonError::into_inner) {
            let _ = writeln!(
                out,
                "# HELP a2a_recover_listen_pass_last_timestamp_seconds When the timer's last pass ended.\n\
                 # TYPE a2a_recover_listen_pass_last_timestamp_seconds gauge\n\
                 a2a_recover_listen_pass_last_timestamp_seconds {}\n\
                 # HELP a2a_recover_listen_pass_last_exit_code The exit code of the timer's last pass (-1: none).\n\
                 # TYPE a2a_recover_listen_pass_last_exit_code gauge\n\
                 a2a_recover_listen_pass_last_exit_code {code}",
                at.timestamp()
            );
        }
    }
}

/// The argv of the pass: this process's arguments before `listen` (the global flags), then
/// `reconcile`.
fn pass_args() -> Vec<OsString> {
    let mut args: Vec<OsString> = std::env::args_os()
        .skip(1)
        .take_while(|a| a != "listen")
        .collect();
    args.push("reconcile".into());
    args
}

/// Resolves once `stop` turns true (or its sender is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// Runs a pass every `every` until `stop` turns true, counting how each ended in `st`.
pub(super) async fn run(st: Arc<Listener>, every: Duration, mut stop: watch::Receiver<bool>) {
    let Ok(exe) = std::env::current_exe() else {
        tracing::warn!("cannot find this binary: no reconcile pass will run");
        return;
    };
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = stopped(&mut stop) => return,
        }
        let child = tokio::process::Command::new(&exe)
            .args(pass_args())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .kill_on_drop(true)
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!("the reconcile pass did not start: {e}");
                st.passes.ended(None, st.clock.now());
                continue;
            }
        };
        tokio::select! {
            status = child.wait() => {
                let code = status.as_ref().ok().and_then(std::process::ExitStatus::code);
                match status {
                    Ok(s) if matches!(s.code(), Some(0 | 3 | 4)) => {
                        tracing::info!("the reconcile pass ended: exit {}", s.code().unwrap_or(0));
                    }
                    Ok(s) => tracing::warn!("the reconcile pass failed: {s}"),
                    Err(e) => tracing::warn!("the reconcile pass was lost: {e}"),
                }
                st.passes.ended(code, st.clock.now());
            }
            () = stopped(&mut stop) => {
                if let Some(pid) = child
                    .id()
                    .and_then(|p| rustix::process::Pid::from_raw(p as i32))
                {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
                }
                let _ = tokio::time::timeout(Duration::from_secs(30), child.wait()).await;
                return;
            }
        }
    }
}
