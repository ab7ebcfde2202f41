//! `inspect`: the journal as a table or JSON Lines.
//!
//! Filtering and the row limit run in SQL (`Journal::inspect`): a large journal is never loaded
//! whole. Tables are comfy-table on a terminal and a plain, borderless layout when piped; remote
//! text is made inert there, and kept as data in JSON. Ages are measured against the display
//! clock (pinned in tests). A missing journal prints nothing and exits 0; an unknown workflow or
//! step is a usage error (exit 2); `--limit 0` means no limit; an empty `--pending` says `nothing needs a human.` on stderr (human format, not `-q`).
//!
//! `inspect STEP` shows the step's chain of attempts: beside each attempt its previous one (and
//! that one's task id) and the operator's decision on it (`resolve`, with the reason). In JSON
//! every `attempt` record carries `previousTaskId`, `previousAttempt` and a `resolution` object
//! (`as`, `reason`, `resolvedAt`, `resendPending`) or null.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use clap::Args;
use serde_json::{Value, json};

use crate::a2a::{ProtocolBinding, message_text};
use crate::clock::rfc3339;
use crate::context::Context;
use crate::error::CliError;
use crate::exit;
use crate::journal::{
    self, AttemptId, AttemptResolution, AttemptRow, AttemptState, EffectState, Event,
    InspectFilter, Target,
};
use crate::recovery::remedy::Remedy;
use crate::sanitize::inert;

/// Rows shown in a table when `--limit` is not given.
const DEFAULT_TABLE_LIMIT: u64 = 200;
/// Longest question/outcome shown in a table cell, in characters.
const OUTCOME_CHARS: usize = 80;

/// Shows the journal as a table (or JSON Lines with --format json).
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A workflow, or a step (`WORKFLOW/STEP`).
    pub target: Option<String>,
    /// Only attempts in these states (case-insensitive; `-` and `_` alike).
    #[arg(long, value_name = "STATE", num_args = 1..)]
    pub state: Vec<String>,
    /// Only what needs a human, each with the command that answers it.
    #[arg(long)]
    pub pending: bool,
    /// Adds the event history of the named step.
    #[arg(long)]
    pub events: bool,
    /// Most rows shown; 0 means no limit [default: 200 in tables, no limit in JSON].
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

fn parse_states(given: &[String]) -> Result<Vec<AttemptState>, CliError> {
    given
        .iter()
        .flat_map(|s| s.split(','))
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            AttemptState::parse_loose(s).ok_or_else(|| {
                let valid: Vec<&str> = AttemptState::ALL.iter().map(|s| s.as_str()).collect();
                CliError::usage(format!("unknown state `{}`", inert(s)))
                    .hint(format!("valid states: {}", valid.join(", ")))
            })
        })
        .collect()
}

/// Parses a WORKFLOW or WORKFLOW/STEP; a compensation step (`WORKFLOW/STEP~compensate`, named
/// by `compensate`) is accepted too.
fn parse_target(s: &str) -> Result<Target, crate::journal::NameError> {
    if s.ends_with(crate::plan_file::COMPENSATE_SUFFIX)
        && let Ok(name) = crate::plan_file::parse_journaled_step(s)
    {
        return Ok(Target::Step(name));
    }
    Target::parse(s)
}

