"""`deep-research mcp` against a caller who wants more than the operator allows, driven by the
MCP SDK's own client: ceilings on every budget, a bounded queue, a bearer token, Host checks on
any address, a port in use, queued runs that survive a restart, and bad paths.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from stand_ins.loopback import Reply

mcp = pytest.importorskip("mcp", reason="the MCP extra is not installed")
import httpx2  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp_in_process import served  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
QUICK = {"max_iterations": 1, "min_iterations": 1}
TOKEN = "s3cret-token-for-tests-7f3a9c"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def server_env(store: str) -> dict[str, str]:
    return {**os.environ, "DEEP_RESEARCH_CHECKPOINT_DB": store, "PYTHONPATH": str(ROOT)}


def command(*flags: str) -> list[str]:
    return [sys.executable, "-m", "deep_research.cli", "mcp", *flags]


def stdio(store: str, *flags: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=command(*flags)[1:],
        env=server_env(store),
        cwd=str(ROOT),
    )


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def http_server(store: str, log: Path, *flags: str, host: str = "127.0.0.1"):
    """`deep-research mcp --http HOST:PORT` in its own process; yields (URL, process)."""
    port = free_port(host)
    with log.open("ab") as sink:
        process = subprocess.Popen(
            command("--http", f"{host}:{port}", *flags),
            cwd=ROOT,
            env=server_env(store),
            stdout=sink,
            stderr=sink,
        )
    url = f"http://{host}:{port}/mcp"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        with contextlib.suppress(httpx.TransportError):
            httpx.get(url, timeout=1)
            break
        time.sleep(0.1)
    else:
        process.kill()
        pytest.fail(f"the MCP server did not start: {log.read_text()[-2000:]}")
    try:
        yield url, process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(20)


def with_token(url: str, token: str):
    """The SDK's streamable HTTP transport sending a bearer token."""
    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    return streamable_http_client(url, http_client=client)


def data(result) -> dict:
    assert not result.is_error, result.content[0].text
    return result.structured_content


def error_text(result) -> str:
    assert result.is_error, result.structured_content
    return result.content[0].text


def test_the_servers_limits_are_ceilings_a_caller_may_only_narrow(
    chat_server, search_server, tmp_path
):
    store = str(tmp_path / "runs.sqlite")
    limits = ("--max-iterations", "1", "--max-searches", "2", "--max-tokens", "3000")
    wider = [
        ({"max_search_calls": 100000}, "options.max_search_calls 100000", "ceiling 2"),
        ({"max_iterations": 20}, "options.max_iterations 20", "ceiling 1 (--max-iterations)"),
        ({"max_workers": 64}, "options.max_workers 64", "ceiling 1 (--max-workers)"),
        ({"max_total_tokens": 3001}, "options.max_total_tokens 3001", "ceiling 3000"),
        ({"min_iterations": 3}, "min_iterations (3)", "above max_iterations (1)"),
    ]

    async def scenario(client: Client):
        refused = []
        for options, _, _ in wider:
            answer = await client.call_tool(
                "start_research", {"question": "Compare zstd and xz", "options": options}
            )
            refused.append(error_text(answer))
        narrow = {"max_iterations": 1, "max_workers": 1, "max_search_calls": 1}
        started = data(
            await client.call_tool(
                "start_research", {"question": "Compare zstd and xz", "options": narrow}
            )
        )
        done = data(
            await client.call_tool(
                "wait_for_research", {"run_id": started["run_id"], "timeout_seconds": 60}
            )
        )
        return refused, done

    refused, done = served(store, scenario, *limits, "--max-workers", "1")
    for text, (_, option, ceiling) in zip(refused, wider, strict=True):
        assert option in text and ceiling in text, text
    assert done["status"] == "done", done
    assert done["usage"]["search_calls"] <= 1


def test_a_setting_that_moves_a_ceiling_setting_is_refused_too():
    from deep_research.service.options import over_a_ceiling
    from deep_research.settings import Settings

    server = Settings(search_backend="tavily")  # no flags: the defaults are the ceilings
    asked = Settings(search_backend="tavily", min_iterations=7)  # moves max_iterations to 7
    assert over_a_ceiling(server, asked, {"min_iterations"}) == (
        "options raise max_iterations to 7 is above this server's ceiling 5 "
        "(--max-iterations); ask for 5 or less"
    )
    assert over_a_ceiling(server, Settings(search_backend="tavily", max_workers=2), set()) is None
    budgeted = Settings(search_backend="tavily", max_total_tokens=3000)
    assert "options.max_total_tokens unlimited" in over_a_ceiling(
        budgeted, server, {"max_total_tokens"}
    )


def test_the_mcp_ceilings_are_the_options_on_the_one_list_of_cost_bounds():
    from deep_research.domain import caller_settings
    from deep_research.service.options import CEILINGS, ResearchOptions

    assert CEILINGS == {  # what the server checked before the two lists became one
        "max_iterations": "--max-iterations",
        "max_workers": "--max-workers",
        "max_total_tokens": "--max-tokens",
        "max_search_calls": "--max-searches",
    }
    assert set(CEILINGS) == set(ResearchOptions.model_fields) & set(caller_settings.CEILINGS)


