//! Workflow plans (`delegate --plan FILE`): parsing, validation, effect recipes, and the diff
//! against what the journal holds.
//!
//! A plan is TOML with exactly the documented keys (docs/sagas.md: `workflow`, `[[step]]` with `name`,
//! `agent` | `skill`, `text`, `token_env` | `token_cmd`, `metadata`, `data`, `max_attempts`, `effect`, `compensate`,
//! `verify`). [`parse`] validates the WHOLE file before anything is journaled and returns every
//! problem it finds, each with its line and column ([`Issue`]): unknown keys, wrong types,
//! missing `text`, both or neither of `agent` and `skill`, `effect = true` without `compensate`
//! and `verify` (or those without `effect = true`), duplicate or bad step names, unset
//! `token_env` variables, bad URLs, and placeholders in commands.
//!
//! # Invariants
//!
//! - Parsing has no side effect; its only input from outside is the environment lookup for
//!   `token_env` (passed in, so tests control it).
//! - Commands run in the plan file's directory, journaled as an absolute path (`cwd`), and get
//!   remote values only through environment variables (see `placeholders`); a
//!   command that names a placeholder is refused here.
//! - The recipes are journaled as JSON in the shape the plan wrote them
//!   ([`Compensation::to_json`], [`Verification::to_json`]) and read back with `from_json`.

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use toml::Spanned;

use crate::a2a::card_url_for;
use crate::journal::{Binding, StepName, StepSpec, check_name_part};
use crate::placeholders;
use crate::sanitize::inert;

mod toml_json;

use toml_json::toml_table_to_json;

/// The attempt budget of a step when the plan does not say.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;
/// The largest `max_attempts` accepted.
pub const MAX_MAX_ATTEMPTS: i64 = 100;
/// The suffix of a compensation step's name (`hotel~compensate`).
pub const COMPENSATE_SUFFIX: &str = "~compensate";

/// Returns the journaled `effect` of a step that declares one.
pub fn effect_json() -> Value {
    json!({"declared": true})
}

/// Where a compensation message goes when it is not the step's own agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompensationTarget {
    /// An agent by its card URL.
    Agent(String),
    /// The first registered agent with this skill.
    Skill(String),
}

/// How a step's effect is undone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compensation {
    /// An A2A message (placeholders filled) to the step's agent, or to `target`.
    Message {
        /// The text, with placeholders.
        text: String,
        /// Another agent or skill; `None` = the agent the step's attempt went to.
        target: Option<CompensationTarget>,
    },
    /// A command run with `sh -c` in the step's directory; values come in the environment.
    Command(String),
}

/// How a step's effect is read independently of the agent's claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verification {
    /// A command: exit 0 = exists, 1 = absent, anything else = unknown.
    Command(String),
    /// A URL (placeholders percent-encoded): 2xx = exists, 404 = absent, else unknown.
    Url(String),
}

/// A journaled recipe that cannot be read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unreadable {what} recipe in the journal: {json}")]
pub struct RecipeError {
    /// `compensate` or `verify`.
    pub what: &'static str,
    /// The JSON found.
    pub json: String,
}

fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

impl Compensation {
    /// Returns the journaled JSON: `{"text": …[, "agent"|"skill": …]}` or `{"command": …}`.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Message { text, target } => {
                let mut m = Map::new();
                m.insert("text".into(), Value::String(text.clone()));
                match target {
                    Some(CompensationTarget::Agent(a)) => {
                        m.insert("agent".into(), Value::String(a.clone()));
                    }
                    Some(CompensationTarget::Skill(s)) => {
                        m.insert("skill".into(), Value::String(s.clone()));
                    }
                    None => {}
                }
                Value::Object(m)
            }
            Self::Command(c) => json!({"command": c}),
        }
    }

    /// Reads the journaled JSON back.
    pub fn from_json(v: &Value) -> Result<Self, RecipeError> {
        let err = || RecipeError {
            what: "compensate",
            json: v.to_string(),
        };
        match (str_field(v, "text"), str_field(v, "command")) {
            (Some(text), None) => {
                let target = match (str_field(v, "agent"), str_field(v, "skill")) {
                    (None, None) => None,
                    (Some(a), None) => Some(CompensationTarget::Agent(a.to_owned())),
                    (None, Some(s)) => Some(CompensationTarget::Skill(s.to_owned())),
                    (Some(_), Some(_)) => return Err(err()),
                };
                Ok(Self::Message {
                    text: text.to_owned(),
                    target,
                })
            }
            (None, Some(c)) => Ok(Self::Command(c.to_owned())),
            _ => Err(err()),
        }
    }
}

