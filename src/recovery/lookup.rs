//! The look before a resend: the reconcile pass's first bucket ("intent written, no task id").
//!
//! A process that died around a send leaves an `INTENT` attempt whose outcome is unknown. Duplicate
//! detection by `messageId` is optional in A2A, so recovery searches the agent *before* it
//! resends, and resends (with the same `messageId`) only when the search proves nothing was
//! created:
//!
//! - If the agent accepted our fresh client `contextId`, `ListTasks` filtered by that contextId
//!   alone, every page, finds it. A listed task in another context is never evidence (agents
//!   that ignore the filter exist). A task in our context is ours unless its complete history
//!   starts with a user message carrying another messageId (the one whose history holds ours
//!   is preferred); an empty or truncated history is read again with `GetTask`, and when that
//!   still cannot decide, the look is inconclusive, never "absent". While we do not yet know
//!   whether the agent keeps client context ids, an empty look by context also looks by time.
//! - If the agent refuses client context ids, `ListTasks` with `statusTimestampAfter` = the
//!   intent's creation minus the clock skew, every page; each candidate's history is searched
//!   for our `messageId` (`GetTask` when the listed history does not show it). A candidate whose
//!   history lacks the task's first user message (truncated), or that cannot be read, makes the
//!   search inconclusive unless our message is found elsewhere.
//! - `ListTasks` unsupported (-32601 / -32004) or refused as invalid (-32602): inconclusive.
//! - An agent whose ListTasks ignores its `contextId` filter (its probed profile, `agents
//!   probe`) is never searched by context alone: an empty look by context also looks by time.
//! - An inconclusive look at an agent trusted to de-duplicate by messageId
//!   ([`super::probe::trusted_to_dedup`]: probed so after the intent) is absence: the resend
//!   with the same messageId cannot create a second task (a `dedup-trusted` event says so).
//! - A binding without `ListTasks` at all (A2A v0.3): inconclusive before anything is asked,
//!   so `UNCERTAIN`, unless the agent is trusted to de-duplicate by messageId (probed so after
//!   the intent, or registered with `agents add --trust-dedup`): then, as above, the same
//!   messageId is resent once the send horizon has passed.
//!
//! - A second task holding our messageId is reported (`duplicate-task`), the first journaled.
//! - Memory and bytes: a look keeps a [`Summary`] per candidate (and the whole task found),
//!   never whole pages, and reads at most `--max-look-size` bytes of `ListTasks` answers.
//!
//! A look is proof of absence only past the in-flight horizon of the last send (twice the
//! request timeout journaled with it, [`Journal::send_horizon`]): inside it the answer is
//! [`Looked::InFlight`], "look again later", and nothing is sent.
//!
//! Inconclusive is [`Lookup::Unprovable`]: the caller marks the attempt `UNCERTAIN` and never
//! resends on its own. Transient failures are returned as errors: the attempt stays `INTENT` and
//! the next pass looks again. [`decide`] is the pure decision, tested as a table.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;

use anyhow::Context as _;

use crate::a2a::types;
use crate::a2a::{A2aClient, A2aError, Endpoint, Raw, TaskView, history_holds, retry_read};
use crate::clock::Clock;
use crate::journal::model::{Attempt, AttemptId};
use crate::journal::{Agent, FailureKind, Journal, ListTasksSupport, NeedsHuman, Note, Source};
use crate::recovery::error::unusable_answer;

mod unprovable;
pub use unprovable::Unprovable;

/// How many times a transient read failure is retried within one look.
const READ_ATTEMPTS: u32 = 3;
/// The most `ListTasks` pages one look reads before giving up as inconclusive.
const MAX_PAGES: usize = 1000;
/// The page size asked for (the protocol's maximum).
const PAGE_SIZE: i32 = 100;

/// What a look found.
#[derive(Debug, Clone)]
pub enum Lookup {
    /// The send created this task: record it, resend nothing. `duplicates` are the ids of other
    /// tasks that also hold our messageId (someone must look at them).
    Found {
        /// The task.
        task: Raw<types::Task>,
        /// Other tasks holding our messageId.
        duplicates: Vec<String>,
    },
    /// The search proves nothing was created: resending with the same messageId is safe
    /// (once the send's in-flight horizon has passed, see [`look_and_journal`]).
    ProvenAbsent,
    /// The search cannot tell: mark `UNCERTAIN`, resend nothing; the reason says why.
    Unprovable(Unprovable),
}

/// What the look needs to know about the attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookFor {
    /// Our messageId.
    pub message_id: String,
    /// The contextId we chose and the agent accepted (search by it); `None` searches by time.
    pub context_id: Option<String>,
    /// Whether the agent's acceptance of client context ids is not known yet: a look by
    /// context that finds nothing then also looks by time before declaring absence.
    pub also_by_time: bool,
    /// When the intent was committed.
    pub created_at: DateTime<Utc>,
}

impl LookFor {
    /// Builds the look for an attempt; `agent_accepts_context_id` is the agent's journaled
    /// answer (`None`: not known yet, so a contextId we chose is searched for, and the agent is
    /// also searched by time).
    pub fn for_attempt(attempt: &Attempt, agent_accepts_context_id: Option<bool>) -> Self {
        let by_context = attempt.context_id_ours && agent_accepts_context_id != Some(false);
        let context_id = attempt.context_id.clone().filter(|_| by_context);
        Self {
            message_id: attempt.message_id.clone(),
            also_by_time: context_id.is_some() && agent_accepts_context_id.is_none(),
            context_id,
            created_at: attempt.created_at,
        }
    }
}