/// Runs `inspect`.
pub(crate) async fn run(ctx: &Context, args: &InspectArgs) -> anyhow::Result<u8> {
    let target = args
        .target
        .as_deref()
        .map(parse_target)
        .transpose()
        .map_err(|e| CliError::usage(e.to_string()).hint("give a WORKFLOW, or a WORKFLOW/STEP"))?;
    let states = parse_states(&args.state)?;
    let events_of = match (&target, args.events) {
        (Some(Target::Step(s)), true) => Some(s.clone()),
        (_, true) => {
            return Err(CliError::usage("--events needs a step")
                .hint("name one: `a2a-recover inspect WORKFLOW/STEP --events`")
                .into());
        }
        (_, false) => None,
    };
    let limit = match args.limit {
        // `--limit 0` means no limit, as in kubectl and journalctl.
        Some(0) => None,
        Some(n) => Some(n as u64),
        None if ctx.out.is_json() => None,
        None => Some(DEFAULT_TABLE_LIMIT),
    };
    ctx.out.begin("inspect")?;
    if !journal::exists(&ctx.journal_path) {
        return Ok(exit::OK);
    }
    let journal = ctx.open_journal_for_reading()?;
    refuse_unknown_target(&journal, target.as_ref())?;
    let step_target = matches!(target, Some(Target::Step(_)));
    let page = journal.inspect(&InspectFilter {
        target: target.clone(),
        states,
        pending: args.pending,
        limit,
    })?;
    let chain = Chain::of(&journal, &page.rows)?;
    let events = match &events_of {
        Some(step) => journal.events_of_step(step)?,
        None => Vec::new(),
    };
    if ctx.out.is_json() {
        for row in &page.rows {
            ctx.out.record(&attempt_record(row, &chain))?;
        }
        for e in &events {
            ctx.out.record(&event_record(e))?;
        }
        return Ok(exit::OK);
    }
    let now = ctx.display_clock.now();
    if page.rows.is_empty() && args.pending {
        // An empty answer to "what needs me?" is said on stderr: stdout stays empty for scripts.
        ctx.out.status("nothing needs a human.");
    }
    if !page.rows.is_empty() {
        let table = attempts_table(
            ctx,
            &page.rows,
            now,
            args.pending,
            step_target.then_some(&chain),
        );
        ctx.out.line(&table)?;
    }
    for line in workflow_states(&page.rows) {
        ctx.out.line(&line)?;
    }
    let shown = page.rows.len() as u64;
    if page.total > shown {
        ctx.out.line(&format!(
            "… {} more row(s) not shown; raise --limit, or narrow with a WORKFLOW, STEP or \
             --state.",
            page.total - shown
        ))?;
    }
    if let Some(step) = &events_of
        && !events.is_empty()
    {
        ctx.out.line("")?;
        ctx.out.line(&format!("events of {step}:"))?;
        ctx.out.line(&events_table(ctx, &events, now))?;
    }
    Ok(exit::OK)
}

/// Returns one line per workflow shown that is no longer ACTIVE (`compensate` started or
/// finished), in the order they appear.
fn workflow_states(rows: &[AttemptRow]) -> Vec<String> {
    let mut seen: Vec<&str> = Vec::new();
    let mut lines = Vec::new();
    for row in rows {
        let w = row.step.workflow.as_str();
        if row.workflow_state != crate::journal::WorkflowState::Active && !seen.contains(&w) {
            seen.push(w);
            lines.push(format!("workflow {w} is {}.", row.workflow_state));
        }
    }
    lines
}

/// Returns the text of a row's question, or what it ended with.
fn outcome(row: &AttemptRow) -> String {
    let a = &row.attempt;
    if let Some(q) = a.question_text() {
        return q;
    }
    if a.state == AttemptState::Replied
        && let Some(m) = a
            .outcome_json
            .as_deref()
            .and_then(|s| serde_json::from_str::<Value>(s).ok())
    {
        // A compensation command's result (`compensate`) has a status, not a message.
        if let Some(status) = m.get("status").and_then(Value::as_str)
            && m.get("command").is_some()
        {
            return format!("command: {status}");
        }
        return message_text(&m);
    }
    if let Some(e) = &a.error {
        return e.clone();
    }
    let status_text = a
        .last_task_json
        .as_deref()
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .and_then(|t| t.pointer("/status/message").map(message_text))
        .filter(|t| !t.is_empty());
    if let Some(t) = status_text {
        return t;
    }
    match row.artifact_count {
        0 => String::new(),
        1 => "1 artifact".to_owned(),
        n => format!("{n} artifacts"),
    }
}

fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// Shows an agent's card URL as its base URL.
fn agent_cell(card_url: Option<&str>) -> String {
    let Some(url) = card_url else {
        return "-".to_owned();
    };
    let base = url
        .strip_suffix(crate::a2a::WELL_KNOWN_CARD_PATH)
        .map_or_else(|| url.to_owned(), |b| format!("{b}/"));
    inert(&crate::a2a::redact_url(&base))
}

fn attempts_table(
    ctx: &Context,
    rows: &[AttemptRow],
    now: DateTime<Utc>,
    pending: bool,
    chain: Option<&Chain>,
) -> String {
    let mut header = vec![
        "WORKFLOW",
        "STEP",
        "ATTEMPT",
        "AGENT",
        "STATE",
        "TASK ID",
        "AGE",
        "EFFECT",
        "QUESTION/OUTCOME",
    ];
    if chain.is_some() {
        header.extend(["PREVIOUS", "RESOLUTION"]);
    }
    if pending {
        header.push("TO ANSWER");
    }
    let mut table = crate::output::table(&ctx.out, header);
    for row in rows {
        let a = &row.attempt;
        let mut cells = vec![
            row.step.workflow.clone(),
            row.step.step.clone(),
            a.number.to_string(),
            agent_cell(a.agent_url.as_deref()),
            a.state.as_str().to_owned(),
            a.task_id.as_deref().map_or_else(|| "-".to_owned(), inert),
            crate::output::age(now, a.updated_at),
            a.effect.map_or("-", |e| e.as_str()).to_owned(),
            inert(&truncate(&outcome(row), OUTCOME_CHARS)),
        ];
        if let Some(chain) = chain {
            cells.push(chain.previous_cell(row));
            cells.push(chain.resolution_cell(row));
        }
        if pending {
            cells.push(
                Remedy::of(row)
                    .map(|r| r.command_line())
                    .unwrap_or_default(),
            );
        }
        table.add_row(cells);
    }
    crate::output::render_table(&ctx.out, &table)
}

