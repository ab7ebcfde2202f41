//! The scripted agent's task store: tasks, the status-time index behind ListTasks, contexts,
//! retention, stream fan-out and the counters behind [`Stats`].
//!
//! Invariants: every task's key `(status micros, seq)` is in `index` exactly once; status
//! timestamps come from [`Inner::now`], which strictly increases, so keys never collide and a
//! task's timestamps strictly increase; every change publishes its stream event while the lock is
//! held, so events reach subscribers in the order the changes happened.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use a2a::{Artifact, Message, Part, Role, Task, TaskState, TaskStatus};
use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde::ser::SerializeMap;
use tokio::sync::broadcast;
use tokio::time::Instant;

use super::push::{Outbound, Pusher, Target};
use super::scenario::Scenario;
use super::{Bends, QuestionIn, ReceivedMessage, Stats, TaskSummary};

/// Most user messages kept for [`Stats::messages`].
const MAX_MESSAGES: usize = 20_000;
/// Most bytes of a message's text kept for [`Stats::messages`].
const MAX_MESSAGE_TEXT: usize = 16 * 1024;
/// Events buffered per task for slow subscribers; one that falls further behind is cut off.
const STREAM_BUFFER: usize = 64;

/// One stream event, serialized once for every subscriber.
#[derive(Debug)]
pub(crate) struct Event {
    /// The `StreamResponse` JSON (`{"statusUpdate":…}` or `{"artifactUpdate":…}`).
    pub(crate) json: Bytes,
    /// Whether the stream ends after it (a terminal or interrupted state).
    pub(crate) stops: bool,
}

/// A subscription to a task's events.
pub(crate) type EventRx = broadcast::Receiver<Arc<Event>>;

/// Returns whether a stream or a blocking send stops at this state.
pub(crate) fn stops_at(state: &TaskState) -> bool {
    state.is_terminal() || matches!(state, TaskState::InputRequired | TaskState::AuthRequired)
}

/// Returns the proto name of a state (`TASK_STATE_…`).
pub(crate) fn state_name(state: &TaskState) -> &'static str {
    match state {
        TaskState::Unspecified => "TASK_STATE_UNSPECIFIED",
        TaskState::Submitted => "TASK_STATE_SUBMITTED",
        TaskState::Working => "TASK_STATE_WORKING",
        TaskState::Completed => "TASK_STATE_COMPLETED",
        TaskState::Failed => "TASK_STATE_FAILED",
        TaskState::Canceled => "TASK_STATE_CANCELED",
        TaskState::InputRequired => "TASK_STATE_INPUT_REQUIRED",
        TaskState::Rejected => "TASK_STATE_REJECTED",
        TaskState::AuthRequired => "TASK_STATE_AUTH_REQUIRED",
    }
}

struct TaskEntry {
    task: Task,
    scenario: Scenario,
    first_message_id: String,
    /// `(status timestamp in µs, creation sequence)`: this task's key in `Inner::index`.
    key: (i64, u64),
    tx: Option<broadcast::Sender<Arc<Event>>>,
    /// Where its changes are pushed, if its send carried a push config.
    push: Option<Arc<Target>>,
}

/// What CancelTask found.
pub(crate) enum CancelOutcome {
    /// No such task.
    Unknown,
    /// The task was already terminal, in this state.
    Terminal(TaskState),
    /// The task is now CANCELED; its JSON.
    Canceled(Bytes),
}

/// A validated ListTasks query.
pub(crate) struct ListQuery {
    pub(crate) context_id: Option<String>,
    pub(crate) status: Option<TaskState>,
    /// Inclusive lower bound on the status timestamp, in µs.
    pub(crate) after_micros: Option<i64>,
    pub(crate) page_size: usize,
    pub(crate) cursor: Option<(i64, u64)>,
    pub(crate) history: Option<usize>,
    pub(crate) include_artifacts: bool,
}

/// Encodes a ListTasks cursor (the key of the last task on the page).
pub(crate) fn encode_token(key: (i64, u64)) -> String {
    format!("p1.{:x}.{:x}", key.0, key.1)
}

/// Decodes a token made by [`encode_token`].
pub(crate) fn decode_token(token: &str) -> Option<(i64, u64)> {
    let mut parts = token.strip_prefix("p1.")?.split('.');
    let ts = i64::from_str_radix(parts.next()?, 16).ok()?;
    let seq = u64::from_str_radix(parts.next()?, 16).ok()?;
    parts.next().is_none().then_some((ts, seq))
}

