//! `follow --workflow WORKFLOW`: every unfinished step of a workflow followed at once.
//!
//! The steps are those whose latest attempt has something to follow (not terminal, LOST or
//! UNCERTAIN) and that the operator has not resolved, in delegation order. Each is followed as
//! `follow STEP` follows it (an `INTENT` looked for first), concurrently, with one line per
//! state change and its time (no spinners: several would draw over each other). Then one line
//! per step on stdout, and the exit code of all of them: 4 wins over 3, and 3 over 0. With
//! `--format json`, the `event` records of every step as they are journaled, then one
//! `summary` record: `workflow`, `steps` (each step's own `follow` summary, without `type`
//! and `command`), `outcomes` (attempts by the state they ended in) and `exitCode`.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::context::Context;
use crate::error::CliError;
use crate::exit;
use crate::journal::{AttemptState, StepRecord};
use crate::recovery::follow::FollowOptions;
use crate::sanitize::inert;

use crate::commands::util::follow::follow_steps;

/// Runs `follow --workflow`.
pub(super) async fn run(ctx: &Context, workflow: &str, opts: &FollowOptions) -> anyhow::Result<u8> {
    ctx.require_journal()?;
    let journal = ctx.open_journal_for_writing()?;
    if !journal.workflow_exists(workflow)? {
        return Err(
            CliError::usage(format!("unknown workflow `{}`", inert(workflow)))
                .hint("list workflows with `a2a-recover inspect`")
                .into(),
        );
    }
    let records: Vec<StepRecord> = journal
        .workflow_steps(workflow)?
        .into_iter()
        .filter(|r| r.step.resolution.is_none() && r.latest().is_some_and(|a| to_follow(a.state)))
        .collect();
    let client = super::client(ctx, &journal)?;
    ctx.out.begin("follow")?;
    if records.is_empty() {
        ctx.out.status(&format!(
            "nothing to follow in {}: no step of it is running.",
            inert(workflow)
        ));
    }
    let mut code = exit::OK;
    let mut steps = Vec::new();
    let mut outcomes: BTreeMap<String, u64> = BTreeMap::new();
    let mut lines = Vec::new();
    for followed in follow_steps(ctx, &journal, &client, &records, opts).await {
        let followed = followed?;
        code = exit::worst(code, followed.code);
        let mut record = followed.record;
        if let Value::Object(m) = &mut record {
            m.remove("type");
            m.remove("command");
            m.remove("journal");
            if let Some(Value::Object(o)) = m.get("outcomes") {
                for (state, n) in o {
                    *outcomes.entry(state.clone()).or_default() += n.as_u64().unwrap_or(0);
                }
            }
            m.insert("exitCode".into(), json!(followed.code));
        }
        steps.push(record);
        lines.push(followed.line);
    }
    if ctx.out.is_json() {
        ctx.out.record(&json!({
            "type": "summary",
            "command": "follow",
            "workflow": workflow,
            "steps": steps,
            "outcomes": outcomes,
            "exitCode": code,
        }))?;
    } else {
        for line in &lines {
            ctx.out.line(line)?;
        }
    }
    Ok(code)
}

/// Whether a step whose latest attempt is in `state` has anything to follow.
fn to_follow(state: AttemptState) -> bool {
    !state.is_finished() && state != AttemptState::Uncertain
}
