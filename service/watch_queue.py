"""Watched questions on the job queue: a periodic tick on the workers queues what is due.

procrastinate defers the tick once per cron time, whichever workers run (its periodic tasks:
the database keeps two workers from deferring the same tick). The tick claims every due version
(`WatchStore.claim_due`: a new one, or one whose holder stopped renewing its lease) and queues
it as a job that holds its thread (`lock=` and `queueing_lock=` the version's thread), so a
version is made by one worker at a time and queued once. The job names only the version's run:
what it was claimed with (its watch, the version before, its caps) is read from the store, as a
research job's question is. A worker that dies mid-version has its job taken up again by
another (`RunQueue.requeue_stalled`), which resumes the version from its checkpoint; a version
already finished is read back, never made twice.
"""

from __future__ import annotations

from typing import Any

from procrastinate import App, JobContext
from procrastinate.exceptions import AlreadyEnqueued

from deep_research.service.watch import make_version
from deep_research.tools.watches import WatchStore

WATCH_QUEUE = "deep-research-watch"  # apart from the research runs' queue (its counts and caps)
TICK_TASK = "deep_research.watch_tick"
VERSION_TASK = "deep_research.watch_version"
DEFAULT_TICK = "* * * * *"  # once a minute (a sixth field counts seconds)


def register(app: App, tick_cron: str = DEFAULT_TICK) -> Any:
    """Add the tick and the version job to the queue's app (on `WATCH_QUEUE`); returns the
    version task."""

    @app.task(name=VERSION_TASK, queue=WATCH_QUEUE, pass_context=True)
    async def version(context: JobContext, thread_id: str, **_earlier: Any) -> None:
        """Make one claimed version (or finish one a dead worker left), named by its run: what
        it was claimed with (its watch, the version before, its caps) is read from the store.
        Arguments a job row of an earlier version carries are not read."""
        service, say = (context.additional_context[k] for k in ("service", "say"))
        claim = await service.store.watches.claimed(thread_id)
        if claim is None:
            say(f"{thread_id}: its watch was stopped; not made")
            return
        await make_version(service, claim, say)

    @app.periodic(cron=tick_cron, periodic_id="watch-tick")
    @app.task(name=TICK_TASK, queue=WATCH_QUEUE, pass_context=True)
    async def tick(context: JobContext, timestamp: int) -> None:
        """Queue every version due now."""
        service, say = (context.additional_context[k] for k in ("service", "say"))
        watches: WatchStore = service.store.watches
        for claim in await watches.claim_due():
            deferrer = version.configure(lock=claim.thread_id, queueing_lock=claim.thread_id)
            try:
                await deferrer.defer_async(thread_id=claim.thread_id)
            except AlreadyEnqueued:  # it waits for a worker already
                continue
            say(f"{claim.thread_id}: queued")

    return version
