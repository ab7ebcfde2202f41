//! Agents' not-before times: a `Retry-After` longer than a2a-recover waits (`a2a::Limits`)
//! becomes a time before which no request goes to the agent, journaled by the command that was
//! told and honoured by every later pass and `follow` (skipped at once, nothing sent).

use crate::a2a::A2aClient;
use crate::journal::{AgentNotBefore, Journal, JournalError};

/// Journals the not-before times agents gave `client` since the last call (at most a day
/// ahead: the limiter clamps them).
pub fn journal_fresh(client: &A2aClient, journal: &Journal) -> Result<(), JournalError> {
    for (interface_url, credential, nb) in client.fresh_not_befores() {
        journal.record_not_before(&AgentNotBefore {
            interface_url,
            credential,
            not_before: nb.at,
            reason: nb.reason,
        })?;
    }
    Ok(())
}
