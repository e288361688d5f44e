"""The index of runs: one small row per run beside the checkpoints, which listing reads.

A row says who started the run and through which door (its owner), what it asked, when, and
where it stands as far as the service last saw: `accepted` (in the store, to run or running),
`waiting` (for a person), `ended`, `stopped`, `failed`; with the figures a list shows (rounds,
score, cost, stop reason). The checkpoint stays the truth: reading one run re-derives its
standing there (`graph.threads.standing`) and mends its row when they differ. A store whose
runs predate the index gets one row per thread the first time the index is made.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, fields
from typing import Any, Literal

from langgraph.pregel import Pregel
from langgraph.types import StateSnapshot

from deep_research.graph.threads import standing, thread_config
from deep_research.tools.store_tables import StoreTables

TABLE = "run_index"
State = Literal["accepted", "waiting", "ended", "stopped", "failed"]
SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} ("
    " run_id TEXT PRIMARY KEY, door TEXT NOT NULL, owner TEXT NOT NULL, via TEXT NOT NULL,"
    " parent TEXT NOT NULL, question TEXT NOT NULL, created DOUBLE PRECISION NOT NULL,"
    " updated DOUBLE PRECISION NOT NULL, state TEXT NOT NULL, stop_reason TEXT NOT NULL,"
    " rounds INTEGER NOT NULL, score DOUBLE PRECISION, cost_usd DOUBLE PRECISION,"
    " error TEXT NOT NULL)"
)
BY_OWNER = f"CREATE INDEX IF NOT EXISTS {TABLE}_by_owner ON {TABLE} (door, owner, created)"
BY_TIME = f"CREATE INDEX IF NOT EXISTS {TABLE}_by_time ON {TABLE} (created)"
QUESTION_CHARS = 300  # what a list shows of a question
PREFIX_DOORS = {"mcp-": "mcp", "mcpq-": "mcp", "web-": "web"}  # threads from before the index


@dataclass(frozen=True)
class RunRow:
    """One run as the index knows it."""

    run_id: str
    door: str  # cli, mcp or web
    owner: str  # the door's user who started it ("": the door's only user)
    via: str  # "process" (the process that started it runs it) or "queue"
    parent: str  # the run a follow-up follows ("" for none)
    question: str
    created: float
    updated: float
    state: State
    stop_reason: str = ""
    rounds: int = 0
    score: float | None = None
    cost_usd: float | None = None
    error: str = ""


COLUMNS = [f.name for f in fields(RunRow)]


def figures(values: dict[str, Any]) -> dict[str, Any]:
    """The figures a list shows, from a run's state values."""
    quality = values.get("quality")
    return {
        "stop_reason": values.get("stop_reason") or "",
        "rounds": values.get("iteration") or 0,
        "score": None if quality is None else float(quality.score),
        "cost_usd": values.get("cost_usd"),
    }


def state_of(snapshot: StateSnapshot) -> State:
    """The index state the one rule gives a checkpoint (`graph.threads.standing`)."""
    return {"ended": "ended", "waiting": "waiting"}.get(standing(snapshot), "accepted")


