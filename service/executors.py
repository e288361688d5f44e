"""Where runs are run: in this process (bounded concurrency), or by workers through the queue.

An executor takes a run id and the input of its next stretch (None: go on from its checkpoint;
a `Command` to answer its plan) and says what it knows of the run: `queued` or `running`, or
None when it is not running it. The service (`service.runs`) decides everything else.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from langgraph.types import Command

Activity = Literal["queued", "running"]
Drive = Callable[[str, "dict | Command | None"], Awaitable[None]]


class Executor(Protocol):
    """Runs a service's runs somewhere."""

    via: str  # what the index records: "process" or "queue"

    def bind(self, drive: Drive) -> None:
        """The coroutine that drives one stretch of a run (the service's)."""

    async def launch(self, run_id: str, step_input: dict | Command | None) -> None:
        """Run the run's next stretch (returns once it is handed over, not when it ends)."""

    async def activity(self, run_id: str) -> Activity | None:
        """queued, running, or None when this executor is not running the run."""

    async def stop(self, run_id: str) -> bool:
        """End the run's stretch now (it stays resumable); False when it cannot here."""

    async def news(self, run_id: str, timeout: float) -> None:
        """Return at the run's next change, or after `timeout` seconds."""

    def wake(self, run_id: str) -> None:
        """Tell whoever waits on the run that it changed."""

    async def gave_up(self, run_id: str) -> bool:
        """Whether the run's last stretch ended without a word (a queue job that failed)."""

    async def close(self) -> None:
        """Stop what still runs (each run stays resumable from its last step)."""


@dataclass
class _Live:
    """A run this process drives now: its task, and a signal for whoever waits for news."""

    task: asyncio.Task | None = None
    queued: bool = True
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()


class InProcess:
    """Runs in this process's event loop, at most `max_runs` researching at once."""

    via = "process"

    def __init__(self, max_runs: int = 2) -> None:
        self.slots = asyncio.Semaphore(max_runs)
        self.max_runs = max_runs
        self.live: dict[str, _Live] = {}
        self._drive: Drive | None = None

    def bind(self, drive: Drive) -> None:
        self._drive = drive

    async def launch(self, run_id: str, step_input: dict | Command | None) -> None:
        if self._drive is None:
            raise RuntimeError("the executor has no service to drive its runs")
        old = self.live.get(run_id)
        live = self.live[run_id] = _Live()
        if old is not None:
            live.changed = old.changed  # whoever waits on the old stretch hears of the new
        live.task = asyncio.get_running_loop().create_task(
            self._run(run_id, live, self._drive, step_input), name=run_id
        )

    async def _run(
        self, run_id: str, live: _Live, drive: Drive, step_input: dict | Command | None
    ) -> None:
        try:
            async with self.slots:
                live.queued = False
                self.wake(run_id)
                await drive(run_id, step_input)
        finally:
            self.wake(run_id)
            if self.live.get(run_id) is live:  # nothing is kept of a run that is not running
                del self.live[run_id]

    def waiting(self) -> int:
        """How many runs wait for a slot: those past the `max_runs` that research."""
        active = sum(1 for live in self.live.values() if live.running)
        return max(0, active - self.max_runs)

    async def activity(self, run_id: str) -> Activity | None:
        live = self.live.get(run_id)
        if live is None or not live.running:
            return None
        return "queued" if live.queued else "running"

    async def stop(self, run_id: str) -> bool:
        live = self.live.get(run_id)
        if live is None or live.task is None or not live.running:
            return False
        live.task.cancel()
        await asyncio.gather(live.task, return_exceptions=True)
        self.wake(run_id)
        return True

    async def news(self, run_id: str, timeout: float) -> None:
        live = self.live.get(run_id)
        if live is None:  # not running here: nothing will change it from here
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(live.changed.wait(), timeout)

    def wake(self, run_id: str) -> None:
        live = self.live.get(run_id)
        if live is not None:
            live.changed.set()
            live.changed = asyncio.Event()

    async def gave_up(self, run_id: str) -> bool:
        return False

    async def close(self) -> None:
        tasks = [live.task for live in self.live.values() if live.running and live.task]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


class OnQueue:
    """Runs handed to `deep-research worker` processes through the queue in the PostgreSQL
    store (`service.queue`): a job names only the run; the worker reads the rest from the store
    and takes its server-only settings from its own process. This process polls what it shows."""

    via = "queue"
    POLL_SECONDS = 0.5

    def __init__(self, queue: Any) -> None:
        self.queue = queue

    def bind(self, drive: Drive) -> None:
        """Nothing to bind: workers drive the runs."""

    async def launch(self, run_id: str, step_input: dict | Command | None) -> None:
        if step_input is not None:
            raise ValueError("a queued run goes on from its checkpoint only")
        await self.queue.submit(run_id)

    async def activity(self, run_id: str) -> Activity | None:
        status = await self.queue.status(run_id)
        return {"todo": "queued", "doing": "running"}.get(status or "")  # type: ignore[return-value]

    async def stop(self, run_id: str) -> bool:
        return False

    async def waiting(self) -> int:
        """How many runs wait on the queue for a worker."""
        return await self.queue.waiting()

    async def news(self, run_id: str, timeout: float) -> None:
        await asyncio.sleep(min(timeout, self.POLL_SECONDS))

    def wake(self, run_id: str) -> None:
        """Nothing waits here: readers poll."""

    async def gave_up(self, run_id: str) -> bool:
        from deep_research.service.queue import GAVE_UP

        return await self.queue.status(run_id) in GAVE_UP

    async def close(self) -> None:
        """The workers' runs go on."""
