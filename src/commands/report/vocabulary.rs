//! The words: for every attempt state, outcome, journal event kind and way a follow ends, its
//! JSON name (what records, the journal and the metrics say; never changed) and its one human
//! word (what every human view says). Where two JSON names mean one thing (the `look-failed`
//! outcome and the `lookup-failed` event kind), they share the human word.
//!
//! A name not in the table (an outcome made of parts, such as `would-record-COMPLETED`) is
//! said with its dashes as spaces.

use std::borrow::Cow;

/// What a name names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    /// An attempt's state (`state` in records), or a task's state as the agent sent it.
    State,
    /// How an action came out (`outcome` in `action` records).
    Outcome,
    /// A journal event's kind (`kind` in `event` records).
    Event,
    /// How a follow ended (`end` in `follow`'s summary).
    End,
}

/// One name and its human word.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Word {
    /// What it names.
    pub(crate) kind: Kind,
    /// Its JSON name.
    pub(crate) json: &'static str,
    /// What people read.
    pub(crate) human: &'static str,
}

const fn w(kind: Kind, json: &'static str, human: &'static str) -> Word {
    Word { kind, json, human }
}

use Kind::{End, Event, Outcome, State};

/// Every name and its word. A test checks that each name has one word, that names meaning
/// one thing share it, and that each JSON name is documented.
pub(crate) const WORDS: &[Word] = &[
    // Attempt states: people read the JSON name itself.
    w(State, "INTENT", "INTENT"),
    w(State, "SENT", "SENT"),
    w(State, "SUBMITTED", "SUBMITTED"),
    w(State, "WORKING", "WORKING"),
    w(State, "INPUT_REQUIRED", "INPUT_REQUIRED"),
    w(State, "AUTH_REQUIRED", "AUTH_REQUIRED"),
    w(State, "COMPLETED", "COMPLETED"),
    w(State, "FAILED", "FAILED"),
    w(State, "CANCELED", "CANCELED"),
    w(State, "REJECTED", "REJECTED"),
    w(State, "REPLIED", "REPLIED"),
    w(State, "LOST", "LOST"),
    w(State, "UNCERTAIN", "UNCERTAIN"),
    w(State, "REFUSED", "REFUSED"),
    w(State, "UNKNOWN", "UNKNOWN"),
    // A task's state as the agent sent it (v1.0 names): the same words as ours.
    w(State, "TASK_STATE_SUBMITTED", "SUBMITTED"),
    w(State, "TASK_STATE_WORKING", "WORKING"),
    w(State, "TASK_STATE_INPUT_REQUIRED", "INPUT_REQUIRED"),
    w(State, "TASK_STATE_AUTH_REQUIRED", "AUTH_REQUIRED"),
    w(State, "TASK_STATE_COMPLETED", "COMPLETED"),
    w(State, "TASK_STATE_FAILED", "FAILED"),
    w(State, "TASK_STATE_CANCELED", "CANCELED"),
    w(State, "TASK_STATE_REJECTED", "REJECTED"),
    w(State, "TASK_STATE_UNSPECIFIED", "UNKNOWN"),
    // Outcomes of actions.
    w(Outcome, "look-failed", "look failed"),
    w(Outcome, "read-failed", "read failed"),
    w(Outcome, "send-failed", "send failed"),
    w(Outcome, "card-failed", "card failed"),
    w(Outcome, "reply-failed", "reply failed"),
    w(Outcome, "failed-for-good", "failed for good"),
    w(Outcome, "in-flight", "in flight"),
    w(Outcome, "interface-gone", "interface gone"),
    w(Outcome, "artifact-too-large", "artifact too large"),
    w(Outcome, "task-too-large", "task too large"),
    w(Outcome, "credential-missing", "credential missing"),
    w(Outcome, "context-refused", "context refused"),
    w(Outcome, "resend-approved", "resend approved"),
    w(Outcome, "never-sent", "never sent"),
    w(Outcome, "nothing-to-undo", "nothing to undo"),
    w(Outcome, "compensation-failed", "compensation failed"),
    w(Outcome, "not-sent", "not sent"),
    w(Outcome, "skipped", "skipped"),
    w(Outcome, "busy", "busy"),
    w(Outcome, "held", "held elsewhere"),
    w(Outcome, "deadline", "deadline"),
    w(Outcome, "unsearchable", "unsearchable"),
    w(Outcome, "unprovable", "unprovable"),
    w(Outcome, "absent", "absent"),
    w(Outcome, "found", "found"),
    // Journal event kinds.
    w(Event, "intent", "intent"),
    w(Event, "endpoint", "endpoint"),
    w(Event, "state", "state"),
    w(Event, "observed", "observed"),
    w(Event, "artifact", "artifact"),
    w(Event, "effect", "effect"),
    w(Event, "send-failed", "send failed"),
    w(Event, "read-failed", "read failed"),
    w(Event, "lookup-failed", "look failed"),
    w(Event, "card-failed", "card failed"),
    w(Event, "cancel-requested", "cancel requested"),
    w(Event, "workflow-state", "workflow state"),
    w(Event, "resolved", "resolved"),
    w(Event, "unresolved", "unresolved"),
    w(Event, "needs-human", "needs a human"),
    w(Event, "resend-approval-used", "resend approved"),
    w(Event, "interface-moved", "interface moved"),
    w(Event, "in-flight", "in flight"),
    w(Event, "duplicate-task", "duplicate task"),
    w(Event, "dedup-trusted", "dedup trusted"),
    w(Event, "failed-for-good", "failed for good"),
    w(Event, "reply-intent", "reply intent"),
    // How a follow ended.
    w(End, "terminal", "terminal"),
    w(End, "replied", "replied"),
    w(End, "interrupted", "interrupted"),
    w(End, "lost", "lost"),
    w(End, "refused", "refused"),
    w(End, "uncertain", "uncertain"),
    w(End, "intent", "intent"),
    w(End, "deadline", "deadline"),
    w(End, "reconnects-spent", "reconnects spent"),
    w(End, "skipped", "skipped"),
    w(End, "held-elsewhere", "held elsewhere"),
    w(End, "too-large", "too large"),
    w(End, "interface-gone", "interface gone"),
    w(End, "failed", "failed"),
];

