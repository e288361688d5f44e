"""Where the CPU of one model call goes: the layers under a run, each measured on its own.

    python bench/bench_call_cpu.py

The loopback world (`tests/stand_ins/world.py`) runs in a child process (zero latency), so only
this process's CPU is counted.
Each row is CPU milliseconds per call (process time, median of 3 rounds of `--calls` calls),
from the bare HTTP request up to a whole research run; the differences show what each layer
adds. Compare rows of one invocation: the machine is shared.
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

from stand_ins.world import World  # noqa: E402


async def cpu_per_call(make_call, calls: int, concurrency: int) -> float:
    """CPU ms per call of `make_call()`, `concurrency` at a time (after one warm-up call)."""
    await make_call()
    rounds = []
    for _ in range(3):
        started = time.process_time()
        for _ in range(calls // concurrency):
            await asyncio.gather(*(make_call() for _ in range(concurrency)))
        rounds.append(1000 * (time.process_time() - started) / calls)
    return statistics.median(rounds)


async def measure(calls: int, concurrency: int) -> list[tuple[str, float]]:
    """Each layer's CPU per call."""
    import httpx
    from langchain_core.messages import HumanMessage, SystemMessage
    from langgraph.graph import END, START, StateGraph
    from typing_extensions import TypedDict

    from deep_research.graph import build_graph
    from deep_research.settings import Settings
    from deep_research.state import GapCheck
    from deep_research.tools.models import chat_model
    from deep_research.tools.run_resources import LiveRuns
    from deep_research.tools.structured import ask

    base = os.environ["OPENAI_BASE_URL"]
    body = {
        "model": "stand-in",
        "messages": [
            {"role": "system", "content": "You research. " * 50},
            {"role": "user", "content": "Question: compare zstd and xz\n" + "evidence " * 400},
        ],
    }
    messages = [
        SystemMessage(body["messages"][0]["content"]),
        HumanMessage(body["messages"][1]["content"]),
    ]
    rows = []
    async with httpx.AsyncClient() as client:

        async def raw() -> None:
            (await client.post(f"{base}/chat/completions", json=body)).json()

        rows.append(("httpx POST, JSON reply", await cpu_per_call(raw, calls, concurrency)))

    settings = Settings(max_concurrent_model_calls=64)
    model = chat_model(settings, "researcher")

    async def prose() -> None:
        await model.ainvoke(messages)

    rows.append(("ChatOpenAI.ainvoke, prose", await cpu_per_call(prose, calls, concurrency)))
    schema = {"name": "GapCheck", "schema": GapCheck.model_json_schema(), "strict": False}
    response_format = {"type": "json_schema", "json_schema": schema}

    async def with_schema() -> None:
        await model.ainvoke(messages, response_format=response_format)

    rows.append(
        (
            "ChatOpenAI.ainvoke, json_schema format",
            await cpu_per_call(with_schema, calls, concurrency),
        )
    )
    runs = LiveRuns()
    run = runs.open("bench", settings)
    asker = run.model_client()

    async def structured() -> None:
        await ask(GapCheck, messages, role="researcher", client=asker)

    rows.append(
        ("ask(): limits, ledger, validation", await cpu_per_call(structured, calls, concurrency))
    )

    async def search() -> None:
        run.search_cache._entries.clear()  # a new query every time, as workers send
        await run.search_cache.search("compare zstd and xz", 5)

    rows.append(
        ("one search (Tavily client, cache)", await cpu_per_call(search, calls, concurrency))
    )

    class Asked(TypedDict, total=False):
        n: int

    async def ask_step(state: Asked) -> dict:
        await ask(GapCheck, messages, role="researcher", client=asker)
        return {"n": 1}

    asking = StateGraph(Asked)
    asking.add_node("ask", ask_step)
    asking.add_edge(START, "ask")
    asking.add_edge("ask", END)
    asking_graph = asking.compile()

    async def ask_in_graph() -> None:
        await asking_graph.ainvoke({})

    rows.append(
        (
            "ask() in a one-node graph (a saved task)",
            await cpu_per_call(ask_in_graph, calls, concurrency),
        )
    )
    await runs.release("bench")

    class Empty(TypedDict, total=False):
        n: int

    async def step(state: Empty) -> dict:
        return {"n": 1}

    builder = StateGraph(Empty)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    builder.add_edge("step", END)
    tiny = builder.compile()

    async def one_step_graph() -> None:
        await tiny.ainvoke({})

    rows.append(
        (
            "a one-node LangGraph run, no model",
            await cpu_per_call(one_step_graph, calls, concurrency),
        )
    )
    graph = build_graph()
    wide = {"max_iterations": 1, "min_iterations": 1, "max_workers": 16, "max_subtasks": 16}
    wide["fetch_private_addresses"] = True  # the world's pages are on loopback
    counted = {"calls": 0}

    async def research() -> None:
        output = await graph.ainvoke({"question": "compare zstd and xz", "settings": wide})
        counted["calls"] += output["usage"].llm_calls

    await research()
    counted["calls"] = 0
    started = time.process_time()
    for _ in range(3):
        await research()
    rows.append(
        (
            "a whole run (16 subtasks), per model call",
            1000 * (time.process_time() - started) / counted["calls"],
        )
    )
    return rows


