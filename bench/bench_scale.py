"""Runs per minute with 1, 2 and 4 `deep-research worker` processes on one PostgreSQL and Redis.

    python bench/bench_scale.py --workers 1,2,4 --runs 8 --latency 0.3

Starts PostgreSQL and Redis from the system's binaries (tests/services.py) and the model and
search stand-ins in this process (the model answers after a fixed latency). For each worker
count, a fresh database and Redis: the workers start (`--concurrency` runs each), the runs are
submitted on the queue, and the bench waits until every run has finished. Every worker shares
one cap on model calls in flight and one rate (through Redis). Prints one row per worker count:
runs per minute, queue latency (job deferred to job started, from procrastinate's events, once
every worker is up), peak memory per worker, and the model stand-in's peak in flight and
busiest second against the caps. The work is model-bound, so runs per minute should grow with
workers until a cap binds (or the machine's cores do).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from deep_research.service.admission import Admitted, Operator  # noqa: E402
from deep_research.service.caller import Caller  # noqa: E402
from deep_research.service.runs import open_service  # noqa: E402
from deep_research.settings import Settings  # noqa: E402

from services import PostgresServer, RedisServer, new_database, pg_binaries  # noqa: E402
from stand_ins.chat import ChatServer  # noqa: E402
from stand_ins.loopback import Reply  # noqa: E402
from stand_ins.search import SearchServer  # noqa: E402
from stand_ins.world import Articles, pages_for  # noqa: E402

QUESTION = "Run {:03d}: compare zstd and xz for log archives"


class TimedChat(ChatServer):
    """The model stand-in, keeping when each model call arrived and its body (`peak_concurrency`,
    kept by the base class, counts requests in flight, the latency included)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[float] = []
        self.bodies: list[str] = []

    def _serve(self, path: str, body: dict, headers: dict, method: str = "POST") -> Reply:
        if path.endswith("/chat/completions"):  # not the context-window probes
            with self._lock:
                self.arrivals.append(time.time())
                self.bodies.append(json.dumps(body, sort_keys=True))
        return super()._serve(path, body, headers, method)

    def busiest_second(self) -> int:
        times = sorted(self.arrivals)
        return max((sum(1 for t in times if s <= t < s + 1) for s in times), default=0)


def peak_memory_mb(pid: int) -> float:
    """A process's peak resident memory (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def queue_latencies(url: str) -> list[float]:
    """Seconds from each job's deferral to its first start (procrastinate's events)."""
    import psycopg

    query = """
        SELECT extract(epoch FROM min(s.at) - min(d.at)) FROM procrastinate_events d
        JOIN procrastinate_events s ON s.job_id = d.job_id AND s.type = 'started'
        WHERE d.type = 'deferred' GROUP BY d.job_id"""
    async with await psycopg.AsyncConnection.connect(url) as connection:
        rows = await (await connection.execute(query)).fetchall()
    return [float(row[0]) for row in rows]


async def ready(url: str, workers: int) -> None:
    """Wait until every worker has registered (so queue latency leaves out their start-up)."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
        while True:
            query = "SELECT to_regclass('procrastinate_workers') IS NOT NULL"
            if (await (await connection.execute(query)).fetchone())[0]:
                query = "SELECT count(*) FROM procrastinate_workers"
                if (await (await connection.execute(query)).fetchone())[0] >= workers:
                    return
            await asyncio.sleep(0.2)


async def submit_and_wait(url: str, runs: int, settings: Settings) -> float:
    """Submit the runs through the run service's queue, wait for all to finish; wall seconds
    from first submission."""
    caller = Caller("cli")
    async with open_service(url, Operator.of(settings, unattended=True), queue=True) as service:
        began = time.monotonic()
        ids = []
        for n in range(runs):
            admitted = Admitted(QUESTION.format(n), settings)  # the stand-ins need no checks
            ids.append(await service.start(caller, admitted, run_id=f"scale-{n}"))
        while ids:
            await asyncio.sleep(0.2)
            for thread_id in list(ids):
                status = (await service.read(caller, thread_id)).status
                if status == "done":
                    ids.remove(thread_id)
                elif status == "failed":
                    raise RuntimeError(f"{thread_id} failed on its worker")
        return time.monotonic() - began


