"""Benchmark a run against the stand-in servers: speed, fan-out, prompts, cache, checkpoints.

    python bench/bench_run.py --latency 0.5

Prints one table. Timings on a shared 2-core machine are noisy: compare the ratios of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from deep_research.domain.context import estimate_tokens  # noqa: E402
from deep_research.domain.distinct import text_key  # noqa: E402
from deep_research.graph import build_graph  # noqa: E402
from deep_research.tools.checkpoints import open_checkpointer  # noqa: E402

from stand_ins.chat import ChatServer  # noqa: E402
from stand_ins.search import SearchServer  # noqa: E402

QUESTION = "Compare zstd and xz for log archives"


def servers(latency: float, search_latency: float, subtasks: int, shared_query: bool):
    """Fresh stand-ins with the given latency, wired in through the environment."""
    chat, search = ChatServer().start(), SearchServer().start()
    chat.latency, search.latency = latency, search_latency
    chat.brain.subtasks, chat.brain.shared_query = subtasks, shared_query
    os.environ.update(
        OPENAI_BASE_URL=f"{chat.url}/v1",
        OPENAI_API_KEY="sk-bench",
        TAVILY_API_BASE_URL=search.url,
        TAVILY_API_KEY="tvly-bench",
        DEEP_RESEARCH_MODEL="stand-in",
    )
    return chat, search


def db_bytes(path: Path) -> int:
    """Bytes of checkpoints and pending writes stored so far (the payload, not SQLite's pages)."""
    with closing(sqlite3.connect(path)) as db:
        (checkpoints,) = db.execute("select coalesce(sum(length(checkpoint)), 0) from checkpoints")
        (writes,) = db.execute("select coalesce(sum(length(value)), 0) from writes")
    return checkpoints[0] + writes[0]


def file_bytes(path: Path) -> int:
    """The store's size on disk, WAL included."""
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


async def one_run(settings: dict, chat: ChatServer, db: Path | None = None) -> dict:
    """Run once; per round (at each quality review): model calls, prompt tokens, store bytes."""
    rounds: list[dict] = []
    final: dict = {}
    started = time.perf_counter()
    config = {"configurable": {"thread_id": "bench"}}

    async def stream(graph) -> None:
        async for mode, event in graph.astream(
            {"question": QUESTION, "settings": settings}, config, stream_mode=["custom", "values"]
        ):
            if mode == "values":
                final.update(event)
            elif event.get("event") == "quality":
                rounds.append(
                    {
                        "calls": chat.answered,
                        "prompt_tokens": chat.prompt_tokens,
                        "bytes": db_bytes(db) if db else 0,
                    }
                )

    if db is None:
        await stream(build_graph())
    else:
        async with open_checkpointer(str(db)) as saver:
            await stream(build_graph(checkpointer=saver))
    return {"seconds": time.perf_counter() - started, "rounds": rounds, "output": final}


def per_round(rounds: list[dict], key: str) -> list[int]:
    """Deltas of a cumulative counter between reviews."""
    values = [r[key] for r in rounds]
    return [b - a for a, b in zip([0, *values], values, strict=False)]


def show(rows: list[tuple[str, str]], latency: float, search_latency: float) -> None:
    """The table."""
    width = max(len(label) for label, _ in rows)
    print(f"latency: model {latency} s, search {search_latency} s")
    for label, value in rows:
        print(f"{label:<{width}}  {value}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per model call")
    parser.add_argument("--search-latency", type=float, default=0.2, help="seconds per search")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing (median kept)")
    parser.add_argument("--wide", type=int, default=8, help="subtasks of the wide fan-out run")
    parser.add_argument("--fan-out-only", action="store_true", help="only the 1 vs --wide rows")
    args = parser.parse_args()
    fast = {"model_retries": 0, "search_retries": 0}
    wide = args.wide
    one_round = {**fast, "max_iterations": 1, "min_iterations": 1, "max_workers": wide}
    one_round["max_subtasks"] = max(8, wide)
    one_round["max_concurrent_model_calls"] = max(16, wide)  # the fan-out, not the cap, measured
    one_round["max_concurrent_searches"] = max(16, 2 * wide)
    rows: list[tuple[str, str]] = []

    # 1. Fan-out: `--wide` subtasks (8) against 1, same latency, one round.
    timings = {}
    for n in (1, wide):
        runs = []
        for _ in range(args.repeat):
            chat, search = servers(args.latency, args.search_latency, n, False)
            runs.append(asyncio.run(one_run(one_round, chat))["seconds"])
            peak = (chat.peak_concurrency, search.peak_concurrency)
            chat.stop(), search.stop()
        timings[n] = statistics.median(runs)
        rows.append(
            (f"wall time, {n} subtask(s), 1 round", f"{timings[n]:.2f} s (median of {len(runs)})")
        )
    rows.append((f"ratio {wide} subtasks / 1", f"{timings[wide] / timings[1]:.3f}"))
    rows.append((f"peak concurrency, {wide} subtasks (model, search)", f"{peak[0]}, {peak[1]}"))

    if args.fan_out_only:
        show(rows, args.latency, args.search_latency)
        return
    # 2. A three-round run with a checkpointer: per-round calls, prompt tokens, store growth.
    chat, search = servers(args.latency / 5, args.search_latency / 5, 6, True)
    chat.brain.scores = [50, 60, 70]
    settings = {**fast, "max_iterations": 3, "min_iterations": 3, "max_workers": 8}
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "bench.sqlite"
        result = asyncio.run(one_run(settings, chat, db))
        on_disk = file_bytes(db)
    calls, tokens = (
        per_round(result["rounds"], "calls"),
        per_round(result["rounds"], "prompt_tokens"),
    )
    growth = per_round(result["rounds"], "bytes")
    rows.append(
        ("model calls per round (+ after last review)", f"{calls} (+{chat.answered - sum(calls)})")
    )
    rows.append(("prompt tokens per round (server count)", str(tokens)))
    rows.append(("total model calls / prompt tokens", f"{chat.answered} / {chat.prompt_tokens}"))
    largest = max(
        estimate_tokens("".join(str(m["content"]) for m in r["body"]["messages"]))
        for r in chat.chat_requests
    )
    rows.append(("largest prompt (our estimate) / max_context_tokens", f"{largest:,} / 100,000"))
    sent = [r["body"]["query"] for r in search.requests]
    unique = {text_key(q) for q in sent}
    hits = result["output"]["usage"].search_cache_hits
    rows.append(
        (
            "searches asked / sent / unique / cache hits",
            f"{len(sent) + hits} / {len(sent)} / {len(unique)} / {hits}",
        )
    )
    rows.append(("checkpoint payload per round (bytes)", str(growth)))
    rows.append(("SQLite file after 3 rounds, WAL included (bytes)", f"{on_disk:,}"))
    chat.stop(), search.stop()

    # 3. Orchestration overhead: zero latency, per model call.
    chat, search = servers(0, 0, 8, False)
    result = asyncio.run(one_run(one_round, chat))
    rows.append(
        (
            "overhead per model call at zero latency",
            f"{1000 * result['seconds'] / chat.answered:.1f} ms ({chat.answered} calls, "
            f"{result['seconds']:.2f} s)",
        )
    )
    chat.stop(), search.stop()

    show(rows, args.latency, args.search_latency)
    print(json.dumps({f"ratio_{wide}_vs_1": round(timings[wide] / timings[1], 3)}))


if __name__ == "__main__":
    main()