impl LookFor {
    /// Builds the look for an attempt from its agent's journaled row: its answer about client
    /// context ids, and its probed profile. An agent whose ListTasks ignores its `contextId`
    /// filter (`agents probe`) is never searched by context alone: a look by context that finds
    /// nothing also looks by time, where only a task holding our messageId is ours.
    pub fn for_agent(attempt: &Attempt, agent: Option<&Agent>) -> Self {
        let mut look = Self::for_attempt(attempt, agent.and_then(|a| a.accepts_context_id));
        let ignores_filter = agent
            .and_then(|a| a.profile.as_ref())
            .is_some_and(|p| p.list_tasks == ListTasksSupport::IgnoresFilter);
        if ignores_filter && look.context_id.is_some() {
            look.also_by_time = true;
        }
        look
    }
}

/// Returns whether an attempt was provably never sent: no endpoint was journaled, and the
/// endpoint is always journaled before a send.
pub fn never_sent(attempt: &Attempt) -> bool {
    attempt.interface_url.is_none()
}

/// How the agent is searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookMode {
    /// By our client contextId: a task there is ours unless its complete history starts with
    /// another messageId; a listed task in another context is never evidence.
    ByContext,
    /// By status time: only a task whose history holds our messageId is ours.
    ByTime,
}

/// One listed task reduced to what a look needs: a look keeps these, never whole pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The task id.
    pub id: String,
    /// Its contextId.
    pub context_id: String,
    /// The messageId of the first history entry when it is a user message.
    pub first_user_message: Option<String>,
    /// The remote state, as reported.
    pub state: String,
    /// The status timestamp, if any.
    pub timestamp: Option<DateTime<Utc>>,
    /// Its history starts with a user message (not empty, not truncated at the front).
    pub history_complete: bool,
    /// Its history holds our messageId.
    pub holds_message: bool,
}

impl Summary {
    /// Summarizes a task for a look for `message_id`.
    pub fn of(task: &Raw<types::Task>, message_id: &str) -> Self {
        let first = task
            .raw
            .get("history")
            .and_then(Value::as_array)
            .and_then(|h| h.first());
        let first_is_user =
            first.and_then(|m| m.get("role")).and_then(Value::as_str) == Some("ROLE_USER");
        Self {
            id: task.value.id.clone(),
            context_id: task.value.context_id.clone(),
            first_user_message: first
                .filter(|_| first_is_user)
                .and_then(|m| m.get("messageId"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            state: task
                .raw
                .pointer("/status/state")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            timestamp: task.value.status.timestamp,
            history_complete: first_is_user,
            holds_message: history_holds(&task.raw, message_id),
        }
    }

    /// What this task tells about our send.
    pub fn seen(&self) -> Seen {
        // A defect planted for the simulator only (`scripts/sim --plant adopt-any-task`).
        #[cfg(feature = "sim")]
        if crate::sim_seam::planted(crate::sim_seam::Plant::AdoptAnyTask) {
            return Seen::Ours;
        }
        if self.holds_message {
            Seen::Ours
        } else if self.history_complete {
            // A complete history starting with another user message: someone else's task.
            Seen::Other
        } else {
            Seen::Undecided
        }
    }
}

/// What one candidate tells about our send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// Its history holds our messageId.
    Ours,
    /// Its complete history starts with a user message carrying another messageId.
    Other,
    /// Its history is empty or truncated, even read whole: it may be ours.
    Undecided,
}

/// The decision of a look.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The candidate at this index is ours; the others at these indexes also hold our message.
    Found(usize, Vec<usize>),
    /// Nothing was created.
    ProvenAbsent,
    /// Cannot tell, and why.
    Unprovable(Unprovable),
}

/// Decides from what a complete search saw: the candidates (tasks in our context for a look by
/// context, every listed task for a look by time, each read whole where its listed history
/// could not decide), in listing order, and how many listed tasks could not be read.
pub fn decide(mode: LookMode, candidates: &[Seen], unreadable: usize) -> Verdict {
    let mut ours = candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| **c == Seen::Ours)
        .map(|(i, _)| i);
    if let Some(first) = ours.next() {
        return Verdict::Found(first, ours.collect());
    }
    let undecided = candidates.iter().filter(|c| **c == Seen::Undecided).count();
    if unreadable > 0 {
        Verdict::Unprovable(Unprovable::Unreadable(mode, unreadable))
    } else if undecided > 0 {
        Verdict::Unprovable(Unprovable::Undecided(mode, undecided))
    } else {
        Verdict::ProvenAbsent
    }
}

/// Returns whether an error means the agent cannot run this search at all.
fn cannot_search(e: &A2aError) -> bool {
    use crate::a2a::ErrorKind as K;
    matches!(
        e.kind(),
        Some(K::MethodNotFound | K::UnsupportedOperation | K::InvalidParams)
    )
}

/// Searches the agent for what a send of `look.message_id` created (see the module docs): by
/// context, then (while the agent's acceptance of client context ids is unknown) by time.
///
/// `now` bounds the time window when the intent's creation time is in the future (a clock that
/// went backwards). Transient failures that persist are returned as `Err`.
pub async fn look_for_send(
    client: &A2aClient,
    endpoint: &Endpoint,
    look: &LookFor,
    clock_skew: Duration,
    now: DateTime<Utc>,
) -> Result<Lookup, A2aError> {
    let after = time_window(look.created_at, now, clock_skew);
    let Some(ctx) = &look.context_id else {
        return search(client, endpoint, &look.message_id, None, after).await;
    };
    let by_context = search(client, endpoint, &look.message_id, Some(ctx), after).await?;
    if look.also_by_time && matches!(by_context, Lookup::ProvenAbsent) {
        // The agent may have replaced our contextId (it has not answered yet whether it keeps
        // them): only a look by time with a messageId match proves absence.
        return search(client, endpoint, &look.message_id, None, after).await;
    }
    Ok(by_context)
}

