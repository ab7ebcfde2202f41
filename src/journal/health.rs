//! Agents' health: when each last answered, when a request to it last failed, and since when
//! it has been failing, as reconcile passes found it; and what `status --stale` and the metrics
//! read of it.
//!
//! Health is journaled as transitions (healthy → failing → healthy), and between them a last
//! answer or a last failure at most once a [`HEALTH_EVERY`] per agent: a pass over unchanged
//! work soon after another writes nothing.

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::queries;
use super::{Journal, JournalError, StepName};
use crate::journal::AttemptState;

/// How often an agent's last answer (or, while nothing else changes, its last failure) is
/// journaled at most.
pub const HEALTH_EVERY: Duration = Duration::from_secs(60);

/// An agent's health as journaled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentHealth {
    /// Its card URL (the key).
    pub card_url: String,
    /// When its card was last fetched.
    pub fetched_at: Option<DateTime<Utc>>,
    /// When it last answered (to within [`HEALTH_EVERY`]).
    pub last_success_at: Option<DateTime<Utc>>,
    /// When a request to it last got no answer (to within [`HEALTH_EVERY`]).
    pub last_failure_at: Option<DateTime<Utc>>,
    /// Since when it has not answered; `None` while it answers.
    pub failing_since: Option<DateTime<Utc>>,
    /// Whether it is in the registry (`agents add`).
    pub registered: bool,
    /// Whether an unfinished attempt of a step without a decision waits on it.
    pub waited_on: bool,
}

impl AgentHealth {
    /// When it was last reached: the later of its card's fetch and its last answer. A failed
    /// request never moves it.
    pub fn last_reached(&self) -> Option<DateTime<Utc>> {
        self.fetched_at.max(self.last_success_at)
    }
}

/// What a pass saw of one agent's requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AgentSeen {
    /// When it last answered.
    pub answered: Option<DateTime<Utc>>,
    /// When a request to it last got no answer.
    pub failed: Option<DateTime<Utc>>,
    /// The first request with no answer since its last answer (`None` while it answers).
    pub failing_since: Option<DateTime<Utc>>,
}

impl AgentSeen {
    /// Whether its latest request got no answer.
    fn failing(&self) -> bool {
        match (self.answered, self.failed) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(a), Some(f)) => f > a,
        }
    }
}

/// An unfinished attempt not needing a human, with when it was last heard of (`status
/// --stale`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unheard {
    /// Its step.
    pub step: StepName,
    /// Its number.
    pub attempt: u32,
    /// Its state.
    pub state: AttemptState,
    /// Its agent's card URL.
    pub agent: Option<String>,
    /// The later of its last state change or observed change (its creation before any) and
    /// its agent's last answer.
    pub heard: DateTime<Utc>,
}

/// What is stale before a time ([`Journal::stale`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stale {
    /// The attempts last heard of before it, the longest unheard first (at most the limit).
    pub attempts: Vec<Unheard>,
    /// How many attempts were last heard of before it, in all.
    pub attempts_total: u64,
    /// The agents failing since before it that work waits on: card URL, failing since.
    pub agents: Vec<(String, DateTime<Utc>)>,
}

impl Stale {
    /// Whether anything is stale.
    pub fn any(&self) -> bool {
        self.attempts_total > 0 || !self.agents.is_empty()
    }
}

/// Returns the health to journal for an agent held as `held` after a pass saw `seen`, `None`
/// when nothing is to be written: a transition is always written, a later answer or failure
/// only once the one journaled is [`HEALTH_EVERY`] old.
pub fn next_health(held: &AgentHealth, seen: &AgentSeen) -> Option<AgentHealth> {
    let every = chrono::Duration::from_std(HEALTH_EVERY).unwrap_or(chrono::Duration::MAX);
    let later = |held: Option<DateTime<Utc>>, new: Option<DateTime<Utc>>| held.max(new);
    let due = |held: Option<DateTime<Utc>>, new: Option<DateTime<Utc>>| match (held, new) {
        (_, None) => held,
        (None, new) => new,
        (Some(h), Some(n)) if n - h >= every => Some(n),
        (Some(h), Some(_)) => Some(h),
    };
    let failing = seen.failing();
    let mut next = held.clone();
    let answered_since = seen
        .answered
        .is_some_and(|a| held.failing_since.is_none_or(|f| a > f));
    if failing == held.failing_since.is_some() && !(failing && answered_since) {
        // No transition: a later answer or failure, at most once a minute.
        next.last_success_at = due(held.last_success_at, seen.answered);
        next.last_failure_at = due(held.last_failure_at, seen.failed);
    } else {
        // Healthy → failing, failing → healthy, or failing → (answered) → failing again.
        next.last_success_at = later(held.last_success_at, seen.answered);
        next.last_failure_at = later(held.last_failure_at, seen.failed);
        next.failing_since = if failing {
            seen.failing_since.or(seen.failed)
        } else {
            None
        };
    }
    (next != *held).then_some(next)
}

impl Journal {
    /// Returns every agent's health: failing agents first, then the latest reached first.
    pub fn agents_health(&self) -> Result<Vec<AgentHealth>, JournalError> {
        self.read("read the agents' health", queries::agents_health)
    }

    /// Returns one agent's health (`None`: an agent the journal does not know).
    pub fn agent_health(&self, card_url: &str) -> Result<Option<AgentHealth>, JournalError> {
        self.read("read the agent's health", |c| {
            queries::agent_health(c, card_url)
        })
    }

