//! `inspect`: the journal as a table or JSON Lines.
//!
//! Filtering and the row limit run in SQL (`Journal::inspect`): a large journal is never loaded
//! whole. Tables are comfy-table on a terminal and a plain, borderless layout when piped; remote
//! text is made inert there, and kept as data in JSON. Ages are measured against the display
//! clock (pinned in tests). A missing journal prints nothing and exits 0; an unknown workflow or
//! step is a usage error (exit 2); `--limit 0` means no limit; an empty `--pending` says `nothing needs a human.` on stderr (human format, not `-q`).
//!
//! Three views. With no argument and no filter, the workflows, each with its steps counted by
//! state (JSON: every `attempt` record, then a `workflow` record per workflow). With a WORKFLOW,
//! or any filter (`--state`, `--pending`, `--agent`, `--since`, `--unresolved`, `--wide`), the
//! attempts: a narrow table that fits the width (`tables.rs`), or every column with `--wide`.
//! With a WORKFLOW/STEP, the full view of the step (`describe.rs`): its chain of attempts, each
//! with its previous one and the operator's decision on it, and its events. In JSON every
//! `attempt` record carries `previousTaskId`, `previousAttempt` and a `resolution` object (`as`,
//! `reason`, `resolvedAt`, `resendPending`) or null.

mod artifacts;
mod describe;
mod tables;
mod watch;

use clap::Args;
use serde_json::{Value, json};

use crate::clock::rfc3339;
use crate::commands::report::records;
use crate::context::Context;
use crate::error::CliError;
use crate::exit;
use crate::journal::{
    self, AttemptRow, AttemptState, Event, InspectFilter, Target, WorkflowSummary,
};
use crate::sanitize::inert;

use super::util::records::{Chain, attempt_record, outcome};

/// Rows shown in a table when `--limit` is not given.
const DEFAULT_TABLE_LIMIT: u64 = 200;
/// Longest question/outcome shown in a table cell, in characters.
const OUTCOME_CHARS: usize = 80;

/// Shows the journal: the workflows, a workflow's attempts, or one step in full.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  a2a-recover inspect                   # the workflows, steps counted by state
  a2a-recover inspect trip-42           # the attempts of one workflow
  a2a-recover inspect trip-42/hotel     # one step in full, with its events
  a2a-recover inspect trip-42/hotel --artifact receipt   # one artifact's value
  a2a-recover inspect --pending         # what needs a human, and what to run
  a2a-recover inspect --pending --watch # the same, kept up to date
  a2a-recover inspect --since 1h --wide # changed in the last hour, every column
  a2a-recover inspect -o json | jq .    # the same as JSON Lines")]
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
    /// Only attempts sent to this agent (its base URL or card URL).
    #[arg(long, value_name = "URL")]
    pub agent: Option<String>,
    /// Only attempts changed within this long (`30m`, `1h30m`, `1d`) or since this RFC 3339
    /// time (`2026-12-06T03:00:00Z`).
    #[arg(long, value_name = "DURATION|TIME", value_parser = crate::duration::parse_time_bound)]
    pub since: Option<crate::duration::TimeBound>,
    /// Only attempts whose last change is at least this old (`30m`) or no later than this
    /// RFC 3339 time.
    #[arg(long, value_name = "DURATION|TIME", value_parser = crate::duration::parse_time_bound)]
    pub until: Option<crate::duration::TimeBound>,
    /// Only steps the operator has not resolved (`resolve`).
    #[arg(long)]
    pub unresolved: bool,
    /// Every column: full task ids, the agent, and with --pending the command in a column.
    #[arg(long)]
    pub wide: bool,
    /// Prints the value of the step's artifact NAME (its name, else its id) as
    /// `{artifact:NAME}` gives it: raw when stdout is not a terminal.
    #[arg(long, value_name = "NAME")]
    pub artifact: Option<String>,
    /// Keeps watching: redraws the view on a terminal; on a pipe, or with `--format json`,
    /// prints the view once, then each attempt that changes. Ctrl-C ends it (exit 130).
    #[arg(long)]
    pub watch: bool,
    /// How often `--watch` reads the journal again (SQLite and PostgreSQL alike).
    #[arg(long, value_name = "DURATION", default_value = "2s",
          value_parser = crate::duration::parse_duration, requires = "watch")]
    pub interval: std::time::Duration,
}

