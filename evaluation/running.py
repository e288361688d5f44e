"""Research runs for a task set: bounded concurrency, resumable, one stable thread per task.

A task whose thread finished is read back, one that was interrupted resumes from its last
checkpoint, and a new one starts; so the same `eval` command run again after a crash pays only
for what was not finished. This is the one place that runs research for `eval`: when the
`batch` command's machinery lands, it replaces this module behind `run_tasks`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from domain.sources import SourceRegistry
from evaluation.tasks import EvalTask
from graph import build_graph
from graph.threads import advance, thread_config
from settings import Settings
from state import SourceEvidence, output_of
from tools.checkpoints import open_checkpointer
from tools.run_resources import LiveRuns


@dataclass
class TaskRun:
    """A finished research run of one task: its output state and the evidence it retrieved."""

    task: EvalTask
    thread_id: str
    output: dict[str, Any]
    evidence: list[SourceEvidence]
    seconds: float  # wall time of this attempt (0 when the run had finished before)


async def _research(
    graph: Any, runs: LiveRuns, task: EvalTask, thread_id: str, settings: Settings
) -> TaskRun:
    """Run, resume or read back the task's thread, to its end."""
    config = thread_config(thread_id)
    snapshot = await graph.aget_state(config)
    started = time.monotonic()
    unfinished = not snapshot.values or bool(snapshot.next)
    if unfinished:
        graph_input = None if snapshot.values else {"question": task.prompt, "settings": settings}
        snapshot = await advance(graph, thread_id, graph_input, runs=runs)
    if snapshot.next:
        raise RuntimeError(f"the run stopped before its end, at {list(snapshot.next)}")
    values = snapshot.values
    return TaskRun(
        task=task,
        thread_id=thread_id,
        output=output_of(values),
        evidence=SourceRegistry(values.get("worker_results") or []).sources,
        seconds=time.monotonic() - started if unfinished else 0.0,
    )


async def run_tasks(
    tasks: list[EvalTask],
    *,
    settings: Settings,
    checkpoint_db: str,
    thread_id: Callable[[EvalTask], str],
    concurrency: int,
    finished: Callable[[TaskRun], Awaitable[None]],
    failed: Callable[[EvalTask, Exception], None],
) -> None:
    """Research every task, `concurrency` at a time; `finished` gets each run as it ends.

    A task whose research or `finished` raises is reported to `failed` and the others go on.
    """
    slots = asyncio.Semaphore(concurrency)
    async with open_checkpointer(checkpoint_db) as saver:
        runs = LiveRuns()
        graph = build_graph(checkpointer=saver, runs=runs)

        async def one(task: EvalTask) -> None:
            async with slots:
                try:
                    await finished(await _research(graph, runs, task, thread_id(task), settings))
                except Exception as error:  # one task's failure is recorded; the set goes on
                    failed(task, error)

        await asyncio.gather(*(one(task) for task in tasks))