/// A name of a kind.
#[cfg(test)]
type Name = (Kind, &'static str);

/// Names of different kinds that mean one thing, so share one human word.
#[cfg(test)]
const SAME_THING: &[(Name, Name)] = &[
    ((Outcome, "look-failed"), (Event, "lookup-failed")),
    ((Outcome, "read-failed"), (Event, "read-failed")),
    ((Outcome, "send-failed"), (Event, "send-failed")),
    ((Outcome, "card-failed"), (Event, "card-failed")),
    ((Outcome, "failed-for-good"), (Event, "failed-for-good")),
    ((Outcome, "in-flight"), (Event, "in-flight")),
    ((Outcome, "interface-gone"), (End, "interface-gone")),
    (
        (Outcome, "resend-approved"),
        (Event, "resend-approval-used"),
    ),
    ((Outcome, "held"), (End, "held-elsewhere")),
    ((Outcome, "deadline"), (End, "deadline")),
    ((State, "COMPLETED"), (State, "TASK_STATE_COMPLETED")),
];

/// The human word of a JSON name of `kind`.
pub(crate) fn human(kind: Kind, json: &str) -> Cow<'_, str> {
    if let Some(w) = WORDS.iter().find(|w| w.kind == kind && w.json == json) {
        return Cow::Borrowed(w.human);
    }
    // An outcome is often an attempt's state: said as the state.
    if kind == Outcome
        && let Some(w) = WORDS.iter().find(|w| w.kind == State && w.json == json)
    {
        return Cow::Borrowed(w.human);
    }
    if json.contains('-') {
        Cow::Owned(json.replace('-', " "))
    } else {
        Cow::Borrowed(json)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn every_name_has_one_human_word() {
        let mut seen: BTreeMap<(Kind, &str), &str> = BTreeMap::new();
        for w in WORDS {
            if let Some(other) = seen.insert((w.kind, w.json), w.human) {
                panic!(
                    "{:?} `{}` has two human words: `{other}` and `{}`",
                    w.kind, w.json, w.human
                );
            }
        }
    }

    #[test]
    fn names_of_one_thing_share_their_word() {
        for ((ka, a), (kb, b)) in SAME_THING {
            assert_eq!(
                human(*ka, a),
                human(*kb, b),
                "`{a}` and `{b}` name one thing: one word"
            );
        }
    }

    #[test]
    fn every_json_name_is_documented() {
        let docs = [
            include_str!("../../../docs/json-output.md"),
            include_str!("../../../docs/journal.md"),
        ]
        .concat();
        let missing: Vec<&str> = WORDS
            .iter()
            .filter(|w| !docs.contains(&format!("`{}`", w.json)))
            .map(|w| w.json)
            .collect();
        assert!(missing.is_empty(), "undocumented JSON names: {missing:?}");
    }

    #[test]
    fn a_composed_outcome_reads_with_spaces() {
        assert_eq!(
            human(Outcome, "would-record-COMPLETED"),
            "would record COMPLETED"
        );
        assert_eq!(human(Outcome, "INPUT_REQUIRED"), "INPUT_REQUIRED");
        assert_eq!(human(Event, "lookup-failed"), "look failed");
    }
}
