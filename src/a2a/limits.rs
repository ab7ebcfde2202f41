//! Per-agent request limits: each agent (interface URL + credential variable) gets its own
//! concurrency limit, request rate, `Retry-After` pause and circuit, so that one slow, busy or
//! hung agent slows only itself.
//!
//! Every unary request ([`Limiter::acquire`]) holds one of its agent's permits while it is in
//! flight, starts no sooner than `1 / rate` after the agent's previous request, and never
//! before a `Retry-After` the agent gave (HTTP 429 or 503) has passed. Stream opens
//! ([`Limiter::admit`]) obey the rate and the pause but hold no permit (a stream lives for
//! minutes) and neither open nor obey the circuit: a follow's reconnects have their own
//! backoff and budget, and an agent that restarts under many streams must get them all back.
//!
//! The circuit: after `failures` consecutive timeouts or connection failures (any answer resets
//! the count), the agent's circuit is open for the rest of this process: every later request
//! to it fails at once with [`A2aError::Skipped`], nothing sent. The next process (the next
//! pass) tries again.
//!
//! Not-before: an agent that asks to wait (`Retry-After`) longer than this process will, the
//! shorter of [`LONGEST_PAUSE`] and the time left before the pass's deadline
//! ([`Limiter::set_deadline`]), is not waited for: its *not-before* time is now plus what it
//! asked, at most [`LONGEST_NOT_BEFORE`] (a `Retry-After` of years, or of `u64::MAX` seconds,
//! is clamped, never overflowed), and every request to it (stream opens too) fails at once with
//! [`A2aError::Skipped`] until then, nothing sent. The commands journal each new not-before
//! ([`Limiter::fresh_not_befores`]) and hand the journaled ones back to the next process
//! ([`Limits::not_before`]), so a cron pass honours what an earlier one was told.
//!
//! Waits use `tokio::time`, so `#[tokio::test(start_paused = true)]` drives them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::model::{NotBefore, NotBefores, Overrides};

use super::client::Endpoint;
use super::credentials::{Credential, redact_url};
use super::error::{A2aError, fmt_duration};

/// The longest `Retry-After` an agent is paused for; an agent asking for more is not waited
/// for: it gets a not-before time, and is skipped until then.
pub const LONGEST_PAUSE: Duration = super::backoff::RETRY_AFTER_CAP;

/// The furthest ahead a not-before time is set, whatever the agent asked (a day): an agent
/// that asks for years is asked again, one request, a day later.
pub const LONGEST_NOT_BEFORE: Duration = Duration::from_hours(24);

/// The limits of one agent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AgentLimits {
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Requests started per second; `None`: no limit.
    pub rate: Option<f64>,
}

impl AgentLimits {
    /// No limit on concurrency or rate (the `Retry-After` pause still applies).
    pub const UNBOUNDED: Self = Self {
        concurrency: Semaphore::MAX_PERMITS,
        rate: None,
    };
}

/// The limits of every agent: defaults, per-agent overrides, the circuit's threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// The limits of an agent without an override.
    pub default: AgentLimits,
    /// Overrides by interface URL (from the agents registry).
    pub overrides: Overrides,
    /// Consecutive timeouts or connection failures that open an agent's circuit; `None`: never.
    pub failures: Option<u32>,
    /// Not-before times journaled by earlier processes: no request to those agents before.
    pub not_before: NotBefores,
}

impl Default for Limits {
    /// No limits, no circuit, no not-before: what every command but the passes uses.
    fn default() -> Self {
        Self {
            default: AgentLimits::UNBOUNDED,
            overrides: HashMap::new(),
            failures: None,
            not_before: HashMap::new(),
        }
    }
}

impl Limits {
    /// Returns the limits of the agent at this interface URL.
    pub fn of(&self, url: &str) -> AgentLimits {
        let mut limits = self.default;
        if let Some(own) = self.overrides.get(url) {
            if let Some(c) = own.concurrency {
                limits.concurrency = c.max(1);
            }
            if own.rate.is_some() {
                limits.rate = own.rate;
            }
        }
        limits
    }
}