/// One search: by our contextId (`Some`) or by time (`None`: status after `after`), every page
/// within the page and byte bounds; keeps a [`Summary`] per candidate and the whole task of the
/// first one that is ours, never the pages.
async fn search(
    client: &A2aClient,
    endpoint: &Endpoint,
    message_id: &str,
    context: Option<&str>,
    after: DateTime<Utc>,
) -> Result<Lookup, A2aError> {
    let (mode, request) = match context {
        Some(ctx) => (
            LookMode::ByContext,
            list_request(Some(ctx.to_owned()), None),
        ),
        None => (LookMode::ByTime, list_request(None, Some(after))),
    };
    let mut ours: Option<Raw<types::Task>> = None;
    let mut candidates: Vec<Summary> = Vec::new();
    let mut unreadable = 0;
    let mut pager = Pager::new(request, client.config().max_look_size);
    loop {
        let entries = match pager.next(client, endpoint).await? {
            Paged::Page(entries) => entries,
            Paged::End => break,
            Paged::Unprovable(reason) => {
                if let Some(task) = ours {
                    return Ok(found(task, &candidates));
                }
                return Ok(Lookup::Unprovable(reason));
            }
        };
        for entry in entries {
            let Ok(task) = entry else {
                unreadable += 1;
                continue;
            };
            if let Some(ctx) = context
                && task.value.context_id != ctx
            {
                // An agent that ignores the filter lists other clients' tasks: never evidence.
                continue;
            }
            let mut task = task;
            let mut seen = Summary::of(&task, message_id);
            let reread = match mode {
                // The listed history may be capped by the server: read the whole task.
                LookMode::ByTime => !seen.holds_message,
                LookMode::ByContext => seen.seen() == Seen::Undecided,
            };
            if reread {
                let Some(full) = read_whole(client, endpoint, &task.value.id).await? else {
                    unreadable += 1;
                    continue;
                };
                if context.is_some_and(|ctx| full.value.context_id != ctx) {
                    continue;
                }
                seen = Summary::of(&full, message_id);
                task = full;
            }
            if seen.holds_message && ours.is_none() {
                ours = Some(task);
            }
            candidates.push(seen);
        }
    }
    let seen: Vec<Seen> = candidates.iter().map(Summary::seen).collect();
    Ok(match decide(mode, &seen, unreadable) {
        Verdict::Found(..) => match ours {
            Some(task) => found(task, &candidates),
            None => Lookup::Unprovable(Unprovable::NotKept),
        },
        Verdict::ProvenAbsent => Lookup::ProvenAbsent,
        Verdict::Unprovable(reason) => Lookup::Unprovable(reason),
    })
}

/// The found task, and the other candidates that also hold our messageId.
fn found(task: Raw<types::Task>, candidates: &[Summary]) -> Lookup {
    let duplicates = candidates
        .iter()
        .filter(|c| c.holds_message && c.id != task.value.id)
        .map(|c| c.id.clone())
        .collect();
    Lookup::Found { task, duplicates }
}

/// Reads a listed task whole (`GetTask`); `None` when it cannot be read for good, an error
/// when the failure is transient.
async fn read_whole(
    client: &A2aClient,
    endpoint: &Endpoint,
    id: &str,
) -> Result<Option<Raw<types::Task>>, A2aError> {
    match retry_read(READ_ATTEMPTS, || client.get_task(endpoint, id, None)).await {
        Ok(full) => Ok(Some(full)),
        Err(e) if e.is_transient() => Err(e),
        Err(_) => Ok(None),
    }
}

/// What the next `ListTasks` call of a search gave.
enum Paged {
    /// A page's entries, each parsed on its own.
    Page(Vec<Result<Raw<types::Task>, A2aError>>),
    /// The last page was read.
    End,
    /// The agent cannot be searched this way, or its paging does not end.
    Unprovable(Unprovable),
}

/// Pages through `ListTasks` (every page, at most [`MAX_PAGES`] and `max_bytes` of answers,
/// refusing a paging that repeats itself), retrying transient failures.
struct Pager {
    request: types::ListTasksRequest,
    next_token: Option<String>,
    seen_tokens: std::collections::HashSet<String>,
    pages: usize,
    /// Bytes of `ListTasks` answers read so far, and the most a look may read.
    bytes: u64,
    max_bytes: u64,
    /// Why the search stops after the page just returned (its entries are still searched).
    stop: Option<Unprovable>,
}

impl Pager {
    fn new(request: types::ListTasksRequest, max_bytes: u64) -> Self {
        Self {
            request,
            next_token: Some(String::new()),
            seen_tokens: std::collections::HashSet::new(),
            pages: 0,
            bytes: 0,
            max_bytes,
            stop: None,
        }
    }

