//! One renderer for every error: choose the exit code, print `error:`, `Caused by:` and `hint:`.
//!
//! Lower layers raise typed errors (`journal::JournalError`, `a2a::A2aError`, [`CliError`]);
//! commands add context with anyhow; `classify` walks the chain once.

use std::fmt::Write as _;

use crate::commands::util::hints::HintText as _;
use crate::exit;
use crate::sanitize::inert;

/// An error raised by a command with its exit code and an optional hint.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct CliError {
    /// The exit code.
    pub code: u8,
    /// A lowercase fragment naming the problem, values in backticks.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl CliError {
    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            code: exit::USAGE,
            message: message.into(),
            hint: None,
        }
    }

    /// A failure of a2a-recover itself (exit 1).
    pub fn failure(message: impl Into<String>) -> Self {
        Self {
            code: exit::FAILURE,
            message: message.into(),
            hint: None,
        }
    }

    /// An error with any exit code.
    pub fn with_code(code: u8, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            hint: None,
        }
    }

    /// Adds a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

/// Classification of an error chain: the exit code and the hints found along it.
#[derive(Debug)]
pub struct Classified {
    /// The exit code.
    pub code: u8,
    /// Hints, outermost first.
    pub hints: Vec<String>,
    /// Whether the error is a broken pipe on stdout (exit 0, print nothing).
    pub broken_pipe: bool,
}

/// Walks the chain once: the first typed error decides the exit code (default 1).
pub fn classify(err: &anyhow::Error) -> Classified {
    let mut code = None;
    let mut hints = Vec::new();
    for cause in err.chain() {
        if cause.downcast_ref::<crate::output::BrokenPipe>().is_some()
            || cause
                .downcast_ref::<crate::recovery::error::Stopped>()
                .is_some()
        {
            return Classified {
                code: exit::OK,
                hints,
                broken_pipe: true,
            };
        }
        if let Some(e) = cause.downcast_ref::<CliError>() {
            code.get_or_insert(e.code);
            hints.extend(e.hint.clone());
        } else if let Some(e) = cause.downcast_ref::<crate::journal::JournalError>() {
            code.get_or_insert(exit::FAILURE);
            hints.extend(e.hint_text());
        } else if let Some(e) = cause.downcast_ref::<crate::a2a::A2aError>() {
            code.get_or_insert(e.exit_code());
            hints.extend(e.hint_text());
        } else if let Some(e) = cause.downcast_ref::<crate::recovery::error::RecoveryError>() {
            code.get_or_insert(recovery_exit(e));
            hints.extend(e.hint_text());
        } else if let Some(e) = cause.downcast_ref::<crate::recovery::lock::LockError>() {
            code.get_or_insert(exit::FAILURE);
            hints.extend(e.hint_text());
        }
    }
    Classified {
        code: code.unwrap_or(exit::FAILURE),
        hints,
        broken_pipe: false,
    }
}

/// The exit code of a recovery error.
fn recovery_exit(e: &crate::recovery::error::RecoveryError) -> u8 {
    use crate::recovery::error::RecoveryError;
    match e {
        RecoveryError::UnknownWorkflow(_) => exit::USAGE,
        RecoveryError::CredentialGone(_) => exit::NEEDS_HUMAN,
    }
}

/// Makes each line inert on its own, so a multi-line message keeps its line breaks.
fn inert_lines(text: &str) -> String {
    text.lines().map(inert).collect::<Vec<_>>().join("\n")
}

/// Renders `error: …`, `  Caused by: …` lines, then `hint: …` lines.
///
/// Messages may quote remote text, so every line is made inert.
pub fn render(err: &anyhow::Error, hints: &[String]) -> String {
    let mut out = String::new();
    let mut chain = err.chain();
    if let Some(top) = chain.next() {
        let _ = writeln!(out, "error: {}", inert_lines(&top.to_string()));
    }
    let mut last = String::new();
    for cause in chain {
        let text = inert_lines(&cause.to_string());
        // thiserror `#[error(transparent)]`-style wrappers repeat their source; skip echoes.
        if text != last {
            let _ = writeln!(out, "  Caused by: {text}");
        }
        last = text;
    }
    for hint in hints {
        let _ = writeln!(out, "\nhint: {}", inert(hint));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_error_exits_2_with_hint() {
        let err = anyhow::Error::new(CliError::usage("unknown step `x/y`").hint("run inspect"))
            .context("failed to reply");
        let c = classify(&err);
        assert_eq!(c.code, exit::USAGE);
        assert_eq!(c.hints, vec!["run inspect".to_owned()]);
        let text = render(&err, &c.hints);
        assert_eq!(
            text,
            "error: failed to reply\n  Caused by: unknown step `x/y`\n\nhint: run inspect\n"
        );
    }

    #[test]
    fn untyped_errors_exit_1() {
        let err = anyhow::anyhow!("disk on fire");
        assert_eq!(classify(&err).code, exit::FAILURE);
    }
}
