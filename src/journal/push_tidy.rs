//! Push configs deleted at their agents once their attempt ends: which are still to delete, and
//! what each delete came to (journaled once, so a config is asked about once).

use super::sql::push_tidy as sql;
use super::{AttemptId, Journal, JournalError};

/// What the delete of a push config at its agent came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushTidied {
    /// The agent deleted it.
    Deleted,
    /// The agent knew neither the task nor the config (gone with the task).
    Gone,
    /// The agent answered with another error: not asked again for this config.
    Refused,
    /// The agent does not delete push configs: it is not asked again for any.
    Unsupported,
}

impl PushTidied {
    /// The journaled word.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Deleted => "deleted",
            Self::Gone => "gone",
            Self::Refused => "refused",
            Self::Unsupported => "unsupported",
        }
    }
}

impl Journal {
    /// Returns up to `limit` push configs to delete at their agents: `(attempt, config id)` of
    /// attempts that ended with a known task, whose config was not deleted yet and whose agent
    /// never said it deletes none; only those of `workflows` unless it is empty.
    pub fn push_configs_to_tidy(
        &self,
        workflows: &[String],
        limit: usize,
    ) -> Result<Vec<(AttemptId, String)>, JournalError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read("read the push configs to delete", |c| {
            sql::untidied(c, workflows, limit)
        })
    }

    /// Records what the delete of attempt `id`'s push config came to; on
    /// [`PushTidied::Unsupported`], that its agent is not to be asked again.
    pub fn record_push_tidied(
        &self,
        id: AttemptId,
        outcome: PushTidied,
    ) -> Result<(), JournalError> {
        let now = self.now_ms();
        let action = "journal the push config's deletion";
        self.write(action, |tx| {
            let e = self.err(action);
            sql::set_tidied(tx, id, outcome.as_str(), now).map_err(&e)?;
            if outcome == PushTidied::Unsupported {
                sql::set_agent_unsupported(tx, id, now).map_err(&e)?;
            }
            Ok(())
        })
    }
}
