"""A deterministic fasta2a 2.1.1 agent for the interop tests: no model, no network.

A message whose text contains `ask` leaves the task INPUT_REQUIRED with the question "two rooms
or one?" in its history (fasta2a's habit: no status message); the answer, which fasta2a runs as
a new task in the same context, completes with `booked: ANSWER`. A message containing `data` completes with an artifact
`booking` whose one part is a data part `{"ref": "H-1", "nights": 2}`. Anything else completes
with an artifact `answer`: `done: TEXT`.

Binds 127.0.0.1:0 and prints `listening on http://127.0.0.1:PORT/` once the socket listens.
"""

import asyncio
import socket
import uuid
from contextlib import asynccontextmanager

import uvicorn
from fasta2a import FastA2A, Worker
from fasta2a.broker import InMemoryBroker
from fasta2a.storage import InMemoryStorage


def text_of(message) -> str:
    return "".join(p.get("text", "") for p in message.get("parts", []))


def agent_message(text: str) -> dict:
    return {
        "role": "agent",
        "parts": [{"text": text}],
        "kind": "message",
        "message_id": str(uuid.uuid4()),
    }


class BookingWorker(Worker):
    async def run_task(self, params) -> None:
        task = await self.storage.load_task(params["id"])
        asked = text_of(params["message"])
        await self.storage.update_task(task["id"], state="working")
        context = await self.storage.load_context(task["context_id"]) or {}
        if context.get("asked"):
            await self.storage.update_context(task["context_id"], {})
            await self.storage.update_task(
                task["id"],
                state="completed",
                new_artifacts=[
                    {"artifact_id": str(uuid.uuid4()), "name": "answer",
                     "parts": [{"text": f"booked: {asked}"}]}
                ],
            )
        elif "ask" in asked:
            await self.storage.update_context(task["context_id"], {"asked": True})
            await self.storage.update_task(
                task["id"],
                state="input-required",
                new_messages=[agent_message("two rooms or one?")],
            )
        elif "data" in asked:
            await self.storage.update_task(
                task["id"],
                state="completed",
                new_artifacts=[
                    {"artifact_id": str(uuid.uuid4()), "name": "booking",
                     "parts": [{"data": {"ref": "H-1", "nights": 2}}]}
                ],
            )
        else:
            await self.storage.update_task(
                task["id"],
                state="completed",
                new_artifacts=[
                    {"artifact_id": str(uuid.uuid4()), "name": "answer",
                     "parts": [{"text": f"done: {asked}"}]}
                ],
            )

    async def cancel_task(self, params) -> None:
        await self.storage.update_task(params["id"], state="canceled")

    def build_message_history(self, history):
        return history

    def build_artifacts(self, result):
        return []


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}/"
    storage = InMemoryStorage()
    broker = InMemoryBroker()
    worker = BookingWorker(broker=broker, storage=storage)

    @asynccontextmanager
    async def lifespan(app):
        async with app.task_manager:
            async with worker.run():
                print(f"listening on {base}", flush=True)
                yield

    app = FastA2A(
        storage=storage, broker=broker, name="booking", url=base, lifespan=lifespan
    )
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    sock.listen(128)
    asyncio.run(server.serve(sockets=[sock]))


if __name__ == "__main__":
    main()