/// What the agent knows about a `messageId` sent without a `taskId`.
struct MessageIdInfo {
    /// How many tasks messages with this id created.
    tasks: u32,
    /// The first task it created, while that task exists.
    first: Option<u64>,
}

/// The whole mutable state of one agent. Tasks are keyed by their creation sequence number, so
/// the indexes hold small integers instead of copies of the task id.
pub(crate) struct Inner {
    /// Boxed: a task is large and most of a grown table is empty slots.
    tasks: HashMap<u64, Box<TaskEntry>>,
    ids: HashMap<String, u64>,
    index: BTreeSet<(i64, u64)>,
    contexts: HashMap<String, Vec<u64>>,
    message_ids: HashMap<String, MessageIdInfo>,
    next_seq: u64,
    last_micros: i64,
    /// How far the agent's clock is behind the real one (a clock stepped back, the simulator's
    /// fault; 0 otherwise).
    behind_micros: i64,
    forget_after: Option<Duration>,
    forget_queue: VecDeque<(Instant, u64)>,
    messages: VecDeque<ReceivedMessage>,
    messages_dropped: u64,
    cancels: Vec<String>,
    forgotten: Vec<(u64, TaskSummary)>,
    /// The agent's "booking system": one entry per task that COMPLETED (except `cancel`
    /// tasks), removed by a `cancel <task id>` message. Served at `/_scripted/bookings/{id}`,
    /// a read path independent of the A2A task state, for effect verification.
    bookings: BTreeMap<String, String>,
    /// How the agent bends the spec.
    bends: Bends,
    /// Posts the pushes of tasks that carry a push config, when the agent pushes.
    pusher: Option<Pusher>,
}

impl Inner {
    pub(crate) fn new(forget_after: Option<Duration>) -> Self {
        Self {
            tasks: HashMap::new(),
            ids: HashMap::new(),
            index: BTreeSet::new(),
            contexts: HashMap::new(),
            message_ids: HashMap::new(),
            next_seq: 0,
            last_micros: 0,
            behind_micros: 0,
            forget_after,
            forget_queue: VecDeque::new(),
            messages: VecDeque::new(),
            messages_dropped: 0,
            cancels: Vec::new(),
            forgotten: Vec::new(),
            bookings: BTreeMap::new(),
            bends: Bends::default(),
            pusher: None,
        }
    }

    /// Sets who posts the pushes (`None`: the agent does not push).
    pub(crate) fn with_pusher(mut self, pusher: Option<Pusher>) -> Self {
        self.pusher = pusher;
        self
    }

    /// Pushes task `id`'s changes to `target` from now on (a later send's config replaces an
    /// earlier one's).
    /// The task as it is now is pushed at once (as the SDKs push a new task's SUBMITTED).
    pub(crate) fn set_push(&mut self, id: &str, target: Target) {
        let event = self.snapshot_event(id).map(|b| b.to_vec());
        let Some(e) = self.entry_mut(id) else {
            return;
        };
        e.push = Some(Arc::new(target));
        let e = self.entry(id);
        if let Some(e) = e {
            Self::push(self.pusher.as_ref(), self.bends, e, event);
        }
    }

    /// Queues the push of a change of `e`: `event` (the v1.0 `StreamResponse`), or the whole
    /// task for a v0.3 config.
    fn push(pusher: Option<&Pusher>, bends: Bends, e: &TaskEntry, event: Option<Vec<u8>>) {
        let (Some(pusher), Some(target)) = (pusher, &e.push) else {
            return;
        };
        let body = if target.v03() {
            let task = serde_json::to_value(TaskView {
                task: &e.task,
                history: None,
                include_artifacts: true,
                bends,
            });
            let Ok(task) = task else { return };
            crate::a2a::v03::send_result_from_v1(serde_json::json!({ "task": task }))
                .to_string()
                .into_bytes()
        } else {
            let Some(event) = event else { return };
            event
        };
        pusher.send(Outbound {
            target: Arc::clone(target),
            task_id: e.task.id.clone(),
            body: Bytes::from(body),
            ends: stops_at(&e.task.status.state),
        });
    }

    /// Sets how the agent bends the spec.
    pub(crate) fn with_bends(mut self, bends: Bends) -> Self {
        self.bends = bends;
        self
    }

