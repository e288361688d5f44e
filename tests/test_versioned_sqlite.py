"""The SQLite store writes each channel version's value once (`tools.versioned_sqlite`), and a
run's evidence (`worker_results`, a `DeltaChannel`) only as the steps that add it: state,
history and old stores read back as before, while the bytes grow with the work."""

from __future__ import annotations

import asyncio
import contextlib
import random
import sqlite3
from contextlib import closing
from typing import Annotated

import aiosqlite
from langgraph.channels import DeltaChannel
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from test_durable_calls import graph_asking
from typing_extensions import TypedDict

from deep_research.state import appended
from deep_research.tools.checkpoints import open_checkpointer, serializer
from deep_research.tools.settling_sqlite import SettlingSqliteSaver
from deep_research.tools.versioned_sqlite import next_version, version_number

EVIDENCE = [
    {"page": n, "quote": f"zstd level {n} compressed the logs {n}.5x " * 20} for n in range(8)
]
REPORT = "A report long enough to be stored apart from the checkpoint row. " * 20
STEPS = 6


class Toy(TypedDict, total=False):
    evidence: list[dict]  # set once, read at every later step
    report: str  # long text, rewritten once
    step: int
    found: Annotated[list[str], DeltaChannel(appended)]  # grows at every step


def toy_graph(checkpointer):
    """A chain of steps: the first sets the evidence, every step adds one finding."""

    def step(state: Toy) -> dict:
        n = state.get("step", 0) + 1
        update: dict = {"step": n, "found": [f"finding {n}"]}
        if n == 1:
            update["evidence"] = EVIDENCE
        if n == 3:
            update["report"] = REPORT
        return update

    builder = StateGraph(Toy)
    for n in range(1, STEPS + 1):
        builder.add_node(f"s{n}", step)
        builder.add_edge(START if n == 1 else f"s{n - 1}", f"s{n}")
    builder.add_edge(f"s{STEPS}", END)
    return builder.compile(checkpointer=checkpointer)


CONFIG = {"configurable": {"thread_id": "toy"}}


async def history(saver) -> list[dict]:
    graph = toy_graph(saver)
    return [snapshot.values async for snapshot in graph.aget_state_history(CONFIG)]


async def run_with_ours(path) -> tuple[dict, list[dict]]:
    async with open_checkpointer(str(path)) as saver:
        graph = toy_graph(saver)
        final = await graph.ainvoke({"step": 0}, CONFIG)
        return final, await history(saver)


async def run_with_plain(path) -> tuple[dict, list[dict]]:
    async with aiosqlite.connect(str(path)) as connection:
        saver = AsyncSqliteSaver(connection, serde=serializer())
        graph = toy_graph(saver)
        final = await graph.ainvoke({"step": 0}, CONFIG)
        return final, await history(saver)


def count_in(path, table: str, column: str, needle: bytes) -> int:
    """Rows of `table` whose `column` holds `needle`."""
    with closing(sqlite3.connect(path)) as db:
        rows = db.execute(f"SELECT {column} FROM {table}").fetchall()
    return sum(needle in bytes(value or b"") for (value,) in rows)


def test_each_value_is_stored_once_and_reads_back_as_the_plain_saver_wrote_it(tmp_path):
    ours, plain = tmp_path / "ours.sqlite", tmp_path / "plain.sqlite"
    final, our_history = asyncio.run(run_with_ours(ours))
    plain_final, plain_history = asyncio.run(run_with_plain(plain))

    assert final == plain_final
    assert final["found"] == [f"finding {n}" for n in range(1, STEPS + 1)]
    assert our_history == plain_history  # every checkpoint's state, oldest last
    quote = b"zstd level 7 compressed"
    assert count_in(plain, "checkpoints", "checkpoint", quote) == STEPS  # again at every step
    assert count_in(ours, "checkpoints", "checkpoint", quote) == 0
    assert count_in(ours, "checkpoint_blobs", "blob", quote) == 1  # once
    assert count_in(ours, "checkpoint_blobs", "blob", b"A report long enough") == 1
    finding = b"finding 2"  # the delta channel's values live in the steps' writes only
    assert count_in(ours, "checkpoint_blobs", "blob", finding) == 0
    assert count_in(ours, "checkpoints", "checkpoint", finding) == 0
    assert count_in(ours, "writes", "value", finding) == 1


def test_a_store_written_by_the_plain_saver_reads_back(tmp_path):
    path = tmp_path / "old.sqlite"
    plain_final, plain_history = asyncio.run(run_with_plain(path))

    async def read() -> tuple[dict, list[dict]]:
        async with open_checkpointer(str(path), create=False) as saver:
            state = await toy_graph(saver).aget_state(CONFIG)
            return state.values, await history(saver)

    values, read_history = asyncio.run(read())
    assert values == plain_final and read_history == plain_history


