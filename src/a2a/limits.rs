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
//! to it fails at once with [`A2aError::Skipped`], nothing sent. An agent that asks to wait
//! longer than [`LONGEST_PAUSE`] is skipped the same way. The next process (the next pass)
//! tries again.
//!
//! Waits use `tokio::time`, so `#[tokio::test(start_paused = true)]` drives them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::model::Overrides;

use super::client::Endpoint;
use super::credentials::{Credential, redact_url};
use super::error::{A2aError, fmt_duration};

/// The longest `Retry-After` an agent is paused for; an agent asking for more is skipped for
/// the rest of the pass (the same bound as a read's retries).
pub const LONGEST_PAUSE: Duration = super::backoff::RETRY_AFTER_CAP;

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
}

impl Default for Limits {
    /// No limits and no circuit: what every command but the passes uses.
    fn default() -> Self {
        Self {
            default: AgentLimits::UNBOUNDED,
            overrides: HashMap::new(),
            failures: None,
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    /// The agent's interface URL, redacted.
    pub agent: String,
    /// What happened, for a human: "3 consecutive timeouts or connection failures (the last:
    /// …)".
    pub reason: String,
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
}

/// The per-agent limiter of one client.
#[derive(Debug)]
pub(crate) struct Limiter {
    limits: Limits,
    gates: Mutex<HashMap<Key, Arc<Gate>>>,
}

/// A request's turn: hold it while the request is in flight, then [`Turn::finish`] it with
/// the request's outcome.
#[derive(Debug)]
pub(crate) struct Turn {
    gate: Arc<Gate>,
    threshold: Option<u32>,
    /// Whether the request counts toward the circuit (unary requests; not stream opens).
    circuit: bool,
    _permit: Option<OwnedSemaphorePermit>,
}

impl Limiter {
    pub(crate) fn new(limits: Limits) -> Self {
        Self {
            limits,
            gates: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn limits(&self) -> &Limits {
        &self.limits
    }

    fn gate(&self, url: &str, credential: Option<&str>) -> Arc<Gate> {
        let mut gates = self.gates.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(
            gates
                .entry((url.to_owned(), credential.map(str::to_owned)))
                .or_insert_with(|| {
                    let limits = self.limits.of(url);
                    Arc::new(Gate {
                        limits,
                        permits: Arc::new(Semaphore::new(
                            limits.concurrency.clamp(1, Semaphore::MAX_PERMITS),
                        )),
                        state: Mutex::new(GateState::default()),
                    })
                }),
        )
    }

    /// Returns why the agent's requests are skipped, if its circuit is open.
    pub(crate) fn skipped(&self, url: &str, credential: Option<&str>) -> Option<Skip> {
        let gates = self.gates.lock().unwrap_or_else(PoisonError::into_inner);
        let gate = gates.get(&(url.to_owned(), credential.map(str::to_owned)))?;
        gate.lock().skip.clone()
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
        let skipped = |skip: &Skip| A2aError::Skipped {
            url: skip.agent.clone(),
            method,
            reason: skip.reason.clone(),
        };
        if let Some(skip) = gate.lock().skip.as_ref().filter(|_| unary) {
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
                if let Some(skip) = s.skip.as_ref().filter(|_| unary) {
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
    /// Records what the request came to: a `Retry-After` pauses the agent; timeouts and
    /// connection failures in a row open its circuit; any answer closes the count.
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
                if *after > LONGEST_PAUSE {
                    if self.threshold.is_some() && s.skip.is_none() {
                        s.skip = Some(Skip {
                            agent: redact_url(url),
                            reason: format!(
                                "it asked to wait {} (Retry-After), longer than {}",
                                fmt_duration(*after),
                                fmt_duration(LONGEST_PAUSE)
                            ),
                        });
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
