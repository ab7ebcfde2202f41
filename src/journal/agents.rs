//! Agents: the agents table (fetched cards, whether an agent accepts client context ids, the
//! recovery profile `agents probe` measured) and the registry `agents add` keeps, in
//! registration order.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::queries;
use super::{Agent, AgentCard, AgentNotBefore, AgentProfile, Journal, JournalError};
use crate::model::{AgentOverride, NotBefore, NotBefores, Overrides};

/// How long an agent's row read from the journal is reused: another process's change to it
/// (a card fetched again, `agents add`) is seen at most this late; this journal's own writes to
/// agents drop the copies at once.
pub(super) const AGENT_REUSE: Duration = Duration::from_secs(1);

/// Agents' rows read lately, by card URL. A send reads its agent's row several times (the card's
/// security scheme, its interface, its context id answer), which on a PostgreSQL journal is a
/// round trip each. An agent not found is not kept, so a row inserted later (an intent's bare
/// row) needs no clearing.
#[derive(Default)]
pub(super) struct AgentRows(Mutex<HashMap<String, (Instant, Agent)>>);

impl AgentRows {
    fn get(&self, card_url: &str) -> Option<Agent> {
        let rows = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        rows.get(card_url)
            .filter(|(at, _)| at.elapsed() < AGENT_REUSE)
            .map(|(_, a)| a.clone())
    }

    /// Returns the `accepts_context_id` of a copy still fresh (`None`: no such copy, or the
    /// agent has not answered yet).
    pub(super) fn accepts_context_id(&self, card_url: &str) -> Option<bool> {
        self.get(card_url).and_then(|a| a.accepts_context_id)
    }

    fn put(&self, card_url: &str, agent: Agent) {
        let mut rows = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        rows.insert(card_url.to_owned(), (Instant::now(), agent));
    }

    /// Drops every copy: called by each write that may change an agent's row.
    pub(super) fn clear(&self) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

impl Journal {
    /// Returns whether the agent has answered a reply with a new task (an attempt of it has a
    /// continuation): such an agent may hold a reply in a task we have not seen.
    pub fn agent_continues_replies(&self, card_url: &str) -> Result<bool, JournalError> {
        self.read("read the agent's attempts", |c| {
            queries::agent_continues_replies(c, card_url)
        })
    }

    /// Returns an agent by card URL (a copy read within the last second is reused).
    pub fn agent(&self, card_url: &str) -> Result<Option<Agent>, JournalError> {
        if let Some(agent) = self.agent_rows.get(card_url) {
            return Ok(Some(agent));
        }
        let agent = self.read("read the agent", |c| queries::agent_by_url(c, card_url))?;
        if let Some(a) = &agent {
            self.agent_rows.put(card_url, a.clone());
        }
        Ok(agent)
    }

    /// Stores a fetched card (interface, tenant, skills, raw JSON) on the agent's row.
    pub fn record_agent_card(&self, card: &AgentCard) -> Result<Agent, JournalError> {
        self.agent_rows.clear();
        let now = self.now_ms();
        self.write("journal the agent card", |tx| {
            let e = self.err("journal the agent card");
            queries::store_card(tx, card, now).map_err(&e)?;
            queries::agent_by_url(tx, &card.card_url)
                .map_err(&e)?
                .ok_or_else(|| JournalError::BadValue {
                    column: "agents.card_url",
                    detail: card.card_url.clone(),
                })
        })
    }

    /// Stores a card and puts the agent in the registry (`agents add`), after the others;
    /// `trust_dedup` is set as given (a refresh without `--trust-dedup` clears it).
    pub fn register_agent(
        &self,
        card: &AgentCard,
        token_env: Option<&str>,
        token_cmd: Option<&str>,
        trust_dedup: bool,
    ) -> Result<Agent, JournalError> {
        self.agent_rows.clear();
        let now = self.now_ms();
        self.write("register the agent", |tx| {
            let e = self.err("register the agent");
            queries::store_card(tx, card, now).map_err(&e)?;
            queries::register_agent(tx, &card.card_url, token_env, token_cmd, trust_dedup, now)
                .map_err(&e)?;
            queries::agent_by_url(tx, &card.card_url)
                .map_err(&e)?
                .ok_or_else(|| JournalError::BadValue {
                    column: "agents.card_url",
                    detail: card.card_url.clone(),
                })
        })
    }

    /// Takes an agent out of the registry; returns whether it was registered.
    pub fn unregister_agent(&self, card_url: &str) -> Result<bool, JournalError> {
        self.agent_rows.clear();
        let now = self.now_ms();
        self.write("unregister the agent", |tx| {
            queries::unregister_agent(tx, card_url, now).map_err(self.err("unregister the agent"))
        })
    }

    /// Returns the registry in registration order (first added, first tried).
    pub fn registered_agents(&self) -> Result<Vec<Agent>, JournalError> {
        self.read("read the registry", |c| queries::registered_agents(c, None))
    }

