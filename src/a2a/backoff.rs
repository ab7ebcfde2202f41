//! Full-jitter exponential backoff, and a retry loop for reads.
//!
//! Full jitter (a uniform draw in `[0, min(cap, base·2^attempt)]`) spreads clients that failed
//! together, so a recovering agent is not hit by a synchronized storm.
//! Only reads are retried here, and only on [`A2aError::is_transient`] errors: a send is never
//! blindly retried (recovery looks before it resends).
//!
//! Waits use `tokio::time::sleep`, so `#[tokio::test(start_paused = true)]` drives them.

use std::future::Future;
use std::time::Duration;

use rand::RngExt as _;

use super::error::A2aError;

/// The first backoff ceiling of [`retry_read`].
pub(crate) const READ_RETRY_BASE: Duration = Duration::from_millis(100);
/// The largest backoff ceiling of [`retry_read`].
pub(crate) const READ_RETRY_CAP: Duration = Duration::from_secs(5);
/// The longest `Retry-After` waited for (by the agent's limiter, `limits.rs`); one longer is
/// not waited for: the agent gets a not-before time.
pub(crate) const RETRY_AFTER_CAP: Duration = Duration::from_secs(30);

/// Returns a delay drawn uniformly from `[0, min(cap, base·2^attempt)]`.
pub fn full_jitter(
    attempt: u32,
    base: Duration,
    cap: Duration,
    rng: &mut impl rand::Rng,
) -> Duration {
    let factor = 1u32.checked_shl(attempt).unwrap_or(u32::MAX);
    let ceiling = base.saturating_mul(factor).min(cap);
    let nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
    Duration::from_nanos(rng.random_range(0..=nanos))
}

