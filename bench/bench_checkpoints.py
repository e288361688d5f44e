"""Benchmark checkpoint bytes against the work: one run of K rounds for K = 1..5, per store.

    python bench/bench_checkpoints.py --rounds 5 [--pages-per-worker 5] [--postgres URL]

Each run (3 workers a round: 3 subtasks, then 3 gap tasks per round; tool workers reading the
loopback world's pages: `tests/stand_ins/world.py`) is checkpointed in a fresh store: an SQLite
file, and a fresh PostgreSQL database when `--postgres` (or `DEEP_RESEARCH_TEST_POSTGRES_URL`)
names a server. The payload is every byte the store holds in its checkpoint tables' values
(blobs, JSON, text; SQLite's pages and PostgreSQL's indexes and compression aside); the fitted
exponent b of bytes = a·K^b says how it grows with the rounds (1: linear in the work). The
largest channels of the last checkpoint show what it holds. Workers draw their pages from the
run's budget (`max_page_fetches`), so with the defaults the first rounds read more than the
later ones; `--pages-per-worker N` caps each worker at N pages and gives the run enough for
every round, so that every round does the same work.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sqlite3
import sys
import tempfile
import uuid
from contextlib import closing
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from stand_ins.world import World  # noqa: E402

QUESTION = "Compare zstd and xz for log archives"


WORKERS = 3  # a round's workers: the world's subtasks, then its gap tasks


def settings(rounds: int, pages: int | None = None) -> dict:
    """Exactly `rounds` rounds, defaults otherwise (tool workers on); each worker's pages
    capped at `pages`, and the run's page budget what every round's workers read, when given."""
    same_work = (
        {} if pages is None else {"max_pages": pages, "max_page_fetches": WORKERS * pages * rounds}
    )
    return {
        **same_work,
        "model_retries": 0,
        "search_retries": 0,
        "fetch_private_addresses": True,  # the world's pages are on loopback
        "max_iterations": rounds,
        "min_iterations": rounds,
        "max_workers": 8,
    }


async def run(target: str, rounds: int, pages: int | None = None) -> list[tuple[str, int]]:
    """One checkpointed run; the largest channels of its last main checkpoint (bytes)."""
    from deep_research.graph import build_graph
    from deep_research.tools.checkpoints import open_checkpointer

    config = {"configurable": {"thread_id": f"bench-{rounds}"}}
    async with open_checkpointer(target) as saver:
        graph = build_graph(checkpointer=saver)
        await graph.ainvoke({"question": QUESTION, "settings": settings(rounds, pages)}, config)
        state = await graph.aget_state(config)
        sizes = [(k, len(saver.serde.dumps_typed(v)[1])) for k, v in state.values.items()]
    return sorted(sizes, key=lambda item: -item[1])[:4]


def sqlite_payload(path: Path) -> int:
    """Bytes of every text and blob value in the store's tables."""
    with closing(sqlite3.connect(path)) as db:
        tables = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
        total = 0
        for table in tables:
            columns = [r[1] for r in db.execute(f"pragma table_info('{table}')")]
            lengths = " + ".join(f'coalesce(length("{c}"), 0)' for c in columns)
            (size,) = db.execute(f'select coalesce(sum({lengths}), 0) from "{table}"').fetchone()
            total += size
    return total


def postgres_payload(url: str) -> int:
    """Bytes of every value in the checkpoint tables (JSON as its text)."""
    import psycopg

    with psycopg.connect(url) as db:
        columns = db.execute(
            "select table_name, column_name, data_type from information_schema.columns "
            "where table_schema = 'public' and table_name like 'checkpoint%%'"
        ).fetchall()
        total = 0
        for table, column, kind in columns:
            value = f'"{column}"::text' if kind == "jsonb" else f'"{column}"'
            if kind not in ("bytea", "jsonb", "text", "character varying"):
                continue
            total += db.execute(
                f'select coalesce(sum(octet_length({value})), 0) from "{table}"'
            ).fetchone()[0]
    return total


def fresh_database(url: str) -> tuple[str, str]:
    """A new empty database on the server at `url`: its URL and its name."""
    import psycopg

    name = f"bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f'create database "{name}"')
    return url.rsplit("/", 1)[0] + "/" + name, name


def drop_database(url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f'drop database "{name}" with (force)')


def measure(
    store: str, rounds: int, postgres: str | None, pages: int | None = None
) -> tuple[int, list]:
    """Payload bytes of one K-round run in a fresh store, and its largest channels."""
    if store == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "bench.sqlite"
            largest = asyncio.run(run(str(path), rounds, pages))
            return sqlite_payload(path), largest
    target, name = fresh_database(postgres)
    try:
        largest = asyncio.run(run(target, rounds, pages))
        return postgres_payload(target), largest
    finally:
        drop_database(postgres, name)


def exponent(points: list[tuple[int, int]]) -> float:
    """The least-squares slope of log(bytes) against log(K)."""
    xs = [math.log(k) for k, _ in points]
    ys = [math.log(b) for _, b in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="K runs from 1 to this")
    parser.add_argument(
        "--postgres",
        default=os.environ.get("DEEP_RESEARCH_TEST_POSTGRES_URL"),
        help="a PostgreSQL server URL (a fresh database is made per run)",
    )
    parser.add_argument(
        "--pages-per-worker", type=int, help="the same pages every round (default: the run's)"
    )
    args = parser.parse_args()
    stores = ["sqlite"] + (["postgres"] if args.postgres else [])
    world = World(
        0, 0, subtasks=WORKERS, gap_tasks=WORKERS, scores=[50, 55, 60, 65, 70, 75]
    ).enter()
    try:
        for store in stores:
            points, largest = [], []
            for k in range(1, args.rounds + 1):
                world.reset()
                size, largest = measure(store, k, args.postgres, args.pages_per_worker)
                points.append((k, size))
            sizes = ", ".join(f"K={k}: {b:,}" for k, b in points)
            print(f"{store}: checkpoint bytes {sizes}")
            print(f"{store}: fitted exponent {exponent(points):.2f}")
            channels = ", ".join(f"{name} {size:,}" for name, size in largest)
            print(f"{store}: largest channels at K={args.rounds}: {channels}")
    finally:
        world.stop()


if __name__ == "__main__":
    main()
