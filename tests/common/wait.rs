//! Waiting on a condition: the one poll loop of the tests. A test that waits for something to
//! happen (a row journaled, an agent's task settled, a request seen) names what it waits for
//! and a hang guard; it never sleeps a fixed time and hopes.

use std::fmt::Display;
use std::future::Future;
use std::time::{Duration, Instant};

/// The hang guard of a wait on something the test has set going: long enough for a loaded
/// machine, short enough that a hang fails the run rather than stalling it.
pub const GUARD: Duration = Duration::from_secs(60);

/// How long a wait pauses between two looks.
pub const POLL: Duration = Duration::from_millis(10);

/// Waits until `done` holds, looking every [`POLL`]; panics naming `what` after `within`.
#[track_caller]
pub fn wait_until(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    wait_for(
        what,
        within,
        || if done() { Ok(()) } else { Err("not yet") },
    );
}

/// Waits until `probe` answers `Ok`, and returns its value; panics after `within` naming `what`
/// and the last `Err` it answered (what was seen instead).
#[track_caller]
pub fn wait_for<T, S: Display>(
    what: &str,
    within: Duration,
    probe: impl FnMut() -> Result<T, S>,
) -> T {
    match poll(within, probe) {
        Ok(found) => found,
        Err(seen) => panic!("waited {within:?} for {what}; last seen: {seen}"),
    }
}

/// Looks every [`POLL`] until `probe` answers `Ok`; after `within`, returns its last `Err`, for
/// a caller with something to clean up before it fails (a child to kill).
pub fn poll<T, S>(within: Duration, mut probe: impl FnMut() -> Result<T, S>) -> Result<T, S> {
    let until = Instant::now() + within;
    loop {
        match probe() {
            Ok(found) => return Ok(found),
            Err(seen) if Instant::now() >= until => return Err(seen),
            Err(_) => std::thread::sleep(POLL),
        }
    }
}

/// [`wait_until`] inside a tokio test: the pause is the runtime's, so agents served on the same
/// runtime keep answering.
pub async fn wait_until_async(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    poll_for(what, within, || {
        let found = done().then_some(());
        async move { found.ok_or("not yet") }
    })
    .await;
}

/// [`wait_for`] inside a tokio test, with a probe that awaits (a request to an agent).
pub async fn poll_for<T, S: Display, F: Future<Output = Result<T, S>>>(
    what: &str,
    within: Duration,
    mut probe: impl FnMut() -> F,
) -> T {
    let until = Instant::now() + within;
    loop {
        match probe().await {
            Ok(found) => return found,
            Err(seen) => assert!(
                Instant::now() < until,
                "waited {within:?} for {what}; last seen: {seen}"
            ),
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Waits until the real clock is past `t`, a time the journal names (a lease's expiry): only
/// the clock moves a lease, so a test waits for the time the journal names, never a guess.
#[track_caller]
pub fn wait_past(what: &str, t: chrono::DateTime<chrono::Utc>) {
    let margin = (t - a2a_recover::clock::system_now())
        .to_std()
        .unwrap_or_default();
    wait_until(what, margin + GUARD, || {
        a2a_recover::clock::system_now() > t
    });
}

/// Waits until every lease among `attempts` has lapsed: a lease's end is a time, so only the
/// clock moves it; this waits for the time the journal names, not a guess.
#[track_caller]
pub fn wait_until_leases_lapse<'a>(
    attempts: impl IntoIterator<Item = &'a a2a_recover::journal::Attempt>,
) {
    if let Some(last) = last_lease_expiry(attempts) {
        wait_past("every lease to lapse", last);
    }
}

/// The latest lease expiry among `attempts`, if any holds a lease.
pub fn last_lease_expiry<'a>(
    attempts: impl IntoIterator<Item = &'a a2a_recover::journal::Attempt>,
) -> Option<chrono::DateTime<chrono::Utc>> {
    attempts
        .into_iter()
        .filter_map(|a| a.lease.as_ref().map(|l| l.expires_at))
        .max()
}

/// Waits until the in-flight horizon of `step`'s latest send has passed (twice the timeout
/// journaled with it, from the send): only then is a look that finds nothing proof of absence.
#[track_caller]
pub fn wait_past_send_horizon(env: &super::TestEnv, step: &str) {
    let journal = env.open_journal();
    let name = a2a_recover::journal::StepName::parse(step).expect("a step name");
    let record = journal
        .step(&name)
        .expect("read the step")
        .expect("a journaled step");
    let last = record.attempts.last().expect("an attempt");
    let horizon = journal
        .send_horizon(last.id)
        .expect("read the send's horizon")
        .expect("a journaled send");
    wait_past(&format!("the in-flight horizon of {step}'s send"), horizon);
}
