//! Placeholders in compensation texts and verification URLs, and the environment of commands.
//!
//! A text or URL recipe may name values the journal holds for the step's attempt:
//! `{task_id}`, `{context_id}`, `{step}` (the full `WORKFLOW/STEP`) and `{artifact:NAME}` (the
//! artifact whose `name` is NAME, else whose `artifactId` is NAME; its value is its text parts
//! joined). In a URL every value is percent-encoded (everything but `A-Z a-z 0-9 - . _ ~`), so a
//! value can never add a path segment, a query or a host. Other braces are left alone.
//!
//! # Invariant: remote values never reach a shell as code
//!
//! The agent controls task ids, context ids and artifact texts. Commands (`sh -c`) therefore
//! receive them ONLY through their environment ([`Values::env`]: `A2A_STEP`, `A2A_TASK_ID`,
//! `A2A_CONTEXT_ID`, and per artifact `A2A_ARTIFACT_<NAME>_FILE`, the path of a private file
//! holding the value, plus `A2A_ARTIFACT_<NAME>` for values up to [`ENV_VALUE_LIMIT`]), never
//! spliced into the command string. Large values go only as files because Linux refuses an
//! environment string over 128 KiB (`E2BIG`): the shell would never start. A command
//! string that contains a placeholder is refused when the plan or the flags are validated
//! ([`find`] finds them; the hint names the variable to use, e.g. `"$A2A_TASK_ID"`). Refusing is
//! deliberate: substituting `"$A2A_…"` references would be wrong inside single quotes and
//! unquoted inside double quotes, and silently leaving `{task_id}` would run the command on a
//! literal brace string.

use std::fmt;

use crate::journal::{Artifact, Attempt, StepName};

/// The prefix of artifact variables (`A2A_ARTIFACT_BOOKING`).
pub const ARTIFACT_ENV_PREFIX: &str = "A2A_ARTIFACT_";
/// The variable holding the step's full name.
pub const STEP_ENV: &str = "A2A_STEP";
/// The variable holding the task id.
pub const TASK_ID_ENV: &str = "A2A_TASK_ID";
/// The variable holding the context id.
pub const CONTEXT_ID_ENV: &str = "A2A_CONTEXT_ID";
/// The suffix of the variable holding an artifact file's path (`A2A_ARTIFACT_BOOKING_FILE`).
pub const FILE_ENV_SUFFIX: &str = "_FILE";
/// The largest artifact value also set as a variable of its own (64 KiB); every value is in
/// its file.
pub const ENV_VALUE_LIMIT: usize = 64 * 1024;
/// The most bytes of artifact values set as variables in all (the kernel bounds a process's
/// whole environment too); past it, values are passed as files only.
pub const ENV_VALUES_TOTAL: usize = 512 * 1024;

/// One placeholder found in a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placeholder {
    /// `{task_id}`.
    TaskId,
    /// `{context_id}`.
    ContextId,
    /// `{step}`.
    Step,
    /// `{artifact:NAME}`.
    Artifact(String),
}

impl Placeholder {
    /// Returns the environment variable a command reads instead (`A2A_TASK_ID`).
    pub fn env_name(&self) -> String {
        match self {
            Self::TaskId => TASK_ID_ENV.to_owned(),
            Self::ContextId => CONTEXT_ID_ENV.to_owned(),
            Self::Step => STEP_ENV.to_owned(),
            Self::Artifact(name) => artifact_env_name(name),
        }
    }
}

impl fmt::Display for Placeholder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TaskId => f.write_str("{task_id}"),
            Self::ContextId => f.write_str("{context_id}"),
            Self::Step => f.write_str("{step}"),
            Self::Artifact(name) => write!(f, "{{artifact:{name}}}"),
        }
    }
}

/// A placeholder whose value the journal does not hold (yet).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no value for `{placeholder}`: {reason}")]
pub struct MissingValue {
    /// The placeholder.
    pub placeholder: String,
    /// Why (no task id yet, no artifact of that name).
    pub reason: &'static str,
}

/// How filled values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    /// As they are (message texts).
    Text,
    /// Percent-encoded (URLs).
    Url,
}