    /// Returns the registered agents whose card advertises `skill`, in registration order.
    pub fn agents_with_skill(&self, skill: &str) -> Result<Vec<Agent>, JournalError> {
        self.read("read the registry", |c| {
            queries::registered_agents(c, Some(skill))
        })
    }

    /// Sets a registered agent's own request limits (`agents add --concurrency/--rate`);
    /// `None` leaves that one to the pass's flag.
    pub fn set_agent_limits(
        &self,
        card_url: &str,
        concurrency: Option<u32>,
        rate: Option<f64>,
    ) -> Result<(), JournalError> {
        self.agent_rows.clear();
        let now = self.now_ms();
        self.write("journal the agent's limits", |tx| {
            queries::set_agent_limits(tx, card_url, concurrency, rate, now)
                .map_err(self.err("journal the agent's limits"))
        })
    }

    /// Returns the registered agents' own request limits by interface URL (what
    /// `a2a::Limits::overrides` takes): concurrency and rate, `None` where the flag decides.
    pub fn agent_limits(&self) -> Result<Overrides, JournalError> {
        let rows = self.read("read the agents' limits", queries::agent_limits)?;
        Ok(rows
            .into_iter()
            .filter_map(|row| {
                let own = AgentOverride {
                    concurrency: row.concurrency.map(|c| c as usize),
                    rate: row.rate,
                };
                Some((row.interface_url?, own))
            })
            .collect())
    }

    /// Journals an agent's not-before time (a `Retry-After` too long to wait for), so that
    /// later passes make no request to it before then; those already passed are forgotten.
    pub fn record_not_before(&self, nb: &AgentNotBefore) -> Result<(), JournalError> {
        let now = self.now_ms();
        self.write("journal the agent's not-before time", |tx| {
            queries::record_not_before(tx, nb, now)
                .map_err(self.err("journal the agent's not-before time"))
        })
    }

    /// Returns the agents' not-before times still ahead, by interface URL and credential.
    pub fn not_befores(&self) -> Result<Vec<AgentNotBefore>, JournalError> {
        let now = self.now_ms();
        self.read("read the agents' not-before times", |c| {
            queries::not_befores(c, now)
        })
    }

    /// Returns the agents' not-before times still ahead as the request limiter takes them
    /// (`a2a::Limits::not_before`).
    pub fn not_before_limits(&self) -> Result<NotBefores, JournalError> {
        Ok(self
            .not_befores()?
            .into_iter()
            .map(|nb| {
                (
                    (nb.interface_url, nb.credential),
                    NotBefore {
                        at: nb.not_before,
                        reason: nb.reason,
                    },
                )
            })
            .collect())
    }

    /// Returns a registered agent's own request limits: concurrency and rate.
    pub fn limits_of_agent(
        &self,
        card_url: &str,
    ) -> Result<(Option<u32>, Option<f64>), JournalError> {
        let rows = self.read("read the agents' limits", queries::agent_limits)?;
        Ok(rows
            .into_iter()
            .find(|row| row.card_url == card_url)
            .map_or((None, None), |row| (row.concurrency, row.rate)))
    }

    /// Records whether an agent accepts client-chosen context ids; returns whether it changed.
    pub fn set_accepts_context_id(
        &self,
        card_url: &str,
        accepts: bool,
    ) -> Result<bool, JournalError> {
        // Nearly always journaled already, after an agent's first send: a read, not a write
        // transaction (which on PostgreSQL takes the journal's write lock and a durable commit).
        let known = self.read("read the agent", |c| {
            queries::accepts_context_id(c, card_url)
        })?;
        if known == Some(accepts) {
            return Ok(false);
        }
        self.agent_rows.clear();
        let now = self.now_ms();
        self.write("journal the agent", |tx| {
            queries::set_accepts_context_id(tx, card_url, accepts, now)
                .map_err(self.err("journal the agent"))
        })
    }

    /// Stores the recovery profile `agents probe` measured on the agent's row (a bare row is
    /// added for an agent never seen before), and what it learnt about client context ids
    /// (`accepts`: `None` leaves the journaled answer as it is), in one transaction.
    pub fn record_agent_profile(
        &self,
        card_url: &str,
        profile: &AgentProfile,
        accepts: Option<bool>,
    ) -> Result<Agent, JournalError> {
        self.agent_rows.clear();
        let now = self.now_ms();
        self.write("journal the agent's profile", |tx| {
            let e = self.err("journal the agent's profile");
            queries::store_profile(tx, card_url, profile, now).map_err(&e)?;
            if let Some(accepts) = accepts {
                queries::set_accepts_context_id(tx, card_url, accepts, now).map_err(&e)?;
            }
            queries::agent_by_url(tx, card_url)
                .map_err(&e)?
                .ok_or_else(|| JournalError::BadValue {
                    column: "agents.card_url",
                    detail: card_url.to_owned(),
                })
        })
    }
}
