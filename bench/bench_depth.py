"""Benchmark research depth: planted facts that reach the writer and the report (issue 29).

    python bench/bench_depth.py [--topics 4] [--json FILE]

An offline world on loopback (`tests/stand_ins/depth_world.py`): per topic a fact deep in an
article's body (past its snippet) and one on an appendix only that article links to (two hops),
plus one fact only an MCP tool knows. The stand-in model researches faithfully and writes
faithfully, so what the workers bring back is what is measured. Each configuration runs the
whole graph once (one round) through the real clients: the fixed search loop as it is by default,
the fixed loop reading pages (`fetch_pages` 3), and, when this branch has workers that choose
their tools (the `worker_tools` setting), the new worker. It prints one table, side by side:
facts in the writer's prompts, facts in the final report correctly cited, report words and
sections, model calls, tokens, searches, page reads.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from deep_research.graph import build_graph  # noqa: E402
from deep_research.settings import Settings  # noqa: E402

from stand_ins.chat import ChatServer  # noqa: E402
from stand_ins.depth_world import DepthBrain, DepthPages, DepthSearch, planted  # noqa: E402

WIKI = ROOT / "tests" / "stand_ins" / "mcp_wiki.py"
KINDS = ("body", "two_hop", "mcp")


def configurations() -> dict[str, dict]:
    """The workers compared: those this branch has."""
    fixed = {"worker_tools": "off"} if "worker_tools" in Settings.model_fields else {}
    found = {
        "fixed loop": fixed,
        "fixed + fetch_pages 3": {**fixed, "fetch_pages": 3},
    }
    if "worker_tools" in Settings.model_fields:
        found["tool worker"] = {"worker_tools": "auto"}
    return found


def writer_prompts(chat: ChatServer) -> str:
    """Every writer request's messages (outline and sections), as one text."""
    texts = [json.dumps(r["body"]["messages"], ensure_ascii=False) for r in chat.chat_requests]
    return "\n".join(t for t in texts if "Section: " in t or "ReportOutline" in t)


def correctly_cited(report: str, sources: list, token: str, home: str) -> bool:
    """True when a sentence of the report states `token` and cites the page that holds it."""
    url_of = {s.number: s.url for s in sources}
    for line in report.splitlines():
        if token not in line:
            continue
        cited = [url_of.get(int(n), "") for n in re.findall(r"\[(\d+)\]", line)]
        if any(
            url.startswith("mcp://") if home == "mcp://" else url.endswith(home) for url in cited
        ):
            return True
    return False


async def one_run(name: str, extra: dict, topics: int, workdir: Path) -> dict:
    """One whole run in a fresh world; the row of the table."""
    pages = DepthPages(topics).start()
    search = DepthSearch(pages.url, topics).start()
    chat = ChatServer(DepthBrain(topics)).start()
    os.environ.update(
        OPENAI_BASE_URL=f"{chat.url}/v1",
        OPENAI_API_KEY="sk-bench",
        TAVILY_API_BASE_URL=search.url,
        TAVILY_API_KEY="tvly-bench",
        DEEP_RESEARCH_MODEL="stand-in",
        XDG_DATA_HOME=str(workdir / "xdg"),
    )
    mcp = workdir / "mcp.json"
    log = workdir / f"{name.replace(' ', '_')}.log"
    server = {
        "command": sys.executable,
        "args": [str(WIKI), "--name", "tickets", "--log", str(log)],
    }
    mcp.write_text(
        json.dumps({"mcpServers": {"tickets": {**server, "allowedTools": ["search_wiki"]}}})
    )
    settings = {
        "search_backend": "tavily",
        "max_iterations": 1,
        "min_iterations": 1,
        "fetch_private_addresses": True,  # the world is on loopback
        "mcp_config": str(mcp),
        "model_retries": 0,
        "search_retries": 0,
        **extra,
    }
    started = time.perf_counter()
    try:
        result = await build_graph().ainvoke(
            {"question": "What is measured about these materials?", "settings": settings}
        )
        prompts = writer_prompts(chat)
    finally:
        for stand_in in (chat, search, pages):
            stand_in.stop()
    report, sources, usage = result["report"], result["sources"], result["usage"]
    row = {"worker": name, "seconds": round(time.perf_counter() - started, 1)}
    for kind in KINDS:
        facts = [f for f in planted(topics) if f.kind == kind]
        row[f"{kind} in prompt"] = f"{sum(f.token in prompts for f in facts)}/{len(facts)}"
        cited = sum(correctly_cited(report, sources, f.token, f.path) for f in facts)
        row[f"{kind} in report"] = f"{cited}/{len(facts)}"
    body = report.split("\n## Sources")[0]
    row |= {
        "report words": len(body.split()),
        "sections": len(re.findall(r"^## ", body, re.M)),
        "model calls": usage.llm_calls,
        "tokens": usage.total_tokens,
        "searches": usage.search_calls,
        "page reads": sum(1 for p in pages.served if p.startswith("/t")),
        "citations checked": len(result.get("citations") or []),
        "citation precision": result.get("citation_precision"),
    }
    return row


def table(rows: list[dict]) -> str:
    """The rows side by side: one column per worker."""
    names = [row["worker"] for row in rows]
    keys = [k for k in rows[0] if k != "worker"]
    width = max(len(k) for k in keys) + 2
    cells = [[str(row[k]) for row in rows] for k in keys]
    col = max(len(c) for c in [*names, *(x for line in cells for x in line)]) + 2
    lines = ["".ljust(width) + "".join(n.rjust(col) for n in names)]
    lines += [
        k.ljust(width) + "".join(c.rjust(col) for c in line)
        for k, line in zip(keys, cells, strict=True)
    ]
    return "\n".join(lines)


async def main() -> None:
    """Run every configuration and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=4, choices=range(1, 5))
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name, extra in configurations().items():
            rows.append(await one_run(name, extra, args.topics, Path(folder)))
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
