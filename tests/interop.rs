//! Interop with the official A2A SDKs (a2a-sdk 1.3.0 for Python, @a2a-js/sdk 1.3.0 for JS):
//! the official Python client against our scripted agent, and our client against agents served
//! by both official SDKs.
//!
//! Where the two official servers differ on the wire, the test says which does what
//! (`statusTimestampAfter` is `>=` in Python and `>` in JS; a second CancelTask is -32002 in
//! Python and the canceled task in JS), so a change in either SDK shows up here first.
//!
//! The SDKs are installed, pinned, by `scripts/test`; see `tests/common/interop.rs`.

use std::process::{Command, Output};
use std::time::Duration;

use a2a_recover::a2a::{A2aClient, ClientConfig, Endpoint, types};

use crate::common::interop::{
    InteropAgent, interop_dir, interop_python, start_js_agent, start_python_agent,
    start_scripted_agent,
};
use crate::common::wait::poll_for;

/// Runs `tests/interop/python/client_check.py` (the official Python client) against `agent`.
fn run_client_check(agent: &InteropAgent) -> Output {
    Command::new(interop_python())
        .arg(interop_dir().join("python/client_check.py"))
        .arg(&agent.url)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run client_check.py")
}

/// Asserts that the client check passed, showing its output and the agent's stderr otherwise.
fn assert_client_check_passed(agent: &InteropAgent, out: &Output) {
    assert!(
        out.status.success(),
        "the official Python client failed against {}\n--- client_check.py stdout ---\n{}\
         --- client_check.py stderr ---\n{}\n--- agent ---\n{}",
        agent.url,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        agent.context()
    );
}

#[test]
fn official_python_client_drives_our_scripted_agent() {
    let agent = start_scripted_agent(&[]);
    let out = run_client_check(&agent);
    assert_client_check_passed(&agent, &out);
}

/// The same check against the official servers proves the check itself expects official
/// behaviour, so a failure against our scripted agent is our agent's fault.
#[test]
fn client_check_passes_against_the_official_python_agent() {
    let agent = start_python_agent();
    let out = run_client_check(&agent);
    assert_client_check_passed(&agent, &out);
}

#[test]
fn client_check_passes_against_the_official_js_agent() {
    let agent = start_js_agent();
    let out = run_client_check(&agent);
    assert_client_check_passed(&agent, &out);
}

// ---------------------------------------------------------------------------------------------
// Our client against the official servers.
// ---------------------------------------------------------------------------------------------

/// Which official SDK serves the agent; where the two differ on the wire, the tests say so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sdk {
    Python,
    Js,
}

impl Sdk {
    fn start(self) -> InteropAgent {
        match self {
            Sdk::Python => start_python_agent(),
            Sdk::Js => start_js_agent(),
        }
    }
}

/// Guards every wait on a remote state; generous, because the machine is shared.
const HANG_GUARD: Duration = Duration::from_secs(30);

fn client() -> A2aClient {
    A2aClient::new(ClientConfig {
        timeout: Duration::from_secs(20),
        max_response_size: 16 * 1024 * 1024,
        stream_idle_timeout: Duration::from_secs(20),
        max_look_size: 64 * 1024 * 1024,
        max_card_size: a2a_recover::a2a::DEFAULT_MAX_CARD_SIZE,
    })
    .expect("build the A2A client")
}

/// Starts the agent, fetches its card and returns the agent, a client and the chosen endpoint.
async fn connect(sdk: Sdk) -> (InteropAgent, A2aClient, Endpoint) {
    let agent = sdk.start();
    let client = client();
    let info = client
        .fetch_card(&agent.url, None)
        .await
        .unwrap_or_else(|e| panic!("fetch the card: {e}\n{}", agent.context()));
    let ep = Endpoint::from_card(&info, None, false);
    (agent, client, ep)
}

