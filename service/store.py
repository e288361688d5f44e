"""The one place a process opens the run store: checkpointer, graph, live runs, event log, index.

Every door and command reads and drives runs through what `open_store` hands back; the saver
itself comes from `tools.checkpoints.open_checkpointer` (SQLite file or PostgreSQL), so a change
of saver lands in one place.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from langgraph.pregel import Pregel

from deep_research.graph import build_graph
from deep_research.service.event_log import EventLog
from deep_research.service.index import RunIndex
from deep_research.service.tables import Tables
from deep_research.tools.checkpoints import open_checkpointer
from deep_research.tools.run_resources import LiveRuns


@dataclass
class Store:
    """An open run store."""

    target: str
    saver: Any
    graph: Pregel
    runs: LiveRuns  # the in-memory side of the runs this process drives
    events: EventLog
    index: RunIndex


@asynccontextmanager
async def open_store(
    target: str, *, create: bool = True, pooled: bool = False, runs: LiveRuns | None = None
) -> AsyncIterator[Store]:
    """The store `target` names, open; `create=False` raises `StoreMissing` rather than make
    a checkpoint store that is not there (read-only commands); `pooled` for long-lived
    processes (`tools.checkpoints.open_checkpointer`)."""
    async with open_checkpointer(target, create=create, pooled=pooled) as saver:
        runs = LiveRuns() if runs is None else runs
        graph = build_graph(checkpointer=saver, runs=runs)
        tables = await Tables(target, pooled=pooled).open()
        try:
            events = await EventLog(tables).set_up()
            index = await RunIndex(tables).set_up(graph, saver)
            yield Store(target, saver, graph, runs, events, index)
        finally:
            await tables.close()
