"""Drives an A2A v1.0 agent with the official Python client (a2a-sdk 1.3.0) and checks its answers.

    client_check.py BASE_URL

The agent must play the scenarios of `a2a-recover scripted-agent` (echo, ask, work:N). The card is
fetched with A2ACardResolver, and the clients come from ClientFactory over the JSON-RPC transport,
exactly as a third-party application would build them. Every check prints one line (`ok …` or
`FAIL …` with what was sent and what came back); the exit status is 0 only if every check passed.
"""

import asyncio
import sys
import traceback
import uuid

import httpx

from google.protobuf.json_format import MessageToJson

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import A2AError

TIMEOUT = 30.0
TERMINAL = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
}

failures: list[str] = []


def check(ok: bool, what: str, detail: object = '') -> bool:
    if ok:
        print(f'ok   {what}', flush=True)
    else:
        failures.append(what)
        print(f'FAIL {what}: {detail}', flush=True)
    return ok


def show(msg) -> str:
    return MessageToJson(msg, indent=None)


def state_name(state: int) -> str:
    return TaskState.Name(state)


def user_message(text: str, context_id: str = '', task_id: str = '') -> Message:
    return Message(
        message_id=str(uuid.uuid4()),
        role=Role.ROLE_USER,
        context_id=context_id,
        task_id=task_id,
        parts=[Part(text=text)],
    )


def artifact_text(task, name: str) -> str | None:
    for artifact in task.artifacts:
        if artifact.name == name:
            return ''.join(p.text for p in artifact.parts if p.HasField('text'))
    return None


async def only_event(client, request: SendMessageRequest):
    """Sends one message on a non-streaming client and returns its single StreamResponse."""
    events = [event async for event in client.send_message(request)]
    if len(events) != 1:
        raise AssertionError(f'expected one response, got {len(events)}: {events}')
    return events[0]


async def run(base_url: str) -> None:
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        await checks(base_url, http)


