//! Bucket 1 (intents looked for under their claimed lease) and what every send did, as actions.

use super::actions::card_failure_left;
use super::rows::StepOf;
use super::{Pass, failed_outcome, failure_left, hinted, remedy_line, skipped_action, unreached};
use crate::a2a::{A2aError, Credential, Skip};
use crate::journal::{
    Attempt, AttemptRow, AttemptState, BatchClaim, INTERFACE_GONE, SendOutcome, SendRecord,
    StepRecord, StepSpec,
};
use crate::recovery::decide::{self};
use crate::recovery::detail::{Detail, Why};
use crate::recovery::event::{Action, ActionRemedy, Left};
use crate::recovery::moved::{self};
use crate::recovery::send::{Claimed, Outgoing, Sent, Stage};
use anyhow::Context as _;

impl Pass<'_> {
    /// Bucket 1 under the lease the item's page claimed: looks for the attempt (then resends it
    /// only if proven absent, as [`crate::recovery::send::Sender::deliver`] does); a found task is group-committed with
    /// the release of its lease, like a routine observation.
    pub(super) async fn look_claimed(
        &self,
        row: &AttemptRow,
        rec: &StepOf<'_>,
    ) -> anyhow::Result<Vec<Action>> {
        let claim = self
            .claimed
            .borrow_mut()
            .remove(&row.attempt.id)
            .context("the attempt's claim vanished")?;
        let sweeps = self.sweep_of.borrow_mut().remove(&row.attempt.id);
        let attempt = match claim {
            BatchClaim::HeldBy(a, lease) => {
                return Ok(vec![self.sent_action(
                    row,
                    "send",
                    &Sent::Busy(a, lease),
                )?]);
            }
            BatchClaim::Settled(a) => {
                return Ok(vec![self.sent_action(row, "send", &Sent::Settled(a))?]);
            }
            BatchClaim::Claimed(a, _) => a,
        };
        let id = attempt.id;
        let release = |pass: &Self| {
            pass.found.push(SendRecord {
                attempt: id,
                outcome: SendOutcome::Release,
                accepts_context_id: None,
            });
        };
        // A lease whose time is half spent (a long pass) is renewed before the look.
        let now = self.clock.now();
        let due = attempt.lease.as_ref().is_none_or(|l| {
            l.expires_at - now
                < chrono::Duration::from_std(self.cfg.lease_ttl / 2)
                    .unwrap_or(chrono::Duration::MAX)
        });
        if due
            && let crate::journal::Claim::HeldBy(lease) =
                self.journal.claim(attempt.id, self.cfg.lease_ttl)?
        {
            return Ok(vec![self.sent_action(
                row,
                "send",
                &Sent::Busy(attempt, lease),
            )?]);
        }
        // A lease that lapsed before this item's turn (slow items ahead of it) may have been
        // taken, used and released by another process meanwhile: re-read the attempt under the
        // lease just taken, and look on its own, after this claim, not from the page's listing.
        let lapsed = attempt.lease.as_ref().is_none_or(|l| l.expires_at <= now);
        let (attempt, sweeps) = if lapsed {
            tracing::debug!(
                step = %row.step,
                "the lease lapsed before this step's turn: re-reading it and looking on its own"
            );
            let current = self.journal.attempt(attempt.id)?;
            if current.state != AttemptState::Intent {
                release(self);
                return Ok(vec![self.sent_action(
                    row,
                    "send",
                    &Sent::Settled(current),
                )?]);
            }
            (current, None)
        } else {
            (attempt, sweeps)
        };
        let rec = rec.get()?;
        let out = match self.outgoing_for(&rec.step.spec, &attempt, rec).await? {
            Ok(out) => out,
            Err(e) => {
                release(self);
                return Ok(vec![Self::credential_action(row, &e)]);
            }
        };
        let step = row.step.to_string();
        let mut sender = self.sender();
        sender.sweeps = sweeps.as_deref();
        match Box::pin(sender.deliver_claimed(attempt.clone(), &out, &step)).await? {
            Claimed::Done(sent) => Ok(vec![self.sent_action(row, "send", &sent)?]),
            Claimed::Found(record, now) => {
                self.found.push(record);
                let row = AttemptRow {
                    attempt: now,
                    ..row.clone()
                };
                let mut a = Self::action(
                    &row,
                    row.attempt.number,
                    "look",
                    row.attempt.state.as_str(),
                    Detail::found(row.attempt.task_id.clone(), row.attempt.message_id.as_str()),
                    decide::left_of(&row),
                );
                a.remedy = remedy_line(&row);
                if let Some(outcome) = failed_outcome(&row) {
                    outcome.clone_into(&mut a.outcome);
                }
                Ok(vec![a])
            }
        }
    }

    /// [`Self::outgoing`], asking for pushes as the attempt's config, its previous attempt's,
    /// its agent's registration or `A2A_RECOVER_PUSH_URL` say (`push::base_for`).
    pub(super) async fn outgoing_for(
        &self,
        spec: &StepSpec,
        attempt: &Attempt,
        rec: &StepRecord,
    ) -> anyhow::Result<Result<Outgoing, A2aError>> {
        let push = crate::recovery::push::base_for(self.journal, attempt, None)?;
        Ok(Self::outgoing(spec, attempt, rec)
            .await
            .map(|out| Outgoing { push, ..out }))
    }

    /// The message for an attempt: the step's text and metadata, with the predecessor's task
    /// id and failure when there is one; the credential from the journaled variable name.
    pub(super) async fn outgoing(
        spec: &StepSpec,
        attempt: &Attempt,
        rec: &StepRecord,
    ) -> Result<Outgoing, A2aError> {
        let previous = attempt
            .previous_attempt
            .and_then(|p| rec.attempts.iter().find(|a| a.id == p));
        let credential =
            Credential::resolve(attempt.token_env.as_deref(), attempt.token_cmd.as_deref()).await?;
        Ok(Outgoing {
            text: decide::previous_attempt_text(&spec.text, previous),
            metadata: decide::previous_attempt_metadata(spec.metadata.as_ref(), previous),
            data: spec.data.clone(),
            credential,
            allow_cross_origin: spec.allow_cross_origin,
            reference_task_ids: Vec::new(),
            interface: spec.interface,
            push: None,
        })
    }

    /// A task whose interface left the card, and the card offers nothing we speak: journaled
    /// as needing a human (`inspect --pending` lists it; the task may still run at the agent).
    pub(super) fn nowhere(
        &self,
        row: &AttemptRow,
        task_id: &str,
        reason: &str,
    ) -> anyhow::Result<Action> {
        let journaled = moved::journal_gone(self.journal, row.attempt.id, reason)?;
        let mut action = Self::action(
            row,
            row.attempt.number,
            "read",
            INTERFACE_GONE,
            Detail::error_line(reason).with_task(task_id),
            Left::Human,
        );
        let mut gone = row.clone();
        gone.failed_for_good = Some(journaled);
        action.remedy = remedy_line(&gone);
        Ok(action)
    }

    pub(super) fn credential_action(row: &AttemptRow, e: &A2aError) -> Action {
        let mut a = Self::action(
            row,
            row.attempt.number,
            "credential",
            "credential-missing",
            Detail::wire_error(e),
            Left::Usage,
        );
        a.remedy = Some(ActionRemedy::Credential {
            summary: e.summary(),
            hint: e.hint(),
        });
        a
    }

    /// The action for what a send did.
    pub(super) fn sent_action(
        &self,
        row: &AttemptRow,
        what: &'static str,
        sent: &Sent,
    ) -> anyhow::Result<Action> {
        let attempt = sent.attempt();
        let row = AttemptRow {
            attempt: attempt.clone(),
            ..row.clone()
        };
        // A send's answer (`Task`, `Replied`) holds the attempt as journaled, and whether it
        // failed for good is as the page read it: a pass marks that only under the workflow's
        // lock (this pass holds it), and `follow` or `reply` only on an attempt with a task
        // (this one had none until the answer just journaled). Nothing is read again.
        Ok(match sent {
            Sent::Task(a) => Self::standing_of(&row, what, Detail::sent(a)),
            Sent::Found(a) => self.standing(
                &row,
                "look",
                Detail::found(a.task_id.clone(), a.message_id.as_str()),
            )?,
            Sent::Replied(_) => Self::standing_of(&row, what, Detail::replied_directly()),
            Sent::Refused(_, e) => self.standing(&row, what, Detail::wire_error(e))?,
            Sent::Uncertain(_, reason) => {
                self.standing(&row, "look", Detail::reason(Some(reason.clone())))?
            }
            Sent::InFlight(a, until) => Self::action(
                &row,
                a.number,
                "look",
                "in-flight",
                Detail {
                    until: Some(*until),
                    why: Some(Why::MayBeInFlight),
                    ..Detail::default().with_state(a.state)
                },
                Left::Work,
            ),
            Sent::Failed {
                error: error @ A2aError::Skipped { .. },
                ..
            } => skipped_action(&row, &Skip::of(error).unwrap_or_default()),
            Sent::Failed {
                stage,
                error,
                attempt,
            } => {
                let action = Self::action(
                    &row,
                    attempt.number,
                    stage.as_str(),
                    format!("{}-failed", stage.as_str()),
                    Detail::wire_error(error).with_state(attempt.state),
                    if *stage == Stage::Card {
                        card_failure_left(error)
                    } else {
                        failure_left(error)
                    },
                );
                unreached(hinted(action, error), &row, error)
            }
            Sent::NeedsHuman {
                attempt,
                stage,
                error,
                why,
            } => {
                let row = AttemptRow {
                    needs_human: Some(why.clone()),
                    ..row
                };
                let mut action = hinted(
                    Self::action(
                        &row,
                        attempt.number,
                        stage.as_str(),
                        format!("{}-failed", stage.as_str()),
                        Detail {
                            needs_human: Some(why.clone()),
                            ..Detail::wire_error(error).with_state(attempt.state)
                        },
                        Left::Human,
                    ),
                    error,
                );
                action.remedy = remedy_line(&row);
                action
            }
            Sent::Busy(a, lease) => Self::action(
                &row,
                a.number,
                what,
                "busy",
                Detail {
                    holder: Some(lease.clone()),
                    ..Detail::default()
                },
                Left::Work,
            ),
            Sent::Settled(_) => self.standing(&row, what, Detail::settled_elsewhere())?,
        })
    }
}
