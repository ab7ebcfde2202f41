//! Observations of remote work merged into the journal: a Task (send answer, GetTask,
//! ListTasks, stream snapshot or status update), a stream artifact update, and batches of them
//! group-committed in one transaction.

use serde_json::{Value, json};

use super::change::{Change, Wanted, Written};
use super::group::{Unwritten, WRITE_AT, held_rows};
use super::queries::{self, NewEvent};
use super::sql::{DbError, DbResult, Tx};
use super::{
    ARTIFACT_TOO_LARGE, Applied, Artifact, Attempt, AttemptId, DateTimeUtc, Freshness, Journal,
    JournalError, Observation, Recorded, SizeLimits, Source, Standing, StreamObservation,
    TASK_TOO_LARGE, is_over_limit, message_said,
};
use crate::model::{ArtifactUpdate, ArtifactView, TaskView};

impl Journal {
    /// Applies a remote Task (a send's answer, GetTask, ListTasks, a stream snapshot or status
    /// update) as an observation; writes only what changed.
    ///
    /// Records the task id (the first time), the agent's contextId, the state (through
    /// [`transition`](super::transition)), the status timestamp at full precision, the pending question (the full
    /// status message of INPUT_REQUIRED / AUTH_REQUIRED), artifacts by `artifactId`, and the
    /// raw JSON. A status strictly older than the one held is ignored entirely; a terminal
    /// attempt only takes artifacts it did not have yet.
    pub fn apply_task(
        &self,
        id: AttemptId,
        view: &TaskView,
        source: Source,
    ) -> Result<Applied, JournalError> {
        self.apply_view(id, view, "journal the task", |held, artifacts| {
            Self::task_change(held, artifacts, view, source)
        })
    }

    /// Applies a remote Task as [`Journal::apply_task`] does, and returns the attempt as the
    /// write left it, with why it failed for good (if it did: a task past a size limit is
    /// marked so in the same transaction), so that a caller that decides from the new state
    /// reads nothing back.
    pub fn apply_task_standing(
        &self,
        id: AttemptId,
        view: &TaskView,
        source: Source,
    ) -> Result<Standing, JournalError> {
        let ids = view_artifact_ids(view);
        let limits = self.limits;
        self.write_attempts_if_changed(&[id], "journal the task", |tx, e, now| {
            let (applied, _, attempt) =
                Self::change_in_written(tx, &e, now, id, Wanted::Only(&ids), |held, artifacts| {
                    let change = Self::task_change(held, artifacts, view, source)?;
                    Self::limit_change(tx, &e, now, limits, held, change, &mut false)
                })?;
            let failed_for_good = queries::failed_for_good(tx, id).map_err(&e)?;
            let changed = applied.changed();
            Ok((
                Standing {
                    applied,
                    attempt,
                    failed_for_good,
                },
                changed,
            ))
        })
    }

    /// Applies the answer to a reply that came as a NEW task in the attempt's context: that
    /// task becomes the attempt's continuation (`continuation_task_id`, named in the event's
    /// detail), and is applied as [`Journal::apply_task`] applies a task. Every later read
    /// goes to it.
    pub fn apply_continuation(
        &self,
        id: AttemptId,
        view: &TaskView,
        source: Source,
    ) -> Result<Applied, JournalError> {
        self.apply_view(id, view, "journal the continuation", |held, artifacts| {
            let mut continued = held.clone();
            continued.continuation_task_id = Some(view.task_id.clone());
            let mut change = match Self::task_change(&continued, artifacts, view, source)? {
                Some(mut change) => {
                    change.next.continuation_task_id = Some(view.task_id.clone());
                    change.force_event = true;
                    change
                }
                None => Change {
                    detail: json!({"source": source.as_str(), "taskId": view.task_id}),
                    next: continued,
                    artifacts: Vec::new(),
                    kind: "observed",
                    force_event: true,
                },
            };
            change.detail["continuationTaskId"] = json!(view.task_id);
            change.detail["continues"] = json!(held.current_task_id());
            Ok(Some(change))
        })
    }

    /// Applies one observation of a task in one transaction: `change` decides what it changes,
    /// the size limits then apply.
    fn apply_view(
        &self,
        id: AttemptId,
        view: &TaskView,
        action: &'static str,
        change: impl FnOnce(&Attempt, &[Artifact]) -> Result<Option<Change>, JournalError>,
    ) -> Result<Applied, JournalError> {
        let ids = view_artifact_ids(view);
        let limits = self.limits;
        self.write_attempts_if_changed(&[id], action, |tx, e, now| {
            let (applied, _) =
                Self::change_in(tx, &e, now, id, Wanted::Only(&ids), |held, artifacts| {
                    let change = change(held, artifacts)?;
                    Self::limit_change(tx, &e, now, limits, held, change, &mut false)
                })?;
            let changed = applied.changed();
            Ok((applied, changed))
        })
    }

