"""When a run ends, what its citations rest on is kept with it: each cited source's text as it
was read, once per text, within the run's byte limit, and the source marked with when it was
read and the hash of what was read.

A cited source's text is, first found first: what this run read (a page, a document's passage,
a tool's answer); for a follow-up, what the re-check that refreshed its carried evidence read,
then what the earlier run kept; else the search snippet its citations were checked against.
"""

from __future__ import annotations

from dataclasses import dataclass

from langgraph.config import get_config

from deep_research.domain.evidence_text import content_hash, cut_to, size_of
from deep_research.domain.sources import SourceRegistry, normalize_url
from deep_research.state import ResearchState, Source
from deep_research.tools.evidence.reads import PageRead
from deep_research.tools.evidence.store import EvidenceStore, Kept
from deep_research.tools.run_resources import RunResources


def thread_of_run() -> str | None:
    """The thread the running graph saves to; None outside a graph or without a thread."""
    try:
        configurable = get_config().get("configurable") or {}
    except RuntimeError:  # not inside a graph step
        return None
    thread_id = configurable.get("thread_id")
    return str(thread_id) if thread_id else None


def _quotes(state: ResearchState, registry: SourceRegistry) -> dict[int, list[str]]:
    """Per source id, the quotes its kept citations and its readers' quotes rest on."""
    quotes: dict[int, list[str]] = {}
    for check in state.get("citations") or []:
        if check.verdict != "unsupported" and check.evidence:
            quotes.setdefault(check.source_id, []).append(check.evidence)
    for quote in registry.quotes():
        quotes.setdefault(quote.source_id, []).append(quote.text)
    return quotes


@dataclass(frozen=True)
class Found:
    """A text a cited source may rest on: the read it came from, its hash and size as read, and
    the text at hand (an earlier run's may have been cut to its limit)."""

    read: PageRead
    sha256: str
    read_bytes: int
    text: str

    @classmethod
    def of(cls, read: PageRead) -> Found:
        """A read as it was read, whole."""
        return cls(read, read.sha256, size_of(read.text), read.text)


async def _earlier(store: EvidenceStore | None, state: ResearchState) -> dict[str, Found]:
    """What a follow-up's carried evidence rests on, by source: the refreshing re-check's pages,
    else the earlier run's kept texts."""
    found: dict[str, Found] = {}
    if store is None or not state.get("prior_results"):
        return found
    parent = state.get("follow_up_of")
    for row in await store.kept(parent) if parent else []:
        text = await store.text(row.stored_sha256) if row.stored_sha256 else ""
        found[row.read.key] = Found(row.read, row.sha256, row.read_bytes, text or "")
    reader = state.get("refreshed_by")
    for key, read in (await store.reads(reader)).items() if reader else []:
        found[key] = Found.of(read)
    return found


def _snippet(source: Source, registry: SourceRegistry) -> Found:
    """The search snippet a source's citations were checked against (no page was read)."""
    excerpt = next((s.excerpt for s in registry.sources if s.id == source.id), "")
    return Found.of(PageRead(url=source.url, kind="snippet", text=excerpt, fetched_at=None))


async def keep_evidence(
    state: ResearchState, sources: list[Source], run: RunResources, store: EvidenceStore | None
) -> list[Source]:
    """Keep what each cited source rests on (in the store, when the run has one and a thread);
    the sources with when their text was read and its hash."""
    registry = SourceRegistry(state.get("worker_results", []))
    reads = await run.reads.all() if run.reads is not None else {}
    earlier = await _earlier(store, state)
    quotes = _quotes(state, registry)
    room = state["settings"].evidence_max_bytes
    kept: list[tuple[Kept, str]] = []
    for source in sorted(sources, key=lambda s: s.number or 0):
        key = normalize_url(source.url)
        found = Found.of(reads[key]) if key in reads else earlier.get(key)
        found = found or _snippet(source, registry)
        stored = cut_to(found.text, quotes.get(source.id, []), room)
        room -= size_of(stored)
        row = Kept(
            number=source.number or 0,
            read=found.read,
            sha256=found.sha256,
            stored_sha256=content_hash(stored) if stored else "",
            read_bytes=found.read_bytes,
            stored_bytes=size_of(stored),
        )
        kept.append((row, stored))
    thread_id = thread_of_run()
    rows = [row for row, _ in kept]
    if store is not None and thread_id:
        rows = await store.keep(thread_id, state["run_id"], kept)
    by_number = {row.number: row for row in rows}
    return [
        source.model_copy(
            update={"fetched": by_number[n].read.fetched, "sha256": by_number[n].sha256}
        )
        if (n := source.number or 0) in by_number
        else source
        for source in sources
    ]
