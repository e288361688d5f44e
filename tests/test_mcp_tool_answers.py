"""Reading MCP tools and their answers: the query argument, the locator, the text, the config."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
import signal
from pathlib import Path
from types import SimpleNamespace

import pytest

from deep_research.tools.mcp_config import McpConfigError, read_mcp_config
from deep_research.tools.search.tool_sources import (
    MAX_TOOL_TEXT,
    answer_text,
    answer_url,
    locator,
    query_argument,
)


@pytest.mark.parametrize(
    ("schema", "argument"),
    [
        ({"properties": {"query": {"type": "string"}}, "required": ["query"]}, "query"),
        ({"properties": {"q": {"type": "string"}, "limit": {"type": "integer"}}}, "q"),
        ({"properties": {"title": {"type": "string"}}, "required": ["title"]}, "title"),
        ({"properties": {"text": {"type": "string"}, "lang": {"type": "string"}}}, "text"),
        ({"properties": {"a": {"type": "string"}, "b": {"type": "string"}}}, None),
        ({"properties": {"query": {"type": "string"}, "n": {"type": "integer"}},
          "required": ["query", "n"]}, None),
        ({"properties": {"n": {"type": "integer"}}}, None),
        ({}, None),
    ],
)  # fmt: skip
def test_the_query_goes_to_the_one_text_argument_a_tool_needs(schema, argument):
    assert query_argument(schema) == argument


def block(**fields):
    return SimpleNamespace(**fields)


def test_answer_text_joins_text_and_embedded_resources_and_is_capped():
    result = block(
        content=[
            block(type="text", text="first"),
            block(type="image", data="..."),
            block(type="resource", resource=block(text="second")),
        ],
        structured_content=None,
    )
    assert answer_text(result) == "first\nsecond"
    long = block(content=[block(type="text", text="x" * (MAX_TOOL_TEXT + 10))])
    assert len(answer_text(long)) == MAX_TOOL_TEXT


def test_a_tool_answer_is_located_by_its_own_url_else_by_a_stable_mcp_address():
    structured = block(content=[], structured_content={"url": "https://wiki.example/p/1"})
    linked = block(
        content=[block(type="resource_link", uri="https://tickets.example/OPS-812")],
        structured_content=None,
    )
    unsafe = block(content=[], structured_content={"url": "javascript:alert(1)"})
    plain = block(content=[], structured_content=None)
    assert answer_url(plain, "zstd level 19.\n\nPage: https://wiki.example/p/9 (edited).") == (
        "https://wiki.example/p/9"
    )
    assert answer_url(plain, "see https://a.example/x and https://b.example/y") is None  # which?
    assert answer_url(plain, "see https://a.example/x, and again https://a.example/x.") == (
        "https://a.example/x"
    )
    assert answer_url(plain, "broken http://[::1 and mcp://wiki/x") is None
    assert answer_url(structured) == "https://wiki.example/p/1"
    assert answer_url(linked) == "https://tickets.example/OPS-812"
    assert answer_url(unsafe) is None
    assert locator("wiki", "search", "query", "zstd & xz") == (
        "mcp://wiki/search?query=zstd+%26+xz"
    )


def test_the_config_reads_stdio_and_http_entries_and_refuses_what_is_unusable(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "wiki": {"command": "python", "args": ["w.py"], "allowedTools": ["s"]},
                    "tickets": {"url": "http://127.0.0.1:9000/mcp", "startupTimeout": 90},
                },
                "otherClientKey": True,
            }
        )
    )
    sources = read_mcp_config(good)
    assert sources.servers["wiki"].allowed_tools == ["s"]
    assert sources.servers["tickets"].allowed_tools == []  # nothing allowed: nothing called
    assert (
        sources.servers["wiki"].startup_timeout,
        sources.servers["tickets"].startup_timeout,
    ) == (
        30,
        90,
    )
    for text, expected in [
        ("{", "not JSON"),
        ('{"servers": {}}', "mcpServers"),
        ('{"mcpServers": {"x": {"command": "a", "url": "http://h"}}}', "either command"),
        ('{"mcpServers": {"x": {"url": "file:///etc/passwd"}}}', "http(s)"),
        ('{"mcpServers": {"x": {"command": "a", "startupTimeout": 0}}}', "startupTimeout"),
        ('{"mcpServers": {"x": {"command": "a", "startupTimeout": "soon"}}}', "startupTimeout"),
    ]:
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        with pytest.raises(McpConfigError, match=re.escape(expected)):
            read_mcp_config(bad)
    with pytest.raises(McpConfigError, match=r"missing\.json"):
        read_mcp_config(tmp_path / "missing.json")


def processes_with(argument: str) -> list[int]:
    """The PIDs whose command line has `argument` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if argument.encode() in (entry / "cmdline").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
    return found


