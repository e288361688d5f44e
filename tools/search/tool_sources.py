"""MCP tools as a search backend: each allowed tool is asked every query beside the web.

What a tool returns is untrusted text, like a web page: capped, compacted and later fenced in
every prompt, never executed. It becomes a hit whose URL is the web address the answer names,
else the stable locator `mcp://SERVER/TOOL?ARG=QUERY`, so it is registered, cited and checked
like any other source; the same answer found by another query keeps its first address, so one
document is one source. Only tools on the server's allow-list are ever called. A server that
fails to start or dies, answers too much or too late, is a failed source, not a failed run:
its hits are empty and a `source_failed` progress event says why (never an empty reason). Each
server is held open by a task of its own on the run's event loop, opened at the first search
and closed when the run's backend is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import weakref
from itertools import zip_longest
from typing import Any
from urllib.parse import urlencode, urlsplit

from deep_research.domain.sources import normalize_url
from deep_research.state import SearchHit
from deep_research.tools.events import SourceFailed, emit
from deep_research.tools.evidence.reads import Capture, PageRead
from deep_research.tools.mcp_config import McpServerEntry, McpSources
from deep_research.tools.search.base import SearchBackend, compact, rank_score
from deep_research.tools.secrets import redact, redact_hit

MAX_TOOL_TEXT = 200_000  # characters of one tool answer kept, before compacting (bytes read
# are capped while reading: `bounded_mcp.MAX_ANSWER_BYTES`)
STOP_TIMEOUT = 5.0  # seconds to wait for the servers to stop (the SDK kills one after 2 s)
QUERY_NAMES = ("query", "q", "question", "search", "text", "prompt")


class ToolFailed(RuntimeError):
    """A tool answered with an error, or could not be asked."""


def query_argument(schema: dict[str, Any]) -> str | None:
    """The argument a tool takes the query in: a well-known name, else its one text argument.

    None when the tool needs anything else (another required argument, no text argument).
    """
    properties = schema.get("properties") or {}
    texts = [name for name, spec in properties.items() if spec.get("type") == "string"]
    required = set(schema.get("required") or [])
    chosen = next((name for name in QUERY_NAMES if name in texts), None)
    if chosen is None and len(texts) == 1:
        chosen = texts[0]
    if chosen is None or required - {chosen}:
        return None
    return chosen


def answer_text(result: Any) -> str:
    """The text blocks of a tool's answer, joined and capped."""
    parts = []
    for block in result.content:
        text = getattr(block, "text", None)
        resource = getattr(block, "resource", None)
        if text is None and resource is not None:
            text = getattr(resource, "text", None)
        if isinstance(text, str):
            parts.append(text)
    return "\n".join(parts)[:MAX_TOOL_TEXT]


URL_IN_TEXT = re.compile(r"https?://[^\s<>\"'`|\\^{}\[\]]+", re.IGNORECASE)
STRUCTURED_URL_KEYS = ("url", "link", "source_url", "href")


def _web_address(text: str) -> str | None:
    """`text` when it is an http(s) URL with a host that parses, else None."""
    text = text.strip().rstrip(".,;:!?)'\"")
    try:
        parts = urlsplit(text)
        ok = parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    except ValueError:  # an address that does not parse (`http://[::1`) names nothing
        return None
    return text if ok else None


def answer_url(result: Any, text: str = "") -> str | None:
    """The http(s) URL the answer names as its own: a structured `url` (or `link`...), a
    resource link or embedded resource, else the one distinct web address its text gives.

    A text that names several addresses does not say which is the answer's: None then.
    """
    structured = result.structured_content
    if isinstance(structured, dict):
        for key in STRUCTURED_URL_KEYS:
            value = structured.get(key)
            if isinstance(value, str) and _web_address(value):
                return _web_address(value)
    for block in result.content:
        kind = getattr(block, "type", "")
        uri = getattr(block, "uri", None) or getattr(getattr(block, "resource", None), "uri", "")
        if kind in ("resource_link", "resource") and _web_address(str(uri or "")):
            return _web_address(str(uri))
    named = {found for match in URL_IN_TEXT.findall(text) if (found := _web_address(match))}
    return named.pop() if len(named) == 1 else None


