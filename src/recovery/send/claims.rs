//! The claims of a batch after its first: made on the batch's writer thread, one claim ahead
//! of the sends, so that the first sends start once a few attempts are claimed instead of once
//! every attempt is.
//!
//! [`Batch::claim`](super::Batch::claim) claims the first [`FIRST_CLAIM`] attempts on the
//! command's connection and leaves the rest here in claims of growing size ([`Later::new`]);
//! each is handed to the writer ([`Later::start`]) when a send of the claim before it starts,
//! and every send of a later attempt waits for its claim's commit before it goes
//! ([`Later::wait`]). The ordering rule is unchanged: an attempt's endpoint is journaled, with
//! its lease and its send's start, in a commit that is durable before its send starts; an
//! attempt not claimed yet has no endpoint and counts as never sent.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::FutureExt as _;
use futures_util::future::{LocalBoxFuture, Shared};

use crate::journal::{AttemptId, BatchClaim, JournaledEndpoint};
use crate::recovery::commit::Writer;

/// How many attempts the first claim takes, on the command's connection before any send.
pub(super) const FIRST_CLAIM: usize = 16;
/// The most attempts one later claim takes (each takes twice as many as the one before).
const MOST_PER_CLAIM: usize = 256;

/// One attempt to claim: its id, and the endpoint its claim journals.
pub(super) type ToClaim = (AttemptId, Option<JournaledEndpoint>);

/// What one later claim came to, by attempt (or its error's text), shared by the sends that
/// wait for it.
type Claimed = Rc<Result<HashMap<AttemptId, BatchClaim>, String>>;

/// One later claim.
enum Claim {
    /// Not handed to the writer yet.
    Waiting(Vec<ToClaim>),
    /// Handed to the writer: its result, once committed.
    Handed(Shared<LocalBoxFuture<'static, Claimed>>),
}

/// The later claims of a batch.
pub(super) struct Later {
    claims: RefCell<Vec<Claim>>,
    /// The claim each attempt not yet sent is in.
    claim_of: RefCell<HashMap<AttemptId, usize>>,
    /// The attempts the writer claimed whose lease the batch has not taken over yet
    /// ([`Later::take_claimed`]): a batch dropped early releases them too.
    claimed: Arc<Mutex<Vec<AttemptId>>>,
    ttl: Duration,
    send_timeout: Duration,
}

impl Later {
    /// Splits `rest` into claims of growing size, the first twice [`FIRST_CLAIM`].
    pub(super) fn new(rest: Vec<ToClaim>, ttl: Duration, send_timeout: Duration) -> Self {
        let mut claims = Vec::new();
        let mut claim_of = HashMap::with_capacity(rest.len());
        let mut size = FIRST_CLAIM;
        let mut rest = rest.into_iter().peekable();
        while rest.peek().is_some() {
            size = (size * 2).min(MOST_PER_CLAIM);
            let claim: Vec<ToClaim> = rest.by_ref().take(size).collect();
            for (id, _) in &claim {
                claim_of.insert(*id, claims.len());
            }
            claims.push(Claim::Waiting(claim));
        }
        Self {
            claims: RefCell::new(claims),
            claim_of: RefCell::new(claim_of),
            claimed: Arc::new(Mutex::new(Vec::new())),
            ttl,
            send_timeout,
        }
    }

    /// Hands claim `k` to `writer` unless it was already; returns its result to wait for
    /// (`None`: there is no claim `k`).
    pub(super) fn start(
        &self,
        k: usize,
        writer: &Writer<'_>,
    ) -> Option<Shared<LocalBoxFuture<'static, Claimed>>> {
        let mut claims = self.claims.borrow_mut();
        let claim = claims.get_mut(k)?;
        if let Claim::Waiting(items) = claim {
            let items = std::mem::take(items);
            let (done, reply) = tokio::sync::oneshot::channel();
            let (ttl, send_timeout) = (self.ttl, self.send_timeout);
            let claimed = Arc::clone(&self.claimed);
            writer.run(move |journal| {
                let result = journal.claim_for_send(&items, ttl, send_timeout);
                if let Ok(found) = &result {
                    claimed
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .extend(found.iter().filter_map(|c| match c {
                            BatchClaim::Claimed(attempt, _) => Some(attempt.id),
                            _ => None,
                        }));
                }
                // The batch may be gone (a signal): the claim is committed all the same, and
                // its leases released by the batch's drop.
                let _ = done.send(result.map(|found| {
                    items
                        .iter()
                        .map(|(id, _)| *id)
                        .zip(found)
                        .collect::<HashMap<_, _>>()
                }));
            });
            let reply = async move {
                Rc::new(match reply.await {
                    Ok(Ok(found)) => Ok(found),
                    Ok(Err(e)) => Err(format!("failed to claim the attempts: {e}")),
                    Err(_) => Err("the group-commit thread ended before its claim".to_owned()),
                })
            }
            .boxed_local()
            .shared();
            *claim = Claim::Handed(reply);
        }
        match claim {
            Claim::Handed(reply) => Some(reply.clone()),
            Claim::Waiting(_) => None,
        }
    }

    /// Waits for the claim of attempt `id` when it is in a later claim (handing that claim,
    /// and the one after it, to `writer` first); `None` when it is not (claimed already).
    pub(super) async fn wait(
        &self,
        id: AttemptId,
        writer: &Writer<'_>,
    ) -> Option<anyhow::Result<BatchClaim>> {
        let k = self.claim_of.borrow_mut().remove(&id)?;
        let reply = self.start(k, writer)?;
        // One claim ahead of the sends.
        self.start(k + 1, writer);
        Some(match &*reply.await {
            Ok(found) => found
                .get(&id)
                .cloned()
                .ok_or_else(|| anyhow::anyhow!("a claim left out attempt {}", id.0)),
            Err(e) => Err(anyhow::anyhow!("{e}")),
        })
    }

    /// Returns the attempts the writer claimed since the last call.
    pub(super) fn take_claimed(&self) -> Vec<AttemptId> {
        std::mem::take(&mut *self.claimed.lock().unwrap_or_else(PoisonError::into_inner))
    }
}
