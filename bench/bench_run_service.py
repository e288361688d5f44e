"""Listing stored runs, and a live page's update, before and after the run service's index.

    python bench/bench_run_service.py --runs 10000 --events 5000

Builds an SQLite store of `--runs` finished runs: one real run against the model and search
stand-ins (started in this process), its checkpoints, writes and stored values copied under
new thread ids (every checkpoint of its history, as a real store keeps them). Then, in the same
process:

- listing: the way the doors listed before the service (`recent_threads`: every checkpoint of
  the store walked, then each thread's state read; what `threads`, MCP's `list_research` and
  the web app's history did at each call and the MCP server at each start) against the index
  of runs (`RunService.list`, one query); the first open of a store without an index builds it
  from the checkpoints once, timed apart;
- a live page's update over a run of `--events` progress records: before, each update read the
  whole event log and the run's checkpoint and folded them again (`WebRuns.view`); now it reads
  the records after the last one it has and folds those (`RunService.follow`). The rendering
  of the progress section, the same in both, is timed apart.

Bytes read are the sizes of the rows each way reads (checkpoint and write blobs, event data),
from SQLite's own `length()`: what crosses from the store into the process, before decoding.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from deep_research.graph.threads import thread_config  # noqa: E402
from deep_research.service.admission import Admitted, Operator  # noqa: E402
from deep_research.service.caller import Caller  # noqa: E402
from deep_research.service.runs import open_service  # noqa: E402
from deep_research.settings import Settings  # noqa: E402
from deep_research.web.pages import html_text, progress  # noqa: E402
from deep_research.web.view import add_checkpoint, fold, fold_record  # noqa: E402

from stand_ins.chat import ChatServer  # noqa: E402
from stand_ins.search import SearchServer  # noqa: E402

CALLER = Caller("cli")


def stand_ins() -> tuple[ChatServer, SearchServer]:
    """The model and search stand-ins, wired in through the environment."""
    chat, search = ChatServer().start(), SearchServer().start()
    os.environ.update(
        OPENAI_BASE_URL=f"{chat.url}/v1",
        OPENAI_API_KEY="sk-bench",
        DEEP_RESEARCH_MODEL="stand-in",
        TAVILY_API_BASE_URL=search.url,
        TAVILY_API_KEY="tvly-bench",
        DEEP_RESEARCH_WORKER_TOOLS="off",
    )
    return chat, search


async def one_real_run(store: str) -> str:
    """A finished run (one round, three subtasks) through the service; its id."""
    settings = Settings(max_iterations=1, min_iterations=1)
    async with open_service(store, Operator.of(settings)) as service:
        run_id = await service.start(CALLER, Admitted("Compare zstd and xz", settings))
        await service.wait(CALLER, run_id, 300)
    return run_id


STORED = ("checkpoints", "writes", "checkpoint_blobs")
"""The saver's tables (`tools.versioned_sqlite`: a checkpoint's values are stored once per
version in `checkpoint_blobs`, beside the row that names them)."""


def copy_runs(store: str, template: str, runs: int) -> None:
    """`runs` copies of the template run's checkpoints, writes and stored values, under new
    thread ids; the index and the event log are dropped, as in a store from before the service."""
    with sqlite3.connect(store) as db:
        for table in STORED:  # whatever columns the saver's tables have
            columns = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
            rest = ", ".join(c for c in columns if c != "thread_id")
            copy = (
                f"INSERT INTO {table} (thread_id, {rest}) SELECT ?, {rest} FROM {table}"
                " WHERE thread_id = ?"
            )
            for n in range(runs):
                db.execute(copy, (f"run-{n:05d}", template))
            db.execute(f"DELETE FROM {table} WHERE thread_id = ?", (template,))
        db.execute("DROP TABLE IF EXISTS run_index")
        db.execute("DROP TABLE IF EXISTS run_events")
    with sqlite3.connect(store) as db:
        db.execute("VACUUM")


def sizes(store: str, sql: str, params: tuple = ()) -> int:
    """The bytes a query's rows hold (its single column: `length(...)` of what is read)."""
    with sqlite3.connect(store) as db:
        return int(db.execute(sql, params).fetchone()[0] or 0)


async def list_before(store: str, limit: int = 0) -> tuple[float, int]:
    """The listing every door did before the index: checkpoints walked newest first until
    `limit` threads are seen (0: every checkpoint; the web app's history and the MCP server's
    start), each thread's state read (`cli.inspect.recent_threads`); seconds and rows."""
    from deep_research.graph import build_graph
    from deep_research.tools.checkpoints import open_checkpointer

    async with open_checkpointer(store) as saver:
        graph = build_graph(checkpointer=saver)
        began = time.perf_counter()
        seen: list[str] = []
        async for item in saver.alist(None):
            if limit and len(seen) >= limit:
                break
            thread_id = item.config["configurable"]["thread_id"]
            if thread_id not in seen:
                seen.append(thread_id)
        rows = [(t, await graph.aget_state(thread_config(t))) for t in seen]
        return time.perf_counter() - began, len(rows)


async def list_after(store: str, limit: int) -> tuple[float, float, int]:
    """Opening the service (the index built on the first open) and listing from the index;
    seconds to open, seconds to list, rows."""
    began = time.perf_counter()
    async with open_service(store, Operator()) as service:
        opened = time.perf_counter() - began
        began = time.perf_counter()
        rows = await service.list(CALLER, limit)
        return opened, time.perf_counter() - began, len(rows)