/// An agent's key: its interface URL and credential variable.
type Key = (String, Option<String>);

/// Why an agent's remaining requests are skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skip {
    /// The agent's interface URL, redacted.
    pub agent: String,
    /// What happened, for a human: "3 consecutive timeouts or connection failures (the last:
    /// …)".
    pub reason: String,
    /// When it may be tried again, if it gave a not-before time; `None`: the next process.
    pub not_before: Option<DateTime<Utc>>,
}

impl Skip {
    /// Returns the skip an [`A2aError::Skipped`] reports; `None` for any other error.
    pub fn of(e: &A2aError) -> Option<Self> {
        match e {
            A2aError::Skipped {
                url,
                reason,
                not_before,
                ..
            } => Some(Self {
                agent: url.clone(),
                reason: reason.clone(),
                not_before: *not_before,
            }),
            _ => None,
        }
    }
}

/// One agent's state.
#[derive(Debug)]
struct Gate {
    limits: AgentLimits,
    permits: Arc<Semaphore>,
    state: Mutex<GateState>,
}

#[derive(Debug, Default)]
struct GateState {
    /// No request starts before this (a `Retry-After`).
    paused_until: Option<Instant>,
    /// No request starts before this (the rate).
    next_at: Option<Instant>,
    /// Timeouts and connection failures in a row.
    failures: u32,
    /// Set once the circuit is open.
    skip: Option<Skip>,
    /// No request before this (a `Retry-After` longer than this process waits).
    not_before: Option<NotBefore>,
    /// Whether `not_before` was set by an answer in this process (not journaled yet).
    fresh: bool,
}

impl GateState {
    /// Returns the skip in force now: the circuit (unary requests only), or a not-before time
    /// still ahead.
    fn skip(&self, url: &str, unary: bool) -> Option<Skip> {
        if unary && let Some(skip) = &self.skip {
            return Some(skip.clone());
        }
        let nb = self
            .not_before
            .as_ref()
            .filter(|nb| nb.at > crate::clock::system_now())?;
        Some(Skip {
            agent: redact_url(url),
            reason: format!(
                "{}; not tried again before {}",
                nb.reason,
                crate::clock::rfc3339(nb.at)
            ),
            not_before: Some(nb.at),
        })
    }
}

/// The per-agent limiter of one client.
#[derive(Debug)]
pub(crate) struct Limiter {
    limits: Limits,
    /// foldhash, not SipHash: every request looks its gate up (docs/performance.md).
    gates: Mutex<foldhash::HashMap<Key, Arc<Gate>>>,
    /// The pass's deadline: a `Retry-After` past it is not waited for.
    deadline: Mutex<Option<Instant>>,
}

/// A request's turn: hold it while the request is in flight, then [`Turn::finish`] it with
/// the request's outcome.
#[derive(Debug)]
pub(crate) struct Turn {
    gate: Arc<Gate>,
    threshold: Option<u32>,
    /// Whether the request counts toward the circuit (unary requests; not stream opens).
    circuit: bool,
    /// The longest `Retry-After` waited for: [`LONGEST_PAUSE`], or less before a deadline.
    longest: Duration,
    _permit: Option<OwnedSemaphorePermit>,
}

impl Limiter {
    pub(crate) fn new(limits: Limits) -> Self {
        Self {
            limits,
            gates: Mutex::new(foldhash::HashMap::default()),
            deadline: Mutex::new(None),
        }
    }

    /// Sets the deadline of the pass under way (`None`: none): an agent that asks to wait past
    /// it is not waited for, as one that asks for more than [`LONGEST_PAUSE`].
    pub(crate) fn set_deadline(&self, deadline: Option<Instant>) {
        *self.deadline.lock().unwrap_or_else(PoisonError::into_inner) = deadline;
    }

