//! `agents probe`: measures what recovery can rely on at one agent, its *recovery profile*.
//!
//! A probe without a test send creates no remote task: it reads the card and asks
//! `ListTasks` (a fresh random contextId, no filter, `statusTimestampAfter` far in the future
//! and far in the past) and `SubscribeToTask` (a fresh random task id, and a terminal task the
//! agent lists, if any). Every call goes through [`A2aClient`] on the endpoint's binding; what
//! an answer means is asked of the error ([`A2aError::is_unsupported_operation`],
//! [`A2aError::is_task_not_found`], [`A2aError::wire_code`]), never of a binding's wire shape,
//! so each binding plugs in as it is. With a test text ([`ProbeHow::send_test`]) it first sends
//! that text twice with one messageId (and a fresh client contextId), which creates one task
//! or two, and measures de-duplication by messageId, client context ids and history retention.
//!
//! Rules: `unknown` (or `null`) where the probe cannot tell, and `unknown` is never proof. A
//! failed call makes its field `unknown` and adds a note; only the card decides whether the
//! agent can be probed at all. [`trusted_to_dedup`] is what recovery asks of a profile.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::a2a::types;
use crate::a2a::{
    A2aClient, A2aError, AgentCardInfo, Endpoint, ErrorClass, Raw, history_holds, redact_url,
    retry_read,
};
use crate::journal::{
    Agent, AgentProfile, ClientContextId, ListTasksSupport, OfferedBinding, Support, YesNo,
};

/// How many times a transient read failure is retried.
const READ_ATTEMPTS: u32 = 3;

/// Returns whether `agent` may be trusted to de-duplicate a resend by messageId for an attempt
/// whose intent was journaled at `intent_at`: the operator registered it so (`agents add
/// --trust-dedup`), or its profile says `dedup: yes`, measured by a probe made after that intent
/// (an in-memory de-duplication does not survive the agent's restart, so an older probe does not
/// count).
pub fn trusted_to_dedup(agent: &Agent, intent_at: DateTime<Utc>) -> bool {
    agent.trust_dedup
        || agent
            .profile
            .as_ref()
            .is_some_and(|p| p.dedups_since(intent_at))
}

/// What a probe is given.
pub struct ProbeHow<'a> {
    /// The wire client.
    pub client: &'a A2aClient,
    /// The card, fetched and validated.
    pub card: &'a AgentCardInfo,
    /// Its chosen interface, with the credential.
    pub endpoint: &'a Endpoint,
    /// What the journal already knows about client context ids (`None`: nothing yet).
    pub accepts_context_id: Option<bool>,
    /// `--send-test TEXT`: send this text (twice, one messageId) to measure what only a send
    /// can tell. `None`: create nothing.
    pub send_test: Option<&'a str>,
    /// When the probe started (the profile's `probedAt`).
    pub now: DateTime<Utc>,
}

/// What a probe measured.
#[derive(Debug, Clone)]
pub struct Probed {
    /// The profile to journal.
    pub profile: AgentProfile,
    /// What it learnt about client context ids, to journal on the agent (`None`: nothing).
    pub accepts_context_id: Option<bool>,
    /// The ids of the tasks the test sends created (empty without `--send-test`).
    pub test_tasks: Vec<String>,
    /// One line per measurement that could not decide, or saw something worth saying.
    pub notes: Vec<String>,
}

