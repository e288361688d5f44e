"""What every run in this process shares, held by one object: `PROCESS`.

- `gates`: each endpoint's limits (requests in flight, per minute, tokens per minute, the
  pause after a 429), built per event loop from the `DEEP_RESEARCH_*` environment variables;
- `chat_clients`: one chat-model client per model, server and event loop (its connection pool
  is reused by every run);
- `capabilities`: the structured-output method each server and model was found to accept;
- `tool_protocols`: how each server and model takes a worker's tools (native or in the prompt);
- `context_windows`: the context window each server said it has;
- `search_clients`: one search client per provider, address, key and timeout (per event loop
  for asyncio ones) and one TLS context for them and for page fetches: a run builds its own
  backend (budgets, page-fetch count, cache) around these.

Providers limit a key, not a run, and a server's abilities do not change between runs: so
these outlive any one run, graph or judge. Whatever needs them is given this object (a
`ModelClient`, a `RunResources`, `LiveRuns`), which defaults to `current()`, the one place it
is looked up. A test that needs a fresh process swaps `PROCESS` (see `tests/conftest.py`).
"""

from __future__ import annotations

import asyncio
import gc
import weakref

from langchain_core.language_models import BaseChatModel

from deep_research.tools.capabilities import TOOL_PROTOCOLS, CapabilityMemory
from deep_research.tools.context_window import ContextWindows
from deep_research.tools.endpoint_limits import Gates
from deep_research.tools.search.clients import SearchClients


class ProcessWide:
    """Limits, clients and what was learnt about each server, for every run in the process."""

    def __init__(self) -> None:
        self.gates = Gates()
        self.capabilities = CapabilityMemory()
        self.tool_protocols = CapabilityMemory(methods=TOOL_PROTOCOLS)
        self.search_clients = SearchClients()
        self.context_windows = ContextWindows(tls=self.search_clients.tls)
        self.chat_clients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[tuple, BaseChatModel]
        ] = weakref.WeakKeyDictionary()

    def chat_clients_here(self) -> dict[tuple, BaseChatModel]:
        """The chat clients built on the running event loop (an HTTP pool belongs to one)."""
        return self.chat_clients.setdefault(asyncio.get_running_loop(), {})


PROCESS = ProcessWide()


YOUNG_COLLECTION_EVERY = 10_000
"""Objects allocated (net) between two young collections, at least (CPython's default: 700)."""


def built_for_good() -> None:
    """Everything built so far (the imported libraries, the compiled graphs) lives as long as
    the process: move it out of the garbage collector's full collections (`gc.freeze`). With
    64 runs in one process, a full collection walked every object of langchain, openai and
    pydantic again: pauses of up to 0.55 s on the event loop, 1.8 s in all over 18 s.

    And collect the young generation less often: a call's objects (its request, stream, task
    and messages) live across the others' allocations, and at 700 they reached the old
    generation in such numbers that it was walked whole 44 times in one batch of 64 runs
    (20 s of 108 s of CPU); at 10,000, twice (7 s). A process that asked for more keeps it."""
    gc.freeze()
    young, *older = gc.get_threshold()
    if 0 < young < YOUNG_COLLECTION_EVERY:  # 0: the process turned collection off
        gc.set_threshold(YOUNG_COLLECTION_EVERY, *older)


def current() -> ProcessWide:
    """The process's shared object (looked up at call time, so a test can swap it)."""
    return PROCESS