    /// Puts a task in an interrupted state with a question, where [`Bends::question_in`] says.
    pub(crate) fn ask(&mut self, id: &str, state: TaskState, question: &str) {
        let structured;
        let question = if self.bends.structured_answers {
            structured = format!(
                "Agent requires input:\n- {}: {question}",
                super::STRUCTURED_FIELD
            );
            structured.as_str()
        } else {
            question
        };
        match self.bends.question_in {
            QuestionIn::Status => {
                self.set_status(id, state, Some(question));
            }
            QuestionIn::Artifact => {
                self.add_artifact(id, "question", question.to_owned(), false, true);
                self.set_status(id, state, None);
            }
            QuestionIn::History => {
                if let Some(e) = self.entry_mut(id) {
                    let m = agent_message(&e.task, question);
                    e.task.history.get_or_insert_with(Vec::new).push(m);
                }
                self.set_status(id, state, None);
            }
        }
    }

    /// Returns a fresh timestamp, truncated to µs and strictly later than every earlier one.
    fn now(&mut self) -> (DateTime<Utc>, i64) {
        let micros = (crate::clock::system_now().timestamp_micros() - self.behind_micros)
            .max(self.last_micros + 1);
        self.last_micros = micros;
        let t = DateTime::from_timestamp_micros(micros).unwrap_or_default();
        (t, micros)
    }

    /// Steps the agent's clock back by `by`: later timestamps may be older than earlier ones.
    #[cfg(feature = "sim")]
    pub(crate) fn step_clock_back(&mut self, by: Duration) {
        self.behind_micros += i64::try_from(by.as_micros()).unwrap_or(i64::MAX / 2);
        self.last_micros = 0;
    }

    /// Forgets the terminal tasks whose retention ran out.
    pub(crate) fn sweep(&mut self) {
        let Some(after) = self.forget_after else {
            return;
        };
        let now = Instant::now();
        while let Some((at, _)) = self.forget_queue.front() {
            if now.duration_since(*at) < after {
                break;
            }
            if let Some((_, seq)) = self.forget_queue.pop_front() {
                self.forget_seq(seq);
            }
        }
    }

    /// Records a received user message for [`Stats`].
    pub(crate) fn record_message(&mut self, mut msg: ReceivedMessage) {
        if msg.text.len() > MAX_MESSAGE_TEXT {
            let mut end = MAX_MESSAGE_TEXT;
            while !msg.text.is_char_boundary(end) {
                end -= 1;
            }
            msg.text.truncate(end);
        }
        if self.messages.len() >= MAX_MESSAGES {
            self.messages.pop_front();
            self.messages_dropped += 1;
        }
        self.messages.push_back(msg);
    }

    /// Counts a message that started no task (a `direct` answer).
    pub(crate) fn record_no_task(&mut self, message_id: &str) {
        if !self.message_ids.contains_key(message_id) {
            self.message_ids.insert(
                message_id.to_owned(),
                MessageIdInfo {
                    tasks: 0,
                    first: None,
                },
            );
        }
    }

    /// Records a CancelTask call.
    pub(crate) fn record_cancel(&mut self, task_id: &str) {
        self.cancels.push(task_id.to_owned());
    }

    /// Returns whether the task exists (and is not forgotten).
    pub(crate) fn exists(&self, id: &str) -> bool {
        self.ids.contains_key(id)
    }

    fn entry(&self, id: &str) -> Option<&TaskEntry> {
        self.tasks.get(self.ids.get(id)?).map(|e| &**e)
    }

    fn entry_mut(&mut self, id: &str) -> Option<&mut TaskEntry> {
        self.tasks.get_mut(self.ids.get(id)?).map(|e| &mut **e)
    }

    /// Returns whether the context is one the agent knows (it has or had a task or message there).
    pub(crate) fn knows_context(&self, context_id: &str) -> bool {
        self.contexts.contains_key(context_id)
    }

    /// Registers a context the agent generated for a direct answer.
    pub(crate) fn add_context(&mut self, context_id: &str) {
        if !self.contexts.contains_key(context_id) {
            self.contexts.insert(context_id.to_owned(), Vec::new());
        }
    }