async def live_page(store: str, run_id: str, events: int) -> dict[str, float]:
    """One live update of a run page over `events` records, the old way and the new."""
    async with open_service(store, Operator()) as service:
        samples = [r for r in await service.events(CALLER, run_id) if r.kind == "event"]
        for n in range(events - len(samples)):  # the run's own events, again and again
            record = samples[n % len(samples)]
            await service.store.events.append(run_id, "event", record.data)
        await service.store.events.append(run_id, "event", samples[-1].data)
        total = (await service.store.events.tail(run_id, 1))[0].seq
        figures: dict[str, float] = {"records": total}

        began = time.perf_counter()  # before: the whole log, the checkpoint, a fresh fold
        records = await service.store.events.since(run_id, 0)
        snapshot = await service.store.graph.aget_state(thread_config(run_id))
        view = fold(run_id, records)
        add_checkpoint(view, snapshot.values)
        figures["before s"] = time.perf_counter() - began

        began = time.perf_counter()  # now: the records after the last one seen, folded in
        new = await service.store.events.since(run_id, total - 1)
        for record in new:
            fold_record(view, record)
        figures["after s"] = time.perf_counter() - began

        began = time.perf_counter()
        html_text(progress(view, "en"))
        figures["render s"] = time.perf_counter() - began
    event_bytes = "SELECT sum(length(data)) FROM run_events WHERE thread_id = ?"
    figures["before bytes"] = sizes(store, event_bytes, (run_id,)) + checkpoint_bytes(store, run_id)
    figures["after bytes"] = sizes(store, event_bytes + " AND seq > ?", (run_id, total - 1))
    return figures


def checkpoint_bytes(store: str, run_id: str) -> int:
    """What reading a run's latest state reads: its newest checkpoint and that step's writes
    (root and subgraph namespaces)."""
    latest = (
        "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''"
        " ORDER BY checkpoint_id DESC LIMIT 1"
    )
    with sqlite3.connect(store) as db:
        checkpoint_id = db.execute(latest, (run_id,)).fetchone()[0]
    blob = (
        "SELECT sum(length(checkpoint)) FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?"
    )
    writes = "SELECT sum(length(value)) FROM writes WHERE thread_id = ? AND checkpoint_id = ?"
    values = (  # the newest version of each channel: the values the checkpoint names
        "SELECT sum(length(blob)) FROM checkpoint_blobs AS b WHERE thread_id = ?"
        " AND checkpoint_ns = '' AND version = (SELECT max(version) FROM checkpoint_blobs"
        " WHERE thread_id = b.thread_id AND checkpoint_ns = '' AND channel = b.channel)"
    )
    return (
        sizes(store, blob, (run_id, checkpoint_id))
        + sizes(store, writes, (run_id, checkpoint_id))
        + sizes(store, values, (run_id,))
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000, help="stored runs to list")
    parser.add_argument("--events", type=int, default=5_000, help="records of the live run")
    parser.add_argument("--limit", type=int, default=20, help="rows a list asks for (0: all)")
    parser.add_argument("--folder", type=Path, help="where the store goes (default: a temp dir)")
    args = parser.parse_args()
    chat, search = stand_ins()
    folder = args.folder or Path(tempfile.mkdtemp(prefix="bench-run-service-"))
    store = str(folder / "store.sqlite")
    try:
        template = asyncio.run(one_real_run(store))
        live = asyncio.run(one_real_run(str(folder / "live.sqlite")))
    finally:
        chat.stop()
        search.stop()
    copy_runs(store, template, args.runs)
    checkpoints = sizes(store, "SELECT count(*) FROM checkpoints")
    read_before = (
        sizes(store, "SELECT sum(length(checkpoint)) FROM checkpoints")
        + sizes(store, "SELECT sum(length(value)) FROM writes")
        + sizes(store, "SELECT sum(length(blob)) FROM checkpoint_blobs")
    )
    print(f"store: {args.runs:,} runs, {checkpoints:,} checkpoints, {read_before:,} bytes")
    before, rows = asyncio.run(list_before(store))
    print(f"list before (walk every checkpoint, read each state): {before:.2f} s, {rows:,} runs")
    if args.limit:
        newest, rows = asyncio.run(list_before(store, args.limit))
        print(f"list before, newest {args.limit} (`threads`, MCP's list): {newest:.2f} s")
    opened, listed, count = asyncio.run(list_after(store, args.limit))
    print(f"first open of the store, index built from the checkpoints: {opened:.2f} s")
    opened, listed, count = asyncio.run(list_after(store, args.limit))
    index_bytes = sizes(
        store,
        "SELECT sum(length(run_id) + length(question) + length(door) + length(owner) + 64)"
        f" FROM (SELECT * FROM run_index ORDER BY created DESC LIMIT {args.limit or -1})",
    )
    print(
        f"list after (the index, newest {args.limit or 'all'}): {listed * 1000:.2f} ms, "
        f"{count:,} runs, ~{index_bytes:,} bytes read; open: {opened:.2f} s"
    )
    _, listed_all, count_all = asyncio.run(list_after(store, 0))
    print(f"list after (the index, all): {listed_all * 1000:.1f} ms, {count_all:,} runs")
    print(f"before reads {read_before:,} bytes of checkpoints, writes and values at every list")
    figures = asyncio.run(live_page(str(folder / "live.sqlite"), live, args.events))
    print(
        f"live page, {int(figures['records']):,} records, one update: "
        f"before {figures['before s'] * 1000:.1f} ms / {int(figures['before bytes']):,} bytes, "
        f"after {figures['after s'] * 1000:.2f} ms / {int(figures['after bytes']):,} bytes "
        f"(rendering the progress, either way: {figures['render s'] * 1000:.1f} ms)"
    )


if __name__ == "__main__":
    main()
