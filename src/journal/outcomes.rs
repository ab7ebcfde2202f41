//! Settled outcomes of an attempt: a direct reply, a refusal, an unprovable send, a lost task,
//! an operator's resend, a recorded failure, an effect's state and a cancel request; each one
//! change through [`Journal::change`](super::change).

use serde_json::{Value, json};

use super::change::Change;
use super::queries;
use super::{
    Applied, Attempt, AttemptId, EffectState, FailureKind, Journal, JournalError, NeedsHuman,
    Observation, Source, message_said,
};

impl Journal {
    pub(super) fn settle(
        &self,
        id: AttemptId,
        action: &'static str,
        obs: Observation,
        edit: impl FnOnce(&mut Attempt),
        detail: Value,
    ) -> Result<Applied, JournalError> {
        self.change(id, action, |held, _| {
            Self::settle_change(held, obs, edit, detail)
        })
    }

    /// What settling an attempt on an observation changes (see [`Journal::record_refusal`]).
    pub(super) fn settle_change(
        held: &Attempt,
        obs: Observation,
        edit: impl FnOnce(&mut Attempt),
        detail: Value,
    ) -> Result<Option<Change>, JournalError> {
        let Some(to) = Self::transition_of(held, obs)? else {
            return Ok(None);
        };
        let mut next = held.clone();
        next.state = to;
        next.error = None;
        edit(&mut next);
        Ok(Some(Change {
            next,
            artifacts: Vec::new(),
            kind: "state",
            detail,
            force_event: false,
        }))
    }

    /// What recording a failure that changes no state writes (see [`Journal::record_failure`]).
    pub(super) fn failure_change(held: &Attempt, kind: FailureKind, summary: &str) -> Change {
        let mut next = held.clone();
        next.error = Some(summary.to_owned());
        Change {
            next,
            artifacts: Vec::new(),
            kind: kind.as_str(),
            detail: json!({"error": summary}),
            force_event: true,
        }
    }

    /// Records that the send was answered by a direct Message (`REPLIED`; no task exists).
    pub fn record_direct_reply(
        &self,
        id: AttemptId,
        message_json: &str,
        context_id: Option<&str>,
    ) -> Result<Applied, JournalError> {
        self.change(id, "journal the reply", |held, _| {
            Self::direct_reply_change(held, message_json, context_id)
        })
    }

    /// What recording a direct reply changes (see [`Journal::record_direct_reply`]).
    pub(super) fn direct_reply_change(
        held: &Attempt,
        message_json: &str,
        context_id: Option<&str>,
    ) -> Result<Option<Change>, JournalError> {
        let text = serde_json::from_str::<Value>(message_json)
            .map(|m| message_said(&m))
            .unwrap_or_default();
        Self::settle_change(
            held,
            Observation::DirectReply,
            |next| {
                next.outcome_json = Some(message_json.to_owned());
                if let Some(ctx) = context_id.filter(|c| !c.is_empty())
                    && next.context_id.as_deref() != Some(ctx)
                {
                    next.context_id = Some(ctx.to_owned());
                    next.context_id_ours = false;
                }
            },
            json!({"source": Source::Send.as_str(), "reply": text}),
        )
    }

    /// Records a definitive refusal (`REFUSED`): nothing was created remotely.
    pub fn record_refusal(&self, id: AttemptId, summary: &str) -> Result<Applied, JournalError> {
        self.change(id, "journal the refusal", |held, _| {
            Self::refusal_change(held, summary)
        })
    }

    /// Returns when a failure of this kind was first journaled for an attempt, if ever (the
    /// card patience counts from the first card failure).
    pub fn first_failure(
        &self,
        id: AttemptId,
        kind: FailureKind,
    ) -> Result<Option<chrono::DateTime<chrono::Utc>>, JournalError> {
        self.read("read the attempt's failures", |c| {
            queries::first_event_at(c, id, kind.as_str())
        })
    }

    /// What recording a refusal changes (see [`Journal::record_refusal`]).
    pub(super) fn refusal_change(
        held: &Attempt,
        summary: &str,
    ) -> Result<Option<Change>, JournalError> {
        Self::settle_change(
            held,
            Observation::Refused,
            |next| next.error = Some(summary.to_owned()),
            json!({"error": summary}),
        )
    }

    /// Marks an attempt `UNCERTAIN`: the look could not prove whether the send created anything.
    pub fn mark_uncertain(&self, id: AttemptId, reason: &str) -> Result<Applied, JournalError> {
        self.settle(
            id,
            "journal the uncertainty",
            Observation::Unprovable,
            |next| next.error = Some(reason.to_owned()),
            json!({"reason": reason}),
        )
    }