    async fn next(&mut self, client: &A2aClient, endpoint: &Endpoint) -> Result<Paged, A2aError> {
        if let Some(reason) = self.stop.take() {
            return Ok(Paged::Unprovable(reason));
        }
        let Some(token) = self.next_token.take() else {
            return Ok(Paged::End);
        };
        if self.pages == MAX_PAGES {
            return Ok(Paged::Unprovable(Unprovable::TooManyPages(MAX_PAGES)));
        }
        self.pages += 1;
        let mut req = self.request.clone();
        req.page_token = (!token.is_empty()).then_some(token);
        let page = match retry_read(READ_ATTEMPTS, || client.list_tasks(endpoint, &req)).await {
            Ok(page) => page,
            Err(e) if cannot_search(&e) => {
                return Ok(Paged::Unprovable(Unprovable::CannotList(e.summary())));
            }
            Err(e) => return Err(e),
        };
        self.bytes = self.bytes.saturating_add(page.body_bytes);
        if !page.next_page_token.is_empty() {
            if self.bytes >= self.max_bytes {
                self.stop = Some(Unprovable::TooManyBytes(self.max_bytes));
            } else if self.seen_tokens.insert(page.next_page_token.clone()) {
                self.next_token = Some(page.next_page_token);
            } else {
                self.stop = Some(Unprovable::PagingRepeats);
            }
        }
        Ok(Paged::Page(page.tasks))
    }
}

/// The window a look by time starts from: the intent's creation (or now, if that is in the
/// future: a clock that went backwards) minus the clock skew.
pub fn time_window(created_at: DateTime<Utc>, now: DateTime<Utc>, skew: Duration) -> DateTime<Utc> {
    let skew = chrono::Duration::from_std(skew).unwrap_or(chrono::Duration::MAX);
    created_at.min(now) - skew
}

/// Which listing a sweep is: the interface URL, the tenant, the credential variable and whether
/// that credential may go to another origin. Looks made with other credentials never share a
/// listing: an agent may list to each caller only the tasks that caller created.
pub type SweepKey = (String, Option<String>, Option<String>, bool);

/// Looks by time shared by the intents of one reconcile page (several looks by time at one
/// agent, after a crash, would each list every task since their own intent: N looks, O(N²)
/// listed tasks and `GetTask`s). The first look of an endpoint lists its tasks ONCE since the
/// page's earliest window and reads each listed task whole; every look of the page then
/// decides from that list. Sound because the sweep starts after the page claimed the leases of
/// all its intents (nothing can send them meanwhile), and a wider window only adds candidates:
/// a task is ours only if its history holds our messageId, as in [`look_for_send`].
#[derive(Debug, Default)]
pub struct Sweeps {
    /// Per endpoint, the earliest window of the page's intents looked for by time.
    windows: std::collections::HashMap<SweepKey, DateTime<Utc>>,
    /// Per endpoint, the listing once made (concurrent looks wait for the one in flight).
    listed: std::cell::RefCell<std::collections::HashMap<SweepKey, std::rc::Rc<SweepCell>>>,
}

/// One endpoint's listing, made at most once (a failed one is retried by the next look).
/// The listing is kept with the moment it was asked for: what it shows is as of then.
type SweepCell = tokio::sync::OnceCell<(Swept, DateTime<Utc>)>;

/// One task of a shared listing, read whole, reduced to what the page's looks need.
#[derive(Debug)]
struct SweptTask {
    /// Its id.
    id: String,
    /// Its status timestamp (which look's window it falls in).
    timestamp: Option<DateTime<Utc>>,
    /// Its history starts with a user message.
    history_complete: bool,
    /// The messageIds its history holds.
    message_ids: Vec<String>,
}

/// What listing an endpoint's tasks by time found.
#[derive(Debug)]
enum Swept {
    /// Every task listed in the window, each read whole and summarized, and how many could not
    /// be read.
    Listed(Vec<SweptTask>, usize),
    /// The agent cannot be searched this way.
    Unprovable(Unprovable),
}

impl Sweeps {
    /// Widens an endpoint's window to take in an intent's window.
    pub fn include(&mut self, key: SweepKey, window: DateTime<Utc>) {
        self.windows
            .entry(key)
            .and_modify(|w| *w = (*w).min(window))
            .or_insert(window);
    }

    /// Returns whether no intent of the page is looked for by time.
    pub fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }

    /// Looks for a send by time from the endpoint's shared listing; `None` when the page has no
    /// window for this endpoint that covers the look's own (the caller then looks on its own).
    /// With the lookup comes the moment the listing was asked for (`now` when this look made
    /// it, earlier when another look of the page did): what it shows is as of then.
    pub async fn look(
        &self,
        client: &A2aClient,
        key: &SweepKey,
        endpoint: &Endpoint,
        message_id: &str,
        window: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Option<(Result<Lookup, A2aError>, DateTime<Utc>)> {
        let after = *self.windows.get(key).filter(|w| **w <= window)?;
        let cell = std::rc::Rc::clone(self.listed.borrow_mut().entry(key.clone()).or_default());
        let listed = cell
            .get_or_try_init(|| async move { Ok((sweep(client, endpoint, after).await?, now)) })
            .await;
        let (swept, asked_at) = match listed {
            Ok((swept, asked_at)) => (swept, *asked_at),
            Err(e) => return Some((Err(e), now)),
        };
        Some((
            self.decide_from(client, endpoint, swept, message_id, window)
                .await,
            asked_at,
        ))
    }

    /// What the endpoint's listing says of one send (see [`Sweeps::look`]).
    async fn decide_from(
        &self,
        client: &A2aClient,
        endpoint: &Endpoint,
        swept: &Swept,
        message_id: &str,
        window: DateTime<Utc>,
    ) -> Result<Lookup, A2aError> {
        let (tasks, unreadable) = match swept {
            Swept::Unprovable(reason) => return Ok(Lookup::Unprovable(reason.clone())),
            Swept::Listed(tasks, unreadable) => (tasks, *unreadable),
        };
        let holds = |t: &&SweptTask| {
            // A defect planted for the simulator only (`scripts/sim --plant adopt-any-task`).
            #[cfg(feature = "sim")]
            if crate::sim_seam::planted(crate::sim_seam::Plant::AdoptAnyTask) {
                return true;
            }
            t.message_ids.iter().any(|m| m == message_id)
        };
        let mut ours = tasks.iter().filter(holds);
        if let Some(first) = ours.next() {
            let duplicates = ours.map(|t| t.id.clone()).collect();
            // Only summaries were kept: read the task found whole again.
            return match read_whole(client, endpoint, &first.id).await {
                Ok(Some(task)) => Ok(Lookup::Found { task, duplicates }),
                Ok(None) => Ok(Lookup::Unprovable(Unprovable::LostAgain(first.id.clone()))),
                Err(e) => Err(e),
            };
        }
        // The listing's window is the page's earliest: decide from the tasks this look would
        // have listed itself (a task without a status time is kept).
        let seen: Vec<Seen> = tasks
            .iter()
            .filter(|t| t.timestamp.is_none_or(|at| at >= window))
            .map(|t| {
                if t.history_complete {
                    Seen::Other
                } else {
                    Seen::Undecided
                }
            })
            .collect();
        Ok(match decide(LookMode::ByTime, &seen, unreadable) {
            Verdict::Found(..) | Verdict::ProvenAbsent => Lookup::ProvenAbsent,
            Verdict::Unprovable(reason) => Lookup::Unprovable(reason),
        })
    }
}

