//! The tables of `inspect`: the workflows (no argument), the attempts (narrow by default,
//! `--wide` for every column), and what a `--pending` row's command is, on a line of its own.
//!
//! The narrow layout fits the width (`COLUMNS`, else the terminal's): one `WORKFLOW/STEP`
//! column that can be pasted into a command, short task ids, and the question or outcome cut
//! to what is left of the line. A command to run is never put in a cell that could wrap: it is
//! printed below the table, whole.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use comfy_table::Cell;

use super::{OUTCOME_CHARS, agent_cell, outcome, truncate};
use crate::commands::util::remedy::RemedyText as _;
use crate::journal::{AttemptRow, WorkflowSummary};
use crate::output::{Printer, age, display_width, render_table, state_cell, table};
use crate::recovery::remedy::Remedy;
use crate::sanitize::{LIST_LINES, inert, inert_lines};

/// Task ids up to this many characters are shown whole in the narrow layout.
const SHORT_ID_MAX: usize = 12;
/// How many characters of a longer task id the narrow layout keeps (before `…`).
const SHORT_ID_KEEP: usize = 8;
/// The least room the question or outcome gets, even on a very narrow terminal.
const MIN_OUTCOME: usize = 16;

/// A task id as the narrow layout shows it: whole up to 12 characters, else its first 8 and
/// `…` (`inspect WORKFLOW/STEP` and `--wide` show it whole).
pub(super) fn short_id(id: &str) -> String {
    if id.chars().count() <= SHORT_ID_MAX {
        return inert(id);
    }
    let kept: String = id.chars().take(SHORT_ID_KEEP).collect();
    format!("{}…", inert(&kept))
}

/// The state as lists show it: with the operator's decision on the step after it
/// (`LOST (resolved: done)`), so a resolved step never reads as one that still waits.
pub(super) fn state_text(row: &AttemptRow) -> String {
    match row.resolution.filter(|_| row.is_latest) {
        Some(r) => format!("{} (resolved: {})", row.attempt.state, r.as_str()),
        None => row.attempt.state.as_str().to_owned(),
    }
}

/// `s` whole if it has at most `room` characters, else its first `room - 1` and `…`.
pub(super) fn fit(s: &str, room: usize) -> String {
    if s.chars().count() <= room {
        s.to_owned()
    } else {
        truncate(s, room.saturating_sub(1))
    }
}

