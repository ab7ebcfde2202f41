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
//! for all the rows that change the same columns: [`queries::group_write_stmts`]). A task that brings artifacts reads them, and
//! the attempt's sizes, from the journal: what the batch decided before it is written first.

use std::collections::HashMap;

use super::change::{Wanted, Written};
use super::observe::view_artifact_ids;
use super::queries::{self, GroupChange};
use super::sql::{DbError, Tx};
use super::{Applied, Attempt, AttemptId, DateTimeUtc, Journal, JournalError, Source};
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
            let mut distinct = attempts.clone();
            distinct.sort_unstable_by_key(|a| a.0);
            distinct.dedup();
            // Each attempt as the batch so far left it.
            let mut held: HashMap<AttemptId, Attempt> = queries::attempts_by_ids(tx, &distinct)
                .map_err(e)?
                .into_iter()
                .map(|a| (a.id, a))
                .collect();
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
                            let before = held.insert(*id, written.next.clone());
                            unwritten.0.extend(before.map(|b| (b, written)));
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

/// The changes a batch decided and has not written yet, in order: each with the row it
/// changed. None of them writes an artifact.
#[derive(Default)]
struct Unwritten(Vec<(Attempt, Written)>);

impl Unwritten {
    /// Writes them (the rows and their events, in order, in one pipeline: on PostgreSQL one
    /// statement per kind) and forgets them.
    fn write(
        &mut self,
        tx: &Tx,
        e: &dyn Fn(DbError) -> JournalError,
        now: DateTimeUtc,
    ) -> Result<(), JournalError> {
        if self.0.is_empty() {
            return Ok(());
        }
        let changes: Vec<GroupChange<'_>> = self
            .0
            .iter()
            .map(|(held, written)| GroupChange {
                held,
                next: &written.next,
                event: written.event(held, now),
            })
            .collect();
        let stmts = queries::group_write_stmts(tx.dialect(), &changes);
        tx.pipeline(&stmts, &mut |_, _| Ok(())).map_err(e)?;
        drop((stmts, changes));
        self.0.clear();
        Ok(())
    }
}
