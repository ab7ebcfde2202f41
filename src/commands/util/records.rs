//! The JSON records more than one command prints: an `attempt` as `inspect` shows it (with the
//! [`Chain`] linking attempts to their previous ones and the operator's decisions), and an
//! agent's health fields.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::a2a::{ProtocolBinding, message_said};
use crate::clock::rfc3339;
use crate::commands::util::remedy::RemedyText as _;
use crate::journal::{
    self, AgentHealth, AttemptId, AttemptResolution, AttemptRow, AttemptState, EffectState,
};
use crate::recovery::remedy::Remedy;

/// What links the attempts shown: each one's previous attempt number, and the decisions.
#[derive(Debug, Default)]
pub(crate) struct Chain {
    /// Attempt numbers by id (the previous attempts of the rows shown).
    pub(crate) numbers: HashMap<AttemptId, u32>,
    /// The operator's last decision on each attempt.
    pub(crate) resolutions: HashMap<AttemptId, AttemptResolution>,
    /// The answer of each attempt's latest reply (`lastAnswer`).
    pub(crate) answers: HashMap<AttemptId, Value>,
    /// Each attempt's push config (`push`).
    pub(crate) pushes: HashMap<AttemptId, journal::PushConfig>,
}

impl Chain {
    /// Links `rows`: their previous attempts' numbers, and the decisions on them.
    pub(crate) fn of(
        journal: &journal::Journal,
        rows: &[AttemptRow],
    ) -> Result<Self, journal::JournalError> {
        let mut numbers: HashMap<AttemptId, u32> = rows
            .iter()
            .map(|r| (r.attempt.id, r.attempt.number))
            .collect();
        for prev in rows.iter().filter_map(|r| r.attempt.previous_attempt) {
            if let std::collections::hash_map::Entry::Vacant(e) = numbers.entry(prev) {
                e.insert(journal.attempt(prev)?.number);
            }
        }
        // Only the rows shown: the decisions of a whole journal would read every attempt.
        let shown: Vec<AttemptId> = rows.iter().map(|r| r.attempt.id).collect();
        let resolutions = journal
            .resolutions_of(&shown)?
            .into_iter()
            .map(|r| (r.attempt, r))
            .collect();
        let answers = journal.last_answers(&shown)?;
        let pushes = journal.push_configs(&shown)?;
        Ok(Self {
            numbers,
            resolutions,
            answers,
            pushes,
        })
    }

    /// Whether the operator's decision on this attempt is known.
    pub(crate) fn decided(&self, row: &AttemptRow) -> bool {
        self.resolutions.contains_key(&row.attempt.id)
    }

    /// The number of the attempt this one follows, if shown.
    pub(crate) fn previous_attempt(&self, row: &AttemptRow) -> Option<u32> {
        row.attempt
            .previous_attempt
            .and_then(|p| self.numbers.get(&p).copied())
    }

    /// The `resolution` object of an `attempt` record: the decision on this attempt (or, for
    /// the latest attempt, the step's when no attempt carries one), else null.
    fn resolution_record(&self, row: &AttemptRow) -> Value {
        match self.resolutions.get(&row.attempt.id) {
            Some(r) => json!({
                "as": r.resolution.as_str(),
                "reason": r.reason,
                "resolvedAt": rfc3339(r.resolved_at),
                "resendPending": r.resend_pending,
            }),
            None => match row.resolution.filter(|_| row.is_latest) {
                Some(step) => json!({
                    "as": step.as_str(),
                    "reason": null,
                    "resolvedAt": null,
                    "resendPending": false,
                }),
                None => Value::Null,
            },
        }
    }
}

