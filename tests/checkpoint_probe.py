"""What another process has saved in a checkpoint store, and waiting until it has saved enough.

A test that kills a run must first know that every step it means to keep is saved. Another
process's progress cannot be awaited directly; its store can be read until it holds what the test
waits for (SQLite or PostgreSQL alike, through the savers' own API).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from deep_research.tools.checkpoints import StoreMissing, open_checkpointer

TASK_RESULT = "__return__"  # the channel LangGraph writes a task's result to (each model call)


def saved_writes(db: str, channel: str, threads: list[str], latest_only: bool = False) -> int:
    """Writes to `channel` the threads have saved so far: in each thread's latest top-level
    checkpoint (`latest_only`: what the next step will read), or in every checkpoint of the
    threads, subgraphs' included. Other threads in the store (a shared PostgreSQL) never count."""

    def matching(saved) -> int:
        return sum(
            1 for _, name, _ in (saved.pending_writes if saved else None) or [] if name == channel
        )

    async def count() -> int:
        async with open_checkpointer(db, create=False) as saver:
            found = 0
            for thread_id in threads:
                config = {"configurable": {"thread_id": thread_id}}
                if latest_only:
                    found += matching(await saver.aget_tuple(config))
                else:
                    found += sum([matching(saved) async for saved in saver.alist(config)])
            return found

    try:
        return asyncio.run(count())
    except StoreMissing:  # the process has not created its store yet
        return 0


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
    """Return once `condition()` holds; fail the test naming `what` if it never does."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened within {timeout:g} s: {what}")
        time.sleep(0.05)