impl InspectArgs {
    /// Whether a filter narrows the attempts (any of them turns the workflows view into the
    /// attempts table).
    fn filtered(&self) -> bool {
        !self.state.is_empty()
            || self.pending
            || self.agent.is_some()
            || self.since.is_some()
            || self.until.is_some()
            || self.unresolved
            || self.wide
    }
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
    let agent = args.agent.as_deref().map(agent_filter).transpose()?;
    if args.watch && (args.artifact.is_some() || args.events) {
        return Err(CliError::usage("--watch shows a list, not one artifact or event history")
            .hint("watch a workflow, `--pending`, or the whole journal; `a2a-recover follow STEP` \
                   follows one step")
            .into());
    }
    ctx.require_journal()?;
    ctx.out.begin("inspect")?;
    let journal = ctx.open_journal_for_reading()?;
    refuse_unknown_target(&journal, target.as_ref())?;
    if let Some(name) = &args.artifact {
        return print_artifact(ctx, &journal, target.as_ref(), name);
    }
    let query = Query {
        target,
        states,
        events_of,
        limit,
        agent,
    };
    if args.watch {
        return watch::run(ctx, &journal, args, &query).await;
    }
    show(ctx, &journal, args, &query)
}

/// What `inspect` was asked for, parsed: the rows are read again from it on every redraw.
struct Query {
    target: Option<Target>,
    states: Vec<AttemptState>,
    events_of: Option<journal::StepName>,
    limit: Option<u64>,
    agent: Option<String>,
}

impl Query {
    /// The rows' filter, its times measured against `now` (the displayed clock, as ages are).
    fn filter(&self, args: &InspectArgs, now: chrono::DateTime<chrono::Utc>) -> InspectFilter {
        InspectFilter {
            target: self.target.clone(),
            states: self.states.clone(),
            pending: args.pending,
            limit: self.limit,
            agent: self.agent.clone(),
            since: args.since.map(|b| b.at(now)),
            until: args.until.map(|b| b.at(now)),
            unresolved: args.unresolved,
        }
    }
}

/// Prints the view once: the workflows, the attempts, or a step in full (or their records).
fn show(
    ctx: &Context,
    journal: &journal::Journal,
    args: &InspectArgs,
    query: &Query,
) -> anyhow::Result<u8> {
    let Query {
        target,
        events_of,
        limit,
        ..
    } = query;
    let limit = *limit;
    let now = ctx.display_clock.now();
    let page = journal.inspect(&query.filter(args, now))?;
    let chain = Chain::of(journal, &page.rows)?;
    let step_view = match target {
        Some(Target::Step(s)) if !args.filtered() => journal.step(s)?,
        _ => None,
    };
    // The step view shows what each attempt's artifacts hold.
    let contents = match &step_view {
        Some(_) => artifacts::of_rows(journal, &page.rows)?,
        None => Vec::new(),
    };
    let workflows_view = target.is_none() && !args.filtered();
    let events = match (events_of, &step_view) {
        (Some(step), _) => journal.events_of_step(step)?,
        (None, Some(rec)) if !ctx.out.is_json() => journal.events_of_step(&rec.step.spec.name)?,
        _ => Vec::new(),
    };
    if ctx.out.is_json() {
        for row in &page.rows {
            ctx.out.record(&attempt_record(row, &chain))?;
        }
        for (row, list) in page.rows.iter().zip(&contents) {
            for a in list {
                ctx.out.record(&artifacts::record(row, a))?;
            }
        }
        for e in &events {
            ctx.out.record(&records::event(e))?;
        }
        if workflows_view {
            for w in journal.workflow_summaries(limit)?.0 {
                ctx.out.record(&workflow_record(&w))?;
            }
        }
        return Ok(exit::OK);
    }
    if let Some(rec) = &step_view {
        let shown = describe::Shown {
            rows: &page.rows,
            artifacts: &contents,
            chain: &chain,
            events: &events,
        };
        ctx.out
            .line(&describe::step_view(&ctx.out, rec, &shown, now))?;
        return Ok(exit::OK);
    }
    if workflows_view {
        return print_workflows(ctx, journal, limit, now);
    }
    print_attempts(ctx, args, &page, events_of.as_ref(), &events, now)
}

