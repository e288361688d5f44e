"""`deep-research export THREAD`: a finished run's report, read from the store.

Nothing is researched again: the store holds the report, its sources and the citation checks,
so no model or search call is made.
"""

from __future__ import annotations

from typing import Any

from deep_research.cli.runner import CALLER, reading
from deep_research.export.facts import RunFacts, facts_of
from deep_research.state import output_of


class UnfinishedRun(ValueError):
    """The thread exists but its run has not reached its end."""


async def finished_run(
    target: str, thread_id: str, all_doors: bool = False
) -> tuple[dict[str, Any], RunFacts]:
    """The output of a finished run and the facts of its run (its date: the last step's)."""
    async with reading(target, all_doors) as service:
        info = await service.read(CALLER, thread_id)
    if info.status != "done":
        raise UnfinishedRun(
            f"the run {thread_id!r} has not finished: continue it with "
            f"`deep-research resume {thread_id}`, then export it"
        )
    output = output_of(info.values)
    finished = _when(info.snapshot.created_at)
    return output, facts_of({**info.values, **output}, finished, thread_id)


def _when(created_at: str | None):
    """A checkpoint's ISO timestamp as a datetime (None when the store gave none)."""
    from datetime import datetime

    return datetime.fromisoformat(created_at) if created_at else None
