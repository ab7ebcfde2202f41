//! The printer: data to stdout, diagnostics to stderr, JSON Lines on request.
//!
//! Only this module prints. A broken pipe on stdout is reported as [`BrokenPipe`], which
//! `lib::main` turns into a silent exit 0 (`a2a-recover inspect | head` is not an error).

use std::collections::BTreeMap;
use std::io::{self, IsTerminal, Write};
use std::sync::{Mutex, PoisonError};

use clap::ValueEnum;
use serde_json::{Value, json};

/// Stdout was closed by the reader (e.g. `| head`); not an error.
#[derive(Debug, thiserror::Error)]
#[error("broken pipe on stdout")]
pub struct BrokenPipe;

/// The output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Tables and sentences.
    Human,
    /// JSON Lines, one record per line (docs/json-output.md).
    Json,
}

/// When to use colors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colors on a terminal, unless `NO_COLOR` is set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Where and how to print.
#[derive(Debug)]
pub struct Printer {
    format: Format,
    quiet: bool,
    verbose: u8,
    color: bool,
    stdout_tty: bool,
    stderr_tty: bool,
    /// The width tables fit: the terminal's, else `COLUMNS`; `None` when piped without
    /// `COLUMNS` (nothing is cut to fit then, beyond each column's own bound).
    width: Option<usize>,
    /// What the JSON records written so far add up to, for the summary a signal still owes.
    tally: Mutex<Tally>,
    /// The journal in use as shown to people (a path, or a URL without its password): every
    /// `summary` record names it.
    journal: Option<String>,
}

/// The commands whose JSON output ends with a `summary` record (every command that
/// runs a pass); a signal that cuts one of them still writes one.
const PASS_COMMANDS: [&str; 6] = [
    "delegate",
    "reconcile",
    "follow",
    "reply",
    "compensate",
    "prune",
];

/// The JSON records written so far: the command, the outcome of every `action` record, the
/// number of `event` records, and whether the `summary` was written.
#[derive(Debug, Default)]
struct Tally {
    command: Option<String>,
    outcomes: BTreeMap<String, u64>,
    /// The outcome of the last `action` record on each attempt (workflow, step, attempt).
    attempts: BTreeMap<(String, String, u64), String>,
    events: u64,
    summary_written: bool,
}

/// Whether `--color` asks for colors on a stream: always, never, or (`auto`) when it is a
/// terminal and `NO_COLOR` is not set.
pub fn wants_color(choice: ColorChoice, tty: bool, no_color: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => tty && !no_color,
    }
}

/// Whether `NO_COLOR` is set to a non-empty value (<https://no-color.org>).
pub fn no_color_env() -> bool {
    std::env::var_os(crate::env::NO_COLOR).is_some_and(|v| !v.is_empty())
}

impl Printer {
    /// Builds a printer from the global flags and the environment.
    pub fn new(
        format: Format,
        color: ColorChoice,
        quiet: bool,
        verbose: u8,
        no_color: bool,
    ) -> Self {
        let stdout_tty = io::stdout().is_terminal();
        let stderr_tty = io::stderr().is_terminal();
        let color = wants_color(color, stdout_tty, no_color);
        let width = stdout_tty
            .then(terminal_width)
            .flatten()
            .or_else(|| columns_env(std::env::var(crate::env::COLUMNS).ok().as_deref()));
        Self {
            format,
            quiet,
            verbose,
            color,
            stdout_tty,
            stderr_tty,
            width,
            tally: Mutex::default(),
            journal: None,
        }
    }

    /// Returns whether `-q` was given.
    pub fn is_quiet(&self) -> bool {
        self.quiet
    }

    /// Returns whether JSON Lines were asked for.
    pub fn is_json(&self) -> bool {
        self.format == Format::Json
    }

    /// Returns whether stdout is a terminal (tables get borders there).
    pub fn stdout_is_tty(&self) -> bool {
        self.stdout_tty
    }

    /// Returns whether colors are on.
    pub fn color(&self) -> bool {
        self.color
    }

    /// Returns the width tables fit (the terminal's, else `COLUMNS`), if known.
    pub fn width(&self) -> Option<usize> {
        self.width
    }

