//! Reads for `inspect` and the commands: a step and its attempts, artifacts, events, the
//! `inspect` page (and its query plans), unfinished attempts, workflow states, and the
//! measurement hooks tests and benchmarks use.

use super::queries;
use super::{
    Artifact, Attempt, AttemptId, AttemptRow, Event, InspectFilter, InspectPage, Journal,
    JournalError, StepId, StepName, StepRecord, WorkflowState, WorkflowSummary,
};
use crate::journal::AttemptState;
use chrono::{DateTime, Utc};

/// What `status` shows of a journal ([`Journal::overview`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Overview {
    /// How many latest attempts are in each state.
    pub states: Vec<(AttemptState, u64)>,
    /// The oldest unfinished latest attempt of an undecided step: name, number, state, when it
    /// was journaled, and when its state last changed (its AGE).
    pub oldest_unfinished: Option<OldestUnfinished>,
    /// Every agent's health, failing agents first, then the latest reached first.
    pub agents: Vec<super::AgentHealth>,
}

/// A step, an attempt number, its state, when it was journaled and when its state last changed.
pub type OldestUnfinished = (StepName, u32, AttemptState, DateTime<Utc>, DateTime<Utc>);

impl Journal {
    /// Returns a step and all its attempts, or `None` if the journal has no such step.
    pub fn step(&self, name: &StepName) -> Result<Option<StepRecord>, JournalError> {
        self.read("read the step", |c| {
            let Some(step) = queries::step_by_name(c, name)? else {
                return Ok(None);
            };
            let attempts = queries::attempts_of_step(c, step.id)?;
            Ok(Some(StepRecord { step, attempts }))
        })
    }

    /// Returns one attempt.
    pub fn attempt(&self, id: AttemptId) -> Result<Attempt, JournalError> {
        self.read("read the attempt", |c| queries::attempt_by_id(c, id))?
            .ok_or(JournalError::UnknownAttempt(id.0))
    }

    /// Returns an attempt's journaled artifacts.
    pub fn artifacts(&self, id: AttemptId) -> Result<Vec<Artifact>, JournalError> {
        self.read("read the artifacts", |c| queries::artifacts_of(c, id))
    }

    /// Returns how many artifacts an attempt holds, without reading them (they may be large).
    pub fn artifact_count(&self, id: AttemptId) -> Result<usize, JournalError> {
        self.read("count the artifacts", |c| {
            super::sql::artifact_count::artifact_count(c, id)
        })
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
    }

    /// Returns the events of a step and its attempts, oldest first (empty for an unknown step).
    pub fn events_of_step(&self, name: &StepName) -> Result<Vec<Event>, JournalError> {
        self.read("read the events", |c| {
            match queries::step_by_name(c, name)? {
                Some(step) => queries::events_of_step(c, step.id),
                None => Ok(Vec::new()),
            }
        })
    }

    /// Returns the rows `inspect` shows, filtered and limited in SQL, with the total count.
    pub fn inspect(&self, filter: &InspectFilter) -> Result<InspectPage, JournalError> {
        self.read("read the journal", |c| {
            let (rows, total) = queries::inspect(c, filter)?;
            Ok(InspectPage { rows, total })
        })
    }

    /// Returns the workflows (at most `limit`, in creation order) with their steps counted by
    /// state, and how many workflows there are in all.
    pub fn workflow_summaries(
        &self,
        limit: Option<u64>,
    ) -> Result<(Vec<WorkflowSummary>, u64), JournalError> {
        self.read("read the workflows", |c| {
            queries::workflow_summaries(c, limit)
        })
    }

    /// Returns each statement [`Journal::inspect`] runs for `filter` (`count`, `page`) with
    /// SQLite's plan for it (`EXPLAIN QUERY PLAN`), for `docs/performance.md` and the benchmarks.
    pub fn explain_inspect(
        &self,
        filter: &InspectFilter,
    ) -> Result<Vec<(String, Vec<String>)>, JournalError> {
        self.read("explain the inspect query", |c| {
            queries::explain_inspect(c, filter)
        })
    }

    /// Returns the latest attempt of every unresolved step that is not finished
    /// ([`AttemptState::is_finished`](super::AttemptState::is_finished)), in delegation order; only in `workflows` if not empty.
    ///
    /// This is what a reconcile pass visits: `INTENT` (look, then send), task known and not
    /// terminal (read it), `UNCERTAIN` (report). Terminal attempts needing a decision
    /// (re-delegation, verification) are found with [`Journal::inspect`].
    pub fn unfinished_attempts(
        &self,
        workflows: &[String],
    ) -> Result<Vec<AttemptRow>, JournalError> {
        self.read("read the unfinished attempts", |c| {
            queries::unfinished(c, workflows)
        })
    }

    /// Returns what `status` shows of the journal: latest attempts per state, the oldest
    /// unfinished one, and each agent's health.
    pub fn overview(&self) -> Result<Overview, JournalError> {
        self.read("read the journal's overview", |c| {
            Ok(Overview {
                states: queries::latest_state_counts(c)?,
                oldest_unfinished: queries::oldest_unfinished(c)?,
                agents: queries::agents_health(c)?,
            })
        })
    }

    /// Returns the workflows whose compensation has begun and not ended (`COMPENSATING`), in
    /// creation order, each with whether a compensation of it failed.
    pub fn compensating_workflows(&self) -> Result<Vec<(String, bool)>, JournalError> {
        self.read(
            "read the compensating workflows",
            queries::compensating_workflows,
        )
    }

    /// Returns the names of every workflow not yet `COMPENSATED`, in creation order.
    pub fn open_workflow_names(&self) -> Result<Vec<String>, JournalError> {
        self.read("read the workflows", queries::open_workflow_names)
    }

    /// Returns a workflow's state, or `None` if it does not exist.
    pub fn workflow_state(&self, name: &str) -> Result<Option<WorkflowState>, JournalError> {
        self.read("read the workflow", |c| queries::workflow_state(c, name))
    }

    /// Returns whether a workflow exists.
    pub fn workflow_exists(&self, name: &str) -> Result<bool, JournalError> {
        self.read("read the workflow", |c| queries::workflow_exists(c, name))
    }

    /// Returns a step and all its attempts by row id, or `None` if there is no such step.
    pub fn step_by_id(&self, id: StepId) -> Result<Option<StepRecord>, JournalError> {
        self.read("read the step", |c| {
            let Some(step) = queries::step_by_id(c, id)? else {
                return Ok(None);
            };
            let attempts = queries::attempts_of_step(c, step.id)?;
            Ok(Some(StepRecord { step, attempts }))
        })
    }

    /// Returns SQLite's `data_version` for this connection (changes when another connection
    /// commits); tests use it to prove a no-op wrote nothing.
    pub fn data_version(&self) -> Result<i64, JournalError> {
        self.store.data_version()
    }

    /// Returns the number of events in the journal.
    pub fn event_count(&self) -> Result<i64, JournalError> {
        self.read("count the events", queries::event_count)
    }
}
