//! What a follow reads: each item judged, queued for the group commit, and settled against
//! the journal (the end it comes to, strays and ignored items).

use tokio::time::Instant;

use super::super::remote::{Item, Remote};
use super::super::{FollowEnd, Progress};
use super::{
    Follower, Kind, MAX_PENDING, MAX_PENDING_BYTES, Pending, PendingResult, Read, Round,
    content_signature,
};
use crate::a2a::{ArtifactUpdate, TaskView};
use crate::crash::{self, Point};
use crate::journal::{
    Applied, AttemptState, FailureKind, JournalError, Recorded, Source, StreamObservation,
};

impl<R: Remote> Follower<'_, R> {
    /// Reads the task once more after a stream reported it terminal: GetTask holds the
    /// authoritative artifacts. A failure here changes nothing (the terminal state is recorded).
    pub(super) async fn final_read(&mut self) -> Result<(), JournalError> {
        match self.remote.get_task(&self.target.task_id).await {
            Ok(task) => {
                self.observe_now(&Item::Task(task), Kind::Polled).await?;
            }
            Err(e) => {
                tracing::debug!(error = %e.summary(), "the final GetTask after a terminal event failed");
            }
        }
        Ok(())
    }

    /// Journals one observation (waiting for its commit), shows it, and says whether to stop.
    pub(super) async fn observe_now(
        &mut self,
        item: &Item,
        kind: Kind,
    ) -> Result<Option<FollowEnd>, JournalError> {
        match self.read(item, kind) {
            Read::Queued { .. } => self.settle().await,
            Read::Ignore(why) => {
                if let Some(end) = self.settle().await? {
                    return Ok(Some(end));
                }
                self.ignore(&why)?;
                Ok(None)
            }
        }
    }

    /// Queues one observation for the group commit; says whether to wait for it now.
    pub(super) fn read(&mut self, item: &Item, kind: Kind) -> Read {
        let attempt = self.target.attempt;
        let source = if kind == Kind::Polled {
            Source::GetTask
        } else {
            Source::Stream
        };
        let mut news = true;
        let (obs, may_stop) = match item {
            Item::Task(raw) | Item::Status(raw) => {
                let view = match item {
                    Item::Task(_) => TaskView::from_value(raw, raw.to_string()),
                    _ => TaskView::from_status_update(raw),
                };
                match view {
                    Ok(view) if view.task_id == self.target.task_id => {
                        if matches!(item, Item::Task(_)) {
                            let sig = content_signature(raw);
                            news = self.last_snapshot != Some(sig);
                            self.last_snapshot = Some(sig);
                        }
                        let may_stop = view.state.is_terminal() || view.state.is_interrupted();
                        let obs = StreamObservation::Task {
                            attempt,
                            view,
                            source,
                        };
                        (Some(obs), may_stop)
                    }
                    Ok(view) => {
                        return Read::Ignore(format!(
                            "an event for another task `{}`",
                            view.task_id
                        ));
                    }
                    Err(e) => return Read::Ignore(e.to_string()),
                }
            }
            Item::Artifact(raw) => match ArtifactUpdate::from_value(raw) {
                Ok(update) if update.task_id == self.target.task_id => {
                    (Some(StreamObservation::Artifact { attempt, update }), false)
                }
                Ok(update) => {
                    return Read::Ignore(format!("an event for another task `{}`", update.task_id));
                }
                Err(e) => return Read::Ignore(e.to_string()),
            },
            Item::Message => (None, false),
        };
        let result = match obs {
            Some(obs) => {
                self.pending_bytes += obs.held_bytes();
                PendingResult::Queued(self.commit.submit(obs))
            }
            None => PendingResult::Nothing,
        };
        self.pending.push_back(Pending {
            news,
            source,
            result,
        });
        // A crash point armed for this event's number ends the read-ahead here: the crash
        // then finds exactly that many of this follow's events journaled.
        let number = self.events + self.pending.len() as u64;
        let crash_here = crash::armed(Point::AfterEvent(number), &self.step);
        Read::Queued {
            settle: may_stop
                || crash_here
                || self.pending.len() >= MAX_PENDING
                || self.pending_bytes >= MAX_PENDING_BYTES,
        }
    }

    /// Waits for the group commit of every queued observation, then, in order: counts it,
    /// fires the `after-event:N` crash point (journaled, not yet shown), tells the observer,
    /// and says whether to stop. Observations after one that stops the follow are journaled
    /// but not shown.
    pub(super) async fn settle(&mut self) -> Result<Option<FollowEnd>, JournalError> {
        if self
            .pending
            .iter()
            .any(|p| matches!(p.result, PendingResult::Queued(_)))
        {
            self.commit.request();
        }
        // Every observation pending is settled below (or the follow fails).
        self.pending_bytes = 0;
        let mut end = None;
        let mut unchanged = false;
        while let Some(p) = self.pending.pop_front() {
            let recorded = match p.result {
                PendingResult::Nothing => Recorded {
                    applied: Applied::Unchanged,
                    event: None,
                    over_limit: false,
                },
                PendingResult::Queued(rx) => match rx.await {
                    Ok(result) => result?,
                    Err(_) => return Err(commit_dropped()),
                },
            };
            unchanged |= !recorded.applied.changed();
            if end.is_none() {
                end = self.settled(p.news, p.source, recorded);
                // Past a size limit the rest of the stream is of no use: stop reading it.
                if recorded.over_limit {
                    end = Some(self.over_limit_end()?.unwrap_or(FollowEnd::TooLarge(
                        crate::journal::ARTIFACT_TOO_LARGE.to_owned(),
                    )));
                }
            }
        }
        // An observation that changed nothing may have found the journal already moved on by
        // another process (a pass that journaled the task's end first): the journal decides,
        // else a follow of a finished task would poll until its reconnects are spent.
        if end.is_none() && unchanged {
            let now = self.journal.attempt(self.target.attempt)?.state;
            if now != self.state {
                self.state = now;
                end = end_for(now);
            }
        }
        Ok(end)
    }

    /// Counts, shows and judges one committed observation.
    fn settled(&mut self, news: bool, source: Source, recorded: Recorded) -> Option<FollowEnd> {
        let applied = recorded.applied;
        self.events += 1;
        if let Applied::Changed { to, .. } = applied {
            self.changes += 1;
            self.state = to;
        }
        // Only an event that changed something is progress: one ignored as stale, repeated
        // or already journaled does not reset the streak (else an agent that repeats itself,
        // or stamps its statuses in the future, would keep a follow reconnecting for ever),
        // nor does a snapshot that repeats the last one but for its timestamps (a stream that
        // sends its snapshot and closes, again and again, is bounded like any other end).
        if applied.changed() && news {
            self.streak = 0;
        }
        crash::at(Point::AfterEvent(self.events), &self.step);
        let progress = Progress::Observed {
            source,
            applied,
            state: self.state,
            events: self.events,
            event: recorded.event,
        };
        self.tell(&progress);
        end_for(self.state)
    }

    /// Skips an event of a subscription that cannot apply to this task: the first of a run
    /// (`since`: when the run began) is journaled and logged; a flood of them writes no more,
    /// and once the run is longer than the idle timeout the stream counts as silent
    /// (`Some`: resubscribe).
    pub(super) fn stray(
        &mut self,
        why: &str,
        since: &mut Option<Instant>,
    ) -> Result<Option<Round>, JournalError> {
        match *since {
            None => {
                *since = Some(Instant::now());
                self.ignore(why)?;
                Ok(None)
            }
            Some(began) if began.elapsed() >= self.opts.idle => {
                let cause = format!(
                    "the stream sent only events that cannot apply to this task for {}",
                    crate::a2a::error::fmt_duration(self.opts.idle)
                );
                self.last_error = Some(cause.clone());
                Ok(Some(Round::Again {
                    cause,
                    poll: false,
                    retry_after: None,
                }))
            }
            Some(_) => Ok(None),
        }
    }

    /// Skips an event that cannot apply to this task (logged and journaled as a read failure).
    fn ignore(&mut self, why: &str) -> Result<(), JournalError> {
        let summary = crate::a2a::error::one_line(&format!("ignored a stream event: {why}"));
        tracing::warn!("{summary}");
        self.journal
            .record_failure(self.target.attempt, FailureKind::Read, &summary)?;
        self.last_error = Some(summary);
        Ok(())
    }
}

/// Returns how a follow ends at this journaled state, if it does.
fn end_for(state: AttemptState) -> Option<FollowEnd> {
    match state {
        s if s.is_terminal() => Some(FollowEnd::Terminal(s)),
        s @ (AttemptState::InputRequired | AttemptState::AuthRequired) => {
            Some(FollowEnd::Interrupted(s))
        }
        AttemptState::Lost => Some(FollowEnd::Lost),
        _ => None,
    }
}

/// The error of a group commit that went away without answering (a bug).
fn commit_dropped() -> JournalError {
    JournalError::Storage {
        action: "journal the stream events",
        hint: None,
        source: Box::new(std::io::Error::other(
            "the group commit ended before journaling a queued event",
        )),
    }
}