def whole_run(
    world: World, rounds: int, workers: int, chunk_chars: int | None = None
) -> tuple[str, float]:
    """CPU per model call of one long run: `workers` at once in each of `rounds` rounds (the
    first round's subtasks, then as many gap tasks a round), after a warm-up run; replies
    streamed whole in one chunk, or `chunk_chars` characters a chunk (a real server sends a
    token, 3-4 characters, a chunk)."""
    from deep_research.graph import build_graph

    world.configure(subtasks=workers, gap_tasks=workers, scores=[50.0] * (rounds + 1))
    world.configure(chunk_chars=chunk_chars)
    settings = {
        "max_iterations": rounds,
        "min_iterations": rounds,
        "max_workers": workers,
        "max_subtasks": workers,
        "max_supplementary_tasks": workers,
        "fetch_private_addresses": True,
        "max_page_fetches": 4 * workers * rounds,
    }
    graph = build_graph()
    question = {
        "question": "compare zstd and xz",
        "settings": {**settings, "max_iterations": 1, "min_iterations": 1},
    }
    asyncio.run(graph.ainvoke(question))  # warm-up: what a process pays once
    world.reset()
    started = time.process_time()
    asyncio.run(graph.ainvoke({"question": "compare zstd and xz", "settings": settings}))
    cpu = time.process_time() - started
    calls = world.stats()["answered"]
    chunks = f", {chunk_chars} characters a chunk" if chunk_chars else ""
    label = f"a whole run ({rounds} rounds x {workers} workers{chunks}), per model call"
    return label, 1000 * cpu / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=64, help="calls per round")
    parser.add_argument("--concurrency", type=int, default=8, help="calls at once")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the long run")
    parser.add_argument("--workers", type=int, default=12, help="workers per round, long run")
    parser.add_argument(
        "--chunk-chars", type=int, default=4, help="characters a chunk, long run's second row"
    )
    args = parser.parse_args()
    world = World(0, 0, subtasks=16).enter()
    try:
        rows = asyncio.run(measure(args.calls, args.concurrency))
        rows.append(whole_run(world, args.rounds, args.workers))
        rows.append(whole_run(world, args.rounds, args.workers, args.chunk_chars))
    finally:
        world.stop()
    width = max(len(label) for label, _ in rows)
    print(f"CPU per call, this process only ({args.concurrency} at a time)")
    for label, ms in rows:
        print(f"{label:<{width}}  {ms:6.2f} ms")


if __name__ == "__main__":
    main()
