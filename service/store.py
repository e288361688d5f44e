"""The one place a process opens the run store: checkpointer, graph, live runs, event log, index,
and what is kept beside the runs (the evidence they rest on, the watched questions).

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
from deep_research.tools.checkpoints import open_checkpointer
from deep_research.tools.evidence.store import EvidenceStore
from deep_research.tools.run_resources import LiveRuns
from deep_research.tools.store_tables import StoreTables
from deep_research.tools.watches import WatchStore


@dataclass
class Store:
    """An open run store."""

    target: str
    saver: Any
    graph: Pregel
    runs: LiveRuns  # the in-memory side of the runs this process drives
    events: EventLog
    index: RunIndex
    evidence: EvidenceStore  # the pages (documents, tool answers) the runs' citations rest on
    watches: WatchStore  # watched questions and their versions


@asynccontextmanager
async def open_store(
    target: str, *, create: bool = True, pooled: bool = False, runs: LiveRuns | None = None
) -> AsyncIterator[Store]:
    """The store `target` names, open; `create=False` raises `StoreMissing` rather than make
    a checkpoint store that is not there (read-only commands); `pooled` for long-lived
    processes (`tools.checkpoints.open_checkpointer`)."""
    async with (
        open_checkpointer(target, create=create, pooled=pooled) as saver,
        EvidenceStore(target) as evidence,
        WatchStore(target) as watches,
    ):
        runs = LiveRuns() if runs is None else runs
        runs.evidence = evidence  # each run's reads are kept through it
        graph = build_graph(checkpointer=saver, runs=runs)
        tables = await StoreTables(target).open()  # the run index's and event log's
        try:
            events = await EventLog(tables).set_up()
            index = await RunIndex(tables).set_up(graph, saver)
            yield Store(target, saver, graph, runs, events, index, evidence, watches)
        finally:
            await tables.close()
