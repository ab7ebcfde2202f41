//! The typed JSON records passes report through (`--format json`): built here, once, from the
//! recovery events, so every command writes the same `action` record for the same thing.
//! docs/json-output.md documents each field; keys come out sorted, as every record's do.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::clock::rfc3339;
use crate::commands::util::{hints, remedy};
use crate::journal::Event;
use crate::recovery::{Action, ActionRemedy};

/// An `action` record: one thing a pass (or an operator's decision) did, or in a dry run would
/// do, about a workflow, a step or an attempt.
#[derive(Debug, Serialize)]
pub(crate) struct ActionRecord<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    workflow: &'a str,
    step: Option<&'a str>,
    attempt: Option<u32>,
    action: &'a str,
    outcome: &'a str,
    detail: Cow<'a, Value>,
    /// `reconcile` only: what a human must do, and whether `--alert new` judged it new.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    judged: Option<Judged>,
    /// `reply` only: the reply's delivery state.
    #[serde(rename = "replyState", skip_serializing_if = "Option::is_none")]
    reply_state: Option<&'a str>,
}

/// What `reconcile` adds to its `action` records.
#[derive(Debug, Serialize)]
struct Judged {
    remedy: Option<RemedyRecord>,
    new: Option<bool>,
}

/// A `remedy` object: what is wrong and the commands that answer it.
#[derive(Debug, Serialize)]
pub(crate) struct RemedyRecord {
    what: String,
    command: Option<String>,
    alternatives: Vec<String>,
}

impl RemedyRecord {
    /// The record of a pass's remedy.
    pub(crate) fn of(r: &ActionRemedy) -> Self {
        let words = remedy::words(r);
        Self {
            what: words.what,
            command: words.command,
            alternatives: words.alternatives,
        }
    }
}

impl<'a> ActionRecord<'a> {
    /// The record of an action on an attempt of `workflow/step`.
    pub(crate) fn new(
        workflow: &'a str,
        step: &'a str,
        attempt: u32,
        action: &'a str,
        outcome: &'a str,
        detail: &'a Value,
    ) -> Self {
        Self {
            kind: "action",
            workflow,
            step: Some(step),
            attempt: Some(attempt),
            action,
            outcome,
            detail: Cow::Borrowed(detail),
            judged: None,
            reply_state: None,
        }
    }

    /// The record of what a reconcile pass did: with its remedy, and `new` when `--alert new`
    /// judged a needs-a-human item (`null` otherwise).
    pub(crate) fn judged(a: &'a Action, new: Option<bool>) -> Self {
        Self {
            judged: Some(Judged {
                remedy: a.remedy.as_ref().map(RemedyRecord::of),
                new,
            }),
            detail: action_detail(a),
            ..Self::new(
                &a.workflow,
                &a.step,
                a.attempt,
                a.action,
                &a.outcome,
                &a.detail,
            )
        }
    }

    /// The record of an action on `workflow`, or a step of it, or an attempt of that.
    pub(crate) fn about(
        workflow: &'a str,
        step: Option<&'a str>,
        attempt: Option<u32>,
        action: &'a str,
        outcome: &'a str,
        detail: &'a Value,
    ) -> Self {
        Self {
            step,
            attempt,
            ..Self::new(workflow, "", 0, action, outcome, detail)
        }
    }

    /// With the reply's delivery state (`reply`'s records).
    pub(crate) fn with_reply_state(mut self, state: &'a str) -> Self {
        self.reply_state = Some(state);
        self
    }

    /// The record as JSON.
    pub(crate) fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// An action's details, with the words of the hint of the wire error it met.
pub(crate) fn action_detail(a: &Action) -> Cow<'_, Value> {
    match &a.hint {
        Some(hint) => {
            let mut detail = a.detail.clone();
            detail["hint"] = Value::String(hints::wire(hint));
            Cow::Owned(detail)
        }
        None => Cow::Borrowed(&a.detail),
    }
}

/// An `event` record: one journal event (`inspect --events`, `follow`).
pub(crate) fn event(e: &Event) -> Value {
    serde_json::json!({
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
    use serde_json::json;

    use super::*;
    use crate::journal::{RemedyKind, StepName};
    use crate::recovery::Told;
    use crate::recovery::remedy::Remedy;

    #[test]
    fn an_action_record_is_the_json_it_always_was() {
        let detail = json!({"taskId": "t-1"});
        let plain = ActionRecord::new("w", "s", 2, "send", "SUBMITTED", &detail).to_value();
        assert_eq!(
            plain.to_string(),
            r#"{"action":"send","attempt":2,"detail":{"taskId":"t-1"},"outcome":"SUBMITTED","step":"s","type":"action","workflow":"w"}"#
        );
        let a = Action {
            workflow: "w".into(),
            step: "s".into(),
            attempt: 1,
            action: "read",
            outcome: "INPUT_REQUIRED".into(),
            detail: detail.clone(),
            code: 4,
            remedy: Some(ActionRemedy::Row {
                remedy: Remedy {
                    kind: RemedyKind::Answer,
                    step: StepName::parse("w/s").unwrap(),
                    compensating: false,
                    text_refused: false,
                },
                told: Some(Told {
                    text: "rooms?".into(),
                    question: true,
                }),
            }),
            unreached: None,
            hint: None,
        };
        assert_eq!(
            ActionRecord::judged(&a, None).to_value().to_string(),
            r#"{"action":"read","attempt":1,"detail":{"taskId":"t-1"},"new":null,"outcome":"INPUT_REQUIRED","remedy":{"alternatives":[],"command":"a2a-recover reply w/s \"…\"","what":"answer the agent's question: \"rooms?\""},"step":"s","type":"action","workflow":"w"}"#
        );
        let empty = json!({});
        assert_eq!(
            ActionRecord::about("w", None, None, "workflow", "COMPENSATED", &empty)
                .to_value()
                .to_string(),
            r#"{"action":"workflow","attempt":null,"detail":{},"outcome":"COMPENSATED","step":null,"type":"action","workflow":"w"}"#
        );
        let reply = ActionRecord::new("w", "s", 1, "reply", "DELIVERED", &detail)
            .with_reply_state("DELIVERED")
            .to_value();
        assert_eq!(reply["replyState"], "DELIVERED");
    }
}
