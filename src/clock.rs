//! The clock: the only place that reads the system time.

use chrono::{DateTime, Utc};

/// A source of "now".
pub trait Clock: Send + Sync {
    /// Returns the current time.
    fn now(&self) -> DateTime<Utc>;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    #[expect(
        clippy::disallowed_methods,
        reason = "this is the one place that reads the clock"
    )]
    fn now(&self) -> DateTime<Utc> {
        // A simulated run (`--features sim`) reads its virtual time instead.
        #[cfg(feature = "sim")]
        if let Some(now) = crate::sim_seam::virtual_now() {
            return now;
        }
        Utc::now()
    }
}

/// A clock pinned to one instant, for tests and for the displayed "now".
#[derive(Debug, Clone, Copy)]
pub struct FixedClock(pub DateTime<Utc>);

impl Clock for FixedClock {
    fn now(&self) -> DateTime<Utc> {
        self.0
    }
}

/// Returns the current system time (for code without a `Context`, such as the scripted agent).
pub fn system_now() -> DateTime<Utc> {
    SystemClock.now()
}

/// Formats a time as RFC 3339 with milliseconds and `Z`, the way the journal and JSON show it.
pub fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
