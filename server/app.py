"""The MCP server's tools and resource, on the official SDK's `MCPServer`; same on every transport.

A run lasts minutes, so `start_research` answers with a run id at once and the run goes on in
the server; `research_progress` and `research_result` read it, `wait_for_research` waits with
progress notifications for clients that prefer one call. Reports are also resources.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Annotated, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from pydantic import Field

from deep_research.cli.bad_input import BadInput
from deep_research.server.arguments import ResearchOptions
from deep_research.server.runs import LiveRun, ResearchRuns, UnknownRun
from deep_research.server.views import (
    REPORT_URI,
    RunProgress,
    RunResult,
    RunRow,
    progress_view,
    result_view,
    row_view,
)

INSTRUCTIONS = (
    "Deep research: plans a question into subtasks, searches the web or local documents in "
    "parallel, and writes a Markdown report whose every [n] citation was checked against a "
    "listed source. A run takes minutes: call start_research, then research_progress now and "
    "then (or wait_for_research), then research_result."
)

RunId = Annotated[
    str, Field(min_length=1, max_length=100, description="The id start_research returned.")
]
T = TypeVar("T")


async def _answer(call: Awaitable[T]) -> T:
    """A tool's answer, with a caller's mistake (bad input, unknown run) as a tool error."""
    try:
        return await call
    except (BadInput, UnknownRun) as error:
        raise ToolError(str(error)) from None


def build_server(runs: ResearchRuns, token: str | None = None, url: str = "") -> MCPServer:
    """The MCP server over one run manager; with `token`, HTTP callers must present it as a
    bearer token (`url`: where the server is served)."""
    if token is None:
        server = MCPServer("deep-research", instructions=INSTRUCTIONS)
    else:
        from deep_research.server.http_transport import StaticToken, auth_settings

        server = MCPServer(
            "deep-research",
            instructions=INSTRUCTIONS,
            token_verifier=StaticToken(token),
            auth=auth_settings(url),
        )

    @server.tool()
    async def start_research(
        question: Annotated[
            str,
            Field(min_length=1, max_length=4000, description="What to research, in any language."),
        ],
        options: ResearchOptions | None = None,
    ) -> RunProgress:
        """Start a deep-research run on a question and return its run id at once.

        The run goes on in the server for minutes (it survives a restart of the server). Use
        research_progress to watch it, research_result to read the cited report, or
        wait_for_research to wait. Options bound the work (rounds, budgets) and pick the
        report's language and where to search; unset options keep the server's settings.
        """

        async def go() -> RunProgress:
            run_id = await runs.start(question, options or ResearchOptions())
            return progress_view(*(await runs.status(run_id)), run_id)

        return await _answer(go())

    @server.tool()
    async def research_progress(run_id: RunId) -> RunProgress:
        """Where a run stands: status (queued, running, done, failed, unfinished), round,
        the latest progress lines, and the calls and tokens spent so far."""
        return await _answer(_progress(runs, run_id))

    @server.tool()
    async def research_result(run_id: RunId) -> RunResult:
        """A run's result: the Markdown report whose [n] citations resolve to `sources`, the
        quality score, why it stopped, and its usage. Before the run is done, its status only."""
        return await _answer(_result(runs, run_id))

    @server.tool()
    async def wait_for_research(
        run_id: RunId,
        timeout_seconds: Annotated[
            float, Field(gt=0, le=3600, description="Longest wait; then the current progress.")
        ] = 300,
        ctx: Context | None = None,
    ) -> RunResult:
        """Wait until a run is done (or the timeout), sending progress notifications as it
        advances; returns the result, or the status when it is not done yet."""

        async def on_news(live: LiveRun) -> None:
            if ctx is not None:
                line = live.lines[-1] if live.lines else ("queued" if live.queued else "started")
                await ctx.report_progress(live.events, None, line)

        async def go() -> RunResult:
            await runs.wait(run_id, timeout_seconds, on_news)
            return await _result(runs, run_id)

        return await _answer(go())

    @server.tool()
    async def resume_research(run_id: RunId) -> RunProgress:
        """Continue a run that failed or stopped with its server, from its last finished step
        (nothing finished is done or paid for again)."""

        async def go() -> RunProgress:
            await runs.resume(run_id)
            return await _progress(runs, run_id)

        return await _answer(go())

    @server.tool()
    async def list_research(
        limit: Annotated[int, Field(ge=1, le=200, description="At most this many runs.")] = 20,
    ) -> list[RunRow]:
        """The most recent runs in the server's store, newest first (CLI runs included)."""
        rows = await runs.recent(limit)
        return [row_view(run_id, await _status_of(runs, run_id), s) for run_id, s in rows]

    @server.resource(REPORT_URI, mime_type="text/markdown", description="A run's cited report.")
    async def report(run_id: str) -> str:
        """A finished run's Markdown report."""
        try:
            status, snapshot, _ = await runs.status(run_id)
        except UnknownRun as error:
            raise ResourceNotFoundError(str(error)) from None
        if status != "done":
            raise ResourceNotFoundError(f"run {run_id!r} is {status}: no report yet")
        return snapshot.values.get("report") or ""

    return server


async def _progress(runs: ResearchRuns, run_id: str) -> RunProgress:
    return progress_view(*(await runs.status(run_id)), run_id)


async def _result(runs: ResearchRuns, run_id: str) -> RunResult:
    status, snapshot, _ = await runs.status(run_id)
    return result_view(status, snapshot, run_id)


async def _status_of(runs: ResearchRuns, run_id: str) -> str:
    status, _, _ = await runs.status(run_id)
    return status
