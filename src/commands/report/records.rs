//! The typed JSON records passes report through (`--format json`): built here, once, from the
//! recovery events, so every command writes the same `action` record for the same thing.
//! docs/json-output.md documents each field; keys come out sorted, as every record's do.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::clock::rfc3339;
use crate::commands::util::{hints, remedy};
use crate::journal::{AttemptState, EffectState, Event, NeedsHuman};
use crate::recovery::detail::{Detail, ForGood, Met, ReplyDoubt, Side, Then, Why};
use crate::recovery::lookup::{LookMode, Unprovable};
use crate::recovery::moved::Gone;
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
            detail: Cow::Owned(detail(&a.detail)),
            ..Self::new(
                &a.workflow,
                &a.step,
                a.attempt,
                a.action,
                &a.outcome,
                &Value::Null,
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

/// The `detail` object of an action's record: each key from one field of its [`Detail`], left
/// out when the field is; keys come out sorted (the object is a JSON map).
#[expect(
    clippy::option_option,
    reason = "a key that is there as `null` differs from a key that is not there"
)]
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct DetailRecord<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<Option<&'a str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    context_id: Option<Option<&'a str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    continuation_task_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    effect: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    found: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    holder: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    interface_moved: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    journaled: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    needs_human: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    not_before: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    previous_task_id: Option<Option<&'a str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    question: Option<Option<&'a str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<Option<Cow<'a, str>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reply: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resend_approved: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resent: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seen: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    settled_elsewhere: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    task_id: Option<Option<&'a str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    then: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    to: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trust_dedup: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    until: Option<String>,
}

/// The `detail` object of an action's record, with the words of the hint of the wire error it
/// met and of why it held back.
pub(crate) fn detail(d: &Detail) -> Value {
    let flag = |set: bool| set.then_some(true);
    let side = |s: &Side| {
        serde_json::json!({"interfaceUrl": s.url, "binding": s.binding.wire().card_name(),
                           "protocolVersion": s.binding.version().as_str()})
    };
    let record = DetailRecord {
        agent: nullable(&d.agent),
        context_id: nullable(&d.context_id),
        continuation_task_id: d.continuation_task_id.as_deref(),
        detail: d.effect_detail.as_deref(),
        effect: d.effect.map(EffectState::as_str),
        error: d.error.as_ref().map(error_line),
        found: flag(d.found),
        from: d.moved.as_ref().map(|m| side(&m.from)),
        hint: d.hint.as_ref().map(|h| h.as_ref().map(hints::wire)),
        holder: d
            .holder
            .as_ref()
            .map(|l| serde_json::json!({"pid": l.pid, "host": l.host, "owner": l.owner})),
        interface_moved: flag(d.interface_moved),
        journaled: d.journaled.map(AttemptState::as_str),
        message_id: d.message_id.as_deref(),
        needs_human: d.needs_human.as_ref().map(NeedsHuman::detail),
        not_before: d.not_before.map(rfc3339),
        previous_task_id: nullable(&d.previous_task_id),
        question: nullable(&d.question),
        reason: match (&d.why, &d.reason) {
            (None, None) => None,
            _ => Some(reason(d)),
        },
        reply: d.replied_directly.then_some("direct"),
        resend_approved: flag(d.resend_approved),
        resent: flag(d.resent),
        seen: d.seen.map(AttemptState::as_str),
        settled_elsewhere: flag(d.settled_elsewhere),
        state: d.state.map(AttemptState::as_str),
        task_id: nullable(&d.task_id),
        then: d.then.as_ref().map(|t| match t {
            Then::ResendIfAbsent => Value::String("resend only if proven absent".to_owned()),
            Then::Settle { action, outcome } => {
                serde_json::json!({"action": action, "outcome": outcome})
            }
        }),
        to: d.moved.as_ref().map(|m| side(&m.to)),
        trust_dedup: d.trust_dedup,
        until: d.until.map(rfc3339),
    };
    serde_json::to_value(record).unwrap_or(Value::Null)
}

