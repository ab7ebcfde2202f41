//! The one client callers use: [`A2aClient`] and the [`Endpoint`] it calls.
//!
//! Each operation parses the endpoint's interface URL once (cached), asks the endpoint's
//! [`ProtocolBinding`] for the request, sends it over the shared transport, and has the binding read
//! the answer into the internal model. Cards are fetched once per client and credential.
//!
//! Invariants: the credential is sent only to the card's origin unless the endpoint allows
//! cross-origin, always placed as the endpoint's [`Placement`] says (from the card), and every
//! answer is scrubbed of it before it is read.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use reqwest::StatusCode;

use super::binding::{Call, ListTasksPage, Raw};
use super::card::{AgentCardInfo, card_too_large, card_url_for, parse_card, read_card};
use super::credentials::{Credential, Placed, credential_for, parse_http_url};
use super::error::{A2aError, CARD_FETCH};
use super::grpc::Grpc;
use super::limits::{Limiter, Limits, Skip};
use super::reach::{Reach, Reaches};
use super::security::Placement;
use super::stream::EventStream;
use super::transport::{ClientConfig, Op, Target, Transport};
use super::types;
use crate::model::NotBefore;
use crate::model::{ProtocolBinding, WireBinding};

/// Where and how to call one agent.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The interface URL.
    pub url: String,
    /// The interface's tenant, put into every request.
    pub tenant: Option<String>,
    /// The binding the interface speaks (v1.0 JSON-RPC by default).
    pub binding: ProtocolBinding,
    /// The origin of the card URL; the credential goes only there.
    pub card_origin: String,
    /// The credential, if any.
    pub credential: Option<Credential>,
    /// Where the credential goes on each request: what the agent's card asks for (read from
    /// the journaled card for a journaled attempt, so every call on it places it the same way).
    pub placement: Placement,
    /// Whether the credential may go to an interface on another origin.
    pub allow_cross_origin: bool,
}

impl Endpoint {
    /// Builds the endpoint of a fetched card's chosen interface.
    pub fn from_card(
        info: &AgentCardInfo,
        credential: Option<Credential>,
        allow_cross_origin: bool,
    ) -> Self {
        Self {
            url: info.interface_url.clone(),
            tenant: info.tenant.clone(),
            binding: info.binding,
            card_origin: info.origin.clone(),
            credential,
            placement: info.placement.clone(),
            allow_cross_origin,
        }
    }

    /// The credential for a request to `target`, placed as the card asks; `None` when there is
    /// none or `target` is on another origin.
    fn credential_for(&self, target: &Target) -> Option<Placed<'_>> {
        credential_for(
            self.credential.as_ref(),
            &self.card_origin,
            self.allow_cross_origin,
            &target.origin,
            &target.redacted,
        )
        .map(|credential| Placed {
            credential,
            placement: &self.placement,
        })
    }
}

/// Returns whether an answer is HTTP 401.
fn unauthorized<T>(answer: &Result<T, A2aError>) -> bool {
    answer.as_ref().err().and_then(A2aError::http_status) == Some(401)
}

/// A card fetched once per client: concurrent callers wait for the one fetch in flight.
type CardCell = tokio::sync::OnceCell<Arc<AgentCardInfo>>;

/// A fetched card's key: its URL as given, and the credential variable it was fetched with.
type CardKey = (String, Option<String>);

/// The A2A client: one per process, cheap to clone.
#[derive(Debug, Clone)]
pub struct A2aClient {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    transport: Transport,
    /// The gRPC binding's HTTP/2 client.
    grpc: Grpc,
    /// Cards fetched successfully, by card URL and credential variable: a process fetches an
    /// agent's card once, however many of its steps it sends ([`A2aClient::fetch_card_once`]).
    cards: Mutex<HashMap<CardKey, Arc<CardCell>>>,
    /// Cards fetched again after an interface stopped answering
    /// ([`A2aClient::recheck_card_once`]): fresh once per process, however old `cards` is.
    rechecked: Mutex<HashMap<CardKey, Arc<CardCell>>>,
    /// Each agent's concurrency, rate, `Retry-After` pause and circuit (`limits.rs`).
    limiter: Limiter,
    /// Whether each URL called answered (`reach.rs`).
    reach: Reaches,
}