@pytest.mark.parametrize("way_out", ["start-up timeout", "run ended while starting"])
def test_a_server_that_never_starts_is_stopped_on_every_way_out(way_out):
    """`sleep 3600` never answers `initialize`: its child process is killed when the start-up
    times out and when the run ends first, not left running (re-parented to PID 1)."""
    import asyncio
    import uuid

    from deep_research.tools.mcp_config import McpServerEntry, McpSources
    from deep_research.tools.search import tool_sources

    timeout = 0.5 if way_out == "start-up timeout" else 60
    marker = f"3600.{uuid.uuid4().int % 10**9}"  # one sleep of our own to look for
    entry = McpServerEntry(
        command="sleep", args=[marker], allowed_tools=["search"], startup_timeout=timeout
    )
    search = tool_sources.ToolSearch(
        McpSources.model_validate({"mcpServers": {"stalls": entry}}), 10
    )
    connection = search.connections[0]

    async def scenario() -> tuple[list[int], list[int], bool]:
        asking = asyncio.create_task(search.search("zstd", 5))
        deadline = asyncio.get_running_loop().time() + 10
        while not processes_with(marker) and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
        started = processes_with(marker)
        if way_out == "run ended while starting":
            await search.aclose()
        hits = await asyncio.wait_for(asking, 10)
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(connection._task, 10)
        return started, processes_with(marker), hits == []

    started, left, no_hits = asyncio.run(scenario())
    assert started, "the stand-in never started"
    assert left == [], f"{way_out}: left running"
    assert no_hits
    expected = "did not start within 0.5 s" if timeout == 0.5 else "stopped before it finished"
    assert connection.failure.startswith(expected)


def test_a_released_run_stops_the_mcp_servers_it_started():
    """Releasing a run (after finalize, or when a step raises) stops its MCP sources at once,
    not when the garbage collector gets to them: a long-lived MCP server would pile them up."""
    import asyncio

    from deep_research.settings import Settings
    from deep_research.tools.run_resources import LiveRuns
    from deep_research.tools.search.tool_sources import ToolSearch, WithToolSources
    from deep_research.tools.search_cache import SearchCache

    stopped = []

    class Recording(ToolSearch):
        def __init__(self) -> None:
            pass

        async def aclose(self) -> None:
            stopped.append(True)

    class NoWeb:
        async def search(self, query: str, max_results: int) -> list:
            return []

    async def one_run() -> None:
        runs = LiveRuns()
        run = runs.open("r1", Settings(search_backend="duckduckgo"))
        run._search_cache = SearchCache(WithToolSources(NoWeb(), Recording()))  # as built
        await runs.release("r1")

    asyncio.run(one_run())
    assert stopped == [True]


WIKI = Path(__file__).resolve().parent / "stand_ins" / "mcp_wiki.py"


def test_callers_that_give_up_on_a_stalled_start_one_after_another_leave_no_child():
    """Two searches wait for a server that never starts; each gives up at the start-up
    timeout, the second while the first one's stop of the child is under way (the SDK waits
    2 s for it to exit on its own): a second cancel of the holding task went through the
    SDK's shielded stop and left the child running."""
    import asyncio
    import uuid

    from deep_research.tools.mcp_config import McpServerEntry, McpSources
    from deep_research.tools.search import tool_sources

    marker = f"3600.{uuid.uuid4().int % 10**9}"
    entry = McpServerEntry(
        command="sleep", args=[marker], allowed_tools=["search"], startup_timeout=0.5
    )
    search = tool_sources.ToolSearch(McpSources.model_validate({"mcpServers": {"s": entry}}), 10)

    async def scenario() -> list[int]:
        first = asyncio.create_task(search.search("zstd", 5))
        await asyncio.sleep(0.3)
        second = asyncio.create_task(search.search("xz", 5))
        assert await first == [] and await second == []
        await search.aclose()
        return processes_with(marker)

    gc.disable()  # as in a long run, where a cycle may live long: no collector kills the child
    try:
        left = asyncio.run(scenario())
    finally:
        gc.enable()
    try:
        assert left == [], "the stalled server was left running"
    finally:
        for pid in left:
            os.kill(pid, signal.SIGKILL)