/// Runs a read up to `attempts` times, retrying only transient errors.
///
/// Between tries it sleeps for a full-jitter delay (base 100 ms, cap 5 s), but after an answer
/// with a `Retry-After`: that wait is the agent's limiter's (`limits.rs`), which holds the next
/// try until it has passed, or, when it is longer than it waits (30 s, or past the pass's
/// deadline), skips it at once. The last error is returned as is, but for a try skipped because
/// the agent's circuit opened, which returns the error before it, and a try skipped because
/// of that `Retry-After`, which returns the skip (it says when the agent may be tried again).
pub async fn retry_read<T, F, Fut>(attempts: u32, mut op: F) -> Result<T, A2aError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, A2aError>>,
{
    let attempts = attempts.max(1);
    let mut attempt = 0;
    let mut last: Option<A2aError> = None;
    let started = tokio::time::Instant::now();
    loop {
        match op().await {
            Ok(v) => return Ok(v),
            // The agent's circuit opened meanwhile (`limits.rs`): what this read met itself is
            // its error; a read skipped from the start, or for the Retry-After it met, is
            // skipped.
            Err(e @ A2aError::Skipped { .. }) => {
                return Err(match last {
                    Some(l) if l.retry_after().is_none() => l,
                    _ => e,
                });
            }
            Err(e) if e.is_transient() && attempt + 1 < attempts => {
                let delay = match e.retry_after() {
                    Some(_) => Duration::ZERO,
                    None => full_jitter(
                        attempt,
                        READ_RETRY_BASE,
                        READ_RETRY_CAP,
                        &mut crate::sim_seam::jitter_rng(),
                    ),
                };
                tracing::debug!(attempt, delay_ms = delay.as_millis(), error = %e.summary(), "retrying a read");
                tokio::time::sleep(delay).await;
                attempt += 1;
                last = Some(e);
            }
            Err(mut e) => {
                // A read that timed out on every try says how long it took in all.
                if let A2aError::Timeout { tries, .. } = &mut e
                    && attempt > 0
                    && matches!(last, Some(A2aError::Timeout { .. }))
                {
                    *tries = Some((attempt + 1, started.elapsed()));
                }
                return Err(e);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use rand::SeedableRng as _;
    use rand::rngs::StdRng;
    use tokio::time::Instant;

    use super::*;

    #[test]
    fn full_jitter_stays_in_range_and_spreads() {
        let mut rng = StdRng::seed_from_u64(42);
        let base = Duration::from_millis(100);
        let cap = Duration::from_secs(5);
        for attempt in 0..40 {
            let ceiling = base.saturating_mul(1 << attempt.min(20)).min(cap);
            let mut samples: Vec<Duration> = (0..400)
                .map(|_| full_jitter(attempt, base, cap, &mut rng))
                .collect();
            assert!(
                samples.iter().all(|d| *d <= ceiling && *d <= cap),
                "attempt {attempt}"
            );
            samples.sort();
            // Spread: the quartiles sit near a quarter and three quarters of the ceiling.
            let q1 = samples[100].as_secs_f64() / ceiling.as_secs_f64();
            let q3 = samples[300].as_secs_f64() / ceiling.as_secs_f64();
            assert!((0.15..0.35).contains(&q1), "attempt {attempt}: q1 {q1}");
            assert!((0.65..0.85).contains(&q3), "attempt {attempt}: q3 {q3}");
        }
    }

    #[test]
    fn full_jitter_is_reproducible_with_a_seed() {
        let draw = |seed| {
            let mut rng = StdRng::seed_from_u64(seed);
            (0..5)
                .map(|a| {
                    full_jitter(
                        a,
                        Duration::from_millis(100),
                        Duration::from_secs(5),
                        &mut rng,
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
    }

    fn transient(retry_after: Option<Duration>) -> A2aError {
        A2aError::Http {
            url: "http://127.0.0.1/".to_owned(),
            method: "GetTask",
            status: 503,
            retry_after,
            snippet: String::new(),
            rpc: None,
            reason: None,
            unattributed: false,
        }
    }

    fn refused() -> A2aError {
        A2aError::Http {
            url: "http://127.0.0.1/".to_owned(),
            method: "GetTask",
            status: 401,
            retry_after: None,
            snippet: String::new(),
            rpc: None,
            reason: None,
            unattributed: false,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn retries_transient_errors_then_succeeds() {
        let calls = Cell::new(0);
        let start = Instant::now();
        let out = retry_read(4, || {
            calls.set(calls.get() + 1);
            let n = calls.get();
            async move { if n < 3 { Err(transient(None)) } else { Ok(n) } }
        })
        .await;
        assert_eq!(out.unwrap(), 3);
        assert_eq!(calls.get(), 3);
        // Two jittered waits, each at most the ceiling of its attempt (100 ms, 200 ms).
        assert!(start.elapsed() <= Duration::from_millis(300));
    }

    #[tokio::test(start_paused = true)]
    async fn gives_up_after_the_attempts() {
        let calls = Cell::new(0);
        let out: Result<(), _> = retry_read(3, || {
            calls.set(calls.get() + 1);
            async { Err(transient(None)) }
        })
        .await;
        assert_eq!(out.unwrap_err().http_status(), Some(503));
        assert_eq!(calls.get(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn a_read_that_timed_out_on_every_try_says_the_time_spent() {
        let out: Result<(), _> = retry_read(3, || async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Err(A2aError::Timeout {
                url: "http://a.example/".into(),
                method: "GetTask",
                after: Duration::from_secs(30),
                tries: None,
            })
        })
        .await;
        let e = out.unwrap_err();
        let A2aError::Timeout { tries, .. } = &e else {
            panic!("{e}")
        };
        let (n, spent) = tries.expect("the tries are counted");
        assert_eq!(n, 3);
        // Three 30 s tries and two jittered pauses of at most 100 ms and 200 ms.
        assert!(spent >= Duration::from_secs(90), "{spent:?}");
        assert!(spent <= Duration::from_millis(90_300), "{spent:?}");
        let text = e.to_string();
        assert!(
            text.contains("timed out after 30s on each of 3 tries, 90s in all"),
            "{text}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn does_not_retry_other_errors() {
        let calls = Cell::new(0);
        let start = Instant::now();
        let out: Result<(), _> = retry_read(5, || {
            calls.set(calls.get() + 1);
            async { Err(refused()) }
        })
        .await;
        assert_eq!(out.unwrap_err().http_status(), Some(401));
        assert_eq!(calls.get(), 1);
        assert_eq!(start.elapsed(), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn leaves_a_retry_after_to_the_limiter_and_returns_its_skip() {
        let calls = Cell::new(0);
        let start = Instant::now();
        let skip = || A2aError::Skipped {
            url: "http://127.0.0.1/".to_owned(),
            method: "GetTask",
            reason: "it asked to wait 3600s (Retry-After)".to_owned(),
            not_before: None,
        };
        // The limiter holds a try for a short Retry-After (not this loop), and skips one past
        // what it waits: the read's error is the skip, which says when.
        let out: Result<(), _> = retry_read(4, || {
            calls.set(calls.get() + 1);
            let n = calls.get();
            async move {
                match n {
                    1 => Err(transient(Some(Duration::from_secs(2)))),
                    2 => Err(transient(Some(Duration::from_secs(3600)))),
                    _ => Err(skip()),
                }
            }
        })
        .await;
        assert!(matches!(out, Err(A2aError::Skipped { .. })), "{out:?}");
        assert_eq!(calls.get(), 3);
        assert_eq!(start.elapsed(), Duration::ZERO);
        // A skip after a timeout (the circuit) keeps the timeout as the read's error.
        calls.set(0);
        let out: Result<(), _> = retry_read(4, || {
            calls.set(calls.get() + 1);
            let n = calls.get();
            async move {
                if n == 1 {
                    Err(A2aError::Timeout {
                        url: "http://127.0.0.1/".into(),
                        method: "GetTask",
                        after: Duration::from_secs(1),
                        tries: None,
                    })
                } else {
                    Err(skip())
                }
            }
        })
        .await;
        assert!(matches!(out, Err(A2aError::Timeout { .. })), "{out:?}");
    }
}