/// Measures the agent's recovery profile (see the module docs).
pub async fn probe(how: &ProbeHow<'_>) -> Probed {
    let mut notes = Vec::new();
    let mut test_tasks = Vec::new();
    let mut learnt = None;
    let mut sent = SendTest::default();
    if let Some(text) = how.send_test {
        sent = send_test(how, text, &mut notes).await;
        learnt = match sent.context {
            ClientContextId::Accepted => Some(true),
            // The agent does not keep client context ids: a look searches it by time.
            ClientContextId::Refused | ClientContextId::Replaced => Some(false),
            ClientContextId::Unknown => None,
        };
        test_tasks.clone_from(&sent.tasks);
    }
    let listing = list_tasks(how, &mut notes).await;
    let timestamp_filter = match listing.support {
        ListTasksSupport::None => Support::None,
        _ => timestamp_filter(how, listing.visible, &mut notes).await,
    };
    let unknown = subscribe_unknown(how, &mut notes).await;
    let mut terminal = listing.terminal.clone();
    if terminal.is_none()
        && let Some(id) = sent.tasks.first()
        && read_state(how, id).await.is_some_and(|s| s.is_terminal())
    {
        terminal = Some(id.clone());
    }
    let (subscribe, terminal_code) = match (unknown.0, terminal) {
        (Support::None, _) | (_, None) => (unknown.0, None),
        (support, Some(id)) => match subscribe_terminal(how, &id, &mut notes).await {
            // A stream opened on a task the agent has shows SubscribeToTask is there, whatever
            // it answered for a task id it never had.
            Ok(()) => (Support::Ok, None),
            Err(code) => (support, code),
        },
    };
    let client_context_id = match (how.send_test, how.accepts_context_id) {
        (Some(_), _) => sent.context,
        (None, Some(true)) => ClientContextId::Accepted,
        (None, Some(false)) => ClientContextId::Refused,
        (None, None) => ClientContextId::Unknown,
    };
    Probed {
        profile: AgentProfile {
            bindings: bindings(how.card, how.endpoint),
            list_tasks: listing.support,
            timestamp_filter,
            subscribe,
            terminal_subscribe_code: terminal_code,
            unknown_task_subscribe_code: unknown.1,
            client_context_id,
            dedup: sent.dedup,
            history_kept: sent.history_kept,
            send_test: how.send_test.is_some(),
            probed_at: how.now,
        },
        accepts_context_id: learnt,
        test_tasks,
        notes,
    }
}

/// Returns the interfaces the card offers (v1.0 and v0.3 alike), whether we speak each, and
/// which one the probe used (`endpoint`).
fn bindings(card: &AgentCardInfo, endpoint: &Endpoint) -> Vec<OfferedBinding> {
    card.interfaces
        .iter()
        .map(|i| {
            let resolved = i.resolved_url(&card.card_url);
            OfferedBinding {
                binding: i.binding.trim().to_owned(),
                protocol_version: i.protocol_version.trim().to_owned(),
                url: redact_url(i.url.trim()),
                spoken: i.speaks.is_some(),
                chosen: i.speaks == Some(endpoint.binding)
                    && resolved.as_deref() == Some(endpoint.url.as_str()),
            }
        })
        .collect()
}

/// What the test sends measured.
#[derive(Debug)]
struct SendTest {
    context: ClientContextId,
    dedup: Option<YesNo>,
    history_kept: Option<YesNo>,
    tasks: Vec<String>,
}

impl Default for SendTest {
    fn default() -> Self {
        Self {
            context: ClientContextId::Unknown,
            dedup: None,
            history_kept: None,
            tasks: Vec::new(),
        }
    }
}

/// What one test send answered: a task (its id and context), a direct message (its context),
/// or an error.
enum Answer {
    Task(String, String),
    Message(Option<String>),
}

fn answer_of(raw: &Raw<types::SendMessageResponse>) -> Answer {
    match &raw.value {
        types::SendMessageResponse::Task(t) => Answer::Task(t.id.clone(), t.context_id.clone()),
        types::SendMessageResponse::Message(m) => Answer::Message(m.context_id.clone()),
    }
}

