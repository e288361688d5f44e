"""`deep-research export THREAD`: a finished run's report, read from the checkpoint store.

Nothing is researched again: the store holds the report, its sources and the citation checks,
so no model or search call is made (the graph is built only to read the thread's state).
"""

from __future__ import annotations

from typing import Any

from deep_research.cli.runner import UnknownThread
from deep_research.export.facts import RunFacts, facts_of
from deep_research.graph import build_graph
from deep_research.graph.threads import run_ended, thread_config
from deep_research.state import output_of
from deep_research.tools.checkpoints import open_checkpointer


class UnfinishedRun(ValueError):
    """The thread exists but its run has not reached its end."""


async def finished_run(target: str, thread_id: str) -> tuple[dict[str, Any], RunFacts]:
    """The output of a finished thread and the facts of its run (its date: the last step's)."""
    async with open_checkpointer(target, create=False) as saver:
        graph = build_graph(checkpointer=saver)
        snapshot = await graph.aget_state(thread_config(thread_id))
    if not snapshot.values:
        raise UnknownThread(f"no run with thread id {thread_id!r} in {target}")
    if not run_ended(snapshot):
        raise UnfinishedRun(
            f"the run {thread_id!r} has not finished: continue it with "
            f"`deep-research resume {thread_id}`, then export it"
        )
    output = output_of(snapshot.values)
    finished = _when(snapshot.created_at)
    return output, facts_of({**snapshot.values, **output}, finished, thread_id)


def _when(created_at: str | None):
    """A checkpoint's ISO timestamp as a datetime (None when the store gave none)."""
    from datetime import datetime

    return datetime.fromisoformat(created_at) if created_at else None
