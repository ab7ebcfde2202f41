//! Placeholders in compensation texts and verification URLs, and the environment of commands.
//!
//! A text or URL recipe may name values the journal holds for the step's attempt:
//! `{task_id}`, `{context_id}`, `{step}` (the full `WORKFLOW/STEP`) and `{artifact:NAME}` (the
//! artifact whose `name` is NAME, else whose `artifactId` is NAME; its value is its text parts
//! joined). In a URL every value is percent-encoded (everything but `A-Z a-z 0-9 - . _ ~`), so a
//! value can never add a path segment, a query or a host. Other braces are left alone.
//!
//! # Invariant: the agent never chooses which value a recipe reads
//!
//! - A variable whose name ends in `_FILE` only ever names a file a2a-recover wrote: an
//!   artifact whose own variable would end in `_FILE` (`booking_file` → `A2A_ARTIFACT_BOOKING_FILE`)
//!   gets only its file variable (`A2A_ARTIFACT_BOOKING_FILE_FILE`), never that name.
//! - Two artifacts that map to one variable (`booking` and `Booking`, two named `booking`), or
//!   that `{artifact:NAME}` could both mean (named NAME, or with the id NAME), are a
//!   [`Collision`]: nothing is filled and no command gets an environment ([`Values::env`],
//!   [`fill`] fail), so the order in which the agent sent them never decides. The callers leave
//!   the effect `unknown` for a human, and run nothing.
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

/// The most characters of one artifact id a [`Collision`] names (ids are remote text).
const ID_CHARS: usize = 80;

/// Artifacts that map to one variable or one `{artifact:NAME}`: what they share and their ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shared {
    /// The variable (`A2A_ARTIFACT_BOOKING`) or the placeholder (`{artifact:booking}`).
    pub target: String,
    /// The `artifactId`s of the artifacts that map to it, in journal order (as received).
    pub artifact_ids: Vec<String>,
}

/// Two or more artifacts map to one variable or one `{artifact:NAME}`: which value a command
/// or a recipe would read is the agent's choice (the order it sent them in), so none is read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe(.0))]
pub struct Collision(pub Vec<Shared>);

impl Collision {
    /// Returns every colliding artifact id, each once, in order.
    pub fn artifact_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        for id in self.0.iter().flat_map(|s| &s.artifact_ids) {
            if !ids.contains(id) {
                ids.push(id.clone());
            }
        }
        ids
    }
}

/// `artifacts `a-0` and `a-1` both map to `A2A_ARTIFACT_BOOKING``, each shared target in turn;
/// ids made inert and cut.
fn describe(shared: &[Shared]) -> String {
    let each: Vec<String> = shared
        .iter()
        .map(|s| {
            let ids: Vec<String> = s
                .artifact_ids
                .iter()
                .map(|id| {
                    let shown: String = id.chars().take(ID_CHARS).collect();
                    let cut = if shown.len() < id.len() { "…" } else { "" };
                    format!("`{}{cut}`", crate::sanitize::inert(&shown))
                })
                .collect();
            let (last, rest) = ids
                .split_last()
                .map_or(("", &[][..]), |(l, r)| (l.as_str(), r));
            let all = if rest.is_empty() {
                last.to_owned()
            } else {
                format!("{} and {last}", rest.join(", "))
            };
            let both = if ids.len() == 2 { "both " } else { "all " };
            format!(
                "artifacts {all} {both}map to `{}`",
                crate::sanitize::inert(&s.target)
            )
        })
        .collect();
    each.join("; ")
}