/// The `attempt` record, camelCase; remote text kept as data.
pub(crate) fn attempt_record(row: &AttemptRow, chain: &Chain) -> Value {
    let a = &row.attempt;
    // An attempt journaled before bindings were was sent over v1.0 JSON-RPC.
    let binding = a
        .binding
        .or_else(|| a.interface_url.as_ref().map(|_| ProtocolBinding::JsonRpcV1));
    let remedy = Remedy::of(row).map(
        |r| json!({"what": r.what(), "command": r.command(), "alternatives": r.alternatives()}),
    );
    json!({
        "type": "attempt",
        "workflow": row.step.workflow,
        "step": row.step.step,
        "attempt": a.number,
        "agent": a.agent_url,
        "state": a.state.as_str(),
        "messageId": a.message_id,
        "contextId": a.context_id,
        "taskId": a.task_id,
        "continuationTaskId": a.continuation_task_id,
        "pendingQuestion": a.question_text(),
        "pendingQuestionMessage": a.pending_question,
        "pendingQuestionData": a.question_data(),
        "previousTaskId": row.previous_task_id,
        "previousAttempt": chain.previous_attempt(row),
        "effect": a.effect.map(EffectState::as_str),
        "workflowState": row.workflow_state.as_str(),
        "createdAt": rfc3339(a.created_at),
        "updatedAt": rfc3339(a.updated_at),
        "stateChangedAt": rfc3339(row.state_changed_at),
        "interfaceUrl": a.interface_url,
        "tenant": a.tenant,
        "binding": binding.map(|b| b.wire().card_name()),
        "protocolVersion": binding.map(|b| b.version().as_str()),
        "tokenEnv": a.token_env,
        "tokenCmd": a.token_cmd,
        "credentialSource": a.credential_source.as_str(),
        "remoteState": a.remote_state,
        "statusTimestamp": a.status_timestamp,
        "outcome": Some(outcome(row)).filter(|o| !o.is_empty()),
        "error": a.error,
        "artifacts": row.artifact_count,
        "latest": row.is_latest,
        "resolution": chain.resolution_record(row),
        "lastAnswer": chain.answers.get(&a.id),
        "push": chain.pushes.get(&a.id).map(journal::PushConfig::record),
        "remedy": remedy,
    })
}

/// Returns the text of a row's question, or what it ended with.
pub(crate) fn outcome(row: &AttemptRow) -> String {
    let a = &row.attempt;
    if let Some(q) = a.question_text() {
        return q;
    }
    if a.state == AttemptState::Replied
        && let Some(m) = a
            .outcome_json
            .as_deref()
            .and_then(|s| serde_json::from_str::<Value>(s).ok())
    {
        // A compensation command's result (`compensate`) has a status, not a message.
        if let Some(status) = m.get("status").and_then(Value::as_str)
            && m.get("command").is_some()
        {
            return format!("command: {status}");
        }
        return message_said(&m);
    }
    if let Some(e) = &a.error {
        return e.clone();
    }
    let status_text = a
        .last_task_json
        .as_deref()
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .and_then(|t| t.pointer("/status/message").map(message_said))
        .filter(|t| !t.is_empty());
    if let Some(t) = status_text {
        return t;
    }
    match row.artifact_count {
        0 => String::new(),
        1 => "1 artifact".to_owned(),
        n => format!("{n} artifacts"),
    }
}

/// An agent's health fields of the `status` and `agent` records: `lastSuccessAt`,
/// `lastFailureAt`, `failingSince` (null while it answers).
pub(crate) fn health_fields(h: Option<&AgentHealth>) -> serde_json::Map<String, serde_json::Value> {
    let at = |t: Option<chrono::DateTime<chrono::Utc>>| json!(t.map(crate::clock::rfc3339));
    let mut m = serde_json::Map::new();
    m.insert(
        "lastSuccessAt".into(),
        at(h.and_then(|h| h.last_success_at)),
    );
    m.insert(
        "lastFailureAt".into(),
        at(h.and_then(|h| h.last_failure_at)),
    );
    m.insert("failingSince".into(), at(h.and_then(|h| h.failing_since)));
    m
}
