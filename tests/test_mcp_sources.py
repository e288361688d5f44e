"""MCP servers as sources (`--mcp-config`): allowed tools answer beside web search, and are cited.

A stand-in MCP server written with the SDK (tests/stand_ins/mcp_wiki.py) plays an internal wiki
over stdio and over streamable HTTP; one server never starts and one dies at its first call,
and the run goes on with the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

pytest.importorskip("mcp", reason="the MCP extra is not installed")

ROOT = Path(__file__).resolve().parents[1]
WIKI = ROOT / "tests" / "stand_ins" / "mcp_wiki.py"


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def wiki_over_http(log: Path):
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            str(WIKI),
            "--log",
            str(log),
            "--http-port",
            str(port),
            "--name",
            "tickets",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.TransportError):
            httpx.get(url, timeout=1)
            break
        time.sleep(0.1)
    try:
        yield url
    finally:
        process.terminate()
        process.wait(10)


def processes_with(argument: str) -> list[int]:
    """The PIDs whose command line has `argument` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if argument.encode() in (entry / "cmdline").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
    return found


def calls(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_allowed_mcp_tools_are_cited_others_never_called_and_failed_servers_leave_the_run_going(
    chat_server, search_server, tmp_path, capfd
):
    from deep_research.cli.main import main

    logs = {name: tmp_path / f"{name}.log" for name in ("wiki", "tickets", "dying")}

    def a_finding_per_evidence_item(call):  # the stand-in model keeps every item, not three
        findings = [{"claim": f"Finding {i}", "source_ids": [i]} for i in call.evidence_ids()]
        return {"findings": findings, "summary": "Summary.", "gaps": [], "confidence": 0.8}

    chat_server.brain.on_WorkerFindings = a_finding_per_evidence_item
    marker = f"3600.{uuid.uuid4().int % 10**9}"  # a server that never answers `initialize`
    with wiki_over_http(logs["tickets"]) as tickets_url:
        config = {
            "mcpServers": {
                "wiki": {
                    "command": sys.executable,
                    "args": [str(WIKI), "--log", str(logs["wiki"])],
                    "allowedTools": ["search_wiki"],
                },
                "tickets": {"url": tickets_url, "allowedTools": ["search_wiki"]},
                "broken": {
                    "command": sys.executable,
                    "args": ["-c", "import sys; sys.exit(3)"],
                    "allowedTools": ["search_wiki"],
                },
                "stalling": {
                    "command": "sleep",
                    "args": [marker],
                    "allowedTools": ["search"],
                    "startupTimeout": 1,  # it never starts: no need to wait long
                },
                "dying": {
                    "command": sys.executable,
                    "args": [str(WIKI), "--log", str(logs["dying"]), "--die-on-call"],
                    "allowedTools": ["search_wiki"],
                },
            }
        }
        config_file = tmp_path / "mcp.json"
        config_file.write_text(json.dumps(config))
        out = tmp_path / "out.json"
        code = main(
            [
                *("run", "Compare zstd and xz"),
                *("--mcp-config", str(config_file), "--json", str(out)),
                *("--max-iterations", "1", "--min-iterations", "1", "--max-workers", "1"),
                *("--checkpoint-db", str(tmp_path / "runs.sqlite"), "--set", "search_timeout=10"),
                *("--thread-id", "with-tools"),
            ]
        )
    errors = capfd.readouterr().err
    assert code == 0, errors
    assert processes_with(marker) == []  # stopped when the run ended, not left running
    output = json.loads(out.read_text())
    urls = {s["url"]: s["number"] for s in output["sources"]}
    body = output["report"].split("## Sources")[0]
    for server in ("wiki", "tickets"):
        cited = [n for url, n in urls.items() if url.startswith(f"mcp://{server}/search_wiki?")]
        assert cited, (server, urls, errors)
        assert all(f"[{n}]" in body or re.search(rf"\[[\d, ]*\b{n}\b", body) for n in cited)
    assert any(url.startswith("https://example.com/") for url in urls)  # the web went on too
    assert {c["tool"] for c in calls(logs["wiki"]) + calls(logs["tickets"])} == {"search_wiki"}
    assert len(calls(logs["dying"])) == 1  # it died at its first call and was not asked again
    assert "source failed, the run goes on without it: mcp:broken" in errors
    assert "mcp:dying" in errors
    tool_ids = {s["id"] for s in output["sources"] if s["url"].startswith("mcp://")}
    checked = [c for c in output["citations"] if c["source_id"] in tool_ids]
    assert checked and all(c["verdict"] == "supported" for c in checked)  # checked like any other
    judged = [json.dumps(r["body"]) for r in chat_server.chat_requests]
    judged = [body for body in judged if "PairVerdicts" in body]
    for fact in ("zstd level 19", "OPS-812"):  # the check read the tool's own text, fenced
        assert any(re.search(rf"<data>[^<]*{fact}", body) for body in judged), fact
    kept = asyncio.run(kept_answers(str(tmp_path / "runs.sqlite"), "with-tools"))
    assert kept and all(kind == "tool" for kind, _ in kept)  # each tool answer kept whole
    assert any("OPS-812" in text for _, text in kept)


async def kept_answers(db: str, thread: str) -> list[tuple[str, str]]:
    """The kinds and texts a run kept of its MCP sources."""
    from deep_research.tools.evidence.store import EvidenceStore

    async with EvidenceStore(db) as store:
        rows = [row for row in await store.kept(thread) if row.read.url.startswith("mcp://")]
        return [(row.read.kind, await store.text(row.stored_sha256) or "") for row in rows]


def test_a_bad_mcp_config_is_refused_before_any_call(chat_server, search_server, tmp_path, capsys):
    from deep_research.cli.main import main

    config_file = tmp_path / "mcp.json"
    config_file.write_text(json.dumps({"mcpServers": {"wiki": {"allowedTools": ["x"]}}}))
    code = main(
        [
            *("run", "Compare zstd and xz", "--mcp-config", str(config_file)),
            *("--checkpoint-db", str(tmp_path / "r.sqlite")),
        ]
    )
    errors = capsys.readouterr().err
    assert code == 2
    assert "mcpServers.wiki" in errors and "command" in errors
    assert chat_server.chat_requests == []


def test_a_dropped_tool_search_closes_its_servers(tmp_path):
    import asyncio
    import gc
    import weakref

    from deep_research.tools.mcp_config import McpSources
    from deep_research.tools.search.tool_sources import ToolSearch

    log = tmp_path / "wiki.log"
    sources = McpSources.model_validate(
        {
            "mcpServers": {
                "wiki": {
                    "command": sys.executable,
                    "args": [str(WIKI), "--log", str(log)],
                    "allowedTools": ["search_wiki"],
                }
            }
        }
    )

    async def scenario():
        search = ToolSearch(sources, timeout=10)
        hits = await search.search("zstd", 5)
        holder = search.connections[0]._task
        dropped = weakref.ref(search)
        del search
        gc.collect()  # the run's resources are gone: its backend with them
        assert dropped() is None, gc.get_referrers(dropped())
        await asyncio.wait_for(holder, 30)
        return hits, holder

    hits, holder = asyncio.run(scenario())
    assert [hit.url for hit in hits] == ["mcp://wiki/search_wiki?query=zstd"]
    assert "zstd level 19" in hits[0].content
    assert holder.done() and not holder.cancelled()  # it ended by itself, closing the server
