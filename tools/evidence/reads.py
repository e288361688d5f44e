"""What a run read that a citation may come to rest on, captured where it is read.

Pages (the guarded page reader), documents (the local corpus) and tool answers (MCP sources) are
handed to the run's `RunReads` as `PageRead`s. Their text never enters graph state, which every
checkpoint stores again: it is kept in memory and, when the run has a store, written through to
it at once (so a run killed and resumed elsewhere still has what it read before). When the run
ends, only what a kept citation rests on is kept (`nodes.keeping`); the rest is dropped.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, Protocol

from deep_research.domain.evidence_text import content_hash
from deep_research.domain.sources import normalize_url

ReadKind = Literal["page", "document", "tool", "snippet"]
"""A page read whole, a local document's passage, a tool's answer, or a search snippet."""

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PageRead:
    """A text as the run read it, with where and when it came from and what the server sent to
    tell a later reader whether it changed (`etag`, `last_modified`)."""

    url: str  # the address the run asked for: the source's URL
    kind: ReadKind
    text: str
    final_url: str = ""  # after redirects ("" when it is `url`, or not an address)
    status: int | None = None  # the HTTP status it came with (None: not read over HTTP)
    fetched_at: float | None = field(default_factory=time.time)  # Unix seconds; None: unknown
    etag: str = ""
    last_modified: str = ""

    @property
    def key(self) -> str:
        """The source's identity: its URL as the source registry normalises it."""
        return normalize_url(self.url)

    @property
    def sha256(self) -> str:
        """The hash of the text as read."""
        return content_hash(self.text)

    @property
    def fetched(self) -> str:
        """When it was read, as ISO 8601 UTC (`2026-12-01T14:03:22Z`), "" when unknown."""
        if self.fetched_at is None:
            return ""
        return datetime.fromtimestamp(self.fetched_at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


Capture = Callable[[PageRead], Awaitable[None]]
"""Where a reader hands what it read: the run's `RunReads.read`."""


class ReadSink(Protocol):
    """Where reads are written through to: the evidence store."""

    async def note_read(self, reader: str, read: PageRead) -> None: ...
    async def reads(self, reader: str) -> dict[str, PageRead]: ...


class RunReads:
    """One run's reads, by source: in memory, and written through to `sink` when there is one.

    A failed write to the store does not fail the read: the text stays in memory (kept at the
    end if the run ends in this process) and the failure is logged.
    """

    def __init__(self, reader: str, sink: ReadSink | None, store_errors: tuple = ()) -> None:
        self.reader = reader  # the run's id: whose reads these are in the store
        self._sink = sink
        self._store_errors = store_errors
        self._pages: dict[str, PageRead] = {}

    async def read(self, page: PageRead) -> None:
        """Take one read; a later read of the same source replaces it."""
        self._pages[page.key] = page
        if self._sink is None:
            return
        try:
            await self._sink.note_read(self.reader, page)
        except self._store_errors as error:
            log.warning("the evidence store did not take %s: %s", page.url, error)

    async def all(self) -> dict[str, PageRead]:
        """Every read of the run by source: those in the store (a resumed run's earlier ones
        too) and those in memory."""
        stored = await self._sink.reads(self.reader) if self._sink is not None else {}
        return {**stored, **self._pages}
