"""Ten runs under injected faults: how many complete, how many retries, what the fallbacks cost.

    python bench/bench_faults.py --runs 10 --rate 0.15

Each run gets model and search failures (HTTP 500 and 429), slow answers, and broken JSON in
structured replies, each drawn with a seeded random generator. "Extra model calls" are answered
calls beyond a fault-free run of the same question: the re-asks and fallbacks.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from bench_run import QUESTION  # noqa: E402

from deep_research.graph import build_graph  # noqa: E402

from stand_ins.chat import ChatServer  # noqa: E402
from stand_ins.faults import Faults  # noqa: E402
from stand_ins.search import SearchServer  # noqa: E402
from stand_ins.world import Articles, environment, pages_for  # noqa: E402

SETTINGS = {
    "fetch_private_addresses": True,  # the stand-ins' pages are on loopback
    "max_iterations": 2,
    "min_iterations": 2,
    "model_retries": 4,
    "search_retries": 4,
    "request_idle_timeout": 2,
}


def servers() -> tuple[ChatServer, SearchServer, Articles]:
    """Fresh stand-ins in this process (faults are set on them), wired in through the
    environment; search results name pages of the page stand-in, on loopback."""
    chat, search, pages = ChatServer().start(), SearchServer().start(), Articles().start()
    chat.latency, search.latency, chat.brain.subtasks = 0.02, 0.01, 4
    pages_for(search, pages)
    os.environ.update(environment(chat.url, search.url))
    return chat, search, pages


def run_once(seed: int, rate: float) -> dict:
    """One run with faults at `rate` (0 for the baseline); its outcome and the servers' counts."""
    chat, search, pages = servers()
    if rate:
        chat.fault = Faults(
            seed, error_rate=rate / 2, limit_rate=rate / 4, slow_rate=rate / 4, slow_seconds=2.5
        )
        search.fault = Faults(seed + 1000, error_rate=rate / 2, limit_rate=rate / 4)
        broken = random.Random(seed + 2000)
        chat.reply_wrapper = lambda text, call: (
            text[: len(text) // 2] if call.contract and broken.random() < rate else text
        )
    try:
        output = asyncio.run(build_graph().ainvoke({"question": QUESTION, "settings": SETTINGS}))
        outcome = output["stop_reason"]
    except Exception as error:  # a benchmark tallies failures instead of stopping at the first
        outcome = f"failed: {type(error).__name__}"
    chat.stop(), search.stop(), pages.stop()
    retried = [r for r in chat.requests + search.requests if r["status"] >= 429]
    injected = chat.fault.injected + search.fault.injected if rate else {}
    return {
        "outcome": outcome,
        "answered": chat.answered,
        "retries": len(retried),
        "slow": injected.get("slow", 0) if injected else 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rate", type=float, default=0.15, help="share of requests that fail")
    args = parser.parse_args()
    baseline = run_once(0, 0.0)["answered"]
    results = [run_once(seed, args.rate) for seed in range(1, args.runs + 1)]
    completed = [r for r in results if not r["outcome"].startswith("failed")]
    print(f"fault rate {args.rate:.0%}, {args.runs} runs, fault-free run: {baseline} model calls")
    for seed, r in enumerate(results, 1):
        print(
            f"  run {seed:>2}: {r['outcome']:<20} retries {r['retries']:>3}  "
            f"slow {r['slow']:>2}  extra model calls {r['answered'] - baseline:>3}"
        )
    print(
        f"completed {len(completed)}/{len(results)}; retries {sum(r['retries'] for r in results)}; "
        f"timeouts retried {sum(r['slow'] for r in results)}; extra model calls "
        f"{sum(r['answered'] - baseline for r in completed)}"
    )


if __name__ == "__main__":
    main()
