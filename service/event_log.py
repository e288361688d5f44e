"""What happened to each run, in order, beside its checkpoints: the one stream every door reads.

A run's progress events (plan made, worker searched, round scored, ...) and what was done to it
(started, stopped, resumed, plan decided, failed) are rows of one table in the same store as the
checkpoints: SQLite file or PostgreSQL database. Each row has a number that only grows within
its run, the id a reader resumes from (a browser's `Last-Event-ID`), so a page that reconnects,
a process that restarts, or a door that polls a queued run, loses and repeats nothing.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError

from deep_research.tools.events import ProgressEvent, parse_event
from deep_research.tools.store_tables import StoreTables

TABLE = "run_events"
OLD_TABLE = "web_events"  # the web app's log before every door had one: copied over once
SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} ("
    " thread_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL,"
    " data TEXT NOT NULL, at DOUBLE PRECISION NOT NULL, PRIMARY KEY (thread_id, seq))"
)
Kind = Literal["started", "event", "stopped", "resumed", "decided", "failed"]
CONTROL_KINDS = ("started", "stopped", "resumed", "decided", "failed")


@dataclass(frozen=True)
class Record:
    """One row: its number within the run, its kind, its JSON data, when (Unix seconds)."""

    seq: int
    kind: str
    data: dict[str, Any]
    at: float

    @property
    def progress(self) -> ProgressEvent | None:
        """The progress event a row of kind "event" holds (None for another kind, an unknown
        event, or one written by another version of the engine)."""
        if self.kind != "event":
            return None
        try:
            return parse_event(self.data)
        except ValidationError:
            return None


def _records(rows: list[tuple]) -> list[Record]:
    return [Record(int(s), k, json.loads(d), float(a)) for s, k, d, a in rows]


class EventLog:
    """Append and read a run's records; appends of one run are numbered one after another."""

    def __init__(self, tables: StoreTables) -> None:
        """On the service's tables connection."""
        self.tables = tables

    async def set_up(self) -> EventLog:
        """Create the table if needed (with the web app's older log copied into it)."""

        async def make() -> None:
            await self.tables.run(SCHEMA)
            if await self.tables.exists(OLD_TABLE):
                await self.tables.run(
                    f"INSERT INTO {TABLE} SELECT thread_id, seq, kind, data, at FROM {OLD_TABLE}"
                    " ON CONFLICT DO NOTHING"
                )

        await self.tables.set_up(TABLE, make)
        return self

    async def append(self, thread_id: str, kind: Kind, data: dict[str, Any]) -> int:
        """Add a record after the run's latest; returns its number."""
        rows = await self.tables.run(
            f"INSERT INTO {TABLE} (thread_id, seq, kind, data, at) SELECT ?,"
            f" COALESCE(MAX(seq), 0) + 1, ?, ?, ? FROM {TABLE} WHERE thread_id = ?"
            " RETURNING seq",
            (thread_id, kind, json.dumps(data, ensure_ascii=False), time.time(), thread_id),
        )
        return int(rows[0][0])

    async def since(self, thread_id: str, after: int = 0) -> list[Record]:
        """The run's records numbered above `after`, oldest first."""
        rows = await self.tables.run(
            f"SELECT seq, kind, data, at FROM {TABLE} WHERE thread_id = ? AND seq > ? ORDER BY seq",
            (thread_id, after),
        )
        return _records(rows)

    async def tail(self, thread_id: str, count: int, kind: Kind = "event") -> list[Record]:
        """The run's latest `count` records of a kind, oldest first."""
        rows = await self.tables.run(
            f"SELECT seq, kind, data, at FROM {TABLE} WHERE thread_id = ? AND kind = ?"
            " ORDER BY seq DESC LIMIT ?",
            (thread_id, kind, count),
        )
        return _records(rows)[::-1]

    async def last_control(self, thread_id: str) -> Record | None:
        """The latest thing done to the run (started, stopped, resumed, decided, failed)."""
        marks = ", ".join("?" for _ in CONTROL_KINDS)
        rows = await self.tables.run(
            f"SELECT seq, kind, data, at FROM {TABLE} WHERE thread_id = ? AND kind IN ({marks})"
            " ORDER BY seq DESC LIMIT 1",
            (thread_id, *CONTROL_KINDS),
        )
        return next(iter(_records(rows)), None)

    async def first(self, thread_id: str, kind: Kind) -> Record | None:
        """The run's first record of a kind (its "started" record: who, what), or None."""
        rows = await self.tables.run(
            f"SELECT seq, kind, data, at FROM {TABLE} WHERE thread_id = ? AND kind = ?"
            " ORDER BY seq LIMIT 1",
            (thread_id, kind),
        )
        return next(iter(_records(rows)), None)

    async def forget(self, thread_id: str) -> None:
        """Delete every record of a run."""
        await self.tables.run(f"DELETE FROM {TABLE} WHERE thread_id = ?", (thread_id,))
