"""`deep-research mcp` driven by the MCP SDK's own client, over stdio and streamable HTTP.

The server runs as a real subprocess against the model and search stand-ins; runs land in the
same checkpoint store the CLI reads, and a server killed mid-run finishes the run when started
again without repeating an answered model call.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from checkpoint_probe import saved_writes, wait_until
from stand_ins.loopback import Reply

mcp = pytest.importorskip("mcp", reason="the MCP extra is not installed")
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp_in_process import served  # noqa: E402
from test_mcp_server_limits import raw_post  # noqa: E402

from deep_research.cli.main import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
QUICK = {"max_iterations": 1, "min_iterations": 1}


def server_env(store: str) -> dict[str, str]:
    return {**os.environ, "DEEP_RESEARCH_CHECKPOINT_DB": store, "PYTHONPATH": str(ROOT)}


def stdio(store: str, *flags: str) -> StdioServerParameters:
    """`deep-research mcp` as a desktop client spawns it."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "deep_research.cli", "mcp", *flags],
        env=server_env(store),
        cwd=str(ROOT),
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def http_server(store: str, log: Path, *flags: str, **env: str):
    """`deep-research mcp --http` in its own process; yields (its /mcp URL, the process)."""
    port = free_port()
    with log.open("ab") as sink:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "deep_research.cli",
                "mcp",
                "--http",
                f"127.0.0.1:{port}",
                *flags,
            ],
            cwd=ROOT,
            env={**server_env(store), **env},
            stdout=sink,
            stderr=sink,
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        with contextlib.suppress(httpx.TransportError):
            httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=1)
            break
        time.sleep(0.1)
    else:
        process.kill()
        pytest.fail(f"the MCP server did not start: {log.read_text()[-2000:]}")
    try:
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(20)


def data(result) -> dict:
    """A tool's structured answer (failing the test with the error text on an error)."""
    assert not result.is_error, result.content[0].text
    return result.structured_content


def error_text(result) -> str:
    assert result.is_error
    return result.content[0].text


def cited_numbers(report: str) -> set[int]:
    body = report.split("## Sources")[0]
    return {
        int(n) for group in re.findall(r"\[(\d+(?:\s*,\s*\d+)*)\]", body) for n in group.split(",")
    }


def assert_cited_report(result: dict) -> None:
    assert result["status"] == "done"
    numbers = {s["number"] for s in result["sources"]}
    cited = cited_numbers(result["report"])
    assert cited, result["report"]
    assert cited <= numbers  # every [n] resolves to a listed source
    assert all(s["url"].startswith("https://example.com/") for s in result["sources"])


def test_stdio_start_progress_result_resource_errors_and_history(
    chat_server, search_server, tmp_path, capsys
):
    store = str(tmp_path / "runs.sqlite")
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    async def scenario():
        async with Client(stdio(store)) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            started = data(
                await client.call_tool(
                    "start_research", {"question": "Compare zstd and xz", "options": QUICK}
                )
            )
            run_id = started["run_id"]
            watched = data(await client.call_tool("research_progress", {"run_id": run_id}))
            result = data(
                await client.call_tool(
                    "wait_for_research",
                    {"run_id": run_id, "timeout_seconds": 60},
                    progress_callback=on_progress,
                )
            )
            resource = await client.read_resource(f"research://{run_id}/report")
            bad = await client.call_tool(
                "start_research",
                {"question": "Compare zstd and xz", "options": {"max_iterations": 0}},
            )
            unknown = await client.call_tool("research_result", {"run_id": "mcp-nope"})
            listed = data(await client.call_tool("list_research", {"limit": 5}))
            return tools, started, watched, result, resource, bad, unknown, listed

    tools, started, watched, result, resource, bad, unknown, listed = asyncio.run(scenario())

    assert {"start_research", "research_progress", "research_result", "wait_for_research"} <= tools
    assert started["status"] in ("queued", "running")
    assert watched["run_id"] == started["run_id"]
    assert_cited_report(result)
    assert result["stop_reason"] == "max_iterations"
    assert result["usage"]["llm_calls"] > 0
    assert progress and any("plan:" in (m or "") for _, m in progress)
    assert [p for p, _ in progress] == sorted(p for p, _ in progress)
    assert resource.contents[0].text == result["report"]
    assert "max_iterations" in error_text(bad)
    assert "no run with id 'mcp-nope'" in error_text(unknown)
    assert started["run_id"] in {row["run_id"] for row in listed["result"]}

    capsys.readouterr()
    terminal = ["--checkpoint-db", store, "--all-doors"]  # an MCP run: reached when told to
    assert main(["history", started["run_id"], *terminal]) == 0
    assert "finalize" in capsys.readouterr().out


