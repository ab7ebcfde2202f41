//! What operators decide: `resolve` decisions on attempts, the approval of a resend, and the
//! registry's times (schema v2, `migrations/0002_decisions.sql`).
//!
//! # Decisions
//!
//! [`Journal::decide`] applies one decision to a step's **latest** attempt in ONE transaction,
//! records it on that attempt (with its reason: the chain `inspect STEP` shows) and appends a
//! `resolved` event:
//!
//! | decision | the attempt | the step's `resolution` (what the passes read) |
//! |---|---|---|
//! | `done`, `abandoned` | decision recorded | set: out of every pass, of exit 4 and of `--pending` |
//! | `retry` | decision recorded; a new `INTENT` attempt (fresh ids, `previous` = it), budget permitting | cleared: the new attempt is an ordinary intent, sent by the next pass |
//! | `resend` | `UNCERTAIN` → `INTENT` (through [`transition`](crate::journal::model::transition)), decision recorded | `resend`: the approval of one send without a look |
//!
//! `retry` and `resend` send, so a workflow that is not `ACTIVE` refuses them. `retry` needs the
//! attempt settled (finished, or `UNCERTAIN`): a new attempt beside a running one could run the
//! work twice; or its interface gone (a `failed-for-good` event whose reason starts with
//! `interface-gone`: nothing can read it any more, a human decides). Refused decisions write
//! nothing.
//!
//! # The resend contract (for every path that sends an `INTENT` attempt)
//!
//! `resolve --as resend` is the operator accepting the risk of ONE send of the same `messageId`
//! without a look: the look could not prove anything, and looking again would only say
//! `UNCERTAIN` again. The approval is the step's `resolution = resend` on an `INTENT` latest
//! attempt ([`Journal::resend_approval`] reads it, e.g. for `--dry-run`). A path about to send
//! such an attempt calls [`Journal::take_resend_approval`] instead of looking (the send path
//! does, once, under the attempt's lease): `true` means "send it now, same messageId, no
//! look". It clears the
//! approval in a transaction committed BEFORE the send, so one approval gives at most one send:
//! if the process dies around that send, or its outcome is unknown, the attempt is an ordinary
//! `INTENT` again — looked for on the next pass, and `UNCERTAIN` again (a new decision) when the
//! look is still inconclusive. Clearing the resolution only after the send (as
//! `Journal::clear_resolution` does) would resend again after a crash between the two.

use chrono::{DateTime, Utc};
use serde_json::json;

use super::queries::{self, NewEvent};
use super::sql::{DbResult, Tx};
use super::{Journal, JournalError, NewAttempt};
use crate::journal::model::{
    Attempt, AttemptId, AttemptState, Observation, Resolution, Step, StepId, Target, WorkflowState,
    is_interface_gone,
};

/// An operator's decision on a step's latest attempt (`resolve --as`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Accept the step as finished.
    Done,
    /// Give the step up; it counts as failed for compensation.
    Abandoned,
    /// A new attempt with these fresh ids and this agent (its `previous` is set to the decided
    /// attempt; its credential is the step's at the agent it was given for, else the agent's
    /// registered one, else none).
    Retry(NewAttempt),
    /// Send the `UNCERTAIN` attempt again with its own `messageId`, accepting the risk.
    Resend,
}

impl Decision {
    /// Returns the resolution it records.
    pub const fn resolution(&self) -> Resolution {
        match self {
            Self::Done => Resolution::Done,
            Self::Abandoned => Resolution::Abandoned,
            Self::Retry(_) => Resolution::Retry,
            Self::Resend => Resolution::Resend,
        }
    }
}

/// What [`Journal::decide`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    /// The decided attempt, as it is now (`INTENT` again after a resend).
    pub attempt: Attempt,
    /// The new attempt of a retry.
    pub new_attempt: Option<Attempt>,
}

/// What [`Journal::undo_decision`] took back.
#[derive(Debug, Clone, PartialEq)]
pub struct Undone {
    /// The decision taken back.
    pub undid: Resolution,
    /// The attempt that is now the step's latest, as it is now.
    pub attempt: Attempt,
    /// The number of the retry's attempt that was deleted.
    pub removed: Option<u32>,
}

