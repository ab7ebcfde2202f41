"""Serves graph.py on the LangGraph Agent Server (langgraph-api, in-memory runtime) on
127.0.0.1, for the interop tests, with no network: tracing, analytics and version checks off.

Prints `listening on http://127.0.0.1:PORT/a2a/ASSISTANT/` (the A2A agent's base URL; its card
is under it at `.well-known/agent-card.json`) once the server answers, then serves until killed.
The graph is `booking`; its assistant id is the uuid5 the server derives from that name.
"""

import os
import socket
import sys
import threading
import time
import urllib.request
import uuid
from pathlib import Path

for name, value in {
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGSMITH_TRACING_V2": "false",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LANGSMITH_API_KEY": "",
    "LANGCHAIN_API_KEY": "",
    "LANGSMITH_DISABLE_RUN_COMPRESSION": "true",
    "DO_NOT_TRACK": "1",
}.items():
    os.environ[name] = value

from langgraph_api.cli import run_server  # noqa: E402
# langgraph_api.graph.NAMESPACE_GRAPH (importing it reads the server's config too early).
NAMESPACE_GRAPH = uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")
ASSISTANT = str(uuid.uuid5(NAMESPACE_GRAPH, "booking"))
os.environ["DEFAULT_A2A_ASSISTANT_ID"] = ASSISTANT


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def announce(port: int) -> None:
    base = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "ok", timeout=2) as r:
                if r.status == 200:
                    print(f"listening on {base}a2a/{ASSISTANT}/", flush=True)
                    return
        except OSError:
            time.sleep(0.05)
    print("the LangGraph server did not answer /ok within 60 s", file=sys.stderr, flush=True)
    os._exit(1)


port = free_port()
threading.Thread(target=announce, args=(port,), daemon=True).start()
graph = str(Path(__file__).with_name("graph.py"))
run_server(
    host="127.0.0.1",
    port=port,
    graphs={"booking": f"{graph}:graph"},
    open_browser=False,
    disable_persistence=True,
    server_level="WARNING",
)
