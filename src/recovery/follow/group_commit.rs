//! The group commit: what the follows of one task read, journaled together in one transaction.

use crate::journal::{Journal, StreamObservation};
use crate::recovery::commit::{Done, Queue, WriterMode};

/// What the group commit hands back for one observation.
pub(super) type CommitResult = Done<StreamObservation>;

/// The observations the follows of one task have read and not yet journaled, and the commit
/// that journals them together: a [`Queue`] of stream observations that commits what it holds
/// when dropped.
///
/// A follow queues what it reads ([`Queue::submit`]) and, before it waits for anything else,
/// waits for their results. [`Queue::beside`] polls the follows first and then commits whatever
/// they queued, in ONE transaction (`Journal::apply_observations`), every time the task is
/// polled: so the events that arrive together — a burst of one fast stream, or one event on
/// each of many streams — share one durable commit, and nothing stays queued while the task
/// sleeps (a signal that drops the command finds the queue empty).
pub(crate) struct GroupCommit<'j>(Queue<'j, StreamObservation>);

impl<'j> GroupCommit<'j> {
    /// Returns an empty group commit on `journal`, its commits made as `mode` says.
    pub(crate) fn new(journal: &'j Journal, mode: WriterMode) -> Self {
        Self(Queue::new(journal, mode))
    }

    /// Hands everything queued to the writer as one transaction; each observation gets its
    /// result once it is made (inline: at once).
    pub(crate) fn commit_now(&self) {
        // Every observation has a waiter: a failed commit goes to them.
        self.0.hand_off();
    }
}

impl<'j> std::ops::Deref for GroupCommit<'j> {
    type Target = Queue<'j, StreamObservation>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl Drop for GroupCommit<'_> {
    /// Journals what is still queued when the follows are dropped (a signal, a deadline):
    /// everything read is committed, though no longer shown.
    fn drop(&mut self) {
        // A killed process runs no drop-time work (the simulator's crash).
        if crate::sim_seam::killed() {
            return;
        }
        self.commit_now();
    }
}
