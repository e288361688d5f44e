"""Processes that open one fresh PostgreSQL store at the same moment all get a working store
(`tools.pg_setup`): no duplicate key on `checkpoint_migrations`, no deadlock against the
checkpointer's `CREATE INDEX CONCURRENTLY`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

OPEN_THE_STORE = """
import asyncio, sys
from deep_research.tools.checkpoints import open_checkpointer

async def main():
    async with open_checkpointer(sys.argv[1]) as saver:
        await saver.aget_tuple({"configurable": {"thread_id": "x"}})

asyncio.run(main())
"""


def test_six_processes_opening_an_empty_store_at_once_all_succeed(empty_postgres):
    command = [sys.executable, "-c", OPEN_THE_STORE, empty_postgres]
    processes = [
        subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True) for _ in range(6)
    ]
    errors = [p.communicate(timeout=60)[1] for p in processes]
    assert [p.returncode for p in processes] == [0] * 6, "\n".join(errors)