def test_http_same_tools_and_two_clients_runs_share_the_servers_endpoint_limit(
    chat_server, search_server, tmp_path
):
    chat_server.latency = 0.1  # long enough for the two runs' calls to overlap
    store = str(tmp_path / "runs.sqlite")

    async def one_client(url: str, question: str) -> dict:
        async with Client(url) as client:
            answer = await client.call_tool(
                "start_research", {"question": question, "options": QUICK}
            )
            run_id = data(answer)["run_id"]
            answer = await client.call_tool(
                "wait_for_research", {"run_id": run_id, "timeout_seconds": 120}
            )
            return data(answer)

    async def probe(url: str):
        async with Client(url) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            with pytest.raises(mcp.MCPError) as missing:
                await client.read_resource("research://mcp-nope/report")
            outside = await client.call_tool(
                "start_research",
                {"question": "Compare zstd and xz", "options": {"corpus_dir": "/etc"}},
            )
            return tools, missing.value, outside

    async def three_clients(url: str):
        questions = ("Compare zstd and xz", "Compare gzip and brotli")
        return await asyncio.gather(probe(url), *(one_client(url, q) for q in questions))

    limit = {"DEEP_RESEARCH_MAX_MODEL_CONCURRENCY": "1"}
    with http_server(store, tmp_path / "server.log", **limit) as (url, _):
        (tools, missing, outside), *results = asyncio.run(three_clients(url))
        # No token here: the Host and Origin checks stand on their own (DNS rebinding).
        forged = raw_post(url, host="rebind.attacker.example")
        forged_origin = raw_post(url, origin="http://rebind.attacker.example")
        plain = raw_post(url)

    assert (forged.status_code, forged_origin.status_code, plain.status_code) == (421, 403, 200)

    assert "start_research" in tools and "list_research" in tools
    assert "mcp-nope" in str(missing)
    assert "corpus_dir" in error_text(outside)
    for result in results:
        assert_cited_report(result)
    assert chat_server.peak_concurrency == 1  # one limit for every run of the server process


def test_a_server_killed_mid_run_finishes_the_run_when_started_again(
    chat_server, search_server, tmp_path
):
    store = str(tmp_path / "runs.sqlite")
    hold, held = threading.Event(), threading.Event()
    findings_seen = []

    def block_third_worker_report(number, body):
        if "WorkerFindings" in json.dumps(body):
            findings_seen.append(number)
            if len(findings_seen) == 3:
                held.set()
                hold.wait(60)
                return Reply(503, {"error": {"message": "gone"}})
        return None

    chat_server.fault = block_third_worker_report

    async def start(url: str) -> str:
        async with Client(url) as client:
            options = {**QUICK, "max_workers": 1}
            answer = await client.call_tool(
                "start_research", {"question": "Compare zstd and xz", "options": options}
            )
            return data(answer)["run_id"]

    try:
        with http_server(store, tmp_path / "server.log") as (url, process):
            run_id = asyncio.run(start(url))
            assert held.wait(60), "the run never reached the third worker's report"
            wait_until(  # the two finished workers' results are saved; only the held one is open
                lambda: saved_writes(store, "worker_results", [run_id], latest_only=True) >= 2,
                "the finished workers' results saved",
            )
            os.kill(process.pid, signal.SIGKILL)
            process.wait(10)
        answered = [r for r in chat_server.chat_requests if r["status"] == 200]
        chat_server.fault = lambda number, body: None
    finally:
        hold.set()

    async def finish() -> dict:
        async with Client(stdio(store)) as client:  # the restarted server resumes it by itself
            answer = await client.call_tool(
                "wait_for_research", {"run_id": run_id, "timeout_seconds": 60}
            )
            return data(answer)

    result = asyncio.run(finish())
    assert_cited_report(result)
    after = [r for r in chat_server.chat_requests[len(answered) :] if r["status"] == 200]
    key = lambda r: json.dumps(r["body"], sort_keys=True)  # noqa: E731
    assert {key(r) for r in answered} & {key(r) for r in after} == set()
    assert chat_server.brain.calls["WorkerFindings"] == 3  # each worker's report answered once