    /// Returns the task created by the first message with this id, if it still exists.
    pub(crate) fn task_for_message(&self, message_id: &str) -> Option<&str> {
        let seq = self.message_ids.get(message_id)?.first?;
        self.tasks.get(&seq).map(|e| e.task.id.as_str())
    }

    /// Returns the task's state, context and scenario.
    pub(crate) fn info(&self, id: &str) -> Option<(TaskState, &str, Scenario)> {
        self.entry(id).map(|e| {
            (
                e.task.status.state.clone(),
                e.task.context_id.as_str(),
                e.scenario,
            )
        })
    }

    /// Returns whether the task's history already holds a message with this id.
    pub(crate) fn history_has(&self, id: &str, message_id: &str) -> bool {
        self.entry(id).is_some_and(|e| {
            e.task
                .history
                .as_deref()
                .unwrap_or_default()
                .iter()
                .any(|m| m.message_id == message_id)
        })
    }

    /// Creates a SUBMITTED task whose history is `message` (its task and context ids are set
    /// here); returns the new task id.
    pub(crate) fn create_task(
        &mut self,
        mut message: Message,
        context_id: String,
        scenario: Scenario,
    ) -> String {
        let id = crate::sim_seam::new_uuid().to_string();
        let (ts, micros) = self.now();
        let seq = self.next_seq;
        self.next_seq += 1;
        let message_id = message.message_id.clone();
        message.task_id = Some(id.clone());
        message.context_id = Some(context_id.clone());
        let info = self
            .message_ids
            .entry(message_id.clone())
            .or_insert(MessageIdInfo {
                tasks: 0,
                first: None,
            });
        info.tasks += 1;
        info.first.get_or_insert(seq);
        match self.contexts.get_mut(&context_id) {
            Some(seqs) => seqs.push(seq),
            None => {
                self.contexts.insert(context_id.clone(), vec![seq]);
            }
        }
        self.index.insert((micros, seq));
        self.ids.insert(id.clone(), seq);
        let task = Task {
            id: id.clone(),
            context_id,
            status: TaskStatus {
                state: TaskState::Submitted,
                message: None,
                timestamp: Some(ts),
            },
            artifacts: None,
            history: Some(vec![message]),
            metadata: None,
        };
        self.tasks.insert(
            seq,
            Box::new(TaskEntry {
                task,
                scenario,
                first_message_id: message_id,
                key: (micros, seq),
                tx: None,
                push: None,
            }),
        );
        id
    }

    /// Appends a user message to the task's history (its task and context ids are set here);
    /// the current status message moves into history first, like Python's TaskManager.
    pub(crate) fn append_history(&mut self, id: &str, mut message: Message) {
        if let Some(e) = self.entry_mut(id) {
            message.task_id = Some(e.task.id.clone());
            message.context_id = Some(e.task.context_id.clone());
            let history = e.task.history.get_or_insert_with(Vec::new);
            if let Some(question) = e.task.status.message.take() {
                history.push(question);
            }
            history.push(message);
        }
    }

    /// Subscribes to the task's future events; `None` if the task is unknown.
    pub(crate) fn subscribe(&mut self, id: &str) -> Option<EventRx> {
        let e = self.entry_mut(id)?;
        Some(
            e.tx.get_or_insert_with(|| broadcast::channel(STREAM_BUFFER).0)
                .subscribe(),
        )
    }

    /// Sets the task's status (the old status message moves into history), publishes a
    /// `statusUpdate`, and schedules retention when the state is terminal; false if unknown.
    /// Returns the booking made by a completed task, if it still exists.
    pub(crate) fn booking(&self, task_id: &str) -> Option<&str> {
        self.bookings.get(task_id).map(String::as_str)
    }

    /// Cancels the booking of the first word of `text` that names one; returns its task id.
    pub(crate) fn cancel_booking(&mut self, text: &str) -> Option<String> {
        let id = text
            .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
            .find(|w| self.bookings.contains_key(*w))?
            .to_owned();
        self.bookings.remove(&id);
        Some(id)
    }

