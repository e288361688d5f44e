"""Research runs for a task set, through the same resumable thread runner as `batch`.

Every task is one checkpointed thread with a stable id (`graph.many_threads`): a finished one is
read back, an interrupted one resumes from its last checkpoint, a new one starts.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from deep_research.domain.sources import SourceRegistry
from deep_research.evaluation.tasks import EvalTask
from deep_research.graph.many_threads import ThreadEnd, ThreadJob, run_threads
from deep_research.settings import Settings
from deep_research.state import SourceEvidence, output_of


@dataclass
class TaskRun:
    """A finished research run of one task: its output state and the evidence it retrieved."""

    task: EvalTask
    thread_id: str
    output: dict[str, Any]
    evidence: list[SourceEvidence]
    seconds: float  # wall time of this attempt (0 when the run had finished before)


def task_run(job: ThreadJob[EvalTask], end: ThreadEnd) -> TaskRun:
    """A task's run from its thread's final state."""
    return TaskRun(
        task=job.item,
        thread_id=job.thread_id,
        output=output_of(end.values),
        evidence=SourceRegistry(end.values.get("worker_results") or []).sources,
        seconds=end.seconds,
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
    jobs = [ThreadJob(task, thread_id(task), task.prompt, settings) for task in tasks]

    async def ended(job: ThreadJob[EvalTask], end: ThreadEnd) -> None:
        await finished(task_run(job, end))

    def broke(job: ThreadJob[EvalTask], error: Exception, _seconds: float) -> None:
        failed(job.item, error)

    await run_threads(
        jobs, checkpoint_db=checkpoint_db, concurrency=concurrency, finished=ended, failed=broke
    )
