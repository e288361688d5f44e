"""The router routes (issue 29): each `query_type` runs its own shape end to end, through the
real ChatOpenAI and Tavily clients against the stand-ins."""

from __future__ import annotations

import asyncio
import json

from deep_research.graph import graph

ONE_ROUND = {"model_retries": 0, "search_retries": 0, "max_iterations": 1, "min_iterations": 1}
RELAYED = "Found by the researchers before you"


def findings_prompts(chat_server) -> list[str]:
    """The user text of every WorkerFindings request, in the order the server got them."""
    return [
        json.dumps(r["body"]["messages"], ensure_ascii=False)
        for r in chat_server.chat_requests
        if "WorkerFindings" in json.dumps(r["body"])
    ]


def test_depth_first_is_a_relay_each_leg_seeing_the_ones_before(chat_server, search_server):
    chat_server.brain.query_type, chat_server.brain.subtasks = "depth_first", 3
    result = asyncio.run(graph.ainvoke({"question": "Why did zstd win?"}, context=ONE_ROUND))
    legs = findings_prompts(chat_server)
    assert len(legs) == 3
    assert RELAYED not in legs[0]
    assert RELAYED in legs[1] and RELAYED in legs[2]
    assert legs[2].count("- Finding") > legs[1].count("- Finding")  # the relay grows
    assert result["stop_reason"] == "max_iterations" and result["sources"]


def test_breadth_first_runs_its_workers_side_by_side(chat_server, search_server):
    chat_server.brain.subtasks = 3
    search_server.latency = 0.2
    asyncio.run(graph.ainvoke({"question": "Compare zstd and xz"}, context=ONE_ROUND))
    legs = findings_prompts(chat_server)
    assert len(legs) == 3 and not any(RELAYED in leg for leg in legs)
    assert search_server.peak_concurrency > 2  # more than one worker's queries at once


def test_a_relay_searches_one_leg_at_a_time(chat_server, search_server):
    chat_server.brain.query_type, chat_server.brain.subtasks = "depth_first", 3
    search_server.latency = 0.2
    asyncio.run(graph.ainvoke({"question": "Why did zstd win?"}, context=ONE_ROUND))
    assert search_server.peak_concurrency <= 2  # one worker's two queries at a time


def test_straightforward_runs_one_worker(chat_server, search_server):
    chat_server.brain.query_type, chat_server.brain.subtasks = "straightforward", 3
    asyncio.run(graph.ainvoke({"question": "What is zstd?"}, context=ONE_ROUND))
    assert len(findings_prompts(chat_server)) == 1


def decide_prompts(chat_server) -> list[str]:
    """The messages of every decide request of a worker whose model chooses its tools."""
    return [
        json.dumps(r["body"]["messages"], ensure_ascii=False)
        for r in chat_server.chat_requests
        if r["body"].get("tool_choice") == "auto"
    ]


def test_a_relayed_worker_whose_model_chooses_its_tools_sees_the_legs_before_it(
    chat_server, search_server
):
    """The relay reaches the model that decides what to search and read, not only the one that
    summarizes afterwards (`worker_tools` on; "finish" searches, then reads no page of the
    stand-in's web)."""
    chat_server.brain.query_type, chat_server.brain.subtasks = "depth_first", 3
    chat_server.brain.tools.mode = "finish"
    settings = {**ONE_ROUND, "worker_tools": "native"}
    asyncio.run(graph.ainvoke({"question": "Why did zstd win?"}, context=settings))
    decides = [d for d in decide_prompts(chat_server) if "Suggested first searches" in d]
    assert len(decides) == 3  # each worker's first decide: its own first searches
    assert RELAYED not in decides[0]
    assert RELAYED in decides[1] and RELAYED in decides[2]
