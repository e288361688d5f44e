"""Benchmark many concurrent runs in one process against stand-ins with a fixed latency.

    python bench/bench_concurrency.py --runs 1,8,32,64 --latency 0.2

For each N, a fresh child process runs N research runs at once through `graph.ainvoke` (each
with its own `max_search_calls` budget) while the stand-in servers run in another process, so
that neither's CPU or memory is counted as the other's. The model stand-in refuses requests
beyond `--server-rps` per second with 429 and `Retry-After: 1`, like a provider's rate limit.
Prints one row per N: wall time, peak requests in flight at each server, 429s, the child's
peak memory, and whether every run's search budget held. Timings on a shared 2-core machine are
noisy: compare the rows of one invocation.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from stand_ins.chat import ChatServer  # noqa: E402
from stand_ins.loopback import Reply  # noqa: E402
from stand_ins.search import SearchServer  # noqa: E402

SEARCH_BUDGET = 6
QUESTION = "Run {:03d}: compare zstd and xz for log archives"


class RateLimitedChat(ChatServer):
    """The chat stand-in with a provider's rate limit: over `rps` requests a second get 429."""

    def __init__(self, rps: float) -> None:
        super().__init__()
        self.rps, self.refused = rps, 0
        self._recent: deque[float] = deque()
        self._window_lock = threading.Lock()

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        if path == "/stats":
            return Reply(200, {"peak": self.peak_concurrency, "refused": self.refused})
        if self.rps:
            now = time.monotonic()
            with self._window_lock:
                while self._recent and now - self._recent[0] > 1.0:
                    self._recent.popleft()
                if len(self._recent) >= self.rps:
                    self.refused += 1
                    error = {"message": "rate limit reached", "type": "requests"}
                    return Reply(429, {"error": error}, headers={"retry-after": "1"})
                self._recent.append(now)
        return super().handle(path, body, headers)


class CountingSearch(SearchServer):
    """The search stand-in, answering `/stats` with its peak and the queries it served."""

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        if path == "/stats":
            return Reply(200, {"peak": self.peak_concurrency, "queries": self.queries})
        return super().handle(path, body, headers)


def serve(latency: float, search_latency: float, rps: float, subtasks: int = 4) -> None:
    """Child process: run both stand-ins until stdin closes; print their URLs first."""
    chat, search = RateLimitedChat(rps).start(), CountingSearch().start()
    chat.latency, search.latency = latency, search_latency
    chat.brain.subtasks = subtasks  # 4: 8 first-round queries per run, above its search budget
    print(json.dumps({"chat": chat.url, "search": search.url}), flush=True)
    sys.stdin.read()


def stats(url: str) -> dict:
    """A stand-in's figures, asked over HTTP."""
    import httpx

    return httpx.post(f"{url}/stats", json={}, timeout=10).json()


async def research_all(n: int) -> tuple[float, list[dict]]:
    """N runs at once on one event loop; wall seconds and each run's output."""
    from deep_research.graph import build_graph

    settings = {
        "max_iterations": 2,
        "min_iterations": 1,
        "max_search_calls": SEARCH_BUDGET,
        "search_retries": 0,
    }
    graph = build_graph()
    started = time.perf_counter()
    outputs = await asyncio.gather(
        *(graph.ainvoke({"question": QUESTION.format(i), "settings": settings}) for i in range(n))
    )
    return time.perf_counter() - started, outputs


def run_batch(n: int) -> None:
    """Child process: N runs at once; print the figures as one JSON line."""
    seconds, outputs = asyncio.run(research_all(n))
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    calls = sum(out["usage"].llm_calls for out in outputs)
    print(
        json.dumps(
            {
                "seconds": seconds,
                "finished": sum(1 for out in outputs if out.get("report")),
                "llm_calls": calls,
                "searches": [out["usage"].search_calls for out in outputs],
                "peak_mib": peak_kib / 1024,
            }
        ),
        flush=True,
    )


