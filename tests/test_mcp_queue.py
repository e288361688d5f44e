"""`deep-research mcp --queue`: the MCP server hands runs to `deep-research worker` processes
through the job queue in PostgreSQL, and reads them back from the store.

Driven by the MCP SDK's own client over stdio, against a worker process and the model and
search stand-ins; PostgreSQL is started from the system's binaries (tests/services.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SECRET_MODEL_KEY, SECRET_SEARCH_KEY

from checkpoint_probe import wait_until
from stand_ins.faults import WriterFails

mcp = pytest.importorskip("mcp", reason="the MCP extra is not installed")
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp_in_process import served  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CEILINGS = ("--max-iterations", "1", "--min-iterations", "1", "--max-searches", "4")


def env_for(store: str) -> dict[str, str]:
    return {**os.environ, "DEEP_RESEARCH_CHECKPOINT_DB": store, "PYTHONPATH": str(ROOT)}


def queue_server(store: str) -> StdioServerParameters:
    """`deep-research mcp --queue` as a desktop client spawns it."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "deep_research.cli", "mcp", "--queue", *CEILINGS],
        env=env_for(store),
        cwd=str(ROOT),
    )


def start_worker(store: str, log: Path) -> subprocess.Popen:
    command = [sys.executable, "-m", "deep_research.cli", "worker", "--concurrency", "1"]
    return subprocess.Popen(command, env=env_for(store), cwd=ROOT, stderr=log.open("w"))


def stop(worker: subprocess.Popen) -> None:
    if worker.poll() is None:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(15)
        except subprocess.TimeoutExpired:
            worker.kill()


def data(result) -> dict:
    assert not result.is_error, result.content[0].text
    return result.structured_content


def error_text(result) -> str:
    assert result.is_error, result.structured_content
    return result.content[0].text


def job_arguments(store: str) -> list[str]:
    import psycopg

    with psycopg.connect(store) as connection:
        rows = connection.execute(  # research runs (the workers' watch ticks apart)
            "SELECT args::text FROM procrastinate_jobs WHERE task_name = 'deep_research.research'"
        ).fetchall()
    return [row[0] for row in rows]


def test_a_queued_run_is_run_by_a_worker_and_read_back_by_the_server(
    chat_server, search_server, empty_postgres, tmp_path
):
    log = tmp_path / "worker.log"
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    async def scenario():
        async with Client(queue_server(empty_postgres)) as client:
            above = await client.call_tool(
                "start_research",
                {"question": "Compare zstd and xz", "options": {"max_iterations": 3}},
            )
            started = data(
                await client.call_tool(
                    "start_research",
                    {"question": "Compare zstd and xz", "options": {"max_search_calls": 2}},
                )
            )
            run_id = started["run_id"]
            waiting = data(await client.call_tool("research_progress", {"run_id": run_id}))
            early = data(await client.call_tool("research_result", {"run_id": run_id}))
            listed = data(await client.call_tool("list_research", {"limit": 5}))
            still = data(
                await client.call_tool(
                    "wait_for_research",
                    {"run_id": run_id, "timeout_seconds": 1},
                    progress_callback=on_progress,
                )
            )
            worker = start_worker(empty_postgres, log)
            try:
                done = data(
                    await client.call_tool(
                        "wait_for_research",
                        {"run_id": run_id, "timeout_seconds": 120},
                        progress_callback=on_progress,
                    )
                )
            finally:
                stop(worker)
            result = data(await client.call_tool("research_result", {"run_id": run_id}))
            report = await client.read_resource(f"research://{run_id}/report")
            again = data(await client.call_tool("list_research", {"limit": 5}))
            return above, started, waiting, early, still, listed, done, result, report, again

    above, started, waiting, early, still, listed, done, result, report, again = asyncio.run(
        scenario()
    )

    assert "options.max_iterations 3 is above this server's ceiling 1" in error_text(above)
    run_id = started["run_id"]
    assert re.fullmatch(r"mcpq-[0-9a-f]{32}", run_id)
    assert started["status"] == waiting["status"] == early["status"] == still["status"] == "queued"
    assert waiting["question"] == "Compare zstd and xz" and early["report"] == ""
    assert {"run_id": run_id, "status": "queued"}.items() <= listed["result"][0].items()
    assert done["status"] == "done", done
    assert "## Sources" in done["report"] and done["sources"]
    assert done["usage"]["search_calls"] <= 2  # the caller's narrower budget reached the worker
    assert result["report"] == done["report"] == report.contents[0].text
    assert progress[0] == (1.0, "queued")  # before the worker started
    assert any(re.fullmatch(r"round \d+: \w+.*", message or "") for _, message in progress)
    assert [value for value, _ in progress] == sorted(value for value, _ in progress)
    assert {"run_id": run_id, "status": "done"}.items() <= again["result"][0].items()
    assert f"{run_id}: taken" in log.read_text() and f"{run_id}: done" in log.read_text()
    arguments = job_arguments(empty_postgres)
    assert len(arguments) == 1 and run_id in arguments[0]
    assert SECRET_MODEL_KEY not in arguments[0] and SECRET_SEARCH_KEY not in arguments[0]


