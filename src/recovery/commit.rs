//! The one group-commit mechanism: records queued as work goes on, journaled together in ONE
//! transaction (one fsync for many), each record's result handed back to whoever waits for it.
//!
//! - [`Records`]: what one group commit journals, and the journal call that does it: routine
//!   `GetTask` observations (`Journal::apply_tasks`), send outcomes (`Journal::record_sends`),
//!   stream observations (`Journal::apply_observations`).
//! - [`Queue`]: the records waiting on the command's own connection, committed when its owner
//!   says (`commit`), or at the end of the poll that asked for it ([`Queue::beside`]).
//! - [`Writer`]: a thread with a connection of its own that makes the commits, so that sends go
//!   on while a commit waits for the disk.
//!
//! The users differ only in when they commit and what they wait for, and keep that in a thin
//! adapter: the reconcile pass pushes records nobody waits for and commits every `BATCH`
//! records and at its end (`reconcile.rs`); the follows
//! submit each observation and wait for it before showing it (`follow.rs`, `GroupCommit`);
//! `delegate --plan` hands a whole batch of answers to the [`Writer`] and polls for it
//! (`send/batch.rs`). Dropping a queue commits nothing: each owner's `Drop` decides (they all
//! commit what they hold; the pass not while panicking).

use std::cell::{Cell, RefCell};

use anyhow::Context as _;
use tokio::sync::oneshot;

use crate::a2a::TaskView;
use crate::journal::{
    Attempt, AttemptId, Journal, JournalError, Recorded, SendRecord, Source, StreamObservation,
};

/// What a group commit hands back for one record.
pub(crate) type Done<R> = Result<<R as Records>::Done, JournalError>;

/// What one group commit journals, in one transaction.
pub(crate) trait Records: Sized {
    /// What journaling one record gives.
    type Done;
    /// What the transaction is called in a storage error.
    const ACTION: &'static str;
    /// Journals every record in ONE transaction; returns what each gave, in order.
    fn commit(journal: &Journal, records: &[Self]) -> Result<Vec<Done<Self>>, JournalError>;
}

/// A routine `GetTask` observation (a running task still running), lost harmlessly in a crash:
/// it is read again next pass.
impl Records for (AttemptId, TaskView) {
    type Done = crate::journal::Applied;
    const ACTION: &'static str = "journal the tasks";

    fn commit(journal: &Journal, records: &[Self]) -> Result<Vec<Done<Self>>, JournalError> {
        Ok(journal
            .apply_tasks(records, Source::GetTask)?
            .into_iter()
            .map(Ok)
            .collect())
    }
}

/// What a send (or a look) came to, with the release of its lease.
impl Records for SendRecord {
    type Done = Attempt;
    const ACTION: &'static str = "journal the sends";

    fn commit(journal: &Journal, records: &[Self]) -> Result<Vec<Done<Self>>, JournalError> {
        journal.record_sends(records)
    }
}

/// A stream event (or a `GetTask` answer) of a follow.
impl Records for StreamObservation {
    type Done = Recorded;
    const ACTION: &'static str = "journal the stream events";

    fn commit(journal: &Journal, records: &[Self]) -> Result<Vec<Done<Self>>, JournalError> {
        journal.apply_observations(records)
    }
}

/// Records waiting for their group commit on the command's connection.
pub(crate) struct Queue<'j, R: Records> {
    journal: &'j Journal,
    queued: RefCell<Vec<R>>,
    /// The records someone waits for: their index in `queued`, and where their result goes.
    waiting: RefCell<Vec<(usize, oneshot::Sender<Done<R>>)>>,
    /// Someone waits: commit at the end of this poll ([`Queue::beside`]).
    requested: Cell<bool>,
}

impl<'j, R: Records> Queue<'j, R> {
    /// Returns an empty queue on `journal`.
    pub(crate) fn new(journal: &'j Journal) -> Self {
        Self {
            journal,
            queued: RefCell::new(Vec::new()),
            waiting: RefCell::new(Vec::new()),
            requested: Cell::new(false),
        }
    }