/// The values placeholders and command environments take for one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Values {
    /// The step's full name, `WORKFLOW/STEP`.
    pub step: String,
    /// The attempt's task id, once known.
    pub task_id: Option<String>,
    /// The attempt's context id, once known.
    pub context_id: Option<String>,
    /// Artifacts as (name, else artifactId) and their text parts joined, in journal order.
    pub artifacts: Vec<NamedArtifact>,
}

/// An artifact as placeholders see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedArtifact {
    /// Its `name`, if it has one.
    pub name: Option<String>,
    /// Its `artifactId`.
    pub artifact_id: String,
    /// Its text parts joined.
    pub text: String,
}

impl NamedArtifact {
    /// Returns the name it is known by: its `name`, else its `artifactId`.
    pub fn key(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.artifact_id)
    }
}

impl Values {
    /// Collects the values of a journaled attempt and its artifacts.
    pub fn of_attempt(step: &StepName, attempt: &Attempt, artifacts: &[Artifact]) -> Self {
        Self {
            step: step.to_string(),
            task_id: attempt.task_id.clone(),
            context_id: attempt.context_id.clone(),
            artifacts: artifacts
                .iter()
                .map(|a| NamedArtifact {
                    name: a.name.clone(),
                    artifact_id: a.artifact_id.clone(),
                    text: a.text(),
                })
                .collect(),
        }
    }

    /// Returns the value of one placeholder.
    ///
    /// `{artifact:NAME}` takes the first artifact named NAME, else the first whose id is NAME.
    pub fn value(&self, p: &Placeholder) -> Result<&str, MissingValue> {
        let missing = |reason| MissingValue {
            placeholder: p.to_string(),
            reason,
        };
        match p {
            Placeholder::TaskId => self
                .task_id
                .as_deref()
                .ok_or_else(|| missing("the attempt has no task id")),
            Placeholder::ContextId => self
                .context_id
                .as_deref()
                .ok_or_else(|| missing("the attempt has no context id")),
            Placeholder::Step => Ok(&self.step),
            Placeholder::Artifact(name) => self
                .artifacts
                .iter()
                .find(|a| a.name.as_deref() == Some(name))
                .or_else(|| self.artifacts.iter().find(|a| a.artifact_id == *name))
                .map(|a| a.text.as_str())
                .ok_or_else(|| missing("no journaled artifact has that name or id")),
        }
    }

    /// Returns the environment a command gets: `A2A_STEP`, `A2A_TASK_ID`, `A2A_CONTEXT_ID`
    /// (when known) as variables, and per artifact (the first of colliding names wins) its
    /// value as a file (`A2A_ARTIFACT_<NAME>_FILE`) and, when it is at most
    /// [`ENV_VALUE_LIMIT`] bytes, holds no NUL byte and the values so far stay within
    /// [`ENV_VALUES_TOTAL`], as the variable `A2A_ARTIFACT_<NAME>` too. Values are exact bytes.
    pub fn env(&self) -> CommandEnv {
        let mut vars = vec![(STEP_ENV.to_owned(), self.step.clone())];
        if let Some(t) = &self.task_id {
            vars.push((TASK_ID_ENV.to_owned(), t.clone()));
        }
        if let Some(c) = &self.context_id {
            vars.push((CONTEXT_ID_ENV.to_owned(), c.clone()));
        }
        let mut files: Vec<(String, String)> = Vec::new();
        let mut total = 0;
        for a in &self.artifacts {
            let name = artifact_env_name(a.key());
            let file_var = format!("{name}{FILE_ENV_SUFFIX}");
            let taken =
                |n: &str| vars.iter().any(|(v, _)| v == n) || files.iter().any(|(v, _)| v == n);
            if taken(&name) || taken(&file_var) {
                continue;
            }
            files.push((file_var, a.text.clone()));
            let fits = a.text.len() <= ENV_VALUE_LIMIT && total + a.text.len() <= ENV_VALUES_TOTAL;
            if fits && !a.text.contains('\0') {
                total += a.text.len();
                vars.push((name, a.text.clone()));
            }
        }
        CommandEnv { vars, files }
    }
}

/// What a command gets besides the inherited environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandEnv {
    /// Variables, set as they are.
    pub vars: Vec<(String, String)>,
    /// Values each written to a private file; the variable (first) holds the file's path.
    pub files: Vec<(String, String)>,
}

