"""The MCP server's tools for keeping a finished report true: what its citations rest on, a
re-check against today's sources, and a watched question's schedule and change lists. Each goes
through the run service (`service.keeping`) as the server's caller; a caller's mistake (an
unknown or unfinished run, a citation the report does not have, a bad period) is a tool error
naming it. Stored text is outside text: it is handed back as data, never followed.
"""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import UTC, datetime
from typing import Annotated, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from deep_research.domain.recheck_rules import parse_every
from deep_research.graph.keeping import NoSuchCitation
from deep_research.graph.recheck import NotRecheckable
from deep_research.service import keeping
from deep_research.service.bad_input import BadInput
from deep_research.service.caller import Caller
from deep_research.service.runs import RunService, UnknownRun
from deep_research.service.watch import NotWatchable
from deep_research.state import ChangeList, Recheck, Source
from deep_research.tools.evidence.store import Kept
from deep_research.tools.watches import Limits, Watch

RunId = Annotated[str, Field(min_length=1, max_length=100, description="A finished run's id.")]
CONTEXT_CHARS = 400  # stored text shown each side of a quote
T = TypeVar("T")


class KeptSource(BaseModel):
    """A cited source and what the run kept of it when it read it."""

    number: int = Field(description="The report's citation number [n].")
    title: str
    url: str
    kind: str = Field("", description="page, document, tool or snippet ('' when none was kept).")
    fetched: str = Field("", description="When the run read it (ISO 8601 UTC).")
    sha256: str = Field("", description="The SHA-256 of the text as read.")
    status: int | None = None
    final_url: str = ""
    etag: str = ""
    last_modified: str = ""
    stored_bytes: int = 0
    cut: bool = Field(False, description="Cut to the run's evidence limit.")


class QuoteInText(BaseModel):
    """A quote a citation rests on, with the stored text around it."""

    statement: str
    quote: str
    before: str = ""
    after: str = ""
    found: bool = Field(description="Whether the stored text holds the quote.")


class EvidenceAnswer(BaseModel):
    """What a finished run's citations rest on: every cited source, or one with its quotes."""

    run_id: str
    sources: list[KeptSource]
    quotes: list[QuoteInText] = Field(default_factory=list)


class WatchAnswer(BaseModel):
    """A watched question's schedule."""

    watch_id: str
    watched: bool
    every_seconds: int = 0
    version: int = Field(0, description="The latest version made (1: the first run).")
    latest: str = Field("", description="The run id of the latest version.")
    next_due: str = Field("", description="When the next version is due (ISO 8601 UTC).")
    note: str = ""


def _kept_source(source: Source, row: Kept | None) -> KeptSource:
    """One cited source as the tool answers it."""
    if row is None:
        return KeptSource(number=source.number or 0, title=source.title, url=source.url)
    read = row.read
    return KeptSource(
        number=source.number or 0,
        title=source.title,
        url=source.url,
        kind=read.kind,
        fetched=read.fetched,
        sha256=row.sha256,
        status=read.status,
        final_url=read.final_url,
        etag=read.etag,
        last_modified=read.last_modified,
        stored_bytes=row.stored_bytes,
        cut=row.cut,
    )


def _watch_answer(watch: Watch | None, watch_id: str) -> WatchAnswer:
    """A watch as the tool answers it (not watched: `watched` false)."""
    if watch is None:
        return WatchAnswer(watch_id=watch_id, watched=False)
    due = datetime.fromtimestamp(watch.next_due, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return WatchAnswer(
        watch_id=watch.watch_id,
        watched=True,
        every_seconds=watch.every_seconds,
        version=watch.version,
        latest=watch.latest,
        next_due=due,
        note=watch.note,
    )


async def _answer(call: Awaitable[T]) -> T:
    """A tool's answer, with a caller's mistake as a tool error naming it."""
    try:
        return await call
    except (
        BadInput,
        UnknownRun,
        NotRecheckable,
        NoSuchCitation,
        NotWatchable,
        keeping.NothingKept,
        ValueError,
    ) as error:
        raise ToolError(str(error)) from None


def add_keeping_tools(server: MCPServer, service: RunService, caller: Caller) -> None:
    """Add the evidence, re-check and watch tools to `server`."""

    @server.tool()
    async def research_evidence(
        run_id: RunId,
        number: Annotated[
            int | None, Field(ge=1, description="A citation number: its quotes in the text.")
        ] = None,
    ) -> EvidenceAnswer:
        """What a finished run's citations rest on, as the run read it: each cited source with
        when it was read and the SHA-256 of its text; with `number`, that source's stored text
        around each quote its citations rest on."""

        async def go() -> EvidenceAnswer:
            if number is None:
                sources, kept = await keeping.kept_sources(service, caller, run_id)
                listed = [_kept_source(s, kept.get(s.number or 0)) for s in sources]
                return EvidenceAnswer(run_id=run_id, sources=listed)
            view = await keeping.evidence(service, caller, run_id, number, CONTEXT_CHARS)
            quotes = [
                QuoteInText(
                    statement=q.statement,
                    quote=q.quote,
                    before=q.context[0] if q.context else "",
                    after=q.context[2] if q.context else "",
                    found=q.context is not None,
                )
                for q in view.quotes
            ]
            source = _kept_source(view.source, view.kept)
            return EvidenceAnswer(run_id=run_id, sources=[source], quotes=quotes)

        return await _answer(go())

    @server.tool()
    async def recheck_research(run_id: RunId) -> Recheck:
        """Check a finished report's citations against their sources as they are now: every
        cited source is read again (a page that did not change costs nothing), every cited
        claim sorted: unchanged, quote_kept (page changed, quote still there), quote_gone
        (checked again by the model against the new text), page_gone, unreachable. No model
        call is made when no cited page changed. The result is kept beside the run."""
        return await _answer(keeping.recheck(service, caller, run_id))

    @server.tool()
    async def watch_research(
        run_id: RunId,
        every: Annotated[
            str,
            Field(min_length=1, max_length=20, description="How often: 7d, 12h, 1d12h, 2w."),
        ],
        version_max_tokens: Annotated[int | None, Field(gt=0)] = None,
        month_max_tokens: Annotated[int | None, Field(gt=0)] = None,
    ) -> WatchAnswer:
        """Research a finished run's question again on a schedule (at most once an hour), each
        version a follow-up of the last, with a claim-level change list against it (read it
        with research_changes). Versions are made by the server's workers or timer."""

        async def go() -> WatchAnswer:
            limits = Limits(
                version_max_tokens=version_max_tokens, month_max_tokens=month_max_tokens
            )
            seconds = parse_every(every)
            watch = await keeping.watch(service, caller, run_id, seconds, limits=limits)
            return _watch_answer(watch, run_id)

        return await _answer(go())

    @server.tool()
    async def stop_watching_research(run_id: RunId) -> WatchAnswer:
        """Stop watching a question (the versions made stay)."""

        async def go() -> WatchAnswer:
            if not await keeping.unwatch(service, caller, run_id):
                raise NotWatchable(f"{run_id!r} is not watched")
            return _watch_answer(None, run_id)

        return await _answer(go())

    @server.tool()
    async def research_changes(
        run_id: RunId,
        version: Annotated[
            int | None, Field(ge=2, description="A version number (default: the latest).")
        ] = None,
    ) -> ChangeList:
        """A watched question's change list: what changed from one version to the next (new
        findings, figures that changed with both values cited, claims no longer supported and
        why, sources gone)."""
        return await _answer(keeping.change_list(service, caller, run_id, version))
