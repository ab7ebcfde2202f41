"""An A2A v0.3 agent on the official Python SDK (a2a-sdk 0.3.26), for a2a-recover's interop tests.

It binds 127.0.0.1 port 0 itself, prints `listening on http://127.0.0.1:PORT/` once the socket
listens, and serves, on the SDK's own apps:

  /.well-known/agent-card.json   the agent card (protocolVersion 0.3.0)
  POST /                         JSON-RPC 2.0 (A2AFastAPIApplication): message/send, tasks/get, ...
  /rest/v1/...                   HTTP+JSON (A2ARESTFastAPIApplication): POST /rest/v1/message:send, ...

`--preferred jsonrpc` (the default) or `--preferred rest` (also A2A_RECOVER_PREFERRED) chooses
which of the two the card's `url` and `preferredTransport` name; `additionalInterfaces` lists both.
With `--push` the card says `pushNotifications: true` and the SDK's own sender
(`BasePushNotificationSender`) posts the whole task to the config sent with each message.

Scenarios, chosen by the first word of the first text line that does not start with `[`
(the same words as `a2a-recover scripted-agent` and tests/interop/python/agent.py):

  work:N   working, N steps of about 100 ms each with an artifact chunk, then completed
  ask      input-required "two rooms or one?"; the next message completes the task with
           the artifact `booking` whose text is `booked: <answer>`
  auth     auth-required; the next message completes the task
  fail     failed
  reject   rejected
  direct   a direct Message reply, no task
  else     completed with the artifact `echo` holding the text

Everything the SDK offers by default is kept (in-memory task store, default request handler),
because the point is to meet the official server as others deploy it.
"""

import argparse
import asyncio
import os
import socket
import sys
import uuid

from datetime import datetime, timezone

import httpx
import uvicorn

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AFastAPIApplication, A2ARESTFastAPIApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
    TransportProtocol,
)

QUESTION = 'two rooms or one?'
STEP_SECONDS = 0.1
MAX_STEPS = 1000
REST_PREFIX = '/rest'


def scenario_of(text: str) -> str:
    """Returns the first word of the first line that does not start with `[`."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith('['):
            continue
        words = stripped.split()
        return words[0] if words else ''
    return ''


def text_of(message: Message) -> str:
    """Returns the message's text parts joined by newlines."""
    return '\n'.join(p.root.text for p in message.parts if isinstance(p.root, TextPart))


def text_part(text: str) -> Part:
    return Part(root=TextPart(text=text))


def now() -> str:
    return datetime.now(timezone.utc).isoformat()


class InteropExecutor(AgentExecutor):
    """Plays the scenarios; cancellation is cooperative through `canceled`."""

    def __init__(self) -> None:
        self.canceled: set[str] = set()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        text = text_of(message)
        task = context.current_task

        if task is None and scenario_of(text) == 'direct':
            await event_queue.enqueue_event(
                Message(
                    message_id=str(uuid.uuid4()),
                    context_id=context.context_id,
                    role=Role.agent,
                    parts=[text_part(f'direct reply: {text}')],
                )
            )
            return

        task_id = context.task_id or ''
        context_id = context.context_id or ''
        updater = TaskUpdater(event_queue, task_id, context_id)

        if task is not None:
            await self.resume(task, text, updater)
            return

        await event_queue.enqueue_event(
            Task(
                id=task_id,
                context_id=context_id,
                status=TaskStatus(state=TaskState.submitted, timestamp=now()),
                history=[message],
            )
        )
        word = scenario_of(text)
        if word.startswith('work:'):
            await self.work(word, updater)
        elif word == 'ask':
            await updater.requires_input(updater.new_agent_message([text_part(QUESTION)]))
        elif word == 'auth':
            await updater.requires_auth(
                updater.new_agent_message([text_part('authorize, then send any message')])
            )
        elif word == 'fail':
            await updater.failed(updater.new_agent_message([text_part('failed as scripted')]))
        elif word == 'reject':
            await updater.reject(updater.new_agent_message([text_part('rejected as scripted')]))
        else:
            await updater.add_artifact([text_part(text)], name='echo', last_chunk=True)
            await updater.complete()

    async def work(self, word: str, updater: TaskUpdater) -> None:
        try:
            steps = max(0, min(int(word.removeprefix('work:')), MAX_STEPS))
        except ValueError:
            steps = 1
        await updater.start_work()
        artifact_id = str(uuid.uuid4())
        for step in range(steps):
            await asyncio.sleep(STEP_SECONDS)
            if updater.task_id in self.canceled:
                return
            await updater.add_artifact(
                [text_part(f'step {step + 1}\n')],
                artifact_id=artifact_id,
                name='work',
                append=step > 0,
                last_chunk=step + 1 == steps,
            )
        if updater.task_id in self.canceled:
            return
        await updater.complete()

    async def resume(self, task: Task, text: str, updater: TaskUpdater) -> None:
        state = task.status.state
        if state == TaskState.input_required:
            await updater.add_artifact(
                [text_part(f'booked: {text.strip()}')], name='booking', last_chunk=True
            )
            await updater.complete()
        elif state == TaskState.auth_required:
            await updater.complete(updater.new_agent_message([text_part('authorized')]))
        else:
            await updater.add_artifact([text_part(text)], name='echo', last_chunk=True)
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id = context.task_id or ''
        self.canceled.add(task_id)
        await TaskUpdater(event_queue, task_id, context.context_id or '').cancel()