    /// The journal it commits to.
    pub(crate) fn journal(&self) -> &'j Journal {
        self.journal
    }

    /// Queues a record nobody waits for: its result comes back from [`Queue::commit`].
    pub(crate) fn push(&self, record: R) {
        self.queued.borrow_mut().push(record);
    }

    /// Queues a record; its result arrives after the commit that journals it.
    pub(crate) fn submit(&self, record: R) -> oneshot::Receiver<Done<R>> {
        let (tx, rx) = oneshot::channel();
        let mut queued = self.queued.borrow_mut();
        self.waiting.borrow_mut().push((queued.len(), tx));
        queued.push(record);
        rx
    }

    /// How many records are queued.
    pub(crate) fn len(&self) -> usize {
        self.queued.borrow().len()
    }

    /// Returns whether nothing is queued.
    pub(crate) fn is_empty(&self) -> bool {
        self.queued.borrow().is_empty()
    }

    /// Asks for a commit at the end of the poll ([`Queue::beside`]).
    pub(crate) fn request(&self) {
        self.requested.set(true);
    }

    /// Journals everything queued in ONE transaction. Each waiting record gets its result
    /// (nobody listening is fine: the record is journaled all the same); the records nobody
    /// waits for are returned with theirs. A failed transaction goes to the waiters (the
    /// first gets the error, the others one with its text), and is returned only when nobody
    /// waits.
    pub(crate) fn commit(&self) -> Result<Vec<(R, Done<R>)>, JournalError> {
        let records = std::mem::take(&mut *self.queued.borrow_mut());
        let waiting = std::mem::take(&mut *self.waiting.borrow_mut());
        if records.is_empty() {
            return Ok(Vec::new());
        }
        match R::commit(self.journal, &records) {
            Ok(results) if waiting.is_empty() => Ok(records.into_iter().zip(results).collect()),
            Ok(results) => {
                let mut results: Vec<Option<Done<R>>> = results.into_iter().map(Some).collect();
                for (i, tx) in waiting {
                    if let Some(result) = results.get_mut(i).and_then(Option::take) {
                        let _ = tx.send(result);
                    }
                }
                Ok(records
                    .into_iter()
                    .zip(results)
                    .filter_map(|(record, result)| Some((record, result?)))
                    .collect())
            }
            Err(e) if waiting.is_empty() => Err(e),
            Err(e) => {
                let text = e.to_string();
                let mut first = Some(e);
                for (_, tx) in waiting {
                    let err = first.take().unwrap_or_else(|| JournalError::Storage {
                        action: R::ACTION,
                        hint: None,
                        source: Box::new(std::io::Error::other(text.clone())),
                    });
                    let _ = tx.send(Err(err));
                }
                Ok(Vec::new())
            }
        }
    }

    /// Runs `work` and, each time it has been polled, commits if it asked for it
    /// ([`Queue::request`]): the records queued within one poll share one commit, and nothing
    /// stays queued while the task sleeps.
    pub(crate) async fn beside<T>(&self, work: impl Future<Output = T>) -> T {
        let committer = std::future::poll_fn(|_| {
            if self.requested.replace(false) {
                // Failures went to the waiters.
                let _ = self.commit();
            }
            std::task::Poll::<std::convert::Infallible>::Pending
        });
        tokio::select! {
            biased;
            out = work => out,
            never = committer => match never {},
        }
    }
}

/// What the writer thread answers for one group commit.
pub(crate) type Committed<R> = Result<Vec<Done<R>>, JournalError>;

/// A group commit handed to the writer thread.
type Job<R> = (Vec<R>, oneshot::Sender<Committed<R>>);

/// A thread that makes group commits on a connection of its own; dropping it waits for the
/// commit in progress.
pub(crate) struct Writer<R: Records> {
    jobs: Option<std::sync::mpsc::Sender<Job<R>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl<R: Records + Send + 'static> Writer<R>
where
    R::Done: Send,
{
    /// Starts the thread on a second connection to the journal.
    pub(crate) fn start(journal: &Journal) -> anyhow::Result<Self> {
        let own = journal
            .reopen()
            .context("failed to open the journal for the group commits")?;
        let (jobs, queue) = std::sync::mpsc::channel::<Job<R>>();
        let thread = std::thread::Builder::new()
            .name("group-commit".into())
            .spawn(move || {
                for (records, reply) in queue {
                    // The caller may be gone (a signal): the commit is made all the same.
                    let _ = reply.send(R::commit(&own, &records));
                }
            })
            .context("failed to start the group-commit thread")?;
        Ok(Self {
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    /// Hands `records` to the thread; gives them back if it is gone.
    pub(crate) fn send(
        &self,
        records: Vec<R>,
        done: oneshot::Sender<Committed<R>>,
    ) -> Result<(), (Vec<R>, oneshot::Sender<Committed<R>>)> {
        match &self.jobs {
            Some(jobs) => jobs.send((records, done)).map_err(|e| e.0),
            None => Err((records, done)),
        }
    }
}

impl<R: Records> Drop for Writer<R> {
    /// Waits for the commit in progress: what was handed over is committed before the process
    /// goes on (or exits on a signal).
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::warn!("the group-commit thread panicked");
        }
    }
}