class RunIndex:
    """Add, change, read and list rows."""

    def __init__(self, tables: StoreTables) -> None:
        """On the service's tables connection."""
        self.tables = tables

    async def set_up(self, graph: Pregel, saver: Any) -> RunIndex:
        """Create the table if needed, with a row for every thread the store already holds."""

        async def make() -> None:
            await self.tables.run(SCHEMA)
            await self.tables.run(BY_OWNER)
            await self.tables.run(BY_TIME)
            await self._fill(graph, saver)

        await self.tables.set_up(TABLE, make)
        return self

    async def _fill(self, graph: Pregel, saver: Any) -> None:
        """One row per thread in the store (runs from before the index; once)."""
        seen: dict[str, float] = {}  # thread -> its oldest checkpoint's time
        async for item in saver.alist(None):
            thread_id = item.config["configurable"]["thread_id"]
            when = _timestamp(item.checkpoint.get("ts"))
            seen[thread_id] = min(when, seen.get(thread_id, when))
        for thread_id, created in seen.items():
            snapshot = await graph.aget_state(thread_config(thread_id))
            door = next((d for p, d in PREFIX_DOORS.items() if thread_id.startswith(p)), "cli")
            owner = await self._web_owner(thread_id) if door == "web" else ""
            row = RunRow(
                thread_id,
                door,
                owner,
                "queue" if thread_id.startswith("mcpq-") else "process",
                "",
                str((snapshot.values or {}).get("question") or "")[:QUESTION_CHARS],
                created,
                _timestamp(snapshot.created_at) or created,
                state_of(snapshot),
                **figures(snapshot.values or {}),
            )
            await self.add(row, replace=False)

    async def _web_owner(self, thread_id: str) -> str:
        """The web user who started a thread, from the web app's older log (if any)."""
        for table in ("run_events", "web_events"):
            if await self.tables.exists(table):
                rows = await self.tables.run(
                    f"SELECT data FROM {table} WHERE thread_id = ? AND kind = 'started'"
                    " ORDER BY seq LIMIT 1",
                    (thread_id,),
                )
                if rows:
                    return str(json.loads(rows[0][0]).get("owner") or "")
        return ""

    async def add(self, row: RunRow, *, replace: bool = True) -> None:
        """Write a row (a thread id that has one: replaced, or with `replace=False` kept)."""
        values = tuple(getattr(row, name) for name in COLUMNS)
        names, marks = ", ".join(COLUMNS), ", ".join("?" for _ in COLUMNS)
        keep = ", ".join(f"{n} = excluded.{n}" for n in COLUMNS if n != "run_id")
        then = f"DO UPDATE SET {keep}" if replace else "DO NOTHING"
        await self.tables.run(
            f"INSERT INTO {TABLE} ({names}) VALUES ({marks}) ON CONFLICT (run_id) {then}", values
        )

    async def change(self, run_id: str, **changes: Any) -> None:
        """Change some columns of a run's row (and its `updated` time)."""
        changes = {**changes, "updated": time.time()}
        sets = ", ".join(f"{name} = ?" for name in changes)
        await self.tables.run(
            f"UPDATE {TABLE} SET {sets} WHERE run_id = ?", (*changes.values(), run_id)
        )

    async def get(self, run_id: str) -> RunRow | None:
        """A run's row, or None."""
        rows = await self.tables.run(
            f"SELECT {', '.join(COLUMNS)} FROM {TABLE} WHERE run_id = ?", (run_id,)
        )
        return RunRow(*rows[0]) if rows else None

    async def visible(self, door: str, owner: str, other_doors: bool, limit: int) -> list[RunRow]:
        """The newest rows a caller of `door` and `owner` may see (`service.caller.Visibility`:
        its own; with `other_doors`, other doors' too unless another user's), at most `limit`
        (0: all)."""
        mine = "(door = ? AND owner = ?)"
        params: list[Any] = [door, owner]
        if other_doors:
            mine += " OR (door <> ? AND (owner = '' OR owner = ? OR ? = ''))"
            params += [door, owner, owner]
        sql = f"SELECT {', '.join(COLUMNS)} FROM {TABLE} WHERE {mine} ORDER BY created DESC, run_id"
        if limit:
            sql += " LIMIT ?"
            params.append(limit)
        return [RunRow(*row) for row in await self.tables.run(sql, tuple(params))]

    async def resumed_by(self, door: str) -> list[RunRow]:
        """The rows of a door's runs that were being run by their process (`via` process,
        state accepted), oldest first: a server of that door resumes them when it starts."""
        rows = await self.tables.run(
            f"SELECT {', '.join(COLUMNS)} FROM {TABLE} WHERE door = ? AND via = 'process'"
            " AND state = 'accepted' ORDER BY created",
            (door,),
        )
        return [RunRow(*row) for row in rows]

    async def forget(self, run_id: str) -> None:
        """Delete a run's row."""
        await self.tables.run(f"DELETE FROM {TABLE} WHERE run_id = ?", (run_id,))


def _timestamp(iso: str | None) -> float:
    """An ISO time as Unix seconds (0 when there is none)."""
    if not iso:
        return 0.0
    from datetime import datetime

    return datetime.fromisoformat(iso).timestamp()
