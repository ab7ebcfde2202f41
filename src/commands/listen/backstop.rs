//! The backstop of `listen --reconcile-every`: the ordinary reconcile pass on a timer, run as
//! this same binary with the same global flags (so the same journal, locks and leases as cron's
//! pass), one at a time. A signal to `listen` passes SIGTERM on to a pass in progress, which
//! abandons it as `reconcile` does on a signal.

use std::ffi::OsString;
use std::process::Stdio;
use std::time::Duration;

use tokio::sync::watch;

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

/// Runs a pass every `every` until `stop` turns true.
pub(super) async fn run(every: Duration, mut stop: watch::Receiver<bool>) {
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
                continue;
            }
        };
        tokio::select! {
            status = child.wait() => match status {
                Ok(s) if matches!(s.code(), Some(0 | 3 | 4)) => {
                    tracing::info!("the reconcile pass ended: exit {}", s.code().unwrap_or(0));
                }
                Ok(s) => tracing::warn!("the reconcile pass failed: {s}"),
                Err(e) => tracing::warn!("the reconcile pass was lost: {e}"),
            },
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