def test_the_queue_is_capped_with_a_clear_error(chat_server, search_server, tmp_path):
    store = str(tmp_path / "runs.sqlite")
    release = threading.Event()
    chat_server.fault = lambda number, body: release.wait(60) and None  # every call waits

    async def scenario(client: Client):
        answers = []
        for _ in range(3):
            answers.append(
                await client.call_tool(
                    "start_research", {"question": "Compare zstd and xz", "options": QUICK}
                )
            )
        return answers

    try:
        first, second, third = served(store, scenario, "--max-runs", "1", "--max-queued", "1")
    finally:
        release.set()
    assert data(first)["status"] in ("queued", "running")
    assert data(second)["status"] == "queued"
    assert "1 runs are already queued on this server (--max-queued 1)" in error_text(third)


def test_calls_at_once_cannot_queue_more_than_the_cap(chat_server, search_server, tmp_path):
    """Many `start_research` calls sent together each count the queue after the others: 30 at
    once on `--max-runs 1 --max-queued 2` start 3 runs (17 did when they all counted at once)."""
    store = str(tmp_path / "runs.sqlite")
    release = threading.Event()
    chat_server.fault = lambda number, body: release.wait(60) and None  # every call waits

    async def scenario(client: Client) -> list:
        return await asyncio.gather(  # each call is handled in a task of its own, as over HTTP
            *(
                client.call_tool(
                    "start_research", {"question": f"Compare zstd and xz {n}", "options": QUICK}
                )
                for n in range(30)
            )
        )

    try:
        answers = served(store, scenario, "--max-runs", "1", "--max-queued", "2")
    finally:
        release.set()
    accepted = [answer for answer in answers if not answer.is_error]
    assert len(accepted) == 3, [error_text(a)[:80] for a in answers if a.is_error][:3]
    cap = "2 runs are already queued on this server (--max-queued 2)"
    assert all(cap in error_text(answer) for answer in answers if answer.is_error)


def raw_post(url: str, **headers: str) -> httpx.Response:
    return httpx.post(url, json=INIT, headers={**MCP_HEADERS, **headers}, timeout=10)


def test_a_token_is_required_on_every_request_and_a_forged_host_is_refused_with_it(
    chat_server, search_server, tmp_path
):
    """On any loopback address (127.0.0.2 here) the Host and Origin headers are checked, a
    caller with the right token included."""
    store = str(tmp_path / "runs.sqlite")
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")

    async def with_the_token(url: str) -> set[str]:
        async with Client(with_token(url, TOKEN)) as client:
            unknown = await client.call_tool("research_progress", {"run_id": "mcp-none"})
            assert "no run with id" in error_text(unknown)
            return {tool.name for tool in (await client.list_tools()).tools}

    async def without(url: str, token: str | None) -> None:
        transport = with_token(url, token) if token else url
        async with Client(transport) as client:
            await client.list_tools()

    log = tmp_path / "server.log"
    flags = ("--token-file", str(token_file))
    with http_server(store, log, *flags, host="127.0.0.2") as (url, _):
        tools = asyncio.run(with_the_token(url))
        statuses = [
            raw_post(url).status_code,
            raw_post(url, authorization=f"Bearer {TOKEN[:-1]}x").status_code,
            raw_post(url, authorization=f"Basic {TOKEN}").status_code,
            raw_post(url, authorization=f"Bearer {TOKEN}").status_code,
        ]
        for token in (None, "wrong-token-of-some-length"):
            with pytest.raises(Exception, match="unhandled errors"):  # the SDK's 401 report
                asyncio.run(without(url, token))
        bearer = f"Bearer {TOKEN}"
        forged = raw_post(url, authorization=bearer, host="rebind.attacker.example")
        forged_origin = raw_post(url, authorization=bearer, origin="http://rebind.attacker.example")
    assert "start_research" in tools
    assert statuses == [401, 401, 401, 200]
    assert forged.status_code == 421
    assert forged_origin.status_code == 403
    assert TOKEN not in log.read_text()