/// Sends `text` with a fresh messageId and a fresh client contextId (again without the
/// contextId if the agent refuses it), then the very same request again.
async fn send_test(how: &ProbeHow<'_>, text: &str, notes: &mut Vec<String>) -> SendTest {
    let message_id = crate::sim_seam::new_uuid().to_string();
    let ours = crate::sim_seam::new_uuid().to_string();
    let mut out = SendTest::default();
    let mut context = Some(ours.clone());
    let first = loop {
        let req = super::send::request(&message_id, context.as_deref(), None, text, None, &[]);
        match how.client.send_message(how.endpoint, &req).await {
            Err(e) if context.is_some() && e.is_context_id_refusal() => {
                // The refusal created nothing: send again without a contextId.
                out.context = ClientContextId::Refused;
                context = None;
            }
            Err(e) => {
                notes.push(format!("the test send failed: {}", e.summary()));
                return out;
            }
            Ok(answer) => break answer_of(&answer),
        }
    };
    let (first_task, answered_context) = match &first {
        Answer::Task(id, ctx) => (Some(id.clone()), Some(ctx.clone())),
        Answer::Message(ctx) => (None, ctx.clone()),
    };
    if context.is_some() {
        out.context = match answered_context {
            Some(c) if c == ours => ClientContextId::Accepted,
            Some(_) => ClientContextId::Replaced,
            None => ClientContextId::Unknown,
        };
    }
    let Some(first_task) = first_task else {
        notes.push(
            "the agent answered the test send with a direct message, not a task: \
             de-duplication and history cannot be measured"
                .to_owned(),
        );
        return out;
    };
    out.tasks.push(first_task.clone());
    let req = super::send::request(&message_id, context.as_deref(), None, text, None, &[]);
    out.dedup = match how.client.send_message(how.endpoint, &req).await {
        Ok(answer) => match answer_of(&answer) {
            Answer::Task(id, _) if id == first_task => Some(YesNo::Yes),
            Answer::Task(id, _) => {
                notes.push(format!(
                    "the same messageId sent twice created two tasks ({first_task} and {id})"
                ));
                out.tasks.push(id);
                Some(YesNo::No)
            }
            Answer::Message(_) => Some(YesNo::No),
        },
        // A refusal returns no task: a resend would not find the first one either.
        Err(e) if matches!(e.class(), ErrorClass::Refused | ErrorClass::Remote) => {
            notes.push(format!(
                "the agent refused the same messageId sent again: {}",
                e.summary()
            ));
            Some(YesNo::No)
        }
        Err(e) => {
            notes.push(format!(
                "the second test send failed, de-duplication is unknown: {}",
                e.summary()
            ));
            None
        }
    };
    out.history_kept = match retry_read(READ_ATTEMPTS, || {
        how.client.get_task(how.endpoint, &first_task, None)
    })
    .await
    {
        Ok(task) if history_holds(&task.raw, &message_id) => Some(YesNo::Yes),
        Ok(_) => Some(YesNo::No),
        Err(e) => {
            notes.push(format!("the test task could not be read: {}", e.summary()));
            None
        }
    };
    out
}

/// What the ListTasks probes saw.
#[derive(Debug)]
struct Listing {
    support: ListTasksSupport,
    /// Whether the agent lists any task unfiltered (so an empty filtered answer means something).
    visible: bool,
    /// A terminal task it lists, to ask SubscribeToTask about.
    terminal: Option<String>,
}

fn list_request(
    context_id: Option<String>,
    after: Option<DateTime<Utc>>,
    page_size: i32,
) -> types::ListTasksRequest {
    types::ListTasksRequest {
        context_id,
        status: None,
        page_size: Some(page_size),
        page_token: None,
        history_length: Some(0),
        status_timestamp_after: after,
        include_artifacts: Some(false),
        tenant: None,
    }
}

async fn list(
    how: &ProbeHow<'_>,
    req: &types::ListTasksRequest,
) -> Result<crate::a2a::ListTasksPage, A2aError> {
    retry_read(READ_ATTEMPTS, || how.client.list_tasks(how.endpoint, req)).await
}

/// Lists a fresh random context (any task then shows the filter is ignored), then unfiltered.
async fn list_tasks(how: &ProbeHow<'_>, notes: &mut Vec<String>) -> Listing {
    let fresh = crate::sim_seam::new_uuid().to_string();
    let mut listing = Listing {
        support: ListTasksSupport::Unknown,
        visible: false,
        terminal: None,
    };
    // A v0.3 binding has no ListTasks at all (`tasks/list` does not exist): nothing to ask.
    if !how.endpoint.binding.can_list_tasks() {
        listing.support = ListTasksSupport::None;
        return listing;
    }
    let filtered = match list(how, &list_request(Some(fresh.clone()), None, 10)).await {
        Err(e) if e.is_unsupported_operation() => {
            listing.support = ListTasksSupport::None;
            return listing;
        }
        Err(e) => {
            notes.push(format!("ListTasks by context failed: {}", e.summary()));
            return listing;
        }
        Ok(page) => page,
    };
    let foreign = filtered
        .tasks
        .iter()
        .flatten()
        .any(|t| t.value.context_id != fresh);
    match list(how, &list_request(None, None, 20)).await {
        Ok(page) => {
            listing.visible = !page.tasks.is_empty();
            listing.terminal = page
                .tasks
                .iter()
                .flatten()
                .find(|t| t.value.status.state.is_terminal())
                .map(|t| t.value.id.clone());
        }
        Err(e) => notes.push(format!(
            "ListTasks without a filter failed: {}",
            e.summary()
        )),
    }
    listing.support = if foreign || !filtered.tasks.is_empty() {
        ListTasksSupport::IgnoresFilter
    } else if listing.visible {
        ListTasksSupport::Ok
    } else {
        notes.push(
            "the agent lists no task at all, so whether ListTasks honours its contextId \
             filter cannot be told (probe again once it has tasks, or with --send-test)"
                .to_owned(),
        );
        ListTasksSupport::Unknown
    };
    listing
}