def locator(server: str, tool: str, argument: str, query: str) -> str:
    """The stable address of one tool answer: `mcp://server/tool?argument=query`."""
    return f"mcp://{server}/{tool}?{urlencode({argument: query})}"


def digest(text: str) -> str:
    """What identifies an answer without an address: its text."""
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


class ServerConnection:
    """One MCP server held open on the running loop by its own task, until told to stop."""

    def __init__(self, name: str, entry: McpServerEntry, on_read: Capture | None = None) -> None:
        self.name, self.entry = name, entry
        self.on_read = on_read  # told of every answer (the run's evidence)
        self.client: Any = None
        self.tools: dict[str, str] = {}  # allowed tool -> the argument it takes the query in
        self.allowed: dict[str, tuple[str, dict]] = {}  # allowed tool -> description, schema
        self.documents: dict[tuple[str, str], str] = {}  # (tool, answer digest) -> its address
        self.failure: str | None = None
        self._ready: asyncio.Event | None = None
        self.stop: asyncio.Event | None = None
        self._task: asyncio.Task | None = None
        self._cancelled = False  # its start-up was cancelled (once, see `_cancel_start_up`)

    def _target(self) -> Any:
        """The server's transport, every message read bounded (`bounded_mcp`)."""
        from mcp import StdioServerParameters

        from deep_research.tools.search.bounded_mcp import (
            MAX_ANSWER_BYTES,
            bounded_http_client,
            bounded_stdio_client,
        )

        if self.entry.url:
            return bounded_http_client(self.entry.url, MAX_ANSWER_BYTES)
        params = StdioServerParameters(
            command=self.entry.command or "",
            args=self.entry.args,
            env=self.entry.env,
            cwd=self.entry.cwd,
        )
        return bounded_stdio_client(params, MAX_ANSWER_BYTES, self._oversized)

    def _oversized(self) -> None:
        """The server sent a message past the byte limit: the connection ends, said why."""
        from deep_research.tools.search.bounded_mcp import MAX_ANSWER_BYTES

        self.fail(f"sent an answer larger than {MAX_ANSWER_BYTES:,} bytes (not read further)")

    async def open(self) -> bool:
        """True once the server is up with its allowed tools listed; False when it failed."""
        if self._task is None:
            self._ready, self.stop = asyncio.Event(), asyncio.Event()
            self._task = asyncio.create_task(self._hold(), name=f"mcp-source-{self.name}")
        if self._ready is not None and not self._ready.is_set():
            try:
                await asyncio.wait_for(self._ready.wait(), self.entry.startup_timeout)
            except TimeoutError:
                self.fail(f"did not start within {self.entry.startup_timeout:g} s")
                self._cancel_start_up()  # it may hang in its start-up, where `stop` is never seen
        return self.failure is None

    async def _hold(self) -> None:
        from mcp import Client

        try:
            async with Client(self._target()) as client:
                listed = (await client.list_tools()).tools
                allowed = set(self.entry.allowed_tools)
                for tool in listed:
                    if tool.name in allowed:
                        self.allowed[tool.name] = (tool.description or "", tool.input_schema)
                    argument = query_argument(tool.input_schema) if tool.name in allowed else None
                    if argument:
                        self.tools[tool.name] = argument
                self.client = client
                if self._ready:
                    self._ready.set()
                if self.stop:
                    await self.stop.wait()
        except asyncio.CancelledError:  # stopped (the run ended, or it took too long to start)
            self.failure = self.failure or "stopped before it finished starting"
            raise
        except Exception as error:  # it failed to start or died: a failed source, said so
            self.fail(f"{type(error).__name__}: {error}")
        finally:
            self.client = None
            if self._ready:
                self._ready.set()

    def fail(self, why: str) -> None:
        """Mark the server failed (once) and say so on the progress stream."""
        if self.failure is None:
            self.failure = redact(" ".join(why.split()))[:300]  # one line, no secret in a URL
            emit(SourceFailed(source=f"mcp:{self.name}", error=self.failure))
        if self.stop:
            self.stop.set()

    def halt(self) -> None:
        """On the connection's loop: end the session if it is up, else stop its start-up."""
        if self.stop is not None:
            self.stop.set()
        ready = self._ready is not None and self._ready.is_set()
        if not ready:
            self._cancel_start_up()

    def _cancel_start_up(self) -> None:
        """Cancel the holding task once: a second cancel, from another caller that waited for
        the start-up, would land in the SDK's shielded stop of the child (a native cancel goes
        through an anyio shield) and leave the child running."""
        if self._task is not None and not self._cancelled:
            self._cancelled = True
            self._task.cancel()

    async def ask(self, tool: str, query: str, timeout: float) -> SearchHit:
        """One allowed tool's answer to a query, as a hit; ToolFailed when it has none."""
        argument = self.tools[tool]
        return await self._answered(
            tool,
            {argument: query},
            timeout,
            locator(self.name, tool, argument, query),
            title=query,
            query=query,
        )

    async def call(self, tool: str, args: dict[str, Any], timeout: float) -> SearchHit:
        """One allowed tool called with the arguments a worker's model chose, as a hit whose
        URL is the one the answer names, else `mcp://server/tool?arguments`."""
        if tool not in self.allowed:
            raise ToolFailed(f"{tool} is not an allowed tool of {self.name}")
        shown = {k: v if isinstance(v, str) else json.dumps(v) for k, v in sorted(args.items())}
        return await self._answered(
            tool,
            args,
            timeout,
            f"mcp://{self.name}/{tool}?{urlencode(shown)}",
            title=" ".join(shown.values()),
            query=json.dumps(args, ensure_ascii=False)[:300],
        )

    async def _answered(
        self,
        tool: str,
        args: dict[str, Any],
        timeout: float,
        fallback: str,
        *,
        title: str,
        query: str,
    ) -> SearchHit:
        """Call `tool` with `args` and make its answer a hit: ToolFailed (naming the cause:
        timeout, error answer, connection) when it has none. One document, one source: the same
        answer found again keeps its first address (the web URL it names, else `fallback`)."""
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED

        client = self.client
        if client is None:
            raise ToolFailed("the server is not running")
        try:
            result = await asyncio.wait_for(client.call_tool(tool, args), timeout)
        except TimeoutError:
            raise ToolFailed(f"{tool}: no answer within {timeout:g} s (search_timeout)") from None
        except MCPError as error:
            if self.failure is not None:  # the connection ended for a reason already given
                raise ToolFailed(f"{tool}: {self.failure}") from None
            if error.error.code == CONNECTION_CLOSED:
                raise  # the server went away: the whole connection failed
            raise ToolFailed(f"{tool}: {error.error.message}") from None
        text = answer_text(result)
        if result.is_error:
            raise ToolFailed(f"{tool} answered with an error: {compact(text)[:200]}")
        first = self.documents.setdefault(
            (tool, digest(text)), answer_url(result, text) or fallback
        )
        if self.on_read is not None:  # kept as the run holds it: without a key we hold
            await self.on_read(PageRead(url=first, kind="tool", text=redact(text)))
        hit = SearchHit(
            url=first,
            title=f"{self.name} · {tool}: {title}"[:200],
            content=compact(text),
            query=query,
        )
        return redact_hit(hit)  # where a tool's answer enters the run