    /// What applying a remote Task to an attempt changes (see [`Journal::apply_task`]).
    pub(super) fn task_change(
        held: &Attempt,
        held_artifacts: &[Artifact],
        view: &TaskView,
        source: Source,
    ) -> Result<Option<Change>, JournalError> {
        if let Some(t) = held.current_task_id()
            && *t != view.task_id
        {
            return Err(JournalError::TaskMismatch {
                attempt: held.id.0,
                held: t.to_owned(),
                seen: view.task_id.clone(),
            });
        }
        let freshness = Freshness::of(held.ordering_time(), view.timestamp.as_ref().map(|t| t.at));
        let obs = Observation::Remote {
            state: view.state,
            freshness,
        };
        let to = Self::transition_of(held, obs)?;
        let mut next = held.clone();
        let artifacts = merge_snapshot_artifacts(held_artifacts, view.artifacts.as_deref());
        if held.state.is_terminal() {
            // Artifacts may still arrive after the end, but not from a snapshot taken before
            // it: a read answered earlier and journaled later would put back an artifact as it
            // was then (fewer chunks).
            let stale = freshness == Freshness::Older && !view.state.is_terminal();
            if artifacts.is_empty() || stale {
                return Ok(None);
            }
        } else if freshness == Freshness::Older
            && held.state.has_task()
            && !view.state.is_terminal()
        {
            return Ok(None);
        } else {
            if held.continuation_task_id.is_none() {
                next.task_id = Some(view.task_id.clone());
            }
            if let Some(ctx) = &view.context_id
                && held.context_id.as_ref() != Some(ctx)
            {
                next.context_id = Some(ctx.clone());
                next.context_id_ours = false;
            }
            if let Some(state) = to {
                next.state = state;
                next.error = None;
            }
            next.remote_state = Some(view.remote_state.clone());
            if let Some(ts) = &view.timestamp {
                next.status_timestamp = Some(ts.text.clone());
            }
            next.pending_question = if view.state.is_interrupted() {
                if to.is_some() {
                    view.status_message.clone()
                } else {
                    view.status_message
                        .clone()
                        .or_else(|| held.pending_question.clone())
                }
            } else {
                None
            };
        }
        let data_changed = next != *held || !artifacts.is_empty();
        if data_changed && let Some(raw) = &view.raw_json {
            next.last_task_json = Some(raw.clone());
        }
        Ok(Some(Change {
            detail: json!({
                "source": source.as_str(),
                "taskId": view.task_id,
                "remoteState": view.remote_state,
                "statusTimestamp": view.timestamp.as_ref().map(|t| &t.text),
                "question": next.pending_question.as_ref().map(message_said),
                "artifacts": artifacts.iter().map(|a| &a.artifact_id).collect::<Vec<_>>(),
            }),
            next,
            artifacts,
            kind: if source == Source::Push {
                "push"
            } else {
                "observed"
            },
            force_event: false,
        }))
    }

    /// Applies a stream artifact update: `append` adds parts to the held artifact, otherwise it
    /// replaces it; `lastChunk` marks it complete. An append after the last chunk is ignored.
    pub fn apply_artifact_update(
        &self,
        id: AttemptId,
        update: &ArtifactUpdate,
    ) -> Result<Applied, JournalError> {
        let limits = self.limits;
        self.write_attempts_if_changed(&[id], "journal the artifact", |tx, e, now| {
            let (applied, _) = Self::artifact_change_in(tx, &e, now, limits, id, update)?;
            let changed = applied.changed();
            Ok((applied, changed))
        })
    }

    /// The body of [`Journal::apply_artifact_update`], inside a transaction the caller commits.
    fn artifact_change_in(
        tx: &Tx,
        e: &impl Fn(DbError) -> JournalError,
        now: chrono::DateTime<chrono::Utc>,
        limits: SizeLimits,
        id: AttemptId,
        update: &ArtifactUpdate,
    ) -> Result<(Applied, Option<i64>), JournalError> {
        let wanted = [update.artifact.artifact_id.as_str()];
        Self::change_in(
            tx,
            e,
            now,
            id,
            Wanted::Only(&wanted),
            |held, held_artifacts| {
                if held.current_task_id() != Some(update.task_id.as_str()) {
                    return Err(JournalError::TaskMismatch {
                        attempt: held.id.0,
                        held: held.current_task_id().unwrap_or_default().to_owned(),
                        seen: update.task_id.clone(),
                    });
                }
                let existing = held_artifacts
                    .iter()
                    .find(|a| a.artifact_id == update.artifact.artifact_id);
                let merged = merge_artifact_update(existing, update);
                if merged.as_ref() == existing || merged.is_none() {
                    return Ok(None);
                }
                let merged = merged.into_iter().collect::<Vec<_>>();
                let change = Some(Change {
                    next: held.clone(),
                    detail: json!({
                        "source": Source::Stream.as_str(),
                        "artifactId": update.artifact.artifact_id,
                        "append": update.append,
                        "lastChunk": update.last_chunk,
                    }),
                    artifacts: merged,
                    kind: "artifact",
                    force_event: false,
                });
                Self::limit_change(tx, e, now, limits, held, change, &mut false)
            },
        )
    }

