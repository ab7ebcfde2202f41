//! What `reconcile --alert new` has reported (schema v6, `migrations/0006_alerts.sql`).
//!
//! An item needing a human is keyed by (attempt, state, status timestamp). It is *new* until a
//! non-dry-run `--alert new` pass has reported it ([`Journal::mark_alerted`]); with
//! `--realert DURATION` it is new again once reported longer ago than that.

use std::time::Duration;

use super::queries;
use super::{AttemptId, AttemptState, Journal, JournalError, StepName};

/// One item needing a human, as `--alert new` sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertItem {
    /// The attempt.
    pub attempt: AttemptId,
    /// Its state now.
    pub state: AttemptState,
    /// Its status timestamp now (`""` for none).
    pub status_timestamp: String,
    /// Whether no `--alert new` pass has reported it with this key (or, with `--realert`,
    /// not within that long).
    pub new: bool,
}

impl Journal {
    /// Returns the item of `name`'s attempt `number` and whether it is new (module docs);
    /// `None` when the journal has no such attempt. Reads only.
    pub fn alert_item(
        &self,
        name: &StepName,
        number: u32,
        realert: Option<Duration>,
    ) -> Result<Option<AlertItem>, JournalError> {
        let Some(record) = self.step(name)? else {
            return Ok(None);
        };
        let Some(attempt) = record.attempts.iter().find(|a| a.number == number) else {
            return Ok(None);
        };
        let status_timestamp = attempt.status_timestamp.clone().unwrap_or_default();
        let state = attempt.state;
        let id = attempt.id;
        let now = self.clock.now();
        let reported = self.read("read the alerts", |c| queries::alert_of(c, id))?;
        let new = match reported {
            None => true,
            Some((s, ts, at)) => {
                let expired = realert.is_some_and(|d| {
                    chrono::TimeDelta::from_std(d).is_ok_and(|d| now.signed_duration_since(at) >= d)
                });
                s != state.as_str() || ts != status_timestamp || expired
            }
        };
        Ok(Some(AlertItem {
            attempt: id,
            state,
            status_timestamp,
            new,
        }))
    }

    /// Records the new `items` as reported now, in one transaction; old ones keep their time.
    pub fn mark_alerted(&self, items: &[AlertItem]) -> Result<(), JournalError> {
        if !items.iter().any(|i| i.new) {
            return Ok(());
        }
        let now = self.now_ms();
        self.write("record the alerts", |tx| {
            let e = self.err("record the alerts");
            for i in items.iter().filter(|i| i.new) {
                queries::upsert_alert(tx, i.attempt, i.state.as_str(), &i.status_timestamp, now)
                    .map_err(&e)?;
            }
            Ok(())
        })
    }
}
