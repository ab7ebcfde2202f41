//! Durations on the command line and in the environment: a number with a unit.
//!
//! A leaf module: flags (`--timeout`, `--deadline`, `prune --older-than`, …), test hooks and the
//! scripted agent parse durations the same way, with the same units: `ms`, `s`, `m`, `h`, `d`
//! and `w`, alone or together (`1h30m`), up to a hundred years.

use std::time::Duration;

/// Longest duration accepted: a hundred years.
const MAX_SECS: f64 = 100.0 * 365.25 * 86_400.0;

/// Parses a duration with a unit: `500ms`, `2s`, `5m`, `1h`, `1d`, `2w`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    parse(s, "`500ms`, `2s`, `5m` or `1h`", "`30s`")
}

/// Parses an age (`prune --older-than`): the same units, with examples in days and weeks.
pub fn parse_age(s: &str) -> Result<Duration, String> {
    parse(s, "`30d`, `2w` or `12h`", "`30d`")
}

/// A point in time as a flag gives it: a duration ago (`90m`, `1h30m`) or an RFC 3339 time
/// (`2026-12-06T03:00:00Z`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeBound {
    /// This long before now.
    Ago(Duration),
    /// This instant.
    At(chrono::DateTime<chrono::Utc>),
}

impl TimeBound {
    /// Returns the instant, counting an [`TimeBound::Ago`] back from `now`.
    pub fn at(self, now: chrono::DateTime<chrono::Utc>) -> chrono::DateTime<chrono::Utc> {
        match self {
            Self::Ago(d) => chrono::Duration::from_std(d)
                .ok()
                .and_then(|d| now.checked_sub_signed(d))
                .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC),
            Self::At(at) => at,
        }
    }
}

/// Parses `--since` / `--until`: an RFC 3339 time, else a duration ago.
pub fn parse_time_bound(s: &str) -> Result<TimeBound, String> {
    if let Ok(at) = chrono::DateTime::parse_from_rfc3339(s.trim()) {
        return Ok(TimeBound::At(at.with_timezone(&chrono::Utc)));
    }
    parse(
        s,
        "`30m`, `1h30m`, `2d` or an RFC 3339 time (`2026-12-06T03:00:00Z`)",
        "`1h` or an RFC 3339 time (`2026-12-06T03:00:00Z`)",
    )
    .map(TimeBound::Ago)
}

fn parse(s: &str, examples: &str, example: &str) -> Result<Duration, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err(format!("the duration is empty; write e.g. {examples}"));
    }
    // A compound duration is a run of number-unit pairs: `1h30m`, `2m30s`, `1d12h`.
    let mut secs = 0.0;
    let mut rest = s;
    while !rest.is_empty() {
        let split = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .ok_or_else(|| format!("`{s}` has no unit; write e.g. {examples}"))?;
        let (num, after) = rest.split_at(split);
        let value: f64 = num
            .parse()
            .map_err(|_| format!("`{s}` does not start with a number; write e.g. {example}"))?;
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_len);
        let per_unit = match unit {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3_600.0,
            "d" => 86_400.0,
            "w" => 604_800.0,
            _ => {
                return Err(format!(
                    "unknown unit `{}` in `{s}`; use ms, s, m, h, d or w, alone or together \
                     (e.g. {example}, `1h30m`)",
                    crate::sanitize::inert(unit)
                ));
            }
        };
        secs += value * per_unit;
        rest = next;
    }
    if !secs.is_finite() || !(0.0..=MAX_SECS).contains(&secs) {
        return Err(format!("`{s}` is out of range (at most 100 years)"));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("1d").unwrap(), Duration::from_secs(86_400));
        assert_eq!(
            parse_duration("2w").unwrap(),
            Duration::from_secs(14 * 86_400)
        );
        assert!(parse_duration("5").is_err());
        assert!(
            parse_duration("5y")
                .unwrap_err()
                .contains("use ms, s, m, h, d or w")
        );
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn time_bounds_take_a_duration_ago_or_an_rfc3339_time() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-12-06T12:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let ago = parse_time_bound("1h30m").unwrap();
        assert_eq!(ago.at(now).to_rfc3339(), "2026-12-06T10:30:00+00:00");
        let at = parse_time_bound("2026-12-06T04:00:00+01:00").unwrap();
        assert_eq!(at.at(now).to_rfc3339(), "2026-12-06T03:00:00+00:00");
        assert!(
            parse_time_bound("yesterday")
                .unwrap_err()
                .contains("RFC 3339")
        );
        // A hundred years before the earliest date chrono knows does not panic.
        let far = parse_time_bound("100w").unwrap();
        assert!(
            far.at(chrono::DateTime::<chrono::Utc>::MIN_UTC)
                == chrono::DateTime::<chrono::Utc>::MIN_UTC
        );
    }

    #[test]
    fn compound_durations_add_their_parts() {
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5_400));
        assert_eq!(parse_duration("2m30s").unwrap(), Duration::from_secs(150));
        assert_eq!(
            parse_duration("1d12h").unwrap(),
            Duration::from_secs(129_600)
        );
        assert_eq!(
            parse_duration("1s500ms").unwrap(),
            Duration::from_millis(1_500)
        );
        assert!(parse_duration("1h30").unwrap_err().contains("has no unit"));
        assert!(
            parse_duration("1h30x")
                .unwrap_err()
                .contains("unknown unit `x`")
        );
        assert!(
            parse_age("5000w5000w")
                .unwrap_err()
                .contains("out of range")
        );
    }

    #[test]
    fn ages_parse_with_days_and_weeks() {
        assert_eq!(parse_age("30d").unwrap(), Duration::from_secs(30 * 86_400));
        assert_eq!(parse_age("2w").unwrap(), Duration::from_secs(14 * 86_400));
        assert_eq!(parse_age("12h").unwrap(), Duration::from_secs(12 * 3_600));
        assert_eq!(parse_age("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_age("0s").unwrap(), Duration::ZERO);
        assert!(
            parse_age("30")
                .unwrap_err()
                .contains("has no unit; write e.g. `30d`")
        );
        assert!(parse_age("-1d").is_err());
        assert!(parse_age("1000000w").unwrap_err().contains("out of range"));
    }
}
