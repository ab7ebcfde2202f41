//! The one group-commit mechanism: records queued as work goes on, journaled together in ONE
//! transaction (one fsync for many), each record's result handed back to whoever waits for it.
//!
//! - [`Records`]: what one group commit journals, and the journal call that does it: routine
//!   `GetTask` observations (`Journal::apply_tasks`), send outcomes (`Journal::record_sends`),
//!   stream observations (`Journal::apply_observations`).
//! - [`Queue`]: the records waiting on the command's own connection, committed when its owner
//!   says (`commit`), or at the end of the poll that asked for it ([`Queue::beside`]).
//! - [`Writer`]: where the commits are made, chosen at construction ([`WriterMode`]): on a
//!   thread with a connection of its own, fed through a bounded queue, so that requests go on
//!   while a commit works or waits for the disk (on PostgreSQL, for the server); or inline, on
//!   the caller's thread and connection (a deterministic run, one stream).
//! - [`Gatherer`]: records handed over by many tasks at once (a listener's concurrent
//!   requests), each caller waiting for its own: a thread with a connection of its own takes
//!   every record waiting into one commit, while the next ones gather.
//!
//! The order that matters holds in both modes: intents and endpoints never go through a
//! writer (they commit on the caller's connection before any send); a writer commits its jobs
//! in the order they were handed to it; a record someone waits for is reported only once its
//! commit is durable; and dropping a queue or a writer waits for every commit handed over, so
//! that a signal loses at most what was not yet reported.
//!
//! The users differ only in when they commit and what they wait for, and keep that in a thin
//! adapter: the reconcile pass pushes records nobody waits for, hands them to its writer every
//! `BATCH` records and waits for them all at its end (`reconcile.rs`); the follows submit each
//! observation and wait for it before showing it (`follow.rs`, `GroupCommit`); `delegate
//! --plan` hands a whole batch of answers to the [`Writer`] and polls for it
//! (`send/batch.rs`). Dropping a queue hands nothing over: each owner's `Drop` decides (they
//! all commit what they hold; the pass not while panicking).

use std::cell::{Cell, OnceCell, RefCell};
use std::rc::Rc;

use anyhow::Context as _;
use tokio::sync::oneshot;

use crate::a2a::TaskView;
use crate::journal::{
    Attempt, AttemptId, Journal, JournalError, PushRecord, Recorded, SendRecord, Source,
    StreamObservation,
};

/// What a group commit hands back for one record.
pub(crate) type Done<R> = Result<<R as Records>::Done, JournalError>;

/// What one group commit journals, in one transaction.
pub(crate) trait Records: Sized + Send + 'static {
    /// What journaling one record gives.
    type Done: Send;
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

/// A push a listener received, or what reading one back found.
impl Records for PushRecord {
    type Done = ();
    const ACTION: &'static str = "journal the pushes";

    fn commit(journal: &Journal, records: &[Self]) -> Result<Vec<Done<Self>>, JournalError> {
        journal.record_pushes(records)
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
    /// Where the commits handed over ([`Queue::hand_off`]) are made (queues that share a
    /// writer commit in the order they hand over).
    writer: Rc<Writer<'j>>,
    /// The commits handed over whose records nobody waits for: their results.
    handed: RefCell<Vec<oneshot::Receiver<Handed<R>>>>,
}

/// What a commit handed to a [`Writer`] gives back: the records nobody waited for, each with
/// its result (see [`dispatch`]).
pub(crate) type Handed<R> = Result<Vec<(R, Done<R>)>, JournalError>;

/// The records waiting for their results: their index in a batch, and where it goes.
type Waiting<R> = Vec<(usize, oneshot::Sender<Done<R>>)>;

impl<'j, R: Records> Queue<'j, R> {
    /// Returns an empty queue on `journal` with a writer of its own, whose commits handed over
    /// are made as `mode` says.
    pub(crate) fn new(journal: &'j Journal, mode: WriterMode) -> Self {
        Self::on(Rc::new(Writer::new(journal, mode)))
    }