/// The operator's last decision on one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptResolution {
    /// The attempt.
    pub attempt: AttemptId,
    /// The decision.
    pub resolution: Resolution,
    /// The operator's reason.
    pub reason: String,
    /// When it was decided.
    pub resolved_at: DateTime<Utc>,
    /// Whether an approved resend is still to be sent (the attempt is `INTENT` with approval).
    pub resend_pending: bool,
}

impl Journal {
    /// Applies an operator's decision to attempt `id`, which must be its step's latest, in one
    /// transaction, with a `resolved` event carrying `reason` (see the module docs).
    ///
    /// Fails with [`JournalError::NotLatest`] when another attempt was added meanwhile,
    /// [`JournalError::Undecidable`] when the decision does not apply to the attempt's state,
    /// [`JournalError::WorkflowClosed`] for a `retry` or `resend` in a workflow that is not
    /// `ACTIVE`, and [`JournalError::BudgetSpent`] for a `retry` past `max_attempts`; nothing is
    /// written then.
    pub fn decide(
        &self,
        id: AttemptId,
        decision: &Decision,
        reason: &str,
    ) -> Result<Decided, JournalError> {
        let now = self.now_ms();
        let now_time = self.clock.now();
        self.write("journal the decision", |tx| {
            let e = self.err("journal the decision");
            let (held, step) = self.decidable(tx, id, decision)?;
            let name = step.spec.name.to_string();
            let resolution = decision.resolution();
            let undecidable = |why| JournalError::Undecidable {
                step: name.clone(),
                attempt: held.number,
                state: held.state,
                resolution,
                why,
            };
            let mut to = held.state;
            let mut retry = None;
            match decision {
                Decision::Done | Decision::Abandoned => {
                    queries::set_resolution(tx, step.id, Some(resolution), Some(reason), now)
                        .map_err(&e)?;
                }
                Decision::Retry(new) => {
                    if !retriable(tx, &held).map_err(&e)? {
                        return Err(undecidable(
                            "it is not settled, and a new attempt beside it could run the work \
                             twice",
                        ));
                    }
                    if held.number >= step.spec.max_attempts {
                        return Err(JournalError::BudgetSpent {
                            step: name,
                            max: step.spec.max_attempts,
                        });
                    }
                    let mut new = new.clone();
                    new.previous = Some(held.id);
                    retry = Some(new);
                }
                Decision::Resend => {
                    if held.state != AttemptState::Uncertain {
                        return Err(undecidable(
                            "only an UNCERTAIN attempt is resent with its own messageId",
                        ));
                    }
                    let Some(state) = Self::transition_of(&held, Observation::Resend)? else {
                        return Err(undecidable("it is already back to INTENT"));
                    };
                    let mut next = held.clone();
                    next.state = state;
                    next.error = None;
                    next.updated_at = now_time;
                    queries::update_attempt(tx, &next).map_err(&e)?;
                    // The approval of one send without a look (module docs).
                    queries::set_resolution(tx, step.id, Some(resolution), Some(reason), now)
                        .map_err(&e)?;
                    to = state;
                }
            }
            // A retry's new attempt is an ordinary intent: an earlier decision no longer holds.
            if retry.is_some() && step.resolution.is_some() {
                queries::set_resolution(tx, step.id, None, None, now).map_err(&e)?;
            }
            queries::set_attempt_resolution(tx, held.id, resolution, reason, now).map_err(&e)?;
            let detail = json!({
                "resolution": resolution.as_str(),
                "reason": reason,
                "newAttempt": retry.as_ref().map(|_| held.number + 1),
                "resendApproved": matches!(decision, Decision::Resend),
            });
            queries::insert_event(
                tx,
                &NewEvent {
                    at: now,
                    workflow: None,
                    step: Some(step.id),
                    attempt: Some(held.id),
                    kind: "resolved",
                    from: Some(held.state.as_str()),
                    to: Some(to.as_str()),
                    detail: Some(&detail),
                },
            )
            .map_err(&e)?;
            let new_attempt = match retry {
                Some(new) => Some(self.insert_attempt(
                    tx,
                    (step.id, &step.spec),
                    held.number + 1,
                    &new,
                    now,
                )?),
                None => None,
            };
            let attempt = queries::attempt_by_id(tx, held.id)
                .map_err(&e)?
                .ok_or(JournalError::UnknownAttempt(held.id.0))?;
            Ok(Decided {
                attempt,
                new_attempt,
            })
        })
    }

