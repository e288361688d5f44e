"""`langgraph dev` serves the graph to Studio and the SDK: worker events, state, history."""

from __future__ import annotations

import asyncio

import pytest
from served_graph import SHARED_LIMIT

pytest_plugins = ("served_graph_fixtures",)  # the `served` fixture: one `langgraph dev` shared


def test_sdk_run_streams_worker_events_and_keeps_state_and_history(served):
    from langgraph_sdk import get_client

    async def scenario():
        client = get_client(url=served.url)
        thread = await client.threads.create()
        parts = [
            part
            async for part in client.runs.stream(
                thread["thread_id"],
                "deep_research",
                input={"question": "Compare zstd and xz"},
                context={"max_iterations": 1, "min_iterations": 1, "model_retries": 0},
                stream_mode=["updates", "custom"],
                stream_subgraphs=True,
            )
        ]
        state = await client.threads.get_state(thread["thread_id"])
        history = await client.threads.get_history(thread["thread_id"], limit=100)
        return parts, state, history

    parts, state, history = asyncio.run(scenario())
    worker_events = [
        p for p in parts if p.event.startswith("custom|research") and p.data["event"] == "worker"
    ]
    assert {e.data["subtask_id"] for e in worker_events} == {1, 2, 3}
    assert any(p.event.startswith("updates|research") for p in parts)  # subgraph steps stream
    assert "## Sources" in state["values"]["report"]
    assert state["values"]["stop_reason"] == "max_iterations"
    assert {"decompose", "finalize"} <= {n for h in history for n in h["next"]}


def test_12_concurrent_runs_on_the_server_share_the_endpoint_limit_and_keep_budgets(served):
    """The shared server runs 16 jobs at once, with a limit of 4 model calls in flight."""
    from langgraph_sdk import get_client

    chat_server, search_server = served.chat, served.search
    chat_server.brain.subtasks = 4  # 8 first-round queries per run, above its budget of 6
    chat_server.latency = search_server.latency = 0.05
    questions = [f"Run {n:02d}: compare zstd and xz" for n in range(12)]
    context = {"max_iterations": 1, "min_iterations": 1, "model_retries": 0}
    context["max_search_calls"] = 6

    async def scenario():
        client = get_client(url=served.url)
        threads = [await client.threads.create() for _ in questions]
        runs = await asyncio.gather(
            *(
                client.runs.create(
                    t["thread_id"], "deep_research", input={"question": q}, context=context
                )
                for t, q in zip(threads, questions, strict=True)
            )
        )
        await asyncio.gather(*(client.runs.join(r["thread_id"], r["run_id"]) for r in runs))
        finished = [await client.runs.get(r["thread_id"], r["run_id"]) for r in runs]
        states = [await client.threads.get_state(t["thread_id"]) for t in threads]
        return finished, states

    finished, states = asyncio.run(scenario())

    assert [run["status"] for run in finished] == ["success"] * 12
    assert all("## Sources" in state["values"]["report"] for state in states)
    assert chat_server.peak_concurrency <= int(
        SHARED_LIMIT
    )  # one limit for the whole server process
    assert search_server.peak_concurrency > 1  # the runs did overlap
    for question in questions:
        sent = [q for q in search_server.queries if q.startswith(question)]
        assert 0 < len(sent) <= 6


def test_mcp_endpoint_lists_the_graph_with_its_description_and_runs_it(served):
    mcp = pytest.importorskip("mcp", reason="the MCP extra is not installed")

    async def scenario():
        async with mcp.Client(f"{served.url}/mcp") as client:
            tools = (await client.list_tools()).tools
            answer = await client.call_tool(
                "deep_research",
                {
                    "question": "Compare zstd and xz",
                    "settings": {"max_iterations": 1, "min_iterations": 1, "model_retries": 0},
                },
            )
            return tools, answer

    tools, answer = asyncio.run(scenario())
    assert [tool.name for tool in tools] == ["deep_research"]
    description = tools[0].description or ""
    assert "[n] citation" in description and "deep-research mcp" in description
    assert "question" in tools[0].input_schema["properties"]
    assert not answer.is_error, answer.content[0].text
    text = answer.content[0].text
    assert "## Sources" in text and "max_iterations" in text


def test_a_vague_question_is_asked_back_through_the_server_and_answered(served):
    """The served graph pauses at its questions (LangGraph's own checkpointer); the SDK caller
    reads them from the thread and resumes with the answers, which reach the plan."""
    from langgraph_sdk import get_client

    chat_server = served.chat
    chat_server.brain.clarifying = [
        {"question": "Switching what: a database or a cloud?", "suggested_answers": ["database"]}
    ]
    context = {"max_iterations": 1, "min_iterations": 1, "model_retries": 0}

    async def scenario():
        client = get_client(url=served.url)
        thread = (await client.threads.create())["thread_id"]
        question = {"question": "Is it worth switching?"}
        await client.runs.wait(thread, "deep_research", input=question, context=context)
        paused = await client.threads.get_state(thread)
        plans_before = chat_server.brain.calls["TaskPlan"]
        answer = {"resume": {"answers": ["our PostgreSQL database"]}}
        await client.runs.wait(thread, "deep_research", command=answer, context=context)
        return paused, plans_before, await client.threads.get_state(thread)

    paused, plans_before, done = asyncio.run(scenario())
    asked = paused["tasks"][0]["interrupts"][0]["value"]
    assert asked["kind"] == "clarify" and paused["next"] == ["clarify"]
    assert asked["questions"][0]["question"] == "Switching what: a database or a cloud?"
    assert plans_before == 0 and chat_server.brain.calls["Clarification"] == 1
    assert done["values"]["stop_reason"] == "max_iterations"
    plan = next(r for r in chat_server.chat_requests if "TaskPlan" in str(r["body"]))
    assert "our PostgreSQL database" in str(plan["body"])