def start_stand_ins(
    latency: float, search_latency: float, rps: float, subtasks: int
) -> tuple[subprocess.Popen, dict]:
    """The stand-ins in a child process, and their URLs."""
    command = [sys.executable, __file__, "--serve", str(latency), str(search_latency)]
    server = subprocess.Popen(
        [*command, str(rps), str(subtasks)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    return server, json.loads(server.stdout.readline())


def stand_in_env(urls: dict) -> dict:
    """The environment that points the graph at the stand-ins."""
    return {
        "OPENAI_BASE_URL": f"{urls['chat']}/v1",
        "OPENAI_API_KEY": "sk-bench",
        "TAVILY_API_BASE_URL": urls["search"],
        "TAVILY_API_KEY": "tvly-bench",
        "DEEP_RESEARCH_MODEL": "stand-in",
    }


def overhead(subtasks: int, repeat: int) -> None:
    """Our own CPU per model call in a wide run at zero latency, stand-ins in another process."""
    server, urls = start_stand_ins(0, 0, 0, subtasks)
    os.environ.update(stand_in_env(urls))
    from deep_research.graph import build_graph

    settings = {"max_iterations": 1, "min_iterations": 1, "max_workers": subtasks}
    settings.update(max_subtasks=subtasks, search_retries=0)

    async def measure() -> tuple[float, float, int]:
        graph = build_graph()
        await graph.ainvoke({"question": "warm-up run", "settings": settings})
        wall, cpu = time.perf_counter(), time.process_time()
        calls = 0
        for i in range(repeat):
            output = await graph.ainvoke({"question": QUESTION.format(i), "settings": settings})
            calls += output["usage"].llm_calls
        return time.perf_counter() - wall, time.process_time() - cpu, calls

    try:
        wall, cpu, calls = asyncio.run(measure())
    finally:
        server.stdin.close()
        server.wait(10)
    print(
        f"overhead, {subtasks} subtasks, zero latency: {1000 * cpu / calls:.1f} ms CPU and "
        f"{1000 * wall / calls:.1f} ms wall per model call ({calls} calls in {repeat} runs)"
    )


def one_row(n: int, args: argparse.Namespace) -> dict:
    """Start fresh stand-ins and a fresh child for N runs; collect what both saw."""
    server, urls = start_stand_ins(args.latency, args.search_latency, args.server_rps, 4)
    try:
        env = {
            **os.environ,
            **stand_in_env(urls),
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
        chat, search = stats(urls["chat"]), stats(urls["search"])
    finally:
        server.stdin.close()
        server.wait(10)
    per_run = [
        sum(1 for q in search["queries"] if q.startswith(QUESTION.format(i))) for i in range(n)
    ]
    held = max(per_run) <= SEARCH_BUDGET and max(figures["searches"]) <= SEARCH_BUDGET
    return {"runs": n, **figures, "chat": chat, "search_peak": search["peak"], "held": held}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="1,8,32,64", help="comma-separated counts of runs")
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
        "--overhead", type=int, default=0, help="instead: CPU per call of a run this wide"
    )
    args = parser.parse_args()
    if args.overhead:
        overhead(args.overhead, repeat=5)
        return
    print(
        f"model latency {args.latency} s, search {args.search_latency} s, "
        f"DEEP_RESEARCH_ENDPOINT_MAX_CONCURRENT_MODEL_CALLS={args.max_model_concurrency}, "
        f"DEEP_RESEARCH_ENDPOINT_MODEL_CALLS_PER_MINUTE={args.model_rpm or 'unset'}, "
        f"server limit {args.server_rps or 'none'} requests/s, "
        f"max_search_calls {SEARCH_BUDGET} per run"
    )
    header = (
        f"{'runs':>5} {'finished':>8} {'wall s':>7} {'calls':>6} {'s/call':>7} "
        f"{'peak model':>10} {'peak search':>11} {'429s':>5} {'peak MiB':>8} {'budgets held':>12}"
    )
    print(header)
    for n in (int(x) for x in args.runs.split(",")):
        row = one_row(n, args)
        print(
            f"{n:>5} {row['finished']:>8} {row['seconds']:>7.2f} {row['llm_calls']:>6} "
            f"{row['seconds'] / max(row['llm_calls'], 1):>7.3f} {row['chat']['peak']:>10} "
            f"{row['search_peak']:>11} {row['chat']['refused']:>5} {row['peak_mib']:>8.0f} "
            f"{'yes' if row['held'] else 'NO':>12}",
            flush=True,
        )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve(float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]))
    elif sys.argv[1:2] == ["--one"]:
        run_batch(int(sys.argv[2]))
    else:
        main()
