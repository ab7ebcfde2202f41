//! Agents: the agents table (fetched cards, whether an agent accepts client context ids) and
//! the registry `agents add` keeps, in registration order.

use super::queries;
use super::{Agent, AgentCard, Journal, JournalError};

impl Journal {
    /// Returns an agent by card URL.
    pub fn agent(&self, card_url: &str) -> Result<Option<Agent>, JournalError> {
        self.read("read the agent", |c| queries::agent_by_url(c, card_url))
    }

    /// Stores a fetched card (interface, tenant, skills, raw JSON) on the agent's row.
    pub fn record_agent_card(&self, card: &AgentCard) -> Result<Agent, JournalError> {
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
        trust_dedup: bool,
    ) -> Result<Agent, JournalError> {
        let now = self.now_ms();
        self.write("register the agent", |tx| {
            let e = self.err("register the agent");
            queries::store_card(tx, card, now).map_err(&e)?;
            queries::register_agent(tx, &card.card_url, token_env, trust_dedup, now).map_err(&e)?;
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

    /// Records whether an agent accepts client-chosen context ids; returns whether it changed.
    pub fn set_accepts_context_id(
        &self,
        card_url: &str,
        accepts: bool,
    ) -> Result<bool, JournalError> {
        let now = self.now_ms();
        self.write("journal the agent", |tx| {
            queries::set_accepts_context_id(tx, card_url, accepts, now)
                .map_err(self.err("journal the agent"))
        })
    }
}
