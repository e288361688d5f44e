"""A new SQLite store opened by two processes at once: the one SQLite refuses at once ("database
is locked", no busy wait) sets the store up again shortly (`tools.checkpoints.set_up_sqlite`).
Seen once in the suite: two `deep-research mcp` started side by side on one new store, one
exited "is not a readable checkpoint store (database is locked)"."""

from __future__ import annotations

import asyncio
import sqlite3
import time

import aiosqlite
import pytest

from deep_research.tools.checkpoints import serializer, set_up_sqlite
from deep_research.tools.settling_sqlite import SettlingSqliteSaver


async def _set_up(path: str, patience: float) -> float:
    """Set the store up on a connection that never waits for a lock; seconds it took."""
    async with aiosqlite.connect(path, timeout=0) as connection:
        began = time.monotonic()
        await set_up_sqlite(SettlingSqliteSaver(connection, serde=serializer()), patience)
        return time.monotonic() - began


def test_a_store_locked_by_another_is_set_up_once_it_is_free(tmp_path):
    path = str(tmp_path / "runs.sqlite")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process in the middle of its own set-up

    async def scenario() -> float:
        setting_up = asyncio.create_task(_set_up(path, patience=10))
        await asyncio.sleep(0.3)
        holder.execute("COMMIT")
        return await setting_up

    took = asyncio.run(scenario())
    assert took >= 0.3  # it waited for the other one, then went on
    tables = {row[0] for row in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    assert {"checkpoints", "writes"} <= tables


def test_a_lock_held_past_the_patience_and_a_file_that_is_no_store_still_fail(tmp_path):
    locked = str(tmp_path / "locked.sqlite")
    holder = sqlite3.connect(locked, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        asyncio.run(_set_up(locked, patience=0.2))
    holder.execute("COMMIT")

    not_a_store = tmp_path / "notes.sqlite"
    not_a_store.write_bytes(b"these are my notes, not a database " * 100)
    began = time.monotonic()
    with pytest.raises(sqlite3.DatabaseError, match="not a database"):
        asyncio.run(_set_up(str(not_a_store), patience=10))
    assert time.monotonic() - began < 5  # refused at once: only a busy store is waited for
