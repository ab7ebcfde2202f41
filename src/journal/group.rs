//! What a group commit holds between its one read and its writes: each attempt as the batch
//! so far left it, and the changes (and lease releases) decided and not written yet.
//!
//! A batch reads its attempts in one statement, decides each change in memory against the
//! row as the changes before it left it, and writes them together, in order
//! ([`queries::group_write_stmts`] through [`Db::pipeline`](super::sql::Db::pipeline): on
//! PostgreSQL one round trip, one statement per set of changed columns and one for all the
//! events). A change that reads the journal (its artifacts) or writes it row by row must
//! [`Unwritten::write`] what came before it first, so that the events keep the batch's order.

use std::collections::HashMap;

use super::change::Written;
use super::queries::{self, GroupChange};
use super::sql::{DbError, Dialect, Tx};
use super::{Attempt, AttemptId, DateTimeUtc, JournalError};

/// Each attempt of a batch as the batch so far left it, read in ONE statement.
pub(super) fn held_rows(
    tx: &Tx,
    e: &dyn Fn(DbError) -> JournalError,
    attempts: &[AttemptId],
) -> Result<HashMap<AttemptId, Attempt>, JournalError> {
    let mut distinct = attempts.to_vec();
    distinct.sort_unstable_by_key(|a| a.0);
    distinct.dedup();
    if let [one] = distinct[..] {
        // One attempt (a single `delegate`'s answer): the statement that read it under its
        // claim, prepared already in this process, rather than a second one to prepare.
        return Ok(queries::attempt_by_id(tx, one)
            .map_err(e)?
            .map(|a| (a.id, a))
            .into_iter()
            .collect());
    }
    Ok(queries::attempts_by_ids(tx, &distinct)
        .map_err(e)?
        .into_iter()
        .map(|a| (a.id, a))
        .collect())
}

/// `now` as the journal stores it (to the millisecond): the rows a batch keeps in memory are
/// then the rows a read after its commit returns.
pub(super) fn as_stored(now: DateTimeUtc) -> DateTimeUtc {
    queries::time(queries::ms(now))
}

/// How many changes a batch of unbounded size (the follows' of `reconcile --follow-for`, many
/// streams in one commit) holds unwritten before it writes them: each holds two copies of its
/// attempt's row. What a stream brings is bounded where it is read (the follower's read-ahead);
/// 32 here instead of 256 left a 16 MiB stream's peak where it was (38.5–39.3 MB against
/// 38.9–39.5 MB, five runs each) and costs a PostgreSQL batch more round trips.
pub(super) const WRITE_AT: usize = 256;

/// The changes a batch decided and has not written yet, in order, each with the row it
/// changed (none of them writes an artifact), and the attempts whose lease it releases
/// without a change.
#[derive(Default)]
pub(super) struct Unwritten {
    changes: Vec<(Attempt, Written)>,
    releases: Vec<AttemptId>,
}

impl Unwritten {
    /// Adds a change of `held` (the row as the batch left it before the change).
    pub(super) fn push(&mut self, held: Attempt, written: Written) {
        self.changes.push((held, written));
    }

    /// How many changes are unwritten.
    pub(super) fn len(&self) -> usize {
        self.changes.len()
    }

    /// Adds the release of an attempt's lease, with no change and no event.
    pub(super) fn release(&mut self, id: AttemptId) {
        self.releases.push(id);
    }

    /// Writes them (the rows and their events, in order, then the releases, in one pipeline:
    /// on PostgreSQL one statement per kind) and forgets them.
    pub(super) fn write(
        &mut self,
        tx: &Tx,
        e: &dyn Fn(DbError) -> JournalError,
        now: DateTimeUtc,
    ) -> Result<(), JournalError> {
        self.run(tx, e, now, false).map(drop)
    }

    /// [`Unwritten::write`], returning the ids of the events, in the changes' order.
    pub(super) fn write_ids(
        &mut self,
        tx: &Tx,
        e: &dyn Fn(DbError) -> JournalError,
        now: DateTimeUtc,
    ) -> Result<Vec<i64>, JournalError> {
        self.run(tx, e, now, true)
    }

    fn run(
        &mut self,
        tx: &Tx,
        e: &dyn Fn(DbError) -> JournalError,
        now: DateTimeUtc,
        ids: bool,
    ) -> Result<Vec<i64>, JournalError> {
        let mut events = Vec::new();
        if self.changes.is_empty() && self.releases.is_empty() {
            return Ok(events);
        }
        let releases = (!self.releases.is_empty())
            .then(|| queries::release_leases_stmt(tx.dialect(), &self.releases));
        if ids && tx.dialect() == Dialect::Sqlite {
            // In process, statement by statement: each event's id as it is inserted.
            for (held, written) in &self.changes {
                queries::update_attempt_from(tx, held, &written.next, None).map_err(e)?;
                events.push(queries::insert_event(tx, &written.event(held, now)).map_err(e)?);
            }
            if let Some(s) = releases {
                tx.exec(&s.sql, &s.args).map_err(e)?;
            }
        } else {
            let changes: Vec<GroupChange<'_>> = self
                .changes
                .iter()
                .map(|(held, written)| GroupChange {
                    held,
                    next: &written.next,
                    event: written.event(held, now),
                })
                .collect();
            let mut stmts = if ids {
                queries::group_write_stmts_returning(tx.dialect(), &changes)
            } else {
                queries::group_write_stmts(tx.dialect(), &changes)
            };
            stmts.extend(releases);
            // Only the events' statements return rows: their ids, ascending in their order.
            tx.pipeline(&stmts, &mut |_, r| {
                events.push(r.get::<i64>(0)?);
                Ok(())
            })
            .map_err(e)?;
            events.sort_unstable();
        }
        self.changes.clear();
        self.releases.clear();
        Ok(events)
    }
}
