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
