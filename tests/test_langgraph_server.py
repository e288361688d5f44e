"""`langgraph dev` serves the graph to Studio and the SDK: worker events, state, history."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
LANGGRAPH = Path(sys.executable).parent / "langgraph"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def server(chat_server, search_server, tmp_path):
    if not LANGGRAPH.exists():
        pytest.skip("langgraph-cli is not installed (pip install -e '.[dev]')")
    app = tmp_path / "app"  # a copy, so the server's own files stay out of the repository
    shutil.copytree(
        ROOT, app, ignore=shutil.ignore_patterns(".venv", ".git", "*.sqlite", ".langgraph_api")
    )
    port = free_port()
    env = {**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1"}
    process = subprocess.Popen(
        [str(LANGGRAPH), "dev", "--port", str(port), "--no-browser", "--no-reload"],
        cwd=app,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/ok", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.3)
    else:
        process.kill()
        pytest.fail("langgraph dev did not start within 60 s")
    yield url
    process.terminate()
    process.wait(20)


def test_sdk_run_streams_worker_events_and_keeps_state_and_history(server, chat_server):
    from langgraph_sdk import get_client

    async def scenario():
        client = get_client(url=server)
        thread = await client.threads.create()
        parts = [
            part
            async for part in client.runs.stream(
                thread["thread_id"],
                "deep_research",
                input={"question": "Compare zstd and xz"},
                context={"max_iterations": 1, "min_iterations": 1, "model_retries": 0},
                stream_mode=["updates", "custom"],
                stream_subgraphs=True,
            )
        ]
        state = await client.threads.get_state(thread["thread_id"])
        history = await client.threads.get_history(thread["thread_id"], limit=100)
        return parts, state, history

    parts, state, history = asyncio.run(scenario())
    worker_events = [
        p for p in parts if p.event.startswith("custom|research") and p.data["event"] == "worker"
    ]
    assert {e.data["subtask_id"] for e in worker_events} == {1, 2, 3}
    assert any(p.event.startswith("updates|research") for p in parts)  # subgraph steps stream
    assert "## Sources" in state["values"]["report"]
    assert state["values"]["stop_reason"] == "max_iterations"
    assert {"decompose", "finalize"} <= {n for h in history for n in h["next"]}