/// A request a binding built for an endpoint, ready to send.
struct Prepared {
    binding: ProtocolBinding,
    op: Op,
    echo: Option<String>,
    req: reqwest::RequestBuilder,
}

impl A2aClient {
    /// Builds the client, without per-agent limits or circuit (a `Retry-After` still pauses
    /// the agent that gave it).
    pub fn new(cfg: ClientConfig) -> Result<Self, A2aError> {
        Self::with_limits(cfg, Limits::default())
    }

    /// Builds the client with per-agent limits (the passes: `reconcile`).
    pub fn with_limits(cfg: ClientConfig, limits: Limits) -> Result<Self, A2aError> {
        Ok(Self {
            inner: Arc::new(Inner {
                grpc: Grpc::new(cfg.clone())?,
                transport: Transport::new(cfg)?,
                cards: Mutex::new(HashMap::new()),
                rechecked: Mutex::new(HashMap::new()),
                limiter: Limiter::new(limits),
                reach: Reaches::default(),
            }),
        })
    }

    /// Returns the per-agent limits this client obeys.
    pub fn limits(&self) -> &Limits {
        self.inner.limiter.limits()
    }

    /// Returns why requests to the agent at this interface URL (with this credential variable)
    /// are skipped: its circuit is open for the rest of this process, or its not-before time is
    /// ahead.
    pub fn skipped(&self, interface_url: &str, credential_var: Option<&str>) -> Option<Skip> {
        self.inner.limiter.skipped(interface_url, credential_var)
    }

    /// Sets the deadline of the pass under way (`None`: none): an agent that asks to wait
    /// (`Retry-After`) past it is not waited for; it gets a not-before time instead.
    pub fn set_deadline(&self, deadline: Option<tokio::time::Instant>) {
        self.inner.limiter.set_deadline(deadline);
    }

    /// Returns the not-before times agents gave this client since the last call (interface URL,
    /// credential key, not-before), for the journal.
    pub fn fresh_not_befores(&self) -> Vec<(String, Option<String>, NotBefore)> {
        self.inner.limiter.fresh_not_befores()
    }

    /// Returns whether each URL this client called answered (an interface URL, or a card URL
    /// for a card fetch), since the last call, and forgets it: what a pass journals as its
    /// agents' health.
    pub fn take_reach(&self) -> Vec<(String, Reach)> {
        self.inner.reach.take()
    }

    /// Returns the limits this client obeys.
    pub fn config(&self) -> &ClientConfig {
        self.inner.transport.config()
    }

    /// Fetches an agent card from a base URL or card URL and chooses its interface.
    ///
    /// The credential, if given, is sent with the card request (the card's own origin;
    /// redirects to another host drop it). The body is read up to the smaller of
    /// `max_card_size` and `max_response_size`, and parsed counting its interfaces and skills
    /// (`card::read_card`): a card over a bound is [`A2aError::CardOverBound`].
    pub async fn fetch_card(
        &self,
        url: &str,
        credential: Option<&Credential>,
    ) -> Result<AgentCardInfo, A2aError> {
        let card_url = card_url_for(url)?;
        let parsed = parse_http_url(&card_url)?;
        let op = Op::new(&card_url, CARD_FETCH).with_secret(credential);
        let transport = &self.inner.transport;
        let req = transport.get_json(parsed, credential);
        let cfg = transport.config();
        let limit = cfg.max_card_size.min(cfg.max_response_size);
        let answer = match transport.unary_within(req, &op, limit).await {
            Err(A2aError::TooLarge { .. }) => {
                Err(card_too_large(&card_url, limit, cfg.max_card_size))
            }
            Ok((status, headers, body)) => {
                if status.is_success() {
                    Ok(body)
                } else {
                    // No binding is chosen before the card: its error body is read as the
                    // default binding reads one.
                    Err(ProtocolBinding::default().http_error(&op, status, &headers, &body))
                }
            }
            Err(e) => Err(e),
        };
        self.inner.reach.record(&card_url, &answer);
        let body = answer?;
        let raw = read_card(&op, &card_url, &body)?;
        drop(body);
        parse_card(&card_url, raw)
    }

