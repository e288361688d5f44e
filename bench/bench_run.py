"""Benchmark a run against a loopback world: fan-out, the chain of dependent calls, prompts, cache.

    python bench/bench_run.py --latency 0.5 --wide 32

The world (model, search, and the pages its results name: `tests/stand_ins/world.py`) runs in
a child process and never leaves loopback. Runs use the default settings (tool workers on),
with the fan-out's own limits (`max_workers`, `max_subtasks`, calls and searches in flight,
page reads) raised to its width, so that the width, not a cap, is measured. A worker's pages
are drawn from the run's budget (`max_page_fetches`): one subtask alone may read what 32 share;
`--pages-per-worker` caps each worker (`max_pages`), so that both widths do the same work per
worker.

For each run the world's timeline gives the chain of dependent requests (`critical_path`):
its depth (model calls one after another) and its servers' seconds, the lower bound of the
wall time. The first run of the process pays what a process pays once (imports excluded:
the language model, each endpoint's context-window probes); it is shown apart. Timings on a
shared 2-core machine are noisy: compare the ratios of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from stand_ins.world import World, critical_path  # noqa: E402

QUESTION = "Compare zstd and xz for log archives"
FAST = {"model_retries": 0, "search_retries": 0, "fetch_private_addresses": True}


def fan_out_settings(wide: int, pages: int | None = None) -> dict:
    """Defaults, one round, and the fan-out's limits raised to its width (the endpoint's too:
    `raise_endpoint_cap`); each worker's pages capped at `pages` when given."""
    return {
        **({} if pages is None else {"max_pages": pages}),
        **FAST,
        "max_iterations": 1,
        "min_iterations": 1,
        "max_workers": wide,
        "max_subtasks": max(8, wide),
        "max_concurrent_model_calls": max(16, 4 * wide),  # a worker quotes 3 pages at once
        "max_concurrent_searches": max(16, 2 * wide),
        "max_page_fetches": max(30, 4 * wide),
    }


def raise_endpoint_cap(wide: int) -> None:
    """Tell the engine the model server and the search service take the fan-out's calls at
    once (a worker quotes up to 3 pages at once, and sends 2 queries), as hosted providers do;
    the default caps (32 in flight each) would measure the caps, not the fan-out."""
    os.environ["DEEP_RESEARCH_ENDPOINT_MAX_CONCURRENT_MODEL_CALLS"] = str(max(32, 4 * wide))
    os.environ["DEEP_RESEARCH_ENDPOINT_MAX_CONCURRENT_SEARCHES"] = str(max(32, 2 * wide))


async def one_run(graph, settings: dict, world: World, question: str = QUESTION) -> dict:
    """One run: wall seconds, per round (at each review) the world's counts, and the output."""
    rounds: list[dict] = []
    final: dict = {}
    started = time.perf_counter()
    async for mode, event in graph.astream(
        {"question": question, "settings": settings}, stream_mode=["custom", "values"]
    ):
        if mode == "values":
            final.update(event)
        elif event.get("event") == "quality":
            rounds.append(await asyncio.to_thread(world.stats))
    return {"seconds": time.perf_counter() - started, "rounds": rounds, "output": final}


def timed(graph, world: World, subtasks: int, settings: dict) -> dict:
    """One run of `subtasks` on a reset world: wall, chain depth and bound, calls."""
    world.reset()
    world.configure(subtasks=subtasks)
    result = asyncio.run(one_run(graph, settings, world))
    chain = critical_path(world.timeline())
    stats = world.stats()
    return {
        "seconds": result["seconds"],
        "depth": chain.depth,
        "bound": chain.seconds,
        "calls": stats["answered"],
        "model_peak": stats["model_peak"],
        "search_peak": stats["search_peak"],
    }


