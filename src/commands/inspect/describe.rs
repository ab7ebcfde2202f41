//! `inspect WORKFLOW/STEP`: the full view of one step, as `kubectl describe` and `temporal
//! workflow describe` show one object. Every id whole, what the step is delegated to, the full
//! question and outcome, absolute times (UTC) beside ages, the operator's decisions, the
//! command that answers it, and the step's events with their times.

use chrono::{DateTime, Utc};
use comfy_table::Cell;

use super::agent_cell;
use super::tables::{fit, room_left};
use crate::commands::report::human::event_detail;
use crate::commands::report::vocabulary::{Kind, human};
use crate::commands::util::records::{Chain, outcome};
use crate::commands::util::remedy::RemedyText as _;
use crate::journal::{Artifact, AttemptRow, Binding, Event, StepRecord};
use crate::output::{Printer, age, render_table, table};
use crate::recovery::remedy::Remedy;
use crate::sanitize::{inert, inert_lines};

/// An absolute time as the full view shows it: UTC, to the second.
pub(super) fn absolute(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// `2026-11-30T01:00:00Z (5m ago)`.
fn when(t: DateTime<Utc>, now: DateTime<Utc>) -> String {
    format!("{} ({} ago)", absolute(t), age(now, t))
}

/// Lines of `label: value`, the labels padded to one width.
struct Fields {
    lines: Vec<String>,
    indent: &'static str,
}

impl Fields {
    fn new(indent: &'static str) -> Self {
        Self {
            lines: Vec::new(),
            indent,
        }
    }

    fn add(&mut self, label: &str, value: impl AsRef<str>) {
        self.lines.push(format!(
            "{}{:<12}{}",
            self.indent,
            format!("{label}:"),
            value.as_ref()
        ));
    }

    /// A field holding remote text, each of its lines under the value's column
    /// ([`inert_lines`]), whole.
    fn add_remote(&mut self, label: &str, text: &str) {
        let indent = format!("{}{:12}", self.indent, "");
        self.add(label, inert_lines(text, &indent, None));
    }

    fn add_opt(&mut self, label: &str, value: Option<impl AsRef<str>>) {
        if let Some(v) = value {
            self.add(label, v);
        }
    }
}

/// What the full view of a step shows: its attempts, each one's artifacts (in the same
/// order), the chain that links them, and the step's events.
pub(super) struct Shown<'a> {
    pub(super) rows: &'a [AttemptRow],
    pub(super) artifacts: &'a [Vec<Artifact>],
    pub(super) chain: &'a Chain,
    pub(super) events: &'a [Event],
}

/// Renders the full view of a step: the step, each attempt with what its artifacts hold, then
/// its events.
pub(super) fn step_view(
    out: &Printer,
    rec: &StepRecord,
    shown: &Shown<'_>,
    now: DateTime<Utc>,
) -> String {
    let Shown {
        rows,
        chain,
        events,
        ..
    } = *shown;
    let spec = &rec.step.spec;
    let mut f = Fields::new("");
    f.add("step", inert(&spec.name.to_string()));
    if let Some(first) = rows.first() {
        f.add(
            "workflow",
            format!("{} ({})", inert(&spec.name.workflow), first.workflow_state),
        );
    }
    f.add(
        "delegated",
        match &spec.binding {
            Binding::Agent(url) => format!("to agent {}", agent_cell(Some(url))),
            Binding::Skill(skill) => format!("by skill `{}` (any registered agent)", inert(skill)),
            Binding::Command(cmd) => format!("as the command `{}`", inert(cmd)),
        },
    );
    f.add_remote("text", &spec.text);
    if let Some(data) = &spec.data {
        f.add("data", "");
        f.lines
            .push(crate::commands::util::indented_json(data, "    "));
    }
    f.add(
        "attempts",
        format!("{} of at most {}", rows.len(), spec.max_attempts),
    );
    if spec.effect.is_some() {
        f.add("effect", "declared (compensated by `compensate`)");
    }
    // The decision, unless an attempt shows it with its time below.
    if let Some(r) = rec
        .step
        .resolution
        .filter(|_| !rows.iter().any(|r| chain.decided(r)))
    {
        let reason = rec.step.resolution_reason.as_deref().map(inert);
        f.add(
            "resolution",
            match reason {
                Some(reason) => format!("{}: {reason}", r.as_str()),
                None => r.as_str().to_owned(),
            },
        );
    }
    let mut text = f.lines.join("\n");
    for (i, row) in rows.iter().enumerate() {
        text.push_str("\n\n");
        text.push_str(&attempt_view(out, row, chain, now));
        let held = shown.artifacts.get(i).map_or(&[][..], Vec::as_slice);
        for line in super::artifacts::lines(held) {
            text.push('\n');
            text.push_str(&line);
        }
    }
    text.push_str("\n\nevents:");
    if events.is_empty() {
        text.push_str(" none journaled (or pruned)");
    } else {
        text.push('\n');
        text.push_str(&events_table(out, events));
    }
    text
}

