"""Benchmark many concurrent runs in one process against a loopback world with a fixed latency.

    python bench/bench_concurrency.py --runs 16,64 --latency 0.2

For each N, a fresh child process runs N research runs at once through `graph.ainvoke` (each
with its own `max_search_calls` budget, the default settings otherwise: tool workers on) while
the world (`tests/stand_ins/world.py`: model, search and the pages its results name, all on
loopback) runs in another process, so that neither's CPU or memory is counted as the other's.
The model stand-in refuses requests beyond `--server-rps` per second with 429 and
`Retry-After: 1`, like a provider's rate limit.

Prints one row per N: runs finished and failed, wall time, model calls, the child's CPU per
model call, its worst event-loop stall (how late a 10 ms timer fired at worst), the garbage
collector's full collections (how many, and the longest), peak requests in flight at each
server, 429s, the child's peak memory, and whether every run's search budget held. Timings
on a shared 2-core machine are noisy: compare the rows of one invocation.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from stand_ins.world import World  # noqa: E402

SEARCH_BUDGET = 6
QUESTION = "Run {:03d}: compare zstd and xz for log archives"
TICK = 0.01  # seconds between the stall watcher's timers
SETTINGS = {
    "max_iterations": 2,
    "min_iterations": 1,
    "max_search_calls": SEARCH_BUDGET,
    "search_retries": 0,
    "fetch_private_addresses": True,  # the world's pages are on loopback
}


async def watch_stalls(worst: list[float]) -> None:
    """Keep `worst[0]` as the longest the event loop made a `TICK` timer wait past its time."""
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + TICK
        await asyncio.sleep(TICK)
        worst[0] = max(worst[0], loop.time() - due)


class FullCollections:
    """The garbage collector's full collections while it is on: how many, the longest (each
    one stops the event loop for its whole length)."""

    def __init__(self) -> None:
        self.count, self.longest, self._started = 0, 0.0, 0.0

    def __enter__(self) -> FullCollections:
        gc.callbacks.append(self._seen)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._seen)

    def _seen(self, phase: str, info: dict) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.count += 1
            self.longest = max(self.longest, time.perf_counter() - self._started)


async def research_all(graph, n: int) -> dict:
    """N runs at once on one event loop: wall and CPU seconds, worst stall, each run's output
    (or the error it raised)."""
    worst = [0.0]
    watcher = asyncio.create_task(watch_stalls(worst))
    started, cpu = time.perf_counter(), time.process_time()
    outputs = await asyncio.gather(
        *(graph.ainvoke({"question": QUESTION.format(i), "settings": SETTINGS}) for i in range(n)),
        return_exceptions=True,
    )
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    watcher.cancel()
    return {"seconds": seconds, "cpu": cpu, "stall": worst[0], "outputs": outputs}


def run_batch(n: int) -> None:
    """Child process: N runs at once; print the figures as one JSON line. The graph is
    imported and built first, as a server does at its start."""
    from deep_research.graph import build_graph

    graph = build_graph()
    with FullCollections() as collections:
        done = asyncio.run(research_all(graph, n))
    outputs = [out for out in done["outputs"] if isinstance(out, dict)]
    errors = [repr(out)[:200] for out in done["outputs"] if not isinstance(out, dict)]
    calls = sum(out["usage"].llm_calls for out in outputs)
    print(
        json.dumps(
            {
                "seconds": done["seconds"],
                "cpu_ms_per_call": 1000 * done["cpu"] / max(calls, 1),
                "stall_ms": 1000 * done["stall"],
                "full_collections": collections.count,
                "longest_full_ms": 1000 * collections.longest,
                "finished": sum(1 for out in outputs if out.get("report")),
                "failed": n - sum(1 for out in outputs if out.get("report")),
                "errors": errors[:3],
                "llm_calls": calls,
                "searches": [out["usage"].search_calls for out in outputs],
                "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        ),
        flush=True,
    )


def one_row(n: int, args: argparse.Namespace) -> dict:
    """A fresh world and a fresh child for N runs; collect what both saw."""
    world = World(
        args.latency,
        args.search_latency,
        rps=args.server_rps,
        subtasks=4,
        chunk_chars=args.chunk_chars,
    )
    try:  # 4 subtasks: 8 first-round queries per run, above its search budget
        env = {
            **os.environ,
            **world.environment(),
            "DEEP_RESEARCH_ENDPOINT_MAX_CONCURRENT_MODEL_CALLS": str(args.max_model_concurrency),
        }
        if args.model_rpm:
            env["DEEP_RESEARCH_ENDPOINT_MODEL_CALLS_PER_MINUTE"] = str(args.model_rpm)
        child = subprocess.run(
            [sys.executable, __file__, "--one", str(n)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        figures = json.loads(child.stdout.strip().splitlines()[-1])
        stats = world.stats()
    finally:
        world.stop()
    per_run = [
        sum(1 for q in stats["queries"] if q.startswith(QUESTION.format(i))) for i in range(n)
    ]
    held = max(per_run) <= SEARCH_BUDGET and max(figures["searches"]) <= SEARCH_BUDGET
    return {"runs": n, **figures, "stats": stats, "held": held}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="16,64", help="comma-separated counts of runs")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model call")
    parser.add_argument("--search-latency", type=float, default=0.1, help="seconds per search")
    parser.add_argument("--max-model-concurrency", type=int, default=16)
    parser.add_argument(
        "--model-rpm", type=float, default=0, help="DEEP_RESEARCH_ENDPOINT_MODEL_CALLS_PER_MINUTE"
    )
    parser.add_argument(
        "--server-rps", type=float, default=0, help="the model stand-in's limit (0: none)"
    )
    parser.add_argument(
        "--chunk-chars",
        type=int,
        default=None,
        help="characters a streamed chunk (default: a reply in one chunk; a real server: 3-4)",
    )
    args = parser.parse_args()
    print(
        f"model latency {args.latency} s, search {args.search_latency} s, "
        f"DEEP_RESEARCH_ENDPOINT_MAX_CONCURRENT_MODEL_CALLS={args.max_model_concurrency}, "
        f"DEEP_RESEARCH_ENDPOINT_MODEL_CALLS_PER_MINUTE={args.model_rpm or 'unset'}, "
        f"server limit {args.server_rps or 'none'} requests/s, "
        f"max_search_calls {SEARCH_BUDGET} per run, "
        f"{args.chunk_chars or 'whole replies'} characters a streamed chunk"
    )
    header = (
        f"{'runs':>5} {'finished':>8} {'failed':>6} {'wall s':>7} {'calls':>6} "
        f"{'CPU ms/call':>11} {'worst stall ms':>14} {'full GCs':>8} {'longest ms':>10} "
        f"{'peak model':>10} {'peak search':>11} "
        f"{'429s':>5} {'peak MiB':>8} {'budgets held':>12}"
    )
    print(header)
    for n in (int(x) for x in args.runs.split(",")):
        row = one_row(n, args)
        print(
            f"{n:>5} {row['finished']:>8} {row['failed']:>6} {row['seconds']:>7.2f} "
            f"{row['llm_calls']:>6} {row['cpu_ms_per_call']:>11.1f} {row['stall_ms']:>14.0f} "
            f"{row['full_collections']:>8} {row['longest_full_ms']:>10.0f} "
            f"{row['stats']['model_peak']:>10} {row['stats']['search_peak']:>11} "
            f"{row['stats']['refused']:>5} {row['peak_mib']:>8.0f} "
            f"{'yes' if row['held'] else 'NO':>12}",
            flush=True,
        )
        for error in row["errors"]:
            print(f"      error: {error}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        run_batch(int(sys.argv[2]))
    else:
        main()