    pub(crate) fn set_status(&mut self, id: &str, state: TaskState, text: Option<&str>) -> bool {
        let (ts, micros) = self.now();
        let naive = self.bends.naive_timestamps;
        let bends = self.bends;
        let Some(e) = self.ids.get(id).and_then(|seq| self.tasks.get_mut(seq)) else {
            return false;
        };
        let message = text.map(|t| agent_message(&e.task, t));
        if let Some(old) = e.task.status.message.take() {
            e.task.history.get_or_insert_with(Vec::new).push(old);
        }
        let terminal = state.is_terminal();
        let stops = stops_at(&state);
        if state == TaskState::Completed && e.scenario != Scenario::Cancel {
            self.bookings
                .insert(e.task.id.clone(), e.task.context_id.clone());
        }
        e.task.status = TaskStatus {
            state,
            message,
            timestamp: Some(ts),
        };
        if self.index.remove(&e.key) {
            e.key = (micros, e.key.1);
            self.index.insert(e.key);
        }
        let event = || {
            #[derive(Serialize)]
            #[serde(rename_all = "camelCase")]
            struct StatusUpdate<'a> {
                task_id: &'a str,
                context_id: &'a str,
                status: StatusOut<'a>,
            }
            #[derive(Serialize)]
            #[serde(rename_all = "camelCase")]
            struct Wrapper<'a> {
                status_update: StatusUpdate<'a>,
            }
            serde_json::to_vec(&Wrapper {
                status_update: StatusUpdate {
                    task_id: &e.task.id,
                    context_id: &e.task.context_id,
                    status: StatusOut(&e.task.status, naive),
                },
            })
        };
        publish(e.tx.as_ref(), stops, event);
        let pushed = e.push.as_ref().and_then(|_| event().ok());
        Self::push(self.pusher.as_ref(), bends, e, pushed);
        if terminal {
            // Subscribers drain what is buffered, then see the end.
            e.tx = None;
            if self.forget_after.is_some() {
                self.forget_queue.push_back((Instant::now(), e.key.1));
            }
        }
        true
    }

    /// Adds a one-text-part chunk to an artifact (appended to it if `append`) and publishes an
    /// `artifactUpdate`.
    pub(crate) fn add_artifact(
        &mut self,
        id: &str,
        artifact_id: &str,
        text: String,
        append: bool,
        last_chunk: bool,
    ) {
        let history_only = self.bends.history_only;
        let bends = self.bends;
        let pusher = self.pusher.clone();
        let Some(e) = self.entry_mut(id) else {
            return;
        };
        if history_only {
            let m = agent_message(&e.task, &text);
            e.task.history.get_or_insert_with(Vec::new).push(m);
        }
        let chunk = Artifact {
            artifact_id: artifact_id.to_owned(),
            name: Some(artifact_id.to_owned()),
            description: None,
            parts: vec![Part::text(text)],
            metadata: None,
            extensions: None,
        };
        let event = || {
            #[derive(Serialize)]
            #[serde(rename_all = "camelCase")]
            struct ArtifactUpdate<'a> {
                task_id: &'a str,
                context_id: &'a str,
                artifact: &'a Artifact,
                #[serde(skip_serializing_if = "std::ops::Not::not")]
                append: bool,
                #[serde(skip_serializing_if = "std::ops::Not::not")]
                last_chunk: bool,
            }
            #[derive(Serialize)]
            #[serde(rename_all = "camelCase")]
            struct Wrapper<'a> {
                artifact_update: ArtifactUpdate<'a>,
            }
            serde_json::to_vec(&Wrapper {
                artifact_update: ArtifactUpdate {
                    task_id: &e.task.id,
                    context_id: &e.task.context_id,
                    artifact: &chunk,
                    append,
                    last_chunk,
                },
            })
        };
        publish(e.tx.as_ref(), false, event);
        let pushed = e.push.as_ref().and_then(|_| event().ok());
        // Most tasks have one artifact: no room for four.
        let artifacts = e
            .task
            .artifacts
            .get_or_insert_with(|| Vec::with_capacity(1));
        match artifacts.iter_mut().find(|a| a.artifact_id == artifact_id) {
            Some(existing) if append => existing.parts.extend(chunk.parts),
            Some(existing) => *existing = chunk,
            None => artifacts.push(chunk),
        }
        Self::push(pusher.as_ref(), bends, e, pushed);
    }

    /// Returns the task as JSON, with at most `history` history entries (the most recent) and
    /// artifacts only if asked.
    pub(crate) fn snapshot(
        &self,
        id: &str,
        history: Option<usize>,
        include_artifacts: bool,
    ) -> Option<Bytes> {
        let e = self.entry(id)?;
        serde_json::to_vec(&TaskView {
            task: &e.task,
            history,
            include_artifacts,
            bends: self.bends,
        })
        .ok()
        .map(Bytes::from)
    }

    /// Returns the task as a `StreamResponse` `{"task":…}` JSON.
    pub(crate) fn snapshot_event(&self, id: &str) -> Option<Bytes> {
        let e = self.entry(id)?;
        #[derive(Serialize)]
        struct Wrapper<'a> {
            task: TaskView<'a>,
        }
        serde_json::to_vec(&Wrapper {
            task: TaskView {
                task: &e.task,
                history: None,
                include_artifacts: true,
                bends: self.bends,
            },
        })
        .ok()
        .map(Bytes::from)
    }

    /// Cancels a task that is not terminal.
    pub(crate) fn cancel(&mut self, id: &str) -> CancelOutcome {
        let Some((state, _, _)) = self.info(id) else {
            return CancelOutcome::Unknown;
        };
        if state.is_terminal() {
            return CancelOutcome::Terminal(state);
        }
        self.set_status(id, TaskState::Canceled, None);
        match self.snapshot(id, None, true) {
            Some(json) => CancelOutcome::Canceled(json),
            None => CancelOutcome::Unknown,
        }
    }

    /// Completes a task that is not terminal (the test control); false if unknown or terminal.
    pub(crate) fn complete_by_control(&mut self, id: &str) -> bool {
        match self.info(id) {
            Some((state, _, _)) if !state.is_terminal() => {
                self.add_artifact(id, "result", "completed by control".to_owned(), false, true);
                self.set_status(id, TaskState::Completed, None)
            }
            _ => false,
        }
    }

    /// Publishes a newer WORKING status (message `text`, no artifact) of a WORKING task, as an
    /// agent reporting progress does; false if unknown or not WORKING.
    pub(crate) fn refresh_by_control(&mut self, id: &str, text: &str) -> bool {
        match self.info(id) {
            Some((TaskState::Working, _, _)) => self.set_status(id, TaskState::Working, Some(text)),
            _ => false,
        }
    }

    /// Forgets a task, as retention would; false if unknown.
    pub(crate) fn forget(&mut self, id: &str) -> bool {
        self.ids
            .get(id)
            .copied()
            .is_some_and(|seq| self.forget_seq(seq))
    }

    fn forget_seq(&mut self, seq: u64) -> bool {
        let Some(e) = self.tasks.remove(&seq) else {
            return false;
        };
        self.ids.remove(&e.task.id);
        self.index.remove(&e.key);
        if let Some(seqs) = self.contexts.get_mut(&e.task.context_id) {
            seqs.retain(|s| *s != seq);
        }
        if let Some(info) = self.message_ids.get_mut(&e.first_message_id)
            && info.first == Some(seq)
        {
            info.first = None;
        }
        let mut summary = summary(&e);
        summary.forgotten = true;
        self.forgotten.push((e.key.1, summary));
        true
    }

    /// Answers ListTasks: status timestamp descending, a cursor after the page's last task.
    pub(crate) fn list(&self, q: &ListQuery) -> Result<Vec<u8>, serde_json::Error> {
        let matches = |e: &TaskEntry| {
            q.status.as_ref().is_none_or(|s| *s == e.task.status.state)
                && q.after_micros.is_none_or(|a| e.key.0 >= a)
        };
        let lower = (q.after_micros.unwrap_or(i64::MIN), 0);
        let upper = q.cursor.unwrap_or((i64::MAX, u64::MAX));
        let mut page: Vec<&TaskEntry> = Vec::with_capacity(q.page_size.min(16) + 1);
        let total;
        if let Some(ctx) = &q.context_id {
            let mut found: Vec<&TaskEntry> = self
                .contexts
                .get(ctx)
                .map(|seqs| {
                    seqs.iter()
                        .filter_map(|seq| self.tasks.get(seq).map(|e| &**e))
                        .filter(|e| matches(e))
                        .collect()
                })
                .unwrap_or_default();
            total = found.len();
            found.sort_unstable_by_key(|e| std::cmp::Reverse(e.key));
            page.extend(
                found
                    .into_iter()
                    .filter(|e| q.cursor.is_none_or(|c| e.key < c))
                    .take(q.page_size + 1),
            );
        } else {
            let range = || {
                self.index
                    .range(lower..)
                    .filter_map(|(_, seq)| self.tasks.get(seq).map(|e| &**e))
            };
            total = if q.status.is_none() && q.after_micros.is_none() {
                self.tasks.len()
            } else {
                range().filter(|e| matches(e)).count()
            };
            if lower < upper {
                page.extend(
                    self.index
                        .range(lower..upper)
                        .rev()
                        .filter_map(|(_, seq)| self.tasks.get(seq).map(|e| &**e))
                        .filter(|e| matches(e))
                        .take(q.page_size + 1),
                );
            }
        }
        let more = page.len() > q.page_size;
        page.truncate(q.page_size);
        let next_page_token = match (more, page.last()) {
            (true, Some(last)) => encode_token(last.key),
            _ => String::new(),
        };
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct ListResponse<'a> {
            tasks: Vec<TaskView<'a>>,
            next_page_token: String,
            page_size: usize,
            total_size: usize,
        }
        serde_json::to_vec(&ListResponse {
            tasks: page
                .into_iter()
                .map(|e| TaskView {
                    task: &e.task,
                    history: q.history,
                    include_artifacts: q.include_artifacts,
                    bends: self.bends,
                })
                .collect(),
            next_page_token,
            page_size: q.page_size,
            total_size: total,
        })
    }

    /// Returns the counters for [`Stats`] (`requests` is filled by the caller).
    pub(crate) fn stats(&self) -> Stats {
        let mut tasks: Vec<(u64, TaskSummary)> = self
            .tasks
            .values()
            .map(|e| (e.key.1, summary(e)))
            .chain(self.forgotten.iter().cloned())
            .collect();
        tasks.sort_unstable_by_key(|(seq, _)| *seq);
        let (push_answers, pushes_queued, pushes_settled) =
            self.pusher.as_ref().map(Pusher::tally).unwrap_or_default();
        Stats {
            tasks_per_message_id: self
                .message_ids
                .iter()
                .map(|(k, v)| (k.clone(), v.tasks))
                .collect(),
            messages: self.messages.iter().cloned().collect(),
            messages_dropped: self.messages_dropped,
            cancels: self.cancels.clone(),
            requests: BTreeMap::new(),
            tasks: tasks.into_iter().map(|(_, s)| s).collect(),
            card_fetches: 0,
            max_in_flight: 0,
            arrivals_ms: Vec::new(),
            throttled_ms: Vec::new(),
            push_answers,
            pushes_queued,
            pushes_settled,
        }
    }
}

