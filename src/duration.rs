//! Durations on the command line and in the environment: a number with a unit.
//!
//! A leaf module: flags (`--timeout`, `--deadline`, …), test hooks and the scripted agent parse
//! durations the same way.

use std::time::Duration;

/// Parses a duration with a unit: `500ms`, `2s`, `5m`, `1h`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .ok_or_else(|| format!("`{s}` has no unit; write e.g. `500ms`, `2s`, `5m` or `1h`"))?;
    let (num, unit) = s.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` does not start with a number; write e.g. `30s`"))?;
    let secs = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(format!("unknown unit `{unit}` in `{s}`; use ms, s, m or h")),
    };
    if !secs.is_finite() || !(0.0..=1e9).contains(&secs) {
        return Err(format!("`{s}` is out of range"));
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
        assert!(parse_duration("5").is_err());
        assert!(parse_duration("5d").is_err());
        assert!(parse_duration("-1s").is_err());
    }
}
