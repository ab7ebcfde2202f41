//! Phase 2 of the compensation pass: cancelling what still runs, and reading back its task.

use std::ops::ControlFlow;

use super::{Pass, READ_ATTEMPTS, Unlooked, endpoint_of};
use crate::a2a::{A2aError, Endpoint, retry_read};
use crate::journal::{
    Attempt, AttemptState, FailureKind, JournalError, Source, Step, StepName, StepRecord,
};
use crate::recovery::error::Stopped;
use crate::recovery::event::{CancelAnswer, Did, Event};
use crate::recovery::lookup::{self, LookHow, Looked};
use crate::recovery::moved;
use anyhow::Context as _;

impl Pass<'_> {
    /// Cancels every unfinished attempt of a step; returns false when one still runs (or could
    /// not be read), so its effect cannot be decided yet.
    pub(super) async fn cancel_step(&mut self, record: &StepRecord) -> anyhow::Result<bool> {
        let mut decided = true;
        for a in &record.attempts {
            if a.state.is_finished() || a.state == AttemptState::Uncertain {
                continue;
            }
            let done = self
                .cancel_attempt(&record.step, a)
                .await
                .or_else(|e| self.problem(&record.step.spec.name, a, e))?;
            if !done {
                decided = false;
                self.running += 1;
            }
        }
        Ok(decided)
    }

    /// Reports an error that stops the work on one attempt (the pass goes on).
    pub(super) fn problem(
        &self,
        step: &StepName,
        a: &Attempt,
        e: anyhow::Error,
    ) -> anyhow::Result<bool> {
        if e.downcast_ref::<Stopped>().is_some() || e.downcast_ref::<JournalError>().is_some() {
            return Err(e);
        }
        self.io.sink.event(Event::Problem(&e))?;
        self.say_step(step, Some(a), Did::Failed { error: &e })?;
        Ok(false)
    }

    /// Cancels one unfinished attempt (an `INTENT` is looked for first), reads it back and
    /// decides; returns whether it is finished.
    async fn cancel_attempt(&self, step: &Step, a: &Attempt) -> anyhow::Result<bool> {
        let name = &step.spec.name;
        let mut a = a.clone();
        if a.state == AttemptState::Intent {
            match self.look_before_cancel(step, &a).await? {
                ControlFlow::Continue(found) => a = found,
                ControlFlow::Break(decided) => return Ok(decided),
            }
        }
        let task = a
            .current_task_id()
            .map(str::to_owned)
            .context("a running attempt has no task id")?;
        let mut ep = endpoint_of(self.journal, &a, step.spec.allow_cross_origin).await?;
        if a.cancel_requested_at.is_some() {
            // A previous run asked already: read first, ask again only if it still runs.
            match self.read_task(&a, &mut ep).await? {
                Some(now) if now.state.is_finished() => {
                    self.say_step(
                        name,
                        Some(&now),
                        Did::CancelAskedBefore {
                            task: &task,
                            state: now.state,
                        },
                    )?;
                    return Ok(true);
                }
                Some(now) => a = now,
                None => return Ok(false),
            }
        } else {
            self.journal.mark_cancel_requested(a.id)?;
        }
        let tid = task.as_str();
        let cancel = |ep: Endpoint| async move { self.client.cancel_task(&ep, tid).await };
        let Some(answer) = self.moving(&a, &mut ep, cancel).await? else {
            self.say_step(name, Some(&a), Did::CancelGone { task: &task })?;
            return Ok(false);
        };
        let answered = match &answer {
            Ok(t) => {
                a = self.apply(&a, &t.raw, Source::Cancel)?;
                CancelAnswer::Task
            }
            Err(e) => CancelAnswer::Error(e),
        };
        // After any answer, read the task again and decide from what it says.
        let now = self.read_task(&a, &mut ep).await?;
        self.say_step(
            name,
            Some(now.as_ref().unwrap_or(&a)),
            Did::Cancelled {
                task: &task,
                answer: answered,
                state: now.as_ref().map(|now| now.state),
            },
        )?;
        Ok(now.is_some_and(|now| now.state.is_finished()))
    }

    /// An `INTENT` that may have been sent is looked for before any cancel: `Continue` with
    /// the attempt as found, running; `Break(decided)` when there is nothing to cancel (never
    /// sent, proven absent, finished) or it cannot be found now.
    async fn look_before_cancel(
        &self,
        step: &Step,
        a: &Attempt,
    ) -> anyhow::Result<ControlFlow<bool, Attempt>> {
        let name = &step.spec.name;
        if lookup::never_sent(a) {
            self.say_step(name, Some(a), Did::NeverSent)?;
            return Ok(ControlFlow::Break(true));
        }
        let found = match self.look(a, step.spec.allow_cross_origin).await? {
            Ok(found) => found,
            Err(Unlooked::InFlight(until)) => {
                self.say_step(name, Some(a), Did::LookInFlight { until })?;
                return Ok(ControlFlow::Break(false));
            }
            Err(Unlooked::Failed(e)) if e.is_bad_task_id() => {
                // Its send was answered with a task no request can name: it can be neither
                // found nor cancelled, and its effect is not decided here.
                self.gone.set(true);
                let a = self.journal.attempt(a.id)?;
                self.say_step(
                    name,
                    Some(&a),
                    Did::BadTaskId {
                        error: a.error.as_deref(),
                    },
                )?;
                return Ok(ControlFlow::Break(false));
            }
            Err(Unlooked::Failed(_)) => {
                self.say_step(
                    name,
                    Some(a),
                    Did::LookFailed {
                        error: a.error.as_deref(),
                    },
                )?;
                return Ok(ControlFlow::Break(false));
            }
        };
        let a = found;
        if a.state == AttemptState::Intent {
            self.proven_absent.borrow_mut().insert(a.id);
        }
        if a.state.is_finished() || a.state == AttemptState::Intent {
            return Ok(ControlFlow::Break(true));
        }
        Ok(ControlFlow::Continue(a))
    }

    /// Reads a task with `GetTask` and journals it; `None` when it cannot be read now.
    /// The attempt's interface is re-chosen (`ep` with it) when it left the agent's card.
    pub(super) async fn read_task(
        &self,
        a: &Attempt,
        ep: &mut Endpoint,
    ) -> anyhow::Result<Option<Attempt>> {
        let task = a
            .current_task_id()
            .map(str::to_owned)
            .context("no task id")?;
        let tid = task.as_str();
        let get = |ep: Endpoint| async move {
            retry_read(READ_ATTEMPTS, || self.client.get_task(&ep, tid, Some(0))).await
        };
        let Some(read) = self.moving(a, ep, get).await? else {
            return Ok(None);
        };
        match read {
            Ok(t) => Ok(Some(self.apply(a, &t.raw, Source::GetTask)?)),
            Err(e) if e.is_task_not_found() => {
                self.journal.mark_lost(a.id, &e.summary())?;
                Ok(Some(self.journal.attempt(a.id)?))
            }
            Err(e) => {
                self.journal
                    .record_failure(a.id, FailureKind::Read, &e.summary())?;
                Ok(None)
            }
        }
    }

    /// Runs `call` at the attempt's interface, re-chosen (and `ep` with it) when it left the
    /// agent's card; `None` when the card offers nothing we speak (journaled: a human decides).
    async fn moving<T, F, Fut>(
        &self,
        a: &Attempt,
        ep: &mut Endpoint,
        call: F,
    ) -> anyhow::Result<Option<Result<T, A2aError>>>
    where
        F: Fn(Endpoint) -> Fut,
        Fut: std::future::Future<Output = Result<T, A2aError>>,
    {
        Ok(
            match moved::read(self.client, self.journal, a, ep, moved::Mode::Journal, call).await? {
                moved::Reread::Read { result, moved } => {
                    if let Some(to) = moved {
                        *ep = to;
                    }
                    Some(result)
                }
                moved::Reread::Gone(gone) => {
                    moved::journal_gone(self.journal, a.id, &gone.line())?;
                    self.gone.set(true);
                    None
                }
            },
        )
    }

    /// Looks for what a possibly-sent `INTENT` created; `Err(Some(until))` when nothing is
    /// found yet but the last send may still be in flight until then, `Err(None)` when the
    /// look could not run.
    async fn look(
        &self,
        a: &Attempt,
        allow_cross_origin: bool,
    ) -> anyhow::Result<Result<Attempt, Unlooked>> {
        let ep = endpoint_of(self.journal, a, allow_cross_origin).await?;
        let how = LookHow {
            client: self.client,
            endpoint: &ep,
            clock: self.io.clock,
            clock_skew: self.opts.clock_skew,
            sweeps: None,
            no_id: "the agent's task has no id",
        };
        let found = lookup::journal_found(self.journal, a.id);
        Ok(
            match lookup::look_and_journal(self.journal, a, how, found).await? {
                Looked::Found((now, _)) | Looked::Uncertain(now, _) => Ok(now),
                Looked::Absent => Ok(a.clone()),
                // The last send may still be in flight: look again later.
                Looked::InFlight(until) => Err(Unlooked::InFlight(until)),
                Looked::Failed(e) => Err(Unlooked::Failed(e)),
            },
        )
    }
}