fn summary(e: &TaskEntry) -> TaskSummary {
    TaskSummary {
        id: e.task.id.clone(),
        context_id: e.task.context_id.clone(),
        state: e.task.status.state.clone(),
        message_id: e.first_message_id.clone(),
        forgotten: false,
    }
}

fn agent_message(task: &Task, text: &str) -> Message {
    Message {
        message_id: crate::sim_seam::new_uuid().to_string(),
        context_id: Some(task.context_id.clone()),
        task_id: Some(task.id.clone()),
        role: Role::Agent,
        parts: vec![Part::text(text)],
        metadata: None,
        extensions: None,
        reference_task_ids: None,
    }
}

/// Serializes and sends an event, only when somebody listens.
fn publish(
    tx: Option<&broadcast::Sender<Arc<Event>>>,
    stops: bool,
    json: impl FnOnce() -> Result<Vec<u8>, serde_json::Error>,
) {
    if let Some(tx) = tx
        && tx.receiver_count() > 0
        && let Ok(json) = json()
    {
        let _ = tx.send(Arc::new(Event {
            json: Bytes::from(json),
            stops,
        }));
    }
}

/// A task as ProtoJSON with a history cap and optional artifacts; defaults are omitted.
struct TaskView<'a> {
    task: &'a Task,
    history: Option<usize>,
    include_artifacts: bool,
    bends: Bends,
}

