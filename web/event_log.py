"""What happened to each web-watched run, in order, kept beside its checkpoints for replay.

A run's progress events (plan made, worker searched, round scored, ...) and what people did to it
(started, stopped, resumed, plan decided) are rows of one table in the same store as the
checkpoints: SQLite file or PostgreSQL database. Each row has a number that only grows within
its thread, the id a browser's event stream resumes from (`Last-Event-ID`), so a page that
reconnects, or a server that restarts, loses and repeats nothing.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from deep_research.tools.checkpoints import is_postgres, store_target

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS web_events ("
    " thread_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL,"
    " data TEXT NOT NULL, at DOUBLE PRECISION NOT NULL, PRIMARY KEY (thread_id, seq))"
)


@dataclass(frozen=True)
class Record:
    """One row: its number within the thread, its kind, its JSON data, when (Unix seconds)."""

    seq: int
    kind: str
    data: dict[str, Any]
    at: float


class EventLog:
    """Append and read a thread's records over a connection of its own (never the saver's, so
    that a write never waits inside the saver's transaction); writes run one at a time."""

    def __init__(self, target: str) -> None:
        """For the store `target` names; `open` connects."""
        self.target = store_target(target)
        self.postgres = is_postgres(self.target)
        self.lock = asyncio.Lock()
        self.conn: Any = None

    async def open(self) -> EventLog:
        """Connect, and create the table if needed."""
        if self.postgres:
            import psycopg

            self.conn = await psycopg.AsyncConnection.connect(self.target, autocommit=True)
        else:
            import aiosqlite

            self.conn = await aiosqlite.connect(self.target, timeout=30)
        await self._run(SCHEMA)
        return self

    async def _run(self, sql: str, params: tuple = ()) -> list[tuple]:
        """One statement, committed; its rows (placeholders written `?`)."""
        if self.postgres:
            sql = sql.replace("?", "%s")
        async with self.lock:
            cursor = await self.conn.execute(sql, params)
            rows = list(await cursor.fetchall()) if cursor.description else []
            if not self.postgres:
                await self.conn.commit()
        return rows

    async def close(self) -> None:
        """Close the connection."""
        if self.conn is not None:
            await self.conn.close()

    async def append(self, thread_id: str, kind: str, data: dict[str, Any]) -> int:
        """Add a record after the thread's latest; returns its number."""
        rows = await self._run(
            "INSERT INTO web_events (thread_id, seq, kind, data, at) SELECT ?,"
            " COALESCE(MAX(seq), 0) + 1, ?, ?, ? FROM web_events WHERE thread_id = ?"
            " RETURNING seq",
            (thread_id, kind, json.dumps(data, ensure_ascii=False), time.time(), thread_id),
        )
        return int(rows[0][0])

    async def since(self, thread_id: str, after: int = 0) -> list[Record]:
        """The thread's records numbered above `after`, oldest first."""
        rows = await self._run(
            "SELECT seq, kind, data, at FROM web_events WHERE thread_id = ? AND seq > ?"
            " ORDER BY seq",
            (thread_id, after),
        )
        return [Record(int(s), k, json.loads(d), float(a)) for s, k, d, a in rows]

    async def first(self, thread_id: str, kind: str) -> Record | None:
        """The thread's first record of a kind (its "started" record: who, what), or None."""
        rows = await self._run(
            "SELECT seq, kind, data, at FROM web_events WHERE thread_id = ? AND kind = ?"
            " ORDER BY seq LIMIT 1",
            (thread_id, kind),
        )
        if not rows:
            return None
        seq, kind, data, at = rows[0]
        return Record(int(seq), kind, json.loads(data), float(at))

    async def threads(self) -> list[str]:
        """Every thread with records."""
        return [r[0] for r in await self._run("SELECT DISTINCT thread_id FROM web_events")]

    async def forget(self, thread_id: str) -> None:
        """Delete every record of a thread."""
        await self._run("DELETE FROM web_events WHERE thread_id = ?", (thread_id,))
