//! Crash points for tests: `A2A_RECOVER_CRASH_AT=POINT[:STEP]`.
//!
//! At a matching point the process aborts (SIGABRT, no cleanup, like `kill -9`): no destructor
//! runs, no transaction is committed. Documented as a testing aid.

use crate::env;

/// A named crash point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// The intent is committed, nothing sent.
    AfterIntent,
    /// The agent answered, nothing journaled yet.
    AfterSend,
    /// `N` stream events journaled by this process (the first Task snapshot is event 1).
    AfterEvent(u64),
    /// As `AfterSend`, for compensation sends only.
    AfterCompensateSend,
}

/// The point as `A2A_RECOVER_CRASH_AT` names it (`after-send`, `after-event:3`).
impl std::fmt::Display for Point {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::AfterIntent => f.write_str("after-intent"),
            Self::AfterSend => f.write_str("after-send"),
            Self::AfterEvent(n) => write!(f, "after-event:{n}"),
            Self::AfterCompensateSend => f.write_str("after-compensate-send"),
        }
    }
}

/// Parses `POINT[:STEP]`; the step may itself contain `/`.
fn parse(spec: &str) -> Option<(Point, Option<&str>)> {
    let (point, rest) = match spec.split_once(':') {
        Some((p, r)) => (p, Some(r)),
        None => (spec, None),
    };
    match point {
        "after-intent" => Some((Point::AfterIntent, rest)),
        "after-send" => Some((Point::AfterSend, rest)),
        "after-compensate-send" => Some((Point::AfterCompensateSend, rest)),
        "after-event" => {
            let rest = rest?;
            let (n, step) = match rest.split_once(':') {
                Some((n, s)) => (n, Some(s)),
                None => (rest, None),
            };
            Some((Point::AfterEvent(n.parse().ok()?), step))
        }
        _ => None,
    }
}

/// Checks `A2A_RECOVER_CRASH_AT` when it is set: a typo must not silently disarm a test's
/// crash. Returns the problem, naming the points that exist.
pub fn check_env() -> Result<(), String> {
    match std::env::var(env::CRASH_AT) {
        Ok(spec) if parse(&spec).is_none() => Err(format!(
            "{} is `{}`, which names no crash point; use after-intent, after-send, \
             after-compensate-send or after-event:N, each optionally followed by `:STEP`",
            env::CRASH_AT,
            crate::sanitize::inert(&spec)
        )),
        _ => Ok(()),
    }
}

/// Returns whether the crash point `point` is armed for `step` (`WORKFLOW/STEP`).
///
/// A bare step name in the spec means `default/NAME`, as on the command line.
pub fn armed(point: Point, step: &str) -> bool {
    let Ok(spec) = std::env::var(env::CRASH_AT) else {
        return false;
    };
    let Some((p, want)) = parse(&spec) else {
        return false;
    };
    if p != point {
        return false;
    }
    match want {
        None => true,
        Some(w) if w.contains('/') => w == step,
        Some(w) => step == format!("default/{w}"),
    }
}

/// Aborts the process if `point` is armed for `step`.
pub fn at(point: Point, step: &str) {
    if armed(point, step) {
        tracing::warn!("crash point {point} reached for {step}: aborting (A2A_RECOVER_CRASH_AT)");
        std::process::abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_is_named_as_the_variable_names_it() {
        for spec in [
            "after-intent",
            "after-send",
            "after-compensate-send",
            "after-event:3",
        ] {
            let (point, _) = parse(spec).unwrap();
            assert_eq!(point.to_string(), spec);
        }
    }

    #[test]
    fn parses_points() {
        assert_eq!(parse("after-intent"), Some((Point::AfterIntent, None)));
        assert_eq!(
            parse("after-send:trip-42/hotel"),
            Some((Point::AfterSend, Some("trip-42/hotel")))
        );
        assert_eq!(parse("after-event:2"), Some((Point::AfterEvent(2), None)));
        assert_eq!(
            parse("after-event:2:t/x"),
            Some((Point::AfterEvent(2), Some("t/x")))
        );
        assert_eq!(parse("after-event"), None);
        assert_eq!(parse("nonsense"), None);
    }
}