def test_a_port_in_use_is_one_line_exit_2_from_the_process(chat_server, search_server, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        in_use = subprocess.run(
            command("--http", f"127.0.0.1:{port}"), cwd=ROOT, capture_output=True, text=True,
            env=server_env(str(tmp_path / "runs.sqlite")), timeout=60,
        )  # fmt: skip
    assert in_use.returncode == 2, in_use.stderr
    assert in_use.stderr.strip().splitlines() == [
        f"error: --http 127.0.0.1:{port}: cannot listen there: Address already in use"
    ]


def test_a_short_token_and_a_token_without_http_are_one_line_exit_2(tmp_path, capsys):
    from deep_research.cli.main import main

    store = ["--checkpoint-db", str(tmp_path / "runs.sqlite")]
    assert main(["mcp", "--http", f"127.0.0.1:{free_port()}", "--token", "short", *store]) == 2
    short = capsys.readouterr().err.strip().splitlines()
    assert main(["mcp", "--token", TOKEN, *store]) == 2
    stdio_token = capsys.readouterr().err.strip().splitlines()
    assert len(short) == 1 and "--token: a token is at least 16" in short[0], short
    assert len(stdio_token) == 1, stdio_token
    assert "--token and --token-file are for --http" in stdio_token[0]


def test_queued_runs_are_durable_from_the_moment_their_id_is_returned(
    chat_server, search_server, tmp_path
):
    store = str(tmp_path / "runs.sqlite")
    hold = threading.Event()

    def hold_every_call(number, body):
        hold.wait(60)
        return Reply(503, {"error": {"message": "gone"}})

    chat_server.fault = hold_every_call

    async def start(url: str) -> list[str]:
        async with Client(url) as client:
            ids = []
            for question in ("Compare zstd and xz", "Compare gzip and brotli", "Compare lz4"):
                answer = await client.call_tool(
                    "start_research", {"question": question, "options": QUICK}
                )
                ids.append(data(answer)["run_id"])
            return ids

    try:
        with http_server(store, tmp_path / "server.log", "--max-runs", "1") as (url, process):
            run_ids = asyncio.run(start(url))
            os.kill(process.pid, signal.SIGKILL)
            process.wait(10)
        chat_server.fault = lambda number, body: None
    finally:
        hold.set()

    async def finish() -> list[dict]:
        async with Client(stdio(store, "--max-runs", "1")) as client:
            last = data(await client.call_tool("research_progress", {"run_id": run_ids[-1]}))
            assert last["question"] == "Compare lz4", last  # known while it waits, too
            results = []
            for run_id in run_ids:
                answer = await client.call_tool(
                    "wait_for_research", {"run_id": run_id, "timeout_seconds": 90}
                )
                results.append(data(answer))
            return results

    results = asyncio.run(finish())
    assert [r["status"] for r in results] == ["done", "done", "done"], results
    assert [r["question"] for r in results] == [
        "Compare zstd and xz",
        "Compare gzip and brotli",
        "Compare lz4",
    ]


def test_a_control_character_in_corpus_dir_is_a_clear_tool_error(
    chat_server, search_server, tmp_path, caplog, capsys
):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "zstd.md").write_text("# zstd\n\nzstd compresses logs at level 19.\n")
    store = str(tmp_path / "runs.sqlite")

    async def scenario(client: Client) -> list[str]:
        texts = []
        for bad in ("\u0000", "notes\nrm", "a" * 5000):
            answer = await client.call_tool(
                "start_research",
                {"question": "Compare zstd and xz", "options": {"corpus_dir": bad}},
            )
            texts.append(error_text(answer))
        return texts

    with caplog.at_level(logging.DEBUG):
        texts = served(store, scenario, "--corpus", str(corpus))
    assert all("corpus_dir" in text for text in texts), texts
    assert "control characters" in texts[0]
    logged = [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    assert logged == [] and "Traceback" not in capsys.readouterr().err  # what the log would say


def test_a_server_keeps_nothing_in_memory_of_runs_that_ended_the_store_keeps_them():
    """The in-process executor holds a run only while it runs: a server that has run many
    keeps none of them (their status and results are read from the store)."""
    from deep_research.service.executors import InProcess

    async def scenario() -> tuple[int, list[str]]:
        executor = InProcess(max_runs=2)
        done: list[str] = []

        async def drive(run_id: str, step_input) -> None:
            await asyncio.sleep(0)
            done.append(run_id)

        executor.bind(drive)
        for number in range(10):
            await executor.launch(f"mcp-{number}", None)
        while len(done) < 10:
            await executor.news("mcp-9", 1.0)
            await asyncio.sleep(0)
        await asyncio.sleep(0)
        return len(executor.live), sorted(done)

    kept, done = asyncio.run(scenario())
    assert kept == 0 and len(done) == 10


def test_no_caller_option_lowers_a_guard():
    from deep_research.service.options import ResearchOptions
    from deep_research.settings import LOWERS_A_GUARD, SERVER_ONLY

    given = set(ResearchOptions.model_fields)
    assert not given & set(LOWERS_A_GUARD)
    assert given & set(SERVER_ONLY) == {"corpus_dir"}  # confined to the server's own folder


def test_the_host_header_allow_list_names_the_served_address():
    from deep_research.server.http_transport import transport_security
    from deep_research.service.bad_input import BadInput

    assert transport_security("127.0.0.2", 8765, []).allowed_hosts == ["127.0.0.2:8765"]
    loopback = transport_security("127.0.0.1", 8765, []).allowed_hosts
    assert loopback == ["127.0.0.1:8765", "localhost:8765", "[::1]:8765"]
    assert transport_security("::1", 9, []).allowed_origins[0] == "http://127.0.0.1:9"
    assert transport_security("0.0.0.0", 80, ["research.example"]).allowed_hosts == [
        "research.example"
    ]
    with pytest.raises(BadInput, match="--allowed-host"):
        transport_security("0.0.0.0", 80, [])
