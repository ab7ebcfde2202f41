//! Sending one message with its crash points, and recording the outcome: the one send path of
//! `delegate`, reconcile's resends and re-delegations, and `reply`.
//!
//! Order, for an attempt already committed `INTENT` (its messageId and contextId journaled):
//! 1. Claim the attempt's lease (`Journal::claim`); held by another live process → nothing is
//!    sent ([`Sent::Busy`]). Every sender claims, whether or not it holds the pass lock, so a
//!    `delegate` racing a `reconcile` on one step never sends twice.
//! 2. Re-read the attempt under the lease: if another process settled it meanwhile, stop.
//! 3. No endpoint journaled: take the agent's card (cached in `agents`, else fetched and
//!    stored), journal the endpoint — from here on the attempt counts as possibly sent.
//!    An endpoint journaled: the send may have happened, so look first (`lookup`, bucket 1)
//!    unless the operator approved one resend without a look (`resolve --as resend`, consumed
//!    before the send): decided here, and only here, for every caller.
//! 4. Crash point `after-intent`; send `SendMessage` (`returnImmediately: true`, our ids);
//!    crash point `after-send`, before anything of the answer is journaled.
//! 5. Journal the task, the direct reply, the refusal, or the failure (the attempt stays
//!    `INTENT` when the outcome is unknown); release the lease.
//!
//! A reply ([`Sender::deliver_reply`]) follows the same order on the attempt's lease, with its
//! own messageId committed first by the caller.
//!
//! Batches group the commits of this order without changing it per attempt: `delegate --plan`
//! sends its new steps through [`Batch`] (leases and endpoints of all steps in one transaction,
//! answers group-committed, see `send/batch.rs`); `reconcile` claims a page's intents in one
//! transaction and continues each with [`Sender::deliver_claimed`], whose found task goes into
//! the pass's group commit with the release of its lease.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::Context as _;
use serde_json::{Map, Value};

use crate::a2a::TaskView;
use crate::a2a::types;
use crate::a2a::{
    A2aClient, A2aError, AgentCardInfo, Credential, Endpoint, ErrorClass, InterfaceChoice,
    Placement, ProtocolBinding, origin_of,
};
use crate::clock::Clock;
use crate::crash::{self, Point};
use crate::journal::{
    self, Agent, AgentCard, Attempt, AttemptId, AttemptState, Claim, FailureKind, Journal,
    JournalError, Lease, NeedsHuman, Reply, ReplyState, SendOutcome, SendRecord, Source,
};
use crate::recovery::detail::{Detail, Why};
use crate::recovery::error::unusable_answer;
use crate::recovery::event::{Event, Sink};
use crate::recovery::lookup::{self, LookHow, Sweeps};
use crate::recovery::moved::{self, Rechosen};

mod batch;
mod claims;
mod wire;

pub use batch::{Answer, Batch, BatchItem, Commit, Ready};

/// The message to send for an attempt, and how to reach its agent.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// The message text.
    pub text: String,
    /// The message's `metadata`.
    pub metadata: Option<Map<String, Value>>,
    /// A data part sent beside the text (`delegate --data`, a plan step's `data`).
    pub data: Option<Value>,
    /// The bearer credential (read from the journaled variable name).
    pub credential: Option<Credential>,
    /// Whether the credential may go to an interface on another origin than the card's.
    pub allow_cross_origin: bool,
    /// The tasks the message refers to (`referenceTaskIds`): a compensation names the task it
    /// undoes when it goes to that task's agent.
    pub reference_task_ids: Vec<String>,
    /// What the step forced of the agent's interface (`--binding`, `--protocol`).
    pub interface: InterfaceChoice,
    /// The listener's public base URL the agent is asked to push to (`--push`), if any: the
    /// send carries the attempt's push config when the agent's card offers push.
    pub push: Option<String>,
}

/// Which stage a failure happened at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Fetching the Agent Card (nothing was sent).
    Card,
    /// The look before a resend (nothing was sent).
    Look,
    /// The send itself.
    Send,
}

/// The exit code of a card that failed a never-sent attempt ([`Sent::Failed`] at
/// [`Stage::Card`]): the attempt stays `INTENT`, so "run again later" (3), whatever the card's
/// error (past the card patience it is [`Sent::Refused`] or [`Sent::NeedsHuman`] instead);
/// only a bad URL or credential is a usage error (2).
pub fn card_failure_code(error: &A2aError) -> u8 {
    if error.is_bad_setup() {
        crate::exit::USAGE
    } else {
        crate::exit::WORK_REMAINS
    }
}

impl Stage {
    /// Returns its name in action records.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Card => "card",
            Self::Look => "look",
            Self::Send => "send",
        }
    }
}

