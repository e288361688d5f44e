"""The MCP server's runs handed to the job queue (`mcp --queue`): `deep-research worker`
processes run them, the server only submits and reads.

A run is checked exactly as an in-process one (`ResearchRuns.accept`: the server's ceilings and
guards), put in the store as accepted (its input checkpoint, so it is listed and durable from
the moment its id is returned) and submitted as a job naming its thread (`graph.run_queue`:
question and settings only; keys stay in each worker's environment). Its status is read from
its job (queued, running, failed) and its checkpoints (round, next steps, usage, report). Queued
runs have ids `mcpq-…`, so an in-process server on the same store never resumes them itself.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from langgraph.types import StateSnapshot

from deep_research.cli.bad_input import BadInput
from deep_research.cli.inspect import thread_status
from deep_research.graph import build_graph
from deep_research.graph.run_queue import QueuedRun, RunQueue, open_queue
from deep_research.graph.threads import run_ended, thread_config
from deep_research.server.arguments import ResearchOptions
from deep_research.server.runs import LiveRun, ResearchRuns, UnknownRun
from deep_research.settings import settings_from
from deep_research.tools.checkpoints import open_checkpointer

QUEUED_PREFIX = "mcpq-"  # not `mcp-`: an in-process server resumes those at its start
GAVE_UP = ("failed", "cancelled", "aborted")  # job states after which no worker will run it
JOB_FAILED = "its job failed on a worker (the worker's log says why); resume_research queues it"
HISTORY_LINES = 10  # checkpoints read back as a running run's progress lines


def checkpoint_line(snapshot: StateSnapshot) -> str:
    """One progress line for one checkpoint: its round and what runs next."""
    values = snapshot.values or {}
    steps = sorted({step for step in snapshot.next if not step.startswith("__")})
    return f"round {values.get('iteration') or 0}: " + (", ".join(steps) or "started")


class QueuedRuns(ResearchRuns):
    """Runs submitted to the queue in the PostgreSQL store and read back from it."""

    def __init__(self, target: str, defaults: dict[str, Any], notes: Any, max_queued: int) -> None:
        super().__init__(target, defaults, 1, notes, max_queued)
        self.queue: RunQueue | None = None

    async def __aenter__(self) -> QueuedRuns:
        saver = open_checkpointer(self.target, pooled=True)  # it lives long: see the worker
        self.saver = await self._stack.enter_async_context(saver)
        self.graph = build_graph(checkpointer=self.saver)  # read and accept only: workers run
        self.queue = await self._stack.enter_async_context(open_queue(self.target))
        return self

    @property
    def _queue(self) -> RunQueue:
        """The open queue (the server is inside `async with`)."""
        if self.queue is None:
            raise RuntimeError("the run queue is not open")
        return self.queue

    async def start(self, question: str, options: ResearchOptions) -> str:
        """Check the request as an in-process server does, then submit it; its id at once."""
        question, settings = await self.accept(question, options)
        async with self.admitting:  # this server's calls at once count the queue one by one
            waiting = await self._queue.waiting()
            if waiting >= self.max_queued:
                raise BadInput(
                    f"{waiting} runs already wait on the queue (--max-queued {self.max_queued}): "
                    "start this one when a worker has taken one of them"
                )
            run_id = f"{QUEUED_PREFIX}{uuid.uuid4().hex}"
            accepted = {"question": question, "settings": settings}
            await self._graph.aupdate_state(thread_config(run_id), accepted, as_node="__input__")
            await self._queue.submit(QueuedRun(run_id, question, settings))
        return run_id

    async def resume(self, run_id: str) -> None:
        """Queue again a run that failed or stopped (a worker resumes it from its checkpoint)."""
        status, snapshot, _ = await self.status(run_id)
        if status in ("queued", "running"):
            return
        if status not in ("failed", "unfinished"):
            raise BadInput(f"run {run_id!r} is {status}: nothing to resume")
        jobs = await self._queue.jobs_of(run_id)
        if jobs:
            given = jobs[-1].task_kwargs
            question, settings = given["question"], settings_from(given["settings"])
        else:  # a run started elsewhere (the CLI, an in-process server): its saved settings
            question = (snapshot.values or {}).get("question") or ""
            settings = (snapshot.values or {}).get("settings") or self.server_settings
        await self._queue.submit(QueuedRun(run_id, question, settings))

    async def status(self, run_id: str) -> tuple[str, StateSnapshot, LiveRun | None]:
        """queued, running, failed, done, waiting or unfinished, from the run's job and store;
        with its snapshot and a view of its latest checkpoints as progress lines."""
        snapshot = await self._graph.aget_state(thread_config(run_id))
        jobs = await self._queue.jobs_of(run_id)
        if not snapshot.values and not snapshot.next and not jobs:
            raise UnknownRun(f"no run with id {run_id!r}")
        job = jobs[-1] if jobs else None
        view = LiveRun(run_id, question=str(job.task_kwargs.get("question", "")) if job else "")
        status = self._status_of(snapshot, job.status if job else None)
        view.queued = status == "queued"
        if status == "failed":
            view.error = JOB_FAILED
        if status != "queued":  # a queued run has only its accepted input: no progress yet
            view.lines.extend(await self._lines(run_id))
        return status, snapshot, view

    @staticmethod
    def _status_of(snapshot: StateSnapshot, job_status: str | None) -> str:
        """A run's status from its latest checkpoint and the state of its latest job."""
        if run_ended(snapshot):
            return "done"
        if job_status == "todo":
            return "queued"
        if job_status == "doing":
            return "running"
        if job_status in GAVE_UP:
            return "failed"
        return thread_status(snapshot)

    async def _lines(self, run_id: str) -> list[str]:
        """The run's latest checkpoints as progress lines, oldest first."""
        history = self._graph.aget_state_history(thread_config(run_id), limit=HISTORY_LINES)
        lines = [checkpoint_line(snapshot) async for snapshot in history if snapshot.values]
        return lines[::-1]

    async def snapshot(self, run_id: str) -> StateSnapshot:
        """The run's latest checkpoint; UnknownRun when neither the store nor the queue has it."""
        _, snapshot, _ = await self.status(run_id)
        return snapshot

    async def wait(
        self,
        run_id: str,
        timeout: float,
        on_news: Callable[[LiveRun], Awaitable[None]],
        tick: float = 1.0,
    ) -> None:
        """Return once the run is no longer queued or running, or after `timeout` s; `on_news`
        at every new checkpoint (and when a worker takes it)."""
        clock = asyncio.get_running_loop()
        deadline = clock.time() + timeout
        seen: tuple | None = None
        news = 0
        while True:
            status, snapshot, view = await self.status(run_id)
            if status not in ("queued", "running") or view is None:
                return
            mark = (status, snapshot.config.get("configurable", {}).get("checkpoint_id"))
            if mark != seen:
                seen, news = mark, news + 1
                view.events = news
                await on_news(view)
            left = deadline - clock.time()
            if left <= 0:
                return
            await asyncio.sleep(min(tick, left))