fn events_table(ctx: &Context, events: &[Event], now: DateTime<Utc>) -> String {
    let mut table = crate::output::table(
        &ctx.out,
        vec!["AGE", "ATTEMPT", "EVENT", "FROM", "TO", "DETAIL"],
    );
    for e in events {
        let detail = e
            .detail
            .as_ref()
            .map(|d| truncate(&d.to_string(), OUTCOME_CHARS))
            .unwrap_or_default();
        table.add_row(vec![
            crate::output::age(now, e.at),
            e.attempt.map_or_else(|| "-".to_owned(), |n| n.to_string()),
            e.kind.clone(),
            e.from.clone().unwrap_or_default(),
            e.to.clone().unwrap_or_default(),
            inert(&detail),
        ]);
    }
    crate::output::render_table(&ctx.out, &table)
}

// ---------------------------------------------------------------------------------------------
// The chain of attempts: previous attempt and operator decisions (`resolve`)
// ---------------------------------------------------------------------------------------------

/// What links the attempts shown: each one's previous attempt number, and the decisions.
#[derive(Debug, Default)]
pub(crate) struct Chain {
    /// Attempt numbers by id (the previous attempts of the rows shown).
    numbers: HashMap<AttemptId, u32>,
    /// The operator's last decision on each attempt.
    resolutions: HashMap<AttemptId, AttemptResolution>,
}

impl Chain {
    /// Links `rows`: their previous attempts' numbers, and the decisions on them.
    pub(crate) fn of(
        journal: &journal::Journal,
        rows: &[AttemptRow],
    ) -> Result<Self, journal::JournalError> {
        let mut numbers: HashMap<AttemptId, u32> = rows
            .iter()
            .map(|r| (r.attempt.id, r.attempt.number))
            .collect();
        for prev in rows.iter().filter_map(|r| r.attempt.previous_attempt) {
            if let std::collections::hash_map::Entry::Vacant(e) = numbers.entry(prev) {
                e.insert(journal.attempt(prev)?.number);
            }
        }
        // Only the rows shown: the decisions of a whole journal would read every attempt.
        let shown: Vec<AttemptId> = rows.iter().map(|r| r.attempt.id).collect();
        let resolutions = journal
            .resolutions_of(&shown)?
            .into_iter()
            .map(|r| (r.attempt, r))
            .collect();
        Ok(Self {
            numbers,
            resolutions,
        })
    }

    fn previous_attempt(&self, row: &AttemptRow) -> Option<u32> {
        row.attempt
            .previous_attempt
            .and_then(|p| self.numbers.get(&p).copied())
    }

    /// `#1 (task t-1)`, or `-`.
    fn previous_cell(&self, row: &AttemptRow) -> String {
        match (self.previous_attempt(row), &row.previous_task_id) {
            (Some(n), Some(task)) => format!("#{n} (task {})", inert(task)),
            (Some(n), None) => format!("#{n}"),
            (None, _) => "-".to_owned(),
        }
    }

    /// `retry: the reason`, or `-`.
    fn resolution_cell(&self, row: &AttemptRow) -> String {
        match self.resolutions.get(&row.attempt.id) {
            Some(r) => {
                let pending = if r.resend_pending {
                    " (resend pending)"
                } else {
                    ""
                };
                inert(&truncate(
                    &format!("{}{pending}: {}", r.resolution.as_str(), r.reason),
                    OUTCOME_CHARS,
                ))
            }
            None => match row.resolution.filter(|_| row.is_latest) {
                Some(step) => step.as_str().to_owned(),
                None => "-".to_owned(),
            },
        }
    }

    /// The `resolution` object of an `attempt` record: the decision on this attempt (or, for
    /// the latest attempt, the step's when no attempt carries one), else null.
    fn resolution_record(&self, row: &AttemptRow) -> Value {
        match self.resolutions.get(&row.attempt.id) {
            Some(r) => json!({
                "as": r.resolution.as_str(),
                "reason": r.reason,
                "resolvedAt": rfc3339(r.resolved_at),
                "resendPending": r.resend_pending,
            }),
            None => match row.resolution.filter(|_| row.is_latest) {
                Some(step) => json!({
                    "as": step.as_str(),
                    "reason": null,
                    "resolvedAt": null,
                    "resendPending": false,
                }),
                None => Value::Null,
            },
        }
    }
}