/// What a send did; every variant carries the attempt as journaled afterwards.
#[derive(Debug)]
pub enum Sent {
    /// The agent answered with a task (sent now), journaled.
    Task(Attempt),
    /// The look found the task a previous send created; nothing was resent.
    Found(Attempt),
    /// The agent answered with a direct Message (`REPLIED`).
    Replied(Attempt),
    /// The agent definitively refused (`REFUSED`); nothing was created.
    Refused(Attempt, A2aError),
    /// The look could not tell whether a previous send created anything (`UNCERTAIN`).
    Uncertain(Attempt, lookup::Unprovable),
    /// The look found nothing, but the last send may still be in flight until this time (its
    /// horizon): nothing was sent, the attempt stays `INTENT`; look again later.
    InFlight(Attempt, chrono::DateTime<chrono::Utc>),
    /// Not delivered, or the outcome is unknown: the attempt stays `INTENT` (failure journaled).
    Failed {
        /// The attempt.
        attempt: Attempt,
        /// Where it failed.
        stage: Stage,
        /// The error.
        error: A2aError,
    },
    /// A human must look, although the attempt stays `INTENT` and every pass tries it again
    /// (the `needs-human` event journaled): its agent's card has been unreachable for longer
    /// than the card patience (nothing was sent), or the send was answered with more than
    /// `--max-response-size` (the next pass looks for what it may have created).
    NeedsHuman {
        /// The attempt.
        attempt: Attempt,
        /// Where it failed: [`Stage::Card`] or [`Stage::Send`].
        stage: Stage,
        /// The error this time.
        error: A2aError,
        /// Why, as journaled.
        why: NeedsHuman,
    },
    /// Another live process holds the attempt's lease; nothing was done.
    Busy(Attempt, Lease),
    /// Another process settled the attempt meanwhile; nothing was sent.
    Settled(Attempt),
}

impl Sent {
    /// Returns the attempt as journaled after the send.
    pub fn attempt(&self) -> &Attempt {
        match self {
            Self::Task(a)
            | Self::Found(a)
            | Self::Replied(a)
            | Self::Refused(a, _)
            | Self::Uncertain(a, _)
            | Self::InFlight(a, _)
            | Self::Failed { attempt: a, .. }
            | Self::NeedsHuman { attempt: a, .. }
            | Self::Busy(a, _)
            | Self::Settled(a) => a,
        }
    }

    /// A look or send that failed (the attempt stays `INTENT`, its failure journaled):
    /// [`Sent::NeedsHuman`] when the agent's answer was over `--max-response-size`, else
    /// [`Sent::Failed`].
    pub fn failure(attempt: Attempt, stage: Stage, error: A2aError) -> Self {
        match unusable_answer(&error, stage.as_str()) {
            Some(why) => Self::NeedsHuman {
                attempt,
                stage,
                error,
                why,
            },
            None => Self::Failed {
                attempt,
                stage,
                error,
            },
        }
    }
}

/// What a reply send did.
#[derive(Debug)]
pub enum ReplySent {
    /// The agent accepted it; the reply is `DELIVERED` and the task's new state journaled.
    Delivered(Attempt),
    /// The agent refused it (`REFUSED`).
    Refused(A2aError),
    /// Not delivered, or the outcome is unknown: the reply stays `INTENT` (error journaled).
    Failed(A2aError),
    /// Not delivered: the interface does not serve the task any more and has left the agent's
    /// card; the attempt now reads the interface re-chosen from it (journaled). The reply stays
    /// `INTENT`: it goes there only after a look for it (`reconcile`), never blind.
    Moved(A2aError, Endpoint),
    /// Not delivered: the interface left the agent's card, which offers nothing we speak (the
    /// reason; the attempt is journaled as needing a human, the reply stays `INTENT`).
    Gone(moved::Gone),
    /// Another live process holds the attempt's lease; nothing was sent.
    Busy(Lease),
    /// The reply was settled meanwhile by another process.
    Settled(Reply),
}

/// A send's answer as received.
type Answered = crate::a2a::Raw<types::SendMessageResponse>;

/// What a send needs beyond the attempt: where it goes and whether our contextId goes along.
struct Prepared {
    endpoint: Endpoint,
    card_url: String,
    with_context: bool,
}

/// What the look before a resend came to, when it was not proven absent.
enum Looked<T> {
    /// Journaled already (uncertain, failed).
    Done(Sent),
    /// The task a previous send created, as the look's `found` handled it.
    Found(T),
}

/// What [`Sender::deliver_claimed`] did.
#[derive(Debug)]
pub enum Claimed {
    /// The look found the task a previous send created: the record journals it and releases
    /// the lease (for a group commit); the attempt as it will be once journaled.
    Found(SendRecord, Attempt),
    /// Anything else, journaled and the lease released.
    Done(Sent),
}

/// Releases a lease when dropped (also when a pass is cut by its deadline or a signal), unless
/// disarmed (the release then goes with a group commit).
struct LeaseGuard<'a> {
    journal: &'a Journal,
    id: AttemptId,
    armed: bool,
}

impl Drop for LeaseGuard<'_> {
    fn drop(&mut self) {
        // A killed process runs no drop-time work (the simulator's crash).
        if crate::sim_seam::killed() {
            return;
        }
        if !self.armed {
            return;
        }
        if let Err(e) = self.journal.release(self.id) {
            tracing::warn!("failed to release the lease on attempt {}: {e}", self.id);
        }
    }
}

/// Everything a send needs: the journal, the wire client, the clock and the limits.
pub struct Sender<'a> {
    /// Told about the send's steps before its outcome ([`Event::Sending`]).
    pub sink: &'a dyn Sink,
    /// The journal.
    pub journal: &'a Journal,
    /// The wire client.
    pub client: &'a A2aClient,
    /// The real clock (time windows of the look).
    pub clock: &'a dyn Clock,
    /// How far the agent's clock may be behind ours (the look by time).
    pub clock_skew: Duration,
    /// How long a lease is held before another host may break it.
    pub lease_ttl: Duration,
    /// Looks by time shared by the intents of one reconcile page, if any.
    pub sweeps: Option<&'a Sweeps>,
    /// How long an Agent Card that cannot be read or reached is waited out, from the attempt's
    /// first card failure, before the attempt needs a human (`--card-patience`).
    pub card_patience: Duration,
}

/// The default of `--card-patience`: one hour.
pub const DEFAULT_CARD_PATIENCE: Duration = Duration::from_hours(1);