/// The card URL `--agent URL` means (a base URL or a card URL).
fn agent_filter(url: &str) -> Result<String, CliError> {
    crate::a2a::card_url_for(url).map_err(|e| {
        CliError::usage(format!("--agent `{}`: {e}", inert(url)))
            .hint("give the agent's base URL, e.g. `--agent http://127.0.0.1:8001`")
    })
}

/// Prints the value of one artifact of a step's latest attempt (`--artifact NAME`), as
/// `{artifact:NAME}` gives it: raw when stdout is not a terminal, inert on one; in JSON its
/// `artifact` record. No such artifact, or a NAME two artifacts share, is a usage error.
fn print_artifact(
    ctx: &Context,
    journal: &journal::Journal,
    target: Option<&Target>,
    name: &str,
) -> anyhow::Result<u8> {
    use crate::placeholders::{FillError, Values};
    let Some(Target::Step(step)) = target else {
        return Err(CliError::usage("--artifact needs a step")
            .hint("name one: `a2a-recover inspect WORKFLOW/STEP --artifact NAME`")
            .into());
    };
    let rows = journal
        .inspect(&InspectFilter {
            target: Some(Target::Step(step.clone())),
            ..InspectFilter::default()
        })?
        .rows;
    let row = rows.iter().find(|r| r.is_latest).or(rows.last());
    let list = match row {
        Some(r) => journal.artifacts(r.attempt.id)?,
        None => Vec::new(),
    };
    let values = row.map(|r| Values::of_attempt(step, &r.attempt, &list));
    let found = match values.as_ref().map(|v| v.artifact(name)) {
        Some(Ok(found)) => found,
        Some(Err(FillError::Collision(c))) => {
            let ids: Vec<String> = c.artifact_ids().iter().map(|i| inert(i)).collect();
            return Err(CliError::usage(format!(
                "more than one artifact of {step} is named `{}`",
                inert(name)
            ))
            .hint(format!("their ids: {}; give one as NAME", ids.join(", ")))
            .into());
        }
        _ => {
            let known: Vec<String> = list
                .iter()
                .map(|a| inert(a.name.as_deref().unwrap_or(&a.artifact_id)))
                .collect();
            let hint = if known.is_empty() {
                format!("{step} has no journaled artifact")
            } else {
                format!("its artifacts: {}", known.join(", "))
            };
            return Err(
                CliError::usage(format!("{step} has no artifact `{}`", inert(name)))
                    .hint(hint)
                    .into(),
            );
        }
    };
    if ctx.out.is_json() {
        let meant = list.iter().find(|a| a.artifact_id == found.artifact_id);
        if let (Some(r), Some(a)) = (row, meant) {
            ctx.out.record(&artifacts::record(r, a))?;
        }
    } else if ctx.out.stdout_is_tty() {
        for line in found.text.lines() {
            ctx.out.line(&inert(line))?;
        }
    } else {
        ctx.out.raw(found.text.as_bytes())?;
    }
    Ok(exit::OK)
}

/// Prints the workflows (`inspect` with no argument and no filter).
fn print_workflows(
    ctx: &Context,
    journal: &journal::Journal,
    limit: Option<u64>,
    now: chrono::DateTime<chrono::Utc>,
) -> anyhow::Result<u8> {
    let (list, total) = journal.workflow_summaries(limit)?;
    if list.is_empty() {
        ctx.out.status("no workflows in this journal yet.");
        return Ok(exit::OK);
    }
    ctx.out.line(&tables::workflows(&ctx.out, &list, now))?;
    let shown = list.len() as u64;
    if total > shown {
        ctx.out.line(&format!(
            "… {} more workflow(s) not shown; raise --limit.",
            total - shown
        ))?;
    }
    Ok(exit::OK)
}

