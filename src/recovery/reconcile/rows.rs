//! The pass rows, read a page at a time, the locks of the workflows a page reaches first, and
//! the leases of a page's intents claimed as it is read (bucket 1); an item's step, read only
//! when a decision needs it.

use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use anyhow::Context as _;

use super::{Item, Pass};
use crate::journal::{AttemptId, AttemptRow, BatchClaim, Journal, PassCursor, StepRecord};
use crate::recovery::decide::{self, Triage};
use crate::recovery::lookup;

/// How many pass rows are read from the journal at a time (at most).
const PAGE: usize = 256;

/// The pass rows, read a page at a time as the pass reaches them: a pass over 100,000 rows holds
/// a page and the items in flight, not every row (docs/performance.md).
pub(super) struct Rows<'j> {
    journal: &'j Journal,
    cursor: PassCursor,
    /// How many rows a page holds.
    page_size: usize,
    page: VecDeque<AttemptRow>,
    done: bool,
    /// Readies each page as it is read ([`Pass::prepare_page`]); none in a dry run.
    prepare: Option<&'j PagePrep<'j>>,
}

/// What [`Rows`] calls on each page it reads: true asks for the page to be read again.
pub(super) type PagePrep<'j> = dyn Fn(&mut VecDeque<AttemptRow>) -> anyhow::Result<bool> + 'j;

impl<'j> Rows<'j> {
    /// Walks the rows `cursor` covers in pages of at most `lookahead` rows; `prepare` sees each
    /// page as it is read.
    pub(super) fn new(
        journal: &'j Journal,
        cursor: PassCursor,
        lookahead: usize,
        prepare: Option<&'j PagePrep<'j>>,
    ) -> Self {
        Self {
            journal,
            cursor,
            page_size: lookahead.clamp(1, PAGE),
            page: VecDeque::new(),
            done: false,
            prepare,
        }
    }

    /// Reads the next page into `self.page`, again while `prepare` asks for it.
    fn read_page(&mut self) -> anyhow::Result<()> {
        loop {
            let at = self.cursor.clone();
            let rows = self
                .journal
                .next_pass_rows(&mut self.cursor, self.page_size)?;
            self.done = rows.len() < self.page_size;
            self.page.extend(rows);
            let Some(prepare) = self.prepare else {
                return Ok(());
            };
            if !prepare(&mut self.page)? {
                return Ok(());
            }
            self.page.clear();
            self.cursor = at;
        }
    }
}

impl Iterator for Rows<'_> {
    type Item = anyhow::Result<AttemptRow>;

    fn next(&mut self) -> Option<Self::Item> {
        // A page may come back empty (all its rows in workflows another pass holds).
        while self.page.is_empty() && !self.done {
            if let Err(e) = self.read_page() {
                self.done = true;
                self.page.clear();
                return Some(Err(e));
            }
        }
        self.page.pop_front().map(Ok)
    }
}

/// A pass's items: those with replies first, then the walk's rows.
pub(super) struct Items<'j> {
    replied: std::vec::IntoIter<Item>,
    /// How many items had replies.
    with_replies: usize,
    rows: Rows<'j>,
}

impl<'j> Items<'j> {
    pub(super) fn new(replied: Vec<Item>, rows: Rows<'j>) -> Self {
        Self {
            with_replies: replied.len(),
            replied: replied.into_iter(),
            rows,
        }
    }

    /// How many items the pass covers: those with replies, the rows read so far and those
    /// left (counted now).
    pub(super) fn total(&self) -> anyhow::Result<usize> {
        Ok(self.with_replies
            + self.rows.cursor.read
            + self.rows.journal.pass_rows_left(&self.rows.cursor)?)
    }
}

impl Iterator for Items<'_> {
    type Item = anyhow::Result<Item>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(item) = self.replied.next() {
            return Some(Ok(item));
        }
        self.rows.next().map(|row| {
            row.map(|row| Item {
                row: Box::new(row),
                replies: Vec::new(),
            })
        })
    }
}

