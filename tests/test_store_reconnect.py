"""A long-lived process on a PostgreSQL store (`deep-research worker`, `mcp --queue`) outlives
its connections: a PostgreSQL restart or failover, or an operator's `pg_terminate_backend`,
costs the calls in flight, not every later run. Before, the worker's one checkpointer
connection stayed closed and it failed every job it took afterwards ("the connection is
closed"), draining the queue into failures while it looked alive."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = ["--max-iterations", "1", "--min-iterations", "1", "--max-searches", "4"]


def drop_every_connection(url: str) -> int:
    """Terminate every other backend on the database (as a restart would); how many."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    return len(rows)


def listening(url: str) -> bool:
    """Whether a worker listens for jobs on the database: it is registered, its checkpointer is
    open and its listener connected (each came before), so nothing of its start is in flight."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND query ILIKE 'LISTEN %'"
        ).fetchone()
    return row[0] > 0


def test_a_pooled_checkpointer_outlives_its_connections(empty_postgres):
    from deep_research.tools.checkpoints import open_checkpointer

    config = {"configurable": {"thread_id": "x"}}

    async def scenario():
        async with open_checkpointer(empty_postgres, pooled=True) as saver:
            assert await saver.aget_tuple(config) is None
            assert await asyncio.to_thread(drop_every_connection, empty_postgres) >= 1
            return await saver.aget_tuple(config)  # a fresh connection, no error

    assert asyncio.run(scenario()) is None


def test_a_worker_runs_jobs_after_its_store_connections_were_dropped(
    chat_server, search_server, empty_postgres, tmp_path
):
    env = {**os.environ, "DEEP_RESEARCH_CHECKPOINT_DB": empty_postgres}
    env.pop("DEEP_RESEARCH_REDIS_URL", None)
    log = tmp_path / "worker.log"
    command = [sys.executable, "-m", "deep_research.cli", "worker", "--concurrency", "1"]
    worker = subprocess.Popen(command, env=env, cwd=ROOT, stderr=log.open("w"))
    try:
        deadline = time.monotonic() + 120
        while not listening(empty_postgres) and time.monotonic() < deadline:
            assert worker.poll() is None, log.read_text()
            time.sleep(0.2)
        assert "worker ready" in log.read_text()
        assert drop_every_connection(empty_postgres) >= 2  # the worker's, procrastinate's
        ask = [sys.executable, "-m", "deep_research.cli", "run", "Compare zstd and xz"]
        ask += ["--queue", "--thread-id", "after-drop", *SETTINGS]
        try:
            done = subprocess.run(
                ask, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
            )
        except subprocess.TimeoutExpired as error:
            raise AssertionError(f"{error}; the worker said:\n{log.read_text()}") from None
        assert done.returncode == 0, done.stderr + log.read_text()
        assert "## Sources" in done.stdout
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(15)
        except subprocess.TimeoutExpired:
            worker.kill()
    assert "after-drop: done" in log.read_text()


def test_a_worker_that_procrastinate_stopped_on_a_failed_store_call_starts_again(monkeypatch):
    """procrastinate stops its whole worker when a call of its start or of a side task (the
    heartbeat, the watched questions' periodic tick) fails: ours starts it again, until told to
    stop, when it is cancelled (procrastinate's graceful stop)."""
    from procrastinate.exceptions import ConnectorException

    from deep_research.service import queue as run_queue
    from deep_research.service.queue import RunQueue

    queue = RunQueue("postgresql://nobody@127.0.0.1:9/none")
    said: list[str] = []
    starts: list[dict] = []

    async def scenario() -> None:
        stopping = asyncio.Event()

        async def run_worker_async(**options) -> None:
            starts.append(options)
            if len(starts) == 1:
                raise ConnectorException("server closed the connection unexpectedly")
            if len(starts) == 2:
                return  # stopped on a failed side task
            stopping.set()
            await asyncio.sleep(60)  # runs until cancelled

        queue.app.run_worker_async = run_worker_async  # type: ignore[method-assign]
        while not stopping.is_set():
            await queue._worker_until_stopped({"concurrency": 1}, stopping, said.append)

    monkeypatch.setattr(run_queue, "RESTART_PAUSE", 0.0)
    asyncio.run(asyncio.wait_for(scenario(), 10))
    assert len(starts) == 3
    assert said == [
        "the queue's store failed (ConnectorException); the worker starts again",
        "the queue's worker stopped on a failed store call; it starts again",
    ]
