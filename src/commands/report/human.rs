//! Lines for people: the sentences a pass's events become in human views (the records are in
//! `records.rs`, the words in `vocabulary.rs`).

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::a2a::{Unreached, WELL_KNOWN_CARD_PATH, fmt_duration, redact_url};
use crate::sanitize::inert;

/// How many steps a grouped line names before it says how many more there are.
const STEPS_NAMED: usize = 3;

/// An agent as human views name it: its base URL (its card URL less the well-known card path),
/// without secrets. JSON names it by card URL.
pub(crate) fn agent_name(card_url: &str) -> String {
    let base = card_url
        .strip_suffix(WELL_KNOWN_CARD_PATH)
        .map_or_else(|| card_url.to_owned(), |b| format!("{b}/"));
    redact_url(&base)
}

/// Why an agent could not be reached, in words.
pub(crate) fn unreached(why: Unreached) -> String {
    match why {
        Unreached::Refused => "connection refused (nothing listens there)".to_owned(),
        Unreached::NoSuchHost => "its host name does not resolve".to_owned(),
        Unreached::Tls => "the TLS handshake failed".to_owned(),
        Unreached::NoConnection => "no connection could be made".to_owned(),
        Unreached::TimedOut(after) => format!("timed out after {}", fmt_duration(after)),
        Unreached::Cut => "the connection was cut".to_owned(),
        Unreached::Gateway(status) => format!("its gateway answered HTTP {status}"),
    }
}

/// The steps whose agent could not be reached, gathered over a pass so that each agent is one
/// line naming the cause and how many steps wait on it (each step's error chain only at `-v`).
#[derive(Debug, Default)]
pub(crate) struct Unreachable {
    by_agent: RefCell<BTreeMap<(String, Unreached), Waiting>>,
}

#[derive(Debug, Default)]
struct Waiting {
    steps: Vec<String>,
    hint: Option<String>,
}

impl Unreachable {
    /// Notes that `step` waits on `agent` (a card URL), unreachable for `why`.
    pub(crate) fn add(&self, agent: &str, why: Unreached, step: String, hint: Option<&str>) {
        let mut by_agent = self.by_agent.borrow_mut();
        let waiting = by_agent.entry((agent.to_owned(), why)).or_default();
        if !waiting.steps.contains(&step) {
            waiting.steps.push(step);
        }
        if waiting.hint.is_none() {
            waiting.hint = hint.map(str::to_owned);
        }
    }

