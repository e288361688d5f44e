"""Research runs for a task set, through the run service like a batch's questions.

Every task is one run with a stable id: a finished one is read back, an interrupted one
resumes from its last checkpoint, a new one starts (`RunService.to_the_end`), `concurrency` at
a time, each in the terminal's name (an eval is a command of the terminal).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from deep_research.domain.sources import SourceRegistry
from deep_research.evaluation.tasks import EvalTask
from deep_research.service.admission import Admitted, Operator
from deep_research.service.caller import Caller
from deep_research.service.runs import Ended, open_service
from deep_research.settings import Settings
from deep_research.state import SourceEvidence, output_of

CALLER = Caller("cli")


@dataclass
class TaskRun:
    """A finished research run of one task: its output state and the evidence it retrieved."""

    task: EvalTask
    thread_id: str
    output: dict[str, Any]
    evidence: list[SourceEvidence]
    seconds: float  # wall time of this attempt (0 when the run had finished before)


def task_run(task: EvalTask, thread_id: str, end: Ended) -> TaskRun:
    """A task's run from its final state."""
    return TaskRun(
        task=task,
        thread_id=thread_id,
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
    slots = asyncio.Semaphore(concurrency)
    operator = Operator.of(settings, unattended=True)
    async with open_service(checkpoint_db, operator) as service:

        async def one(task: EvalTask) -> None:
            async with slots:
                named = thread_id(task)
                try:
                    admitted = Admitted(task.prompt, settings)  # checked by the eval command
                    end = await service.to_the_end(CALLER, admitted, named)
                    await finished(task_run(task, named, end))
                except Exception as error:  # this task failed; the others go on
                    failed(task, error)

        await asyncio.gather(*(one(task) for task in tasks))
