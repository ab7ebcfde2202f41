//! Helpers the commands share: the one module a command imports besides its own (commands
//! never import each other's modules for these).

pub(crate) mod flags;
pub(crate) mod follow;
pub(crate) mod hints;
pub(crate) mod records;
pub(crate) mod remedy;

use crate::error::CliError;
use crate::journal::{InspectFilter, Journal, JournalError, StepName, Target};
use crate::sanitize::inert;

/// How many of a workflow's steps an "unknown step" hint names.
const STEPS_NAMED: usize = 5;

/// The usage error for a step the journal does not hold, with a hint that helps: where the name
/// is a workflow's (a bare `trip-7` reads as `default/trip-7`), the workflow's steps; else
/// `fallback`.
pub(crate) fn unknown_step(
    journal: &Journal,
    name: &StepName,
    fallback: &str,
) -> Result<CliError, JournalError> {
    let err = CliError::usage(format!("unknown step `{}`", inert(&name.to_string())));
    let is_workflow = name.workflow == "default"
        && name.step != "default"
        && journal.workflow_exists(&name.step)?;
    if !is_workflow {
        return Ok(err.hint(fallback.to_owned()));
    }
    let rows = journal
        .inspect(&InspectFilter {
            target: Some(Target::Workflow(name.step.clone())),
            ..InspectFilter::default()
        })?
        .rows;
    let mut steps: Vec<String> = Vec::new();
    for row in rows {
        let step = row.step.to_string();
        if !steps.contains(&step) {
            steps.push(step);
        }
    }
    let mut named: Vec<String> = steps
        .iter()
        .take(STEPS_NAMED)
        .map(|s| format!("`{}`", inert(s)))
        .collect();
    if steps.len() > STEPS_NAMED {
        named.push(format!("{} more", steps.len() - STEPS_NAMED));
    }
    Ok(err.hint(format!(
        "`{}` is a workflow (a bare name is a step of `default`); name one of its steps: {}",
        inert(&name.step),
        named.join(", ")
    )))
}

/// The most lines of one remote JSON value a human view shows.
pub(crate) const JSON_LINES_SHOWN: usize = 20;

/// Returns a remote JSON value (a question's data part) as indented JSON, each line inert and
/// starting with `indent`, at most [`JSON_LINES_SHOWN`] lines (a last line says how many more).
pub(crate) fn indented_json(value: &serde_json::Value, indent: &str) -> String {
    let pretty = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    let lines: Vec<&str> = pretty.lines().collect();
    let mut shown: Vec<String> = lines
        .iter()
        .take(JSON_LINES_SHOWN)
        .map(|l| format!("{indent}{}", inert(l)))
        .collect();
    if lines.len() > JSON_LINES_SHOWN {
        shown.push(format!(
            "{indent}… ({} more lines)",
            lines.len() - JSON_LINES_SHOWN
        ));
    }
    shown.join("\n")
}

/// Reads one data part's JSON (`reply --data`, `delegate --data`): a JSON object, else a usage
/// error naming `what`.
pub(crate) fn data_object(json: &str, what: &str) -> Result<serde_json::Value, CliError> {
    let data: serde_json::Value = serde_json::from_str(json).map_err(|e| {
        CliError::usage(format!("{what} is not JSON: {e}"))
            .hint("give a JSON object, e.g. --data '{\"rooms\": \"one\"}'")
    })?;
    if !data.is_object() {
        return Err(CliError::usage(format!("{what} is not a JSON object"))
            .hint("a data part carries an object, e.g. --data '{\"rooms\": \"one\"}'"));
    }
    Ok(data)
}