    /// Applies a batch of stream observations (task snapshots, status and artifact updates,
    /// GetTask answers), in order, in ONE transaction: one durable commit for many events.
    ///
    /// The follow engine group-commits with it and shows an observation only once this has
    /// returned, so "journaled before shown" holds per event. An observation that does not
    /// apply (a task mismatch, an impossible transition) gets its own `Err` and writes nothing;
    /// the others still commit. A storage failure rolls the whole batch back (the outer `Err`).
    ///
    /// The attempts are read in one statement and each observation is decided against the
    /// row as the batch so far left it; the rows and events are written together, in order
    /// (`journal/group.rs`). A snapshot that brings artifacts reads them from the journal: what
    /// the batch decided before it is written first.
    pub fn apply_observations(
        &self,
        batch: &[StreamObservation],
    ) -> Result<Vec<Result<Recorded, JournalError>>, JournalError> {
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        let limits = self.limits;
        let attempts: Vec<AttemptId> = batch.iter().map(StreamObservation::attempt).collect();
        let batch: Vec<&StreamObservation> = batch.iter().collect();
        self.write_attempts_if_changed(&attempts, "journal the stream events", |tx, e, now| {
            Self::observe_in(tx, e, now, limits, &batch)
        })
    }

    /// The body of [`Journal::apply_observations`], inside a transaction the caller commits:
    /// what each observation gave, and whether any of them changed the journal.
    pub(super) fn observe_in(
        tx: &Tx,
        e: &dyn Fn(DbError) -> JournalError,
        now: DateTimeUtc,
        limits: SizeLimits,
        batch: &[&StreamObservation],
    ) -> Result<(Vec<Result<Recorded, JournalError>>, bool), JournalError> {
        let attempts: Vec<AttemptId> = batch.iter().map(|o| o.attempt()).collect();
        let mut held = held_rows(tx, e, &attempts)?;
        let mut unwritten = Unwritten::default();
        // The observations whose changes are unwritten, in order: their events' ids come
        // with the write.
        let mut slots: Vec<usize> = Vec::new();
        let mut out: Vec<Result<Recorded, JournalError>> = Vec::with_capacity(batch.len());
        // The artifacts that stream updates of this batch touched, as they stand, written once
        // at the end: appending chunk after chunk would otherwise read, parse and rewrite the
        // whole artifact for each chunk.
        let mut touched = ArtifactCache::default();
        for &obs in batch {
            let mut over_limit = false;
            let id = obs.attempt();
            let ids = match obs {
                StreamObservation::Task { view, .. } => view_artifact_ids(view),
                StreamObservation::Artifact { .. } => Vec::new(),
            };
            let done = if let (StreamObservation::Task { view, source, .. }, false) =
                (obs, ids.is_empty())
            {
                // A snapshot with artifacts reads them, and the attempt: write what the
                // batch holds first.
                write_observed(tx, e, now, &mut unwritten, &mut slots, &mut out)?;
                touched.write(tx, id, now).map_err(e)?;
                Self::change_in_written(tx, &e, now, id, Wanted::Only(&ids), |held, arts| {
                    let change = Self::task_change(held, arts, view, *source)?;
                    Self::limit_change(tx, &e, now, limits, held, change, &mut over_limit)
                })
                .map(|(applied, event, row)| {
                    held.insert(id, row);
                    (applied, event)
                })
            } else {
                let decided = match obs {
                    StreamObservation::Task { view, source, .. } => held
                        .get(&id)
                        .ok_or(JournalError::UnknownAttempt(id.0))
                        .and_then(|h| {
                            // No artifact: the limits read nothing.
                            let change = Self::task_change(h, &[], view, *source)?;
                            Self::limit_change(tx, &e, now, limits, h, change, &mut false)
                        }),
                    StreamObservation::Artifact { update, .. } => Self::cached_artifact_change(
                        tx,
                        &e,
                        (limits, &mut over_limit),
                        (id, held.get(&id)),
                        update,
                        &mut touched,
                    ),
                };
                decided.map(|change| {
                    let Some((h, written)) = change.and_then(|c| {
                        let h = held.get(&id)?;
                        Some((h, Written::of(h, c, now)?))
                    }) else {
                        return (Applied::Unchanged, None);
                    };
                    let applied = written.applied(h);
                    if let Some(before) = held.insert(id, written.next.clone()) {
                        unwritten.push(before, written);
                        slots.push(out.len());
                    }
                    (applied, None)
                })
            };
            match done {
                Ok((applied, event)) => out.push(Ok(Recorded {
                    applied,
                    event,
                    over_limit,
                })),
                // Refused before anything of it was written: the rest of the batch goes on.
                Err(
                    err @ (JournalError::TaskMismatch { .. }
                    | JournalError::Transition { .. }
                    | JournalError::UnknownAttempt(_)),
                ) => out.push(Err(err)),
                Err(err) => return Err(err),
            }
            if unwritten.len() >= WRITE_AT {
                write_observed(tx, e, now, &mut unwritten, &mut slots, &mut out)?;
            }
        }
        write_observed(tx, e, now, &mut unwritten, &mut slots, &mut out)?;
        touched.write_all(tx, now).map_err(e)?;
        let changed = out
            .iter()
            .any(|r| r.as_ref().is_ok_and(|r| r.applied.changed()));
        Ok((out, changed))
    }

