"""Watched questions on the job queue: a periodic tick on the workers queues what is due.

procrastinate defers the tick once per cron time, whichever workers run (its periodic tasks:
the database keeps two workers from deferring the same tick). The tick claims every due version
(`WatchStore.claim_due`: a new one, or one whose holder stopped renewing its lease) and queues
it as a job that holds its thread (`lock=` and `queueing_lock=` the version's thread), so a
version is made by one worker at a time and queued once. A worker that dies mid-version has its
job taken up again by another (`RunQueue.requeue_stalled`), which resumes the version from its
checkpoint; a version already finished is read back, never made twice.
"""

from __future__ import annotations

from typing import Any

from procrastinate import App, JobContext
from procrastinate.exceptions import AlreadyEnqueued

from deep_research.graph.watch import Watching, make_version
from deep_research.tools.watches import Claim, WatchStore

WATCH_QUEUE = "deep-research-watch"  # apart from the research runs' queue (its counts and caps)
TICK_TASK = "deep_research.watch_tick"
VERSION_TASK = "deep_research.watch_version"
DEFAULT_TICK = "* * * * *"  # once a minute (a sixth field counts seconds)


def claim_arguments(claim: Claim) -> dict[str, Any]:
    """A claimed version as a job's JSON arguments."""
    return {
        "watch_id": claim.watch.watch_id,
        "version": claim.version,
        "thread_id": claim.thread_id,
        "previous": claim.previous,
        "max_tokens": claim.max_tokens,
        "max_cost_usd": claim.max_cost_usd,
    }


def register(app: App, tick_cron: str = DEFAULT_TICK) -> Any:
    """Add the tick and the version job to the queue's app (on `WATCH_QUEUE`); returns the
    version task."""

    @app.task(name=VERSION_TASK, queue=WATCH_QUEUE, pass_context=True)
    async def version(context: JobContext, watch_id: str, version: int, **claimed: Any) -> None:
        """Make one claimed version (or finish one a dead worker left)."""
        parts = context.additional_context
        watches: WatchStore = parts["watches"]
        watch = await watches.get(watch_id)
        if watch is None:
            parts["say"](f"{claimed['thread_id']}: its watch was stopped; not made")
            return
        claim = Claim(
            watch,
            version,
            claimed["thread_id"],
            claimed["previous"],
            claimed["max_tokens"],
            claimed["max_cost_usd"],
        )
        watching = Watching(parts["graph"], parts["runs"], parts["evidence"], watches)
        await make_version(watching, claim, parts["say"])

    @app.periodic(cron=tick_cron, periodic_id="watch-tick")
    @app.task(name=TICK_TASK, queue=WATCH_QUEUE, pass_context=True)
    async def tick(context: JobContext, timestamp: int) -> None:
        """Queue every version due now."""
        watches: WatchStore = context.additional_context["watches"]
        for claim in await watches.claim_due():
            deferrer = version.configure(lock=claim.thread_id, queueing_lock=claim.thread_id)
            try:
                await deferrer.defer_async(**claim_arguments(claim))
            except AlreadyEnqueued:  # it waits for a worker already
                continue
            context.additional_context["say"](f"{claim.thread_id}: queued")

    return version
