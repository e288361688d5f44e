"""Tables of our own beside LangGraph's, in the same store as the checkpoints.

An SQLite file or a PostgreSQL database, reached over a connection of its own (never the
saver's, so that our writes never wait inside its transactions): one aiosqlite connection, or
a small psycopg pool that checks a connection before lending it (a PostgreSQL restart does not
break a long-lived worker). Statements are written with `?` placeholders for both. A
`transaction` runs several statements as one; on PostgreSQL it may first take an advisory lock,
which SQLite's one writer at a time gives for free.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from deep_research.tools.checkpoints import SQLITE_BUSY_SECONDS, is_postgres, store_target
from deep_research.tools.pg_setup import set_up_once

Rows = list[tuple]


class Statements:
    """Run statements on one open connection (inside a transaction or not)."""

    def __init__(self, connection: Any, postgres: bool) -> None:
        self._connection, self._postgres = connection, postgres

    async def run(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        """One statement; its rows (none for a statement that returns none)."""
        if self._postgres:
            sql = sql.replace("?", "%s")
        cursor = await self._connection.execute(sql, tuple(params))
        rows = list(await cursor.fetchall()) if cursor.description else []
        if not self._postgres:
            await cursor.close()
        return rows


class StoreTables:
    """A connection to the checkpoint store for our own tables; `open` connects, `close` ends."""

    def __init__(self, target: str, tables: Sequence[str] = (), schema: Sequence[str] = ()) -> None:
        """For the store `target` names: the `tables` that `schema` (CREATE ... IF NOT EXISTS
        statements) makes on `open` (none: the caller makes its own with `set_up`)."""
        self.target = store_target(target)
        self.postgres = is_postgres(self.target)
        self._tables, self._schema = list(tables), list(schema)
        self._lock = asyncio.Lock()  # one statement (and on SQLite one transaction) at a time
        self._conn: Any = None

    async def open(self) -> StoreTables:
        """Connect, and create the tables if needed."""
        if self.postgres:
            from psycopg_pool import AsyncConnectionPool

            self._conn = AsyncConnectionPool(
                self.target,
                min_size=1,
                max_size=2,
                open=False,
                check=AsyncConnectionPool.check_connection,
                kwargs={"autocommit": True, "prepare_threshold": 0},
            )
            await self._conn.open(wait=True)
            if self._tables:
                await set_up_once(self.target, self._set_up, self._create)
            return self
        import aiosqlite

        Path(self.target).expanduser().parent.mkdir(parents=True, exist_ok=True)
        self._conn = await aiosqlite.connect(
            str(Path(self.target).expanduser()),
            timeout=SQLITE_BUSY_SECONDS,
            isolation_level=None,  # we say where a transaction begins and ends
        )
        if self._schema:  # none: its tables are made by `set_up`, as their owner needs them
            await self._create()
        return self

    async def _create(self) -> None:
        """Every table and index of the schema (each statement says IF NOT EXISTS)."""
        async with self.transaction() as statements:
            for statement in self._schema:
                await statements.run(statement)

    async def _set_up(self) -> bool:
        """True when the PostgreSQL store holds every table the schema names (processes that
        start at once on an empty store create them one at a time: `pg_setup.set_up_once`)."""
        rows = await self.run(
            "SELECT count(*) FROM unnest(?::text[]) AS t(name) WHERE to_regclass(t.name) IS NULL",
            (self._tables,),
        )
        return rows[0][0] == 0

    async def close(self) -> None:
        """Close the connection (or the pool)."""
        if self._conn is not None:
            await self._conn.close()
            self._conn = None

    async def __aenter__(self) -> StoreTables:
        return await self.open()

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def run(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        """One statement on its own, committed; its rows. Statements run one at a time, on
        both stores (a statement that numbers a row from the rows before it, as the event
        log's append does, must see the one before it). On SQLite it runs without `BEGIN
        IMMEDIATE` (a lone statement is its own transaction), so a read never waits for the
        writer's lock."""
        if self._conn is None:
            raise RuntimeError("the store's tables are not open")
        async with self._lock:
            if self.postgres:
                async with self._conn.connection() as connection:
                    return await Statements(connection, postgres=True).run(sql, params)
            return await Statements(self._conn, postgres=False).run(sql, params)

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

    @asynccontextmanager
    async def transaction(self, lock: int | None = None) -> AsyncIterator[Statements]:
        """Statements run as one transaction; `lock` names a PostgreSQL advisory lock held
        until it ends (SQLite's writer lock is taken at once: `BEGIN IMMEDIATE`)."""
        if self._conn is None:
            raise RuntimeError("the store's tables are not open")
        if self.postgres:
            async with self._conn.connection() as connection, connection.transaction():
                statements = Statements(connection, postgres=True)
                if lock is not None:
                    await statements.run("SELECT pg_advisory_xact_lock(?)", (lock,))
                yield statements
            return
        async with self._lock:
            await self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield Statements(self._conn, postgres=False)
            except BaseException:
                await self._conn.execute("ROLLBACK")
                raise
            await self._conn.execute("COMMIT")