impl Verification {
    /// Returns the journaled JSON: `{"command": …}` or `{"url": …}`.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Command(c) => json!({"command": c}),
            Self::Url(u) => json!({"url": u}),
        }
    }

    /// Reads the journaled JSON back.
    pub fn from_json(v: &Value) -> Result<Self, RecipeError> {
        match (str_field(v, "command"), str_field(v, "url")) {
            (Some(c), None) => Ok(Self::Command(c.to_owned())),
            (None, Some(u)) => Ok(Self::Url(u.to_owned())),
            _ => Err(RecipeError {
                what: "verify",
                json: v.to_string(),
            }),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------

/// One problem in a plan file, at a 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// The line (1-based).
    pub line: usize,
    /// The column in characters (1-based).
    pub column: usize,
    /// What is wrong (a lowercase fragment).
    pub message: String,
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// A validated plan: the workflow and its steps in plan order, ready to journal.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The workflow's name.
    pub workflow: String,
    /// The steps, in plan order (compensation runs in reverse).
    pub steps: Vec<StepSpec>,
    /// Each step's `push` (the listener's public base URL), in the order of `steps`.
    pub push: Vec<Option<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlan {
    workflow: Option<Spanned<String>>,
    #[serde(default)]
    step: Vec<Spanned<RawStep>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    name: Option<Spanned<String>>,
    agent: Option<Spanned<String>>,
    skill: Option<Spanned<String>>,
    text: Option<Spanned<String>>,
    token_env: Option<Spanned<String>>,
    token_cmd: Option<Spanned<String>>,
    metadata: Option<Spanned<toml::Table>>,
    data: Option<Spanned<toml::Table>>,
    max_attempts: Option<Spanned<i64>>,
    effect: Option<Spanned<bool>>,
    compensate: Option<Spanned<RawCompensate>>,
    verify: Option<Spanned<RawVerify>>,
    binding: Option<Spanned<String>>,
    protocol: Option<Spanned<String>>,
    push: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCompensate {
    text: Option<Spanned<String>>,
    command: Option<Spanned<String>>,
    agent: Option<Spanned<String>>,
    skill: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVerify {
    command: Option<Spanned<String>>,
    url: Option<Spanned<String>>,
}

/// Collects issues with positions computed from byte offsets.
struct Issues<'a> {
    source: &'a str,
    list: Vec<Issue>,
}

impl Issues<'_> {
    fn at(&mut self, span: Range<usize>, message: impl Into<String>) {
        let (line, column) = line_col(self.source, span.start);
        self.list.push(Issue {
            line,
            column,
            message: message.into(),
        });
    }
}

/// Returns the 1-based line and character column of a byte offset.
pub fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(source.len());
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = source[line_start..offset].chars().count() + 1;
    (line, column)
}

/// Parses and validates a plan; `dir` is the plan file's absolute directory (the `cwd` of its
/// commands) and `env` looks up `token_env` variables.
///
/// Returns every problem found, in file order; nothing is ever journaled by this function.
pub fn parse(
    source: &str,
    dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Plan, Vec<Issue>> {
    let mut issues = Issues {
        source,
        list: Vec::new(),
    };
    let raw: RawPlan = match toml::from_str(source) {
        Ok(raw) => raw,
        Err(e) => {
            issues.at(e.span().unwrap_or(0..0), e.message().trim().to_owned());
            return Err(issues.list);
        }
    };
    let workflow = match &raw.workflow {
        None => {
            issues.at(
                0..0,
                "the plan has no `workflow`; add e.g. `workflow = \"trip-42\"` at the top",
            );
            None
        }
        Some(w) => match check_name_part(w.get_ref()) {
            Ok(()) => Some(w.get_ref().clone()),
            Err(reason) => {
                issues.at(
                    w.span(),
                    format!("bad workflow name `{}`: {reason}", inert(w.get_ref())),
                );
                None
            }
        },
    };
    if raw.step.is_empty() {
        issues.at(
            source.len()..source.len(),
            "the plan has no `[[step]]`; add at least one",
        );
    }
    let mut steps = Vec::new();
    let mut push = Vec::new();
    // Each step name with where it first came: a lookup, not a walk (plans of many steps).
    let mut seen: HashMap<&str, Range<usize>> = HashMap::new();
    for raw_step in &raw.step {
        let span = raw_step.span();
        let step = raw_step.get_ref();
        let name = match &step.name {
            None => {
                issues.at(span.clone(), "this step has no `name`");
                None
            }
            Some(n) => {
                let value = n.get_ref();
                if let Err(reason) = check_name_part(value) {
                    issues.at(
                        n.span(),
                        format!("bad step name `{}`: {reason}", inert(value)),
                    );
                    None
                } else if let Some(first) = seen.get(value.as_str()) {
                    let (l, c) = line_col(source, first.start);
                    issues.at(
                        n.span(),
                        format!("step `{value}` appears twice (first at {l}:{c})"),
                    );
                    None
                } else {
                    seen.insert(value, n.span());
                    Some(value.clone())
                }
            }
        };
        let shown = step
            .name
            .as_ref()
            .map_or_else(|| "?".to_owned(), |n| inert(n.get_ref()));
        let spec = check_step(&mut issues, step, span, &shown, dir, env);
        if let (Some(workflow), Some(name), Some(mut spec)) = (&workflow, name, spec) {
            spec.name = StepName::from_parts(workflow.clone(), name);
            steps.push(spec);
            push.push(step.push.as_ref().map(|p| p.get_ref().clone()));
        }
    }
    if issues.list.is_empty()
        && let Some(workflow) = workflow
    {
        Ok(Plan {
            workflow,
            steps,
            push,
        })
    } else {
        issues.list.sort_by_key(|i| (i.line, i.column));
        Err(issues.list)
    }
}

/// Validates one step's fields; returns its spec (with a placeholder name) when all is well.
fn check_step(
    issues: &mut Issues<'_>,
    step: &RawStep,
    span: Range<usize>,
    name: &str,
    dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<StepSpec> {
    let before = issues.list.len();
    let binding = check_binding(issues, step, &span, name);
    let text = match &step.text {
        None => {
            issues.at(span.clone(), format!("step `{name}` has no `text`"));
            None
        }
        Some(t) if t.get_ref().trim().is_empty() => {
            issues.at(t.span(), format!("the `text` of step `{name}` is empty"));
            None
        }
        Some(t) => Some(t.get_ref().clone()),
    };
    if let Some(cmd) = &step.token_cmd {
        if step.token_env.is_some() {
            issues.at(
                cmd.span(),
                format!("step `{name}` has both `token_env` and `token_cmd`; keep one"),
            );
        } else if shlex::split(cmd.get_ref()).is_none_or(|argv| argv.is_empty()) {
            issues.at(
                cmd.span(),
                format!(
                    "the `token_cmd` of step `{name}` is empty or cannot be split into a \
                     program and its arguments (it runs without a shell)"
                ),
            );
        }
    }
    if let Some(var) = &step.token_env {
        let v = var.get_ref();
        if v.is_empty() {
            issues.at(var.span(), format!("empty `token_env` in step `{name}`"));
        } else if env(v).is_none_or(|s| s.trim().is_empty()) {
            issues.at(
                var.span(),
                format!(
                    "environment variable `{v}` (the `token_env` of step `{name}`) is not set or \
                     empty; export it with the agent's bearer token"
                ),
            );
        }
    }
    let metadata = table_field(issues, step.metadata.as_ref(), "metadata", name);
    let max_attempts = match &step.max_attempts {
        None => DEFAULT_MAX_ATTEMPTS,
        Some(n) if (1..=MAX_MAX_ATTEMPTS).contains(n.get_ref()) => *n.get_ref() as u32,
        Some(n) => {
            issues.at(
                n.span(),
                format!("`max_attempts` of step `{name}` must be between 1 and {MAX_MAX_ATTEMPTS}"),
            );
            DEFAULT_MAX_ATTEMPTS
        }
    };
    let interface = check_interface(issues, step, name);
    let declared = check_effect(issues, step, &span, name);
    let data = table_field(issues, step.data.as_ref(), "data", name).map(Value::Object);
    let compensate = step
        .compensate
        .as_ref()
        .and_then(|c| check_compensate(issues, c, name));
    let verify = step
        .verify
        .as_ref()
        .and_then(|v| check_verify(issues, v, name));
    if issues.list.len() != before {
        return None;
    }
    let has_command = matches!(compensate, Some(Compensation::Command(_)))
        || matches!(verify, Some(Verification::Command(_)));
    Some(StepSpec {
        name: StepName::from_parts("?", "?"),
        text: text?,
        binding: binding?,
        token_env: step.token_env.as_ref().map(|t| t.get_ref().clone()),
        token_cmd: step.token_cmd.as_ref().map(|t| t.get_ref().clone()),
        metadata,
        max_attempts,
        allow_cross_origin: false,
        interface,
        effect: declared.then(effect_json),
        compensate: compensate.as_ref().map(Compensation::to_json),
        verify: verify.as_ref().map(Verification::to_json),
        cwd: has_command.then(|| dir.display().to_string()),
        data,
    })
}

/// Converts a step's table `field` (`metadata`, `data`) to a JSON object, noting an issue at
/// its position when it cannot be one.
fn table_field(
    issues: &mut Issues<'_>,
    table: Option<&Spanned<toml::Table>>,
    field: &str,
    name: &str,
) -> Option<Map<String, Value>> {
    let table = table?;
    match toml_table_to_json(table.get_ref()) {
        Ok(map) => Some(map),
        Err(why) => {
            issues.at(
                table.span(),
                format!("bad `{field}` in step `{name}`: {why}"),
            );
            None
        }
    }
}

/// Checks a step's `binding` and `protocol` (as `--binding` / `--protocol` take them).
fn check_interface(
    issues: &mut Issues<'_>,
    step: &RawStep,
    name: &str,
) -> crate::a2a::InterfaceChoice {
    fn parsed<T: std::str::FromStr<Err = String>>(
        issues: &mut Issues<'_>,
        v: Option<&Spanned<String>>,
        key: &str,
        name: &str,
    ) -> Option<T> {
        let v = v?;
        v.get_ref()
            .parse::<T>()
            .map_err(|why| issues.at(v.span(), format!("bad `{key}` in step `{name}`: {why}")))
            .ok()
    }
    let choice = crate::a2a::InterfaceChoice {
        binding: parsed(issues, step.binding.as_ref(), "binding", name),
        protocol: parsed(issues, step.protocol.as_ref(), "protocol", name),
    };
    match choice.check() {
        Ok(choice) => choice,
        Err(why) => {
            let at = step.binding.as_ref().or(step.protocol.as_ref());
            if let Some(at) = at {
                issues.at(at.span(), format!("step `{name}`: {why}"));
            }
            crate::a2a::InterfaceChoice::default()
        }
    }
}

/// Checks a step's `agent` or `skill` (exactly one); returns its binding when it is good.
fn check_binding(
    issues: &mut Issues<'_>,
    step: &RawStep,
    span: &Range<usize>,
    name: &str,
) -> Option<Binding> {
    match (&step.agent, &step.skill) {
        (Some(_), Some(s)) => {
            issues.at(
                s.span(),
                format!("step `{name}` has both `agent` and `skill`; give one"),
            );
            None
        }
        (None, None) => {
            issues.at(
                span.clone(),
                format!("step `{name}` has neither `agent` nor `skill`; give one"),
            );
            None
        }
        (Some(a), None) => match card_url_for(a.get_ref()) {
            Ok(url) => Some(Binding::Agent(url)),
            Err(e) => {
                issues.at(a.span(), format!("bad `agent` of step `{name}`: {e}"));
                None
            }
        },
        (None, Some(s)) => {
            if s.get_ref().trim().is_empty() {
                issues.at(s.span(), format!("empty `skill` in step `{name}`"));
                None
            } else {
                Some(Binding::Skill(s.get_ref().clone()))
            }
        }
    }
}

/// Checks that `compensate` and `verify` come with `effect = true`, and it with both; returns
/// whether the step declares an effect.
fn check_effect(issues: &mut Issues<'_>, step: &RawStep, span: &Range<usize>, name: &str) -> bool {
    let declared = step.effect.as_ref().is_some_and(|e| *e.get_ref());
    if declared {
        let at = step.effect.as_ref().map_or(span.clone(), Spanned::span);
        if step.compensate.is_none() {
            issues.at(
                at.clone(),
                format!(
                    "step `{name}` has `effect = true` but no `compensate`; add \
                     `compensate = {{ text = \"…\" }}` or `compensate = {{ command = \"…\" }}`"
                ),
            );
        }
        if step.verify.is_none() {
            issues.at(
                at,
                format!(
                    "step `{name}` has `effect = true` but no `verify`; add \
                     `verify = {{ url = \"…\" }}` or `verify = {{ command = \"…\" }}`"
                ),
            );
        }
    } else {
        for (key, s) in [
            ("compensate", step.compensate.as_ref().map(Spanned::span)),
            ("verify", step.verify.as_ref().map(Spanned::span)),
        ] {
            if let Some(s) = s {
                issues.at(
                    s,
                    format!("`{key}` of step `{name}` needs `effect = true` in the same step"),
                );
            }
        }
    }
    declared
}

fn check_compensate(
    issues: &mut Issues<'_>,
    c: &Spanned<RawCompensate>,
    name: &str,
) -> Option<Compensation> {
    let raw = c.get_ref();
    match (&raw.text, &raw.command) {
        (Some(_), Some(_)) | (None, None) => {
            issues.at(
                c.span(),
                format!("`compensate` of step `{name}` needs exactly one of `text` or `command`"),
            );
            None
        }
        (None, Some(cmd)) => {
            if let Some(s) = raw.agent.as_ref().or(raw.skill.as_ref()) {
                issues.at(
                    s.span(),
                    format!(
                        "`agent` and `skill` go with a compensation `text`, not a `command` \
                         (step `{name}`)"
                    ),
                );
                return None;
            }
            check_command(issues, cmd, name, "compensate").map(Compensation::Command)
        }
        (Some(text), None) => {
            if text.get_ref().trim().is_empty() {
                issues.at(
                    text.span(),
                    format!("the compensation `text` of step `{name}` is empty"),
                );
                return None;
            }
            let target = match (&raw.agent, &raw.skill) {
                (Some(_), Some(s)) => {
                    issues.at(
                        s.span(),
                        format!("`compensate` of step `{name}` has both `agent` and `skill`"),
                    );
                    return None;
                }
                (Some(a), None) => match card_url_for(a.get_ref()) {
                    Ok(url) => Some(CompensationTarget::Agent(url)),
                    Err(e) => {
                        issues.at(
                            a.span(),
                            format!("bad compensation `agent` of step `{name}`: {e}"),
                        );
                        return None;
                    }
                },
                (None, Some(s)) if s.get_ref().trim().is_empty() => {
                    issues.at(
                        s.span(),
                        format!("empty compensation `skill` in step `{name}`"),
                    );
                    return None;
                }
                (None, Some(s)) => Some(CompensationTarget::Skill(s.get_ref().clone())),
                (None, None) => None,
            };
            Some(Compensation::Message {
                text: text.get_ref().clone(),
                target,
            })
        }
    }
}

fn check_verify(
    issues: &mut Issues<'_>,
    v: &Spanned<RawVerify>,
    name: &str,
) -> Option<Verification> {
    let raw = v.get_ref();
    match (&raw.command, &raw.url) {
        (Some(_), Some(_)) | (None, None) => {
            issues.at(
                v.span(),
                format!("`verify` of step `{name}` needs exactly one of `command` or `url`"),
            );
            None
        }
        (Some(cmd), None) => check_command(issues, cmd, name, "verify").map(Verification::Command),
        (None, Some(url)) => match check_url(url.get_ref()) {
            Ok(()) => Some(Verification::Url(url.get_ref().clone())),
            Err(why) => {
                issues.at(
                    url.span(),
                    format!("bad `verify` URL of step `{name}`: {why}"),
                );
                None
            }
        },
    }
}

fn check_command(
    issues: &mut Issues<'_>,
    cmd: &Spanned<String>,
    name: &str,
    key: &str,
) -> Option<String> {
    match check_command_text(cmd.get_ref()) {
        Ok(()) => Some(cmd.get_ref().clone()),
        Err(why) => {
            issues.at(
                cmd.span(),
                format!("`{key}` command of step `{name}`: {why}"),
            );
            None
        }
    }
}

/// Checks a command string: not empty, no placeholders (values come as env variables only).
pub fn check_command_text(cmd: &str) -> Result<(), String> {
    if cmd.trim().is_empty() {
        return Err("the command is empty".to_owned());
    }
    if let Some(p) = placeholders::find(cmd).first() {
        return Err(format!(
            "placeholders are never substituted in commands (remote agents control their \
             values); read `{p}` from the environment instead: \"${}\"",
            p.env_name()
        ));
    }
    Ok(())
}

/// Checks a verification URL template: http(s), no userinfo, valid once filled.
pub fn check_url(template: &str) -> Result<(), String> {
    let sample = placeholders::fill_with_samples(template);
    let url = url::Url::parse(&sample).map_err(|e| format!("`{}`: {e}", inert(template)))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("`{}` is not an http(s) URL", inert(template)));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("a URL with user:password@ is refused".to_owned());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The diff against the journal
// ---------------------------------------------------------------------------------------------

/// Returns whether a journaled step is a compensation step (`STEP~compensate`).
pub fn is_compensation_step(name: &StepName) -> bool {
    name.step.contains('~')
}

/// Parses a journaled step as the commands that read one take it: `WORKFLOW/STEP`, a bare
/// `STEP` (`default/STEP`), or a compensation step `WORKFLOW/STEP~compensate` named by
/// `compensate` (which a step given by the user can never be called).
pub fn parse_journaled_step(s: &str) -> Result<StepName, crate::journal::NameError> {
    if let Some(base) = s.strip_suffix(COMPENSATE_SUFFIX)
        && base.contains('/')
        && let Ok(mut name) = StepName::parse(base)
    {
        name.step.push_str(COMPENSATE_SUFFIX);
        return Ok(name);
    }
    StepName::parse(s)
}

fn shown(v: &str) -> String {
    const MAX: usize = 60;
    let s = match v.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &v[..i]),
        None => v.to_owned(),
    };
    format!("\"{}\"", inert(&s))
}

fn shown_json(v: Option<&Value>) -> String {
    v.map_or_else(|| "(none)".to_owned(), |v| shown(&v.to_string()))
}

fn shown_binding(b: &Binding) -> String {
    match b {
        Binding::Agent(a) => format!("agent {}", shown(a)),
        Binding::Skill(s) => format!("skill {}", shown(s)),
        Binding::Command(c) => format!("command {}", shown(c)),
    }
}

/// Lists how a step's journaled definition differs from the plan's, one line per field.
///
/// The directory commands run in is not compared: the journaled one stays in force, so the
/// same plan run from another place changes nothing.
fn step_changes(journaled: &StepSpec, planned: &StepSpec) -> Vec<String> {
    let (j, p) = (journaled, planned);
    let opt = |v: Option<&String>| v.map_or_else(|| "(none)".to_owned(), |v| shown(v));
    let meta = |m: Option<&Map<String, Value>>| {
        m.map_or_else(
            || "(none)".to_owned(),
            |m| shown(&Value::Object(m.clone()).to_string()),
        )
    };
    let fields = [
        ("text", j.text != p.text, shown(&j.text), shown(&p.text)),
        (
            "agent/skill",
            j.binding != p.binding,
            shown_binding(&j.binding),
            shown_binding(&p.binding),
        ),
        (
            "binding/protocol",
            j.interface != p.interface,
            j.interface.describe(),
            p.interface.describe(),
        ),
        (
            "token_env",
            j.token_env != p.token_env,
            opt(j.token_env.as_ref()),
            opt(p.token_env.as_ref()),
        ),
        (
            "token_cmd",
            j.token_cmd != p.token_cmd,
            opt(j.token_cmd.as_ref()),
            opt(p.token_cmd.as_ref()),
        ),
        (
            "metadata",
            j.metadata != p.metadata,
            meta(j.metadata.as_ref()),
            meta(p.metadata.as_ref()),
        ),
        (
            "data",
            j.data != p.data,
            shown_json(j.data.as_ref()),
            shown_json(p.data.as_ref()),
        ),
        (
            "max_attempts",
            j.max_attempts != p.max_attempts,
            j.max_attempts.to_string(),
            p.max_attempts.to_string(),
        ),
        (
            "effect",
            j.effect.is_some() != p.effect.is_some(),
            j.effect.is_some().to_string(),
            p.effect.is_some().to_string(),
        ),
        (
            "compensate",
            j.compensate != p.compensate,
            shown_json(j.compensate.as_ref()),
            shown_json(p.compensate.as_ref()),
        ),
        (
            "verify",
            j.verify != p.verify,
            shown_json(j.verify.as_ref()),
            shown_json(p.verify.as_ref()),
        ),
    ];
    fields
        .into_iter()
        .filter(|(_, changed, _, _)| *changed)
        .map(|(name, _, old, new)| format!("{name}: {old} → {new}"))
        .collect()
}

/// Returns the diff between a plan and the steps journaled for its workflow (compensation
/// steps excluded), one line per difference; empty means the plan is what is journaled.
///
/// Added and removed steps, changed fields (by name), and a different step order each get
/// a line. `journaled` is in delegation order.
pub fn diff(plan: &Plan, journaled: &[StepSpec]) -> Vec<String> {
    let journaled: Vec<&StepSpec> = journaled
        .iter()
        .filter(|s| !is_compensation_step(&s.name))
        .collect();
    let mut out = Vec::new();
    for planned in &plan.steps {
        match journaled.iter().find(|j| j.name.step == planned.name.step) {
            None => out.push(format!(
                "step `{}`: added (in the plan, not journaled)",
                planned.name.step
            )),
            Some(j) => {
                for change in step_changes(j, planned) {
                    out.push(format!("step `{}`: {change}", planned.name.step));
                }
            }
        }
    }
    for j in &journaled {
        if !plan.steps.iter().any(|p| p.name.step == j.name.step) {
            out.push(format!(
                "step `{}`: removed (journaled, not in the plan)",
                j.name.step
            ));
        }
    }
    if out.is_empty() {
        let planned: Vec<&str> = plan.steps.iter().map(|s| s.name.step.as_str()).collect();
        let held: Vec<&str> = journaled.iter().map(|s| s.name.step.as_str()).collect();
        if planned != held {
            out.push(format!(
                "step order: {} → {}",
                held.join(", "),
                planned.join(", ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN_SET").then(|| "s3cret".to_owned())
    }

    fn parse_ok(src: &str) -> Plan {
        parse(src, Path::new("/plans"), &env).unwrap_or_else(|e| panic!("{e:?}"))
    }

    fn parse_err(src: &str) -> Vec<String> {
        parse(src, Path::new("/plans"), &env)
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    const GOOD: &str = r#"workflow = "trip-42"

[[step]]
name = "flight"
agent = "http://127.0.0.1:8001"
text = "book a flight"
token_env = "TOKEN_SET"
metadata = { trip = 42, who = ["ann"] }
effect = true
compensate = { text = "cancel {artifact:booking}" }
verify = { url = "http://127.0.0.1:9000/bookings/{task_id}" }

[[step]]
name = "hotel"
skill = "hotels"
text = "book a room"
max_attempts = 2
effect = true
compensate = { command = "curl -X DELETE \"$BOOKINGS/$A2A_TASK_ID\"" }
verify = { command = "test -e \"booked/$A2A_TASK_ID\"" }

[[step]]
name = "car"
agent = "http://127.0.0.1:8003/.well-known/agent-card.json"
text = "rent a car"
"#;

    #[test]
    fn a_good_plan_becomes_step_specs_in_order() {
        let plan = parse_ok(GOOD);
        assert_eq!(plan.workflow, "trip-42");
        let names: Vec<_> = plan.steps.iter().map(|s| s.name.to_string()).collect();
        assert_eq!(names, ["trip-42/flight", "trip-42/hotel", "trip-42/car"]);
        let flight = &plan.steps[0];
        assert_eq!(
            flight.binding,
            Binding::Agent("http://127.0.0.1:8001/.well-known/agent-card.json".into())
        );
        assert_eq!(flight.token_env.as_deref(), Some("TOKEN_SET"));
        assert_eq!(
            Value::Object(flight.metadata.clone().unwrap()),
            json!({"trip": 42, "who": ["ann"]})
        );
        assert_eq!(
            Compensation::from_json(flight.compensate.as_ref().unwrap()).unwrap(),
            Compensation::Message {
                text: "cancel {artifact:booking}".into(),
                target: None
            }
        );
        // No command, no directory.
        assert_eq!(flight.cwd, None);
        let hotel = &plan.steps[1];
        assert_eq!(hotel.binding, Binding::Skill("hotels".into()));
        assert_eq!(hotel.max_attempts, 2);
        assert_eq!(hotel.cwd.as_deref(), Some("/plans"));
        assert!(matches!(
            Verification::from_json(hotel.verify.as_ref().unwrap()).unwrap(),
            Verification::Command(_)
        ));
        let car = &plan.steps[2];
        assert_eq!(car.effect, None);
        assert_eq!(car.max_attempts, DEFAULT_MAX_ATTEMPTS);
    }

    #[test]
    fn a_step_forces_its_binding_and_protocol() {
        let plan = parse_ok(
            "workflow = \"w\"\n[[step]]\nname = \"a\"\nagent = \"http://x\"\ntext = \"t\"\n\
             binding = \"jsonrpc\"\nprotocol = \"0.3\"\n",
        );
        assert_eq!(
            plan.steps[0].interface,
            crate::a2a::InterfaceChoice {
                binding: Some(crate::a2a::WireBinding::JsonRpc),
                protocol: Some(crate::a2a::ProtocolVersion::V0_3),
            }
        );
        let errs = parse_err(
            "workflow = \"w\"\n[[step]]\nname = \"a\"\nagent = \"http://x\"\ntext = \"t\"\n\
             protocol = \"2.0\"\n",
        );
        assert!(errs[0].starts_with("6:"), "{errs:?}");
        assert!(errs[0].contains("bad `protocol`"), "{errs:?}");
    }

    #[test]
    fn syntax_and_unknown_keys_have_positions() {
        let errs = parse_err("workflow = \"w\"\n[[step]]\nname = \"a\"\nagnet = \"http://x\"\n");
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].starts_with("4:1: unknown field `agnet`"),
            "{errs:?}"
        );
        let errs = parse_err("workflow = \"w\"\n[[step]\n");
        assert!(errs[0].starts_with("2:"), "{errs:?}");
        let errs = parse_err("workflow = 42\n");
        assert!(errs[0].starts_with("1:12: "), "{errs:?}");
        let errs = parse_err(
            "workflow = \"w\"\n[[step]]\nname = \"a\"\nagent = \"http://x\"\ntext = \"t\"\n\
             effect = true\ncompensate = { command = \"true\", when = 1 }\nverify = { url = \"http://v\" }\n",
        );
        assert!(errs[0].starts_with("7:"), "{errs:?}");
        assert!(errs[0].contains("unknown field `when`"), "{errs:?}");
    }

    #[test]
    fn every_semantic_problem_is_reported_with_its_position() {
        let src = r#"workflow = "w"

[[step]]
name = "a/b"
agent = "http://x"
text = "t"

[[step]]
name = "dup"
agent = "http://x"
skill = "s"
text = "t"

[[step]]
name = "dup"
text = ""

[[step]]
name = "fx"
agent = "http://x"
token_env = "TOKEN_UNSET"
effect = true

[[step]]
name = "orphan"
agent = "http://u:p@x"
text = "t"
max_attempts = 0
compensate = { command = "rm {artifact:booking}" }
"#;
        let errs = parse_err(src);
        let expect = [
            "4:8: bad step name `a/b`",
            "11:9: step `dup` has both `agent` and `skill`",
            "15:8: step `dup` appears twice (first at 9:8)",
            "14:1: step `dup` has neither `agent` nor `skill`",
            "16:8: the `text` of step `dup` is empty",
            "18:1: step `fx` has no `text`",
            "21:13: environment variable `TOKEN_UNSET`",
            "22:10: step `fx` has `effect = true` but no `compensate`",
            "22:10: step `fx` has `effect = true` but no `verify`",
            "26:9: bad `agent` of step `orphan`",
            "28:16: `max_attempts` of step `orphan` must be between 1 and 100",
            "29:14: `compensate` of step `orphan` needs `effect = true`",
            "29:26: `compensate` command of step `orphan`: placeholders are never substituted",
        ];
        for e in expect {
            assert!(
                errs.iter().any(|got| got.starts_with(e)),
                "missing {e:?} in {errs:#?}"
            );
        }
        assert_eq!(errs.len(), expect.len(), "{errs:#?}");
        assert!(errs.iter().any(|e| e.contains("\"$A2A_ARTIFACT_BOOKING\"")));
    }

    #[test]
    fn workflow_and_steps_are_required() {
        let errs = parse_err("[[step]]\nname = \"a\"\nagent = \"http://x\"\ntext = \"t\"\n");
        assert!(
            errs[0].starts_with("1:1: the plan has no `workflow`"),
            "{errs:?}"
        );
        let errs = parse_err("workflow = \"w~x\"\n");
        assert!(errs[0].contains("bad workflow name"), "{errs:?}");
        assert!(errs[1].contains("no `[[step]]`"), "{errs:?}");
    }

    #[test]
    fn recipes_need_exactly_one_kind() {
        let base = "workflow = \"w\"\n[[step]]\nname = \"a\"\nagent = \"http://x\"\ntext = \"t\"\neffect = true\n";
        let errs = parse_err(&format!(
            "{base}compensate = {{ text = \"x\", command = \"y\" }}\nverify = {{ url = \"ftp://h/{{task_id}}\" }}\n"
        ));
        assert!(
            errs[0].contains("exactly one of `text` or `command`"),
            "{errs:?}"
        );
        assert!(errs[1].contains("not an http(s) URL"), "{errs:?}");
        let errs = parse_err(&format!(
            "{base}compensate = {{ command = \"x\", skill = \"s\" }}\nverify = {{}}\n"
        ));
        assert!(
            errs[0].contains("go with a compensation `text`"),
            "{errs:?}"
        );
        assert!(
            errs[1].contains("exactly one of `command` or `url`"),
            "{errs:?}"
        );
        let plan = parse_ok(&format!(
            "{base}compensate = {{ text = \"undo {{task_id}}\", skill = \"undo\" }}\nverify = {{ url = \"https://h/b/{{artifact:x y}}\" }}\n"
        ));
        assert_eq!(
            plan.steps[0].compensate,
            Some(json!({"text": "undo {task_id}", "skill": "undo"}))
        );
    }

    #[test]
    fn positions_count_characters() {
        assert_eq!(line_col("ab\ncdé f", 0), (1, 1));
        assert_eq!(line_col("ab\ncdé f", 3), (2, 1));
        assert_eq!(line_col("ab\ncdé f", 8), (2, 5));
        assert_eq!(line_col("ab", 99), (1, 3));
    }

    #[test]
    fn the_diff_names_steps_and_fields() {
        let plan = parse_ok(GOOD);
        assert!(diff(&plan, &plan.steps).is_empty());
        let mut changed = parse_ok(GOOD);
        changed.steps[1].text = "book two rooms".into();
        changed.steps[0].max_attempts = 5;
        changed.steps.remove(2);
        let mut extra = plan.steps[2].clone();
        extra.name = StepName::from_parts("trip-42", "boat");
        changed.steps.push(extra);
        let mut journaled = plan.steps.clone();
        // Compensation steps are not part of the plan.
        let mut comp = plan.steps[0].clone();
        comp.name = StepName::from_parts("trip-42", "flight~compensate");
        journaled.push(comp);
        let lines = diff(&changed, &journaled);
        assert_eq!(
            lines,
            [
                "step `flight`: max_attempts: 3 → 5",
                "step `hotel`: text: \"book a room\" → \"book two rooms\"",
                "step `boat`: added (in the plan, not journaled)",
                "step `car`: removed (journaled, not in the plan)",
            ]
        );
        let mut reordered = parse_ok(GOOD);
        reordered.steps.swap(0, 1);
        assert_eq!(
            diff(&reordered, &plan.steps),
            ["step order: flight, hotel, car → hotel, flight, car"]
        );
    }
}