    /// Returns an empty queue on `writer`'s journal, whose commits handed over `writer` makes.
    pub(crate) fn on(writer: Rc<Writer<'j>>) -> Self {
        Self {
            journal: writer.journal,
            queued: RefCell::new(Vec::new()),
            waiting: RefCell::new(Vec::new()),
            requested: Cell::new(false),
            writer,
            handed: RefCell::new(Vec::new()),
        }
    }

    /// The journal it commits to.
    pub(crate) fn journal(&self) -> &'j Journal {
        self.journal
    }

    /// Queues a record nobody waits for: its result comes back from [`Queue::reap`] or
    /// [`Queue::settle`].
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

    /// Hands everything queued to the queue's [`Writer`] as ONE group commit, and goes on
    /// without waiting for it: each waiting record gets its result once the commit is made;
    /// the results of the others are gathered by [`Queue::reap`] and [`Queue::settle`].
    pub(crate) fn hand_off(&self) {
        let records = std::mem::take(&mut *self.queued.borrow_mut());
        let waiting = std::mem::take(&mut *self.waiting.borrow_mut());
        if records.is_empty() {
            return;
        }
        let (done, handed) = oneshot::channel();
        if waiting.len() < records.len() {
            self.handed.borrow_mut().push(handed);
        }
        self.writer.run(move |journal| {
            // The caller may be gone (a signal): the commit is made all the same.
            let _ = done.send(dispatch(journal, records, waiting));
        });
    }

    /// Returns the results of the commits handed over that are done, without waiting; the
    /// first failed commit's error (the others are dropped with it).
    pub(crate) fn reap(&self) -> Result<Vec<(R, Done<R>)>, JournalError> {
        let mut out = Vec::new();
        let mut first = None;
        self.handed
            .borrow_mut()
            .retain_mut(|rx| match rx.try_recv() {
                Err(oneshot::error::TryRecvError::Empty) => true,
                Ok(Ok(done)) => {
                    out.extend(done);
                    false
                }
                Ok(Err(e)) => {
                    first.get_or_insert(e);
                    false
                }
                Err(oneshot::error::TryRecvError::Closed) => {
                    first.get_or_insert_with(|| writer_gone(R::ACTION));
                    false
                }
            });
        first.map_or(Ok(out), Err)
    }

    /// Waits for every commit handed over; returns their results, or the first failed
    /// commit's error.
    pub(crate) async fn settle(&self) -> Result<Vec<(R, Done<R>)>, JournalError> {
        let handed = std::mem::take(&mut *self.handed.borrow_mut());
        let mut out = Vec::new();
        let mut first = None;
        for rx in handed {
            match rx.await {
                Ok(Ok(done)) => out.extend(done),
                Ok(Err(e)) => {
                    first.get_or_insert(e);
                }
                Err(_) => {
                    first.get_or_insert_with(|| writer_gone(R::ACTION));
                }
            }
        }
        first.map_or(Ok(out), Err)
    }

