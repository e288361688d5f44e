"""Research runs on a job queue in the PostgreSQL store (procrastinate), taken by any number of
`deep-research worker` processes on any number of machines (`service.executors.OnQueue`).

A job names a run by its id, and nothing else: what the run asks (question, settings) is read
from the store, where admission put it, and what the worker reads, fetches and starts
(server-only settings: folders, private reads, MCP configs) is the worker's own
(`RunService.execute`), so write access to the job table starts no command on a worker. A
finished run is left as it is, an interrupted one resumes from its last checkpoint, an accepted
one starts. Each job holds `lock=` its run id (a run is on one worker at a time) and
`queueing_lock=` its run id (submitting it again while it waits adds nothing). Every worker
sends a heartbeat; each also looks for jobs whose worker has sent none for `stalled_after`
seconds (it died: SIGKILL, a lost machine) and queues them again, so another worker resumes
the run from its checkpoint. The run's budget ledger is in its checkpointed state, so it holds
wherever the run goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from procrastinate import App, JobContext, PsycopgConnector
from procrastinate.exceptions import AlreadyEnqueued, ConnectorException

from deep_research.tools.pg_setup import set_up_once

QUEUE = "deep-research"
TASK = "deep_research.research"
DEFAULT_STALLED_AFTER = 60.0  # seconds without a heartbeat before a worker counts as dead
WAITING = ("todo", "doing")  # a job in these states is the thread's live submission
GAVE_UP = ("failed", "cancelled", "aborted")  # job states after which no worker will run it


async def research(context: JobContext, thread_id: str, **_earlier: Any) -> None:
    """The job: drive the run to its next stop on this worker (start, resume or leave it).

    Arguments a job row of an earlier version carries (question, settings) are not read."""
    service, say = (context.additional_context[k] for k in ("service", "say"))
    say(f"{thread_id}: taken")
    starting = lambda resumed: say(f"{thread_id}: {'resumed' if resumed else 'started'}")  # noqa: E731
    status = await service.execute(thread_id, starting)
    say(f"{thread_id}: {status}")


class RunQueue:
    """The queue in one PostgreSQL store: submit runs, read their jobs, run a worker."""

    def __init__(self, conninfo: str, connections: int = 4) -> None:
        self.conninfo = conninfo
        connector = PsycopgConnector(conninfo=conninfo, min_size=1, max_size=connections)
        self.app = App(connector=connector)
        self.task = self.app.task(name=TASK, queue=QUEUE, pass_context=True)(research)

    async def _ready(self) -> bool:
        """True when the queue's tables are in the store."""
        row = await self.app.connector.execute_query_one_async(
            "SELECT to_regclass('procrastinate_jobs') IS NOT NULL AS present"
        )
        return bool(row["present"])

    async def set_up(self) -> None:
        """The queue's tables, made by one process even when many start at once."""
        await set_up_once(self.conninfo, self._ready, self.app.schema_manager.apply_schema_async)

    async def jobs_of(self, thread_id: str) -> list[Any]:
        """Every job ever submitted for the thread, oldest first."""
        jobs = await self.app.job_manager.list_jobs_async(queue=QUEUE, queueing_lock=thread_id)
        return sorted(jobs, key=lambda job: job.id or 0)

    async def submit(self, run_id: str) -> bool:
        """Queue the run unless a job of its thread waits or runs; True when one was added."""
        if any(job.status in WAITING for job in await self.jobs_of(run_id)):
            return False
        deferrer = self.task.configure(lock=run_id, queueing_lock=run_id)
        try:
            await deferrer.defer_async(thread_id=run_id)
        except AlreadyEnqueued:  # another submitter was first
            return False
        return True

    async def waiting(self) -> int:
        """How many runs wait on the queue for a worker (`--max-queued` bounds it)."""
        return len(list(await self.app.job_manager.list_jobs_async(queue=QUEUE, status="todo")))

    async def status(self, thread_id: str) -> str | None:
        """The status of the thread's latest job (`todo`, `doing`, `failed`, ...), or None."""
        jobs = await self.jobs_of(thread_id)
        return jobs[-1].status if jobs else None

    async def requeue_stalled(self, stalled_after: float, say: Callable[[str], None]) -> None:
        """Queue again every job whose worker has sent no heartbeat for `stalled_after` s."""
        manager = self.app.job_manager
        for job in await manager.get_stalled_jobs(
            queue=QUEUE, seconds_since_heartbeat=stalled_after
        ):
            try:
                await manager.retry_job(job)
            except ConnectorException:  # another worker queued it again first
                continue
            say(f"{job.lock}: its worker stopped answering; queued again")

    async def work(
        self, service: Any, concurrency: int, stalled_after: float, say: Callable[[str], None]
    ) -> None:
        """Take runs from the queue until stopped (SIGINT or SIGTERM), each driven by
        `service` (this worker's, over the same store)."""

        async def rescue() -> None:
            """Every third of `stalled_after`, queue again the jobs of dead workers."""
            while True:
                await asyncio.sleep(stalled_after / 3)
                await self.requeue_stalled(stalled_after, say)

        rescuer = asyncio.get_running_loop().create_task(rescue())
        try:
            await self.app.run_worker_async(
                queues=[QUEUE],
                concurrency=concurrency,
                update_heartbeat_interval=stalled_after / 4,
                stalled_worker_timeout=stalled_after,
                additional_context={"service": service, "say": say},
                fetch_job_polling_interval=1.0,
            )
        finally:
            rescuer.cancel()


@asynccontextmanager
async def open_queue(conninfo: str, connections: int = 4) -> AsyncIterator[RunQueue]:
    """The run queue of a PostgreSQL store, its tables made if needed."""
    queue = RunQueue(conninfo, connections)
    async with queue.app.open_async():
        await queue.set_up()
        yield queue
