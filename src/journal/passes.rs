//! What a reconcile pass walks: its rows in delegation order, a page at a time
//! ([`Journal::pass_cursor`]), and the steps it decided failed for good.

use serde_json::{Value, json};

use super::queries::{self, NewEvent};
use super::{AttemptId, AttemptRow, Journal, JournalError, PassCursor};

impl Journal {
    /// Returns the latest attempt of every step a reconcile pass visits, in delegation order;
    /// only in `workflows` if not empty.
    ///
    /// Beside [`Journal::unfinished_attempts`], these are terminal attempts still to decide
    /// (FAILED/REJECTED to re-delegate, CANCELED, LOST, REFUSED), completed attempts whose
    /// declared effect is not claimed yet, and effects a human must look at. Compensation and
    /// command steps, steps resolved `done`/`abandoned` and COMPENSATED workflows are left out;
    /// `resolve --as retry|resend` act through new or reopened `INTENT` attempts.
    pub fn pass_rows(&self, workflows: &[String]) -> Result<Vec<AttemptRow>, JournalError> {
        self.read("read the attempts to reconcile", |c| {
            queries::pass_rows(c, workflows)
        })
    }

    /// Starts a walk over [`Journal::pass_rows`] a page at a time, so a pass over many rows holds
    /// one page in memory, not all of them; `skip` leaves out attempts the pass visits otherwise.
    ///
    /// The walk covers the steps journaled when it starts (a step delegated meanwhile waits for
    /// the next pass), each row read as it is when its page is fetched.
    pub fn pass_cursor(
        &self,
        workflows: &[String],
        skip: &[AttemptId],
    ) -> Result<PassCursor, JournalError> {
        self.read("read the attempts to reconcile", |c| {
            let window = queries::PassWindow {
                workflows: queries::workflows_filter(workflows),
                skip: (!skip.is_empty())
                    .then(|| Value::Array(skip.iter().map(|id| json!(id.0)).collect()).to_string()),
                after: i64::MIN,
                through: queries::max_seq(c)?,
            };
            Ok(PassCursor {
                window,
                span: 0,
                read: 0,
            })
        })
    }

    /// Returns how many rows of a walk are still to be read (all of them before its first
    /// page).
    ///
    /// Counted when asked, not when the walk starts: a count filters every row the walk
    /// covers, as its pages do, and an unchanged pass over 10,000 rows spent about 5 % of its
    /// CPU on a count nobody read. A pass asks when it must say how many: a progress bar, a
    /// deadline that ended it.
    pub fn pass_rows_left(&self, cursor: &PassCursor) -> Result<usize, JournalError> {
        if cursor.window.after >= cursor.window.through {
            return Ok(0);
        }
        self.read("count the attempts to reconcile", |c| {
            queries::pass_count(c, &cursor.window)
        })
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
    }

    /// Returns the next page of at most `limit` rows of a walk: exactly `limit` unless the walk
    /// has reached its end (empty there).
    ///
    /// Each read covers a bounded range of delegation positions, not the rest of the walk: a
    /// store may join and sort every row of the range it is given before it returns the first
    /// `limit` (PostgreSQL's generic plan does when the tables have no statistics yet, as right
    /// after a batch of intents), and over the rest of the walk that makes a pass quadratic in
    /// its rows. The range starts at twice `limit` positions, doubles while it holds too few rows
    /// (finished steps in between) and follows the density of the last full page.
    pub fn next_pass_rows(
        &self,
        cursor: &mut PassCursor,
        limit: usize,
    ) -> Result<Vec<AttemptRow>, JournalError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX).max(1);
        let mut rows = Vec::new();
        let mut wanted = limit;
        while wanted > 0 && cursor.window.after < cursor.window.through {
            let from = cursor.window.after;
            let span = cursor.span.max(limit.saturating_mul(2));
            let mut window = cursor.window.clone();
            window.through = from.max(0).saturating_add(span).min(window.through);
            let page = self.read("read the attempts to reconcile", |c| {
                queries::pass_page(c, &window, wanted)
            })?;
            let got = i64::try_from(page.len()).unwrap_or(i64::MAX);
            match page.last() {
                Some(&(seq, _)) if got == wanted => {
                    cursor.window.after = seq;
                    // Positions per row on this page, times twice a page.
                    let covered = seq.max(0).saturating_sub(from.max(0));
                    cursor.span = covered.saturating_mul(2).saturating_mul(limit) / got;
                }
                _ => {
                    cursor.window.after = window.through;
                    cursor.span = span.saturating_mul(2);
                }
            }
            wanted -= got;
            cursor.read += page.len();
            rows.extend(page.into_iter().map(|(_, row)| row));
        }
        Ok(rows)
    }

    /// Records that a step failed for good at this attempt, and why (a `failed-for-good`
    /// event, and the attempt's `error`); returns false, writing nothing, if already recorded.
    pub fn mark_failed_for_good(&self, id: AttemptId, reason: &str) -> Result<bool, JournalError> {
        let now = self.now_ms();
        self.write("journal the failure", |tx| {
            let e = self.err("journal the failure");
            if queries::failed_for_good(tx, id).map_err(&e)?.is_some() {
                return Ok(false);
            }
            let mut held = queries::attempt_by_id(tx, id)
                .map_err(&e)?
                .ok_or(JournalError::UnknownAttempt(id.0))?;
            held.error = Some(reason.to_owned());
            held.updated_at = self.clock.now();
            queries::update_attempt(tx, &held).map_err(&e)?;
            let detail = json!({"reason": reason});
            queries::insert_event(
                tx,
                &NewEvent {
                    at: now,
                    workflow: None,
                    step: Some(held.step_id),
                    attempt: Some(id),
                    kind: "failed-for-good",
                    from: Some(held.state.as_str()),
                    to: Some(held.state.as_str()),
                    detail: Some(&detail),
                },
            )
            .map_err(&e)?;
            Ok(true)
        })
    }

    /// Returns why a pass decided the step failed for good at this attempt, if it did.
    pub fn failed_for_good(&self, id: AttemptId) -> Result<Option<String>, JournalError> {
        self.read("read the attempt", |c| queries::failed_for_good(c, id))
    }
}