def fan_out(
    world: World, wide: int, repeat: int, pages: int | None = None
) -> list[tuple[str, str]]:
    """1 subtask against `wide`, same world, one round: wall, chain, ratio to its bound."""
    from deep_research.graph import build_graph

    graph = build_graph()
    settings = fan_out_settings(wide, pages)
    raise_endpoint_cap(wide)
    cold = timed(graph, world, 1, settings)  # the process's first run
    rows = [
        (
            "first run of the process, 1 subtask",
            f"{cold['seconds']:.2f} s, chain {cold['depth']} calls, bound {cold['bound']:.2f} s, "
            f"ratio {cold['seconds'] / cold['bound']:.3f}",
        )
    ]
    runs: dict[int, list[dict]] = {1: [], wide: []}
    for _ in range(repeat):  # alternated, so that both see the same load
        for n in (1, wide):
            runs[n].append(timed(graph, world, n, settings))
    median = {n: statistics.median(r["seconds"] for r in runs[n]) for n in runs}
    for n in (1, wide):
        depths = sorted({r["depth"] for r in runs[n]})
        ratios = [r["seconds"] / r["bound"] for r in runs[n]]
        rows.append(
            (
                f"wall time, {n} subtask(s), 1 round",
                f"{median[n]:.2f} s (median of {repeat}; {runs[n][0]['calls']} model calls)",
            )
        )
        rows.append(
            (
                f"chain of dependent model calls, {n} subtask(s)",
                f"{'/'.join(map(str, depths))} deep, lower bound "
                f"{statistics.median(r['bound'] for r in runs[n]):.2f} s",
            )
        )
        rows.append(
            (
                f"wall / lower bound, {n} subtask(s)",
                f"{statistics.median(ratios):.3f} (worst {max(ratios):.3f})",
            )
        )
    rows.append((f"ratio {wide} subtasks / 1", f"{median[wide] / median[1]:.3f}"))
    last = runs[wide][-1]
    rows.append(
        (f"peak in flight, {wide} subtasks (model, search)", f"{last['model_peak']}, "
         f"{last['search_peak']}")
    )  # fmt: skip
    return rows


def per_round(rounds: list[dict], key: str) -> list[int]:
    """Deltas of a cumulative counter between reviews."""
    values = [r[key] for r in rounds]
    return [b - a for a, b in zip([0, *values], values, strict=False)]


def three_rounds(world: World) -> list[tuple[str, str]]:
    """A three-round run: per-round calls and prompt tokens, searches and the cache."""
    from deep_research.graph import build_graph

    world.reset()
    world.configure(subtasks=6, shared_query=True, scores=[50, 60, 70])
    settings = {**FAST, "max_iterations": 3, "min_iterations": 3, "max_workers": 8}
    result = asyncio.run(one_run(build_graph(), settings, world))
    world.configure(shared_query=False)
    stats = world.stats()
    calls, tokens = (
        per_round(result["rounds"], "answered"),
        per_round(result["rounds"], "prompt_tokens"),
    )
    sent = stats["queries"]
    hits = result["output"]["usage"].search_cache_hits
    unique = {" ".join(q.casefold().split()) for q in sent}
    after = stats["answered"] - sum(calls)
    return [
        ("model calls per round (+ after last review)", f"{calls} (+{after})"),
        ("prompt tokens per round (server count)", str(tokens)),
        ("total model calls / prompt tokens", f"{stats['answered']} / {stats['prompt_tokens']}"),
        (
            "searches asked / sent / unique / cache hits",
            f"{len(sent) + hits} / {len(sent)} / {len(unique)} / {hits}",
        ),
    ]  # fmt: skip


def overhead(world: World, wide: int) -> list[tuple[str, str]]:
    """Wall and CPU of this process per model call, at zero latency."""
    from deep_research.graph import build_graph

    world.reset()
    world.configure(latency=0, search_latency=0, subtasks=wide)
    graph = build_graph()
    cpu = time.process_time()
    result = asyncio.run(one_run(graph, fan_out_settings(wide), world))
    cpu = time.process_time() - cpu
    calls = world.stats()["answered"]
    return [
        (
            f"per model call at zero latency, {wide} subtasks",
            f"{1000 * result['seconds'] / calls:.1f} ms wall, {1000 * cpu / calls:.1f} ms CPU "
            f"({calls} calls)",
        )
    ]


def show(rows: list[tuple[str, str]], args: argparse.Namespace) -> None:
    """The table."""
    width = max(len(label) for label, _ in rows)
    pages = args.pages_per_worker
    print(
        f"latency: model {args.latency} s, search {args.search_latency} s; pages a worker: "
        + ("its share of the run's" if pages is None else f"at most {pages}")
    )
    for label, value in rows:
        print(f"{label:<{width}}  {value}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per model call")
    parser.add_argument("--search-latency", type=float, default=0.2, help="seconds per search")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing (median kept)")
    parser.add_argument("--wide", type=int, default=32, help="subtasks of the wide fan-out run")
    parser.add_argument("--fan-out-only", action="store_true", help="only the 1 vs --wide rows")
    parser.add_argument(
        "--pages-per-worker", type=int, help="cap each worker's pages (default: its share)"
    )
    args = parser.parse_args()
    world = World(args.latency, args.search_latency).enter()
    try:
        rows = fan_out(world, args.wide, args.repeat, args.pages_per_worker)
        if not args.fan_out_only:
            world.configure(latency=args.latency / 5, search_latency=args.search_latency / 5)
            rows += three_rounds(world)
            rows += overhead(world, args.wide)
    finally:
        world.stop()
    show(rows, args)


if __name__ == "__main__":
    main()
