"""A model server that echoes the API key in its error leaves no key in the checkpoints (issue 27,
item 8): each model-call attempt is a task of its own, whose error LangGraph saves."""

from __future__ import annotations

import asyncio

import pytest
from conftest import SECRET_MODEL_KEY
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph.research import build_graph

from stand_ins.loopback import Reply

SETTINGS = {"max_iterations": 1, "min_iterations": 1, "language": "en", "model_retries": 2}


def saved_bytes(saver: InMemorySaver) -> bytes:
    """Everything the store holds: checkpoints, channel values and every task's writes."""
    parts = []
    for writes in saver.writes.values():
        for _, channel, (_, data), _ in writes.values():
            parts += [channel.encode(), data]
    for (_, _, _, _), (_, data) in saver.blobs.items():
        parts.append(data)
    for namespaces in saver.storage.values():
        for checkpoints in namespaces.values():
            for (_, checkpoint), (_, metadata), _ in checkpoints.values():
                parts += [checkpoint, metadata]
    return b"\n".join(parts)


@pytest.mark.parametrize("status", [401, 500])
def test_a_key_echoed_in_a_model_error_never_reaches_the_checkpoints(
    chat_server, search_server, status
):
    message = f"Incorrect API key provided: {SECRET_MODEL_KEY}. You can find your key at ..."
    chat_server.fault = lambda number, body: Reply(
        status, {"error": {"message": message, "type": "invalid_request_error"}}
    )
    saver = InMemorySaver()
    graph = build_graph(saver)
    config = {"configurable": {"thread_id": f"echo-{status}"}}
    with pytest.raises(Exception, match=r"\*\*\*") as failed:
        asyncio.run(
            graph.ainvoke({"question": "Compare zstd and xz", "settings": SETTINGS}, config)
        )
    assert SECRET_MODEL_KEY not in str(failed.value) and SECRET_MODEL_KEY not in repr(failed.value)
    stored = saved_bytes(saver)
    assert stored.count(b"__error__") >= (3 if status == 500 else 1)  # every attempt's error
    assert b"Incorrect API key provided: ***" in stored
    assert SECRET_MODEL_KEY.encode() not in stored