/// A key that may be there as `null`.
#[expect(
    clippy::option_option,
    clippy::ref_option,
    reason = "the field it reads is an `Option<Option<_>>` of `Detail`"
)]
fn nullable(o: &Option<Option<String>>) -> Option<Option<&str>> {
    o.as_ref().map(Option::as_deref)
}

/// Why, as an action's record says it (`reason`): the reason given, or why it held back.
pub(crate) fn reason(d: &Detail) -> Option<Cow<'_, str>> {
    match (&d.why, &d.reason) {
        (Some(why), _) => Some(Cow::Owned(why_reason(why))),
        (None, r) => r.as_ref()?.as_deref().map(Cow::Borrowed),
    }
}

/// The error an action met, on one line, as its record says it (`error`) and its human line.
pub(crate) fn error_line(met: &Met) -> Cow<'_, str> {
    match met {
        Met::Wire { summary, .. } => Cow::Borrowed(summary),
        Met::NoTaskToLookIn => Cow::Borrowed("no task to look in"),
        Met::InterfaceGone(gone) => Cow::Owned(gone_words(gone)),
        Met::AnotherTask(seen) => {
            Cow::Owned(format!("GetTask answered with another task `{seen}`"))
        }
    }
}

/// Why, as an action's record says it (`reason`).
fn why_reason(why: &Why) -> String {
    match why {
        Why::NoSends(workflow) => format!("the workflow is {workflow}: no sends"),
        Why::MayBeInFlight => "nothing found yet, but the last send may still be in flight; \
                                looked for again after its horizon"
            .to_owned(),
        Why::Unsearchable {
            agent,
            binding,
            trusted,
        } => format!(
            "{agent} speaks A2A {} over {}, which has no ListTasks: if a2a-recover dies between \
             sending and journaling, the task cannot be searched for; {}",
            binding.version().as_str(),
            binding.wire().card_name(),
            if *trusted {
                "the agent is trusted to de-duplicate by messageId, so the same messageId is \
                 resent"
            } else {
                "the attempt then goes UNCERTAIN and a human decides (`agents add \
                 --trust-dedup` if the agent de-duplicates by messageId)"
            }
        ),
        Why::ReplyDoubt(doubt) => doubt_words(*doubt),
        Why::ForGood(why) => for_good_words(why),
        Why::Unprovable(why) => unprovable_words(why),
    }
}

/// Why an attempt's interface is gone, in the words its record says (the journal's line for
/// the attempt, [`Gone::line`], says the same after `interface-gone: `).
pub(crate) fn gone_words(gone: &Gone) -> String {
    format!(
        "the interface this attempt was sent to (`{}`, {} {}) has left the agent's card and {}",
        gone.url,
        gone.binding.wire().card_name(),
        gone.binding.version().as_str(),
        gone.summary
    )
}

/// Why no look tells whether a send created a task, in the words its record (and the line
/// for people) says (the journal's line for the attempt, [`Unprovable::line`], says the same).
pub(crate) fn unprovable_words(why: &Unprovable) -> String {
    match why {
        Unprovable::Unreadable(LookMode::ByContext, n) => {
            format!("{n} task(s) in our context could not be read")
        }
        Unprovable::Unreadable(LookMode::ByTime, n) => {
            format!("{n} candidate task(s) could not be read")
        }
        Unprovable::Undecided(LookMode::ByContext, n) => format!(
            "{n} task(s) in our context have an empty or truncated history even read whole, so \
             one may be ours"
        ),
        Unprovable::Undecided(LookMode::ByTime, n) => format!(
            "{n} candidate task(s) have a truncated history, so our message may be among them"
        ),
        Unprovable::TooManyPages(n) => {
            format!("the agent's ListTasks did not end within {n} pages")
        }
        Unprovable::TooManyBytes(n) => {
            format!("the agent's ListTasks did not end within {n} bytes (--max-look-size)")
        }
        Unprovable::PagingRepeats => "the agent's ListTasks paging repeats itself".to_owned(),
        Unprovable::CannotList(summary) => format!("the agent cannot list its tasks: {summary}"),
        Unprovable::LostAgain(id) => {
            format!("task {id} holds our message but could not be read again")
        }
        Unprovable::NotKept => "the task found could not be kept".to_owned(),
        Unprovable::Unlistable(binding) => format!(
            "the agent speaks A2A {} over {}, which has no ListTasks: whether the send created a \
             task cannot be looked up, so nothing is resent",
            binding.version().as_str(),
            binding.wire().card_name()
        ),
        Unprovable::AnsweredTooLarge => {
            "the agent answered the send with more than --max-response-size, and a look finds \
             no task for it: it may have answered with a message, so nothing is resent"
                .to_owned()
        }
    }
}

