//! A builder for test attempts, so tests name only the fields they care about.

use super::{Attempt, AttemptId, AttemptState, CredentialSource, EffectState, StepId};

impl Attempt {
    /// Attempt `number` (also its row id) of step 1, in `state`: messageId `m{number}`, no agent,
    /// no context, no task, created and changed at the Unix epoch. The `with_*` setters (or
    /// `Attempt { field, ..Attempt::for_test(…) }`) fill in the rest.
    pub(crate) fn for_test(number: u32, state: AttemptState) -> Self {
        Self {
            id: AttemptId(i64::from(number)),
            step_id: StepId(1),
            number,
            agent_url: None,
            interface_url: None,
            tenant: None,
            binding: None,
            token_env: None,
            token_cmd: None,
            credential_source: CredentialSource::None,
            message_id: format!("m{number}"),
            context_id: None,
            context_id_ours: true,
            task_id: None,
            continuation_task_id: None,
            state,
            remote_state: None,
            status_timestamp: None,
            pending_question: None,
            last_task_json: None,
            outcome_json: None,
            error: None,
            effect: None,
            cancel_requested_at: None,
            previous_attempt: None,
            lease: None,
            created_at: chrono::DateTime::UNIX_EPOCH,
            updated_at: chrono::DateTime::UNIX_EPOCH,
        }
    }

    /// Sent to the agent whose card is at `card_url`, through `interface_url`.
    pub(crate) fn with_agent(mut self, card_url: &str, interface_url: &str) -> Self {
        self.agent_url = Some(card_url.to_owned());
        self.interface_url = Some(interface_url.to_owned());
        self
    }

    /// With our messageId `message_id` and our contextId `context_id`.
    pub(crate) fn with_ids(mut self, message_id: &str, context_id: &str) -> Self {
        message_id.clone_into(&mut self.message_id);
        self.context_id = Some(context_id.to_owned());
        self
    }

    /// With the remote task `task_id`.
    pub(crate) fn with_task(mut self, task_id: &str) -> Self {
        self.task_id = Some(task_id.to_owned());
        self
    }

    /// With the effect state `effect`.
    pub(crate) fn with_effect(mut self, effect: Option<EffectState>) -> Self {
        self.effect = effect;
        self
    }

    /// Created and last changed at `at`.
    pub(crate) fn at(mut self, at: chrono::DateTime<chrono::Utc>) -> Self {
        self.created_at = at;
        self.updated_at = at;
        self
    }
}