/// Returns the variable of an artifact: `A2A_ARTIFACT_` and the name upper-cased, with every
/// character other than `A-Z` and `0-9` made `_`.
pub fn artifact_env_name(name: &str) -> String {
    let mut out = String::with_capacity(ARTIFACT_ENV_PREFIX.len() + name.len());
    out.push_str(ARTIFACT_ENV_PREFIX);
    out.extend(name.chars().map(|c| {
        let c = c.to_ascii_uppercase();
        if c.is_ascii_uppercase() || c.is_ascii_digit() {
            c
        } else {
            '_'
        }
    }));
    out
}

/// A piece of a parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece<'a> {
    Literal(&'a str),
    Hole(Placeholder),
}

/// Splits a template into literals and placeholders; unknown `{…}` stay literal.
fn pieces(template: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = template;
    let mut literal_start = 0;
    let mut offset = 0;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let hole = after.find('}').and_then(|close| {
            let inner = &after[..close];
            let p = match inner {
                "task_id" => Some(Placeholder::TaskId),
                "context_id" => Some(Placeholder::ContextId),
                "step" => Some(Placeholder::Step),
                _ => inner
                    .strip_prefix("artifact:")
                    .filter(|n| !n.is_empty() && !n.contains('{'))
                    .map(|n| Placeholder::Artifact(n.to_owned())),
            };
            p.map(|p| (p, close))
        });
        let Some((p, close)) = hole else {
            offset += open + 1;
            rest = &rest[open + 1..];
            continue;
        };
        let start = offset + open;
        if start > literal_start {
            out.push(Piece::Literal(&template[literal_start..start]));
        }
        out.push(Piece::Hole(p));
        let consumed = open + 1 + close + 1;
        offset += consumed;
        literal_start = offset;
        rest = &rest[consumed..];
    }
    if literal_start < template.len() {
        out.push(Piece::Literal(&template[literal_start..]));
    }
    out
}

/// Returns the placeholders a template names, in order.
pub fn find(template: &str) -> Vec<Placeholder> {
    pieces(template)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Hole(h) => Some(h),
            Piece::Literal(_) => None,
        })
        .collect()
}

/// Fills a template's placeholders; a value the journal does not hold is an error.
pub fn fill(template: &str, values: &Values, mode: Fill) -> Result<String, MissingValue> {
    let mut out = String::with_capacity(template.len());
    for piece in pieces(template) {
        match piece {
            Piece::Literal(s) => out.push_str(s),
            Piece::Hole(p) => {
                let v = values.value(&p)?;
                match mode {
                    Fill::Text => out.push_str(v),
                    Fill::Url => percent_encode_into(v, &mut out),
                }
            }
        }
    }
    Ok(out)
}

/// Fills every placeholder with a harmless sample value (`x`), to validate a URL recipe before
/// anything is journaled.
pub fn fill_with_samples(template: &str) -> String {
    let mut out = String::with_capacity(template.len());
    for piece in pieces(template) {
        match piece {
            Piece::Literal(s) => out.push_str(s),
            Piece::Hole(_) => out.push('x'),
        }
    }
    out
}