    /// Returns the longest `Retry-After` waited for now.
    fn longest_wait(&self) -> Duration {
        let deadline = *self.deadline.lock().unwrap_or_else(PoisonError::into_inner);
        deadline.map_or(LONGEST_PAUSE, |d| {
            LONGEST_PAUSE.min(d.saturating_duration_since(Instant::now()))
        })
    }

    /// Returns the not-before times set by answers in this process and not yet taken, marking
    /// them taken: (interface URL, credential key, not-before), for the journal.
    pub(crate) fn fresh_not_befores(&self) -> Vec<(String, Option<String>, NotBefore)> {
        let gates = self.gates.lock().unwrap_or_else(PoisonError::into_inner);
        let mut out = Vec::new();
        for ((url, credential), gate) in gates.iter() {
            let mut s = gate.lock();
            if s.fresh
                && let Some(nb) = s.not_before.clone()
            {
                s.fresh = false;
                out.push((url.clone(), credential.clone(), nb));
            }
        }
        out.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        out
    }

    pub(crate) fn limits(&self) -> &Limits {
        &self.limits
    }

    fn gate(&self, url: &str, credential: Option<&str>) -> Arc<Gate> {
        let mut gates = self.gates.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(
            gates
                .entry((url.to_owned(), credential.map(str::to_owned)))
                .or_insert_with_key(|key| {
                    let limits = self.limits.of(url);
                    Arc::new(Gate {
                        limits,
                        permits: Arc::new(Semaphore::new(
                            limits.concurrency.clamp(1, Semaphore::MAX_PERMITS),
                        )),
                        state: Mutex::new(GateState {
                            not_before: self.limits.not_before.get(key).cloned(),
                            ..GateState::default()
                        }),
                    })
                }),
        )
    }

    /// Returns why the agent's requests are skipped, if its circuit is open or its not-before
    /// time is ahead.
    pub(crate) fn skipped(&self, url: &str, credential: Option<&str>) -> Option<Skip> {
        let key = (url.to_owned(), credential.map(str::to_owned));
        let gates = self.gates.lock().unwrap_or_else(PoisonError::into_inner);
        match gates.get(&key) {
            Some(gate) => gate.lock().skip(url, true),
            None => GateState {
                not_before: self.limits.not_before.get(&key).cloned(),
                ..GateState::default()
            }
            .skip(url, true),
        }
    }

    /// Waits for a unary request's turn at `ep`: a permit, the rate, the pause.
    pub(crate) async fn acquire(
        &self,
        ep: &Endpoint,
        method: &'static str,
    ) -> Result<Turn, A2aError> {
        self.turn(ep, method, true).await
    }

    /// Waits for a stream open's turn at `ep`: the rate and the pause, no permit, no circuit.
    pub(crate) async fn admit(
        &self,
        ep: &Endpoint,
        method: &'static str,
    ) -> Result<Turn, A2aError> {
        self.turn(ep, method, false).await
    }

    async fn turn(
        &self,
        ep: &Endpoint,
        method: &'static str,
        permit: bool,
    ) -> Result<Turn, A2aError> {
        let credential = ep.credential.as_ref().map(Credential::key);
        let gate = self.gate(&ep.url, credential.as_deref());
        let unary = permit;
        let skipped = |skip: Skip| A2aError::Skipped {
            url: skip.agent,
            method,
            reason: skip.reason,
            not_before: skip.not_before,
        };
        if let Some(skip) = gate.lock().skip(&ep.url, unary) {
            return Err(skipped(skip));
        }
        let permit = if permit {
            Some(
                Arc::clone(&gate.permits)
                    .acquire_owned()
                    .await
                    .map_err(|_| A2aError::Client {
                        detail: "the agent's request limiter closed".to_owned(),
                    })?,
            )
        } else {
            None
        };
        loop {
            let wait = {
                let mut s = gate.lock();
                if let Some(skip) = s.skip(&ep.url, unary) {
                    return Err(skipped(skip));
                }
                let now = Instant::now();
                let at = s.paused_until.max(s.next_at).filter(|at| *at > now);
                if at.is_none()
                    && let Some(rate) = gate.limits.rate.filter(|r| *r > 0.0)
                {
                    s.next_at = Some(now + Duration::from_secs_f64(1.0 / rate));
                }
                at
            };
            match wait {
                Some(at) => tokio::time::sleep_until(at).await,
                None => break,
            }
        }
        Ok(Turn {
            gate,
            threshold: self.limits.failures.filter(|_| unary),
            circuit: unary,
            longest: self.longest_wait(),
            _permit: permit,
        })
    }
}