    /// What [`Journal::apply_artifact_update`] changes, inside a batch, of `held` (the attempt
    /// `id` as the batch left it): the artifact is read once into `touched`, updated there in
    /// place, and written by the caller at the end of the batch; the change is the attempt's
    /// `updated_at` and the event, as for a single update (or, past a limit, its error).
    fn cached_artifact_change(
        tx: &Tx,
        e: &impl Fn(DbError) -> JournalError,
        (limits, over_limit): (SizeLimits, &mut bool),
        (id, held): (AttemptId, Option<&Attempt>),
        update: &ArtifactUpdate,
        touched: &mut ArtifactCache,
    ) -> Result<Option<Change>, JournalError> {
        // Past a limit no artifact of the attempt is read or kept any more.
        if touched.budget(tx, id).map_err(e)?.over {
            return Ok(None);
        }
        let held = held.ok_or(JournalError::UnknownAttempt(id.0))?;
        if held.current_task_id() != Some(update.task_id.as_str()) {
            return Err(JournalError::TaskMismatch {
                attempt: held.id.0,
                held: held.current_task_id().unwrap_or_default().to_owned(),
                seen: update.task_id.clone(),
            });
        }
        let artifact_id = update.artifact.artifact_id.as_str();
        let slot = touched.slot(tx, id, artifact_id, update).map_err(e)?;
        if let Some(reason) = touched.over_limit(slot, update, limits) {
            touched.budget(tx, id).map_err(e)?.over = true;
            *over_limit = true;
            let mut next = held.clone();
            next.error = Some(reason.clone());
            return Ok(Some(Change {
                next,
                artifacts: Vec::new(),
                kind: "failed-for-good",
                detail: json!({"reason": reason}),
                force_event: true,
            }));
        }
        if !touched.update(slot, update) {
            return Ok(None);
        }
        Ok(Some(Change {
            next: held.clone(),
            artifacts: Vec::new(),
            kind: "artifact",
            detail: json!({
                "source": Source::Stream.as_str(),
                "artifactId": update.artifact.artifact_id,
                "append": update.append,
                "lastChunk": update.last_chunk,
            }),
            force_event: true,
        }))
    }
}

/// Writes what [`Journal::apply_observations`] has decided and not written (`slots`: the
/// observation of each change, in order), and gives each its event's id.
fn write_observed(
    tx: &Tx,
    e: &dyn Fn(DbError) -> JournalError,
    now: DateTimeUtc,
    unwritten: &mut Unwritten,
    slots: &mut Vec<usize>,
    out: &mut [Result<Recorded, JournalError>],
) -> Result<(), JournalError> {
    for (slot, event) in slots.drain(..).zip(unwritten.write_ids(tx, e, now)?) {
        if let Ok(r) = &mut out[slot] {
            r.event = Some(event);
        }
    }
    Ok(())
}

impl Journal {
    /// Returns whether journaling `view` would find the attempt past a [`SizeLimits`] limit
    /// (already, or by the artifacts `view` brings); reads nothing when it brings none.
    pub fn over_size_limits(&self, id: AttemptId, view: &TaskView) -> Result<bool, JournalError> {
        if view.artifacts.as_ref().is_none_or(Vec::is_empty) {
            return Ok(false);
        }
        let limits = self.limits;
        self.read("read the attempt's artifacts", |c| {
            if queries::failed_for_good(c, id)?.is_some_and(|r| is_over_limit(&r)) {
                return Ok(true);
            }
            let seen = view.artifacts.as_deref().unwrap_or_default();
            let sizes: Vec<u64> = seen.iter().map(view_len).collect();
            let others: u64 = queries::artifact_sizes(c, id)?
                .into_iter()
                .filter(|(held, _)| !seen.iter().any(|a| a.artifact_id == *held))
                .map(|(_, n)| n)
                .sum();
            Ok(sizes.iter().any(|n| *n > limits.artifact)
                || others + sizes.iter().sum::<u64>() > limits.task)
        })
    }
}