fn user_message(text: &str, context_id: Option<&str>, task_id: Option<&str>) -> types::Message {
    types::Message {
        message_id: uuid::Uuid::new_v4().to_string(),
        context_id: context_id.map(str::to_owned),
        task_id: task_id.map(str::to_owned),
        role: types::Role::User,
        parts: vec![types::Part::text(text)],
        metadata: None,
        extensions: None,
        reference_task_ids: None,
    }
}

fn send_request(message: types::Message, return_immediately: bool) -> types::SendMessageRequest {
    types::SendMessageRequest {
        message,
        configuration: Some(types::SendMessageConfiguration {
            accepted_output_modes: None,
            task_push_notification_config: None,
            history_length: None,
            return_immediately: Some(return_immediately),
        }),
        metadata: None,
        tenant: None,
    }
}

fn list_request(context_id: &str) -> types::ListTasksRequest {
    types::ListTasksRequest {
        context_id: Some(context_id.to_owned()),
        status: None,
        page_size: None,
        page_token: None,
        history_length: None,
        status_timestamp_after: None,
        include_artifacts: None,
        tenant: None,
    }
}

fn new_context() -> String {
    format!("interop-{}", uuid::Uuid::new_v4())
}

/// Sends a message and returns the task it created (panics on a direct Message or an error).
async fn send_task(
    agent: &InteropAgent,
    client: &A2aClient,
    ep: &Endpoint,
    req: &types::SendMessageRequest,
) -> types::Task {
    let resp = client
        .send_message(ep, req)
        .await
        .unwrap_or_else(|e| panic!("SendMessage: {e}\n{}", agent.context()));
    match resp.value {
        types::SendMessageResponse::Task(task) => task,
        types::SendMessageResponse::Message(m) => {
            panic!(
                "expected a task, got a direct message {m:?}\n{}",
                agent.context()
            )
        }
    }
}

/// Polls `GetTask` until the task is terminal or interrupted, within [`HANG_GUARD`].
async fn wait_settled(
    agent: &InteropAgent,
    client: &A2aClient,
    ep: &Endpoint,
    id: &str,
) -> types::Task {
    let what = format!("task {id} to settle\n{}", agent.context());
    poll_for(&what, HANG_GUARD, || async {
        let task = client
            .get_task(ep, id, None)
            .await
            .unwrap_or_else(|e| panic!("GetTask {id}: {e}\n{}", agent.context()))
            .value;
        let state = task.status.state.clone();
        let settled = state.is_terminal()
            || matches!(
                state,
                types::TaskState::InputRequired | types::TaskState::AuthRequired
            );
        if settled {
            Ok(task)
        } else {
            Err(format!("{state:?}"))
        }
    })
    .await
}

