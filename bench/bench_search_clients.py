"""What a run spends building search clients, and what sharing them across runs saves.

    python bench/bench_search_clients.py --runs 20 --rounds 3

The loopback world (`tests/stand_ins/world.py`) runs in a child process (zero latency), so only
this process's CPU is counted. Two ways
of holding clients are compared in one invocation, rounds interleaved (the machine is shared):
"per run" gives every run a fresh `SearchClients` (what each run built before the clients became
the process's: its own client and so its own TLS context), "process-wide" hands every run the
same one (what `ProcessWide.search_clients` does now). Prints CPU ms per run for a run's search
backend plus one search, the same for a whole research run (16 subtasks), a cProfile figure
of the TLS-context share, and the cost of one TLS context (what a page fetch over https built
per connection before the fetcher was handed the process's).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from stand_ins.world import World  # noqa: E402

TLS_FUNCTIONS = ("load_verify_locations", "create_default_context", "create_ssl_context")


async def backend_and_search(runs: int, shared: bool) -> float:
    """CPU ms per run: build the run's backend, send one search (the client is built then)."""
    from deep_research.settings import Settings
    from deep_research.tools.search.clients import SearchClients
    from deep_research.tools.search.factory import search_backend

    settings = Settings(search_backend="tavily", search_retries=0)
    process_wide = SearchClients()
    await search_backend(settings, process_wide).search("warm-up", 3)
    started = time.process_time()
    for i in range(runs):
        clients = process_wide if shared else SearchClients()
        await search_backend(settings, clients).search(f"query {i}", 3)
    return 1000 * (time.process_time() - started) / runs


def tls_share(runs: int) -> tuple[float, float]:
    """cProfile of `runs` runs holding their own clients: ms per run in all, and in TLS setup."""
    profile = cProfile.Profile()
    profile.enable()
    asyncio.run(backend_and_search(runs, shared=False))
    profile.disable()
    stats = pstats.Stats(profile).stats  # {(file, line, name): (cc, nc, tt, ct, callers)}
    total = sum(tt for _, _, tt, _, _ in stats.values())
    tls = max(
        (ct for (_, _, name), (_, _, _, ct, _) in stats.items() if name in TLS_FUNCTIONS),
        default=0.0,
    )
    return 1000 * total / runs, 1000 * tls / runs


def one_tls_context(times: int = 20) -> float:
    """CPU ms to build one TLS context as httpx and httpcore do (CA bundle loaded)."""
    import httpx

    started = time.process_time()
    for _ in range(times):
        httpx.create_ssl_context()
    return 1000 * (time.process_time() - started) / times


async def whole_runs(runs: int, shared: bool) -> tuple[float, float]:
    """CPU ms per research run (16 subtasks, one round) and per model call."""
    from deep_research.graph import build_graph
    from deep_research.tools import process_wide
    from deep_research.tools.search.clients import SearchClients

    graph = build_graph()
    wide = {"max_iterations": 1, "min_iterations": 1, "max_workers": 16, "max_subtasks": 16}
    wide["fetch_private_addresses"] = True  # the world's pages are on loopback
    await graph.ainvoke({"question": "warm-up run", "settings": wide})
    calls, started = 0, time.process_time()
    for i in range(runs):
        if not shared:  # what each run had before: clients of its own
            process_wide.current().search_clients = SearchClients()
        output = await graph.ainvoke({"question": f"run {i}: zstd or xz", "settings": wide})
        calls += output["usage"].llm_calls
    cpu = 1000 * (time.process_time() - started)
    return cpu / runs, cpu / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per way (median kept)")
    parser.add_argument("--whole-runs", type=int, default=4, help="research runs per round")
    args = parser.parse_args()
    world = World(0, 0, subtasks=16).enter()
    small: dict[bool, list[float]] = {False: [], True: []}
    whole: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    try:
        for _ in range(args.rounds):
            for shared in (False, True):
                small[shared].append(asyncio.run(backend_and_search(args.runs, shared)))
                whole[shared].append(asyncio.run(whole_runs(args.whole_runs, shared)))
        profiled, tls = tls_share(args.runs)
        context_ms = one_tls_context()
    finally:
        world.stop()
    own, kept = statistics.median(small[False]), statistics.median(small[True])
    run_own = statistics.median(r for r, _ in whole[False])
    run_kept = statistics.median(r for r, _ in whole[True])
    call_own = statistics.median(c for _, c in whole[False])
    call_kept = statistics.median(c for _, c in whole[True])
    rows = [
        ("backend + 1 search, clients per run", f"{own:7.2f} ms/run"),
        ("backend + 1 search, process-wide", f"{kept:7.2f} ms/run"),
        ("  saved per run / ratio", f"{own - kept:7.2f} ms  ({kept / own:.2f}x)"),
        ("cProfile, clients per run: all / TLS", f"{profiled:7.2f} / {tls:.2f} ms/run"),
        ("one TLS context (httpx.create_ssl_context)", f"{context_ms:7.2f} ms"),
        ("whole run (16 subtasks), clients per run", f"{run_own:7.1f} ms/run"),
        ("whole run (16 subtasks), process-wide", f"{run_kept:7.1f} ms/run"),
        ("  saved per run / ratio", f"{run_own - run_kept:7.1f} ms  ({run_kept / run_own:.2f}x)"),
        ("  per model call, per run / process-wide", f"{call_own:7.2f} / {call_kept:.2f} ms"),
    ]
    width = max(len(label) for label, _ in rows)
    print(f"CPU of this process only, median of {args.rounds} interleaved rounds")
    for label, value in rows:
        print(f"{label:<{width}}  {value}")


if __name__ == "__main__":
    main()