impl Journal {
    /// Holds a change's artifacts to the [`SizeLimits`]: when they would take one artifact or
    /// all of the attempt's past a limit, none of them is written, the attempt's `error` says
    /// which limit, and a `failed-for-good` event records it (sets `over_limit`). The rest of
    /// the change (the remote state, as reported) is kept. Once an attempt went past a limit,
    /// no artifact of it is written any more.
    pub(super) fn limit_change(
        tx: &Tx,
        e: &impl Fn(DbError) -> JournalError,
        now: DateTimeUtc,
        limits: SizeLimits,
        held: &Attempt,
        change: Option<Change>,
        over_limit: &mut bool,
    ) -> Result<Option<Change>, JournalError> {
        let Some(mut change) = change else {
            return Ok(None);
        };
        // The error stays while the attempt is past a limit (a new state does not clear it).
        if change.next.error.is_none() && held.error.as_deref().is_some_and(is_over_limit) {
            change.next.error.clone_from(&held.error);
        }
        if change.artifacts.is_empty() {
            return Ok(Some(change));
        }
        let reason = match queries::failed_for_good(tx, held.id).map_err(e)? {
            Some(reason) if is_over_limit(&reason) => Some((reason, false)),
            _ => {
                let sizes: Vec<u64> = change.artifacts.iter().map(artifact_len).collect();
                let others: u64 = queries::artifact_sizes(tx, held.id)
                    .map_err(e)?
                    .into_iter()
                    .filter(|(id, _)| !change.artifacts.iter().any(|a| a.artifact_id == *id))
                    .map(|(_, n)| n)
                    .sum();
                let total = others + sizes.iter().sum::<u64>();
                let too_large = change
                    .artifacts
                    .iter()
                    .zip(&sizes)
                    .find(|(_, n)| **n > limits.artifact);
                if let Some((a, n)) = too_large {
                    Some((
                        artifact_too_large(&a.artifact_id, *n, limits.artifact),
                        true,
                    ))
                } else if total > limits.task {
                    Some((task_too_large(total, limits.task), true))
                } else {
                    None
                }
            }
        };
        let Some((reason, first)) = reason else {
            return Ok(Some(change));
        };
        change.artifacts.clear();
        change.next.error = Some(reason.clone());
        // The raw task is kept only when something else of it changed.
        let mut rest = change.next.clone();
        rest.last_task_json.clone_from(&held.last_task_json);
        if rest == *held {
            change.next = rest;
        }
        if first {
            Self::insert_over_limit_event(tx, e, now, held, &reason)?;
            *over_limit = true;
        }
        Ok(Some(change))
    }

    /// Appends the `failed-for-good` event of an attempt that went past a size limit; returns
    /// its id.
    fn insert_over_limit_event(
        tx: &Tx,
        e: &impl Fn(DbError) -> JournalError,
        now: DateTimeUtc,
        held: &Attempt,
        reason: &str,
    ) -> Result<i64, JournalError> {
        queries::insert_event(
            tx,
            &NewEvent {
                at: queries::ms(now),
                workflow: None,
                step: Some(held.step_id),
                attempt: Some(held.id),
                kind: "failed-for-good",
                from: Some(held.state.as_str()),
                to: Some(held.state.as_str()),
                detail: Some(&json!({"reason": reason})),
            },
        )
        .map_err(e)
    }
}

/// The error of an artifact past `--max-artifact-size`.
fn artifact_too_large(artifact_id: &str, size: u64, limit: u64) -> String {
    format!(
        "{ARTIFACT_TOO_LARGE}: artifact `{artifact_id}` would reach {size} bytes, over \
         --max-artifact-size ({limit} bytes); the journal holds it as it was before"
    )
}

/// The error of a task's artifacts past `--max-task-size`.
fn task_too_large(size: u64, limit: u64) -> String {
    format!(
        "{TASK_TOO_LARGE}: the task's artifacts would reach {size} bytes, over --max-task-size \
         ({limit} bytes); the journal holds them as they were before"
    )
}

/// Returns the bytes an artifact takes in the journal, as the size limits count them: its
/// parts' JSON and its head (id, name, description, metadata JSON). An agent cannot get past
/// `--max-artifact-size` by putting the bulk in a name or in metadata.
pub(super) fn artifact_len(a: &Artifact) -> u64 {
    let (name, description) = (a.name.as_deref(), a.description.as_deref());
    json_len(&a.parts) + head_len(&a.artifact_id, name, description, a.metadata.as_ref())
}