async def checks(base_url: str, http: httpx.AsyncClient) -> None:
    card = await A2ACardResolver(http, base_url).get_agent_card()
    interfaces = [(i.protocol_binding, i.protocol_version, i.url) for i in card.supported_interfaces]
    check(
        any(b == 'JSONRPC' and v.startswith('1.') for b, v, _ in interfaces),
        'card lists a JSONRPC 1.x interface',
        interfaces,
    )
    check(card.capabilities.streaming, 'card declares streaming', show(card.capabilities))

    # One shared httpx client with generous timeouts (the factory's own default is 5 s).
    unary = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card)
    streaming = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(card)
    context_id = f'interop-{uuid.uuid4()}'

    # echo, blocking SendMessage
    request = SendMessageRequest(message=user_message('hello from the python client', context_id))
    event = await only_event(unary, request)
    if check(event.HasField('task'), 'SendMessage(echo) returns a task', show(event)):
        echo = event.task
        check(
            echo.status.state == TaskState.TASK_STATE_COMPLETED,
            'echo task is COMPLETED',
            state_name(echo.status.state),
        )
        check(echo.context_id == context_id, 'echo task keeps the client contextId', echo.context_id)
        check(
            artifact_text(echo, 'echo') == 'hello from the python client',
            'echo artifact holds the text',
            show(echo),
        )
        got = await unary.get_task(GetTaskRequest(id=echo.id))
        check(
            got.id == echo.id and got.status.state == TaskState.TASK_STATE_COMPLETED,
            'GetTask(echo) returns the COMPLETED task',
            show(got),
        )
        check(
            any(m.message_id == request.message.message_id for m in got.history),
            "GetTask(echo) history holds the client's messageId",
            show(got),
        )

    # ask, blocking SendMessage stops at INPUT_REQUIRED; the answer goes on the same task
    event = await only_event(unary, SendMessageRequest(message=user_message('ask', context_id)))
    if check(event.HasField('task'), 'SendMessage(ask) returns a task', show(event)):
        ask = event.task
        question = ''.join(p.text for p in ask.status.message.parts if p.HasField('text'))
        check(
            ask.status.state == TaskState.TASK_STATE_INPUT_REQUIRED,
            'ask task is INPUT_REQUIRED',
            state_name(ask.status.state),
        )
        check(question == 'two rooms or one?', 'ask status message is the question', show(ask.status))
        check(
            ask.status.message.role == Role.ROLE_AGENT,
            'the question has ROLE_AGENT',
            show(ask.status),
        )
        reply = SendMessageRequest(message=user_message('two rooms', context_id, ask.id))
        event = await only_event(unary, reply)
        if check(event.HasField('task'), 'the reply returns the task', show(event)):
            done = event.task
            check(done.id == ask.id, 'the reply stays on the same task', done.id)
            check(
                done.status.state == TaskState.TASK_STATE_COMPLETED,
                'the answered task is COMPLETED',
                state_name(done.status.state),
            )
            check(
                artifact_text(done, 'booking') == 'booked: two rooms',
                'booking artifact holds the answer',
                show(done),
            )

    # ListTasks by contextId sees both tasks
    listed = await unary.list_tasks(ListTasksRequest(context_id=context_id, page_size=10))
    ids = {t.id for t in listed.tasks}
    check(len(listed.tasks) == 2, 'ListTasks(contextId) returns the two tasks', show(listed))
    check(
        all(t.context_id == context_id for t in listed.tasks),
        'ListTasks(contextId) only returns that context',
        show(listed),
    )
    stamps = [t.status.timestamp.ToNanoseconds() for t in listed.tasks]
    check(stamps == sorted(stamps, reverse=True), 'ListTasks is newest first', stamps)
    check(listed.next_page_token == '', 'ListTasks has no next page', listed.next_page_token)

    # echo over SendStreamingMessage
    events = [
        event
        async for event in streaming.send_message(
            SendMessageRequest(message=user_message('streamed echo', context_id))
        )
    ]
    kinds = [event.WhichOneof('payload') for event in events]
    check(bool(events) and kinds[0] == 'task', 'SendStreamingMessage starts with a task', kinds)
    final_states = [
        event.status_update.status.state for event in events if event.HasField('status_update')
    ]
    check(
        TaskState.TASK_STATE_COMPLETED in final_states
        or (events and events[-1].HasField('task')
            and events[-1].task.status.state == TaskState.TASK_STATE_COMPLETED),
        'SendStreamingMessage(echo) reaches COMPLETED',
        [show(e) for e in events],
    )

    # work:5 with returnImmediately, then SubscribeToTask until it completes
    request = SendMessageRequest(
        message=user_message('work:5', context_id),
        configuration=SendMessageConfiguration(return_immediately=True),
    )
    event = await only_event(unary, request)
    if check(event.HasField('task'), 'SendMessage(work:5, returnImmediately) returns a task', show(event)):
        work = event.task
        check(
            work.status.state not in TERMINAL,
            'returnImmediately answers before the work ends',
            state_name(work.status.state),
        )
        events = []
        async for sub_event in streaming.subscribe(SubscribeToTaskRequest(id=work.id)):
            events.append(sub_event)
        kinds = [e.WhichOneof('payload') for e in events]
        check(bool(events) and kinds[0] == 'task', 'SubscribeToTask starts with the Task', kinds)
        if events and kinds[0] == 'task':
            check(events[0].task.id == work.id, 'the first event is this task', show(events[0]))
        states = [e.status_update.status.state for e in events if e.HasField('status_update')]
        check(
            states and states[-1] == TaskState.TASK_STATE_COMPLETED,
            'the subscription ends at COMPLETED',
            [state_name(s) for s in states],
        )
        check(
            all(e.artifact_update.task_id == work.id for e in events if e.HasField('artifact_update')),
            'artifact updates name the task',
            kinds,
        )
        final = await unary.get_task(GetTaskRequest(id=work.id))
        check(
            final.status.state == TaskState.TASK_STATE_COMPLETED and len(final.artifacts) >= 1,
            'GetTask after the subscription: COMPLETED with artifacts',
            show(final),
        )

        # a terminal task cannot be subscribed to (-32004 UnsupportedOperationError)
        try:
            late = [e async for e in streaming.subscribe(SubscribeToTaskRequest(id=work.id))]
            check(False, 'SubscribeToTask on a terminal task is refused', [show(e) for e in late])
        except A2AError as err:
            check(
                type(err).__name__ == 'UnsupportedOperationError',
                'SubscribeToTask on a terminal task is refused with UnsupportedOperationError',
                f'{type(err).__name__}: {err}',
            )

    # CancelTask on a long task
    event = await only_event(
        unary,
        SendMessageRequest(
            message=user_message('work:300', context_id),
            configuration=SendMessageConfiguration(return_immediately=True),
        ),
    )
    if check(event.HasField('task'), 'SendMessage(work:300) returns a task', show(event)):
        canceled = await unary.cancel_task(CancelTaskRequest(id=event.task.id))
        check(
            canceled.status.state == TaskState.TASK_STATE_CANCELED,
            'CancelTask returns a CANCELED task',
            show(canceled),
        )
        got = await unary.get_task(GetTaskRequest(id=event.task.id))
        check(
            got.status.state == TaskState.TASK_STATE_CANCELED,
            'GetTask after CancelTask: CANCELED',
            show(got),
        )

    await unary.close()
    await streaming.close()


def main() -> int:
    if len(sys.argv) != 2:
        print('usage: client_check.py BASE_URL', file=sys.stderr)
        return 2
    try:
        asyncio.run(asyncio.wait_for(run(sys.argv[1]), timeout=120))
    except Exception:  # noqa: BLE001 - any escape is a failed check, reported with its trace
        traceback.print_exc()
        failures.append('an exception escaped')
    if failures:
        print(f'{len(failures)} check(s) failed', flush=True)
        return 1
    print('all checks passed', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