def build_card(base_url: str, preferred: str, push: bool) -> AgentCard:
    jsonrpc = AgentInterface(transport=TransportProtocol.jsonrpc.value, url=base_url)
    rest = AgentInterface(
        transport=TransportProtocol.http_json.value, url=base_url.rstrip('/') + REST_PREFIX
    )
    main = rest if preferred == 'rest' else jsonrpc
    return AgentCard(
        name='a2a-sdk 0.3 interop agent',
        description='Scripted scenarios on the official Python A2A SDK 0.3, for interop tests.',
        version='0.3.26',
        url=main.url,
        preferred_transport=main.transport,
        additional_interfaces=[jsonrpc, rest],
        capabilities=AgentCapabilities(streaming=True, push_notifications=push),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=[
            AgentSkill(
                id='interop',
                name='Interop scenarios',
                description='work:N, ask, auth, fail, reject, direct, echo',
                tags=['interop', 'booking'],
            )
        ],
    )


def build_app(base_url: str, preferred: str, push: bool):
    card = build_card(base_url, preferred, push)
    pushing = {}
    if push:
        store = InMemoryPushNotificationConfigStore()
        sender = BasePushNotificationSender(httpx.AsyncClient(timeout=10), store)
        pushing = {'push_config_store': store, 'push_sender': sender}
    handler = DefaultRequestHandler(
        agent_executor=InteropExecutor(), task_store=InMemoryTaskStore(), **pushing
    )
    # The REST app serves /rest/v1/...; the JSON-RPC routes (POST / and the card) join it.
    app = A2ARESTFastAPIApplication(agent_card=card, http_handler=handler).build(
        rpc_url=REST_PREFIX, openapi_url=None, docs_url=None, redoc_url=None
    )
    A2AFastAPIApplication(agent_card=card, http_handler=handler).add_routes_to_app(app, rpc_url='/')
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        '--preferred',
        choices=['jsonrpc', 'rest'],
        default=os.environ.get('A2A_RECOVER_PREFERRED', 'jsonrpc'),
        help="the transport the card's url and preferredTransport name",
    )
    parser.add_argument(
        '--push', action='store_true', help="push each task's changes with the SDK's sender"
    )
    args = parser.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(('127.0.0.1', 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    base_url = f'http://127.0.0.1:{port}/'
    app = build_app(base_url, args.preferred, args.push)
    server = uvicorn.Server(uvicorn.Config(app, log_level='warning', lifespan='off'))
    # The socket already listens, so connections made from now on wait in its backlog.
    print(f'listening on {base_url}', flush=True)
    server.run(sockets=[sock])


if __name__ == '__main__':
    sys.exit(main())