/// Returns the lease time for sends bounded by a per-request `timeout`: enough for a card fetch,
/// a look of several pages and the send, and at least two minutes. It always outlives the
/// send's in-flight horizon (twice `timeout`, [`Journal::send_horizon`]): while a live sender
/// holds the lease, no other process looks and resends.
pub fn lease_ttl_for(timeout: Duration) -> Duration {
    (timeout * 8).max(Duration::from_mins(2))
}

/// Returns the request timeout journaled with a send (its in-flight horizon is twice it): the
/// client's `--timeout`, or the hidden testing aid [`crate::env::TEST_SEND_TIMEOUT`].
pub fn journaled_timeout(client: &A2aClient) -> Duration {
    static TEST: std::sync::OnceLock<Option<Duration>> = std::sync::OnceLock::new();
    let test = TEST.get_or_init(|| {
        std::env::var(crate::env::TEST_SEND_TIMEOUT)
            .ok()
            .and_then(|s| crate::duration::parse_duration(&s).ok())
    });
    test.unwrap_or(client.config().timeout)
}

/// How a journaled attempt's agent is called: the binding and where the credential goes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JournaledWire {
    /// The binding ([`journaled_wire`]).
    pub binding: ProtocolBinding,
    /// Where the credential goes, from the agent's journaled card.
    pub placement: Placement,
}

/// Returns how a journaled attempt is called, read from the journal alone (never from a live
/// card, so every pass and command calls it the same way):
///
/// - the binding journaled with its endpoint; for an attempt journaled before bindings were,
///   the one its agent's journaled card offers at the attempt's interface URL (v1.0 JSON-RPC
///   when no journaled card names it);
/// - where its credential goes: what its agent's journaled card's security schemes ask for
///   (`a2a::card_placement`), a bearer when no card is journaled.
pub fn journaled_wire(journal: &Journal, attempt: &Attempt) -> anyhow::Result<JournaledWire> {
    let agent = match attempt.agent_url.as_deref() {
        Some(card_url) => journal.agent(card_url)?,
        None => None,
    };
    journaled_wire_of(attempt, agent.as_ref())
}

/// [`journaled_wire`] of an attempt whose agent's row (`None`: not journaled) is read already.
fn journaled_wire_of(attempt: &Attempt, agent: Option<&Agent>) -> anyhow::Result<JournaledWire> {
    let Some(card_url) = attempt.agent_url.as_deref() else {
        return Ok(JournaledWire {
            binding: attempt.binding.unwrap_or_default(),
            placement: Placement::Bearer,
        });
    };
    let card = agent.and_then(|a| a.card_json.as_deref());
    let key = wire::Key {
        card_url,
        card,
        binding: attempt.binding,
        interface_url: attempt.interface_url.as_deref(),
    };
    wire::memo(&key, || wire_of_card(card_url, attempt, card))
}

/// [`journaled_wire`] of an attempt of an agent whose journaled card is `card`.
fn wire_of_card(
    card_url: &str,
    attempt: &Attempt,
    card: Option<&str>,
) -> anyhow::Result<JournaledWire> {
    let placement = match card.map(serde_json::from_str::<Value>) {
        Some(Ok(raw)) => crate::a2a::card_placement(card_url, &raw)?,
        Some(Err(_)) | None => Placement::Bearer,
    };
    let binding = match (attempt.binding, &attempt.interface_url, card) {
        (Some(binding), _, _) => binding,
        (None, Some(interface_url), Some(json)) => {
            ProtocolBinding::of_card_interface(card_url, json, interface_url).unwrap_or_default()
        }
        (None, _, _) => ProtocolBinding::default(),
    };
    Ok(JournaledWire { binding, placement })
}

/// Returns the wire endpoint of a journaled attempt: always where it was first sent, called as
/// `wire` says ([`journaled_wire`]).
pub fn endpoint_of(
    attempt: &Attempt,
    out: &Outgoing,
    wire: JournaledWire,
) -> anyhow::Result<Endpoint> {
    let url = attempt
        .interface_url
        .clone()
        .context("the attempt has no journaled endpoint")?;
    let card = attempt
        .agent_url
        .as_deref()
        .context("the attempt has no agent")?;
    Ok(Endpoint {
        url,
        tenant: attempt.tenant.clone(),
        binding: wire.binding,
        card_origin: origin_of(card)?,
        credential: out.credential.clone(),
        placement: wire.placement,
        allow_cross_origin: attempt.may_cross_origin(out.allow_cross_origin),
    })
}

/// Returns the agents-table record of a fetched card, with its default interface.
pub fn agent_card(card_url: &str, info: &AgentCardInfo) -> AgentCard {
    AgentCard {
        card_url: card_url.to_owned(),
        interface_url: info.interface_url.clone(),
        protocol_version: Some(info.binding.version().as_str().to_owned()),
        binding: info.binding,
        tenant: info.tenant.clone(),
        card_json: info.raw.to_string(),
        skills: info.card.skills.iter().map(|s| s.id.clone()).collect(),
    }
}

/// Crash point `after-compensate-send` for a compensation step (`STEP~compensate`), armed by
/// either its own name or the name of the step it undoes.
fn compensate_crash_point(step: &str) {
    if let Some(undone) = step.strip_suffix(crate::plan_file::COMPENSATE_SUFFIX) {
        crash::at(Point::AfterCompensateSend, step);
        crash::at(Point::AfterCompensateSend, undone);
    }
}

fn to_hash(m: Option<&Map<String, Value>>) -> Option<HashMap<String, Value>> {
    m.map(|m| m.clone().into_iter().collect())
}