/// Remote text for a table cell: its lines ([`inert_lines`], at most [`LIST_LINES`]), each cut
/// to `room` characters.
pub(super) fn cell_text(text: &str, room: usize) -> String {
    inert_lines(text, "", Some(LIST_LINES))
        .lines()
        .map(|l| fit(l, room))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The widest line of a rendered table, as a terminal shows it (colours take no width).
fn rendered_width(text: &str) -> usize {
    text.lines().map(display_width).max().unwrap_or(0)
}

/// How much room is left for one more column after `table` (rendered), on a line of `width`:
/// two spaces between columns, on a terminal as on a pipe.
pub(super) fn room_left(rendered: &str, width: usize) -> usize {
    width.saturating_sub(rendered_width(rendered) + 2)
}

/// Renders the attempts table: narrow (the default) or `wide`; with `pending`, the wide layout
/// gains a `TO ANSWER` column, the narrow one prints the commands below the table.
pub(super) fn attempts(
    out: &Printer,
    rows: &[AttemptRow],
    now: DateTime<Utc>,
    pending: bool,
    wide: bool,
) -> String {
    if wide {
        return wide_table(out, rows, now, pending);
    }
    let with_effect = rows.iter().any(|r| r.attempt.effect.is_some());
    let mut header = vec!["STEP", "#", "STATE", "TASK", "AGE"];
    if with_effect {
        header.push("EFFECT");
    }
    let fixed_cells = |row: &AttemptRow| {
        let a = &row.attempt;
        let mut cells = vec![
            Cell::new(inert(&row.step.to_string())),
            Cell::new(a.number),
            state_cell(out, &state_text(row)),
            Cell::new(
                a.task_id
                    .as_deref()
                    .map_or_else(|| "-".to_owned(), short_id),
            ),
            Cell::new(age(now, row.state_changed_at)),
        ];
        if with_effect {
            cells.push(Cell::new(a.effect.map_or("-", |e| e.as_str())));
        }
        cells
    };
    // Measure what the fixed columns take, then give the question or outcome what is left:
    // at least a short one, even past the width, so that a question is never left out.
    let mut probe = table(out, header.clone());
    for row in rows {
        probe.add_row(fixed_cells(row));
    }
    let probe = render_table(out, &probe);
    let room = out
        .width()
        .map_or(OUTCOME_CHARS, |width| room_left(&probe, width))
        .clamp(MIN_OUTCOME, OUTCOME_CHARS);
    header.push("QUESTION/OUTCOME");
    let mut t = table(out, header);
    for row in rows {
        let mut cells = fixed_cells(row);
        cells.push(Cell::new(cell_text(&outcome(row), room)));
        t.add_row(cells);
    }
    let mut text = render_table(out, &t);
    if pending {
        text.push_str(&commands_below(rows));
    }
    text
}

/// Every column, as before the narrow layout: full task ids, the agent, the effect, and with
/// `pending` the command in its own column (nothing is wrapped or cut to fit the width).
fn wide_table(out: &Printer, rows: &[AttemptRow], now: DateTime<Utc>, pending: bool) -> String {
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
    if pending {
        header.push("TO ANSWER");
    }
    let mut t = table(out, header);
    for row in rows {
        let a = &row.attempt;
        let mut cells = vec![
            Cell::new(inert(&row.step.workflow)),
            Cell::new(inert(&row.step.step)),
            Cell::new(a.number),
            Cell::new(agent_cell(a.agent_url.as_deref())),
            state_cell(out, &state_text(row)),
            Cell::new(a.task_id.as_deref().map_or_else(|| "-".to_owned(), inert)),
            Cell::new(age(now, row.state_changed_at)),
            Cell::new(a.effect.map_or("-", |e| e.as_str())),
            Cell::new(cell_text(&outcome(row), OUTCOME_CHARS + 1)),
        ];
        if pending {
            cells.push(Cell::new(
                Remedy::of(row)
                    .map(|r| r.command_line())
                    .unwrap_or_default(),
            ));
        }
        t.add_row(cells);
    }
    render_table(out, &t)
}

/// The commands that answer the rows, one per line below the table (each alternative on its
/// own `or:` line), so that none is ever split and each can be copied whole.
fn commands_below(rows: &[AttemptRow]) -> String {
    let mut text = String::new();
    for remedy in rows.iter().filter_map(Remedy::of) {
        if text.is_empty() {
            text.push_str("\n\nto answer:");
        }
        text.push_str("\n  ");
        text.push_str(&remedy.command());
        for alt in remedy.alternatives() {
            text.push_str("\n    or: ");
            text.push_str(&alt);
        }
    }
    text
}

/// A workflow's state as lists show it: `ACTIVE (done)` when every step completed (it keeps
/// its three states; "done" is derived).
fn workflow_state_text(w: &WorkflowSummary) -> String {
    let done = w.state == crate::journal::WorkflowState::Active
        && !w.steps.is_empty()
        && w.steps.keys().all(|s| s == "COMPLETED");
    if done {
        format!("{} (done)", w.state)
    } else {
        w.state.as_str().to_owned()
    }
}

/// Renders the workflows (`inspect` with no argument): each with its state, how many steps,
/// how many need a human, when it last changed, and its steps counted by state.
pub(super) fn workflows(out: &Printer, list: &[WorkflowSummary], now: DateTime<Utc>) -> String {
    let header = vec!["WORKFLOW", "STATE", "STEPS", "NEEDS HUMAN", "AGE"];
    let fixed_cells = |w: &WorkflowSummary| {
        vec![
            Cell::new(inert(&w.name)),
            state_cell(out, &workflow_state_text(w)),
            Cell::new(w.steps.values().sum::<u64>()),
            Cell::new(w.needs_human),
            Cell::new(age(now, w.state_changed_at)),
        ]
    };
    let room = out.width().map_or(usize::MAX, |width| {
        let mut probe = table(out, header.clone());
        for w in list {
            probe.add_row(fixed_cells(w));
        }
        room_left(&render_table(out, &probe), width).max(MIN_OUTCOME)
    });
    let mut header = header;
    header.push("STEPS BY STATE");
    let mut t = table(out, header);
    for w in list {
        let mut by_state = w
            .steps
            .iter()
            .map(|(state, n)| format!("{n} {state}"))
            .collect::<Vec<_>>()
            .join(", ");
        if w.resolved > 0 {
            let _ = write!(by_state, "; {} resolved", w.resolved);
        }
        let mut cells = fixed_cells(w);
        cells.push(Cell::new(fit(&by_state, room)));
        t.add_row(cells);
    }
    render_table(out, &t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_task_ids_are_cut_short_ones_kept() {
        assert_eq!(short_id("task-hotel"), "task-hotel");
        assert_eq!(short_id("task-hotel-123"), "task-hot…");
        assert_eq!(
            short_id("0b6e2a9c-6f1d-4a57-9d0e-3f8a1c2b4d5e"),
            "0b6e2a9c…"
        );
    }
}