    /// Marks a recorded task `LOST`: the agent answered TaskNotFound.
    pub fn mark_lost(&self, id: AttemptId, detail: &str) -> Result<Applied, JournalError> {
        self.settle(
            id,
            "journal the lost task",
            Observation::NotFound,
            |next| {
                next.error = Some(detail.to_owned());
                next.pending_question = None;
            },
            json!({"error": detail}),
        )
    }

    /// Puts an `UNCERTAIN` attempt back to `INTENT` on the operator's `resolve --as resend`.
    pub fn reopen_for_resend(&self, id: AttemptId, reason: &str) -> Result<Applied, JournalError> {
        self.settle(
            id,
            "journal the resend",
            Observation::Resend,
            |_| {},
            json!({"reason": reason}),
        )
    }

    /// Records a failure that changes no state (an unknown send outcome, a failed read): an
    /// event, and the attempt's `error`. Always writes.
    pub fn record_failure(
        &self,
        id: AttemptId,
        kind: FailureKind,
        summary: &str,
    ) -> Result<(), JournalError> {
        self.change(id, "journal the failure", |held, _| {
            Ok(Some(Self::failure_change(held, kind, summary)))
        })
        .map(|_| ())
    }

    /// Records that an `INTENT` attempt needs a human although every pass tries it again (its
    /// agent's card unreachable for longer than `--card-patience`, or the send answered with
    /// more than `--max-response-size`): a `needs-human`
    /// event, which `inspect --pending` reads while it is the attempt's latest, and the
    /// attempt's `error`. Always writes (as [`Journal::record_failure`], which it stands for).
    pub fn record_needs_human(&self, id: AttemptId, why: &NeedsHuman) -> Result<(), JournalError> {
        self.change(id, "journal the failure", |held, _| {
            Ok(Some(Self::needs_human_change(held, why)))
        })
        .map(|_| ())
    }

    /// Returns whether the attempt ever journaled a `needs-human` event of this cause (the
    /// agent answered its send over the size cap, say).
    pub fn needs_human_for(&self, id: AttemptId, cause: &str) -> Result<bool, JournalError> {
        self.read("read the attempt's events", |c| {
            queries::needs_human_for(c, id, cause)
        })
    }

    /// What recording that an attempt needs a human changes (see
    /// [`Journal::record_needs_human`]).
    pub(super) fn needs_human_change(held: &Attempt, why: &NeedsHuman) -> Change {
        let mut next = held.clone();
        next.error = Some(why.reason.clone());
        Change {
            next,
            artifacts: Vec::new(),
            kind: "needs-human",
            detail: why.detail(),
            force_event: true,
        }
    }

    /// Sets an attempt's effect state (verification, compensation); no-op if unchanged.
    pub fn set_effect(
        &self,
        id: AttemptId,
        effect: Option<EffectState>,
        detail: &Value,
    ) -> Result<Applied, JournalError> {
        self.change(id, "journal the effect", |held, _| {
            let mut next = held.clone();
            next.effect = effect;
            Ok(Some(Change {
                next,
                artifacts: Vec::new(),
                kind: "effect",
                detail: json!({"effect": effect.map(EffectState::as_str), "detail": detail}),
                force_event: false,
            }))
        })
    }

    /// Records that the effect stays `unknown` because two or more of the attempt's artifacts
    /// map to one variable or `{artifact:NAME}` that a verify or compensate recipe reads:
    /// nothing was run, a human decides. The attempt's `error` says so
    /// ([`ARTIFACT_COLLISION`](super::ARTIFACT_COLLISION) first, then `why`, naming the
    /// artifacts), and the `effect` event carries their ids (`collision`).
    pub fn record_collision(
        &self,
        id: AttemptId,
        why: &str,
        artifact_ids: &[String],
    ) -> Result<Applied, JournalError> {
        let error = format!("{}: {why}", super::ARTIFACT_COLLISION);
        self.change(id, "journal the effect", |held, _| {
            let mut next = held.clone();
            next.effect = Some(EffectState::Unknown);
            next.error = Some(error.clone());
            Ok(Some(Change {
                next,
                artifacts: Vec::new(),
                kind: "effect",
                detail: json!({"effect": EffectState::Unknown.as_str(),
                               "detail": {"found": "unknown", "detail": why,
                                          "collision": artifact_ids}}),
                force_event: false,
            }))
        })
    }

    /// Records that `compensate` asked the agent to cancel this attempt's task.
    pub fn mark_cancel_requested(&self, id: AttemptId) -> Result<Applied, JournalError> {
        let now = self.clock.now();
        self.change(id, "journal the cancel", |held, _| {
            if held.cancel_requested_at.is_some() {
                return Ok(None);
            }
            let mut next = held.clone();
            next.cancel_requested_at = Some(now);
            Ok(Some(Change {
                next,
                artifacts: Vec::new(),
                kind: "cancel-requested",
                detail: json!({}),
                force_event: false,
            }))
        })
    }
}