/// [`artifact_len`] of an artifact as an agent sent it.
fn view_len(a: &ArtifactView) -> u64 {
    let (name, description) = (a.name.as_deref(), a.description.as_deref());
    json_len(&a.parts) + head_len(&a.artifact_id, name, description, a.metadata.as_ref())
}

/// Returns the bytes of an artifact's head: all of it but its parts.
fn head_len(
    id: &str,
    name: Option<&str>,
    description: Option<&str>,
    metadata: Option<&Value>,
) -> u64 {
    let text = |t: Option<&str>| t.map_or(0, str::len) as u64;
    id.len() as u64 + text(name) + text(description) + metadata.map_or(0, json_len)
}

/// Returns the bytes of `v` as compact JSON (what the journal stores), without building it.
pub(super) fn json_len(v: &Value) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a `Value` to a writer that never fails cannot fail.
    let _ = serde_json::to_writer(&mut count, v);
    count.0
}

impl StreamObservation {
    /// Returns about the bytes it holds: a task's raw JSON, status message and artifacts, an
    /// update's artifact, as the journal would store them. What a follow reads ahead of its
    /// group commit is bounded by it, not only by how many observations it holds.
    pub fn held_bytes(&self) -> u64 {
        match self {
            Self::Task { view, .. } => {
                view.raw_json.as_ref().map_or(0, |r| r.len() as u64)
                    + view.status_message.as_ref().map_or(0, json_len)
                    + view.artifacts.iter().flatten().map(view_len).sum::<u64>()
            }
            Self::Artifact { update, .. } => view_len(&update.artifact),
        }
    }
}

/// Returns the artifact ids a task view names (a snapshot replaces only those).
pub(super) fn view_artifact_ids(view: &TaskView) -> Vec<&str> {
    view.artifacts
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(|a| a.artifact_id.as_str())
        .collect()
}

/// The artifacts a batch of stream updates touched, in the order first touched, each as it
/// stands after the updates so far and whether it must be written.
#[derive(Debug, Default)]
struct ArtifactCache {
    slots: Vec<Slot>,
    /// Per attempt touched: the bytes of its artifacts as they stand, and whether it went past
    /// a limit.
    budgets: Vec<(AttemptId, Budget)>,
}

/// One artifact a batch touched.
#[derive(Debug)]
struct Slot {
    attempt: AttemptId,
    artifact_id: String,
    held: Held,
    /// Whether it must be written.
    dirty: bool,
    /// The bytes it takes as it stands, parts and head ([`artifact_len`]; 0: not held).
    size: u64,
}

/// An artifact as a batch holds it.
#[derive(Debug)]
enum Held {
    /// Held whole (`None`: not journaled yet): read to be replaced, or new; written whole.
    Whole(Option<Artifact>),
    /// A journaled artifact only appended to: its parts are never read. `head` is the artifact
    /// as it stands without its parts, `journaled` its head as journaled, `added` the parts
    /// appended in this batch; written as one chunk ([`queries::append_artifact_chunk`]).
    Tail {
        journaled: Artifact,
        head: Artifact,
        added: Vec<Value>,
    },
}

/// What an attempt's artifacts weigh, as they stand in a batch.
#[derive(Debug, Clone, Copy)]
struct Budget {
    /// Bytes of all its artifacts ([`artifact_len`]).
    total: u64,
    /// Whether it went past a size limit (nothing of its artifacts is kept any more).
    over: bool,
}

impl ArtifactCache {
    /// Returns the budget of an attempt, read from the journal the first time.
    fn budget(&mut self, tx: &Tx, id: AttemptId) -> DbResult<&mut Budget> {
        let i = if let Some(i) = self.budgets.iter().position(|(a, _)| *a == id) {
            i
        } else {
            let over = queries::failed_for_good(tx, id)?.is_some_and(|r| is_over_limit(&r));
            let total = queries::artifact_sizes(tx, id)?
                .into_iter()
                .map(|(_, n)| n)
                .sum();
            self.budgets.push((id, Budget { total, over }));
            self.budgets.len() - 1
        };
        Ok(&mut self.budgets[i].1)
    }