/// Lists an endpoint's tasks whose status is after `after`, every page, and reads each whole
/// (`GetTask`: a listed history may be capped by the server), keeping a summary of each.
async fn sweep(
    client: &A2aClient,
    endpoint: &Endpoint,
    after: DateTime<Utc>,
) -> Result<Swept, A2aError> {
    let mut pager = Pager::new(
        list_request(None, Some(after)),
        client.config().max_look_size,
    );
    let mut tasks = Vec::new();
    let mut unreadable = 0;
    loop {
        let entries = match pager.next(client, endpoint).await? {
            Paged::Page(entries) => entries,
            Paged::End => return Ok(Swept::Listed(tasks, unreadable)),
            Paged::Unprovable(reason) => return Ok(Swept::Unprovable(reason)),
        };
        for entry in entries {
            let Ok(task) = entry else {
                unreadable += 1;
                continue;
            };
            match read_whole(client, endpoint, &task.value.id).await? {
                Some(full) => {
                    let summary = Summary::of(&full, "");
                    let message_ids = full
                        .raw
                        .get("history")
                        .and_then(Value::as_array)
                        .map(|h| {
                            h.iter()
                                .filter_map(|m| m.get("messageId").and_then(Value::as_str))
                                .map(str::to_owned)
                                .collect()
                        })
                        .unwrap_or_default();
                    tasks.push(SweptTask {
                        id: summary.id,
                        timestamp: summary.timestamp,
                        history_complete: summary.history_complete,
                        message_ids,
                    });
                }
                None => unreadable += 1,
            }
        }
    }
}

/// Returns the key of the listing a look by time for `attempt` shares ([`Sweeps`]); `None`
/// when no interface is journaled (nothing was sent).
pub fn sweep_key(attempt: &Attempt, allow_cross_origin: bool) -> Option<SweepKey> {
    let url = attempt.interface_url.clone()?;
    Some((
        url,
        attempt.tenant.clone(),
        crate::a2a::source_key(attempt.token_env.as_deref(), attempt.token_cmd.as_deref()),
        attempt.may_cross_origin(allow_cross_origin),
    ))
}

// ---------------------------------------------------------------------------------------------
// Look, then journal the outcome
// ---------------------------------------------------------------------------------------------

/// How one look is made.
pub struct LookHow<'a> {
    /// The wire client.
    pub client: &'a A2aClient,
    /// Where the attempt was sent, with its credential (each caller builds it its own way).
    pub endpoint: &'a Endpoint,
    /// The real clock (the time window of a look by time).
    pub clock: &'a dyn Clock,
    /// How far the agent's clock may be behind ours.
    pub clock_skew: Duration,
    /// The looks by time of a reconcile page, and whether the attempt's credential may go to
    /// another origin (part of the listing's key); `None`: the look lists on its own.
    pub sweeps: Option<(&'a Sweeps, bool)>,
    /// The error context of a found task without an id: each caller keeps the words it has
    /// always said (docs/troubleshooting.md lists both).
    pub no_id: &'static str,
}

/// What a look came to, its outcome journaled; `T` is what the caller made of a found task.
#[derive(Debug)]
pub enum Looked<T> {
    /// The task a previous send created, as the caller's `found` handled it. Other tasks that
    /// also hold our messageId are reported (a `duplicate-task` event and a warning).
    Found(T),
    /// The search proves nothing was created and the send's in-flight horizon has passed:
    /// resending (same messageId) is safe. Nothing is journaled.
    Absent,
    /// The search found nothing, but the last send may still be in flight (its horizon ends
    /// at this time): look again later, send nothing. An `in-flight` event is journaled; the
    /// attempt stays `INTENT`.
    InFlight(DateTime<Utc>),
    /// The search cannot tell: the attempt is now `UNCERTAIN` (as journaled), and why.
    Uncertain(Attempt, Unprovable),
    /// The look failed (transiently, or for good): a `lookup` failure is journaled and the
    /// attempt stays `INTENT`; the caller re-reads it if it needs it.
    Failed(A2aError),
}