    /// Returns the card URL of the agent a request went to (its card URL, or an interface URL
    /// an agent's card chose), `None` for a URL of no journaled agent.
    pub fn card_url_of(&self, url: &str) -> Result<Option<String>, JournalError> {
        self.read("read the agents", |c| queries::card_url_of(c, url))
    }

    /// Journals what a pass saw of its agents (by card URL; agents the journal does not know
    /// are left out), as [`next_health`] says: nothing at all when no agent's health is due,
    /// else one transaction. Returns how many agents' health was written.
    pub fn record_health(&self, seen: &[(String, AgentSeen)]) -> Result<usize, JournalError> {
        if seen.is_empty() {
            return Ok(0);
        }
        let due = |c: &super::sql::Tx| -> super::sql::DbResult<Vec<AgentHealth>> {
            let mut due = Vec::new();
            for (card_url, s) in seen {
                if let Some(held) = queries::agent_health(c, card_url)?
                    && let Some(next) = next_health(&held, s)
                {
                    due.push(next);
                }
            }
            Ok(due)
        };
        // Read first: a pass whose agents' health is not due takes no write lock at all.
        if self.read("read the agents' health", due)?.is_empty() {
            return Ok(0);
        }
        self.write("journal the agents' health", |tx| {
            let e = self.err("journal the agents' health");
            let mut written = 0;
            for next in due(tx).map_err(&e)? {
                if queries::set_agent_health(tx, &next).map_err(&e)? {
                    written += 1;
                }
            }
            Ok(written)
        })
    }

    /// Returns what is stale before `before`: the unfinished attempts not needing a human last
    /// heard of before it (at most `limit`, and their count), and the agents failing since
    /// before it that work waits on.
    pub fn stale(&self, before: DateTime<Utc>, limit: u64) -> Result<Stale, JournalError> {
        let before = queries::ms(before);
        self.read("read what is stale", |c| {
            let (attempts, attempts_total) = queries::unheard_attempts(c, before, limit)?;
            Ok(Stale {
                attempts,
                attempts_total,
                agents: queries::failing_agents(c, before)?,
            })
        })
    }

    /// Returns the unfinished attempt not needing a human that was heard of longest ago
    /// (`a2a_recover_oldest_unfinished_age_seconds`), `None` when there is none.
    pub fn longest_unheard(&self) -> Result<Option<Unheard>, JournalError> {
        self.read("read what is stale", |c| {
            Ok(queries::unheard_attempts(c, i64::MAX, 1)?
                .0
                .into_iter()
                .next())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    fn held(success: Option<i64>, failure: Option<i64>, since: Option<i64>) -> AgentHealth {
        AgentHealth {
            card_url: "http://a.example/.well-known/agent-card.json".into(),
            fetched_at: None,
            last_success_at: success.map(t),
            last_failure_at: failure.map(t),
            failing_since: since.map(t),
            registered: false,
            waited_on: true,
        }
    }

    fn seen(answered: Option<i64>, failed: Option<i64>, since: Option<i64>) -> AgentSeen {
        AgentSeen {
            answered: answered.map(t),
            failed: failed.map(t),
            failing_since: since.map(t),
        }
    }

    #[test]
    fn an_answer_within_a_minute_of_the_last_one_journaled_writes_nothing() {
        let h = held(Some(0), None, None);
        assert_eq!(next_health(&h, &seen(Some(59), None, None)), None);
        let next = next_health(&h, &seen(Some(60), None, None)).unwrap();
        assert_eq!(next.last_success_at, Some(t(60)));
        // A first answer is always written.
        let next = next_health(&held(None, None, None), &seen(Some(1), None, None)).unwrap();
        assert_eq!(next.last_success_at, Some(t(1)));
    }

    #[test]
    fn transitions_are_written_at_once() {
        // Healthy → failing: since the first failure after the last answer.
        let h = held(Some(0), None, None);
        let next = next_health(&h, &seen(Some(1), Some(3), Some(2))).unwrap();
        assert_eq!(
            (
                next.last_success_at,
                next.last_failure_at,
                next.failing_since
            ),
            (Some(t(1)), Some(t(3)), Some(t(2)))
        );
        // Still failing a few seconds later: nothing.
        assert_eq!(next_health(&next, &seen(None, Some(10), Some(5))), None);
        // Still failing a minute later: the last failure only, failing since unchanged.
        let later = next_health(&next, &seen(None, Some(70), Some(65))).unwrap();
        assert_eq!(later.failing_since, Some(t(2)));
        assert_eq!(later.last_failure_at, Some(t(70)));
        // Failing → healthy: at once.
        let back = next_health(&later, &seen(Some(71), None, None)).unwrap();
        assert_eq!(back.failing_since, None);
        assert_eq!(back.last_success_at, Some(t(71)));
        // Failing, answering in between, failing again: a new streak.
        let again = next_health(&later, &seen(Some(80), Some(82), Some(81))).unwrap();
        assert_eq!(again.failing_since, Some(t(81)));
        assert_eq!(again.last_success_at, Some(t(80)));
    }

    #[test]
    fn a_failure_while_healthy_is_noted_at_most_once_a_minute() {
        let h = held(Some(0), Some(0), None);
        assert_eq!(next_health(&h, &seen(Some(30), Some(20), None)), None);
        let next = next_health(&h, &seen(Some(90), Some(80), None)).unwrap();
        assert_eq!(next.failing_since, None);
        assert_eq!(next.last_failure_at, Some(t(80)));
    }
}