    /// Takes back the standing decision on the step whose latest attempt is `id`, while nothing
    /// was sent for it (`resolve --undo`), in one transaction with an `unresolved` event:
    ///
    /// - `done` / `abandoned`: the step's and the attempt's decision are cleared; the step is
    ///   back in every pass (nothing is ever sent for these).
    /// - `resend`, approval not used yet (the attempt still `INTENT`): back to `UNCERTAIN`.
    /// - `retry`, its new attempt still `INTENT` and never sent (no endpoint journaled, no lease):
    ///   that attempt is deleted, and the decided one is as before the decision.
    ///
    /// Fails with [`JournalError::NotUndoable`] otherwise (no decision, or its send happened),
    /// and [`JournalError::NotLatest`] when another attempt was added meanwhile; nothing is
    /// written then.
    pub fn undo_decision(&self, id: AttemptId, reason: &str) -> Result<Undone, JournalError> {
        let now = self.now_ms();
        let now_time = self.clock.now();
        self.write("take the decision back", |tx| {
            let e = self.err("take the decision back");
            let (held, step) = self.decidable(tx, id, &Decision::Done)?;
            let name = step.spec.name.to_string();
            let refuse = |why: String| JournalError::NotUndoable {
                step: name.clone(),
                why,
            };
            let (own, sent) = queries::attempt_decision(tx, held.id).map_err(&e)?;
            let mut restored = held.clone();
            let (undid, removed, on) = match (own, step.resolution) {
                (Some(r @ (Resolution::Done | Resolution::Abandoned)), Some(standing))
                    if standing == r =>
                {
                    queries::set_resolution(tx, step.id, None, None, now).map_err(&e)?;
                    queries::clear_attempt_resolution(tx, held.id, now).map_err(&e)?;
                    (r, None, held.id)
                }
                (Some(Resolution::Resend), standing) => {
                    if standing != Some(Resolution::Resend) || held.state != AttemptState::Intent {
                        return Err(refuse(format!(
                            "the approved resend of attempt {} was already sent (it is {})",
                            held.number, held.state
                        )));
                    }
                    restored.state = AttemptState::Uncertain;
                    restored.updated_at = now_time;
                    queries::update_attempt(tx, &restored).map_err(&e)?;
                    queries::set_resolution(tx, step.id, None, None, now).map_err(&e)?;
                    queries::clear_attempt_resolution(tx, held.id, now).map_err(&e)?;
                    (Resolution::Resend, None, held.id)
                }
                (None, _) if held.previous_attempt.is_some() => {
                    let prev = held.previous_attempt.unwrap_or(held.id);
                    let (prev_decision, _) = queries::attempt_decision(tx, prev).map_err(&e)?;
                    if prev_decision != Some(Resolution::Retry) {
                        return Err(refuse("it has no decision to take back".to_owned()));
                    }
                    if held.state != AttemptState::Intent
                        || held.task_id.is_some()
                        || sent
                        || held.lease.is_some()
                    {
                        return Err(refuse(format!(
                            "attempt {} of the retry was already sent (it is {}); a decision \
                             is taken back only while nothing was sent for it",
                            held.number, held.state
                        )));
                    }
                    queries::delete_unsent_attempt(tx, held.id).map_err(&e)?;
                    queries::clear_attempt_resolution(tx, prev, now).map_err(&e)?;
                    restored = queries::attempt_by_id(tx, prev)
                        .map_err(&e)?
                        .ok_or(JournalError::UnknownAttempt(prev.0))?;
                    (Resolution::Retry, Some(held.number), prev)
                }
                _ => return Err(refuse("it has no decision to take back".to_owned())),
            };
            let detail = json!({
                "undid": undid.as_str(),
                "reason": reason,
                "removedAttempt": removed,
            });
            queries::insert_event(
                tx,
                &NewEvent {
                    at: now,
                    workflow: None,
                    step: Some(step.id),
                    attempt: Some(on),
                    kind: "unresolved",
                    from: Some(held.state.as_str()),
                    to: Some(restored.state.as_str()),
                    detail: Some(&detail),
                },
            )
            .map_err(&e)?;
            Ok(Undone {
                undid,
                attempt: restored,
                removed,
            })
        })
    }

