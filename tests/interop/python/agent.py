"""An A2A v1.0 agent on the official Python SDK (a2a-sdk 1.3.0), for a2a-recover's interop tests.

It binds 127.0.0.1 port 0 itself, prints `listening on http://127.0.0.1:PORT/` once the socket
listens, and serves the agent card at /.well-known/agent-card.json, JSON-RPC at / and HTTP+JSON
(the SDK's REST routes) under /rest. The card offers JSON-RPC first, then HTTP+JSON; with
`--http-json-only` it offers HTTP+JSON alone (and JSON-RPC is not served). With `--grpc` it also
serves the SDK's gRPC service (a2a.server.request_handlers.grpc_handler) on another port of
127.0.0.1, and with `--grpc03` the v0.3 gRPC service of a2a.compat.v0_3; the card then offers that
gRPC interface alone, as `127.0.0.1:PORT` without a scheme (as the SDK's cards give it), or as
`--grpc-advertise HOST:PORT` (a proxy in front of it). The line `grpc on 127.0.0.1:PORT` comes
before the ready line. With `--push` the card says `pushNotifications: true` and the SDK's own
push sender (`BasePushNotificationSender` with its default: no push URL screening, so loopback
webhooks are allowed) posts each change of a task to the config sent with its message.

Scenarios, chosen by the first word of the first text line that does not start with `[`
(the same words as `a2a-recover scripted-agent`):

  work:N   WORKING, N steps of about 100 ms each with an artifact chunk, then COMPLETED
  ask      INPUT_REQUIRED "two rooms or one?"; the next message completes the task with
           the artifact `booking` whose text is `booked: <answer>`
  auth     AUTH_REQUIRED; the next message completes the task
  fail     FAILED
  reject   REJECTED
  direct   a direct Message reply, no task
  else     COMPLETED with the artifact `echo` holding the text

Everything the SDK offers by default is kept (in-memory task store, default request handler),
because the point is to meet the official server as others deploy it. Unauthenticated callers
all map to the owner "" in the in-memory store, so ListTasks sees every task.
"""

import argparse
import asyncio
import socket
import sys
import uuid

from datetime import datetime, timezone

import httpx
import uvicorn

from google.protobuf.timestamp_pb2 import Timestamp
from starlette.applications import Starlette

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
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
)

QUESTION = 'two rooms or one?'
STEP_SECONDS = 0.1
MAX_STEPS = 1000


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
    return '\n'.join(p.text for p in message.parts if p.HasField('text'))


def now() -> Timestamp:
    ts = Timestamp()
    ts.FromDatetime(datetime.now(timezone.utc))
    return ts


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
                    context_id=context.context_id or '',
                    role=Role.ROLE_AGENT,
                    parts=[Part(text=f'direct reply: {text}')],
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
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED, timestamp=now()),
                history=[message],
            )
        )
        word = scenario_of(text)
        if word.startswith('work:'):
            await self.work(word, text, updater)
        elif word == 'ask':
            await updater.requires_input(updater.new_agent_message([Part(text=QUESTION)]))
        elif word == 'auth':
            await updater.requires_auth(
                updater.new_agent_message([Part(text='authorize, then send any message')])
            )
        elif word == 'fail':
            await updater.failed(updater.new_agent_message([Part(text='failed as scripted')]))
        elif word == 'reject':
            await updater.reject(updater.new_agent_message([Part(text='rejected as scripted')]))
        else:
            await updater.add_artifact([Part(text=text)], name='echo', last_chunk=True)
            await updater.complete()

    async def work(self, word: str, text: str, updater: TaskUpdater) -> None:
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
                [Part(text=f'step {step + 1}\n')],
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
        if state == TaskState.TASK_STATE_INPUT_REQUIRED:
            await updater.add_artifact(
                [Part(text=f'booked: {text.strip()}')], name='booking', last_chunk=True
            )
            await updater.complete()
        elif state == TaskState.TASK_STATE_AUTH_REQUIRED:
            await updater.complete(updater.new_agent_message([Part(text='authorized')]))
        else:
            await updater.add_artifact([Part(text=text)], name='echo', last_chunk=True)
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id = context.task_id or ''
        self.canceled.add(task_id)
        await TaskUpdater(event_queue, task_id, context.context_id or '').cancel()