    /// Returns `state` coloured as tables colour it ([`state_color`]) when colours are on.
    pub fn paint_state(&self, state: &str) -> String {
        use comfy_table::Color;
        let code = match state_color(state).filter(|_| self.color) {
            Some(Color::Green) => "32",
            Some(Color::Yellow) => "33",
            Some(Color::Red) => "31",
            _ => return state.to_owned(),
        };
        format!("\x1b[{code}m{state}\x1b[0m")
    }

    /// Returns the verbosity (`-v` count).
    pub fn verbosity(&self) -> u8 {
        self.verbose
    }

    /// Returns whether a progress bar or spinner may be drawn (stderr TTY, human format,
    /// neither quiet nor verbose).
    pub fn progress_allowed(&self) -> bool {
        self.stderr_tty && !self.quiet && self.verbose == 0 && !self.is_json()
    }

    /// Writes raw bytes to stdout.
    pub fn raw(&self, bytes: &[u8]) -> Result<(), BrokenPipe> {
        let mut out = io::stdout().lock();
        match out.write_all(bytes).and_then(|()| out.flush()) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Err(BrokenPipe),
            // Any other stdout error (a full disk behind a redirect) is as final as a broken
            // pipe for us: there is nowhere left to write data.
            Err(_) => Err(BrokenPipe),
        }
    }

    /// Writes one line of data to stdout.
    pub fn line(&self, line: &str) -> Result<(), BrokenPipe> {
        let mut s = String::with_capacity(line.len() + 1);
        s.push_str(line);
        s.push('\n');
        self.raw(s.as_bytes())
    }

    /// `text` wrapped to the width (unchanged when there is none): each line that is too long
    /// goes on under its own indent plus two spaces. A span in backticks (a command, a flag)
    /// is never split. Only for text of our own: a remote line wrapped would go on without its
    /// prefix (`sanitize::REMOTE_LINE_PREFIX`), where an agent could forge a line of ours.
    pub fn wrap(&self, text: &str) -> String {
        let Some(width) = self.width() else {
            return text.to_owned();
        };
        text.lines()
            .map(|line| wrap_line(line, width))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Names the journal in use in every `summary` record.
    pub fn with_journal(mut self, shown: String) -> Self {
        self.journal = Some(shown);
        self
    }

    /// Writes one JSON Lines record to stdout; a `summary` gains `journal`.
    pub fn record(&self, value: &Value) -> Result<(), BrokenPipe> {
        if value.get("type").and_then(Value::as_str) == Some("summary")
            && value.get("journal").is_none()
            && let (Some(journal), Value::Object(fields)) = (&self.journal, value)
        {
            let mut fields = fields.clone();
            fields.insert("journal".to_owned(), Value::String(journal.clone()));
            return self.record(&Value::Object(fields));
        }
        {
            let mut tally = self.tally.lock().unwrap_or_else(PoisonError::into_inner);
            match value.get("type").and_then(Value::as_str) {
                Some("action") => {
                    let outcome = value.get("outcome").and_then(Value::as_str).unwrap_or("");
                    *tally.outcomes.entry(outcome.to_owned()).or_default() += 1;
                    let text = |k: &str| value.get(k).and_then(Value::as_str).unwrap_or("");
                    let key = (
                        text("workflow").to_owned(),
                        text("step").to_owned(),
                        value.get("attempt").and_then(Value::as_u64).unwrap_or(0),
                    );
                    tally.attempts.insert(key, outcome.to_owned());
                }
                Some("event") => tally.events += 1,
                Some("summary") => tally.summary_written = true,
                _ => {}
            }
        }
        self.line(&value.to_string())
    }

    /// Writes the first record of every JSON Lines output.
    pub fn begin(&self, command: &str) -> Result<(), BrokenPipe> {
        if self.is_json() {
            self.tally
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .command = Some(command.to_owned());
            self.record(&json!({"type": "begin", "formatVersion": 1, "command": command}))?;
        }
        Ok(())
    }

    /// Adds `n` to an outcome of the summary a signal may still owe, for a pass that writes no
    /// `action` record per item (`prune` counts the events each committed batch deleted).
    pub fn count_outcome(&self, outcome: &str, n: u64) {
        let mut tally = self.tally.lock().unwrap_or_else(PoisonError::into_inner);
        *tally.outcomes.entry(outcome.to_owned()).or_default() += n;
    }

    /// Writes the `summary` a pass owes when a signal cut it before its own: the counts of the
    /// `action` outcomes and `event` records written so far, `"interrupted"` naming the signal,
    /// and the exit code. Writes nothing outside JSON, for a command that runs no pass, or when
    /// the summary was already written.
    pub fn summary_after_signal(&self, signal: &str, code: u8) -> Result<(), BrokenPipe> {
        let record = {
            let tally = self.tally.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(command) = tally.command.as_deref() else {
                return Ok(());
            };
            if tally.summary_written || !PASS_COMMANDS.contains(&command) {
                return Ok(());
            }
            let mut attempts: BTreeMap<&str, u64> = BTreeMap::new();
            for outcome in tally.attempts.values() {
                *attempts.entry(outcome).or_default() += 1;
            }
            json!({
                "type": "summary",
                "command": command,
                "outcomes": tally.outcomes,
                "attempts": attempts,
                "events": tally.events,
                "interrupted": signal,
                "exitCode": code,
            })
        };
        self.record(&record)
    }

    /// Writes a status line to stderr (human format only; suppressed by `-q`).
    pub fn status(&self, msg: &str) {
        if !self.quiet && !self.is_json() {
            let _ = writeln!(io::stderr().lock(), "{msg}");
        }
    }

    /// Writes a warning to stderr (always, also with `-q` and in JSON mode).
    pub fn warn(&self, msg: &str) {
        let _ = writeln!(io::stderr().lock(), "warning: {msg}");
    }

    /// Writes an already-rendered error report to stderr.
    pub fn error_report(&self, report: &str) {
        let _ = io::stderr().lock().write_all(report.as_bytes());
    }
}

