//! The scripts: what a task does after it is created, and after a reply to its question.
//!
//! - `work:N` (`work` = `work:3`, N ≤ 10 000): WORKING, then N ticks; each tick publishes a
//!   WORKING status with the message `step i/N` and a chunk `chunk i;` of artifact `result`
//!   (first chunk `append` false, later ones true, the last `lastChunk` true); then COMPLETED.
//!   `work:0` completes at once with one chunk `done;`.
//! - `ask`: INPUT_REQUIRED asking `two rooms or one?`; the reply completes it with artifact
//!   `booking` = `booked: <reply text>`.
//! - `auth`: AUTH_REQUIRED (`authorization needed`); the next message completes it with artifact
//!   `result` = `authorized: <text>`.
//! - `fail`: FAILED (`failed: scripted failure`). `reject`: REJECTED (`rejected: no availability`).
//! - `direct`: a direct Message (`direct: <text>`), no task.
//! - `cancel <task id>`: cancels the booking that task made (see below), COMPLETED with artifact
//!   `cancellation` = `canceled: <id>` (or `nothing to cancel`).
//! - anything else: COMPLETED with artifact `echo` holding the message text.
//!
//! Every task that COMPLETES (but `cancel` tasks) makes a booking in the agent's "booking
//! system", readable at `GET /_scripted/bookings/{taskId}` (200 or 404): an independent read
//! path for `--verify-url`, as a real booking system would be.
//!
//! Everything but the ticks of `work:N` happens synchronously under the store's lock, right after
//! the task is created, so a GetTask after the send already sees the scripted state.

use std::fmt::Write as _;
use std::sync::Arc;

use a2a::TaskState;

use super::Shared;
use super::state::Inner;

/// Largest N accepted in `work:N`; more is read as the maximum.
const MAX_STEPS: u32 = 10_000;

/// A task's script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scenario {
    /// `work:N`: N ticks of progress, then COMPLETED.
    Work(u32),
    /// `ask`: INPUT_REQUIRED until a reply.
    Ask,
    /// `auth`: AUTH_REQUIRED until the next message.
    Auth,
    /// `fail`: FAILED.
    Fail,
    /// `reject`: REJECTED.
    Reject,
    /// `direct`: a direct Message, no task.
    Direct,
    /// `cancel <task id>`: removes that task's booking.
    Cancel,
    /// Anything else: COMPLETED with the text echoed.
    Echo,
}

/// Every scenario word, the scenario it starts and what it does: what [`Scenario::parse`]
/// reads and what `scripted-agent --help` lists (one table, so the two cannot drift).
pub(crate) const SCENARIOS: [(&str, Scenario, &str); 8] = [
    (
        "work:N",
        Scenario::Work(3),
        "N ticks of WORKING (--tick), then COMPLETED (`work` = `work:3`)",
    ),
    (
        "ask",
        Scenario::Ask,
        "INPUT_REQUIRED asking `two rooms or one?`; the reply completes it",
    ),
    (
        "auth",
        Scenario::Auth,
        "AUTH_REQUIRED; the next message completes it",
    ),
    (
        "fail",
        Scenario::Fail,
        "FAILED (`failed: scripted failure`)",
    ),
    (
        "reject",
        Scenario::Reject,
        "REJECTED (`rejected: no availability`)",
    ),
    (
        "direct",
        Scenario::Direct,
        "answers with a direct Message, no task",
    ),
    (
        "cancel ID",
        Scenario::Cancel,
        "cancels the booking task ID made, then COMPLETED",
    ),
    (
        "anything else",
        Scenario::Echo,
        "COMPLETED with the text echoed in artifact `echo`",
    ),
];

/// The scenarios as `scripted-agent --help` lists them, from `SCENARIOS`.
pub fn help() -> String {
    let mut text =
        String::from("Scenarios, by the first word of the message text (or --scenario WORD):\n");
    for (word, _, what) in SCENARIOS {
        let _ = writeln!(text, "  {word:<14} {what}");
    }
    text.push_str(
        "\nEvery task that completes (but `cancel`) makes a booking, readable at\n\
         GET /_scripted/bookings/TASK_ID (200 or 404); GET /_scripted/stats shows what it saw.\n\n\
         Examples:\n  \
         a2a-recover scripted-agent --port 8001\n  \
         a2a-recover scripted-agent --port 8002 --skill car --scenario reject\n  \
         a2a-recover scripted-agent --port 8003 --no-list-tasks --forget-after 30s",
    );
    text
}

impl Scenario {
    /// Reads a scenario word (`work:5`, `ask`, …; [`SCENARIOS`]); unknown words echo.
    pub(crate) fn parse(word: &str) -> Self {
        let lower = word.to_ascii_lowercase();
        if let Some(n) = lower.strip_prefix("work:") {
            return match n.parse::<u64>() {
                Ok(n) => Self::Work(u32::try_from(n).unwrap_or(MAX_STEPS).min(MAX_STEPS)),
                Err(_) => Self::Echo,
            };
        }
        SCENARIOS
            .iter()
            .find(|(w, s, _)| {
                *s != Self::Echo && w.split([':', ' ']).next() == Some(lower.as_str())
            })
            .map_or(Self::Echo, |(_, s, _)| *s)
    }

    /// Chooses the scenario of a message: the override, else the first word of the first line
    /// that is neither blank nor starts with `[`.
    pub(crate) fn choose(over: Option<Self>, text: &str) -> Self {
        over.unwrap_or_else(|| {
            text.lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with('['))
                .and_then(|l| l.split_whitespace().next())
                .map_or(Self::Echo, Self::parse)
        })
    }
}