/// Why a step failed for good, in the words its record says (the journal's line for the
/// attempt, [`ForGood::line`], says the same).
fn for_good_words(why: &ForGood) -> String {
    match why {
        ForGood::NoSends { state, workflow } => {
            format!("{state} by the agent while the workflow is {workflow}; no re-delegation")
        }
        ForGood::CanceledByAgent => {
            "the agent canceled the task (not a2a-recover); not re-delegated".to_owned()
        }
        ForGood::OneAgent(state) => format!(
            "{state} by the agent, and the step is bound to one agent (--agent); not re-delegated"
        ),
        ForGood::Command(state) => format!("{state}; a command step"),
        ForGood::BudgetSpent(state, max) => {
            format!("{state} by the agent, and the attempt budget ({max}) is spent")
        }
        ForGood::NoOtherAgent(state, skill) => format!(
            "{state} by the agent, and no other registered agent advertises skill `{skill}`"
        ),
    }
}

/// Why no look settles whether a reply reached its task, in the words its record says (the
/// journal's line for the reply, [`ReplyDoubt::line`], says the same).
fn doubt_words(doubt: ReplyDoubt) -> String {
    match doubt {
        ReplyDoubt::Truncated => {
            "the task's history is truncated, so the reply may be among the missing messages"
                .to_owned()
        }
        ReplyDoubt::MovedOn(state) => format!("the task moved on to {state} without our reply"),
        ReplyDoubt::Unreadable(n) => {
            format!("{n} task(s) of the context could not be read; the reply may be in one")
        }
        ReplyDoubt::TooManyPages(n) => {
            format!("the context holds more than {n} pages of tasks; the reply may be among them")
        }
        ReplyDoubt::HiddenContinuation => {
            "the agent answers replies with new tasks and cannot be searched by context (no \
             ListTasks), so the reply may be in a task we cannot see"
                .to_owned()
        }
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
            detail: Detail::task("t-1"),
            left: crate::recovery::Left::Human,
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

    #[test]
    fn a_typed_detail_is_the_json_it_always_was() {
        let failed = Detail {
            hint: Some(None),
            ..Detail::error(Met::Wire {
                kind: None,
                summary: "GetTask timed out".into(),
            })
            .with_task("t-1")
        };
        assert_eq!(
            detail(&failed).to_string(),
            r#"{"error":"GetTask timed out","hint":null,"taskId":"t-1"}"#
        );
        let running = Detail {
            question: Some(None),
            task_id: Some(None),
            ..Detail::default()
        };
        assert_eq!(
            detail(&running).to_string(),
            r#"{"question":null,"taskId":null}"#
        );
        let held = Detail {
            why: Some(Why::NoSends(crate::journal::WorkflowState::Compensating)),
            then: Some(Then::ResendIfAbsent),
            ..Detail::message("m-1")
        };
        assert_eq!(
            detail(&held).to_string(),
            r#"{"messageId":"m-1","reason":"the workflow is COMPENSATING: no sends","then":"resend only if proven absent"}"#
        );
        assert_eq!(detail(&Detail::default()).to_string(), "{}");
        let unsearchable = Detail {
            trust_dedup: Some(false),
            why: Some(Why::Unsearchable {
                agent: "http://h/card".into(),
                binding: crate::model::ProtocolBinding::default(),
                trusted: false,
            }),
            ..Detail::default()
        };
        assert_eq!(
            detail(&unsearchable).to_string(),
            r#"{"reason":"http://h/card speaks A2A 1.0 over JSONRPC, which has no ListTasks: if a2a-recover dies between sending and journaling, the task cannot be searched for; the attempt then goes UNCERTAIN and a human decides (`agents add --trust-dedup` if the agent de-duplicates by messageId)","trustDedup":false}"#
        );
    }

    /// Every reason a reply stays uncertain is written as the reason it always was, in the
    /// words the journal keeps for the reply (`inspect` reads those).
    #[test]
    fn a_reply_doubt_is_the_reason_it_always_was() {
        let cases = [
            (
                ReplyDoubt::Truncated,
                r#"{"messageId":"m-1","reason":"the task's history is truncated, so the reply may be among the missing messages"}"#,
            ),
            (
                ReplyDoubt::MovedOn(crate::journal::AttemptState::Completed),
                r#"{"messageId":"m-1","reason":"the task moved on to COMPLETED without our reply"}"#,
            ),
            (
                ReplyDoubt::Unreadable(2),
                r#"{"messageId":"m-1","reason":"2 task(s) of the context could not be read; the reply may be in one"}"#,
            ),
            (
                ReplyDoubt::TooManyPages(100),
                r#"{"messageId":"m-1","reason":"the context holds more than 100 pages of tasks; the reply may be among them"}"#,
            ),
            (
                ReplyDoubt::HiddenContinuation,
                r#"{"messageId":"m-1","reason":"the agent answers replies with new tasks and cannot be searched by context (no ListTasks), so the reply may be in a task we cannot see"}"#,
            ),
        ];
        for (doubt, json) in cases {
            assert_eq!(
                detail(&Detail::doubt(doubt).with_message("m-1")).to_string(),
                json
            );
            assert_eq!(doubt_words(doubt), doubt.line(), "{doubt:?}");
        }
    }

    /// Every reason a step failed for good is written as the reason it always was, in the
    /// words the journal keeps for the attempt (`inspect` reads those).
    #[test]
    fn a_failure_for_good_is_the_reason_it_always_was() {
        use crate::journal::{AttemptState, WorkflowState};
        let cases = [
            (
                ForGood::NoSends {
                    state: AttemptState::Failed,
                    workflow: WorkflowState::Compensating,
                },
                r#"{"reason":"FAILED by the agent while the workflow is COMPENSATING; no re-delegation"}"#,
            ),
            (
                ForGood::CanceledByAgent,
                r#"{"reason":"the agent canceled the task (not a2a-recover); not re-delegated"}"#,
            ),
            (
                ForGood::OneAgent(AttemptState::Rejected),
                r#"{"reason":"REJECTED by the agent, and the step is bound to one agent (--agent); not re-delegated"}"#,
            ),
            (
                ForGood::Command(AttemptState::Failed),
                r#"{"reason":"FAILED; a command step"}"#,
            ),
            (
                ForGood::BudgetSpent(AttemptState::Failed, 3),
                r#"{"reason":"FAILED by the agent, and the attempt budget (3) is spent"}"#,
            ),
            (
                ForGood::NoOtherAgent(AttemptState::Failed, "book".into()),
                r#"{"reason":"FAILED by the agent, and no other registered agent advertises skill `book`"}"#,
            ),
        ];
        for (why, json) in cases {
            assert_eq!(detail(&Detail::for_good(why.clone())).to_string(), json);
            assert_eq!(for_good_words(&why), why.line(), "{why:?}");
        }
    }

    /// An interface gone is written as the error it always was, in the words the journal keeps
    /// for the attempt (after `interface-gone: `).
    #[test]
    fn an_interface_gone_is_the_error_it_always_was() {
        let gone = Gone {
            url: "http://h/rpc".into(),
            binding: crate::a2a::ProtocolBinding::HttpJsonV1,
            summary: "offers no interface we speak".into(),
        };
        assert_eq!(
            detail(&Detail::error(Met::InterfaceGone(gone.clone()))).to_string(),
            r#"{"error":"the interface this attempt was sent to (`http://h/rpc`, HTTP+JSON 1.0) has left the agent's card and offers no interface we speak"}"#
        );
        assert_eq!(gone_words(&gone), gone.line());
    }

    /// Every reason a look cannot tell is written as the reason it always was, in the words
    /// the journal keeps for the attempt (`inspect` reads those).
    #[test]
    fn an_unprovable_look_is_the_reason_it_always_was() {
        use crate::a2a::ProtocolBinding;
        let cases = [
            (
                Unprovable::Unreadable(LookMode::ByContext, 2),
                "2 task(s) in our context could not be read",
            ),
            (
                Unprovable::Unreadable(LookMode::ByTime, 1),
                "1 candidate task(s) could not be read",
            ),
            (
                Unprovable::Undecided(LookMode::ByContext, 3),
                "3 task(s) in our context have an empty or truncated history even read whole, so one may be ours",
            ),
            (
                Unprovable::Undecided(LookMode::ByTime, 4),
                "4 candidate task(s) have a truncated history, so our message may be among them",
            ),
            (
                Unprovable::TooManyPages(1000),
                "the agent's ListTasks did not end within 1000 pages",
            ),
            (
                Unprovable::TooManyBytes(4096),
                "the agent's ListTasks did not end within 4096 bytes (--max-look-size)",
            ),
            (
                Unprovable::PagingRepeats,
                "the agent's ListTasks paging repeats itself",
            ),
            (
                Unprovable::CannotList("HTTP 404".into()),
                "the agent cannot list its tasks: HTTP 404",
            ),
            (
                Unprovable::LostAgain("t-9".into()),
                "task t-9 holds our message but could not be read again",
            ),
            (Unprovable::NotKept, "the task found could not be kept"),
            (
                Unprovable::Unlistable(ProtocolBinding::JsonRpcV03),
                "the agent speaks A2A 0.3 over JSONRPC, which has no ListTasks: whether the send created a task cannot be looked up, so nothing is resent",
            ),
            (
                Unprovable::AnsweredTooLarge,
                "the agent answered the send with more than --max-response-size, and a look finds no task for it: it may have answered with a message, so nothing is resent",
            ),
        ];
        for (why, reason) in cases {
            assert_eq!(
                detail(&Detail::unprovable(why.clone())),
                serde_json::json!({ "reason": reason })
            );
            assert_eq!(unprovable_words(&why), why.line(), "{why:?}");
        }
    }

    /// Every error an action meets is written as the one line it always was: a wire error its
    /// summary (its named kind is for the command layer, never in the record), the pass's own
    /// in the words it used.
    #[test]
    fn the_errors_an_action_meets_are_the_lines_they_always_were() {
        let invalid = crate::a2a::A2aError::Rpc {
            url: "http://127.0.0.1:9/".into(),
            method: "SendMessage",
            error: crate::a2a::RpcError {
                code: -32602,
                message: "bad".into(),
                data: None,
            },
        };
        let wire = Detail::wire_error(&invalid);
        assert_eq!(
            wire.error,
            Some(Met::Wire {
                kind: Some(crate::a2a::ErrorKind::InvalidParams),
                summary: invalid.summary(),
            })
        );
        assert_eq!(
            detail(&wire).to_string(),
            r#"{"error":"agent at `http://127.0.0.1:9/` answered SendMessage with JSON-RPC error -32602: bad"}"#
        );
        let cases = [
            (Met::NoTaskToLookIn, r#"{"error":"no task to look in"}"#),
            (
                Met::AnotherTask("t-2".into()),
                r#"{"error":"GetTask answered with another task `t-2`"}"#,
            ),
        ];
        for (met, json) in cases {
            assert_eq!(detail(&Detail::error(met)).to_string(), json);
        }
    }
}