/// Looks for what a possibly-sent `INTENT` attempt created ([`look_for_send`], or the page's
/// shared listing when `how.sweeps` covers it), then journals the outcome: unprovable →
/// `UNCERTAIN`; nothing found inside the in-flight horizon of the last send (twice its
/// journaled request timeout, [`Journal::send_horizon`]) → an `in-flight` event; a failed look
/// → a `lookup` failure; a found task → what `found` does with its view (and a
/// `duplicate-task` event when other tasks hold our messageId too). The agent's journaled
/// answer about client context ids decides how it searches.
///
/// Where the callers differ, they say so: `found` is [`journal_found`] (`delegate`'s and
/// reconcile's one-attempt send, `follow`, `compensate`) or keeps the view unjournaled
/// (reconcile's page, which group-commits it with the release of the lease); `how.sweeps` only
/// for a reconcile page; `how.no_id` their words for a found task without an id. What an
/// absent task, or a failure, means for the caller (send now, report, exit code) stays theirs.
pub async fn look_and_journal<T>(
    journal: &Journal,
    attempt: &Attempt,
    how: LookHow<'_>,
    found: impl FnOnce(TaskView) -> anyhow::Result<T>,
) -> anyhow::Result<Looked<T>> {
    if let Some(error) = unaddressable_send(journal, attempt, how.endpoint)? {
        return Ok(Looked::Failed(error));
    }
    // A defect planted for the simulator only (`scripts/sim --plant resend-without-look`).
    #[cfg(feature = "sim")]
    if crate::sim_seam::planted(crate::sim_seam::Plant::ResendWithoutLook) {
        return Ok(Looked::Absent);
    }
    let agent = match &attempt.agent_url {
        Some(url) => journal.agent(url)?,
        None => None,
    };
    let look = LookFor::for_agent(attempt, agent.as_ref());
    let (result, asked_at) = search_for(attempt, &look, &how).await;
    let trusted = agent
        .as_ref()
        .is_some_and(|a| super::probe::trusted_to_dedup(a, attempt.created_at));
    // The agent received the send and answered it (over the size cap): finding no task proves
    // nothing was created only if it answered with a task, and it may have answered with a
    // message (which no de-duplication by messageId covers). Resending could do the work
    // twice: a human decides. Read only where a resend could follow.
    let may_resend = match &result {
        Ok(Lookup::ProvenAbsent) => true,
        Ok(Lookup::Unprovable(_)) => trusted,
        _ => false,
    };
    let answered =
        may_resend && journal.needs_human_for(attempt.id, NeedsHuman::ANSWER_TOO_LARGE)?;
    Ok(match result {
        Ok(Lookup::Found { task, duplicates }) => {
            let view = TaskView::from_value(&task.raw, task.raw.to_string()).context(how.no_id)?;
            if !duplicates.is_empty() {
                report_duplicates(journal, attempt, &view.task_id, &duplicates)?;
            }
            Looked::Found(found(view)?)
        }
        Ok(Lookup::ProvenAbsent) => match absent_unless_in_flight(journal, attempt, asked_at)? {
            Looked::Absent if answered => {
                let reason = Unprovable::AnsweredTooLarge;
                journal.mark_uncertain(attempt.id, &reason.line())?;
                Looked::Uncertain(journal.attempt(attempt.id)?, reason)
            }
            looked => looked,
        },
        Ok(Lookup::Unprovable(reason)) if trusted && !answered => {
            // A probe made after this intent saw the agent return the same task for the same
            // messageId, or the operator registered it so (`agents add --trust-dedup`):
            // resending it cannot create a second task.
            let probed_at = agent
                .as_ref()
                .and_then(|a| a.profile.as_ref())
                .map(|p| crate::clock::rfc3339(p.probed_at));
            let registered = agent.as_ref().is_some_and(|a| a.trust_dedup);
            let why = if registered {
                "registered with --trust-dedup"
            } else {
                "probed after this intent"
            };
            let detail = serde_json::json!({
                "reason": reason.line(),
                "probedAt": probed_at,
                "trustDedup": registered,
                "detail": format!(
                    "the look cannot tell, but the agent de-duplicates by messageId ({why}): \
                     resending with the same messageId"
                ),
            });
            journal.note_event(attempt.id, Note::DedupTrusted, &detail)?;
            absent_unless_in_flight(journal, attempt, asked_at)?
        }
        Ok(Lookup::Unprovable(reason)) => {
            journal.mark_uncertain(attempt.id, &reason.line())?;
            Looked::Uncertain(journal.attempt(attempt.id)?, reason)
        }
        Err(error) => {
            if let Some(why) = unusable_answer(&error, "look") {
                journal.record_needs_human(attempt.id, &why)?;
            } else if !matches!(error, A2aError::Skipped { .. }) {
                // A skipped agent (its circuit open) was not asked: nothing to journal.
                journal.record_failure(attempt.id, FailureKind::Lookup, &error.summary())?;
            }
            Looked::Failed(error)
        }
    })
}

/// The error a look stands on, without asking anything, when the agent answered the attempt's
/// send with a task id no URL can hold (its `needs-human` event, cause `bad-task-id`): no look
/// can find that task, and resending would do the work twice. The event stands; nothing more
/// is journaled.
fn unaddressable_send(
    journal: &Journal,
    attempt: &Attempt,
    endpoint: &Endpoint,
) -> anyhow::Result<Option<A2aError>> {
    if !journal.needs_human_for(attempt.id, NeedsHuman::BAD_TASK_ID)? {
        return Ok(None);
    }
    Ok(Some(A2aError::Decode {
        url: crate::a2a::redact_url(
            attempt
                .interface_url
                .as_deref()
                .unwrap_or(endpoint.url.as_str()),
        ),
        method: "SendMessage",
        kind: crate::a2a::error::DecodeKind::TaskId,
        detail: "its task id can name no task in a URL (journaled when the send was answered)"
            .to_owned(),
    }))
}

