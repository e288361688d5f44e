"""The MCP server's tools and resource, on the official SDK's `MCPServer`; same on every transport.

A run lasts minutes, so `start_research` answers with a run id at once and the run goes on in
the server; `research_progress` and `research_result` read it, `wait_for_research` waits with
progress notifications for clients that prefer one call. Reports are also resources. A finished
report is kept true by the tools of `server.keeping_tools` (evidence, re-check, watch).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import Annotated, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from pydantic import Field

from deep_research.server.keeping_tools import add_keeping_tools
from deep_research.server.views import (
    REPORT_URI,
    RunProgress,
    RunResult,
    RunRow,
    progress_view,
    result_view,
    row_view,
)
from deep_research.service.bad_input import BadInput
from deep_research.service.caller import Caller
from deep_research.service.event_lines import describe
from deep_research.service.options import ResearchOptions
from deep_research.service.runs import NotNow, RunService, UnknownRun
from deep_research.state import ClarifyReply

INSTRUCTIONS = (
    "Deep research: plans a question into subtasks, searches the web or local documents in "
    "parallel, and writes a Markdown report whose every [n] citation was checked against a "
    "listed source. A run takes minutes: call start_research, then research_progress now and "
    "then (or wait_for_research), then research_result. With ask_back, a vague question is "
    "first answered with questions (status waiting): reply with answer_questions."
)

PROGRESS_LINES = 40  # the latest progress lines a progress answer carries
CALLER = Caller("mcp")  # one caller per server: its token, when it has one, is the door's key
RunId = Annotated[
    str, Field(min_length=1, max_length=100, description="The id start_research returned.")
]
T = TypeVar("T")


async def _answer(call: Awaitable[T]) -> T:
    """A tool's answer, with a caller's mistake (bad input, unknown run) as a tool error."""
    try:
        return await call
    except (BadInput, UnknownRun, NotNow) as error:
        raise ToolError(str(error)) from None


def build_server(service: RunService, token: str | None = None, url: str = "") -> MCPServer:
    """The MCP server over the run service; with `token`, HTTP callers must present it as a
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
        ask_back: Annotated[
            bool,
            Field(
                description="When the question is too vague to research well, ask up to three "
                "clarifying questions first: the run waits (status waiting, `questions` set) "
                "until answer_questions replies or skips."
            ),
        ] = False,
    ) -> RunProgress:
        """Start a deep-research run on a question and return its run id at once.

        The run goes on in the server for minutes (it survives a restart of the server). Use
        research_progress to watch it, research_result to read the cited report, or
        wait_for_research to wait. Options bound the work (rounds, budgets) and pick the
        report's language and where to search; unset options keep the server's settings.
        """

        async def go() -> RunProgress:
            asked = options or ResearchOptions()
            admitted = await service.admission.new_run(question, asked, ask_back=ask_back)
            run_id = await service.start(CALLER, admitted)
            return await _progress(service, run_id)

        return await _answer(go())

    @server.tool()
    async def research_progress(run_id: RunId) -> RunProgress:
        """Where a run stands: status (queued, running, done, failed, unfinished), round,
        the latest progress lines, and the calls and tokens spent so far."""
        return await _answer(_progress(service, run_id))

    @server.tool()
    async def research_result(run_id: RunId) -> RunResult:
        """A run's result: the Markdown report whose [n] citations resolve to `sources`, the
        quality score, why it stopped, and its usage. Before the run is done, its status only."""
        return await _answer(_result(service, run_id))

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

        async def go() -> RunResult:
            await service.read(CALLER, run_id)  # an unknown run: said at once
            if ctx is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(_notify(service, run_id, ctx), timeout_seconds)
            else:
                await service.wait(CALLER, run_id, timeout_seconds)
            return await _result(service, run_id)

        return await _answer(go())

    @server.tool()
    async def answer_questions(
        run_id: RunId,
        answers: Annotated[
            list[Annotated[str, Field(max_length=300)]],
            Field(
                max_length=3,
                description="One answer per question, in order (a suggested one or your own; "
                '"" leaves a question open).',
            ),
        ] = [],  # noqa: B006 (the SDK reads the default; it is never changed)
        skip: Annotated[
            bool, Field(description="Skip the questions: the question is researched as asked.")
        ] = False,
    ) -> RunProgress:
        """Reply to the questions a run asked back before research (status waiting with
        `questions`); the answers join what is researched, then the run goes on."""

        async def go() -> RunProgress:
            reply = ClarifyReply(action="skip" if skip else "answer", answers=answers)
            await service.answer(CALLER, run_id, reply)
            return await _progress(service, run_id)

        return await _answer(go())

    @server.tool()
    async def resume_research(run_id: RunId) -> RunProgress:
        """Continue a run that failed or stopped with its server, from its last finished step
        (nothing finished is done or paid for again)."""

        async def go() -> RunProgress:
            await service.resume(CALLER, run_id)
            return await _progress(service, run_id)

        return await _answer(go())

    @server.tool()
    async def list_research(
        limit: Annotated[int, Field(ge=1, le=200, description="At most this many runs.")] = 20,
    ) -> list[RunRow]:
        """The most recent runs this server's callers started, newest first."""
        return [row_view(listed) for listed in await service.list(CALLER, limit)]

    @server.resource(REPORT_URI, mime_type="text/markdown", description="A run's cited report.")
    async def report(run_id: str) -> str:
        """A finished run's Markdown report."""
        try:
            info = await service.read(CALLER, run_id)
        except UnknownRun as error:
            raise ResourceNotFoundError(str(error)) from None
        if info.status != "done":
            raise ResourceNotFoundError(f"run {run_id!r} is {info.status}: no report yet")
        return info.values.get("report") or ""

    add_keeping_tools(server, service, CALLER)
    return server


async def _lines(service: RunService, run_id: str) -> list[str]:
    """The run's latest progress lines, oldest first."""
    records = await service.latest(CALLER, run_id, PROGRESS_LINES * 2)
    lines = [line for r in records if r.progress and (line := describe(r.progress))]
    return lines[-PROGRESS_LINES:]


async def _progress(service: RunService, run_id: str) -> RunProgress:
    info = await service.read(CALLER, run_id)
    return progress_view(info, await _lines(service, run_id))


async def _result(service: RunService, run_id: str) -> RunResult:
    return result_view(await service.read(CALLER, run_id))


async def _notify(service: RunService, run_id: str, ctx: Context) -> None:
    """Progress notifications until the run is no longer queued or running: where it stands
    first (its latest line, or its status), then one per new line (the count only grows)."""
    lines = await _lines(service, run_id)
    info = await service.read(CALLER, run_id)
    told = max(1, len(lines))
    await ctx.report_progress(told, None, lines[-1] if lines else info.status)
    last = (await service.latest(CALLER, run_id, 1) or [None])[-1]
    async for records in service.follow(CALLER, run_id, last.seq if last else 0):
        for record in records:
            line = describe(record.progress) if record.progress else None
            if line:
                told += 1
                await ctx.report_progress(told, None, line)
