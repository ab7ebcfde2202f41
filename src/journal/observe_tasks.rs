//! A group commit of routine `GetTask` observations (a reconcile pass's reads): many remote
//! Tasks applied in ONE transaction, in a few statements on the wire rather than several per
//! task.
//!
//! Each task goes through the same read-decide-write cycle as one applied alone
//! ([`Journal::apply_task`]): the held row, [`Journal::task_change`] (the one transition
//! function), the size limits, and a change written with its event, nothing when nothing
//! differs. Only the reads and the writes are gathered: the held rows are read in one
//! statement, each decision is made against the row as the batch so far left it, and the
//! writes are sent together, in the batch's order ([`Db::pipeline`](super::sql::Db::pipeline):
//! on PostgreSQL one round trip for all of them, and one statement for all the events and one
//! for all the rows that change the same columns: [`group_write_stmts`](super::queries::group_write_stmts)). A task that brings artifacts reads them, and
//! the attempt's sizes, from the journal: what the batch decided before it is written first.

use super::change::{Wanted, Written};
use super::group::{Unwritten, held_rows};
use super::observe::view_artifact_ids;
use super::{Applied, AttemptId, Journal, JournalError, Source};
use crate::model::TaskView;

impl Journal {
    /// Applies many remote Tasks as [`Journal::apply_task`] does, in ONE transaction (a
    /// reconcile pass group-commits its routine observations: one durable write for many).
    ///
    /// Only for observations that may be lost in a crash: they are re-read on the next pass.
    /// Returns what each did, in order.
    pub fn apply_tasks(
        &self,
        batch: &[(AttemptId, TaskView)],
        source: Source,
    ) -> Result<Vec<Applied>, JournalError> {
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        let limits = self.limits;
        let attempts: Vec<AttemptId> = batch.iter().map(|(id, _)| *id).collect();
        self.write_attempts_if_changed(&attempts, "journal the tasks", |tx, e, now| {
            // Each attempt as the batch so far left it.
            let mut held = held_rows(tx, e, &attempts)?;
            let mut unwritten = Unwritten::default();
            let mut out = Vec::with_capacity(batch.len());
            for (id, view) in batch {
                let ids = view_artifact_ids(view);
                let applied = if ids.is_empty() {
                    let h = held.get(id).ok_or(JournalError::UnknownAttempt(id.0))?;
                    // No artifact: the limits read nothing, and the change writes none.
                    let change = Self::task_change(h, &[], view, source)?;
                    let change = Self::limit_change(tx, &e, now, limits, h, change, &mut false)?;
                    match change.and_then(|c| Written::of(h, c, now)) {
                        None => Applied::Unchanged,
                        Some(written) => {
                            let applied = written.applied(h);
                            if let Some(before) = held.insert(*id, written.next.clone()) {
                                unwritten.push(before, written);
                            }
                            applied
                        }
                    }
                } else {
                    unwritten.write(tx, e, now)?;
                    let (applied, _, attempt) = Self::change_in_written(
                        tx,
                        &e,
                        now,
                        *id,
                        Wanted::Only(&ids),
                        |h, artifacts| {
                            let change = Self::task_change(h, artifacts, view, source)?;
                            Self::limit_change(tx, &e, now, limits, h, change, &mut false)
                        },
                    )?;
                    held.insert(*id, attempt);
                    applied
                };
                out.push(applied);
            }
            unwritten.write(tx, e, now)?;
            let changed = out.iter().any(|a| a.changed());
            Ok((out, changed))
        })
    }
}