/// The width of the terminal stdout is, if it says one.
fn terminal_width() -> Option<usize> {
    rustix::termios::tcgetwinsize(io::stdout())
        .ok()
        .map(|w| usize::from(w.ws_col))
        .filter(|w| *w > 0)
}

/// The width `text` takes on a terminal: escape sequences take none, wide characters two.
pub fn display_width(text: &str) -> usize {
    console::measure_text_width(text)
}

/// Parses `COLUMNS`: a positive number of columns, else nothing.
pub fn columns_env(value: Option<&str>) -> Option<usize> {
    value
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|w| *w > 0)
}

/// The colour a state is shown in with `--color always` (or `auto` on a terminal): green when
/// done, yellow when a human must act, red when failed, none while work goes on.
pub fn state_color(state: &str) -> Option<comfy_table::Color> {
    use comfy_table::Color;
    let bare = state.split_whitespace().next().unwrap_or(state);
    match bare {
        "COMPLETED" | "REPLIED" | "COMPENSATED" | "ACTIVE" => Some(Color::Green),
        "INPUT_REQUIRED" | "AUTH_REQUIRED" | "UNCERTAIN" | "LOST" | "REFUSED" => {
            Some(Color::Yellow)
        }
        "FAILED" | "REJECTED" | "CANCELED" | "COMPENSATING" => Some(Color::Red),
        _ => None,
    }
}

/// A table cell holding a state, coloured when colours are on ([`state_color`]).
pub fn state_cell(out: &Printer, state: &str) -> comfy_table::Cell {
    let cell = comfy_table::Cell::new(state);
    match state_color(state).filter(|_| out.color()) {
        Some(c) => cell.fg(c),
        None => cell,
    }
}

/// Returns whether a destructive command (`compensate`, `resolve`, `prune`) asks before it
/// acts: only on a terminal (standard input and standard error both are), and not with `--yes`.
/// A script or a timer is never asked.
pub fn must_ask(stdin_tty: bool, stderr_tty: bool, yes: bool) -> bool {
    !yes && stdin_tty && stderr_tty
}