/// Searches the agent for the send, from the page's shared listing where it has one; returns
/// what was found with the moment the search asked. What a look saw is as of that moment (a
/// shared listing may have been asked for earlier in the pass): only a look asked past the
/// in-flight horizon proves absence.
async fn search_for(
    attempt: &Attempt,
    look: &LookFor,
    how: &LookHow<'_>,
) -> (Result<Lookup, A2aError>, DateTime<Utc>) {
    let now = how.clock.now();
    // An agent without ListTasks is never swept (its error would read as a failed look, retried
    // forever): it cannot be searched at all.
    let listable = how.endpoint.binding.can_list_tasks();
    let shared = match (how.sweeps, &look.context_id) {
        (Some((sweeps, cross_origin)), None) if listable => {
            match sweep_key(attempt, cross_origin) {
                Some(key) => {
                    let window = time_window(look.created_at, now, how.clock_skew);
                    sweeps
                        .look(
                            how.client,
                            &key,
                            how.endpoint,
                            &look.message_id,
                            window,
                            now,
                        )
                        .await
                }
                None => None,
            }
        }
        _ => None,
    };
    match shared {
        Some((result, asked_at)) => (result, asked_at),
        None if !listable => (
            Ok(Lookup::Unprovable(Unprovable::Unlistable(
                how.endpoint.binding,
            ))),
            now,
        ),
        None => (
            look_for_send(how.client, how.endpoint, look, how.clock_skew, now).await,
            now,
        ),
    }
}

/// [`Looked::Absent`], unless the last send may still have been in flight when the look asked
/// (`asked_at`, [`Journal::send_horizon`]): then an `in-flight` event and [`Looked::InFlight`].
/// The moment the look asked counts, not the moment it ended: a look slowed past the horizon
/// (a read timing out, a page retried) saw the agent before a late send landed.
fn absent_unless_in_flight<T>(
    journal: &Journal,
    attempt: &Attempt,
    asked_at: DateTime<Utc>,
) -> anyhow::Result<Looked<T>> {
    // A defect planted for the simulator only (`scripts/sim --plant skip-horizon`).
    #[cfg(feature = "sim")]
    if crate::sim_seam::planted(crate::sim_seam::Plant::SkipHorizon) {
        return Ok(Looked::Absent);
    }
    Ok(match journal.send_horizon(attempt.id)? {
        Some(until) if asked_at < until => {
            let detail = serde_json::json!({
                "until": crate::clock::rfc3339(until),
                "reason": "the last send may still be in flight: nothing found is no \
                           proof before twice its request timeout has passed",
            });
            journal.note_event(attempt.id, Note::InFlight, &detail)?;
            Looked::InFlight(until)
        }
        _ => Looked::Absent,
    })
}

/// Reports other remote tasks holding our messageId: a `duplicate-task` event naming every
/// task id, and a warning line (someone must look at them; nothing is cancelled).
fn report_duplicates(
    journal: &Journal,
    attempt: &Attempt,
    found: &str,
    duplicates: &[String],
) -> anyhow::Result<()> {
    let mut ids = vec![found.to_owned()];
    ids.extend(duplicates.iter().cloned());
    let detail = serde_json::json!({"messageId": attempt.message_id, "taskIds": ids});
    journal.note_event(attempt.id, Note::DuplicateTask, &detail)?;
    tracing::warn!(
        "{} remote tasks hold messageId {} (tasks {}): task {} is journaled; the others are \
         duplicates someone must look at",
        ids.len(),
        crate::sanitize::inert(&attempt.message_id),
        ids.iter()
            .map(|id| crate::sanitize::inert(id))
            .collect::<Vec<_>>()
            .join(", "),
        crate::sanitize::inert(found)
    );
    Ok(())
}

/// The `found` of [`look_and_journal`] that journals the task now (`Journal::apply_task`,
/// source `ListTasks`) and returns the attempt as journaled with it, and the task's view.
pub fn journal_found(
    journal: &Journal,
    id: AttemptId,
) -> impl FnOnce(TaskView) -> anyhow::Result<(Attempt, TaskView)> + '_ {
    move |view| {
        journal.apply_task(id, &view, Source::ListTasks)?;
        Ok((journal.attempt(id)?, view))
    }
}

