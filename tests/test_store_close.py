"""The SQLite store is closed only after the writes under way: a failed run's late write no
longer leaves the file locked for the next command in the same process.

When a step fails, LangGraph cancels its siblings and raises; a cancelled sibling's error write is
submitted by its done-callback afterwards and nothing awaits it. Closing the connection between
that write's INSERT and its commit made SQLite keep the connection as a "zombie" holding the
write lock (CI: `database is locked` on the resume after a failed resume, in
tests/test_model_name_preflight.py::test_the_new_model_is_saved_with_the_run).
"""

from __future__ import annotations

import asyncio
import sqlite3

import aiosqlite

from deep_research.graph.threads import thread_config
from deep_research.tools.checkpoints import open_checkpointer


def write_lock_free(path) -> bool:
    """True when another connection can take the write lock at once."""
    other = sqlite3.connect(path, timeout=0)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.rollback()
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        other.close()


def test_a_write_under_way_when_the_store_closes_finishes_and_leaves_no_lock(tmp_path, monkeypatch):
    path = tmp_path / "c.sqlite"
    may_commit = asyncio.Event()
    commit = aiosqlite.Connection.commit

    async def slow_commit(self):  # the INSERT has run; the commit comes a moment later
        await may_commit.wait()
        await commit(self)

    async def scenario() -> BaseException | None:
        async with open_checkpointer(str(path)) as saver:
            config = thread_config("t")
            config["configurable"] |= {"checkpoint_ns": "", "checkpoint_id": "1"}
            monkeypatch.setattr(aiosqlite.Connection, "commit", slow_commit)
            late = asyncio.create_task(saver.aput_writes(config, [("__error__", "x")], "task-1"))
            await asyncio.sleep(0.2)  # the write is under way, its INSERT done
            asyncio.get_running_loop().call_later(0.2, may_commit.set)
        # the store is closed here, as when a failed run's exception leaves `execute`
        await asyncio.wait([late], timeout=5)
        return late.exception()

    error = asyncio.run(scenario())
    monkeypatch.undo()
    assert write_lock_free(path)  # before: the closed connection kept the lock
    assert error is None  # before: ValueError('Connection closed') at its commit
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT thread_id, task_id, channel FROM writes").fetchall()
    assert rows == [("t", "task-1", "__error__")]