    /// Fetches an agent card as [`A2aClient::fetch_card`] does, once per client: a card this
    /// client fetched with the same credential variable (or is fetching: the caller waits for
    /// that fetch) is returned again, with `false` (not fetched by this call). A failed fetch is
    /// not remembered: the next caller fetches again.
    pub async fn fetch_card_once(
        &self,
        url: &str,
        credential: Option<&Credential>,
    ) -> Result<(Arc<AgentCardInfo>, bool), A2aError> {
        self.card_once(&self.inner.cards, url, credential).await
    }

    /// Fetches an agent card again after one of its interfaces stopped answering: as
    /// [`A2aClient::fetch_card_once`], but never the card fetched before the send (a follow that
    /// outlives an agent's upgrade reads the new card), once per process all the same.
    pub async fn recheck_card_once(
        &self,
        url: &str,
        credential: Option<&Credential>,
    ) -> Result<(Arc<AgentCardInfo>, bool), A2aError> {
        self.card_once(&self.inner.rechecked, url, credential).await
    }

    async fn card_once(
        &self,
        cards: &Mutex<HashMap<CardKey, Arc<CardCell>>>,
        url: &str,
        credential: Option<&Credential>,
    ) -> Result<(Arc<AgentCardInfo>, bool), A2aError> {
        let key = (url.to_owned(), credential.map(Credential::key));
        let cell = Arc::clone(
            cards
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(key)
                .or_default(),
        );
        let fetched = std::cell::Cell::new(false);
        let info = cell
            .get_or_try_init(|| async {
                fetched.set(true);
                self.fetch_card(url, credential).await.map(Arc::new)
            })
            .await?;
        Ok((Arc::clone(info), fetched.get()))
    }

    /// Sends `SendMessage`.
    pub async fn send_message(
        &self,
        ep: &Endpoint,
        req: &types::SendMessageRequest,
    ) -> Result<Raw<types::SendMessageResponse>, A2aError> {
        let (binding, op, result) = self.call(ep, &Call::SendMessage(req)).await?;
        binding.send_message_response(&op, result)
    }

    /// Sends `GetTask`.
    pub async fn get_task(
        &self,
        ep: &Endpoint,
        id: &str,
        history_length: Option<i32>,
    ) -> Result<Raw<types::Task>, A2aError> {
        let call = Call::GetTask { id, history_length };
        let (binding, op, result) = self.call(ep, &call).await?;
        binding.task(&op, result)
    }

    /// Sends `ListTasks`; each task of the page is parsed on its own.
    pub async fn list_tasks(
        &self,
        ep: &Endpoint,
        req: &types::ListTasksRequest,
    ) -> Result<ListTasksPage, A2aError> {
        let call = Call::ListTasks(req);
        if ep.binding.wire() == WireBinding::Grpc {
            let (binding, op, result) = self.call(ep, &call).await?;
            let body_bytes = u64::try_from(result.to_string().len()).unwrap_or(u64::MAX);
            let mut page = binding.list_page(&op, result)?;
            page.body_bytes = body_bytes;
            return Ok(page);
        }
        let p = self.prepare(ep, &call)?;
        let turn = self
            .inner
            .limiter
            .acquire(ep, p.binding.method(&call))
            .await?;
        let answer = self.unary(p.req, &p.op, p.binding).await;
        turn.finish(&ep.url, &answer);
        self.inner.reach.record(&ep.url, &answer);
        let body = answer?;
        let body_bytes = u64::try_from(body.len()).unwrap_or(u64::MAX);
        let result = p.binding.result(&p.op, p.echo.as_deref(), &body)?;
        drop(body);
        let mut page = p.binding.list_page(&p.op, result)?;
        page.body_bytes = body_bytes;
        Ok(page)
    }

    /// Sends `CancelTask`.
    pub async fn cancel_task(&self, ep: &Endpoint, id: &str) -> Result<Raw<types::Task>, A2aError> {
        let (binding, op, result) = self.call(ep, &Call::CancelTask { id }).await?;
        binding.task(&op, result)
    }

    /// Sends `DeleteTaskPushNotificationConfig` for config `config_id` of task `task_id`; `Ok`
    /// whatever the answer carries (the bindings answer `null`, `{}` or nothing).
    pub async fn delete_push_config(
        &self,
        ep: &Endpoint,
        task_id: &str,
        config_id: &str,
    ) -> Result<(), A2aError> {
        let call = Call::DeletePushConfig { task_id, config_id };
        self.call(ep, &call).await.map(drop)
    }

