"""Table setup on a PostgreSQL store that many processes may open at the same moment.

Workers started together on an empty database all run the checkpointer's migrations at once:
they race on `checkpoint_migrations` (a duplicate key, and a worker exits). Holding an advisory
lock while one process migrates is the fix, but *waiting* for it inside a statement
(`pg_advisory_lock`) holds a snapshot, and the holder's `CREATE INDEX CONCURRENTLY` waits for
every older snapshot to go: the two wait for each other forever. So waiters poll
`pg_try_advisory_lock` on an idle autocommit connection, which holds no snapshot between tries.
A store that is already set up is seen as such without the lock.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

SETUP_LOCK = 0x6465657072  # one number for "deep-research setup", across every process
FIRST_WAIT = 0.02  # seconds between tries for the lock, doubling up to LONGEST_WAIT
LONGEST_WAIT = 0.5


@asynccontextmanager
async def setup_lock(conninfo: str) -> AsyncIterator[None]:
    """Hold the store's setup lock (session-level, on a connection of its own)."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as connection:
        wait = FIRST_WAIT
        while True:
            row = await (
                await connection.execute("SELECT pg_try_advisory_lock(%s)", (SETUP_LOCK,))
            ).fetchone()
            if row and row[0]:
                break
            await asyncio.sleep(wait * random.uniform(0.5, 1.5))
            wait = min(LONGEST_WAIT, wait * 2)
        try:
            yield
        finally:
            await connection.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))


async def set_up_once(
    conninfo: str, done: Callable[[], Awaitable[bool]], setup: Callable[[], Awaitable[None]]
) -> None:
    """Run `setup` unless `done()` says the store is set up; one process at a time, and each
    checks again once it holds the lock (another may have finished it meanwhile)."""
    if await done():
        return
    async with setup_lock(conninfo):
        if not await done():
            await setup()


@asynccontextmanager
async def saver_cursor(saver) -> AsyncIterator:
    """A cursor on the PostgreSQL checkpointer's connection, or on one from its pool."""
    from psycopg_pool import AsyncConnectionPool

    if isinstance(saver.conn, AsyncConnectionPool):  # `open_checkpointer(pooled=True)`
        async with saver.conn.connection() as connection, connection.cursor() as cursor:
            yield cursor
    else:
        async with saver.conn.cursor() as cursor:
            yield cursor


async def checkpointer_ready(saver) -> bool:
    """True when the PostgreSQL checkpointer's migrations have all run."""
    async with saver_cursor(saver) as cursor:
        await cursor.execute("SELECT to_regclass('checkpoint_migrations') IS NOT NULL AS present")
        row = await cursor.fetchone()
        if not (row and row["present"]):
            return False
        await cursor.execute("SELECT max(v) AS v FROM checkpoint_migrations")
        row = await cursor.fetchone()
    return row is not None and row["v"] == len(saver.MIGRATIONS) - 1
