"""Many checkpointed threads in one process, N at a time, each resumable (`batch` and `eval`).

Nobody answers questions asked back here: the `clarify` step is off for every thread.

A thread that finished in an earlier attempt is read back, one that was interrupted resumes from
its last checkpoint, a new one starts; so the same command run again after a crash or `kill -9`
pays only for what was not finished. One thread's failure is handed to `failed` and the others
go on. All threads share the process's endpoint limits; each keeps its own budget.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from langgraph.types import Command

from deep_research.domain.answering_settings import answered_otherwise
from deep_research.graph import build_graph
from deep_research.graph.threads import advance, run_ended, thread_config
from deep_research.settings import Settings
from deep_research.tools.checkpoints import open_checkpointer
from deep_research.tools.events import ProgressEvent
from deep_research.tools.run_resources import LiveRuns

Item = TypeVar("Item")


@dataclass(frozen=True)
class ThreadJob(Generic[Item]):
    """One thread to drive to its end: the caller's item, its thread id, question and settings."""

    item: Item
    thread_id: str
    question: str
    settings: Settings


@dataclass(frozen=True)
class ThreadEnd:
    """A thread at its end: its final state values, and whether this attempt ran it."""

    values: dict[str, Any]
    ran: bool  # False: it had finished in an earlier attempt and was read back
    seconds: float  # wall time of this attempt (0 when read back)


async def drive(
    graph: Any,
    runs: LiveRuns,
    job: ThreadJob,
    started: Callable[[ThreadJob, bool], None],
    on_event: Callable[[ThreadJob, ProgressEvent], None],
) -> ThreadEnd:
    """Read back, resume or start one thread, to its end; raises if it stops before."""
    snapshot = await graph.aget_state(thread_config(job.thread_id))
    if run_ended(snapshot):
        return ThreadEnd(snapshot.values, ran=False, seconds=0.0)
    resumed = bool(snapshot.values)
    started(job, resumed)
    began = time.monotonic()
    settings = job.settings.model_copy(update={"clarify": False})  # nobody here answers back
    step_input: dict | Command | None = {"question": job.question, "settings": settings}
    if resumed:  # another model or timeout given since: saved with the run, as `resume --model`
        changed = answered_otherwise(snapshot.values.get("settings"), settings)
        step_input = Command(update={"settings": changed}) if changed else None
    snapshot = await advance(
        graph, job.thread_id, step_input, lambda e: on_event(job, e), runs=runs
    )
    if snapshot.next:
        raise RuntimeError(f"the run stopped before its end, at {list(snapshot.next)}")
    return ThreadEnd(snapshot.values, ran=True, seconds=time.monotonic() - began)


async def run_threads(
    jobs: list[ThreadJob[Item]],
    *,
    checkpoint_db: str,
    concurrency: int,
    finished: Callable[[ThreadJob[Item], ThreadEnd], Awaitable[None]],
    failed: Callable[[ThreadJob[Item], Exception, float], Awaitable[None] | None],
    started: Callable[[ThreadJob[Item], bool], None] = lambda job, resumed: None,
    on_event: Callable[[ThreadJob[Item], ProgressEvent], None] = lambda job, event: None,
    runs: LiveRuns | None = None,
) -> None:
    """Drive every job's thread to its end, `concurrency` at a time.

    `finished` gets each thread as it ends; a thread whose run (or whose `finished`) raises is
    handed to `failed` with the seconds it took, and the others go on. `runs` holds the live
    runs' resources (one is made when not given).
    """
    slots = asyncio.Semaphore(concurrency)
    async with open_checkpointer(checkpoint_db) as saver:
        runs = LiveRuns() if runs is None else runs
        graph = build_graph(checkpointer=saver, runs=runs)

        async def one(job: ThreadJob[Item]) -> None:
            async with slots:
                began = time.monotonic()
                try:
                    await finished(job, await drive(graph, runs, job, started, on_event))
                except Exception as error:  # this thread failed; the others go on
                    outcome = failed(job, error, time.monotonic() - began)
                    if outcome is not None:
                        await outcome

        await asyncio.gather(*(one(job) for job in jobs))
