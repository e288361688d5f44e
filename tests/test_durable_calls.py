"""Model calls saved one by one inside a node: a node that fails midway repeats only what failed."""

from __future__ import annotations

import asyncio
import contextlib

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from deep_research.tools.durable_calls import durable, fingerprint


class State(TypedDict, total=False):
    answers: list[str]


def graph_asking(prompts: list[str], sent: list[str], fail_on: set[str]):
    async def ask_all(state: State) -> dict:
        async def one(prompt: str) -> str:
            async def send() -> AIMessage:
                sent.append(prompt)
                if prompt in fail_on:
                    raise RuntimeError(f"{prompt} failed")
                return AIMessage(f"answer to {prompt}")

            key = fingerprint([HumanMessage(prompt)])
            reply = await durable(key, send, contextlib.nullcontext)
            return reply.text

        return {"answers": list(await asyncio.gather(*(one(p) for p in prompts)))}

    builder = StateGraph(State)
    builder.add_node("ask_all", ask_all)
    builder.add_edge(START, "ask_all")
    builder.add_edge("ask_all", END)
    return builder


def test_a_node_run_again_sends_only_the_calls_that_were_not_answered():
    saver, config = InMemorySaver(), {"configurable": {"thread_id": "t"}}
    sent: list[str] = []

    async def scenario():
        failing = graph_asking(["a", "b", "c"], sent, {"c"}).compile(checkpointer=saver)
        with contextlib.suppress(RuntimeError):
            await failing.ainvoke({}, config, durability="sync")
        first = list(sent)
        healed = graph_asking(["a", "b", "c"], sent, set()).compile(checkpointer=saver)
        output = await healed.ainvoke(None, config, durability="sync")
        return first, sent[len(first) :], output

    first, again, output = asyncio.run(scenario())
    assert sorted(first) == ["a", "b", "c"]
    assert again == ["c"]  # a and b were answered from the checkpoint
    assert output["answers"] == ["answer to a", "answer to b", "answer to c"]


def test_a_saved_reply_to_another_request_is_never_used():
    saver, config = InMemorySaver(), {"configurable": {"thread_id": "t"}}
    sent: list[str] = []

    async def scenario():
        failing = graph_asking(["a", "b"], sent, {"b"}).compile(checkpointer=saver)
        with contextlib.suppress(RuntimeError):
            await failing.ainvoke({}, config, durability="sync")
        first = list(sent)
        changed = graph_asking(["x", "b"], sent, set()).compile(checkpointer=saver)
        output = await changed.ainvoke(None, config, durability="sync")
        return sent[len(first) :], output

    again, output = asyncio.run(scenario())
    assert sorted(again) == ["b", "x"]  # position 1 held "a": its saved reply is not x's
    assert output["answers"] == ["answer to x", "answer to b"]


def test_outside_a_graph_the_call_is_made_directly():
    async def send() -> AIMessage:
        return AIMessage("direct")

    reply = asyncio.run(durable("k", send, contextlib.nullcontext))
    assert reply.text == "direct"


def test_the_private_langgraph_hook_durable_calls_lean_on_is_still_there():
    """`durable` tells an async graph run by LangGraph's private runner call
    (`configurable["__pregel_call"]`, a partial of `_acall`). If a LangGraph release renames
    either, this fails by name, instead of per-call durability switching off without a word."""
    from langgraph._internal._constants import CONFIG_KEY_CALL

    from deep_research.tools.durable_calls import _in_async_graph

    assert CONFIG_KEY_CALL == "__pregel_call", "LangGraph renamed its runner-call config key"
    seen: dict[str, bool] = {}

    class State(TypedDict, total=False):
        done: bool

    async def probe(state: State) -> dict:
        seen["ainvoke"] = _in_async_graph()
        return {"done": True}

    def probe_sync(state: State) -> dict:
        seen["invoke"] = _in_async_graph()
        return {"done": True}

    for name, step in (("async", probe), ("sync", probe_sync)):
        builder = StateGraph(State)
        builder.add_node(name, step)
        builder.add_edge(START, name)
        builder.add_edge(name, END)
        compiled = builder.compile()
        if name == "async":
            asyncio.run(compiled.ainvoke({}))
        else:
            compiled.invoke({})
    assert seen == {"ainvoke": True, "invoke": False}, (
        "LangGraph's runner no longer passes `_acall` as `__pregel_call`: "
        "tools/durable_calls.py must find another way to tell an async graph run"
    )