/// Prints the attempts table (a WORKFLOW, or a filter), with `--events` of a step below it.
fn print_attempts(
    ctx: &Context,
    args: &InspectArgs,
    page: &journal::InspectPage,
    events_of: Option<&journal::StepName>,
    events: &[Event],
    now: chrono::DateTime<chrono::Utc>,
) -> anyhow::Result<u8> {
    if page.rows.is_empty() && args.pending {
        // An empty answer to "what needs me?" is said on stderr: stdout stays empty for scripts.
        ctx.out.status("nothing needs a human.");
    }
    if !page.rows.is_empty() {
        let table = tables::attempts(&ctx.out, &page.rows, now, args.pending, args.wide);
        ctx.out.line(&table)?;
    }
    // A whole workflow (no filter) whose steps all completed says so: it stays ACTIVE.
    let whole = matches!(&args.target, Some(t) if !t.contains('/')) && !args.filtered();
    for line in workflow_states(&page.rows, whole) {
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
    if let Some(step) = events_of
        && !events.is_empty()
    {
        ctx.out.line("")?;
        ctx.out.line(&format!("events of {step}:"))?;
        ctx.out.line(&describe::events_table(&ctx.out, events))?;
    }
    Ok(exit::OK)
}

/// Returns one line per workflow shown that is no longer ACTIVE (`compensate` started or
/// finished), in the order they appear.
fn workflow_states(rows: &[AttemptRow], whole: bool) -> Vec<String> {
    let mut seen: Vec<&str> = Vec::new();
    let mut lines = Vec::new();
    let latest = || rows.iter().filter(|r| r.is_latest);
    if whole
        && let Some(first) = rows.first()
        && first.workflow_state == crate::journal::WorkflowState::Active
        && latest().all(|r| r.attempt.state == AttemptState::Completed)
    {
        lines.push(format!(
            "workflow {} is done: every step is COMPLETED.",
            inert(&first.step.workflow)
        ));
    }
    for row in rows {
        let w = row.step.workflow.as_str();
        if row.workflow_state != crate::journal::WorkflowState::Active && !seen.contains(&w) {
            seen.push(w);
            lines.push(format!("workflow {w} is {}.", row.workflow_state));
        }
    }
    lines
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

// ---------------------------------------------------------------------------------------------
// The chain of attempts: previous attempt and operator decisions (`resolve`)
// ---------------------------------------------------------------------------------------------

impl Chain {
    /// `#1 (task t-1)`, or `-`.
    fn previous_cell(&self, row: &AttemptRow) -> String {
        match (self.previous_attempt(row), &row.previous_task_id) {
            (Some(n), Some(task)) => format!("#{n} (task {})", inert(task)),
            (Some(n), None) => format!("#{n}"),
            (None, _) => "-".to_owned(),
        }
    }

    /// `retry: the reason (at TIME)`, the reason whole, or `-` (the full view).
    fn resolution_cell_full(&self, row: &AttemptRow) -> String {
        match self.resolutions.get(&row.attempt.id) {
            Some(r) => {
                let pending = if r.resend_pending {
                    " (resend pending)"
                } else {
                    ""
                };
                format!(
                    "{}{pending}: {} (at {})",
                    r.resolution.as_str(),
                    inert(&r.reason),
                    describe::absolute(r.resolved_at)
                )
            }
            None => self.resolution_cell(row),
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
        Some(Target::Step(s)) if journal.step(s)?.is_none() => {
            let hint = format!(
                "list the steps of `{}` with `a2a-recover inspect {}`",
                inert(&s.workflow),
                inert(&s.workflow)
            );
            Err(super::util::unknown_step(journal, s, &hint)?.into())
        }
        _ => Ok(()),
    }
}

/// The `workflow` record (`inspect` with no argument).
fn workflow_record(w: &WorkflowSummary) -> Value {
    json!({
        "type": "workflow",
        "workflow": w.name,
        "state": w.state.as_str(),
        "steps": w.steps.values().sum::<u64>(),
        "states": w.steps,
        "needsHuman": w.needs_human,
        "resolved": w.resolved,
        "createdAt": rfc3339(w.created_at),
        "updatedAt": rfc3339(w.updated_at),
    })
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};

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
