"""Connections to MCP source servers whose reads are bounded in bytes, while reading.

A tool answer is outside text: a server that sends 100 MB must not be read whole (the SDK's
stdio client keeps joining one line until its newline; a JSON answer over HTTP is read whole).
Over stdio, one message longer than `limit` ends the connection (its server is stopped, and
`on_oversize` is told); over HTTP, a JSON answer longer than `limit` fails that call (an
`AnswerTooLarge`, which the SDK reports as that request's error), and an SSE event longer
than `limit` is refused by the SDK's own event limit. The stdio side reuses the SDK's own
process start and stop (`mcp.client.stdio`'s helpers, private names checked against mcp 2.3.0:
a test spawns a real server through them), changing only how lines are read.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
import httpx2
from mcp.client import stdio as sdk_stdio
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

MAX_ANSWER_BYTES = 4_000_000  # one MCP message from a source server, at most


class AnswerTooLarge(httpx2.StreamError):
    """A server's answer went past the byte limit; the rest is not read."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"answer larger than {limit:,} bytes")


class _CappedStream(httpx2.AsyncByteStream):
    """A response body that raises `AnswerTooLarge` past `limit` bytes."""

    def __init__(self, inner: httpx2.AsyncByteStream, limit: int) -> None:
        self._inner, self._limit = inner, limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        read = 0
        async for chunk in self._inner:
            read += len(chunk)
            if read > self._limit:
                raise AnswerTooLarge(self._limit)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class _CappedTransport(httpx2.AsyncBaseTransport):
    """HTTP whose non-streaming (JSON) response bodies are capped; SSE has its own event cap."""

    def __init__(self, limit: int) -> None:
        self._inner, self._limit = httpx2.AsyncHTTPTransport(), limit

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return response
        return httpx2.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_CappedStream(response.stream, self._limit),  # type: ignore[arg-type]
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


@asynccontextmanager
async def bounded_http_client(url: str, limit: int = MAX_ANSWER_BYTES) -> AsyncIterator:
    """The SDK's streamable HTTP transport, with every answer capped at `limit` bytes."""
    timeout = httpx2.Timeout(30, read=300)  # the SDK's own defaults
    async with (
        httpx2.AsyncClient(transport=_CappedTransport(limit), timeout=timeout) as client,
        streamable_http_client(url, http_client=client, max_sse_event_size=limit) as streams,
    ):
        yield streams


async def _lines(stdout: anyio.abc.ByteReceiveStream, limit: int) -> AsyncIterator[bytes | None]:
    """The lines of a byte stream; None (then the end) for a line longer than `limit`."""
    buffer = bytearray()
    async for chunk in stdout:
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            buffer += chunk[start:end]
            if len(buffer) > limit:
                yield None
                return
            yield bytes(buffer)
            buffer.clear()
            start = end + 1
        buffer += chunk[start:]
        if len(buffer) > limit:
            yield None
            return


@asynccontextmanager
async def bounded_stdio_client(
    server: sdk_stdio.StdioServerParameters, limit: int, on_oversize: Callable[[], None]
) -> AsyncGenerator:
    """The SDK's stdio transport (its process start and stop), with each message read bounded.

    A message past `limit` bytes is not read further: `on_oversize` is called and the read
    stream ends, so every call in flight fails at once and the server is stopped.
    """
    command = await sdk_stdio._get_executable_command(server.command)
    process = await sdk_stdio._create_platform_compatible_process(
        command=command,
        args=server.args,
        env=sdk_stdio.get_default_environment() | (server.env or {}),
        errlog=sys.stderr,
        cwd=server.cwd,
    )
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def stdout_reader() -> None:
        assert process.stdout
        async with read_writer:
            with _quiet_close():
                async for line in _lines(process.stdout, limit):
                    if line is None:
                        on_oversize()
                        return
                    text = line.decode(server.encoding, server.encoding_error_handler)
                    await read_writer.send(sdk_stdio._parse_line(text))

    async def stdin_writer() -> None:
        assert process.stdin
        async with write_reader:
            with _quiet_close():
                async for message in write_reader:
                    json = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((json + "\n").encode(server.encoding))

    async with anyio.create_task_group() as group:
        group.start_soon(stdout_reader)
        group.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                read_stream.close()
                write_stream.close()
                await sdk_stdio._stop_server_process(process)
            group.cancel_scope.cancel()


def _quiet_close():
    """A pipe or stream closed under a read or write at shutdown is the end, not an error."""
    from contextlib import suppress

    return suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError)