    /// Reads attempt `id` and its step for a decision, refusing unless it is the step's latest
    /// attempt and, for a decision that sends, its workflow is `ACTIVE`.
    fn decidable(
        &self,
        tx: &Tx,
        id: AttemptId,
        decision: &Decision,
    ) -> Result<(Attempt, Step), JournalError> {
        let e = self.err("journal the decision");
        let held = queries::attempt_by_id(tx, id)
            .map_err(&e)?
            .ok_or(JournalError::UnknownAttempt(id.0))?;
        let step = queries::step_by_id(tx, held.step_id)
            .map_err(&e)?
            .ok_or_else(|| JournalError::UnknownStep(format!("#{}", held.step_id.0)))?;
        let latest = queries::max_attempt_number(tx, step.id).map_err(&e)?;
        if latest != held.number {
            return Err(JournalError::NotLatest {
                step: step.spec.name.to_string(),
                attempt: held.number,
                latest,
            });
        }
        if matches!(decision, Decision::Retry(_) | Decision::Resend)
            && step.workflow_state != WorkflowState::Active
        {
            return Err(JournalError::WorkflowClosed {
                workflow: step.spec.name.workflow.clone(),
                state: step.workflow_state,
            });
        }
        Ok((held, step))
    }

    /// Consumes the operator's approval to send `INTENT` attempt `id` once without a look;
    /// returns whether there was one (then: send it now, same messageId, no look).
    ///
    /// Call it where a look would otherwise start. The approval (the step resolved `resend`, `id`
    /// its latest attempt, still `INTENT`) is cleared with a `resend-approval-used` event in a
    /// transaction committed before this returns, hence before the send: one approval, at most
    /// one send (module docs). Without an approval it writes nothing.
    pub fn take_resend_approval(&self, id: AttemptId) -> Result<bool, JournalError> {
        if self.resend_approval(id)?.is_none() {
            return Ok(false);
        }
        let now = self.now_ms();
        self.write("use the resend approval", |tx| {
            let e = self.err("use the resend approval");
            let Some((held, step)) = Self::approved(tx, id).map_err(&e)? else {
                return Ok(false);
            };
            queries::set_resolution(tx, step, None, None, now).map_err(&e)?;
            queries::insert_event(
                tx,
                &NewEvent {
                    at: now,
                    workflow: None,
                    step: Some(step),
                    attempt: Some(id),
                    kind: "resend-approval-used",
                    from: Some(held.state.as_str()),
                    to: Some(held.state.as_str()),
                    detail: None,
                },
            )
            .map_err(&e)?;
            Ok(true)
        })
    }

    /// Returns when a send of `INTENT` attempt `id` without a look was approved, if it still is
    /// (reads only).
    pub fn resend_approval(&self, id: AttemptId) -> Result<Option<DateTime<Utc>>, JournalError> {
        self.read("read the resend approval", |c| {
            Ok(Self::approved(c, id)?
                .and_then(|(_, step)| queries::resolved_at(c, step).ok().flatten()))
        })
    }

    /// Returns the attempt and its step when a send without a look is approved for it.
    fn approved(conn: &Tx, id: AttemptId) -> DbResult<Option<(Attempt, StepId)>> {
        let Some(held) = queries::attempt_by_id(conn, id)? else {
            return Ok(None);
        };
        if held.state != AttemptState::Intent {
            return Ok(None);
        }
        let Some(step) = queries::step_by_id(conn, held.step_id)? else {
            return Ok(None);
        };
        let latest = queries::max_attempt_number(conn, step.id)? == held.number;
        Ok((latest && step.resolution == Some(Resolution::Resend)).then_some((held, step.id)))
    }