/// A task status as the agent sends it: offset-less timestamps under
/// [`Bends::naive_timestamps`].
struct StatusOut<'a>(&'a TaskStatus, bool);

impl Serialize for StatusOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let StatusOut(status, naive) = *self;
        if !naive {
            return status.serialize(s);
        }
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("state", &status.state)?;
        if let Some(message) = &status.message {
            map.serialize_entry("message", message)?;
        }
        if let Some(ts) = &status.timestamp {
            map.serialize_entry(
                "timestamp",
                &ts.naive_utc().format("%Y-%m-%dT%H:%M:%S%.6f").to_string(),
            )?;
        }
        map.end()
    }
}

impl Serialize for TaskView<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.task;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("id", &t.id)?;
        if !t.context_id.is_empty() {
            map.serialize_entry("contextId", &t.context_id)?;
        }
        map.serialize_entry("status", &StatusOut(&t.status, self.bends.naive_timestamps))?;
        if self.include_artifacts
            && !self.bends.history_only
            && let Some(artifacts) = t.artifacts.as_deref()
            && !artifacts.is_empty()
        {
            map.serialize_entry("artifacts", artifacts)?;
        }
        let history = t.history.as_deref().unwrap_or_default();
        let keep = self.history.map_or(history.len(), |n| n.min(history.len()));
        if keep > 0 {
            map.serialize_entry("history", &history[history.len() - keep..])?;
        }
        if let Some(metadata) = &t.metadata {
            map.serialize_entry("metadata", metadata)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(id: &str, text: &str) -> Message {
        Message {
            message_id: id.to_owned(),
            context_id: None,
            task_id: None,
            role: Role::User,
            parts: vec![Part::text(text)],
            metadata: None,
            extensions: None,
            reference_task_ids: None,
        }
    }

    #[test]
    fn tokens_round_trip_and_reject_garbage() {
        let key = (1_790_000_000_123_456, 42);
        assert_eq!(decode_token(&encode_token(key)), Some(key));
        assert_eq!(decode_token("p1.zz.1"), None);
        assert_eq!(decode_token("p1.1.2.3"), None);
        assert_eq!(decode_token("garbage"), None);
        assert_eq!(decode_token(""), None);
    }

    #[test]
    fn timestamps_strictly_increase_and_status_messages_move_into_history() {
        let mut inner = Inner::new(None);
        let id = inner.create_task(user("m1", "ask"), "c1".to_owned(), Scenario::Ask);
        let mut last = inner.entry(&id).unwrap().task.status.timestamp.unwrap();
        for (state, text) in [
            (TaskState::Working, Some("step 1/2")),
            (TaskState::Working, Some("step 2/2")),
            (TaskState::Completed, None),
        ] {
            assert!(inner.set_status(&id, state, text));
            let ts = inner.entry(&id).unwrap().task.status.timestamp.unwrap();
            assert!(ts > last, "{ts} after {last}");
            assert_eq!(ts.timestamp_subsec_nanos() % 1000, 0, "µs precision");
            last = ts;
        }
        let history = inner.entry(&id).unwrap().task.history.clone().unwrap();
        let texts: Vec<_> = history.iter().map(|m| m.text().unwrap()).collect();
        assert_eq!(texts, ["ask", "step 1/2", "step 2/2"]);
        assert_eq!(history[0].task_id.as_deref(), Some(id.as_str()));
        assert_eq!(inner.index.len(), 1);
    }

    #[test]
    fn history_cap_keeps_the_most_recent_entries() {
        let mut inner = Inner::new(None);
        let id = inner.create_task(user("m1", "first"), "c1".to_owned(), Scenario::Echo);
        inner.append_history(&id, user("m2", "second"));
        let all: serde_json::Value =
            serde_json::from_slice(&inner.snapshot(&id, None, false).unwrap()).unwrap();
        assert_eq!(all["history"].as_array().unwrap().len(), 2);
        let one: serde_json::Value =
            serde_json::from_slice(&inner.snapshot(&id, Some(1), false).unwrap()).unwrap();
        assert_eq!(one["history"][0]["messageId"], "m2");
        let none: serde_json::Value =
            serde_json::from_slice(&inner.snapshot(&id, Some(0), false).unwrap()).unwrap();
        assert!(none.get("history").is_none(), "{none}");
    }

    #[test]
    fn forgetting_removes_every_trace_but_the_summary() {
        let mut inner = Inner::new(None);
        let id = inner.create_task(user("m1", "x"), "c1".to_owned(), Scenario::Echo);
        assert!(inner.forget(&id));
        assert!(!inner.forget(&id));
        assert!(inner.index.is_empty());
        assert!(inner.ids.is_empty());
        assert!(inner.contexts["c1"].is_empty());
        assert!(inner.task_for_message("m1").is_none());
        let stats = inner.stats();
        assert!(stats.tasks[0].forgotten);
        assert_eq!(stats.tasks_per_message_id["m1"], 1);
    }
}