fn attempt_view(out: &Printer, row: &AttemptRow, chain: &Chain, now: DateTime<Utc>) -> String {
    let a = &row.attempt;
    let state = out.paint_state(&super::tables::state_text(row));
    let mut f = Fields::new("  ");
    f.add("agent", agent_cell(a.agent_url.as_deref()));
    f.add_opt(
        "interface",
        a.interface_url
            .as_deref()
            .map(|u| inert(&crate::a2a::redact_url(u))),
    );
    f.add("message id", inert(&a.message_id));
    f.add_opt("context id", a.context_id.as_deref().map(inert));
    f.add(
        "task id",
        a.task_id.as_deref().map_or_else(|| "-".to_owned(), inert),
    );
    f.add_opt(
        "continued",
        a.continuation_task_id
            .as_deref()
            .map(|t| format!("by task {} (later reads go there)", inert(t))),
    );
    if let Some(remote) = &a.remote_state {
        let at = a
            .status_timestamp
            .as_deref()
            .map(|t| format!(" at {}", inert(t)))
            .unwrap_or_default();
        f.add(
            "remote",
            format!("{}{at}", inert(&human(Kind::State, remote))),
        );
    }
    let previous = chain.previous_cell(row);
    if previous != "-" {
        f.add("previous", previous);
    }
    f.add_opt("effect", a.effect.map(crate::journal::EffectState::as_str));
    f.add("created", when(a.created_at, now));
    f.add("updated", when(a.updated_at, now));
    if let Some(q) = a.question_text() {
        f.add_remote("question", &q);
        if let Some(data) = a.question_data() {
            f.add("as data", "");
            f.lines
                .push(crate::commands::util::indented_json(data, "    "));
        }
    } else {
        let o = outcome(row);
        if !o.is_empty() {
            f.add_remote("outcome", &o);
        }
    }
    if let Some(e) = &a.error
        && a.question_text().is_some()
    {
        f.add_remote("error", e);
    }
    if row.artifact_count > 0 {
        f.add("artifacts", row.artifact_count.to_string());
    }
    let resolution = chain.resolution_cell_full(row);
    if resolution != "-" {
        f.add("resolution", resolution);
    }
    if let Some(remedy) = Remedy::of(row) {
        f.add("to answer", remedy.command());
        for alt in remedy.alternatives() {
            f.add("or", alt);
        }
    }
    format!("attempt {}: {state}\n{}", a.number, f.lines.join("\n"))
}

/// The step's events with their absolute times; the detail cut to fit the width.
pub(super) fn events_table(out: &Printer, events: &[Event]) -> String {
    let header = vec!["TIME", "ATTEMPT", "EVENT", "FROM", "TO"];
    let fixed = |e: &Event| {
        vec![
            Cell::new(absolute(e.at)),
            Cell::new(e.attempt.map_or_else(|| "-".to_owned(), |n| n.to_string())),
            Cell::new(inert(&human(Kind::Event, &e.kind))),
            Cell::new(e.from.clone().unwrap_or_default()),
            Cell::new(e.to.clone().unwrap_or_default()),
        ]
    };
    let room = out.width().map_or(super::OUTCOME_CHARS, |width| {
        let mut probe = table(out, header.clone());
        for e in events {
            probe.add_row(fixed(e));
        }
        room_left(&render_table(out, &probe), width).max(16)
    });
    let mut header = header;
    header.push("DETAIL");
    let mut t = table(out, header);
    for e in events {
        let detail = e.detail.as_ref().map(event_detail).unwrap_or_default();
        let mut cells = fixed(e);
        cells.push(Cell::new(fit(&detail, room)));
        t.add_row(cells);
    }
    render_table(out, &t)
}
