//! Helpers the commands share: the one module a command imports besides its own (commands
//! never import each other's modules for these).

pub(crate) mod flags;
pub(crate) mod follow;
pub(crate) mod records;

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