def test_queue_mode_needs_a_postgresql_store(tmp_path, capsys):
    from deep_research.cli.main import main

    code = main(["mcp", "--queue", "--checkpoint-db", str(tmp_path / "runs.sqlite")])
    assert code == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 1 and "the job queue lives in PostgreSQL" in errors[0], errors


def test_the_queue_is_capped_and_a_run_that_failed_on_a_worker_is_queued_again(
    chat_server, search_server, empty_postgres, tmp_path
):
    writer = WriterFails()  # the report writer fails until the test says otherwise
    chat_server.fault = writer

    async def scenario(client: Client):
        first = data(await client.call_tool("start_research", {"question": "Compare zstd and xz"}))
        run_id = first["run_id"]
        refused = await client.call_tool("start_research", {"question": "Compare lz4"})
        worker = start_worker(empty_postgres, tmp_path / "worker.log")
        try:
            wait = {"run_id": run_id, "timeout_seconds": 120}
            await client.call_tool("wait_for_research", wait)
            failed = data(await client.call_tool("research_progress", {"run_id": run_id}))
            searched = len(search_server.searches)
            writer.failing = False
            resumed = data(await client.call_tool("resume_research", {"run_id": run_id}))
            done = data(await client.call_tool("wait_for_research", wait))
        finally:
            stop(worker)
        return refused, failed, searched, resumed, done

    flags = ("--queue", *CEILINGS, "--max-queued", "1")  # this server in-process, its worker not
    refused, failed, searched, resumed, done = served(empty_postgres, scenario, *flags)

    assert "1 runs already wait on the queue (--max-queued 1)" in error_text(refused)
    assert failed["status"] == "failed" and "400 - scripted" in failed["error"]  # the cause
    assert searched > 0  # it had researched before its writer failed
    assert resumed["status"] in ("queued", "running")
    assert done["status"] == "done", done
    assert "## Sources" in done["report"]
    assert len(search_server.searches) == searched  # the resumed run searched nothing again
    assert len(job_arguments(empty_postgres)) == 2  # the failed job, and the one queued again


def test_a_job_row_or_a_stored_run_never_chooses_what_a_worker_starts_reads_or_logs(
    chat_server, search_server, empty_postgres, tmp_path
):
    """Write access to the job table (or the store) is no command on every worker: a job that
    names an MCP sources file (as jobs once carried settings), and a stored run whose settings
    name one, start nothing; the worker runs with its own settings. A job's 10 MB of arguments
    is no 10 MB line in the worker's log."""
    from deep_research.graph import build_graph
    from deep_research.graph.threads import thread_config
    from deep_research.service.queue import open_queue
    from deep_research.tools.checkpoints import open_checkpointer

    started = tmp_path / "command-started"
    evil = tmp_path / "evil.json"
    script = f"open({str(started)!r}, 'w').write('ran')"
    entry = {"command": sys.executable, "args": ["-c", script], "allowedTools": ["search"]}
    evil.write_text(json.dumps({"mcpServers": {"evil": entry}}))
    hostile = {"mcp_config": str(evil), "max_iterations": 1, "min_iterations": 1}

    async def plant() -> None:
        async with open_checkpointer(empty_postgres) as saver:  # a run written into the store
            accepted = {"question": "Compare zstd and xz", "settings": hostile}
            graph = build_graph(checkpointer=saver)
            await graph.aupdate_state(thread_config("planted"), accepted, as_node="__input__")
        async with open_queue(empty_postgres) as queue:  # and job rows, as jobs once were
            defer = queue.task.configure(lock="planted", queueing_lock="planted").defer_async
            await defer(thread_id="planted", question="q", settings=hostile)
            huge = "x" * 10_000_000
            defer = queue.task.configure(lock="nowhere", queueing_lock="nowhere").defer_async
            await defer(thread_id="nowhere", question=huge, settings=hostile)

    async def state() -> dict:
        async with open_checkpointer(empty_postgres) as saver:
            snapshot = await build_graph(checkpointer=saver).aget_state(thread_config("planted"))
            return snapshot.values

    asyncio.run(plant())
    log = tmp_path / "worker.log"
    worker = start_worker(empty_postgres, log)
    try:  # the worker takes the jobs in turn and says when each one ends
        ended = re.compile(r"planted: (?!taken|started|resumed)\w+")
        wait_until(lambda: ended.search(log.read_text()), "the planted run ended", 120)
        wait_until(lambda: "nowhere" in log.read_text(), "the 10 MB job taken", 120)
    finally:
        stop(worker)
    values = asyncio.run(state())
    assert values.get("stop_reason") == "max_iterations", log.read_text()[-2000:]
    assert values["settings"].mcp_config is None  # the worker's own: it names none
    assert not started.exists()  # no command of the job's nor the store's was started
    lines = log.read_text().splitlines()
    assert max(len(line) for line in lines) < 5_000, max(len(line) for line in lines)