    /// Returns the slot of an artifact for update `u`, read from the journal the first time: an
    /// append reads only its head (its parts are never loaded), a replacing update the whole
    /// artifact (to tell whether it changes anything).
    fn slot(
        &mut self,
        tx: &Tx,
        id: AttemptId,
        artifact_id: &str,
        u: &ArtifactUpdate,
    ) -> DbResult<usize> {
        if let Some(i) = self
            .slots
            .iter()
            .position(|s| s.attempt == id && s.artifact_id == artifact_id)
        {
            if !u.append
                && let Held::Tail { head, added, .. } = &self.slots[i].held
            {
                // Replaced after appends: compare with the whole of it as it stands.
                let mut whole = queries::artifact_of(tx, id, artifact_id)?;
                if let Some(a) = &mut whole {
                    if let Value::Array(parts) = &mut a.parts {
                        parts.extend(added.iter().cloned());
                    }
                    a.name.clone_from(&head.name);
                    a.description.clone_from(&head.description);
                    a.metadata.clone_from(&head.metadata);
                    a.last_chunk = head.last_chunk;
                }
                self.slots[i].held = Held::Whole(whole);
            }
            return Ok(i);
        }
        let (held, size) = match queries::artifact_head(tx, id, artifact_id)? {
            Some(h) if u.append && h.parts_are_array => (
                Held::Tail {
                    journaled: h.artifact.clone(),
                    head: h.artifact,
                    added: Vec::new(),
                },
                h.size,
            ),
            Some(h) => (
                Held::Whole(queries::artifact_of(tx, id, artifact_id)?),
                h.size,
            ),
            None => (Held::Whole(None), 0),
        };
        self.slots.push(Slot {
            attempt: id,
            artifact_id: artifact_id.to_owned(),
            held,
            dirty: false,
            size,
        });
        Ok(self.slots.len() - 1)
    }

    /// Returns the error if applying `u` to a slot would take its artifact or its attempt's
    /// past a limit (the update is then not applied); tracks the sizes otherwise. Call it
    /// after [`ArtifactCache::budget`] for the slot's attempt, before [`ArtifactCache::update`].
    fn over_limit(
        &mut self,
        slot: usize,
        u: &ArtifactUpdate,
        limits: SizeLimits,
    ) -> Option<String> {
        let s = &self.slots[slot];
        let (id, before) = (s.attempt, s.size);
        // The held artifact an append adds to, and whether its parts are an array.
        let appended_to = match &s.held {
            Held::Tail { head, .. } => Some((head, true)),
            Held::Whole(Some(old)) => Some((old, old.parts.is_array())),
            Held::Whole(None) => None,
        };
        let v = &u.artifact;
        let after = match appended_to {
            Some((old, is_array)) if u.append => {
                if old.last_chunk {
                    return None;
                }
                let old_head = head_len(
                    &old.artifact_id,
                    old.name.as_deref(),
                    old.description.as_deref(),
                    old.metadata.as_ref(),
                );
                // The head as `merge_head` leaves it.
                let new_head = head_len(
                    &old.artifact_id,
                    v.name.as_deref().or(old.name.as_deref()),
                    v.description.as_deref().or(old.description.as_deref()),
                    v.metadata.as_ref().or(old.metadata.as_ref()),
                );
                let added = v.parts.as_array().map_or(&[][..], Vec::as_slice);
                let parts = if is_array {
                    before.saturating_sub(old_head)
                } else {
                    2
                };
                // `[]` holds no part: the first one added needs no comma.
                new_head + parts + added.iter().map(|p| json_len(p) + 1).sum::<u64>()
                    - u64::from(parts == 2 && !added.is_empty())
            }
            _ => view_len(v),
        };
        let budget = &mut self.budgets.iter_mut().find(|(a, _)| *a == id)?.1;
        let total = budget.total - before.min(budget.total) + after;
        if after > limits.artifact {
            return Some(artifact_too_large(
                &u.artifact.artifact_id,
                after,
                limits.artifact,
            ));
        }
        if total > limits.task {
            return Some(task_too_large(total, limits.task));
        }
        budget.total = total;
        self.slots[slot].size = after;
        None
    }

    /// Applies a stream update to a slot as [`merge_artifact_update`] does, appending in
    /// place; returns whether it changed anything.
    fn update(&mut self, slot: usize, u: &ArtifactUpdate) -> bool {
        let Slot { held, dirty, .. } = &mut self.slots[slot];
        let v = &u.artifact;
        let added = v.parts.as_array().map_or(&[][..], Vec::as_slice);
        let changed = match held {
            Held::Tail {
                head, added: tail, ..
            } => {
                if head.last_chunk {
                    return false;
                }
                let changed = merge_head(head, u, !added.is_empty());
                if changed {
                    tail.extend(added.iter().cloned());
                }
                changed
            }
            Held::Whole(Some(old)) if u.append => {
                if old.last_chunk {
                    return false;
                }
                let changed = merge_head(old, u, !added.is_empty() || !old.parts.is_array());
                if changed {
                    if let Value::Array(parts) = &mut old.parts {
                        parts.extend(added.iter().cloned());
                    } else {
                        old.parts = Value::Array(added.to_vec());
                    }
                }
                changed
            }
            Held::Whole(held) => {
                let new = Artifact {
                    artifact_id: v.artifact_id.clone(),
                    name: v.name.clone(),
                    description: v.description.clone(),
                    parts: v.parts.clone(),
                    metadata: v.metadata.clone(),
                    last_chunk: u.last_chunk,
                };
                let changed = held.as_ref() != Some(&new);
                if changed {
                    *held = Some(new);
                }
                changed
            }
        };
        *dirty |= changed;
        changed
    }