/// Why a placeholder could not be filled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FillError {
    /// The journal holds no value for it (yet).
    #[error(transparent)]
    Missing(#[from] MissingValue),
    /// Two or more artifacts map to it.
    #[error(transparent)]
    Collision(#[from] Collision),
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
    /// Its value: its text parts, and its data parts as compact JSON, in order.
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
    /// `{artifact:NAME}` takes the artifact named NAME, else the one whose id is NAME; two
    /// artifacts it could mean (two named NAME, or one named NAME and another whose id is NAME)
    /// are a [`Collision`].
    pub fn value(&self, p: &Placeholder) -> Result<&str, FillError> {
        let missing = |reason| MissingValue {
            placeholder: p.to_string(),
            reason,
        };
        match p {
            Placeholder::TaskId => self
                .task_id
                .as_deref()
                .ok_or_else(|| missing("the attempt has no task id").into()),
            Placeholder::ContextId => self
                .context_id
                .as_deref()
                .ok_or_else(|| missing("the attempt has no context id").into()),
            Placeholder::Step => Ok(&self.step),
            Placeholder::Artifact(name) => Ok(self.artifact(name)?.text.as_str()),
        }
    }

    /// Returns the one artifact `{artifact:NAME}` means: the artifact named NAME, else the one
    /// whose id is NAME; none is a [`MissingValue`], two or more a [`Collision`].
    pub fn artifact(&self, name: &str) -> Result<&NamedArtifact, FillError> {
        let meant: Vec<&NamedArtifact> = self
            .artifacts
            .iter()
            .filter(|a| a.name.as_deref() == Some(name) || a.artifact_id == name)
            .collect();
        match meant.as_slice() {
            [] => Err(MissingValue {
                placeholder: Placeholder::Artifact(name.to_owned()).to_string(),
                reason: "no journaled artifact has that name or id",
            }
            .into()),
            [one] => Ok(one),
            many => Err(Collision(vec![Shared {
                target: Placeholder::Artifact(name.to_owned()).to_string(),
                artifact_ids: many.iter().map(|a| a.artifact_id.clone()).collect(),
            }])
            .into()),
        }
    }

    /// Returns the environment a command gets: `A2A_STEP`, `A2A_TASK_ID`, `A2A_CONTEXT_ID`
    /// (when known) as variables, and per artifact its value as a file whose path is in
    /// `A2A_ARTIFACT_<NAME>_FILE` and, when it is at most [`ENV_VALUE_LIMIT`] bytes, holds no
    /// NUL byte and the values so far stay within [`ENV_VALUES_TOTAL`], as the variable
    /// `A2A_ARTIFACT_<NAME>` too. Values are exact bytes.
    ///
    /// An artifact whose variable would end in `_FILE` gets only its file variable, so a
    /// `…_FILE` variable always names a file we wrote; two artifacts that map to one variable
    /// are a [`Collision`] (no environment at all: which one a command reads would be the
    /// agent's choice).
    pub fn env(&self) -> Result<CommandEnv, Collision> {
        let collisions = self.env_collisions();
        if !collisions.is_empty() {
            return Err(Collision(collisions));
        }
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
            files.push((format!("{name}{FILE_ENV_SUFFIX}"), a.text.clone()));
            if name.ends_with(FILE_ENV_SUFFIX) {
                continue;
            }
            let fits = a.text.len() <= ENV_VALUE_LIMIT && total + a.text.len() <= ENV_VALUES_TOTAL;
            if fits && !a.text.contains('\0') {
                total += a.text.len();
                vars.push((name, a.text.clone()));
            }
        }
        Ok(CommandEnv { vars, files })
    }

    /// Returns the variables two or more artifacts map to, with their ids. Every variable an
    /// artifact gets is its name's (`A2A_ARTIFACT_<NAME>`, never ending in `_FILE`) or that
    /// name and `_FILE`: two artifacts share a variable exactly when they share the name.
    fn env_collisions(&self) -> Vec<Shared> {
        let mut by_name: Vec<(String, Vec<String>)> = Vec::new();
        for a in &self.artifacts {
            let name = artifact_env_name(a.key());
            match by_name.iter_mut().find(|(n, _)| *n == name) {
                Some((_, ids)) => ids.push(a.artifact_id.clone()),
                None => by_name.push((name, vec![a.artifact_id.clone()])),
            }
        }
        by_name
            .into_iter()
            .filter(|(_, ids)| ids.len() > 1)
            .map(|(name, artifact_ids)| Shared {
                target: if name.ends_with(FILE_ENV_SUFFIX) {
                    format!("{name}{FILE_ENV_SUFFIX}")
                } else {
                    name
                },
                artifact_ids,
            })
            .collect()
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

/// Fills a template's placeholders; a value the journal does not hold, or an artifact name two
/// artifacts answer to, is an error.
pub fn fill(template: &str, values: &Values, mode: Fill) -> Result<String, FillError> {
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
        let FillError::Missing(e) = fill("x {task_id}", &v, Fill::Text).unwrap_err() else {
            panic!("not a missing value");
        };
        assert_eq!(e.placeholder, "{task_id}");
        assert!(fill("{artifact:nope}", &v, Fill::Url).is_err());
    }

    #[test]
    fn a_name_two_artifacts_answer_to_is_a_collision() {
        let mut v = values();
        // `a-1` is one artifact's id and another's name: which one is meant would be a guess.
        v.artifacts.push(NamedArtifact {
            name: Some("a-1".into()),
            artifact_id: "zzz".into(),
            text: "by name".into(),
        });
        let FillError::Collision(c) = fill("{artifact:a-1}", &v, Fill::Text).unwrap_err() else {
            panic!("not a collision");
        };
        assert_eq!(c.artifact_ids(), ["a-1", "zzz"]);
        assert_eq!(
            c.to_string(),
            "artifacts `a-1` and `zzz` both map to `{artifact:a-1}`"
        );
        // Two named alike, in either order: never the first one.
        v.artifacts.push(NamedArtifact {
            name: Some("booking".into()),
            artifact_id: "a-9".into(),
            text: "the agent's pick".into(),
        });
        assert!(matches!(
            fill("x/{artifact:booking}", &v, Fill::Url),
            Err(FillError::Collision(_))
        ));
        // An artifact named as its own id is one artifact.
        v.artifacts = vec![NamedArtifact {
            name: Some("r".into()),
            artifact_id: "r".into(),
            text: "one".into(),
        }];
        assert_eq!(fill("{artifact:r}", &v, Fill::Text).unwrap(), "one");
    }

    #[test]
    fn a_file_variable_only_ever_names_a_file_we_wrote() {
        let mut v = values();
        // Sent first, so that under "the first free name wins" it took the real booking's file
        // variable, with a path of the agent's choosing as its value.
        v.artifacts.insert(
            0,
            NamedArtifact {
                name: Some("booking_file".into()),
                artifact_id: "a-0".into(),
                text: "/etc/passwd".into(),
            },
        );
        let env = v.env().unwrap();
        let var = |n: &str| {
            env.vars
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(var("A2A_ARTIFACT_BOOKING_FILE"), None);
        assert_eq!(var("A2A_ARTIFACT_BOOKING"), Some("H 7/../x?y=1#z"));
        let files: Vec<(&str, &str)> = env
            .files
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            files,
            [
                ("A2A_ARTIFACT_BOOKING_FILE_FILE", "/etc/passwd"),
                ("A2A_ARTIFACT_BOOKING_FILE", "H 7/../x?y=1#z"),
                ("A2A_ARTIFACT_RECEIPT_2_FILE", "$(touch pwned); rm -rf x"),
            ]
        );
        assert!(
            env.vars.iter().all(|(k, _)| !k.ends_with(FILE_ENV_SUFFIX)),
            "{:?}",
            env.vars
        );
    }

    #[test]
    fn two_artifacts_on_one_variable_are_a_collision() {
        for (first, second, target) in [
            ("booking", "Booking", "A2A_ARTIFACT_BOOKING"),
            ("booking-ref", "booking.ref", "A2A_ARTIFACT_BOOKING_REF"),
            ("x_file", "X-FILE", "A2A_ARTIFACT_X_FILE_FILE"),
        ] {
            let mut v = values();
            v.artifacts.clear();
            for (i, name) in [first, second].into_iter().enumerate() {
                v.artifacts.push(NamedArtifact {
                    name: Some(name.into()),
                    artifact_id: format!("id-{i}"),
                    text: name.into(),
                });
            }
            let c = v.env().unwrap_err();
            assert_eq!(c.artifact_ids(), ["id-0", "id-1"], "{first} {second}");
            assert_eq!(c.0[0].target, target);
            assert!(
                c.to_string().contains("`id-0` and `id-1` both map to"),
                "{c}"
            );
        }
        // An unnamed artifact is known by its id: named alike, the two collide too.
        let mut v = values();
        v.artifacts.push(NamedArtifact {
            name: None,
            artifact_id: "booking".into(),
            text: "x".into(),
        });
        assert_eq!(v.env().unwrap_err().artifact_ids(), ["a-1", "booking"]);
    }

    #[test]
    fn collision_messages_are_inert_and_bounded() {
        let c = Collision(vec![Shared {
            target: "A2A_ARTIFACT_X".into(),
            artifact_ids: vec!["\u{1b}[31mred".into(), "y".repeat(500), "z".into()],
        }]);
        let text = c.to_string();
        assert!(!text.contains('\u{1b}'), "{text}");
        assert!(text.len() < 300, "{text}");
        assert!(text.contains("all map to `A2A_ARTIFACT_X`"), "{text}");
    }

    #[test]
    fn env_names_are_sanitized_and_values_exact() {
        assert_eq!(
            artifact_env_name("booking-ref.v2 ü"),
            "A2A_ARTIFACT_BOOKING_REF_V2__"
        );
        let env = values().env().unwrap();
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
        let env = v.env().unwrap();
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