/// Percent-encodes every byte outside the RFC 3986 unreserved set.
fn percent_encode_into(value: &str, out: &mut String) {
    use std::fmt::Write as _;
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values() -> Values {
        Values {
            step: "trip-42/hotel".into(),
            task_id: Some("t-1".into()),
            context_id: Some("c/1".into()),
            artifacts: vec![
                NamedArtifact {
                    name: Some("booking".into()),
                    artifact_id: "a-1".into(),
                    text: "H 7/../x?y=1#z".into(),
                },
                NamedArtifact {
                    name: None,
                    artifact_id: "receipt-2".into(),
                    text: "$(touch pwned); rm -rf x".into(),
                },
            ],
        }
    }

    #[test]
    fn text_placeholders_are_filled_verbatim() {
        let v = values();
        assert_eq!(
            fill(
                "cancel {artifact:booking} of {step} (task {task_id}, ctx {context_id})",
                &v,
                Fill::Text
            )
            .unwrap(),
            "cancel H 7/../x?y=1#z of trip-42/hotel (task t-1, ctx c/1)"
        );
        assert_eq!(
            fill("{artifact:receipt-2}", &v, Fill::Text).unwrap(),
            "$(touch pwned); rm -rf x"
        );
        // Unknown braces are literal.
        assert_eq!(
            fill("{\"a\": {x}} {artifact:} {", &v, Fill::Text).unwrap(),
            "{\"a\": {x}} {artifact:} {"
        );
    }

    #[test]
    fn url_values_are_percent_encoded() {
        let v = values();
        assert_eq!(
            fill(
                "http://h/bookings/{artifact:booking}?step={step}",
                &v,
                Fill::Url
            )
            .unwrap(),
            "http://h/bookings/H%207%2F..%2Fx%3Fy%3D1%23z?step=trip-42%2Fhotel"
        );
        assert_eq!(
            fill("http://h/{context_id}", &v, Fill::Url).unwrap(),
            "http://h/c%2F1"
        );
    }

    #[test]
    fn missing_values_are_errors() {
        let mut v = values();
        v.task_id = None;
        let e = fill("x {task_id}", &v, Fill::Text).unwrap_err();
        assert_eq!(e.placeholder, "{task_id}");
        assert!(fill("{artifact:nope}", &v, Fill::Url).is_err());
    }

    #[test]
    fn names_prefer_name_then_id() {
        let mut v = values();
        v.artifacts.push(NamedArtifact {
            name: Some("a-1".into()),
            artifact_id: "zzz".into(),
            text: "by name".into(),
        });
        // `a-1` is an artifact's id and another's name: the name wins.
        assert_eq!(fill("{artifact:a-1}", &v, Fill::Text).unwrap(), "by name");
    }

    #[test]
    fn env_names_are_sanitized_and_values_exact() {
        assert_eq!(
            artifact_env_name("booking-ref.v2 ü"),
            "A2A_ARTIFACT_BOOKING_REF_V2__"
        );
        let env = values().env();
        assert_eq!(
            env.vars,
            vec![
                ("A2A_STEP".to_owned(), "trip-42/hotel".to_owned()),
                ("A2A_TASK_ID".to_owned(), "t-1".to_owned()),
                ("A2A_CONTEXT_ID".to_owned(), "c/1".to_owned()),
                (
                    "A2A_ARTIFACT_BOOKING".to_owned(),
                    "H 7/../x?y=1#z".to_owned()
                ),
                (
                    "A2A_ARTIFACT_RECEIPT_2".to_owned(),
                    "$(touch pwned); rm -rf x".to_owned()
                ),
            ]
        );
        assert_eq!(
            env.files,
            vec![
                (
                    "A2A_ARTIFACT_BOOKING_FILE".to_owned(),
                    "H 7/../x?y=1#z".to_owned()
                ),
                (
                    "A2A_ARTIFACT_RECEIPT_2_FILE".to_owned(),
                    "$(touch pwned); rm -rf x".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn large_values_go_as_files_only() {
        let mut v = values();
        v.artifacts = vec![
            NamedArtifact {
                name: Some("big".into()),
                artifact_id: "a".into(),
                text: "x".repeat(ENV_VALUE_LIMIT + 1),
            },
            NamedArtifact {
                name: Some("nul".into()),
                artifact_id: "b".into(),
                text: "a\0b".into(),
            },
            NamedArtifact {
                name: Some("small".into()),
                artifact_id: "c".into(),
                text: "ok".into(),
            },
        ];
        let env = v.env();
        let names: Vec<&str> = env.vars.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "A2A_STEP",
                "A2A_TASK_ID",
                "A2A_CONTEXT_ID",
                "A2A_ARTIFACT_SMALL"
            ]
        );
        assert_eq!(env.files.len(), 3);
        assert_eq!(env.files[0].1.len(), ENV_VALUE_LIMIT + 1);
    }

    #[test]
    fn find_lists_placeholders_for_validation() {
        assert_eq!(
            find("curl -X DELETE http://h/{artifact:booking} {task_id} {nope}"),
            vec![Placeholder::Artifact("booking".into()), Placeholder::TaskId]
        );
        assert_eq!(Placeholder::TaskId.env_name(), "A2A_TASK_ID");
        assert_eq!(
            Placeholder::Artifact("booking".into()).env_name(),
            "A2A_ARTIFACT_BOOKING"
        );
        assert_eq!(
            fill_with_samples("http://h/{artifact:b}/{step}"),
            "http://h/x/x"
        );
    }
}