def test_a_read_only_store_from_before_reads_back(tmp_path):
    path = tmp_path / "old.sqlite"
    plain_final, _ = asyncio.run(run_with_plain(path))

    async def read() -> dict:
        uri = f"file:{path}?mode=ro"
        async with aiosqlite.connect(uri, uri=True) as connection:
            saver = SettlingSqliteSaver(connection, serde=serializer())
            await saver.setup()
            return (await toy_graph(saver).aget_state(CONFIG)).values

    assert asyncio.run(read()) == plain_final


def test_deleting_a_thread_deletes_its_values(tmp_path):
    path = tmp_path / "ours.sqlite"
    asyncio.run(run_with_ours(path))

    async def delete() -> None:
        async with open_checkpointer(str(path)) as saver:
            await saver.adelete_thread("toy")

    asyncio.run(delete())
    with closing(sqlite3.connect(path)) as db:
        counts = [
            db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("checkpoints", "writes", "checkpoint_blobs")
        ]
    assert counts == [0, 0, 0]


def test_a_research_run_stores_its_evidence_only_in_the_steps_that_add_it(
    tmp_path, chat_server, search_server
):
    """The orchestrator's checkpoints never hold `worker_results` again: each worker's result
    is stored once, as the orchestrator's write of the step that returned it (none in the
    worker's own namespace), and the state and its history are rebuilt from those writes."""
    from deep_research.graph import build_graph

    path = tmp_path / "run.sqlite"
    chat_server.brain.subtasks = 2
    settings = {"max_iterations": 2, "min_iterations": 2, "model_retries": 0}

    async def research() -> tuple[dict, list[int]]:
        config = {"configurable": {"thread_id": "run"}}
        async with open_checkpointer(str(path)) as saver:
            graph = build_graph(checkpointer=saver)
            await graph.ainvoke({"question": "Compare zstd and xz", "settings": settings}, config)
            state = await graph.aget_state(config)
            counts = [
                len(snapshot.values.get("worker_results", []))
                async for snapshot in graph.aget_state_history(config)
            ]
            return state.values, counts

    values, counts = asyncio.run(research())
    assert [r.round for r in values["worker_results"]] == [1, 1, 2]  # 2 subtasks, 1 gap task
    assert counts[0] == 3 and counts == sorted(counts, reverse=True)  # newest first
    serde = serializer()
    with closing(sqlite3.connect(path)) as db:
        rows = db.execute("SELECT type, checkpoint FROM checkpoints WHERE checkpoint_ns = ''")
        stored = [serde.loads_typed((t, c))["channel_values"] for t, c in rows.fetchall()]
        blobs = db.execute(
            "SELECT count(*) FROM checkpoint_blobs WHERE checkpoint_ns = '' "
            "AND channel = 'worker_results'"
        ).fetchone()[0]
        written = db.execute(
            "SELECT checkpoint_ns FROM writes WHERE channel = 'worker_results'"
        ).fetchall()
    assert stored and not any("worker_results" in values for values in stored) and blobs == 0
    assert written == [("",)] * 3  # each result once, the orchestrator's (the worker's: none)


def test_versions_sort_as_their_numbers_and_after_the_plain_savers():
    chain = [next_version(None)]
    for _ in range(5000):
        chain.append(next_version(chain[-1]))
    assert [version_number(v) for v in chain] == list(range(1, 5002))
    assert chain == sorted(chain) and len(chain[-1]) == len("j1389.") + 8  # 50 before
    numbers = random.Random(7).sample(range(1, 10**15), 500)
    by_version = sorted(numbers, key=lambda n: next_version(n - 1))
    assert by_version == sorted(numbers)
    plain = "00000000000000000000000000000041.0.6322074706162766"  # a store from before
    assert version_number(plain) == 41 and version_number(next_version(plain)) == 42
    assert next_version(plain) > plain and next_version(41) > plain


def saved_calls(path) -> int:
    with closing(sqlite3.connect(path)) as db:
        return db.execute("SELECT count(*) FROM writes WHERE channel = '__return__'").fetchone()[0]


def test_saved_calls_answer_a_step_run_again_from_the_store(tmp_path):
    path, config = tmp_path / "calls.sqlite", {"configurable": {"thread_id": "t"}}
    sent: list[str] = []

    async def run(fail_on: set[str]) -> dict | None:
        async with open_checkpointer(str(path)) as saver:
            graph = graph_asking(["a", "b", "c"], sent, fail_on).compile(checkpointer=saver)
            with contextlib.suppress(RuntimeError):
                return await graph.ainvoke({} if fail_on else None, config, durability="sync")
        return None

    asyncio.run(run({"c"}))
    assert sorted(sent) == ["a", "b", "c"] and saved_calls(path) == 2  # a's and b's replies
    output = asyncio.run(run(set()))
    assert sent[3:] == ["c"]  # a and b answered from the store
    assert output == {"answers": ["answer to a", "answer to b", "answer to c"]}
    assert saved_calls(path) == 3  # kept: a crash test reads them from the store