    /// Runs `work` and, each time it has been polled, commits if it asked for it
    /// ([`Queue::request`]): the records queued within one poll share one commit, and nothing
    /// stays queued while the task sleeps.
    pub(crate) async fn beside<T>(&self, work: impl Future<Output = T>) -> T {
        let committer = std::future::poll_fn(|_| {
            if self.requested.replace(false) {
                self.hand_off();
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

/// How many records one commit of a [`Gatherer`] takes at most.
const GATHER: usize = 256;

/// A record handed to a [`Gatherer`], with where its result goes.
type Handover<R> = (R, oneshot::Sender<Done<R>>);

/// Group commits for records handed over by many tasks and threads at once (a listener's
/// concurrent requests): a thread with a connection of its own takes every record waiting (at
/// most [`GATHER`]) and journals them in ONE transaction, while the next ones gather; each
/// caller waits for its own record's result, so that what it answers is durable first.
/// Dropping it waits for every record handed over.
pub(crate) struct Gatherer<R: Records> {
    records: Option<tokio::sync::mpsc::Sender<Handover<R>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl<R: Records> Gatherer<R> {
    /// Starts the thread on a second connection to `journal`; at most `depth` records wait for
    /// it (a caller beyond them waits for room).
    pub(crate) fn start(journal: &Journal, depth: usize) -> anyhow::Result<Self> {
        let (records, mut queue) = tokio::sync::mpsc::channel::<Handover<R>>(depth.max(1));
        let thread = on_own_connection(journal, move |own| {
            while let Some(first) = queue.blocking_recv() {
                let mut batch = vec![first];
                while batch.len() < GATHER
                    && let Ok(next) = queue.try_recv()
                {
                    batch.push(next);
                }
                let (records, waiting): (Vec<R>, Waiting<R>) = batch
                    .into_iter()
                    .enumerate()
                    .map(|(i, (record, done))| (record, (i, done)))
                    .unzip();
                // Everyone waits: the results (a failure too) went to them. A panic fails
                // this group's callers (their results are dropped), not every later one.
                let committed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    dispatch(own, records, waiting)
                }));
                if committed.is_err() {
                    tracing::error!("a group commit panicked; its records were not journaled");
                }
            }
        })?;
        Ok(Self {
            records: Some(records),
            thread: Some(thread),
        })
    }

    /// Journals `record` in the next group commit; returns its result once that commit is
    /// made (durable).
    pub(crate) async fn commit(&self, record: R) -> Done<R> {
        let (done, result) = oneshot::channel();
        let Some(records) = &self.records else {
            return Err(writer_gone(R::ACTION));
        };
        if records.send((record, done)).await.is_err() {
            return Err(writer_gone(R::ACTION));
        }
        result.await.unwrap_or_else(|_| Err(writer_gone(R::ACTION)))
    }
}

impl<R: Records> Drop for Gatherer<R> {
    /// Waits for every record handed over to be committed.
    fn drop(&mut self) {
        drop(self.records.take());
        if let Some(thread) = self.thread.take() {
            join(thread);
        }
    }
}

/// Journals `records` in ONE transaction on `journal` and hands each waiting record its result
/// (nobody listening is fine); returns the others with theirs. A failed transaction goes to
/// the waiters (the first gets the error, the others one with its text), and is returned only
/// when nobody waits.
fn dispatch<R: Records>(
    journal: &Journal,
    records: Vec<R>,
    waiting: Waiting<R>,
) -> Result<Vec<(R, Done<R>)>, JournalError> {
    if records.is_empty() {
        return Ok(Vec::new());
    }
    match R::commit(journal, &records) {
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

/// What the writer thread answers for one group commit.
pub(crate) type Committed<R> = Result<Vec<Done<R>>, JournalError>;

/// Where a `Writer` makes its commits, chosen when it is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriterMode {
    /// On a thread with a connection of its own (started at the first job), fed through a
    /// bounded queue: the caller goes on while a commit is made.
    Thread,
    /// On the caller's thread and connection, at once: no thread, no second connection, every
    /// job done before `Writer::run` returns (a deterministic run; one follow).
    Inline,
}

/// How many jobs may wait for the writer thread: a caller that gets that far ahead waits
/// for it (the records a pass holds stay bounded).
const QUEUE_DEPTH: usize = 2;

/// A job for the writer: anything done on the writer's connection, in the order handed over.
type Job = Box<dyn FnOnce(&Journal) + Send>;

/// The writer thread and the queue that feeds it.
struct Thread {
    jobs: Option<std::sync::mpsc::SyncSender<Job>>,
    handle: Option<std::thread::JoinHandle<()>>,
}

/// Makes group commits, inline or on a thread of its own ([`WriterMode`]); dropping it waits
/// for every job handed over.
pub(crate) struct Writer<'j> {
    journal: &'j Journal,
    mode: WriterMode,
    /// The thread, once started (`None`: it could not start, so jobs run inline).
    thread: OnceCell<Option<Thread>>,
}

impl<'j> Writer<'j> {
    /// Returns a writer on `journal` (its thread, in [`WriterMode::Thread`], opens a second
    /// connection to it when the first job comes).
    pub(crate) fn new(journal: &'j Journal, mode: WriterMode) -> Self {
        // A simulated run is one thread: its commits are made inline, in a replayable order.
        #[cfg(feature = "sim")]
        let mode = if crate::sim_seam::simulated() {
            WriterMode::Inline
        } else {
            mode
        };
        Self {
            journal,
            mode,
            thread: OnceCell::new(),
        }
    }

    /// Runs `job` on the writer's connection: inline at once, or queued for the thread (waiting
    /// while the queue is full). Jobs run in the order handed over; if the thread cannot start
    /// or is gone, on the caller's connection.
    pub(crate) fn run(&self, job: impl FnOnce(&Journal) + Send + 'static) {
        let job: Job = Box::new(job);
        let job = match self.mode {
            WriterMode::Inline => job,
            WriterMode::Thread => match self.thread() {
                Some(jobs) => match jobs.send(job) {
                    Ok(()) => return,
                    Err(e) => e.0,
                },
                None => job,
            },
        };
        job(self.journal);
    }

    /// The thread's queue, started at the first call.
    fn thread(&self) -> Option<&std::sync::mpsc::SyncSender<Job>> {
        self.thread
            .get_or_init(|| match start(self.journal) {
                Ok(thread) => Some(thread),
                Err(e) => {
                    tracing::debug!("group commits on the command's thread: {e:#}");
                    None
                }
            })
            .as_ref()
            .and_then(|t| t.jobs.as_ref())
    }

    /// Waits for every job handed over; later jobs run inline.
    pub(crate) fn close(&mut self) {
        if let Some(Some(mut thread)) = self.thread.take() {
            drop(thread.jobs.take());
            if let Some(handle) = thread.handle.take() {
                join(handle);
            }
        }
        self.thread = OnceCell::from(None);
    }
}

/// Starts the writer thread on a second connection to the journal.
fn start(journal: &Journal) -> anyhow::Result<Thread> {
    let (jobs, queue) = std::sync::mpsc::sync_channel::<Job>(QUEUE_DEPTH);
    let handle = on_own_connection(journal, move |own| {
        for job in queue {
            job(own);
        }
    })?;
    Ok(Thread {
        jobs: Some(jobs),
        handle: Some(handle),
    })
}

/// Starts the group-commit thread running `body` on a second connection to `journal`.
fn on_own_connection(
    journal: &Journal,
    body: impl FnOnce(&Journal) + Send + 'static,
) -> anyhow::Result<std::thread::JoinHandle<()>> {
    let own = journal
        .reopen()
        .context("failed to open the journal for the group commits")?;
    std::thread::Builder::new()
        .name("group-commit".into())
        .spawn(move || body(&own))
        .context("failed to start the group-commit thread")
}

/// Waits for the group-commit thread to end (its queue closed, every job done).
fn join(thread: std::thread::JoinHandle<()>) {
    if thread.join().is_err() {
        tracing::warn!("the group-commit thread panicked");
    }
}

impl Drop for Writer<'_> {
    /// Waits for every job handed over: what was handed over is committed before the process
    /// goes on (or exits on a signal).
    fn drop(&mut self) {
        // A killed process runs no drop-time work (the simulator's crash).
        if crate::sim_seam::killed() {
            return;
        }
        self.close();
    }
}

/// The error of a commit whose writer ended without answering.
fn writer_gone(action: &'static str) -> JournalError {
    JournalError::Storage {
        action,
        hint: None,
        source: Box::new(std::io::Error::other(
            "the group-commit thread ended before its commit",
        )),
    }
}

#[cfg(test)]
mod tests;