impl Gate {
    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Turn {
    /// Records what the request came to: a `Retry-After` pauses the agent (one longer than
    /// this process waits sets its not-before time); timeouts and connection failures in a row
    /// open its circuit; any answer closes the count.
    pub(crate) fn finish<T>(self, url: &str, result: &Result<T, A2aError>) {
        let mut s = self.gate.lock();
        let Err(e) = result else {
            if self.circuit {
                s.failures = 0;
            }
            return;
        };
        match e {
            A2aError::Timeout { .. } | A2aError::Connect { .. } | A2aError::Transport { .. }
                if !self.circuit => {}
            A2aError::Timeout { .. } | A2aError::Connect { .. } | A2aError::Transport { .. } => {
                s.failures += 1;
                if let Some(k) = self.threshold
                    && s.failures >= k
                    && s.skip.is_none()
                {
                    s.skip = Some(Skip {
                        agent: redact_url(url),
                        reason: format!(
                            "{} consecutive timeouts or connection failures (the last: {})",
                            s.failures,
                            e.summary()
                        ),
                        not_before: None,
                    });
                }
            }
            A2aError::Skipped { .. } => {}
            A2aError::Http {
                status: 429 | 503,
                retry_after: Some(after),
                ..
            } => {
                s.failures = 0;
                if *after > self.longest {
                    let longest = if self.longest < LONGEST_PAUSE {
                        format!(
                            "the {} left before the deadline",
                            fmt_duration(self.longest)
                        )
                    } else {
                        fmt_duration(LONGEST_PAUSE)
                    };
                    // At most a day ahead: a Retry-After of years (or of u64::MAX seconds) is
                    // clamped before it reaches any clock.
                    let ahead = chrono::Duration::from_std((*after).min(LONGEST_NOT_BEFORE))
                        .unwrap_or(chrono::Duration::zero());
                    let at = crate::clock::system_now() + ahead;
                    if s.not_before.as_ref().is_none_or(|nb| nb.at < at) {
                        s.not_before = Some(NotBefore {
                            at,
                            reason: format!(
                                "it asked to wait {} (Retry-After), longer than {longest}",
                                fmt_duration(*after)
                            ),
                        });
                        s.fresh = true;
                    }
                    return;
                }
                let until = Instant::now() + *after;
                s.paused_until = Some(s.paused_until.map_or(until, |p| p.max(until)));
            }
            _ => s.failures = 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::a2a::ProtocolBinding;
    use crate::model::AgentOverride;

    fn ep(url: &str) -> Endpoint {
        Endpoint {
            url: url.to_owned(),
            tenant: None,
            binding: ProtocolBinding::default(),
            card_origin: url.trim_end_matches('/').to_owned(),
            credential: None,
            placement: crate::a2a::Placement::Bearer,
            allow_cross_origin: false,
        }
    }

    fn limiter(concurrency: usize, rate: Option<f64>, failures: Option<u32>) -> Limiter {
        Limiter::new(Limits {
            default: AgentLimits { concurrency, rate },
            overrides: HashMap::new(),
            failures,
            not_before: HashMap::new(),
        })
    }

    fn timeout(url: &str) -> Result<(), A2aError> {
        Err(A2aError::Timeout {
            url: url.to_owned(),
            method: "GetTask",
            after: Duration::from_secs(30),
            tries: None,
        })
    }

    fn busy(url: &str, after: Duration) -> Result<(), A2aError> {
        Err(A2aError::Http {
            url: url.to_owned(),
            method: "GetTask",
            status: 429,
            retry_after: Some(after),
            snippet: String::new(),
            rpc: None,
            reason: None,
            unattributed: false,
        })
    }

    #[tokio::test(start_paused = true)]
    async fn permits_bound_each_agent_not_the_others() {
        let l = limiter(2, None, None);
        let (a, b) = (ep("http://a/"), ep("http://b/"));
        let t1 = l.acquire(&a, "GetTask").await.unwrap();
        let _t2 = l.acquire(&a, "GetTask").await.unwrap();
        // A third request to `a` waits; `b` goes at once.
        let third = tokio::time::timeout(Duration::from_secs(1), l.acquire(&a, "GetTask")).await;
        assert!(third.is_err());
        let _b = l.acquire(&b, "GetTask").await.unwrap();
        t1.finish::<()>(&a.url, &Ok(()));
        assert!(l.acquire(&a, "GetTask").await.is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn the_rate_spaces_requests() {
        let l = limiter(8, Some(10.0), None);
        let a = ep("http://a/");
        let start = Instant::now();
        for _ in 0..5 {
            l.acquire(&a, "GetTask")
                .await
                .unwrap()
                .finish::<()>(&a.url, &Ok(()));
        }
        assert_eq!(start.elapsed(), Duration::from_millis(400));
    }

    #[tokio::test(start_paused = true)]
    async fn retry_after_pauses_the_agent_only() {
        let l = limiter(8, None, Some(3));
        let (a, b) = (ep("http://a/"), ep("http://b/"));
        let start = Instant::now();
        l.acquire(&a, "GetTask")
            .await
            .unwrap()
            .finish(&a.url, &busy(&a.url, Duration::from_secs(2)));
        l.acquire(&b, "GetTask")
            .await
            .unwrap()
            .finish::<()>(&b.url, &Ok(()));
        assert_eq!(start.elapsed(), Duration::ZERO);
        l.acquire(&a, "GetTask")
            .await
            .unwrap()
            .finish::<()>(&a.url, &Ok(()));
        assert_eq!(start.elapsed(), Duration::from_secs(2));
    }

    #[tokio::test(start_paused = true)]
    async fn consecutive_failures_open_the_circuit() {
        let l = limiter(8, None, Some(3));
        let a = ep("http://a/");
        for i in 0..3 {
            assert!(l.skipped(&a.url, None).is_none());
            let t = l.acquire(&a, "GetTask").await.unwrap();
            // An answer in between resets the count.
            if i == 1 {
                l.acquire(&a, "GetTask")
                    .await
                    .unwrap()
                    .finish::<()>(&a.url, &Ok(()));
            }
            t.finish(&a.url, &timeout(&a.url));
        }
        assert!(l.skipped(&a.url, None).is_none(), "reset by the answer");
        // The third failure in a row opens it.
        l.acquire(&a, "GetTask")
            .await
            .unwrap()
            .finish(&a.url, &timeout(&a.url));
        let skip = l.skipped(&a.url, None).expect("the circuit is open");
        assert!(skip.reason.starts_with("3 consecutive"), "{}", skip.reason);
        let e = l.acquire(&a, "GetTask").await.unwrap_err();
        assert!(matches!(e, A2aError::Skipped { .. }), "{e}");
        assert!(!e.is_transient());
    }

    #[tokio::test(start_paused = true)]
    async fn stream_opens_neither_open_nor_obey_the_circuit() {
        let l = limiter(8, None, Some(3));
        let a = ep("http://a/");
        for _ in 0..5 {
            l.admit(&a, "SubscribeToTask")
                .await
                .unwrap()
                .finish(&a.url, &timeout(&a.url));
        }
        assert!(l.skipped(&a.url, None).is_none());
        for _ in 0..3 {
            l.acquire(&a, "GetTask")
                .await
                .unwrap()
                .finish(&a.url, &timeout(&a.url));
        }
        assert!(l.skipped(&a.url, None).is_some());
        assert!(l.admit(&a, "SubscribeToTask").await.is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn a_pause_past_the_longest_skips_the_agent() {
        let l = limiter(8, None, Some(3));
        let a = ep("http://a/");
        l.acquire(&a, "GetTask")
            .await
            .unwrap()
            .finish(&a.url, &busy(&a.url, Duration::from_secs(3600)));
        assert!(l.skipped(&a.url, None).is_some());
    }

    #[tokio::test(start_paused = true)]
    async fn a_retry_after_of_years_sets_a_not_before_a_day_ahead_at_most() {
        // Every client, not only the passes': no circuit here.
        let l = limiter(8, None, None);
        let (a, b, other) = (ep("http://a/"), ep("http://b/"), ep("http://c/"));
        for (agent, after) in [(&a, Duration::from_secs(u64::MAX)), (&other, Duration::MAX)] {
            l.acquire(agent, "GetTask")
                .await
                .unwrap()
                .finish(&agent.url, &busy(&agent.url, after));
        }
        assert!(l.skipped(&other.url, None).is_some());
        let now = crate::clock::system_now();
        let skip = l.skipped(&a.url, None).expect("skipped");
        let at = skip.not_before.expect("a not-before");
        assert!(at > now && at <= now + chrono::Duration::hours(24), "{at}");
        assert!(
            skip.reason
                .contains("longer than 30s; not tried again before")
        );
        // Stream opens obey it too, and nothing waits.
        let start = Instant::now();
        let err = l.admit(&a, "SubscribeToTask").await.unwrap_err();
        assert_eq!(Skip::of(&err).and_then(|s| s.not_before), Some(at), "{err}");
        assert_eq!(start.elapsed(), Duration::ZERO);
        assert!(l.acquire(&b, "GetTask").await.is_ok(), "another agent");
        // Taken once for the journal.
        let fresh = l.fresh_not_befores();
        assert_eq!(fresh.len(), 2);
        assert_eq!(fresh[0].2.at, at);
        assert!(l.fresh_not_befores().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_retry_after_past_the_deadline_is_not_waited_for() {
        let l = limiter(8, None, None);
        let a = ep("http://a/");
        l.set_deadline(Some(Instant::now() + Duration::from_secs(5)));
        l.acquire(&a, "GetTask")
            .await
            .unwrap()
            .finish(&a.url, &busy(&a.url, Duration::from_secs(10)));
        let skip = l.skipped(&a.url, None).expect("skipped");
        assert!(
            skip.reason.contains("left before the deadline"),
            "{}",
            skip.reason
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_journaled_not_before_skips_the_agent_until_it_passes() {
        let now = crate::clock::system_now();
        let key = ("http://a/".to_owned(), Some("env:TOK".to_owned()));
        let mut limits = Limits::default();
        limits.not_before.insert(
            key.clone(),
            NotBefore {
                at: now + chrono::Duration::hours(1),
                reason: "it asked".to_owned(),
            },
        );
        limits.not_before.insert(
            ("http://b/".to_owned(), None),
            NotBefore {
                at: now - chrono::Duration::seconds(1),
                reason: "passed".to_owned(),
            },
        );
        let l = Limiter::new(limits);
        assert!(l.skipped("http://a/", Some("env:TOK")).is_some());
        assert!(l.skipped("http://a/", None).is_none(), "another credential");
        assert!(l.skipped("http://b/", None).is_none(), "passed");
        assert!(l.fresh_not_befores().is_empty(), "journaled already");
    }

    #[test]
    fn overrides_replace_the_defaults_field_by_field() {
        let mut limits = Limits {
            default: AgentLimits {
                concurrency: 4,
                rate: None,
            },
            ..Limits::default()
        };
        limits.overrides.insert(
            "http://a/".to_owned(),
            AgentOverride {
                concurrency: None,
                rate: Some(5.0),
            },
        );
        assert_eq!(
            limits.of("http://a/"),
            AgentLimits {
                concurrency: 4,
                rate: Some(5.0)
            }
        );
        assert_eq!(limits.of("http://b/").rate, None);
    }
}
