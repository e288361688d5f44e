"""A follow-up question on a finished run: its evidence is written from first, and only what it
leaves missing is researched (the review's gaps), so nothing it already found is searched again.

The earlier run's worker results come in as `prior_results`; they become the new run's first
round, and its plan is the subtasks they answered (what gap analysis compares against).
"""

from __future__ import annotations

from dataclasses import dataclass

from deep_research.domain.lexical import support_score
from deep_research.domain.sources import MAX_EXCERPT_CHARS, normalize_url
from deep_research.state import SubTask, TaskPlan, WorkerResult
from deep_research.tools.search.pages import best_passages


def carried_results(prior: list[WorkerResult]) -> list[WorkerResult]:
    """The earlier run's usable results, as the first round of the new run."""
    return [r.model_copy(update={"round": 1}) for r in prior if r.status != "failed" and r.sources]


def prior_plan(results: list[WorkerResult]) -> TaskPlan:
    """The plan the carried results answer: one subtask each, by their first description, in
    the order of their ids (results arrive in the order their workers finished)."""
    tasks: dict[int, SubTask] = {}
    for result in results:
        text = result.description or f"subtask {result.subtask_id}"
        tasks.setdefault(
            result.subtask_id,
            SubTask(
                id=result.subtask_id, description=text, search_queries=[text], complexity="simple"
            ),
        )
    return TaskPlan(query_type="breadth_first", subtasks=[tasks[i] for i in sorted(tasks)])


def refreshed(results: list[WorkerResult], stale: dict[str, Stale]) -> list[WorkerResult]:
    """Earlier results with what no longer holds taken out: a source whose page is gone is
    dropped; one whose page changed under its quotes carries the new text where those quotes
    stood (`new_evidence`), not a page read any more (its quotes are gone); a finding left
    citing nothing is dropped. `stale` maps a source's normalised URL to its new text (None:
    gone) and its old quotes."""
    fresh = []
    for result in results:
        sources, kept = [], set()
        for source in result.sources:
            key = normalize_url(source.url)
            if key not in stale:
                sources.append(source)
                kept.add(source.id)
            elif stale[key].text is not None:
                excerpt = new_evidence(stale[key], source.excerpt)
                sources.append(source.model_copy(update={"excerpt": excerpt, "read": False}))
        findings = [
            f.model_copy(update={"source_ids": [i for i in f.source_ids if i in kept]})
            for f in result.findings
            if any(i in kept for i in f.source_ids)
        ]
        quotes = [q for q in result.quotes if q.source_id in kept]
        fresh.append(
            result.model_copy(update={"sources": sources, "findings": findings, "quotes": quotes})
        )
    return fresh


@dataclass(frozen=True)
class Stale:
    """A source whose earlier evidence no longer holds: its text now (None: gone), and the
    quotes its citations rested on."""

    text: str | None
    quotes: tuple[str, ...] = ()


def new_evidence(stale: Stale, old_excerpt: str) -> str:
    """A changed page's evidence: for each old quote the passage of the new text nearest it
    (where the changed figure now stands), then the passages nearest the old evidence, in page
    order, within a source's excerpt size."""
    passages = [p for p in (stale.text or "").split("\n\n") if p.strip()]
    if not passages:
        return ""
    chosen = {
        max(range(len(passages)), key=lambda i, q=quote: (support_score(q, passages[i]), -i))
        for quote in stale.quotes
        if quote.strip()
    }
    used = sum(len(passages[i]) + 2 for i in chosen)
    rest = best_passages(
        [p for i, p in enumerate(passages) if i not in chosen],
        old_excerpt,
        max(0, MAX_EXCERPT_CHARS - used),
    )
    return "\n\n".join([*(passages[i] for i in sorted(chosen)), rest]).strip()[:MAX_EXCERPT_CHARS]