def config_snippets() -> list[dict]:
    """Every `mcpServers` JSON block of the README and docs/mcp.md."""
    blocks = []
    for doc in (ROOT / "README.md", ROOT / "docs" / "mcp.md"):
        for block in re.findall(r"```json\n(.*?)```", doc.read_text(encoding="utf-8"), re.S):
            if "mcpServers" in block and "deep-research" in json.loads(block)["mcpServers"]:
                blocks.append(json.loads(block))
    return blocks


def test_the_documented_desktop_config_starts_a_working_server(
    chat_server, search_server, tmp_path
):
    snippets = config_snippets()
    assert len(snippets) == 2
    command = shutil.which("deep-research", path=str(Path(sys.executable).parent))
    assert command, "the console script is not installed (pip install -e '.[dev]')"

    async def try_config(entry: dict) -> set[str]:
        assert shutil.which(entry["command"], path=str(Path(command).parent))
        env = {**server_env(str(tmp_path / "runs.sqlite")), **entry["env"]}
        params = StdioServerParameters(command=command, args=entry["args"], env=env)
        async with Client(params) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            unknown = await client.call_tool("research_progress", {"run_id": "mcp-none"})
            assert "no run with id" in error_text(unknown)
            return tools

    async def every_config() -> list[set[str]]:  # each its own server, started side by side
        return await asyncio.gather(
            *(try_config(snippet["mcpServers"]["deep-research"]) for snippet in snippets)
        )

    for tools in asyncio.run(every_config()):
        assert "start_research" in tools


def test_without_the_mcp_extra_the_command_says_how_to_install_it(monkeypatch, capsys):
    from deep_research.cli.main import main

    for name in ("mcp", "mcp.server", "mcp.server.mcpserver"):
        monkeypatch.setitem(sys.modules, name, None)  # as if the extra were not installed
    assert main(["mcp"]) == 2
    assert 'pip install -e ".[mcp]"' in capsys.readouterr().err


def test_a_vague_question_is_asked_back_and_answered_through_the_tools(
    chat_server, search_server, tmp_path
):
    """With ask_back, a vague question waits with its questions until the caller answers them
    with answer_questions; the answers reach the planner. Without it, nothing is asked."""
    store = str(tmp_path / "runs.sqlite")
    chat_server.brain.clarifying = [
        {"question": "Which logs?", "suggested_answers": ["web server logs", "database logs"]}
    ]

    async def scenario(client: Client):
        asked = {"question": "compression?", "options": QUICK}
        started = data(await client.call_tool("start_research", {**asked, "ask_back": True}))
        run_id = started["run_id"]
        waiting = data(
            await client.call_tool("wait_for_research", {"run_id": run_id, "timeout_seconds": 60})
        )
        early = await client.call_tool("answer_questions", {"run_id": "mcp-nope"})
        answered = data(
            await client.call_tool(
                "answer_questions", {"run_id": run_id, "answers": ["nginx access logs"]}
            )
        )
        done = data(
            await client.call_tool("wait_for_research", {"run_id": run_id, "timeout_seconds": 60})
        )
        again = await client.call_tool("answer_questions", {"run_id": run_id, "skip": True})
        plain = data(await client.call_tool("start_research", asked))
        unasked = data(
            await client.call_tool(
                "wait_for_research", {"run_id": plain["run_id"], "timeout_seconds": 60}
            )
        )
        return waiting, early, answered, done, again, unasked

    waiting, early, answered, done, again, unasked = served(store, scenario)
    assert waiting["status"] == "waiting"
    assert waiting["questions"] == chat_server.brain.clarifying
    assert "no run with id 'mcp-nope'" in error_text(early)
    assert answered["status"] in ("queued", "running", "done") and answered["questions"] == []
    assert done["status"] == "done" and done["questions"] == []
    assert "not waiting for answers" in error_text(again)
    plans = [
        json.dumps(r["body"])
        for r in chat_server.chat_requests
        if "TaskPlan" in json.dumps(r["body"])
    ]
    assert "nginx access logs" in plans[0]
    assert unasked["status"] == "done"  # without ask_back: researched as asked
    assert chat_server.brain.calls["Clarification"] == 1