/// Returns whether an answer to a `[y/N]` question is yes: `y` or `yes`, any case; anything
/// else, an empty line and end of input are no.
pub fn accepts(answer: &str) -> bool {
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

impl Printer {
    /// Shows what a destructive command will do (`plan`, one line each) and asks `Proceed?
    /// [y/N]` on standard error when [`must_ask`] says so; returns whether to go on. Without a
    /// terminal, or with `yes`, it prints nothing and returns true.
    pub fn confirm(&self, plan: &[String], yes: bool) -> bool {
        use std::io::{BufRead as _, Read as _};
        if !must_ask(io::stdin().is_terminal(), self.stderr_tty, yes) {
            return true;
        }
        {
            let mut err = io::stderr().lock();
            for line in plan {
                let _ = writeln!(err, "{line}");
            }
            let _ = write!(err, "Proceed? [y/N] ");
            let _ = err.flush();
        }
        let mut answer = String::new();
        let read = io::stdin().lock().take(1024).read_line(&mut answer);
        matches!(read, Ok(n) if n > 0) && accepts(&answer)
    }
}

/// Starts a table. One layout on a terminal and on a pipe: no leading space, two spaces
/// between columns, nothing wrapped or cut by the table itself (the views cut their long cells
/// with `…` to fit [`Printer::width`]), so the same columns and cells show in both. A terminal
/// adds a rule under the header ([`render_table`]) and colours.
pub fn table(out: &Printer, header: Vec<&str>) -> comfy_table::Table {
    use comfy_table::{ContentArrangement, Table, presets};
    let mut table = Table::new();
    table
        .load_style(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled);
    if out.color() {
        // Colours also when piped (`--color always`): comfy-table styles only terminals by
        // itself. Styling is applied after the layout: escape codes take no width.
        table.enforce_styling();
        table.style_text_only();
        table.set_header(
            header
                .into_iter()
                .map(|h| comfy_table::Cell::new(h).add_attribute(comfy_table::Attribute::Bold)),
        );
    } else {
        table.set_header(header);
    }
    for column in table.column_iter_mut() {
        column.set_padding((0, 2));
    }
    table
}

/// Renders a table, trimming the trailing spaces the layout leaves on each line; on a terminal
/// a rule under the header marks each column.
pub fn render_table(out: &Printer, table: &comfy_table::Table) -> String {
    let mut lines: Vec<String> = table.lines().map(|l| l.trim_end().to_owned()).collect();
    if out.stdout_is_tty() && !lines.is_empty() {
        let rule = table
            .column_max_content_widths()
            .iter()
            .map(|w| "─".repeat(usize::from(*w)))
            .collect::<Vec<_>>()
            .join("  ");
        lines.insert(1, rule);
    }
    lines.join("\n")
}

/// One line wrapped to `width`, its backtick spans kept whole (their spaces are not places to
/// break).
fn wrap_line(line: &str, width: usize) -> String {
    if display_width(line) <= width {
        return line.to_owned();
    }
    const KEEP: char = '\u{a0}';
    let mut kept = String::with_capacity(line.len());
    let mut in_ticks = false;
    for c in line.chars() {
        if c == '`' {
            in_ticks = !in_ticks;
        }
        kept.push(if in_ticks && c == ' ' { KEEP } else { c });
    }
    let indent: String = line.chars().take_while(|c| *c == ' ').collect();
    let more = format!("{indent}  ");
    let options = textwrap::Options::new(width)
        .initial_indent(&indent)
        .subsequent_indent(&more)
        .break_words(false)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::wrap(kept.trim_start(), options)
        .iter()
        .map(|l| l.replace(KEEP, " "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Returns a short age for tables: `42s`, `5m`, `3h`, `2d`.
pub fn age(now: chrono::DateTime<chrono::Utc>, then: chrono::DateTime<chrono::Utc>) -> String {
    let secs = (now - then).num_seconds().max(0);
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapped_line_keeps_backtick_spans_and_hyphenated_words_whole() {
        let line = "  hint: check that the agent runs; see `a2a-recover inspect --pending` again";
        let got = wrap_line(line, 40);
        assert_eq!(
            got,
            "  hint: check that the agent runs; see\n    `a2a-recover inspect --pending`\n    again"
        );
        assert_eq!(wrap_line("short", 40), "short");
    }

    #[test]
    fn only_a_terminal_without_yes_is_asked() {
        assert!(must_ask(true, true, false));
        assert!(!must_ask(true, true, true), "--yes answers");
        assert!(!must_ask(false, true, false), "stdin piped: a script");
        assert!(!must_ask(true, false, false), "stderr redirected: a timer");
        assert!(!must_ask(false, false, false));
    }

    #[test]
    fn only_y_or_yes_proceeds() {
        for yes in ["y", "Y", "yes", "YES\n", "  y \r\n"] {
            assert!(accepts(yes), "{yes:?}");
        }
        for no in ["", "\n", "n", "no", "yep", "sure", "y y"] {
            assert!(!accepts(no), "{no:?}");
        }
    }
}