def _stop_all(connections: list[ServerConnection]) -> None:
    """Stop every server: a running one ends its session, one still starting (which never sees
    `stop`) has its holding task cancelled; either way the SDK stops its child process. Safe
    from any thread (the garbage collector's included)."""
    for connection in connections:
        task = connection._task
        if task is None or task.done():
            continue
        with contextlib.suppress(RuntimeError):  # its loop has closed: nothing is left to stop
            task.get_loop().call_soon_threadsafe(connection.halt)


class ToolSearch:
    """Every allowed tool of every configured server, asked each query at once."""

    def __init__(self, sources: McpSources, timeout: float, on_read: Capture | None = None) -> None:
        self.timeout = timeout
        self.connections = [ServerConnection(n, e, on_read) for n, e in sources.servers.items()]
        weakref.finalize(self, _stop_all, self.connections)

    async def aclose(self) -> None:
        """Stop every server this run started, and wait (at most STOP_TIMEOUT) until each has
        ended its session and its child: a child left to the garbage collector outlives its
        event loop (asyncio's "Event loop is closed" at exit)."""
        _stop_all(self.connections)
        loop = asyncio.get_running_loop()
        held = [c._task for c in self.connections if c._task and c._task.get_loop() is loop]
        if held:
            await asyncio.wait(held, timeout=STOP_TIMEOUT)

    async def tool_specs(self) -> list[tuple[str, str, str, dict]]:
        """Every allowed tool of the servers that are up: (server, tool, description, input
        schema), for a worker's model to call with its own arguments."""
        opened = await asyncio.gather(*(c.open() for c in self.connections))
        return [
            (c.name, tool, description, schema)
            for c, up in zip(self.connections, opened, strict=True)
            if up
            for tool, (description, schema) in c.allowed.items()
        ]

    async def call(self, server: str, tool: str, args: dict[str, Any]) -> SearchHit:
        """One allowed tool of one server, with a worker's arguments (ToolFailed, TimeoutError
        when it has no answer)."""
        connection = next((c for c in self.connections if c.name == server), None)
        if connection is None or not await connection.open():
            raise ToolFailed(f"the MCP server {server} is not running")
        try:
            return await connection.call(tool, args, self.timeout)
        except (ToolFailed, TimeoutError):
            raise
        except Exception as error:  # the connection broke mid-run: a failed source
            connection.fail(f"{type(error).__name__}: {error}")
            raise ToolFailed(f"{type(error).__name__}: {error}") from error

    async def _ask_server(self, connection: ServerConnection, query: str) -> list[SearchHit]:
        if not await connection.open():
            return []
        hits = []
        for tool in list(connection.tools):
            try:
                hits.append(await connection.ask(tool, query, self.timeout))
            except ToolFailed as error:  # its message names the cause (timeout, size, error)
                if connection.failure is not None:  # the server failed, and said so once
                    break
                error_line = redact(" ".join(str(error).split()))[:300]
                emit(SourceFailed(source=f"mcp:{connection.name}/{tool}", error=error_line))
            except Exception as error:  # the connection broke mid-run: a failed source
                connection.fail(f"{type(error).__name__}: {error}" if str(error) else repr(error))
                break
        return [hit for hit in hits if hit.content]

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        """One hit per allowed tool that answered, server by server."""
        answers = await asyncio.gather(*(self._ask_server(c, query) for c in self.connections))
        return [hit for hits in answers for hit in hits][:max_results]


class WithToolSources:
    """A search backend and the MCP tools together: tool answers first, then alternately."""

    def __init__(self, base: SearchBackend, tools: ToolSearch) -> None:
        self._base, self._tools = base, tools

    @property
    def base(self) -> SearchBackend:
        """The search backend alone (a worker that calls MCP tools itself searches it)."""
        return self._base

    @property
    def tools(self) -> ToolSearch:
        """The MCP tools beside it."""
        return self._tools

    async def aclose(self) -> None:
        """The run has ended: its MCP servers stop."""
        await self._tools.aclose()

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        """Both asked at once; hits interleaved, URLs unique, scored by position."""
        tools, base = await asyncio.gather(
            self._tools.search(query, max_results), self._base.search(query, max_results)
        )
        hits, seen = [], set()
        for pair in zip_longest(tools, base):
            for hit in pair:
                if hit is not None and normalize_url(hit.url) not in seen:
                    seen.add(normalize_url(hit.url))
                    hits.append(hit.model_copy(update={"score": rank_score(len(hits))}))
        return hits[: max_results + len(tools)]
