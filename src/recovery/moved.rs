//! An attempt whose journaled interface has left its agent's card (the agent upgraded): a read
//! that the interface no longer answers reads the card again (once per process, then journaled)
//! and, when the card no longer offers that interface, re-chooses one from it (an
//! `interface-moved` event naming both) or, when it offers nothing we speak, says so (a human
//! must look: [`journal_gone`]).
//!
//! Every read of a known task goes through [`read`]: `reconcile` (its reads, its look for an
//! undelivered reply, and its dry run, which journals nothing: [`Mode::DryRun`]), `follow`
//! (`reconcile --follow-for`, `delegate --follow`) and `compensate` (its reads and its cancel).
//!
//! Only reads re-choose: a resend goes through the look first, and the look is itself a read
//! over the attempt's journaled (possibly re-chosen) interface. A `reply` whose send the old
//! interface refused as "not served here" re-chooses but does not send: the reply stays
//! undelivered, and `reconcile` looks for it at the new interface before it sends it there.

use std::future::Future;

use crate::a2a::{A2aClient, A2aError, Endpoint, InterfaceChoice, ProtocolBinding};
use crate::journal::{
    Attempt, AttemptId, INTERFACE_GONE, Journal, JournalError, JournaledEndpoint,
};
use crate::recovery::send::agent_card;

/// What reading the card again said about an interface that did not answer.
#[derive(Debug)]
pub enum Rechosen {
    /// The card still offers the interface, or could not be read: the read's error stands.
    Stays,
    /// The interface left the card; reads now go to this one (journaled, unless a dry run).
    Moved(Endpoint),
    /// The card offers no interface we speak any more: why, for a human.
    Nowhere(Gone),
}

/// Why an attempt's interface is gone: it left the agent's card, which offers nothing we speak
/// (the journal keeps [`Gone::line`] after [`INTERFACE_GONE`]; the command layer writes its own
/// words for an action's `error`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gone {
    /// The interface's URL, redacted and inert.
    pub url: String,
    /// The binding it was spoken to over.
    pub binding: ProtocolBinding,
    /// The summary of the error reading the card again met (one inert line).
    pub summary: String,
}

impl Gone {
    /// The line the journal keeps (after [`INTERFACE_GONE`]) as the attempt's reason.
    pub fn line(&self) -> String {
        format!(
            "the interface this attempt was sent to (`{}`, {} {}) has left the agent's card and \
             {}",
            self.url,
            self.binding.wire().card_name(),
            self.binding.version().as_str(),
            self.summary
        )
    }
}

/// Whether a re-choice is journaled (every command) or only said (`reconcile --dry-run`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The card and the move are journaled.
    Journal,
    /// Nothing is written: the re-chosen endpoint is returned all the same.
    DryRun,
}

/// What a read through [`read`] came to.
#[derive(Debug)]
pub enum Reread<T> {
    /// The read's answer; `moved` is the interface it was read at when it moved there.
    Read {
        /// The answer (at the re-chosen interface when `moved` is set).
        result: Result<T, A2aError>,
        /// The re-chosen interface, if the journaled one left the card.
        moved: Option<Endpoint>,
    },
    /// The interface left the card, which offers nothing we speak: why, for a human.
    Gone(Gone),
}

/// Runs `read` at `endpoint` (the attempt's journaled interface); when it fails with "not
/// served here" and the interface has left the card, runs it once more at the interface
/// re-chosen from the card.
pub async fn read<T, F, Fut>(
    client: &A2aClient,
    journal: &Journal,
    attempt: &Attempt,
    endpoint: &Endpoint,
    mode: Mode,
    read: F,
) -> Result<Reread<T>, JournalError>
where
    F: Fn(Endpoint) -> Fut,
    Fut: Future<Output = Result<T, A2aError>>,
{
    let first = read(endpoint.clone()).await;
    let Err(e) = &first else {
        return Ok(Reread::Read {
            result: first,
            moved: None,
        });
    };
    Ok(
        match rechoose_as(client, journal, attempt, endpoint, e, mode).await? {
            Rechosen::Stays => Reread::Read {
                result: first,
                moved: None,
            },
            Rechosen::Moved(to) => Reread::Read {
                result: read(to.clone()).await,
                moved: Some(to),
            },
            Rechosen::Nowhere(reason) => Reread::Gone(reason),
        },
    )
}

/// Journals that an attempt's interface is gone (a `failed-for-good` event whose reason starts
/// with [`INTERFACE_GONE`]): `inspect --pending` lists it, `status --check` counts it, until a
/// human resolves the step. Returns the reason as journaled.
pub fn journal_gone(
    journal: &Journal,
    id: AttemptId,
    reason: &str,
) -> Result<String, JournalError> {
    let reason = gone_reason(reason);
    journal.mark_failed_for_good(id, &reason)?;
    Ok(reason)
}

/// The `failed-for-good` reason [`journal_gone`] journals for `reason`.
pub fn gone_reason(reason: &str) -> String {
    format!("{INTERFACE_GONE}: {reason}")
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
) -> Result<Rechosen, JournalError> {
    rechoose_as(client, journal, attempt, endpoint, error, Mode::Journal).await
}

/// [`rechoose`], journaling nothing in [`Mode::DryRun`].
pub async fn rechoose_as(
    client: &A2aClient,
    journal: &Journal,
    attempt: &Attempt,
    endpoint: &Endpoint,
    error: &A2aError,
    mode: Mode,
) -> Result<Rechosen, JournalError> {
    if !error.is_not_served_here() {
        return Ok(Rechosen::Stays);
    }
    let Some(card_url) = attempt.agent_url.as_deref() else {
        return Ok(Rechosen::Stays);
    };
    let nowhere = |e: &A2aError| {
        Rechosen::Nowhere(Gone {
            url: crate::sanitize::inert(&crate::a2a::redact_url(&endpoint.url)),
            binding: endpoint.binding,
            summary: e.summary(),
        })
    };
    // Fetched again once per process (a pass over many attempts of one agent reads its card
    // once), never the copy read before the send.
    let info = match client
        .recheck_card_once(card_url, endpoint.credential.as_ref())
        .await
    {
        Ok((info, fetched)) => {
            if fetched && mode == Mode::Journal {
                journal.record_agent_card(&agent_card(card_url, &info))?;
            }
            info
        }
        Err(e @ (A2aError::NoJsonRpcInterface { .. } | A2aError::CardOverBound { .. })) => {
            return Ok(nowhere(&e));
        }
        Err(_) => return Ok(Rechosen::Stays),
    };
    if info.offers(&endpoint.url, endpoint.binding) {
        return Ok(Rechosen::Stays);
    }
    let chosen = match info.choose(InterfaceChoice::default()) {
        Ok(chosen) => chosen,
        Err(e) => return Ok(nowhere(&e)),
    };
    let tenant = match mode {
        Mode::Journal => {
            journal
                .move_endpoint(
                    attempt.id,
                    &JournaledEndpoint {
                        interface_url: chosen.interface_url.clone(),
                        tenant: chosen.tenant.clone(),
                        binding: chosen.binding,
                    },
                )?
                .tenant
        }
        Mode::DryRun => chosen.tenant.clone(),
    };
    Ok(Rechosen::Moved(Endpoint {
        url: chosen.interface_url,
        tenant,
        binding: chosen.binding,
        placement: info.placement.clone(),
        ..endpoint.clone()
    }))
}
