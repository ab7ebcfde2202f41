"""A deterministic LangGraph graph for the interop tests: no model, no network.

Its input is the A2A message as LangGraph's A2A endpoint gives it (`messages`). A message
containing `ask` interrupts with the question "two rooms or one?" (LangGraph sends it as an
artifact named `Interrupt` whose part is a data part `{"id": …, "value": …}`); the answer
resumes the graph, which completes with `booked: ANSWER`. A message containing `data` completes
with a data part `{"ref": "H-1", "nights": 2}`. Anything else completes with `done: TEXT`.
"""

from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt


class State(TypedDict):
    messages: Annotated[list, add_messages]


def _text(message) -> str:
    content = message.content if hasattr(message, "content") else message.get("content", "")
    if isinstance(content, str):
        return content
    return "".join(
        part.get("text", "") if isinstance(part, dict) else str(part) for part in content
    )


def book(state: State) -> dict:
    asked = _text(state["messages"][-1])
    if "ask" in asked:
        answer = interrupt("two rooms or one?")
        if not isinstance(answer, str):
            answer = str(answer)
        return {"messages": [{"role": "assistant", "content": f"booked: {answer}"}]}
    if "data" in asked:
        return {
            "messages": [
                {
                    "role": "assistant",
                    "content": [{"type": "json", "json": {"ref": "H-1", "nights": 2}}],
                }
            ]
        }
    return {"messages": [{"role": "assistant", "content": f"done: {asked}"}]}


builder = StateGraph(State)
builder.add_node("book", book)
builder.add_edge(START, "book")
builder.add_edge("book", END)
graph = builder.compile()
