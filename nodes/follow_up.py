"""A follow-up question on a finished run: its evidence is written from first, and only what it
leaves missing is researched (the review's gaps), so nothing it already found is searched again.

The earlier run's worker results come in as `prior_results`; they become the new run's first
round, and its plan is the subtasks they answered (what gap analysis compares against).
"""

from __future__ import annotations

from deep_research.domain.sources import MAX_EXCERPT_CHARS, normalize_url
from deep_research.state import SubTask, TaskPlan, WorkerResult
from deep_research.tools.search.pages import best_passages


def carried_results(prior: list[WorkerResult]) -> list[WorkerResult]:
    """The earlier run's usable results, as the first round of the new run."""
    return [r.model_copy(update={"round": 1}) for r in prior if r.status != "failed" and r.sources]


def prior_plan(results: list[WorkerResult]) -> TaskPlan:
    """The plan the carried results answer: one subtask each, by their first description."""
    tasks: dict[int, SubTask] = {}
    for result in results:
        text = result.description or f"subtask {result.subtask_id}"
        tasks.setdefault(
            result.subtask_id,
            SubTask(
                id=result.subtask_id, description=text, search_queries=[text], complexity="simple"
            ),
        )
    return TaskPlan(query_type="breadth_first", subtasks=list(tasks.values()))


def refreshed(results: list[WorkerResult], stale: dict[str, str | None]) -> list[WorkerResult]:
    """Earlier results with what no longer holds taken out: a source whose page is gone is
    dropped, one whose page changed under its quotes carries the new text's passages nearest
    its old evidence (not a page read: its quotes are gone); a finding left citing nothing is
    dropped. `stale` maps a source's normalised URL to its new text (None: gone)."""
    fresh = []
    for result in results:
        sources, kept = [], set()
        for source in result.sources:
            key = normalize_url(source.url)
            if key not in stale:
                sources.append(source)
                kept.add(source.id)
                continue
            text = stale[key]
            if text is None:
                continue
            excerpt = best_passages(text.split("\n\n"), source.excerpt, MAX_EXCERPT_CHARS)
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
