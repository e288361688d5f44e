"""A finished run's kept evidence, as the doors read and delete it.

`evidence_of` is what `deep-research evidence ID N` shows; `forget_thread` is what the run
service calls before it deletes a run's checkpoints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from deep_research.domain.claims import cited_pairs
from deep_research.domain.evidence_text import around
from deep_research.graph.recheck import finished_values
from deep_research.graph.threads import thread_config
from deep_research.state import Source
from deep_research.tools.evidence.store import EvidenceStore, Kept
from deep_research.tools.watches import WatchStore

CONTEXT_CHARS = 400  # characters shown each side of a quote


@dataclass(frozen=True)
class QuoteInText:
    """One quote a citation rests on, and where the stored text holds it (None: it does not,
    e.g. a page cut to the run's limit before it)."""

    statement: str
    quote: str
    context: tuple[str, str, str] | None


@dataclass(frozen=True)
class EvidenceView:
    """Citation N's source: what the run kept of it, the text, and its quotes in that text."""

    source: Source
    kept: Kept | None  # None: the run kept no evidence (it finished before this was kept)
    text: str
    quotes: list[QuoteInText] = field(default_factory=list)


class NoSuchCitation(LookupError):
    """The report cites no source by that number."""


async def evidence_of(
    graph: Any, evidence: EvidenceStore, thread_id: str, number: int, chars: int = CONTEXT_CHARS
) -> EvidenceView:
    """What citation `number` of a finished run rests on: the kept text around each quote."""
    values = await finished_values(graph, thread_id)
    source = next((s for s in values.get("sources") or [] if s.number == number), None)
    if source is None:
        count = len(values.get("sources") or [])
        raise NoSuchCitation(
            f"the report of {thread_id!r} cites sources 1 to {count}, not {number}"
        )
    row = next((r for r in await evidence.kept(thread_id) if r.number == number), None)
    text = (await evidence.text(row.stored_sha256) or "") if row and row.stored_sha256 else ""
    quotes = [
        QuoteInText(pair.statement, pair.quote, around(text, pair.quote, chars))
        for pair in cited_pairs(values)
        if pair.number == number and pair.quote
    ]
    return EvidenceView(source, row, text, quotes)


async def forget_thread(
    graph: Any, evidence: EvidenceStore, watches: WatchStore, thread_id: str
) -> None:
    """Delete what is kept beside a run (its evidence, re-checks and watch); its checkpoints
    are the caller's to delete next."""
    values = (await graph.aget_state(thread_config(thread_id))).values
    await evidence.forget(thread_id, str(values.get("run_id") or ""))
    await watches.forget(thread_id)