fn list_request(
    context_id: Option<String>,
    after: Option<DateTime<Utc>>,
) -> types::ListTasksRequest {
    types::ListTasksRequest {
        context_id,
        status: None,
        page_size: Some(PAGE_SIZE),
        page_token: None,
        history_length: None,
        status_timestamp_after: after,
        include_artifacts: Some(true),
        tenant: None,
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    use Seen::{Other as OTHER, Ours as HOLDS, Undecided as TRUNCATED};

    #[rstest]
    // By context: a task in our context is ours unless its complete history starts with another
    // messageId; an empty or truncated one (even read whole) cannot decide.
    #[case::context_empty(LookMode::ByContext, &[], 0, "absent")]
    #[case::context_someone_elses(LookMode::ByContext, &[OTHER], 0, "absent")]
    #[case::context_prefers_holder(LookMode::ByContext, &[OTHER, HOLDS], 0, "found:1")]
    #[case::context_truncated_is_uncertain(LookMode::ByContext, &[TRUNCATED], 0, "unprovable")]
    #[case::context_unreadable(LookMode::ByContext, &[], 1, "unprovable")]
    #[case::context_unreadable_beside_other(LookMode::ByContext, &[OTHER], 1, "unprovable")]
    #[case::context_holder_beats_unreadable(LookMode::ByContext, &[HOLDS], 2, "found:0")]
    #[case::context_two_holders(LookMode::ByContext, &[HOLDS, OTHER, HOLDS], 0, "found:0+2")]
    // By time: only a task whose history holds our messageId is ours.
    #[case::time_empty(LookMode::ByTime, &[], 0, "absent")]
    #[case::time_others_complete(LookMode::ByTime, &[OTHER, OTHER], 0, "absent")]
    #[case::time_found(LookMode::ByTime, &[OTHER, HOLDS], 0, "found:1")]
    #[case::time_truncated(LookMode::ByTime, &[OTHER, TRUNCATED], 0, "unprovable")]
    #[case::time_found_despite_truncated(LookMode::ByTime, &[TRUNCATED, HOLDS], 0, "found:1")]
    #[case::time_unreadable(LookMode::ByTime, &[OTHER], 1, "unprovable")]
    #[case::time_found_despite_unreadable(LookMode::ByTime, &[HOLDS], 3, "found:0")]
    fn decision_table(
        #[case] mode: LookMode,
        #[case] candidates: &[Seen],
        #[case] unreadable: usize,
        #[case] expected: &str,
    ) {
        let got = match decide(mode, candidates, unreadable) {
            Verdict::Found(i, dups) if dups.is_empty() => format!("found:{i}"),
            Verdict::Found(i, dups) => format!(
                "found:{i}+{}",
                dups.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("+")
            ),
            Verdict::ProvenAbsent => "absent".to_owned(),
            Verdict::Unprovable(reason) => {
                assert!(!reason.line().is_empty());
                "unprovable".to_owned()
            }
        };
        assert_eq!(got, expected);
    }

    fn task(v: &Value) -> Raw<types::Task> {
        let mut full = serde_json::json!({"id": "t", "contextId": "c",
                                          "status": {"state": "TASK_STATE_WORKING"}});
        if let Some(h) = v.get("history") {
            full["history"] = h.clone();
        }
        Raw {
            value: serde_json::from_value(full.clone()).unwrap(),
            raw: full,
        }
    }

    #[test]
    fn history_shape_decides_what_a_task_tells() {
        let t = |v: Value| Summary::of(&task(&v), "m-1").seen();
        assert_eq!(
            t(
                serde_json::json!({"history":[{"messageId":"m-0","role":"ROLE_USER","parts":[]},
                                             {"messageId":"m-1","role":"ROLE_AGENT","parts":[]}]})
            ),
            HOLDS
        );
        assert_eq!(
            t(serde_json::json!({"history":[{"messageId":"x","role":"ROLE_USER","parts":[]}]})),
            OTHER
        );
        assert_eq!(
            t(serde_json::json!({"history":[{"messageId":"x","role":"ROLE_AGENT","parts":[]}]})),
            TRUNCATED
        );
        assert_eq!(t(serde_json::json!({"id":"t"})), TRUNCATED);
        let s = Summary::of(
            &task(
                &serde_json::json!({"history":[{"messageId":"x","role":"ROLE_USER","parts":[]}]}),
            ),
            "m-1",
        );
        assert_eq!(s.first_user_message.as_deref(), Some("x"));
        assert_eq!((s.id.as_str(), s.context_id.as_str()), ("t", "c"));
    }

    #[test]
    fn the_look_follows_the_agents_answer_about_context_ids() {
        let now = crate::clock::system_now();
        let attempt =
            Attempt::for_test(1, crate::journal::model::AttemptState::Intent).with_ids("m", "c");
        assert!(never_sent(&attempt));
        assert_eq!(
            LookFor::for_attempt(&attempt, None).context_id.as_deref(),
            Some("c")
        );
        assert!(LookFor::for_attempt(&attempt, None).also_by_time);
        assert!(!LookFor::for_attempt(&attempt, Some(true)).also_by_time);
        assert_eq!(
            LookFor::for_attempt(&attempt, Some(true))
                .context_id
                .as_deref(),
            Some("c")
        );
        assert_eq!(LookFor::for_attempt(&attempt, Some(false)).context_id, None);
        // An agent whose ListTasks ignores its filter is never searched by context alone.
        let profile = |list_tasks| crate::journal::AgentProfile {
            bindings: Vec::new(),
            list_tasks,
            timestamp_filter: crate::journal::Support::Unknown,
            subscribe: crate::journal::Support::Unknown,
            terminal_subscribe_code: None,
            unknown_task_subscribe_code: None,
            client_context_id: crate::journal::ClientContextId::Unknown,
            dedup: None,
            history_kept: None,
            send_test: false,
            probed_at: now,
        };
        let agent = |list_tasks| Agent {
            id: crate::journal::AgentId(1),
            card_url: "http://a.example/.well-known/agent-card.json".into(),
            interface_url: None,
            protocol_version: None,
            tenant: None,
            token_env: None,
            token_cmd: None,
            card_json: None,
            skills: Vec::new(),
            accepts_context_id: Some(true),
            push_url: None,
            registered: None,
            fetched_at: None,
            profile: Some(profile(list_tasks)),
            binding: None,
            trust_dedup: false,
        };
        let ignoring = LookFor::for_agent(&attempt, Some(&agent(ListTasksSupport::IgnoresFilter)));
        assert_eq!(ignoring.context_id.as_deref(), Some("c"));
        assert!(
            ignoring.also_by_time,
            "an empty look by context also looks by time"
        );
        let honouring = LookFor::for_agent(&attempt, Some(&agent(ListTasksSupport::Ok)));
        assert!(!honouring.also_by_time);
        assert_eq!(
            LookFor::for_agent(&attempt, None),
            LookFor::for_attempt(&attempt, None)
        );
        let agents = Attempt {
            context_id_ours: false,
            ..attempt
        };
        assert_eq!(LookFor::for_attempt(&agents, None).context_id, None);
    }
}