    /// Writes the changed artifacts of one attempt and forgets that attempt's slots (a
    /// snapshot is about to read and replace them).
    fn write(&mut self, conn: &Tx, id: AttemptId, now: DateTimeUtc) -> DbResult<()> {
        let (mine, others) = std::mem::take(&mut self.slots)
            .into_iter()
            .partition(|s| s.attempt == id);
        self.slots = others;
        self.budgets.retain(|(a, _)| *a != id);
        write_slots(conn, mine, now)
    }

    /// Writes every changed artifact, in the order first touched.
    fn write_all(&mut self, conn: &Tx, now: DateTimeUtc) -> DbResult<()> {
        self.budgets.clear();
        write_slots(conn, std::mem::take(&mut self.slots), now)
    }
}

/// Writes the changed slots, in order: whole artifacts whole, appends as one chunk each.
fn write_slots(conn: &Tx, slots: Vec<Slot>, now: DateTimeUtc) -> DbResult<()> {
    for slot in slots.into_iter().filter(|s| s.dirty) {
        match slot.held {
            Held::Whole(Some(artifact)) => {
                queries::upsert_artifact(conn, slot.attempt, &artifact, queries::ms(now))?;
            }
            Held::Whole(None) => {}
            Held::Tail {
                journaled,
                head,
                added,
            } => queries::append_artifact_chunk(
                conn,
                slot.attempt,
                &journaled,
                &head,
                &added,
                queries::ms(now),
            )?,
        }
    }
    Ok(())
}

/// Merges an append's name, description, metadata and `lastChunk` into the artifact it adds
/// to; returns whether anything changed (`adds`: it also adds parts).
fn merge_head(old: &mut Artifact, u: &ArtifactUpdate, adds: bool) -> bool {
    let v = &u.artifact;
    let name = v.name.clone().or_else(|| old.name.clone());
    let description = v.description.clone().or_else(|| old.description.clone());
    let metadata = v.metadata.clone().or_else(|| old.metadata.clone());
    let changed = adds
        || name != old.name
        || description != old.description
        || metadata != old.metadata
        || u.last_chunk != old.last_chunk;
    if changed {
        old.name = name;
        old.description = description;
        old.metadata = metadata;
        old.last_chunk = u.last_chunk;
    }
    changed
}

/// Returns the artifacts of a snapshot that differ from the held ones (a snapshot holds the
/// accumulated artifacts: it replaces; artifacts it lacks are kept).
fn merge_snapshot_artifacts(held: &[Artifact], seen: Option<&[ArtifactView]>) -> Vec<Artifact> {
    let Some(seen) = seen else {
        return Vec::new();
    };
    seen.iter()
        .filter_map(|v| {
            let old = held.iter().find(|a| a.artifact_id == v.artifact_id);
            let new = Artifact {
                artifact_id: v.artifact_id.clone(),
                name: v.name.clone(),
                description: v.description.clone(),
                parts: v.parts.clone(),
                metadata: v.metadata.clone(),
                last_chunk: old.is_some_and(|a| a.last_chunk),
            };
            (old != Some(&new)).then_some(new)
        })
        .collect()
}

/// Returns the artifact after a stream update, or `None` when the update is ignored.
fn merge_artifact_update(existing: Option<&Artifact>, u: &ArtifactUpdate) -> Option<Artifact> {
    let v = &u.artifact;
    match existing {
        Some(old) if u.append => {
            if old.last_chunk {
                return None;
            }
            let mut parts = old.parts.as_array().cloned().unwrap_or_default();
            parts.extend(v.parts.as_array().cloned().unwrap_or_default());
            Some(Artifact {
                artifact_id: old.artifact_id.clone(),
                name: v.name.clone().or_else(|| old.name.clone()),
                description: v.description.clone().or_else(|| old.description.clone()),
                parts: Value::Array(parts),
                metadata: v.metadata.clone().or_else(|| old.metadata.clone()),
                last_chunk: u.last_chunk,
            })
        }
        _ => Some(Artifact {
            artifact_id: v.artifact_id.clone(),
            name: v.name.clone(),
            description: v.description.clone(),
            parts: v.parts.clone(),
            metadata: v.metadata.clone(),
            last_chunk: u.last_chunk,
        }),
    }
}