    /// The lines, one group per agent and cause, and forgets them; `hints_shown` keeps the
    /// hints said already, so each is said once.
    pub(crate) fn take_lines(&self, hints_shown: &mut dyn FnMut(&str) -> bool) -> Vec<String> {
        let mut lines = Vec::new();
        for ((agent, why), mut waiting) in std::mem::take(&mut *self.by_agent.borrow_mut()) {
            waiting.steps.sort_unstable();
            let n = waiting.steps.len();
            let mut named: Vec<String> = waiting
                .steps
                .iter()
                .take(STEPS_NAMED)
                .map(|s| inert(s))
                .collect();
            if n > STEPS_NAMED {
                named.push(format!("{} more", n - STEPS_NAMED));
            }
            let mut text = format!(
                "agent {} is unreachable: {}\n  {n} step{} wait{} on it: {} (-v shows each error)",
                agent_name(&agent),
                unreached(why),
                if n == 1 { "" } else { "s" },
                if n == 1 { "s" } else { "" },
                named.join(", "),
            );
            if let Some(hint) = waiting.hint
                && hints_shown(&hint)
            {
                text.push_str("\n  hint: ");
                text.push_str(&inert(&hint));
            }
            lines.push(text);
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_is_named_by_its_base_url() {
        assert_eq!(
            agent_name("http://127.0.0.1:8/.well-known/agent-card.json"),
            "http://127.0.0.1:8/"
        );
        assert_eq!(agent_name("http://h/card"), "http://h/card");
    }

    #[test]
    fn steps_on_one_dead_agent_are_one_group() {
        let u = Unreachable::default();
        let card = "http://127.0.0.1:9/.well-known/agent-card.json";
        for s in ["w/a", "w/b", "w/c", "w/d", "w/e"] {
            u.add(
                card,
                Unreached::Refused,
                s.to_owned(),
                Some("start the agent"),
            );
        }
        u.add(
            card,
            Unreached::TimedOut(std::time::Duration::from_secs(2)),
            "v/x".to_owned(),
            None,
        );
        let mut said = Vec::new();
        let lines = u.take_lines(&mut |h| {
            said.push(h.to_owned());
            true
        });
        insta::assert_snapshot!(lines.join("\n"), @r"
        agent http://127.0.0.1:9/ is unreachable: connection refused (nothing listens there)
          5 steps wait on it: w/a, w/b, w/c, 2 more (-v shows each error)
          hint: start the agent
        agent http://127.0.0.1:9/ is unreachable: timed out after 2s
          1 step waits on it: v/x (-v shows each error)
        ");
        assert!(u.take_lines(&mut |_| true).is_empty());
    }
}

/// What a journal event's detail says, as a sentence (the raw JSON is in `--format json`):
/// its error or reason first, then the question, the task, where it was seen, and the rest.
pub(crate) fn event_detail(detail: &serde_json::Value) -> String {
    use serde_json::Value;
    let text = |k: &str| detail.get(k).and_then(Value::as_str).map(inert);
    let mut said: Vec<String> = Vec::new();
    if let Some(e) = text("error") {
        said.push(e);
    }
    if let Some(r) = text("reason") {
        said.push(r);
    }
    if let Some(q) = text("question") {
        said.push(format!("asks \"{q}\""));
    }
    if let Some(a) = detail.get("answer") {
        match (a.get("text").and_then(Value::as_str), a.get("data")) {
            (Some(t), _) => said.push(format!("answered \"{}\"", inert(t))),
            (None, Some(d)) => said.push(format!("answered with data {}", inert(&d.to_string()))),
            _ => {}
        }
    }
    if let Some(r) = text("resolution").or_else(|| text("as")) {
        said.push(format!("decided as {r}"));
    }
    if let Some(effect) = text("effect") {
        said.push(format!("effect {effect}"));
    }
    if let Some(t) = text("taskId") {
        said.push(format!("task {t}"));
    }
    if let Some(source) = text("source") {
        let how = match source.as_str() {
            "send" => "in the send's answer".to_owned(),
            "get-task" => "read with GetTask".to_owned(),
            "list-tasks" => "found with ListTasks".to_owned(),
            "stream" => "from the stream".to_owned(),
            "cancel" => "in the cancel's answer".to_owned(),
            other => format!("seen by {other}"),
        };
        said.push(how);
    }
    if let Some(n) = detail
        .get("artifacts")
        .and_then(Value::as_array)
        .map(Vec::len)
        .filter(|n| *n > 0)
    {
        said.push(format!("{n} artifact{}", if n == 1 { "" } else { "s" }));
    }
    if let Some(name) = text("name") {
        said.push(format!("artifact {name}"));
    }
    if let Some(agent) = text("agent") {
        said.push(format!("agent {}", agent_name(&agent)));
    }
    if let Some(to) = text("to").or_else(|| text("interfaceUrl")) {
        said.push(format!("at {to}"));
    }
    if let Some(until) = text("until") {
        said.push(format!("looked for again after {until}"));
    }
    if let Some(m) = text("messageId") {
        said.push(format!("message {m}"));
    }
    if said.is_empty() {
        return match detail {
            Value::Null => String::new(),
            Value::Object(m) if m.is_empty() => String::new(),
            other => inert(&other.to_string()),
        };
    }
    said.join("; ")
}

#[cfg(test)]
mod event_tests {
    use serde_json::json;

    use super::event_detail;

    #[test]
    fn an_event_detail_reads_as_a_sentence() {
        let state = json!({"artifacts": [], "question": "two rooms or one?",
            "remoteState": "TASK_STATE_INPUT_REQUIRED", "source": "stream",
            "statusTimestamp": "2026-11-30T04:28:23.842183Z", "taskId": "38f8"});
        assert_eq!(
            event_detail(&state),
            "asks \"two rooms or one?\"; task 38f8; from the stream"
        );
        let failed = json!({"error": "GetTask at `http://h/` timed out after 2s"});
        assert_eq!(
            event_detail(&failed),
            "GetTask at `http://h/` timed out after 2s"
        );
        let intent = json!({"agent": "http://h/.well-known/agent-card.json", "messageId": "m-1"});
        assert_eq!(event_detail(&intent), "agent http://h/; message m-1");
        assert_eq!(event_detail(&json!({"odd": 1})), r#"{"odd":1}"#);
        assert_eq!(event_detail(&json!({})), "");
    }
}

/// What a human must do about `subject` (`trip/hotel (attempt 1)`): what is wrong, with the
/// agent's text line by line under the remote prefix, then each command that answers it, whole,
/// on an indented line of its own.
pub(crate) fn remedy_lines(subject: &str, r: &crate::recovery::ActionRemedy) -> String {
    let words = crate::commands::util::remedy::words(r);
    let mut text = match &words.told {
        Some((what, told, question)) => {
            let quoted =
                crate::sanitize::inert_lines(told, "  ", Some(crate::sanitize::LIST_LINES));
            if *question {
                format!("{subject}: {what}: \"{quoted}\"")
            } else {
                format!("{subject}: {what}: {quoted}")
            }
        }
        None => format!("{subject}: {}", words.what),
    };
    if let Some(command) = &words.command {
        text.push_str("\n  ");
        text.push_str(command);
    }
    for alt in &words.alternatives {
        text.push_str("\n  or ");
        text.push_str(alt);
    }
    text
}

#[cfg(test)]
mod remedy_tests {
    use crate::journal::{RemedyKind, StepName};
    use crate::recovery::remedy::Remedy;
    use crate::recovery::{ActionRemedy, Told};

    #[test]
    fn a_question_over_two_lines_keeps_its_lines_and_the_command_stands_alone() {
        let r = ActionRemedy::Row {
            remedy: Remedy {
                kind: RemedyKind::Answer,
                step: StepName::parse("w/s").unwrap(),
                compensating: false,
                text_refused: false,
            },
            told: Some(Told {
                text: "Agent requires input:\n- rooms: two rooms or one?".into(),
                question: true,
            }),
        };
        insta::assert_snapshot!(super::remedy_lines("w/s (attempt 1)", &r), @r#"
        w/s (attempt 1): answer the agent's question: "Agent requires input:
          │ - rooms: two rooms or one?"
          a2a-recover reply w/s "…"
        "#);
    }
}
