"""A stream is timed on silence by one timer a call (`tools.streaming`): keepalive comments are
no tokens, and a stream that only sends them is silent."""

from __future__ import annotations

import asyncio
import json

from langchain_core.messages import HumanMessage

from deep_research.settings import Settings
from deep_research.tools.model_client import ModelClient
from deep_research.tools.structured import write_raw

from stand_ins.loopback import Reply


def chunk(text: str, finish: str | None = None) -> str:
    choice = {"index": 0, "delta": {"content": text}, "finish_reason": finish}
    body = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    return f"data: {json.dumps({**body, 'choices': [choice]})}\n\n"


def test_keepalive_comments_do_not_keep_a_silent_stream_alive(chat_server):
    """A first token, then only `: keepalive` comments for 1.5 s: silent past 0.5 s, so the
    call is sent again (and the second stream answers)."""
    keepalives = [(0.1, ": keepalive\n\n")] * 15
    stalled = [
        (0.0, chunk("Zstd")),
        *keepalives,
        (0.0, chunk(" wins.", "stop") + "data: [DONE]\n\n"),
    ]
    replies = iter([Reply(sse_parts=stalled)])
    chat_server.fault = lambda number, body: next(replies, None)

    async def go():
        client = ModelClient(Settings(request_idle_timeout=0.5, model_retries=1))
        text, _, _ = await write_raw(
            [HumanMessage("Question: zstd?")], role="writer", client=client
        )
        return text, client.stats.of("writer")

    text, stats = asyncio.run(go())
    assert text and "wins" not in text  # the second, whole answer, not the stalled one
    assert stats.retries == 1 and stats.retries_after_output == 1
    assert len(chat_server.requests) == 2