    /// Returns the decisions recorded on attempts (of one workflow or step, if given), in
    /// delegation order.
    pub fn resolutions(
        &self,
        target: Option<&Target>,
    ) -> Result<Vec<AttemptResolution>, JournalError> {
        self.read("read the decisions", |c| {
            queries::attempt_resolutions(c, target)
        })
    }

    /// Returns the decisions recorded on these attempts (the rows `inspect` shows), in
    /// delegation order; reads only those attempts.
    pub fn resolutions_of(
        &self,
        attempts: &[AttemptId],
    ) -> Result<Vec<AttemptResolution>, JournalError> {
        self.read("read the decisions", |c| {
            queries::resolutions_of(c, attempts)
        })
    }

    /// Returns when a registered agent was put in the registry (`None` if not registered).
    pub fn registered_at(&self, card_url: &str) -> Result<Option<DateTime<Utc>>, JournalError> {
        self.read("read the registry", |c| queries::registered_at(c, card_url))
    }
}

/// Returns whether a new attempt may be made beside `held`: it is settled (finished, or
/// `UNCERTAIN`), or its interface is gone (nothing can read its task any more; a human decides).
fn retriable(tx: &Tx, held: &Attempt) -> DbResult<bool> {
    Ok(held.state.is_finished()
        || held.state == AttemptState::Uncertain
        || queries::failed_for_good(tx, held.id)?.is_some_and(|r| is_interface_gone(&r)))
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;
    use crate::journal::tests::{Fresh, Kind};
    use crate::journal::{IntentOutcome, NewIntent, Source, StepName, StepSpec};
    use crate::model::TaskView;

    const AGENT: &str = "http://127.0.0.1:9/.well-known/agent-card.json";

    fn step(j: &Journal, name: &str, max_attempts: u32) -> Attempt {
        let mut spec = StepSpec::to_agent(StepName::parse(name).unwrap(), "book", AGENT);
        spec.max_attempts = max_attempts;
        match j
            .create_intents(&[NewIntent {
                spec,
                agent_url: Some(AGENT.to_owned()),
                message_id: crate::sim_seam::new_uuid().to_string(),
                context_id: Some(crate::sim_seam::new_uuid().to_string()),
            }])
            .unwrap()
            .remove(0)
        {
            IntentOutcome::Created(a) => a,
            IntentOutcome::Existing(_) => panic!("{name} existed"),
        }
    }

    fn retry() -> Decision {
        Decision::Retry(NewAttempt {
            agent_url: Some(AGENT.to_owned()),
            message_id: crate::sim_seam::new_uuid().to_string(),
            context_id: Some(crate::sim_seam::new_uuid().to_string()),
            previous: None,
        })
    }

    fn last_event(j: &Journal, name: &str) -> crate::journal::Event {
        j.events_of_step(&StepName::parse(name).unwrap())
            .unwrap()
            .pop()
            .unwrap()
    }

    #[rstest]
    fn done_and_abandoned_take_the_step_out_of_every_pass(
        #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
    ) {
        let (_fresh, j) = Fresh::journal(kind);
        let a = step(&j, "w/done", 3);
        let b = step(&j, "w/gone", 3);
        assert_eq!(j.unfinished_attempts(&[]).unwrap().len(), 2);
        let decided = j.decide(a.id, &Decision::Done, "booked by phone").unwrap();
        assert_eq!(decided.attempt.state, AttemptState::Intent);
        assert_eq!(decided.new_attempt, None);
        j.decide(b.id, &Decision::Abandoned, "not needed").unwrap();
        assert!(j.unfinished_attempts(&[]).unwrap().is_empty());
        let rec = j
            .step(&StepName::parse("w/done").unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(rec.step.resolution, Some(Resolution::Done));
        assert_eq!(
            rec.step.resolution_reason.as_deref(),
            Some("booked by phone")
        );
        let e = last_event(&j, "w/gone");
        assert_eq!(e.kind, "resolved");
        assert_eq!(e.attempt, Some(1));
        let detail = e.detail.unwrap();
        assert_eq!(detail["resolution"], "abandoned");
        assert_eq!(detail["reason"], "not needed");
        let all = j.resolutions(None).unwrap();
        assert_eq!(
            all.iter()
                .map(|r| (r.attempt, r.resolution, r.reason.as_str()))
                .collect::<Vec<_>>(),
            [
                (a.id, Resolution::Done, "booked by phone"),
                (b.id, Resolution::Abandoned, "not needed")
            ]
        );
        let only = j
            .resolutions(Some(&Target::Step(StepName::parse("w/gone").unwrap())))
            .unwrap();
        assert_eq!(only.len(), 1);
        // The decisions of the rows shown: the same records, only theirs.
        assert_eq!(j.resolutions_of(&[b.id]).unwrap(), only);
        assert_eq!(j.resolutions_of(&[a.id, b.id]).unwrap(), all);
        assert!(j.resolutions_of(&[]).unwrap().is_empty());
    }

    #[rstest]
    fn retry_adds_a_linked_intent_within_the_budget_only_once_settled(
        #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
    ) {
        let (_fresh, j) = Fresh::journal(kind);
        let a = step(&j, "w/car", 2);
        // INTENT is not settled: the look decides, not the operator.
        let err = j.decide(a.id, &retry(), "again").unwrap_err();
        assert!(
            matches!(
                err,
                JournalError::Undecidable {
                    state: AttemptState::Intent,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.is_refused_decision());
        j.record_refusal(a.id, "HTTP 400").unwrap();
        j.decide(a.id, &Decision::Abandoned, "first thought")
            .unwrap();
        let events = j.event_count().unwrap();
        let decided = j.decide(a.id, &retry(), "fixed the request").unwrap();
        assert_eq!(j.event_count().unwrap(), events + 2, "resolved + intent");
        let new = decided.new_attempt.unwrap();
        assert_eq!((new.number, new.state), (2, AttemptState::Intent));
        assert_eq!(new.previous_attempt, Some(a.id));
        assert_ne!(new.message_id, a.message_id);
        let rec = j.step(&StepName::parse("w/car").unwrap()).unwrap().unwrap();
        assert_eq!(rec.step.resolution, None, "a retry keeps the step going");
        let unfinished = j.unfinished_attempts(&[]).unwrap();
        assert_eq!(unfinished.len(), 1);
        assert_eq!(unfinished[0].attempt.id, new.id);
        assert_eq!(unfinished[0].previous_task_id, None);
        // A pass sees an ordinary intent, not a standing `retry` to act on again.
        let rows = j.pass_rows(&[]).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].attempt.id, rows[0].resolution), (new.id, None));
        // The old attempt is no longer the latest.
        let err = j.decide(a.id, &Decision::Done, "late").unwrap_err();
        assert!(
            matches!(err, JournalError::NotLatest { latest: 2, .. }),
            "{err}"
        );
        // Budget: 2 attempts, both used.
        j.record_refusal(new.id, "HTTP 400").unwrap();
        let events = j.event_count().unwrap();
        let err = j.decide(new.id, &retry(), "third time").unwrap_err();
        assert!(
            matches!(err, JournalError::BudgetSpent { max: 2, .. }),
            "{err}"
        );
        assert_eq!(
            j.event_count().unwrap(),
            events,
            "a refused decision writes nothing"
        );
    }

    #[rstest]
    fn retry_of_a_running_attempt_is_refused(#[values(Kind::Sqlite, Kind::Postgres)] kind: Kind) {
        let (_fresh, j) = Fresh::journal(kind);
        let a = step(&j, "w/run", 3);
        let raw = r#"{"id":"t-1","contextId":"c","status":{"state":"TASK_STATE_WORKING","timestamp":"2026-11-30T01:00:00Z"}}"#;
        j.apply_task(a.id, &TaskView::from_raw(raw).unwrap(), Source::Send)
            .unwrap();
        let err = j.decide(a.id, &retry(), "impatient").unwrap_err();
        assert!(
            matches!(
                err,
                JournalError::Undecidable {
                    state: AttemptState::Working,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[rstest]
    fn resend_reopens_an_uncertain_attempt_with_one_approval(
        #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
    ) {
        let (fresh, j) = Fresh::journal(kind);
        let a = step(&j, "w/hotel", 3);
        let err = j.decide(a.id, &Decision::Resend, "go").unwrap_err();
        assert!(
            matches!(
                err,
                JournalError::Undecidable {
                    state: AttemptState::Intent,
                    ..
                }
            ),
            "{err}"
        );
        j.mark_uncertain(a.id, "ListTasks unsupported").unwrap();
        assert_eq!(j.resend_approval(a.id).unwrap(), None);
        let decided = j.decide(a.id, &Decision::Resend, "agent dedups").unwrap();
        assert_eq!(decided.attempt.state, AttemptState::Intent);
        assert_eq!(decided.attempt.message_id, a.message_id, "same messageId");
        assert_eq!(decided.attempt.error, None);
        let e = last_event(&j, "w/hotel");
        assert_eq!(
            (e.kind.as_str(), e.from.as_deref(), e.to.as_deref()),
            ("resolved", Some("UNCERTAIN"), Some("INTENT"))
        );
        assert!(j.resend_approval(a.id).unwrap().is_some());
        let pending = j.resolutions(None).unwrap();
        assert!(pending[0].resend_pending);
        // What a pass reads: the step resolved `resend` on its INTENT latest attempt.
        let rows = j.pass_rows(&[]).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].resolution, Some(Resolution::Resend));
        assert_eq!(rows[0].attempt.state, AttemptState::Intent);
        // One approval, one send.
        let events = j.event_count().unwrap();
        assert!(j.take_resend_approval(a.id).unwrap());
        assert_eq!(j.event_count().unwrap(), events + 1);
        assert_eq!(last_event(&j, "w/hotel").kind, "resend-approval-used");
        // Another connection sees every commit (SQLite's data_version ignores its own).
        let other = fresh.open();
        let version = other.data_version().unwrap();
        assert!(!j.take_resend_approval(a.id).unwrap());
        assert_eq!(
            other.data_version().unwrap(),
            version,
            "nothing to take writes nothing"
        );
        assert!(!j.resolutions(None).unwrap()[0].resend_pending);
        // The unfinished attempt is visited again (the step is not resolved).
        assert_eq!(j.unfinished_attempts(&[]).unwrap().len(), 1);
    }

    #[rstest]
    fn resend_names_the_state_it_refuses(#[values(Kind::Sqlite, Kind::Postgres)] kind: Kind) {
        let (_fresh, j) = Fresh::journal(kind);
        let a = step(&j, "w/x", 3);
        j.record_refusal(a.id, "HTTP 403").unwrap();
        let err = j.decide(a.id, &Decision::Resend, "try").unwrap_err();
        assert_eq!(
            err.to_string(),
            "attempt 1 of step `w/x` is REFUSED: only an UNCERTAIN attempt is resent with its \
             own messageId"
        );
    }

    #[rstest]
    fn a_closed_workflow_refuses_sends_but_takes_done(
        #[values(Kind::Sqlite, Kind::Postgres)] kind: Kind,
    ) {
        let (_fresh, j) = Fresh::journal(kind);
        let a = step(&j, "trip/car", 3);
        j.mark_uncertain(a.id, "no ListTasks").unwrap();
        j.set_workflow_state("trip", WorkflowState::Compensating)
            .unwrap();
        for d in [Decision::Resend, retry()] {
            let err = j.decide(a.id, &d, "x").unwrap_err();
            assert!(matches!(err, JournalError::WorkflowClosed { .. }), "{err}");
        }
        j.decide(a.id, &Decision::Done, "compensated by hand")
            .unwrap();
    }
}