REST_PREFIX = '/rest'


def build_app(
    base_url: str, http_json_only: bool, grpc: AgentInterface | None = None, push: bool = False
) -> tuple[Starlette, DefaultRequestHandler]:
    rest = AgentInterface(
        url=base_url.rstrip('/') + REST_PREFIX, protocol_binding='HTTP+JSON', protocol_version='1.0'
    )
    rpc = AgentInterface(url=base_url, protocol_binding='JSONRPC', protocol_version='1.0')
    if grpc is not None:
        interfaces = [grpc]
    elif http_json_only:
        interfaces = [rest]
    else:
        interfaces = [rpc, rest]
    card = AgentCard(
        name='a2a-sdk interop agent',
        description='Scripted scenarios on the official Python A2A SDK, for interop tests.',
        version='1.3.0',
        supported_interfaces=interfaces,
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
    pushing = {}
    if push:
        store = InMemoryPushNotificationConfigStore()
        sender = BasePushNotificationSender(httpx.AsyncClient(timeout=10), store)
        pushing = {'push_config_store': store, 'push_sender': sender}
    handler = DefaultRequestHandler(
        agent_executor=InteropExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        **pushing,
    )
    routes = create_agent_card_routes(card)
    if grpc is None:
        if not http_json_only:
            routes += create_jsonrpc_routes(handler, rpc_url='/')
        routes += create_rest_routes(handler, path_prefix=REST_PREFIX)
    return Starlette(routes=routes), handler


async def serve_with_grpc(sock: socket.socket, base_url: str, args: argparse.Namespace) -> None:
    """Serves the card over HTTP and the agent over gRPC (v1.0, or v0.3 with `--grpc03`)."""
    import grpc

    server = grpc.aio.server()
    port = server.add_insecure_port('127.0.0.1:0')
    version = '0.3' if args.grpc03 else '1.0'
    advertised = args.grpc_advertise or f'127.0.0.1:{port}'
    interface = AgentInterface(url=advertised, protocol_binding='GRPC', protocol_version=version)
    app, handler = build_app(base_url, False, interface, args.push)
    if args.grpc03:
        from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc
        from a2a.compat.v0_3.grpc_handler import CompatGrpcHandler

        a2a_v0_3_pb2_grpc.add_A2AServiceServicer_to_server(CompatGrpcHandler(handler), server)
    else:
        from a2a.server.request_handlers.grpc_handler import GrpcHandler
        from a2a.types import a2a_pb2_grpc

        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    await server.start()
    web = uvicorn.Server(uvicorn.Config(app, log_level='warning', lifespan='off'))
    print(f'grpc on 127.0.0.1:{port}', flush=True)
    print(f'listening on {base_url}', flush=True)
    await web.serve(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser(description='a2a-sdk interop agent')
    parser.add_argument(
        '--http-json-only',
        action='store_true',
        help='offer (and serve) only the HTTP+JSON interface',
    )
    parser.add_argument('--grpc', action='store_true', help='offer (and serve) only gRPC, v1.0')
    parser.add_argument('--grpc03', action='store_true', help='offer (and serve) only gRPC, v0.3')
    parser.add_argument('--grpc-advertise', help='the gRPC HOST:PORT the card names')
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
    if args.grpc or args.grpc03:
        asyncio.run(serve_with_grpc(sock, base_url, args))
        return
    app, _ = build_app(base_url, args.http_json_only, push=args.push)
    server = uvicorn.Server(uvicorn.Config(app, log_level='warning', lifespan='off'))
    # The socket already listens, so connections made from now on wait in its backlog.
    print(f'listening on {base_url}', flush=True)
    server.run(sockets=[sock])


if __name__ == '__main__':
    sys.exit(main())