/// Builds a `SendMessage` request (`returnImmediately: true`, `role: ROLE_USER`).
pub(crate) fn request(
    message_id: &str,
    context_id: Option<&str>,
    task_id: Option<&str>,
    text: &str,
    metadata: Option<&Map<String, Value>>,
    references: &[String],
) -> types::SendMessageRequest {
    types::SendMessageRequest {
        message: types::Message {
            message_id: message_id.to_owned(),
            context_id: context_id.map(str::to_owned),
            task_id: task_id.map(str::to_owned),
            // Role::default() is UNSPECIFIED, which servers refuse: always set it.
            role: types::Role::User,
            parts: vec![types::Part::text(text.to_owned())],
            metadata: to_hash(metadata),
            extensions: None,
            reference_task_ids: (!references.is_empty()).then(|| references.to_vec()),
        },
        configuration: Some(types::SendMessageConfiguration {
            accepted_output_modes: None,
            task_push_notification_config: None,
            history_length: None,
            return_immediately: Some(true),
        }),
        metadata: None,
        tenant: None,
    }
}

impl Sender<'_> {
    /// Returns whether the operator accepted ONE send of `attempt` without a look (`resolve
    /// --as resend`), told as `look`/`resend-approved`. The one place the approval is decided:
    /// under the attempt's lease, after it was read again, consuming (committing) the approval
    /// before the send (journal/operator.rs).
    fn resend_approved(&self, attempt: &Attempt) -> anyhow::Result<bool> {
        if !self.journal.take_resend_approval(attempt.id)? {
            return Ok(false);
        }
        self.note(attempt, "look", "resend-approved", &Detail::default())?;
        Ok(true)
    }

    fn note(
        &self,
        attempt: &Attempt,
        action: &'static str,
        outcome: &'static str,
        detail: &Detail,
    ) -> anyhow::Result<()> {
        self.sink.event(Event::Sending {
            attempt,
            action,
            outcome,
            detail,
        })
    }

    /// Claims the attempt's lease; returns the attempt as journaled after the claim, and the
    /// guard (or the lease another process holds).
    fn claim(&self, id: AttemptId) -> anyhow::Result<(Result<LeaseGuard<'_>, Lease>, Attempt)> {
        let (claim, attempt) = self.journal.claim_row(id, self.lease_ttl)?;
        Ok(match claim {
            Claim::Claimed(_) => (
                Ok(LeaseGuard {
                    journal: self.journal,
                    id,
                    armed: true,
                }),
                attempt,
            ),
            Claim::HeldBy(lease) => (Err(lease), attempt),
        })
    }

    /// Sends an `INTENT` attempt (see the module docs for the order); `step` names it for the
    /// crash points.
    pub async fn deliver(&self, id: AttemptId, out: &Outgoing, step: &str) -> anyhow::Result<Sent> {
        let current = self.journal.attempt(id)?;
        Box::pin(self.deliver_read(current, out, step)).await
    }

    /// [`Sender::deliver`] of an attempt the caller has just read from the journal (`current`,
    /// a hint: whatever decides is read again under the attempt's lease).
    pub async fn deliver_read(
        &self,
        current: Attempt,
        out: &Outgoing,
        step: &str,
    ) -> anyhow::Result<Sent> {
        let id = current.id;
        // A never-sent attempt goes the batch's way, as a batch of one: lease, re-read,
        // endpoint and send stamp in ONE transaction, the answer and the lease's release in
        // another (two durable commits instead of five).
        if current.state == AttemptState::Intent
            && lookup::never_sent(&current)
            && self.card_in_journal(&current)?
        {
            let item = BatchItem {
                attempt: current,
                out: out.clone(),
                step: step.to_owned(),
            };
            if let Some(sent) = Box::pin(self.deliver_fresh(&item)).await? {
                return Ok(sent);
            }
        }
        let (guard, attempt) = match self.claim(id)? {
            (Ok(guard), attempt) => (guard, attempt),
            (Err(lease), attempt) => return Ok(Sent::Busy(attempt, lease)),
        };
        if attempt.state != AttemptState::Intent {
            return Ok(Sent::Settled(attempt));
        }
        let attempt = if lookup::never_sent(&attempt) {
            match self.endpoint_from_card(attempt, out).await? {
                Ok(a) => a,
                Err(sent) => return Ok(sent),
            }
        } else {
            if !self.resend_approved(&attempt)?
                && let Some(looked) = self
                    .look(
                        &attempt,
                        out,
                        lookup::journal_found(self.journal, attempt.id),
                    )
                    .await?
            {
                return Ok(match looked {
                    Looked::Done(sent) => sent,
                    Looked::Found((now, _)) => Sent::Found(now),
                });
            }
            attempt
        };
        if let Some(skipped) = self.skipped(&attempt, out) {
            return Ok(skipped);
        }
        if let Some(busy) = self.begin_send(&attempt)? {
            return Ok(busy);
        }
        let sent = self.send(attempt, out, step).await;
        drop(guard);
        sent
    }

    /// Whether the attempt's agent is registered with its card's interface in the journal (the
    /// endpoint needs no fetch).
    fn card_in_journal(&self, attempt: &Attempt) -> anyhow::Result<bool> {
        let Some(card_url) = attempt.agent_url.as_deref() else {
            return Ok(false);
        };
        Ok(self
            .journal
            .agent(card_url)?
            .is_some_and(|a| a.registered.is_some() && a.interface_url.is_some()))
    }

    /// [`Sender::deliver`] of a never-sent attempt through a [`Batch`] of one, its answer
    /// committed at once; `None` when the batch leaves it to the one-attempt path (its card
    /// could not be read, or another process journaled its endpoint first).
    async fn deliver_fresh(&self, item: &BatchItem) -> anyhow::Result<Option<Sent>> {
        let mut batch = Batch::new(self);
        let ready = batch
            .claim(std::slice::from_ref(item))
            .await?
            .pop()
            .context("a batch of one claimed nothing")?;
        let attempt = match ready {
            Ready::Send(attempt) => attempt,
            Ready::Done(sent) => return Ok(Some(sent)),
            Ready::Deliver => return Ok(None),
        };
        if let Some(skipped) = self.skipped(&attempt, &item.out) {
            return Ok(Some(skipped));
        }
        match batch.send(attempt, item).await? {
            Ok(answer) => batch.push(answer),
            Err(sent) => return Ok(Some(sent)),
        }
        let commit = batch
            .commit_here()
            .context("a batch of one had no answer")?;
        let (_, sent) = batch
            .finish(commit)?
            .pop()
            .context("a batch of one journaled nothing")?;
        sent.map(Some)
    }

    /// Right before a send: `Some` (nothing is sent, nothing journaled) when the agent's
    /// circuit is open for this pass or its not-before time is ahead (`a2a::Limits`), so that
    /// no send start is stamped.
    fn skipped(&self, attempt: &Attempt, out: &Outgoing) -> Option<Sent> {
        let url = attempt.interface_url.as_deref()?;
        let key = out.credential.as_ref().map(Credential::key);
        self.client
            .skipped(url, key.as_deref())
            .map(|skip| Sent::Failed {
                attempt: attempt.clone(),
                stage: Stage::Send,
                error: A2aError::Skipped {
                    url: skip.agent,
                    method: "SendMessage",
                    reason: skip.reason,
                    not_before: skip.not_before,
                },
            })
    }

    /// Right before a send: re-checks the lease (another process may have broken it while
    /// this one looked) and stamps the send's start and request timeout (its in-flight
    /// horizon); `Some` (nothing may be sent) when another process holds the lease now.
    fn begin_send(&self, attempt: &Attempt) -> anyhow::Result<Option<Sent>> {
        let timeout = journaled_timeout(self.client);
        Ok(
            match self
                .journal
                .begin_send(attempt.id, self.lease_ttl, timeout)?
            {
                Claim::Claimed(_) => None,
                Claim::HeldBy(lease) => Some(Sent::Busy(self.journal.attempt(attempt.id)?, lease)),
            },
        )
    }

    /// Journals the endpoint of a never-sent attempt, from the cached card or a fetched one.
    async fn endpoint_from_card(
        &self,
        attempt: Attempt,
        out: &Outgoing,
    ) -> anyhow::Result<Result<Attempt, Sent>> {
        let card_url = attempt
            .agent_url
            .clone()
            .context("the attempt has no agent")?;
        let endpoint = match self.card_endpoint(&card_url, out).await? {
            Ok(endpoint) => endpoint,
            Err(error) => return self.card_failed(&attempt, error).map(Err),
        };
        self.say_unsearchable(&attempt, &endpoint)?;
        let attempt = self.journal.set_endpoint(attempt.id, &endpoint)?;
        Ok(Ok(attempt))
    }

    /// Says once per agent and process, before the first send to it, that an agent whose
    /// binding has no `ListTasks` cannot be searched after a crash (a `send`/`unsearchable`
    /// note, which `delegate` shows as a warning).
    pub(crate) fn say_unsearchable(
        &self,
        attempt: &Attempt,
        endpoint: &journal::JournaledEndpoint,
    ) -> anyhow::Result<()> {
        static SAID: crate::sim_seam::OncePerProcess = crate::sim_seam::OncePerProcess::new();
        let b = endpoint.binding;
        let Some(card_url) = attempt.agent_url.as_deref() else {
            return Ok(());
        };
        if b.can_list_tasks() {
            return Ok(());
        }
        if !SAID.first(card_url) {
            return Ok(());
        }
        let trusted = self
            .journal
            .agent(card_url)
            .ok()
            .flatten()
            .is_some_and(|a| a.trust_dedup);
        let detail = Detail {
            trust_dedup: Some(trusted),
            why: Some(Why::Unsearchable {
                agent: crate::a2a::redact_url(card_url),
                binding: b,
                trusted,
            }),
            ..Detail::default()
        };
        self.note(attempt, "send", "unsearchable", &detail)
    }

    /// Journals a card that failed a never-sent attempt: a readable card with no interface we
    /// speak, or one over a bound on cards (its size, interfaces, skills), refuses it
    /// (`REFUSED`); one we reached but cannot read (an error status, not
    /// JSON, not a card, too large) leaves it `INTENT` until it has failed for longer than the
    /// card patience (from the first card failure journaled), then it is `REFUSED` too: a
    /// human must look at the agent. One we cannot reach (refused, timed out, 429, 502–504) is
    /// an agent unreachable this pass: `INTENT`, tried again by each pass; past the card
    /// patience it needs a human too ([`Sent::NeedsHuman`]), but stays `INTENT`, so that the
    /// pass after the outage sends it without one. Nothing was sent either way.
    fn card_failed(&self, attempt: &Attempt, error: A2aError) -> anyhow::Result<Sent> {
        let summary = error.summary();
        if matches!(
            error,
            A2aError::NoJsonRpcInterface { .. } | A2aError::CardOverBound { .. }
        ) {
            self.journal.record_refusal(attempt.id, &summary)?;
            return Ok(Sent::Refused(self.journal.attempt(attempt.id)?, error));
        }
        let unreadable = !error.is_transient() && error.class() != ErrorClass::NotSent;
        let unreachable = !unreadable && !error.is_bad_setup();
        let since = self.journal.first_failure(attempt.id, FailureKind::Card)?;
        let now = self.clock.now();
        let overdue = since.filter(|since| {
            now.signed_duration_since(*since)
                .to_std()
                .unwrap_or_default()
                > self.card_patience
        });
        if let Some(since) = overdue.filter(|_| unreadable) {
            let reason = format!(
                "{summary}; the card has been unreadable since {} (longer than --card-patience \
                 {}), nothing was sent",
                crate::clock::rfc3339(since),
                crate::a2a::error::fmt_duration(self.card_patience)
            );
            self.journal.record_refusal(attempt.id, &reason)?;
            return Ok(Sent::Refused(self.journal.attempt(attempt.id)?, error));
        }
        if let Some(since) = overdue.filter(|_| unreachable) {
            let why = NeedsHuman {
                cause: NeedsHuman::CARD_UNREACHABLE.to_owned(),
                reason: format!(
                    "{summary}; the card has been unreachable since {} (longer than \
                     --card-patience {}), nothing was sent; each pass tries it again",
                    crate::clock::rfc3339(since),
                    crate::a2a::error::fmt_duration(self.card_patience)
                ),
            };
            self.journal.record_needs_human(attempt.id, &why)?;
            return Ok(Sent::NeedsHuman {
                attempt: self.journal.attempt(attempt.id)?,
                stage: Stage::Card,
                error,
                why,
            });
        }
        self.journal
            .record_failure(attempt.id, FailureKind::Card, &summary)?;
        Ok(Sent::Failed {
            attempt: self.journal.attempt(attempt.id)?,
            stage: Stage::Card,
            error,
        })
    }

    /// Returns the endpoint an agent's card names, within what the step forces: a registered
    /// agent's card was fetched by `agents add` and is read from the journal; any other (or a
    /// registered one whose interface the step's `--binding`/`--protocol` exclude) is fetched
    /// (once per process) and stored.
    async fn card_endpoint(
        &self,
        card_url: &str,
        out: &Outgoing,
    ) -> anyhow::Result<Result<journal::JournaledEndpoint, A2aError>> {
        let known = self.journal.agent(card_url)?;
        let cached = known
            .as_ref()
            .filter(|a| a.registered.is_some())
            .and_then(|a| {
                Some(journal::JournaledEndpoint {
                    interface_url: a.interface_url.clone()?,
                    tenant: a.tenant.clone(),
                    binding: a.binding?,
                })
            });
        if let Some(endpoint) = cached.filter(|e| out.interface.admits(e.binding)) {
            return Ok(Ok(endpoint));
        }
        let (info, fetched) = match self
            .client
            .fetch_card_once(card_url, out.credential.as_ref())
            .await
        {
            Ok(got) => got,
            Err(error) => return Ok(Err(error)),
        };
        // Fetched earlier by this process and journaled by that caller (should its write have
        // failed, no row yet, this caller journals the card); a registered agent keeps the
        // interface `agents add` chose.
        let journaled = !fetched && (known.is_some() || self.journal.agent(card_url)?.is_some());
        if !journaled && known.as_ref().is_none_or(|a| a.registered.is_none()) {
            self.journal
                .record_agent_card(&agent_card(card_url, &info))?;
        }
        Ok(info
            .choose(out.interface)
            .map(|c| journal::JournaledEndpoint {
                interface_url: c.interface_url,
                tenant: c.tenant,
                binding: c.binding,
            }))
    }

    /// The look before a resend ([`lookup::look_and_journal`], with the page's sweeps if
    /// any); `None` means proven absent (send now). A found task is what `found` made of it;
    /// anything else is journaled.
    async fn look<T>(
        &self,
        attempt: &Attempt,
        out: &Outgoing,
        found: impl FnOnce(TaskView) -> anyhow::Result<T>,
    ) -> anyhow::Result<Option<Looked<T>>> {
        let endpoint = endpoint_of(attempt, out, journaled_wire(self.journal, attempt)?)?;
        let how = LookHow {
            client: self.client,
            endpoint: &endpoint,
            clock: self.clock,
            clock_skew: self.clock_skew,
            sweeps: self.sweeps.map(|s| (s, out.allow_cross_origin)),
            no_id: "the found task has no id",
        };
        Ok(
            match lookup::look_and_journal(self.journal, attempt, how, found).await? {
                lookup::Looked::Absent => {
                    self.note(attempt, "look", "absent", &Detail::default())?;
                    None
                }
                lookup::Looked::Found(t) => Some(Looked::Found(t)),
                lookup::Looked::Uncertain(now, reason) => {
                    Some(Looked::Done(Sent::Uncertain(now, reason)))
                }
                lookup::Looked::InFlight(until) => {
                    let detail = Detail {
                        until: Some(until),
                        ..Detail::default()
                    };
                    self.note(attempt, "look", "in-flight", &detail)?;
                    Some(Looked::Done(Sent::InFlight(
                        self.journal.attempt(attempt.id)?,
                        until,
                    )))
                }
                // Journaled by the look (a `needs-human` event when its answer was too large).
                lookup::Looked::Failed(error) => Some(Looked::Done(Sent::failure(
                    self.journal.attempt(attempt.id)?,
                    Stage::Look,
                    error,
                ))),
            },
        )
    }

    /// Continues [`Sender::deliver`] for an attempt a batch already claimed (and re-read under
    /// its lease: `INTENT`, endpoint journaled), looking first unless the operator approved one
    /// resend. A found task is NOT journaled here: it comes back as a record that journals it
    /// and releases the lease, for the caller's group commit (a found task lost in a crash is
    /// looked up again). Every other outcome is journaled and the lease released, as
    /// [`Sender::deliver`] does.
    pub async fn deliver_claimed(
        &self,
        attempt: Attempt,
        out: &Outgoing,
        step: &str,
    ) -> anyhow::Result<Claimed> {
        let mut guard = LeaseGuard {
            journal: self.journal,
            id: attempt.id,
            armed: true,
        };
        if !self.resend_approved(&attempt)? {
            match self.look(&attempt, out, Ok).await? {
                None => {}
                Some(Looked::Done(sent)) => return Ok(Claimed::Done(sent)),
                Some(Looked::Found(view)) => {
                    guard.armed = false;
                    let now = Journal::preview_task(&attempt, &view, Source::ListTasks)?;
                    let record = SendRecord {
                        attempt: attempt.id,
                        outcome: SendOutcome::Task(view, Source::ListTasks),
                        accepts_context_id: None,
                    };
                    return Ok(Claimed::Found(record, now));
                }
            }
        }
        if let Some(skipped) = self.skipped(&attempt, out) {
            return Ok(Claimed::Done(skipped));
        }
        if let Some(busy) = self.begin_send(&attempt)? {
            guard.armed = false;
            return Ok(Claimed::Done(busy));
        }
        let sent = self.send(attempt, out, step).await;
        drop(guard);
        sent.map(Claimed::Done)
    }

    /// Sends (or resends, same messageId) and journals the answer.
    async fn send(&self, attempt: Attempt, out: &Outgoing, step: &str) -> anyhow::Result<Sent> {
        let prepared = self.prepare(&attempt, out)?;
        match self.exchange(&attempt, out, step, &prepared).await? {
            (Ok(answer), with_context) => {
                self.record_answer(&attempt, &prepared.card_url, &answer, with_context)
            }
            (Err(error), _) => {
                let summary = error.summary();
                if error.class() == ErrorClass::Refused {
                    self.journal.record_refusal(attempt.id, &summary)?;
                    return Ok(Sent::Refused(self.journal.attempt(attempt.id)?, error));
                }
                if let Some(why) = unusable_answer(&error, Stage::Send.as_str()) {
                    self.journal.record_needs_human(attempt.id, &why)?;
                } else if !matches!(error, A2aError::Skipped { .. }) {
                    // A skipped agent (its circuit open) was not asked: nothing to journal.
                    self.journal
                        .record_failure(attempt.id, FailureKind::Send, &summary)?;
                }
                Ok(Sent::failure(
                    self.journal.attempt(attempt.id)?,
                    Stage::Send,
                    error,
                ))
            }
        }
    }

    /// The endpoint of an attempt about to be sent, its agent, and whether to send our contextId.
    fn prepare(&self, attempt: &Attempt, out: &Outgoing) -> anyhow::Result<Prepared> {
        // The agent's row once, for its card and its answer on context ids.
        let agent = match attempt.agent_url.as_deref() {
            Some(card_url) => self.journal.agent(card_url)?,
            None => None,
        };
        let endpoint = endpoint_of(attempt, out, journaled_wire_of(attempt, agent.as_ref())?)?;
        let card_url = attempt.agent_url.clone().unwrap_or_default();
        let accepts = agent.and_then(|a| a.accepts_context_id);
        let with_context =
            attempt.context_id_ours && attempt.context_id.is_some() && accepts != Some(false);
        Ok(Prepared {
            endpoint,
            card_url,
            with_context,
        })
    }

    /// Sends the message, with the crash points around it; an agent refusing our contextId is
    /// remembered (journaled) and sent the message again without it. Returns the answer and
    /// whether the last send carried our contextId; journals nothing of the answer.
    async fn exchange(
        &self,
        attempt: &Attempt,
        out: &Outgoing,
        step: &str,
        prepared: &Prepared,
    ) -> anyhow::Result<(Result<Answered, A2aError>, bool)> {
        let mut with_context = prepared.with_context;
        crash::at(Point::AfterIntent, step);
        loop {
            let mut req = request(
                &attempt.message_id,
                attempt.context_id.as_deref().filter(|_| with_context),
                None,
                &out.text,
                out.metadata.as_ref(),
                &out.reference_task_ids,
            );
            if let Some(data) = &out.data {
                req.message.parts.push(types::Part::data(data.clone()));
            }
            if let Some(base) = &out.push
                && let Some(config) =
                    super::push::register(self.journal, attempt.id, &prepared.card_url, base)?
                && let Some(c) = req.configuration.as_mut()
            {
                c.task_push_notification_config = Some(config);
            }
            let result = self.client.send_message(&prepared.endpoint, &req).await;
            crash::at(Point::AfterSend, step);
            compensate_crash_point(step);
            match result {
                Err(e) if with_context && e.is_context_id_refusal() => {
                    // The refusal created nothing: remember it, send again without a contextId.
                    self.journal
                        .set_accepts_context_id(&prepared.card_url, false)?;
                    let note = "the agent refuses client-chosen context ids; sending again \
                                without one (same messageId)";
                    self.journal
                        .record_failure(attempt.id, FailureKind::Send, note)?;
                    let detail = Detail::wire_error(&e);
                    self.note(attempt, "send", "context-refused", &detail)?;
                    with_context = false;
                }
                result => return Ok((result, with_context)),
            }
        }
    }

    fn record_answer(
        &self,
        attempt: &Attempt,
        card_url: &str,
        answer: &Answered,
        with_context: bool,
    ) -> anyhow::Result<Sent> {
        let (answered_context, is_task) = match &answer.value {
            types::SendMessageResponse::Task(task) => {
                let raw = answer.raw.get("task").cloned().unwrap_or(Value::Null);
                let view = TaskView::from_value(&raw, raw.to_string())
                    .context("the agent's task has no id")?;
                self.journal.apply_task(attempt.id, &view, Source::Send)?;
                (Some(task.context_id.clone()), true)
            }
            types::SendMessageResponse::Message(message) => {
                let raw = answer.raw.get("message").cloned().unwrap_or(Value::Null);
                self.journal.record_direct_reply(
                    attempt.id,
                    &raw.to_string(),
                    message.context_id.as_deref(),
                )?;
                (message.context_id.clone(), false)
            }
        };
        if with_context && answered_context.is_some() && answered_context == attempt.context_id {
            self.journal.set_accepts_context_id(card_url, true)?;
        }
        let now = self.journal.attempt(attempt.id)?;
        Ok(if is_task {
            Sent::Task(now)
        } else {
            Sent::Replied(now)
        })
    }

    /// Sends a journaled `INTENT` reply on its attempt's task (same order as [`Sender::deliver`],
    /// under the attempt's lease); `step` names it for the crash points.
    pub async fn deliver_reply(
        &self,
        reply: &Reply,
        out: &Outgoing,
        step: &str,
    ) -> anyhow::Result<ReplySent> {
        let (guard, attempt) = match self.claim(reply.attempt_id)? {
            (Ok(guard), attempt) => (guard, attempt),
            (Err(lease), _) => return Ok(ReplySent::Busy(lease)),
        };
        let held = self
            .journal
            .replies(reply.attempt_id)?
            .into_iter()
            .find(|r| r.id == reply.id)
            .context("the reply vanished from the journal")?;
        if held.state != ReplyState::Intent {
            return Ok(ReplySent::Settled(held));
        }
        let endpoint = endpoint_of(&attempt, out, journaled_wire(self.journal, &attempt)?)?;
        let task_id = attempt
            .current_task_id()
            .map(str::to_owned)
            .context("the attempt has no task to reply on")?;
        let mut req = request(
            &reply.message_id,
            attempt.context_id.as_deref(),
            Some(&task_id),
            &reply.text,
            None,
            &[],
        );
        if let Some(data) = &reply.data {
            req.message.parts = vec![types::Part::data(data.clone())];
        }
        crash::at(Point::AfterIntent, step);
        let result = self.client.send_message(&endpoint, &req).await;
        crash::at(Point::AfterSend, step);
        let sent = match result {
            Ok(answer) => {
                if let types::SendMessageResponse::Task(_) = &answer.value {
                    let raw = answer.raw.get("task").cloned().unwrap_or(Value::Null);
                    let view = TaskView::from_value(&raw, raw.to_string())
                        .context("the agent's task has no id")?;
                    if continues(&attempt, &task_id, &view) {
                        self.journal
                            .apply_continuation(attempt.id, &view, Source::Send)?;
                    } else {
                        self.journal.apply_task(attempt.id, &view, Source::Send)?;
                    }
                }
                self.journal
                    .set_reply_state(reply.id, ReplyState::Delivered, None, None)?;
                ReplySent::Delivered(self.journal.attempt(attempt.id)?)
            }
            Err(error) => {
                match moved::rechoose(self.client, self.journal, &attempt, &endpoint, &error)
                    .await?
                {
                    Rechosen::Moved(to) => {
                        self.reply_met(reply, ReplyState::Intent, &error)?;
                        ReplySent::Moved(error, to)
                    }
                    Rechosen::Nowhere(gone) => {
                        let reason = gone.line();
                        moved::journal_gone(self.journal, attempt.id, &reason)?;
                        self.journal.set_reply_state(
                            reply.id,
                            ReplyState::Intent,
                            Some(&reason),
                            None,
                        )?;
                        ReplySent::Gone(gone)
                    }
                    Rechosen::Stays => self.reply_failed(reply, error)?,
                }
            }
        };
        drop(guard);
        Ok(sent)
    }

    /// Journals a reply's send that failed at an interface that still serves the task. An
    /// answer naming a task no URL can hold was received by the agent: the reply is
    /// `UNCERTAIN` (never sent again without a human), not left `INTENT` for a resend.
    fn reply_failed(&self, reply: &Reply, error: A2aError) -> Result<ReplySent, JournalError> {
        Ok(match error {
            error if error.class() == ErrorClass::Refused => {
                self.reply_met(reply, ReplyState::Refused, &error)?;
                ReplySent::Refused(error)
            }
            error if error.is_bad_task_id() => {
                self.reply_met(reply, ReplyState::Uncertain, &error)?;
                ReplySent::Failed(error)
            }
            error => {
                self.reply_met(reply, ReplyState::Intent, &error)?;
                ReplySent::Failed(error)
            }
        })
    }

    /// Journals a reply's state after its send met `error`: the error's line and its named
    /// kind, which later reads decide on (a text refused as invalid parameters).
    fn reply_met(
        &self,
        reply: &Reply,
        state: ReplyState,
        error: &A2aError,
    ) -> Result<bool, JournalError> {
        self.journal
            .set_reply_state(reply.id, state, Some(&error.summary()), error.kind_name())
    }
}

/// Returns whether a task answering a reply on `task_id` is the attempt's continuation: another
/// task in the attempt's own context (some agents answer every message with a new task).
pub(crate) fn continues(attempt: &Attempt, task_id: &str, view: &TaskView) -> bool {
    view.task_id != task_id && view.context_id.is_some() && view.context_id == attempt.context_id
}