def one_row(args, workers: int, postgres: str, redis: RedisServer, chat, search) -> dict:
    """Start `workers` worker processes on a fresh database, run the batch, measure."""
    url = new_database(postgres)
    redis.flush()
    chat.arrivals.clear()
    chat.bodies.clear()
    chat.peak_concurrency = 0
    env = {
        **os.environ,
        "OPENAI_BASE_URL": f"{chat.url}/v1",
        "OPENAI_API_KEY": "sk-stand-in",
        "DEEP_RESEARCH_MODEL": "stand-in",
        "TAVILY_API_BASE_URL": search.url,
        "TAVILY_API_KEY": "tvly-stand-in",
        "DUCKDUCKGO_BASE_URL": "http://127.0.0.1:9",  # nothing leaves the machine
        "DEEP_RESEARCH_CHECKPOINT_DB": url,
        "DEEP_RESEARCH_REDIS_URL": redis.url,
        "DEEP_RESEARCH_ENDPOINT_MAX_CONCURRENT_MODEL_CALLS": str(args.cap),
        "DEEP_RESEARCH_ENDPOINT_MODEL_CALLS_PER_MINUTE": str(args.rate * 60),
    }
    command = [sys.executable, "-m", "deep_research.cli", "worker"]
    command += ["--concurrency", str(args.concurrency)]
    processes = [
        subprocess.Popen(command, env=env, cwd=ROOT, stderr=subprocess.DEVNULL)
        for _ in range(workers)
    ]
    try:
        asyncio.run(ready(url, workers))
        # The submitter's environment picks the search provider (the workers' holds the keys).
        os.environ.update(
            {k: v for k, v in env.items() if k.startswith(("OPENAI", "TAVILY", "DUCK"))}
        )
        settings = Settings(max_iterations=1, min_iterations=1, max_workers=2, max_search_calls=6)
        settings = settings.model_copy(update={"fetch_private_addresses": True})  # pages: loopback
        wall = asyncio.run(submit_and_wait(url, args.runs, settings))
        memory = [peak_memory_mb(p.pid) for p in processes]
        latencies = asyncio.run(queue_latencies(url))
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            process.wait(30)
    return {
        "workers": workers,
        "runs_per_minute": args.runs / wall * 60,
        "wall": wall,
        "queue_latency_median": statistics.median(latencies),
        "queue_latency_max": max(latencies),
        "memory_mb": statistics.mean(memory),
        "peak_in_flight": chat.peak_concurrency,
        "busiest_second": chat.busiest_second(),
        "model_calls": len(chat.arrivals),
        "repeated": len(chat.bodies) - len(set(chat.bodies)),
    }


def main() -> None:
    """Parse the flags, start the servers, print one row per worker count."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,2,4", help="worker process counts")
    parser.add_argument("--runs", type=int, default=8, help="runs per worker count")
    parser.add_argument("--concurrency", type=int, default=2, help="runs per worker at once")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per model call")
    parser.add_argument("--cap", type=int, default=6, help="shared model calls in flight")
    parser.add_argument("--rate", type=int, default=20, help="shared model calls per second")
    args = parser.parse_args()
    binaries = pg_binaries()
    if binaries is None:
        sys.exit("PostgreSQL's binaries are missing (/usr/lib/postgresql/*/bin)")
    postgres, redis = PostgresServer(binaries).start(), RedisServer().start()
    chat, search, pages = TimedChat().start(), SearchServer().start(), Articles().start()
    pages_for(search, pages)  # results name pages on loopback, never a public address
    chat.latency = args.latency
    print(
        f"runs {args.runs}, concurrency {args.concurrency} per worker, model latency "
        f"{args.latency} s, shared caps: {args.cap} in flight, {args.rate}/s"
    )
    print("| workers | runs/min | wall s | queue latency median / max s | peak MB per worker "
          "| peak in flight | busiest second | model calls (same body again) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    try:
        for workers in [int(n) for n in args.workers.split(",")]:
            row = one_row(args, workers, postgres.url, redis, chat, search)
            print(
                f"| {row['workers']} | {row['runs_per_minute']:.1f} | {row['wall']:.1f} | "
                f"{row['queue_latency_median']:.2f} / {row['queue_latency_max']:.2f} | "
                f"{row['memory_mb']:.0f} | {row['peak_in_flight']} / {args.cap} | "
                f"{row['busiest_second']} / {args.rate} | "
                f"{row['model_calls']} ({row['repeated']}) |",
                flush=True,
            )
    finally:
        chat.stop()
        search.stop()
        pages.stop()
        redis.stop()
        postgres.stop()


if __name__ == "__main__":
    main()