    /// Sends `SubscribeToTask`; a plain JSON error answer (e.g. -32004 for a terminal task) is
    /// returned as `Err`.
    pub async fn subscribe(&self, ep: &Endpoint, id: &str) -> Result<EventStream, A2aError> {
        self.stream(ep, &Call::SubscribeToTask { id }).await
    }

    /// Sends `SendStreamingMessage`.
    pub async fn send_streaming_message(
        &self,
        ep: &Endpoint,
        req: &types::SendMessageRequest,
    ) -> Result<EventStream, A2aError> {
        self.stream(ep, &Call::SendStreamingMessage(req)).await
    }

    /// Sends a plain `GET` (effect verification) and returns the status; the body is read up
    /// to the cap and discarded, and a failure reading it does not matter.
    pub async fn get_url_status(&self, url: &str) -> Result<u16, A2aError> {
        self.inner.transport.get_url_status(url).await
    }

    /// Has the endpoint's binding build an operation's request.
    fn prepare(&self, ep: &Endpoint, call: &Call<'_>) -> Result<Prepared, A2aError> {
        let transport = &self.inner.transport;
        let target = transport.target(&ep.url)?;
        let binding = ep.binding;
        let op = Op::on(&target, ep.credential.as_ref(), binding.method(call))
            .with_body_secret(call.push_token());
        let wire = binding.request(call, &target.url, ep.tenant.as_deref())?;
        let echo = wire.echo.clone();
        let placed = ep.credential_for(&target);
        if let Some(p) = placed {
            p.credential.check_placement(p.placement)?;
        }
        let req = transport.request(wire, placed, &op);
        Ok(Prepared {
            binding,
            op,
            echo,
            req,
        })
    }

    /// Returns the endpoint with its credential's command run again, after the agent answered
    /// 401 to a token that command printed (it may have expired); `None` for any other
    /// answer or credential. A 401 is a refusal before any work: asking again is safe.
    /// The command runs on a blocking thread: the other calls of the runtime go on meanwhile.
    async fn refreshed(ep: &Endpoint, refused: bool) -> Option<Endpoint> {
        let credential = ep.credential.as_ref().filter(|c| c.command().is_some())?;
        if !refused {
            return None;
        }
        tracing::debug!(
            command = %credential,
            "the agent refused the token; running the token command again"
        );
        // A failing command leaves the 401 as the answer.
        let fresh = credential.refresh().await.ok()?;
        Some(Endpoint {
            credential: Some(fresh),
            ..ep.clone()
        })
    }

    /// Sends one unary call and returns its result, as the binding read it; once more with a
    /// fresh token after a 401 ([`Self::refreshed`]).
    async fn call(
        &self,
        ep: &Endpoint,
        call: &Call<'_>,
    ) -> Result<(ProtocolBinding, Op, serde_json::Value), A2aError> {
        let answer = self.call_once(ep, call).await;
        match Self::refreshed(ep, unauthorized(&answer)).await {
            Some(fresh) => self.call_once(&fresh, call).await,
            None => answer,
        }
    }

    async fn call_once(
        &self,
        ep: &Endpoint,
        call: &Call<'_>,
    ) -> Result<(ProtocolBinding, Op, serde_json::Value), A2aError> {
        if ep.binding.wire() == WireBinding::Grpc {
            // Boxed: a gRPC call's future is large, and every caller's future would hold it.
            return Box::pin(self.grpc_call_once(ep, call)).await;
        }
        let p = self.prepare(ep, call)?;
        let turn = self
            .inner
            .limiter
            .acquire(ep, p.binding.method(call))
            .await?;
        let answer = self.unary(p.req, &p.op, p.binding).await;
        turn.finish(&ep.url, &answer);
        self.inner.reach.record(&ep.url, &answer);
        let result = p
            .binding
            .unary_result(call, &p.op, p.echo.as_deref(), &answer?)?;
        Ok((p.binding, p.op, result))
    }