/// An item's step and all its attempts, read from the journal the first time a decision needs
/// them: reading a running task does not (a pass over running work reads no step).
pub(super) struct StepOf<'j> {
    journal: &'j Journal,
    id: crate::journal::StepId,
    name: String,
    rec: std::cell::OnceCell<StepRecord>,
}

impl<'j> StepOf<'j> {
    pub(super) fn new(journal: &'j Journal, row: &AttemptRow) -> Self {
        Self {
            journal,
            id: row.attempt.step_id,
            name: row.step.to_string(),
            rec: std::cell::OnceCell::new(),
        }
    }

    pub(super) fn get(&self) -> anyhow::Result<&StepRecord> {
        if let Some(rec) = self.rec.get() {
            return Ok(rec);
        }
        let rec = self
            .journal
            .step_by_id(self.id)?
            .with_context(|| format!("step `{}` vanished from the journal", self.name))?;
        Ok(self.rec.get_or_init(|| rec))
    }
}

impl Pass<'_> {
    /// Readies a page just read: takes the locks of the workflows it reaches first (true: a
    /// lock was taken after the rows were read, read the page again under it), leaves out the
    /// rows of workflows another pass holds, and claims the leases of the rest's intents.
    pub(super) fn prepare_page(&self, page: &mut VecDeque<AttemptRow>) -> anyhow::Result<bool> {
        if self.lock_reached(page.iter().map(|r| r.step.workflow.as_str()))? {
            return Ok(true);
        }
        if self.locks.is_some() {
            let read = page.len();
            page.retain(|r| self.is_mine(&r.step.workflow));
            self.held_rows.set(self.held_rows.get() + read - page.len());
        }
        self.claim_page(page)?;
        Ok(false)
    }

    /// Bucket 1: claims the leases of a page's intents to look for, in ONE transaction (each
    /// item then looks under the lease its page claimed).
    pub(super) fn claim_page(&self, page: &VecDeque<AttemptRow>) -> anyhow::Result<()> {
        let ids: Vec<(AttemptId, Option<crate::journal::JournaledEndpoint>)> = page
            .iter()
            .filter(|row| {
                row.is_latest
                    && decide::triage(row) == Triage::Look
                    && decide::sends_allowed(row.workflow_state)
            })
            .map(|row| (row.attempt.id, None))
            .collect();
        let claims = self.journal.claim_for_send(
            &ids,
            self.cfg.lease_ttl,
            crate::recovery::send::journaled_timeout(self.client),
        )?;
        // The page's looks by time share one listing per agent, made after these claims.
        let mut sweeps = lookup::Sweeps::default();
        let mut accepts: HashMap<String, Option<bool>> = HashMap::new();
        let now = self.clock.now();
        let looked = page.iter().filter(|row| {
            row.is_latest
                && decide::triage(row) == Triage::Look
                && decide::sends_allowed(row.workflow_state)
        });
        for (claim, row) in claims.iter().zip(looked) {
            let BatchClaim::Claimed(a, _) = claim else {
                continue;
            };
            let (Some(agent), Some(key)) =
                (&a.agent_url, lookup::sweep_key(a, row.allow_cross_origin))
            else {
                continue;
            };
            let agent_accepts = if let Some(known) = accepts.get(agent) {
                *known
            } else {
                let known = self
                    .journal
                    .agent(agent)?
                    .and_then(|a| a.accepts_context_id);
                accepts.insert(agent.clone(), known);
                known
            };
            if lookup::LookFor::for_attempt(a, agent_accepts)
                .context_id
                .is_none()
            {
                let window = lookup::time_window(a.created_at, now, self.cfg.clock_skew);
                sweeps.include(key, window);
            }
        }
        let sweeps = (!sweeps.is_empty()).then(|| Rc::new(sweeps));
        let mut sweep_of = self.sweep_of.borrow_mut();
        for (id, _) in &ids {
            if let Some(s) = &sweeps {
                sweep_of.insert(*id, Rc::clone(s));
            }
        }
        self.claimed
            .borrow_mut()
            .extend(ids.into_iter().map(|(id, _)| id).zip(claims));
        Ok(())
    }
}