/// Runs the synchronous part of a new task's script; returns the number of ticks still to run
/// on the clock (see [`tick`]).
pub(crate) fn start(inner: &mut Inner, id: &str, scenario: Scenario, text: &str) -> u32 {
    match scenario {
        Scenario::Work(0) => {
            inner.set_status(id, TaskState::Working, None);
            inner.add_artifact(id, "result", "done;".to_owned(), false, true);
            inner.set_status(id, TaskState::Completed, None);
            0
        }
        Scenario::Work(n) => {
            inner.set_status(id, TaskState::Working, None);
            n
        }
        Scenario::Ask => {
            inner.set_status(id, TaskState::Working, None);
            inner.ask(id, TaskState::InputRequired, "two rooms or one?");
            0
        }
        Scenario::Auth => {
            inner.set_status(id, TaskState::Working, None);
            inner.ask(id, TaskState::AuthRequired, "authorization needed");
            0
        }
        Scenario::Fail => {
            inner.set_status(id, TaskState::Working, None);
            inner.set_status(id, TaskState::Failed, Some("failed: scripted failure"));
            0
        }
        Scenario::Reject => {
            inner.set_status(id, TaskState::Rejected, Some("rejected: no availability"));
            0
        }
        Scenario::Cancel => {
            inner.set_status(id, TaskState::Working, None);
            let text = match inner.cancel_booking(text) {
                Some(booking) => format!("canceled: {booking}"),
                None => "nothing to cancel".to_owned(),
            };
            inner.add_artifact(id, "cancellation", text, false, true);
            inner.set_status(id, TaskState::Completed, None);
            0
        }
        Scenario::Echo | Scenario::Direct => {
            inner.set_status(id, TaskState::Working, None);
            inner.add_artifact(id, "echo", text.to_owned(), false, true);
            inner.set_status(id, TaskState::Completed, None);
            0
        }
    }
}

/// Runs the script after a user message on an INPUT_REQUIRED or AUTH_REQUIRED task.
pub(crate) fn resume(inner: &mut Inner, id: &str, scenario: Scenario, text: &str) {
    inner.set_status(id, TaskState::Working, None);
    let (artifact, content) = match scenario {
        Scenario::Ask => ("booking", format!("booked: {text}")),
        _ => ("result", format!("authorized: {text}")),
    };
    inner.add_artifact(id, artifact, content, false, true);
    inner.set_status(id, TaskState::Completed, None);
}

/// Runs the `n` ticks of a `work:n` task on the clock; stops early when the task becomes
/// terminal (canceled, completed by control), is forgotten, or the agent shuts down.
pub(crate) async fn tick(shared: Arc<Shared>, id: String, n: u32) {
    let mut shutdown = shared.shutdown.clone();
    for i in 1..=n {
        tokio::select! {
            () = tokio::time::sleep(shared.cfg.tick) => {}
            _ = shutdown.wait_for(|stop| *stop) => return,
        }
        let mut inner = shared.lock();
        match inner.info(&id) {
            Some((state, _, _)) if !state.is_terminal() => {}
            _ => return,
        }
        inner.set_status(&id, TaskState::Working, Some(&format!("step {i}/{n}")));
        inner.add_artifact(&id, "result", format!("chunk {i};"), i > 1, i == n);
        if i == n {
            inner.set_status(&id, TaskState::Completed, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{SCENARIOS, Scenario, help};

    /// Every scenario of the table is listed in the help and is what its word parses to.
    #[test]
    fn the_help_lists_every_scenario_of_the_table() {
        let text = help();
        for (word, scenario, what) in SCENARIOS {
            assert!(text.contains(word) && text.contains(what), "{word}");
            if scenario != Scenario::Echo {
                let first = word.split([':', ' ']).next().unwrap();
                assert_eq!(Scenario::parse(first), scenario, "{word}");
            }
        }
    }

    #[test]
    fn scenario_comes_from_the_first_word_of_the_first_plain_line() {
        assert_eq!(Scenario::choose(None, "work:5 please"), Scenario::Work(5));
        assert_eq!(Scenario::choose(None, "work"), Scenario::Work(3));
        assert_eq!(Scenario::choose(None, "work:0"), Scenario::Work(0));
        assert_eq!(
            Scenario::choose(None, "[previous task t-1 failed]\nask about rooms"),
            Scenario::Ask
        );
        assert_eq!(Scenario::choose(None, "\n  \nAUTH me"), Scenario::Auth);
        assert_eq!(Scenario::choose(None, "fail"), Scenario::Fail);
        assert_eq!(Scenario::choose(None, "reject"), Scenario::Reject);
        assert_eq!(Scenario::choose(None, "direct hi"), Scenario::Direct);
        assert_eq!(Scenario::choose(None, "book a hotel"), Scenario::Echo);
        assert_eq!(Scenario::choose(None, "cancel t-1"), Scenario::Cancel);
        assert_eq!(Scenario::choose(None, "work:abc"), Scenario::Echo);
        assert_eq!(Scenario::choose(None, "anything"), Scenario::Echo);
        assert_eq!(Scenario::choose(None, ""), Scenario::Echo);
        assert_eq!(
            Scenario::choose(None, "work:99999999999"),
            Scenario::Work(10_000)
        );
        assert_eq!(
            Scenario::choose(Some(Scenario::Fail), "work:5"),
            Scenario::Fail
        );
    }
}
