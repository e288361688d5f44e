"""Model calls saved one by one, so a step killed midway repeats only the calls in flight.

A step that asks a model several times (citation checks, re-asks after a bad reply) is one
node; LangGraph saves a node's output when the whole node ends. Run as a LangGraph `task`
inside the node, each answered call is written to the checkpoint as it comes back, and when the
node runs again after a crash the same call (by its order within the node) is answered from the
checkpoint. A task is known by its order only, so each carries a fingerprint of its request and
a saved answer to a different request is never used: that call is simply sent again.
Outside a graph run (or on `graph.invoke`'s thread-pool runner) the call is made directly.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from contextvars import ContextVar
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.config import get_config
from langgraph.func import task

from deep_research.tools.secrets import redact_error


def fingerprint(messages: list[BaseMessage], **options: Any) -> str:
    """A digest of one request: its messages and the options that shape the reply."""
    payload = [[m.type, m.content] for m in messages], options
    text = json.dumps(payload, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


_IN_SAVED_TOOL: ContextVar[bool] = ContextVar("in_saved_tool_call", default=False)
"""True inside a saved tool call: the model calls it makes are saved with its answer."""


@task(name="model_call")
async def _saved_call(key: str, send: Callable[[], Awaitable[AIMessage]]) -> tuple[str, AIMessage]:
    """The call as a task: its answer (with the request's fingerprint) goes to the checkpoint;
    its error too, so a key the server echoed in it is masked first (each attempt is a task)."""
    try:
        return key, await send()
    except Exception as error:
        redact_error(error)
        raise


def _in_async_graph() -> bool:
    """True inside a node of a graph run by `ainvoke`/`astream`, whose runner awaits tasks on
    this event loop (`graph.invoke` runs them on threads, where our clients cannot go)."""
    try:
        configurable = get_config().get("configurable", {})
    except RuntimeError:  # not inside a graph run at all
        return False
    runner_call = configurable.get("__pregel_call")
    return getattr(getattr(runner_call, "func", None), "__name__", "") == "_acall"


async def durable(
    key: str,
    send: Callable[[], Awaitable[AIMessage]],
    slot: Callable[[], AbstractAsyncContextManager],
) -> AIMessage:
    """`await send()` inside `slot()` (the run's and the endpoint's limits), saved in the run's
    checkpoint as soon as it answers (see module doc). The task is created before any wait, so
    calls keep their order within the node however the limits let them through; a call
    answered from the checkpoint takes no slot."""

    async def call() -> AIMessage:
        async with slot():
            return await send()

    if _IN_SAVED_TOOL.get() or not _in_async_graph():
        return await call()
    saved_key, reply = await _saved_call(key, call)
    if saved_key != key:  # this position held another request before the crash: ask anew
        return await call()
    return reply


@task(name="tool_call")
async def _saved_tool(key: str, run: Callable[[], Awaitable[str]]) -> tuple[str, str | dict]:
    """One tool call as a task: its outcome (JSON text, with the call's fingerprint) is saved;
    its error too, so a key a server echoed in it (the quoting model call) is masked first. (A
    checkpoint written before outcomes were text holds the parsed JSON.)"""
    token = _IN_SAVED_TOOL.set(True)
    try:
        return key, await run()
    except Exception as error:
        redact_error(error)
        raise
    finally:
        _IN_SAVED_TOOL.reset(token)


async def durable_tool(key: str, run: Callable[[], Awaitable[str]]) -> str | dict:
    """`await run()` (a worker's tool call: search, page read, MCP call; JSON text out), saved in
    the run's checkpoint as soon as it ends, like `durable` model calls: a node run again after
    a crash reads an answered call back instead of sending it again. The model calls a tool
    makes (quoting a page) are saved with its outcome, not on their own."""
    if not _in_async_graph():
        return await run()
    saved_key, outcome = await _saved_tool(key, run)
    if saved_key != key:  # this position held another call before the crash: run it anew
        return await run()
    return outcome
