"""The service's own small tables beside the checkpoints (run index, event log), in the same store.

One connection of their own, never the saver's (a write never waits inside the saver's
transaction); statements run one at a time and commit. The same SQL on SQLite and PostgreSQL,
placeholders written `?`. Tables are made once per store (on PostgreSQL under the store's setup
lock, so that processes started at once do not race: `tools.pg_setup`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from deep_research.tools.checkpoints import SQLITE_BUSY_SECONDS, is_postgres, store_target
from deep_research.tools.pg_setup import set_up_once


class Tables:
    """A connection to the store for the service's tables (on PostgreSQL, `pooled` for
    processes that live long: a pool that checks a connection before lending it, so a dropped
    connection, a restart or a failover, costs the statement in flight at most)."""

    def __init__(self, target: str, pooled: bool = False) -> None:
        """For the store `target` names; `open` connects."""
        self.target = store_target(target)
        self.postgres = is_postgres(self.target)
        self.pooled = pooled and self.postgres
        self.lock = asyncio.Lock()
        self.conn: Any = None

    async def open(self) -> Tables:
        """Connect."""
        if self.pooled:
            from psycopg_pool import AsyncConnectionPool

            self.conn = AsyncConnectionPool(
                self.target,
                min_size=1,
                max_size=1,
                open=False,
                check=AsyncConnectionPool.check_connection,
                kwargs={"autocommit": True},
            )
            await self.conn.open(wait=True)
        elif self.postgres:
            import psycopg

            self.conn = await psycopg.AsyncConnection.connect(self.target, autocommit=True)
        else:
            import aiosqlite

            self.conn = await aiosqlite.connect(self.target, timeout=SQLITE_BUSY_SECONDS)
        return self

    async def close(self) -> None:
        """Close the connection (or the pool)."""
        if self.conn is not None:
            await self.conn.close()
            self.conn = None

    async def run(self, sql: str, params: tuple = ()) -> list[tuple]:
        """One statement, committed; its rows."""
        if self.postgres:
            sql = sql.replace("?", "%s")
        async with self.lock:
            if self.pooled:
                async with self.conn.connection() as conn:
                    cursor = await conn.execute(sql, params)
                    return list(await cursor.fetchall()) if cursor.description else []
            cursor = await self.conn.execute(sql, params)
            rows = list(await cursor.fetchall()) if cursor.description else []
            if not self.postgres:
                await self.conn.commit()
        return rows

    async def exists(self, table: str) -> bool:
        """Whether the store holds the table."""
        if self.postgres:
            rows = await self.run("SELECT to_regclass(?) IS NOT NULL", (table,))
        else:
            rows = await self.run(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
            )
        return bool(rows and rows[0][0])

    async def set_up(self, table: str, make: Callable[[], Awaitable[None]]) -> None:
        """Make `table` (with `make`, which may fill it) unless the store holds it already;
        one process at a time on PostgreSQL (on SQLite, `make` must bear a second maker: its
        statements say IF NOT EXISTS and ON CONFLICT DO NOTHING)."""
        if self.postgres:
            await set_up_once(self.target, lambda: self.exists(table), make)
        elif not await self.exists(table):
            await make()