    /// Sends one unary request; a non-success status is the binding's error.
    async fn unary(
        &self,
        req: reqwest::RequestBuilder,
        op: &Op,
        binding: ProtocolBinding,
    ) -> Result<Vec<u8>, A2aError> {
        let (status, headers, body) = self.inner.transport.unary(req, op).await?;
        if !status.is_success() {
            return Err(binding.http_error(op, status, &headers, &body));
        }
        Ok(body)
    }

    /// Opens a stream: SSE, or a plain JSON answer (usually an error) in its place. A 405 is
    /// asked once more the way the binding names (HTTP+JSON `SubscribeToTask`: `GET`).
    async fn stream(&self, ep: &Endpoint, call: &Call<'_>) -> Result<EventStream, A2aError> {
        let answer = self.stream_once(ep, call).await;
        match Self::refreshed(ep, unauthorized(&answer)).await {
            Some(fresh) => self.stream_once(&fresh, call).await,
            None => answer,
        }
    }

    async fn stream_once(&self, ep: &Endpoint, call: &Call<'_>) -> Result<EventStream, A2aError> {
        if ep.binding.wire() == WireBinding::Grpc {
            return Box::pin(self.grpc_stream_once(ep, call)).await;
        }
        let p = self.prepare(ep, call)?;
        let turn = self.inner.limiter.admit(ep, p.binding.method(call)).await?;
        let transport = &self.inner.transport;
        let mut answer = transport.open(p.req, &p.op).await;
        if let Ok(Err((StatusCode::METHOD_NOT_ALLOWED, _, _))) = &answer {
            let target = transport.target(&ep.url)?;
            if let Some(wire) = p
                .binding
                .fallback(call, &target.url, ep.tenant.as_deref())?
            {
                let req = transport.request(wire, ep.credential_for(&target), &p.op);
                answer = transport.open(req, &p.op).await;
            }
        }
        let opened = match answer {
            Ok(Ok(resp)) => Ok(resp),
            Ok(Err((status, headers, body))) => {
                Err(p.binding.http_error(&p.op, status, &headers, &body))
            }
            Err(e) => Err(e),
        };
        turn.finish(&ep.url, &opened);
        self.inner.reach.record(&ep.url, &opened);
        EventStream::open(transport, p.binding, p.op, p.echo, opened?).await
    }

    /// The interface, operation and placed credential of a gRPC call.
    fn grpc_target<'e>(
        &self,
        ep: &'e Endpoint,
        call: &Call<'_>,
    ) -> Result<(Arc<Target>, Op, Option<Placed<'e>>), A2aError> {
        let target = self.inner.transport.target(&ep.url)?;
        let op = Op::on(&target, ep.credential.as_ref(), ep.binding.method(call));
        let placed = ep.credential_for(&target);
        if let Some(p) = placed {
            p.credential.check_placement(p.placement)?;
        }
        Ok((target, op, placed))
    }

    /// [`Self::call_once`] over gRPC: its answer as protobuf JSON, read as the binding reads it.
    async fn grpc_call_once(
        &self,
        ep: &Endpoint,
        call: &Call<'_>,
    ) -> Result<(ProtocolBinding, Op, serde_json::Value), A2aError> {
        let (target, op, placed) = self.grpc_target(ep, call)?;
        let turn = self.inner.limiter.acquire(ep, op.method).await?;
        let answer = self
            .inner
            .grpc
            .unary(ep.binding, call, &target, ep.tenant.as_deref(), placed, &op)
            .await;
        turn.finish(&ep.url, &answer);
        self.inner.reach.record(&ep.url, &answer);
        Ok((ep.binding, op, answer?))
    }

    /// [`Self::stream_once`] over gRPC.
    async fn grpc_stream_once(
        &self,
        ep: &Endpoint,
        call: &Call<'_>,
    ) -> Result<EventStream, A2aError> {
        let (target, op, placed) = self.grpc_target(ep, call)?;
        let turn = self.inner.limiter.admit(ep, op.method).await?;
        let opened = self
            .inner
            .grpc
            .open(ep.binding, call, &target, ep.tenant.as_deref(), placed, &op)
            .await;
        turn.finish(&ep.url, &opened);
        self.inner.reach.record(&ep.url, &opened);
        Ok(EventStream::grpc(
            self.inner.transport.config(),
            ep.binding,
            op,
            opened?,
        ))
    }
}