/// An unknown WORKFLOW or STEP is a usage error (exit 2), as in every other command: a typo
/// must not look like an empty answer.
fn refuse_unknown_target(
    journal: &crate::journal::Journal,
    target: Option<&Target>,
) -> anyhow::Result<()> {
    match target {
        Some(Target::Workflow(w)) if !journal.workflow_exists(w)? => {
            Err(CliError::usage(format!("unknown workflow `{}`", inert(w)))
                .hint("list workflows with `a2a-recover inspect`")
                .into())
        }
        Some(Target::Step(s)) if journal.step(s)?.is_none() => Err(CliError::usage(format!(
            "unknown step `{}`",
            inert(&s.to_string())
        ))
        .hint(format!(
            "list the steps of `{}` with `a2a-recover inspect {}`",
            inert(&s.workflow),
            inert(&s.workflow)
        ))
        .into()),
        _ => Ok(()),
    }
}

/// The `attempt` record, camelCase; remote text kept as data.
pub(crate) fn attempt_record(row: &AttemptRow, chain: &Chain) -> Value {
    let a = &row.attempt;
    // An attempt journaled before bindings were was sent over v1.0 JSON-RPC.
    let binding = a
        .binding
        .or_else(|| a.interface_url.as_ref().map(|_| ProtocolBinding::JsonRpcV1));
    let remedy = Remedy::of(row).map(
        |r| json!({"what": r.what(), "command": r.command(), "alternatives": r.alternatives()}),
    );
    json!({
        "type": "attempt",
        "workflow": row.step.workflow,
        "step": row.step.step,
        "attempt": a.number,
        "agent": a.agent_url,
        "state": a.state.as_str(),
        "messageId": a.message_id,
        "contextId": a.context_id,
        "taskId": a.task_id,
        "pendingQuestion": a.question_text(),
        "pendingQuestionMessage": a.pending_question,
        "previousTaskId": row.previous_task_id,
        "previousAttempt": chain.previous_attempt(row),
        "effect": a.effect.map(EffectState::as_str),
        "workflowState": row.workflow_state.as_str(),
        "createdAt": rfc3339(a.created_at),
        "updatedAt": rfc3339(a.updated_at),
        "interfaceUrl": a.interface_url,
        "tenant": a.tenant,
        "binding": binding.map(|b| b.wire().card_name()),
        "protocolVersion": binding.map(|b| b.version().as_str()),
        "tokenEnv": a.token_env,
        "remoteState": a.remote_state,
        "statusTimestamp": a.status_timestamp,
        "outcome": Some(outcome(row)).filter(|o| !o.is_empty()),
        "error": a.error,
        "artifacts": row.artifact_count,
        "latest": row.is_latest,
        "resolution": chain.resolution_record(row),
        "remedy": remedy,
    })
}

/// The `event` record.
fn event_record(e: &Event) -> Value {
    json!({
        "type": "event",
        "id": e.id,
        "at": rfc3339(e.at),
        "workflow": e.workflow,
        "step": e.step,
        "attempt": e.attempt,
        "kind": e.kind,
        "from": e.from,
        "to": e.to,
        "detail": e.detail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_parse_loosely_and_list_valid_ones() {
        let got = parse_states(&["input-required".into(), "Working,completed".into()]).unwrap();
        assert_eq!(
            got,
            [
                AttemptState::InputRequired,
                AttemptState::Working,
                AttemptState::Completed
            ]
        );
        let err = parse_states(&["done".into()]).unwrap_err();
        assert_eq!(err.code, exit::USAGE);
        assert!(err.hint.unwrap().contains("INPUT_REQUIRED"));
    }

    #[test]
    fn ages_are_short() {
        let t: DateTime<Utc> = "2026-11-30T01:00:00Z".parse().unwrap();
        assert_eq!(
            crate::output::age(t + chrono::Duration::seconds(42), t),
            "42s"
        );
        assert_eq!(
            crate::output::age(t + chrono::Duration::minutes(5), t),
            "5m"
        );
        assert_eq!(crate::output::age(t + chrono::Duration::hours(3), t), "3h");
        assert_eq!(crate::output::age(t + chrono::Duration::days(2), t), "2d");
        assert_eq!(crate::output::age(t, t + chrono::Duration::days(2)), "0s");
    }
}
