//! Step and workflow names (`WORKFLOW/STEP`), the rules they follow, and the targets of
//! `inspect`, `reconcile` and `compensate`.

use std::fmt;

/// The workflow of steps delegated by a bare name.
pub const DEFAULT_WORKFLOW: &str = "default";

/// The longest workflow or step name accepted.
pub const MAX_NAME_LEN: usize = 128;

/// A step's full name, `WORKFLOW/STEP`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StepName {
    /// The workflow part.
    pub workflow: String,
    /// The step part.
    pub step: String,
}

/// A workflow or step name that breaks the naming rules.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad name `{name}`: {reason}")]
pub struct NameError {
    /// The name given (as typed).
    pub name: String,
    /// Which rule it breaks.
    pub reason: &'static str,
}

/// Checks one part of a name: 1–128 characters, no `/`, `~`, whitespace or control characters,
/// and no leading `-` (it would read as a flag).
pub fn check_name_part(part: &str) -> Result<(), &'static str> {
    if part.is_empty() {
        return Err("a name cannot be empty");
    }
    if part.chars().count() > MAX_NAME_LEN {
        return Err("a name has at most 128 characters");
    }
    if part.contains('/') {
        return Err("`/` separates WORKFLOW/STEP and cannot appear inside a name");
    }
    if part.contains('~') {
        return Err("`~` is reserved (compensation steps) and cannot appear in a name");
    }
    if part.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("a name cannot contain spaces or control characters");
    }
    if part.chars().any(crate::sanitize::is_format) {
        return Err(
            "a name cannot contain invisible formatting characters (bidi controls such as \
             U+202E, zero-width characters)",
        );
    }
    if part.starts_with('-') {
        return Err("a name cannot start with `-`");
    }
    Ok(())
}

impl StepName {
    /// Parses `WORKFLOW/STEP`, or a bare `STEP` meaning `default/STEP`.
    pub fn parse(s: &str) -> Result<Self, NameError> {
        let err = |reason| NameError {
            name: s.to_owned(),
            reason,
        };
        let (workflow, step) = match s.split_once('/') {
            Some((w, st)) => (w, st),
            None => (DEFAULT_WORKFLOW, s),
        };
        check_name_part(workflow).map_err(err)?;
        check_name_part(step).map_err(err)?;
        Ok(Self {
            workflow: workflow.to_owned(),
            step: step.to_owned(),
        })
    }

    /// Builds a name from parts already stored in the journal (not re-validated).
    pub fn from_parts(workflow: impl Into<String>, step: impl Into<String>) -> Self {
        Self {
            workflow: workflow.into(),
            step: step.into(),
        }
    }
}

impl fmt::Display for StepName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.workflow, self.step)
    }
}

/// What `inspect` was asked about: a workflow (no `/`) or a step (with `/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Everything in one workflow.
    Workflow(String),
    /// One step.
    Step(StepName),
}

impl Target {
    /// Parses a WORKFLOW or a WORKFLOW/STEP.
    pub fn parse(s: &str) -> Result<Self, NameError> {
        if s.contains('/') {
            StepName::parse(s).map(Self::Step)
        } else {
            check_name_part(s).map_err(|reason| NameError {
                name: s.to_owned(),
                reason,
            })?;
            Ok(Self::Workflow(s.to_owned()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_names_follow_the_rules() {
        assert_eq!(
            StepName::parse("trip-42/hotel").unwrap(),
            StepName::from_parts("trip-42", "hotel")
        );
        assert_eq!(
            StepName::parse("hotel").unwrap(),
            StepName::from_parts("default", "hotel")
        );
        for bad in [
            "",
            "/",
            "a/",
            "/b",
            "a/b/c",
            "a~b",
            "w/a~b",
            "a b",
            "-x",
            "a\tb",
            "w/\u{1b}[31m",
        ] {
            assert!(StepName::parse(bad).is_err(), "{bad:?} accepted");
        }
        assert!(StepName::parse(&"x".repeat(129)).is_err());
        assert!(StepName::parse(&"x".repeat(128)).is_ok());
        assert_eq!(
            Target::parse("trip-42").unwrap(),
            Target::Workflow("trip-42".into())
        );
        assert_eq!(
            Target::parse("trip-42/car").unwrap(),
            Target::Step(StepName::from_parts("trip-42", "car"))
        );
    }
}
