//! An attempt whose journaled interface has left its agent's card (the agent upgraded): a read
//! that the interface no longer answers reads the card again (once per process, then journaled)
//! and, when
//! the card no longer offers that interface, re-chooses one from it (an `interface-moved`
//! event naming both) or, when it offers nothing we speak, says so (a human must look).
//!
//! Only reads re-choose: a resend goes through the look first, and the look is itself a read
//! over the attempt's journaled (possibly re-chosen) interface.

use crate::a2a::{A2aClient, A2aError, Endpoint, InterfaceChoice};
use crate::journal::{Attempt, Journal, JournaledEndpoint};
use crate::recovery::send::agent_card;

/// What reading the card again said about an interface that did not answer.
#[derive(Debug)]
pub enum Rechosen {
    /// The card still offers the interface, or could not be read: the read's error stands.
    Stays,
    /// The interface left the card; reads now go to this one (journaled).
    Moved(Endpoint),
    /// The card offers no interface we speak any more: the reason, for a human.
    Nowhere(String),
}

/// Reads the card of `attempt`'s agent again after a read at `endpoint` failed with `error`;
/// re-chooses (and journals the move) when the error says "not served here" and the card no
/// longer offers the journaled interface.
pub async fn rechoose(
    client: &A2aClient,
    journal: &Journal,
    attempt: &Attempt,
    endpoint: &Endpoint,
    error: &A2aError,
) -> anyhow::Result<Rechosen> {
    if !error.is_not_served_here() {
        return Ok(Rechosen::Stays);
    }
    let Some(card_url) = attempt.agent_url.as_deref() else {
        return Ok(Rechosen::Stays);
    };
    let nowhere = |e: &A2aError| {
        Rechosen::Nowhere(format!(
            "the interface this attempt was sent to (`{}`, {} {}) has left the agent's card and \
             {}",
            crate::sanitize::inert(&crate::a2a::redact_url(&endpoint.url)),
            endpoint.binding.wire().card_name(),
            endpoint.binding.version().as_str(),
            e.summary()
        ))
    };
    // Fetched once per process (a pass over many attempts of one agent reads its card once).
    let info = match client
        .fetch_card_once(card_url, endpoint.credential.as_ref())
        .await
    {
        Ok((info, fetched)) => {
            if fetched {
                journal.record_agent_card(&agent_card(card_url, &info))?;
            }
            info
        }
        Err(e @ A2aError::NoJsonRpcInterface { .. }) => return Ok(nowhere(&e)),
        Err(_) => return Ok(Rechosen::Stays),
    };
    if info.offers(&endpoint.url, endpoint.binding) {
        return Ok(Rechosen::Stays);
    }
    let chosen = match info.choose(InterfaceChoice::default()) {
        Ok(chosen) => chosen,
        Err(e) => return Ok(nowhere(&e)),
    };
    let moved = journal.move_endpoint(
        attempt.id,
        &JournaledEndpoint {
            interface_url: chosen.interface_url.clone(),
            tenant: chosen.tenant.clone(),
            binding: chosen.binding,
        },
    )?;
    Ok(Rechosen::Moved(Endpoint {
        url: chosen.interface_url,
        tenant: moved.tenant,
        binding: chosen.binding,
        placement: info.placement.clone(),
        ..endpoint.clone()
    }))
}