fn text_of(parts: &[types::Part]) -> String {
    parts
        .iter()
        .filter_map(|p| match &p.content {
            types::PartContent::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

/// Lists every page of `req`, returning the task ids page by page.
async fn all_pages(
    agent: &InteropAgent,
    client: &A2aClient,
    ep: &Endpoint,
    mut req: types::ListTasksRequest,
) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    loop {
        let page = client
            .list_tasks(ep, &req)
            .await
            .unwrap_or_else(|e| panic!("ListTasks: {e}\n{}", agent.context()));
        let ids = page
            .tasks
            .into_iter()
            .map(|t| {
                t.unwrap_or_else(|e| panic!("a task of the page: {e}"))
                    .value
                    .id
            })
            .collect();
        pages.push(ids);
        if page.next_page_token.is_empty() {
            return pages;
        }
        assert!(
            pages.len() < 50,
            "ListTasks never ends\n{}",
            agent.context()
        );
        req.page_token = Some(page.next_page_token);
    }
}

/// The card names a JSONRPC 1.0 interface at the agent's own URL, with streaming on.
async fn card_and_interface(sdk: Sdk) {
    let agent = sdk.start();
    let client = client();
    let info = client
        .fetch_card(&agent.url, None)
        .await
        .unwrap_or_else(|e| panic!("fetch the card: {e}\n{}", agent.context()));
    assert_eq!(info.interface_url, agent.url, "{sdk:?}: {:?}", info.raw);
    // JS serves `"tenant": ""` verbatim; it must read as no tenant.
    assert_eq!(info.tenant, None, "{sdk:?}: {:?}", info.raw);
    assert_eq!(
        info.card.capabilities.streaming,
        Some(true),
        "{sdk:?}: {:?}",
        info.raw
    );
    let ep = Endpoint::from_card(&info, None, false);
    assert_eq!(ep.url, agent.url);
}

/// SendMessage with returnImmediately answers before the work ends; GetTask and ListTasks by
/// contextId then find the task, completed, with the client's contextId and messageId.
async fn send_get_list(sdk: Sdk) {
    let (agent, client, ep) = connect(sdk).await;
    let context = new_context();
    let message = user_message("work:3", Some(&context), None);
    let message_id = message.message_id.clone();
    let task = send_task(&agent, &client, &ep, &send_request(message, true)).await;
    assert!(
        !task.status.state.is_terminal(),
        "{sdk:?}: returnImmediately answered {:?}",
        task.status.state
    );
    assert_eq!(
        task.context_id, context,
        "{sdk:?}: the client contextId is kept"
    );

    let done = wait_settled(&agent, &client, &ep, &task.id).await;
    assert_eq!(
        done.status.state,
        types::TaskState::Completed,
        "{sdk:?}: {done:?}"
    );
    let history = done.history.clone().unwrap_or_default();
    assert!(
        history.iter().any(|m| m.message_id == message_id),
        "{sdk:?}: GetTask history holds our messageId: {history:?}"
    );
    let artifacts = done.artifacts.clone().unwrap_or_default();
    assert_eq!(
        artifacts
            .iter()
            .map(|a| text_of(&a.parts))
            .collect::<Vec<_>>(),
        ["step 1\nstep 2\nstep 3\n"],
        "{sdk:?}: the chunks are appended into one artifact"
    );

    let page = client
        .list_tasks(&ep, &list_request(&context))
        .await
        .unwrap_or_else(|e| panic!("ListTasks: {e}\n{}", agent.context()));
    let tasks: Vec<_> = page
        .tasks
        .into_iter()
        .map(|t| t.expect("each listed task parses").value)
        .collect();
    assert_eq!(tasks.len(), 1, "{sdk:?}: {tasks:?}");
    assert_eq!(tasks[0].id, task.id);
    assert_eq!(tasks[0].status.state, types::TaskState::Completed);
    // Neither SDK lists artifacts unless includeArtifacts is true (spec §3.1.4).
    assert!(
        tasks[0].artifacts.as_ref().is_none_or(Vec::is_empty),
        "{sdk:?}: {:?}",
        tasks[0].artifacts
    );
    assert_eq!(
        page.next_page_token, "",
        "{sdk:?}: a single page has an empty token"
    );
    assert_eq!(page.total_size, 1, "{sdk:?}");

    let other = client
        .list_tasks(&ep, &list_request(&new_context()))
        .await
        .expect("ListTasks of an unused context");
    assert!(
        other.tasks.is_empty(),
        "{sdk:?}: another context lists nothing"
    );
}

/// `statusTimestampAfter` equal to a task's own status timestamp: Python keeps the task (`>=`,
/// as the proto comment says), JS drops it (`>`). One millisecond earlier, both keep it.
async fn status_timestamp_after_boundary(sdk: Sdk) {
    let (agent, client, ep) = connect(sdk).await;
    let context = new_context();
    let task = send_task(
        &agent,
        &client,
        &ep,
        &send_request(user_message("echo boundary", Some(&context), None), false),
    )
    .await;
    let task = wait_settled(&agent, &client, &ep, &task.id).await;
    let stamp = task
        .status
        .timestamp
        .expect("a settled task has a status timestamp");

    let listed = |after: chrono::DateTime<chrono::Utc>| {
        let mut req = list_request(&context);
        req.status_timestamp_after = Some(after);
        let (client, ep, agent) = (&client, &ep, &agent);
        async move {
            client
                .list_tasks(ep, &req)
                .await
                .unwrap_or_else(|e| panic!("ListTasks after {after}: {e}\n{}", agent.context()))
                .tasks
                .len()
        }
    };
    let at = listed(stamp).await;
    match sdk {
        Sdk::Python => assert_eq!(at, 1, "Python filters with >=: the task at {stamp} is kept"),
        Sdk::Js => assert_eq!(at, 0, "JS filters with >: the task at {stamp} is dropped"),
    }
    let before = listed(stamp - chrono::TimeDelta::milliseconds(1)).await;
    assert_eq!(before, 1, "{sdk:?}: a filter 1 ms earlier keeps the task");
    let after = listed(stamp + chrono::TimeDelta::milliseconds(1)).await;
    assert_eq!(after, 0, "{sdk:?}: a filter 1 ms later drops the task");
}

/// With pageSize 2 the oldest of five tasks is on page 3, reached only by following
/// `nextPageToken`; pages are newest first and the last token is empty.
async fn pagination_reaches_page_three(sdk: Sdk) {
    let (agent, client, ep) = connect(sdk).await;
    let context = new_context();
    let mut created = Vec::new();
    for i in 0..5 {
        let text = format!("echo page test {i}");
        let task = send_task(
            &agent,
            &client,
            &ep,
            &send_request(user_message(&text, Some(&context), None), false),
        )
        .await;
        let task = wait_settled(&agent, &client, &ep, &task.id).await;
        created.push(task.id);
        // Wall time: JS stamps milliseconds and breaks ties by task id; keep the five stamps
        // distinct so the expected order is unambiguous.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    let mut req = list_request(&context);
    req.page_size = Some(2);
    let pages = all_pages(&agent, &client, &ep, req).await;
    let sizes: Vec<_> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, [2, 2, 1], "{sdk:?}: {pages:?}");
    assert_eq!(
        pages[2],
        created[..1],
        "{sdk:?}: the oldest task is alone on page 3"
    );
    let flat: Vec<_> = pages.concat();
    let newest_first: Vec<_> = created.iter().rev().cloned().collect();
    assert_eq!(flat, newest_first, "{sdk:?}: pages run newest first");
}

/// Cancelling a running task gives CANCELED; cancelling it again differs: Python answers
/// -32002 TaskNotCancelable, JS returns the canceled task.
async fn cancel_twice(sdk: Sdk) {
    let (agent, client, ep) = connect(sdk).await;
    let task = send_task(
        &agent,
        &client,
        &ep,
        &send_request(user_message("work:300", None, None), true),
    )
    .await;
    let canceled = client
        .cancel_task(&ep, &task.id)
        .await
        .unwrap_or_else(|e| panic!("CancelTask: {e}\n{}", agent.context()));
    assert_eq!(
        canceled.value.status.state,
        types::TaskState::Canceled,
        "{sdk:?}"
    );

    let again = client.cancel_task(&ep, &task.id).await;
    match sdk {
        Sdk::Python => {
            let err = again.expect_err("Python refuses to cancel a canceled task");
            assert_eq!(err.rpc_code(), Some(-32002), "{err}");
        }
        Sdk::Js => {
            let task = again.expect("JS returns a canceled task again");
            assert_eq!(task.value.status.state, types::TaskState::Canceled);
        }
    }
    let got = wait_settled(&agent, &client, &ep, &task.id).await;
    assert_eq!(got.status.state, types::TaskState::Canceled, "{sdk:?}");
}

/// SubscribeToTask on a terminal task is refused with -32004 as a plain JSON answer.
async fn subscribe_terminal(sdk: Sdk) {
    let (agent, client, ep) = connect(sdk).await;
    let task = send_task(
        &agent,
        &client,
        &ep,
        &send_request(user_message("echo done", None, None), false),
    )
    .await;
    assert_eq!(task.status.state, types::TaskState::Completed, "{sdk:?}");
    let err = client
        .subscribe(&ep, &task.id)
        .await
        .expect_err("a terminal task cannot be subscribed to");
    assert_eq!(err.rpc_code(), Some(-32004), "{sdk:?}: {err}");
}

/// SubscribeToTask on a running task starts with the Task snapshot and ends at COMPLETED.
async fn subscribe_running(sdk: Sdk) {
    let (agent, client, ep) = connect(sdk).await;
    let task = send_task(
        &agent,
        &client,
        &ep,
        &send_request(user_message("work:5", None, None), true),
    )
    .await;
    let mut stream = client
        .subscribe(&ep, &task.id)
        .await
        .unwrap_or_else(|e| panic!("SubscribeToTask: {e}\n{}", agent.context()));
    let mut events = Vec::new();
    while let Some(event) = tokio::time::timeout(HANG_GUARD, stream.next())
        .await
        .expect("the stream goes quiet past the hang guard")
    {
        events.push(event.unwrap_or_else(|e| panic!("a stream event: {e}\n{}", agent.context())));
    }
    let Some(types::StreamResponse::Task(first)) = events.first().map(|e| &e.value) else {
        panic!("{sdk:?}: the first event is not the Task: {events:?}");
    };
    assert_eq!(first.id, task.id);
    let last_state = events.iter().rev().find_map(|e| match &e.value {
        types::StreamResponse::StatusUpdate(u) => Some(u.status.state.clone()),
        types::StreamResponse::Task(t) => Some(t.status.state.clone()),
        _ => None,
    });
    assert_eq!(
        last_state,
        Some(types::TaskState::Completed),
        "{sdk:?}: {events:?}"
    );
}

/// A blocking `ask` stops at INPUT_REQUIRED with the question as the status message; the answer
/// on the same task completes it with the booking.
async fn ask_reaches_input_required(sdk: Sdk) {
    let (agent, client, ep) = connect(sdk).await;
    let context = new_context();
    let task = send_task(
        &agent,
        &client,
        &ep,
        &send_request(user_message("ask", Some(&context), None), false),
    )
    .await;
    assert_eq!(
        task.status.state,
        types::TaskState::InputRequired,
        "{sdk:?}: {task:?}"
    );
    let question = task
        .status
        .message
        .as_ref()
        .expect("the question is the status message");
    assert_eq!(question.role, types::Role::Agent);
    assert_eq!(text_of(&question.parts), "two rooms or one?");

    let listed = client
        .list_tasks(&ep, &list_request(&context))
        .await
        .expect("ListTasks");
    let listed: Vec<_> = listed
        .tasks
        .into_iter()
        .map(|t| t.expect("task").value)
        .collect();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        listed[0]
            .status
            .message
            .as_ref()
            .map(|m| text_of(&m.parts))
            .as_deref(),
        Some("two rooms or one?"),
        "{sdk:?}: ListTasks carries the question too"
    );

    let answer = user_message("one room", Some(&context), Some(&task.id));
    let done = send_task(&agent, &client, &ep, &send_request(answer, false)).await;
    assert_eq!(done.id, task.id, "{sdk:?}: the answer stays on the task");
    assert_eq!(done.status.state, types::TaskState::Completed, "{sdk:?}");
    let booking = done
        .artifacts
        .unwrap_or_default()
        .into_iter()
        .find(|a| a.name.as_deref() == Some("booking"))
        .expect("a booking artifact");
    assert_eq!(text_of(&booking.parts), "booked: one room");
}

/// Declares each check as two tests, one per official SDK.
macro_rules! against_both_sdks {
    ($($check:ident),* $(,)?) => {$(
        mod $check {
            use super::{Sdk, $check};

            #[tokio::test(flavor = "current_thread")]
            async fn python() {
                $check(Sdk::Python).await;
            }

            #[tokio::test(flavor = "current_thread")]
            async fn js() {
                $check(Sdk::Js).await;
            }
        }
    )*};
}

against_both_sdks!(
    card_and_interface,
    send_get_list,
    status_timestamp_after_boundary,
    pagination_reaches_page_three,
    cancel_twice,
    subscribe_terminal,
    subscribe_running,
    ask_reaches_input_required,
);
