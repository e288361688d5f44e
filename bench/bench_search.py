"""Benchmark the web providers' adapters and whole-page reading against local stand-ins.

Run `python bench/bench_search.py --searches 100`. Each provider's stand-in answers at once,
so the figures are our side's cost per search (request building, parsing, paging), and what
`fetch_pages` adds: fetching, extracting and ranking the passages of the top hits' pages.
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

from deep_research.settings import Settings  # noqa: E402
from deep_research.tools.search.factory import search_backend  # noqa: E402

from stand_ins.bocha import BochaServer  # noqa: E402
from stand_ins.duckduckgo import DuckDuckGoServer  # noqa: E402
from stand_ins.pages import PageServer  # noqa: E402
from stand_ins.searxng import SearxngServer  # noqa: E402


async def timed(backend, queries: list[str], results: int) -> list[float]:
    """Milliseconds per search, one after another (no cache: every query is new)."""
    times = []
    for query in queries:
        start = time.perf_counter()
        hits = await backend.search(query, results)
        times.append((time.perf_counter() - start) * 1000)
        assert hits, query
    return times


def line(name: str, times: list[float]) -> str:
    """A result row: p50 and p95 in milliseconds."""
    p95 = statistics.quantiles(times, n=20)[-1]
    return f"{name:<38} p50 {statistics.median(times):7.2f} ms   p95 {p95:7.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--searches", type=int, default=100)
    parser.add_argument("--results", type=int, default=5)
    args = parser.parse_args()
    pages = PageServer().start()
    bocha, searxng, ddg = BochaServer().start(), SearxngServer().start(), DuckDuckGoServer().start()
    bocha.page_base = searxng.page_base = pages.url
    for server in (pages, bocha, searxng, ddg):  # headers and body leave in one go, no 40 ms
        server.server.RequestHandlerClass.disable_nagle_algorithm = True  # delayed-ACK stall
    os.environ.update(
        BOCHA_API_KEY=bocha.key,
        BOCHA_API_BASE_URL=bocha.url,
        SEARXNG_URL=searxng.url,
        DUCKDUCKGO_BASE_URL=ddg.url,
    )
    print(f"{args.searches} searches of {args.results} results each, stand-ins on loopback")
    for provider in ("bocha", "searxng", "duckduckgo"):
        queries = [f"{provider} query number {i}" for i in range(args.searches)]
        backend = search_backend(Settings(search_backend=provider))
        print(line(provider, asyncio.run(timed(backend, queries, args.results))))
    for fetch in (1, 3):
        settings = Settings(
            search_backend="bocha",
            fetch_pages=fetch,
            fetch_private_addresses=True,  # the stand-in site is on loopback
            max_page_fetches=1000,
        )
        queries = [f"page query {fetch} {i}" for i in range(args.searches)]
        times = asyncio.run(timed(search_backend(settings), queries, args.results))
        print(line(f"bocha + fetch_pages={fetch}", times))
    for server in (pages, bocha, searxng, ddg):
        server.stop()


if __name__ == "__main__":
    main()
