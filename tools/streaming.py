"""One streamed model call: tokens as they arrive, a timeout on silence, and what the reply was.

A small model on a CPU writes a report for minutes, so a total timeout kills honest calls; a
call fails instead when no chunk has arrived for `request_idle_timeout` seconds (`SilentStream`;
keepalive comments are no chunks: they do not reset it). One timer per call, moved at each
chunk: `ChatOpenAI.stream_chunk_timeout` did the same with a new task per chunk, a fifth of a
call's CPU when a server streams a token a chunk. `model_call_timeout`
(default 30 minutes) caps the whole call. A reply longer than the role's `max_tokens` could
allow is broken (a server that ignores the cap, or never ends): reading stops there. Chunks are
kept in a list and summed once at the end, never `total + chunk` per chunk, which copies the
whole reply each time. Progress events every few seconds show a long call's tokens arriving.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import add_ai_message_chunks
from langchain_core.runnables import Runnable

from deep_research.domain.context import estimate_tokens
from deep_research.tools.events import Streaming, emit

TICK_SECONDS = 2.0  # how often a streaming call reports its progress
MAX_CHARS_PER_TOKEN = 16  # no tokenizer's token is longer: more text than this is over the cap
SLACK_CHUNKS = 64  # chunks that carry no token (role, usage, keepalive-like empty deltas)


class SilentStream(TimeoutError):
    """No chunk arrived for `request_idle_timeout` seconds: the server went quiet.
    `chunks_received`: how many had come before (a retry after output is counted apart)."""

    def __init__(self, message: str, chunks_received: int) -> None:
        super().__init__(message)
        self.chunks_received = chunks_received


class ReplyTooLong(RuntimeError):
    """The stream went on past what the role's `max_tokens` allows: the server ignores the cap.

    An unusable reply, not a failed call: the step that got it re-asks once with the bound
    restated, then goes on without its answer (`tools.structured`). `chunks` were paid for.
    """

    def __init__(self, message: str, max_tokens: int, chunks: int, chars: int = 0) -> None:
        super().__init__(message)
        self.max_tokens, self.chunks, self.chars = max_tokens, chunks, chars

    @property
    def tokens(self) -> int:
        """The tokens that arrived before reading stopped (estimated: no usage came)."""
        return max(self.chunks, self.chars // 4)


class EmptyStream(RuntimeError):
    """The server closed the stream without a chunk or a finish reason (llama-cpp-python does
    this for a prompt beyond its window: HTTP 200, empty body)."""

    transient = True  # worth another try (`tools.retry_policy`)


@dataclass
class StreamedReply:
    """A finished reply, why it ended, and how long it took."""

    message: AIMessage
    finish_reason: str
    seconds: float
    chunks: int
    usage_estimated: bool  # the server streamed no usage; tokens were counted here


def _as_message(total: AIMessageChunk) -> AIMessage:
    """The summed chunks as a plain AIMessage (tool calls parsed)."""
    return AIMessage(
        content=total.content,
        tool_calls=total.tool_calls,
        invalid_tool_calls=total.invalid_tool_calls,
        usage_metadata=total.usage_metadata,
        response_metadata=total.response_metadata,
        id=total.id,
    )


def _size(chunk: AIMessageChunk) -> int:
    """The characters one chunk adds to the reply (text and tool-call arguments). A model
    without its own streaming yields one whole message, which has no tool-call chunks."""
    text = chunk.content if isinstance(chunk.content, str) else str(chunk.content)
    pieces = getattr(chunk, "tool_call_chunks", None) or []
    return len(text) + sum(len(c.get("args") or "") for c in pieces)


def _joined(parts: list[AIMessageChunk]) -> AIMessageChunk | None:
    """The whole reply from its chunks, summed once (a model without its own streaming yields
    one whole message: it is the reply)."""
    if len(parts) > 1:
        return add_ai_message_chunks(parts[0], *parts[1:])
    return parts[0] if parts else None


async def stream_reply(
    model: Runnable,
    messages: list[BaseMessage],
    *,
    role: str,
    total_cap: float | None,
    idle: float | None = None,
    max_tokens: int | None = None,
    **kwargs,
) -> StreamedReply:
    """Stream one call to its end and return the reply.

    Raises SilentStream after `idle` seconds without a chunk (the first one included: a cold
    local model may process a prompt for minutes, within it), TimeoutError past `total_cap`
    seconds, ReplyTooLong past what `max_tokens` tokens can hold.
    """
    loop = asyncio.get_running_loop()
    started = last_tick = time.monotonic()
    parts: list[AIMessageChunk] = []
    chars = 0
    max_chars = max_chunks = None
    if max_tokens:
        max_chars = max_tokens * MAX_CHARS_PER_TOKEN
        max_chunks = 2 * max_tokens + SLACK_CHUNKS  # a few servers split a token in two
    try:
        async with asyncio.timeout(total_cap), asyncio.timeout(None) as silence:
            if idle:
                silence.reschedule(loop.time() + idle)
            async for chunk in model.astream(messages, **kwargs):
                if idle:
                    silence.reschedule(loop.time() + idle)
                parts.append(chunk)
                chars += _size(chunk)
                chunks = len(parts)
                if max_chars is not None and (chars > max_chars or chunks > max_chunks):
                    raise ReplyTooLong(
                        f"the {role} reply ran past max_tokens ({max_tokens}): {chars:,} "
                        f"characters in {chunks:,} chunks; the server ignores the cap",
                        max_tokens,
                        chunks,
                        chars,
                    )
                now = time.monotonic()
                if now - last_tick >= TICK_SECONDS:
                    last_tick = now
                    emit(Streaming(role=role, chunks=chunks, seconds=round(now - started, 1)))
    except ValueError as error:  # langchain-core's word for a stream that carried no chunk
        if "No generation chunks" not in str(error):
            raise
        raise EmptyStream("the server ended the stream without an answer") from error
    except TimeoutError as error:
        if silence.expired():
            said = f"no {role} token for {idle:g} s ({len(parts)} chunks so far)"
            raise SilentStream(said, len(parts)) from error
        raise
    seconds = time.monotonic() - started
    chunks = len(parts)
    total = _joined(parts)
    finish = (total.response_metadata.get("finish_reason") if total is not None else None) or ""
    calls = getattr(total, "tool_call_chunks", None) or getattr(total, "tool_calls", None)
    if total is None or (not finish and not total.content and not calls):
        raise EmptyStream("the server ended the stream without an answer")
    message = _as_message(total)
    estimated = not message.usage_metadata
    if estimated:  # e.g. llama-cpp-python ignores stream_options: count what we saw
        prompt = sum(estimate_tokens(m.text) for m in messages)
        message.usage_metadata = {
            "input_tokens": prompt,
            "output_tokens": chunks,
            "total_tokens": prompt + chunks,
        }
    if seconds >= TICK_SECONDS:
        emit(Streaming(role=role, chunks=chunks, seconds=round(seconds, 1), done=True))
    return StreamedReply(message, finish, seconds, chunks, estimated)