/// Lists with `statusTimestampAfter` far in the future (nothing may come back) and far in the
/// past (what the agent lists unfiltered must come back).
async fn timestamp_filter(how: &ProbeHow<'_>, visible: bool, notes: &mut Vec<String>) -> Support {
    let future = how.now + chrono::Duration::days(3650);
    let past = DateTime::<Utc>::from_timestamp(946_684_800, 0).unwrap_or(how.now);
    let ahead = match list(how, &list_request(None, Some(future), 10)).await {
        Err(e) if e.is_unsupported_operation() => return Support::None,
        Err(e) => {
            notes.push(format!(
                "ListTasks with statusTimestampAfter failed: {}",
                e.summary()
            ));
            return Support::Unknown;
        }
        Ok(page) => page,
    };
    if !ahead.tasks.is_empty() {
        return Support::None;
    }
    if !visible {
        return Support::Unknown;
    }
    match list(how, &list_request(None, Some(past), 10)).await {
        Ok(page) if page.tasks.is_empty() => Support::None,
        Ok(_) => Support::Ok,
        Err(e) => {
            notes.push(format!(
                "ListTasks with statusTimestampAfter failed: {}",
                e.summary()
            ));
            Support::Unknown
        }
    }
}

/// Opens SubscribeToTask on `id` and reads its first event: over v0.3 an agent answers an
/// error as the stream's first event (HTTP 200), so that error is the answer.
async fn subscribe_first(
    how: &ProbeHow<'_>,
    id: &str,
) -> Result<crate::a2a::EventStream, A2aError> {
    let mut stream = how.client.subscribe(how.endpoint, id).await?;
    if how.endpoint.binding.can_list_tasks() {
        return Ok(stream);
    }
    match stream.next().await {
        Some(Err(e)) => Err(e),
        _ => Ok(stream),
    }
}

/// Subscribes to a task id the agent never had: "not found" shows SubscribeToTask is there,
/// "unsupported" that it is not. Returns that and the code answered.
async fn subscribe_unknown(
    how: &ProbeHow<'_>,
    notes: &mut Vec<String>,
) -> (Support, Option<String>) {
    let id = crate::sim_seam::new_uuid().to_string();
    match subscribe_first(how, &id).await {
        Ok(stream) => {
            drop(stream);
            notes.push(format!(
                "SubscribeToTask opened a stream for a task id the agent never had ({id})"
            ));
            (Support::Ok, None)
        }
        Err(e) if e.is_unsupported_operation() => (Support::None, e.wire_code()),
        Err(e) if e.is_task_not_found() => (Support::Ok, e.wire_code()),
        Err(e) => {
            notes.push(format!(
                "SubscribeToTask on an unknown task answered: {}",
                e.summary()
            ));
            (Support::Unknown, e.wire_code())
        }
    }
}

/// Subscribes to a terminal task: `Ok` when it streamed it, else the code answered (`None`:
/// an answer without a code, noted).
async fn subscribe_terminal(
    how: &ProbeHow<'_>,
    id: &str,
    notes: &mut Vec<String>,
) -> Result<(), Option<String>> {
    match subscribe_first(how, id).await {
        Ok(stream) => {
            drop(stream);
            notes.push(format!(
                "SubscribeToTask opened a stream for terminal task {id}"
            ));
            Ok(())
        }
        Err(e) => {
            let code = e.wire_code();
            if code.is_none() {
                notes.push(format!(
                    "SubscribeToTask on terminal task {id} answered: {}",
                    e.summary()
                ));
            }
            Err(code)
        }
    }
}

/// Reads a task's state, `None` when it cannot be read.
async fn read_state(how: &ProbeHow<'_>, id: &str) -> Option<types::TaskState> {
    let task = retry_read(READ_ATTEMPTS, || {
        how.client.get_task(how.endpoint, id, Some(0))
    })
    .await
    .ok()?;
    Some(task.value.status.state)
}

/// Returns the profile as the `profile` member of `agent` and `probe` records.
pub fn profile_json(profile: &AgentProfile) -> Value {
    serde_json::to_value(profile).unwrap_or(Value::Null)
}