def test_a_stream_without_a_newline_is_cut_at_the_limit_not_read_whole():
    """An endless line (a server that never stops answering) ends the read at the limit."""
    import asyncio

    from deep_research.tools.search.bounded_mcp import _lines

    read = []

    async def endless():
        yield b'{"jsonrpc": "2.0", "id": 1}\n{"jsonrpc"'
        while True:
            read.append(65536)
            yield b"x" * 65536

    async def scenario():
        return [line async for line in _lines(endless(), 1_000_000)]

    lines = asyncio.run(asyncio.wait_for(scenario(), 10))
    assert lines == [b'{"jsonrpc": "2.0", "id": 1}', None]
    assert sum(read) <= 1_000_000 + 65536


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_huge_tool_answer_is_not_read_whole_and_the_failure_says_why(
    monkeypatch, tmp_path, transport
):
    """20 MB against a 1 MB cap: no hit, a failure line naming the size, in seconds."""
    import asyncio
    import subprocess
    import sys
    import time

    from deep_research.tools.mcp_config import McpSources
    from deep_research.tools.search import bounded_mcp, tool_sources

    monkeypatch.setattr(bounded_mcp, "MAX_ANSWER_BYTES", 1_000_000)
    failures = []
    monkeypatch.setattr(tool_sources, "emit", failures.append)
    args = [str(WIKI), "--log", str(tmp_path / "calls.log"), "--answer-bytes", "20000000"]
    served = None
    if transport == "stdio":
        entry = {"command": sys.executable, "args": args, "allowedTools": ["search_wiki"]}
    else:
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        served = subprocess.Popen([sys.executable, *args, "--http-port", str(port)])
        entry = {"url": f"http://127.0.0.1:{port}/mcp", "allowedTools": ["search_wiki"]}
    sources = McpSources.model_validate({"mcpServers": {"wiki": entry}})

    async def scenario():
        if served is not None:
            import httpx

            for _ in range(100):
                with contextlib.suppress(httpx.TransportError):
                    httpx.get(entry["url"], timeout=1)
                    break
                await asyncio.sleep(0.1)
        search = tool_sources.ToolSearch(sources, timeout=60)
        began = time.monotonic()
        hits = await search.search("zstd", 5)
        took = time.monotonic() - began
        await search.aclose()
        return hits, took

    try:
        hits, took = asyncio.run(scenario())
    finally:
        if served is not None:
            served.terminate()
            served.wait(10)
    assert hits == []
    lines = [f"{event.source}: {event.error}" for event in failures]
    assert any("larger than 1,000,000 bytes" in line for line in lines), lines
    assert all(event.error for event in failures)  # never an empty reason
    assert took < 30


def test_a_tool_that_times_out_says_so(monkeypatch):
    """A TimeoutError's text is empty: the failure line names the timeout instead."""
    import asyncio

    from deep_research.tools.mcp_config import McpServerEntry
    from deep_research.tools.search import tool_sources

    class Slow:
        async def call_tool(self, tool, arguments):
            await asyncio.sleep(10)

    connection = tool_sources.ServerConnection("wiki", McpServerEntry(command="x"))
    connection.client, connection.tools = Slow(), {"search_wiki": "query"}
    with pytest.raises(tool_sources.ToolFailed, match=r"search_wiki: no answer within 0.2 s"):
        asyncio.run(connection.ask("search_wiki", "zstd", 0.2))


@pytest.mark.parametrize("page", ["named url", "same text"])
def test_one_document_is_one_source_whichever_query_found_it(tmp_path, page):
    """A wiki that answers two queries with the same page: one address for both, the page's
    own URL when its text names one, else the first query's `mcp://` locator."""
    import asyncio
    import sys

    from deep_research.domain.sources import SourceRegistry
    from deep_research.state import Finding, SourceEvidence, WorkerResult
    from deep_research.tools.mcp_config import McpSources
    from deep_research.tools.search.tool_sources import ToolSearch

    url = "https://wiki.example.org/ops/archive-compression"
    flags = ["--page-url", url] if page == "named url" else ["--same-page"]
    entry = {
        "command": sys.executable,
        "args": [str(WIKI), "--log", str(tmp_path / "calls.log"), *flags],
        "allowedTools": ["search_wiki"],
    }
    sources = McpSources.model_validate({"mcpServers": {"wiki": entry}})

    async def scenario():
        search = ToolSearch(sources, timeout=30)
        first = await search.search("zstd level", 5)
        second = await search.search("log archive compression", 5)
        await search.aclose()
        return first + second

    hits = asyncio.run(scenario())
    addresses = {hit.url for hit in hits}
    expected = url if page == "named url" else "mcp://wiki/search_wiki?query=zstd+level"
    assert [hit.url for hit in hits] == [expected, expected]
    results = [
        WorkerResult(
            subtask_id=n + 1,
            findings=[Finding(claim="zstd level 19", source_ids=[1])],
            sources=[SourceEvidence(id=1, url=hit.url, title=hit.title, excerpt=hit.content)],
        )
        for n, hit in enumerate(hits)
    ]
    assert len(SourceRegistry(results).sources) == 1 == len(addresses)


def test_an_mcp_locator_is_shown_as_text_in_every_export_never_as_a_link():
    """`mcp://` names no page a reader can open: Markdown, HTML and Word show it as text."""
    import io

    import docx
    from bs4 import BeautifulSoup

    from deep_research.domain.citations import sources_section
    from deep_research.export.document import build_document
    from deep_research.export.html_page import render_html
    from deep_research.export.word import render_docx

    from report_sample import sample_facts, sample_output

    output = sample_output()
    locator_url = "mcp://wiki/search_wiki?query=zstd+level"
    output["sources"] = [
        s.model_copy(update={"url": locator_url}) if s.number == 1 else s for s in output["sources"]
    ]
    document = build_document(output, sample_facts())
    soup = BeautifulSoup(render_html(document), "html.parser")
    assert locator_url in soup.select_one("#src-1").get_text()
    assert not [a for a in soup.find_all("a") if "mcp:" in a.get("href", "")]
    word = docx.Document(io.BytesIO(render_docx(document)))
    links = [r.target_ref for r in word.part.rels.values() if r.is_external]
    assert links and not any("mcp:" in link for link in links)
    markdown = sources_section(output["sources"], "en")
    assert f"`{locator_url}`" in markdown and f"]({locator_url})" not in markdown
