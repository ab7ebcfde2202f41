//! Durations on the command line and in the environment: a number with a unit.
//!
//! A leaf module: flags (`--timeout`, `--deadline`, `prune --older-than`, …), test hooks and the
//! scripted agent parse durations the same way, with the same units: `ms`, `s`, `m`, `h`, `d`
//! and `w`, up to a hundred years.

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

fn parse(s: &str, examples: &str, example: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .ok_or_else(|| format!("`{s}` has no unit; write e.g. {examples}"))?;
    let (num, unit) = s.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` does not start with a number; write e.g. {example}"))?;
    let per_unit = match unit {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3_600.0,
        "d" => 86_400.0,
        "w" => 604_800.0,
        _ => {
            return Err(format!(
                "unknown unit `{unit}` in `{s}`; use ms, s, m, h, d or w (e.g. {example})"
            ));
        }
    };
    let secs = value * per_unit;
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
