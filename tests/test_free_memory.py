"""The heap's free pages go back to the system as steps end, at most every few seconds."""

from __future__ import annotations

import asyncio
import platform
from typing import TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from deep_research.graph import sync_bridge
from deep_research.graph.sync_bridge import node
from deep_research.tools import free_memory
from deep_research.tools.free_memory import FreeMemory
from deep_research.tools.run_resources import LiveRuns


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_free_pages_go_back_at_most_once_every_few_seconds():
    clock, trims = Clock(), []
    memory = FreeMemory(lambda: trims.append(clock.now), every=2.0, clock=clock)
    for now in (100.0, 100.5, 101.9, 102.0, 102.1, 110.0):
        clock.now = now
        memory.step_ended()
    assert trims == [100.0, 102.0, 110.0] and memory.times == 3


def test_a_c_library_without_malloc_trim_is_left_alone():
    memory = FreeMemory(None)
    memory.step_ended()
    assert memory.times == 0


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_glibcs_malloc_trim_is_found_and_runs():
    trim = free_memory._malloc_trim()
    assert trim is not None
    assert trim() in (0, 1)  # 1: some memory went back, 0: none could


class Steps(TypedDict):
    done: int


def test_every_step_that_ends_asks_and_the_throttle_decides(monkeypatch):
    trims = []
    monkeypatch.setattr(sync_bridge, "FREE_MEMORY", FreeMemory(lambda: trims.append(1), every=0))

    async def step(state: Steps) -> dict:
        return {"done": state["done"] + 1}

    graph = StateGraph(Steps)
    graph.add_node("first", node(step, LiveRuns()))
    graph.add_node("second", node(step, LiveRuns()))
    graph.add_edge(START, "first")
    graph.add_edge("first", "second")
    graph.add_edge("second", END)
    assert asyncio.run(graph.compile().ainvoke({"done": 0})) == {"done": 2}
    assert len(trims) == 2


def test_a_process_whose_c_library_cannot_be_opened_by_name_goes_without(monkeypatch):
    def no_library(name):
        raise TypeError("expected str, bytes or os.PathLike object, not NoneType")  # Windows

    monkeypatch.setattr(free_memory.ctypes, "CDLL", no_library)
    assert free_memory._malloc_trim() is None
