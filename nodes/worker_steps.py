"""The worker's observe-orient-decide-act loop, within its budget, ending in one `WorkerResult`.

A worker never raises for what the outside world does (a search or model error): it records the
failure and hands back a `partial` or `failed` result, so its siblings' work is kept.
"""

from __future__ import annotations

import asyncio

from langgraph.types import Overwrite

from deep_research.domain.budgets import budget_spent, queries_left
from deep_research.domain.dates import iso_date
from deep_research.domain.language import run_language
from deep_research.domain.sources import normalize_url
from deep_research.nodes import prompts, worker_tools
from deep_research.nodes.worker_search import admitted_hits, budget_use, fresh_queries, search_once
from deep_research.state import (
    Finding,
    GapCheck,
    SearchHit,
    SourceEvidence,
    Usage,
    WorkerFindings,
    WorkerResult,
    WorkerState,
)
from deep_research.tools.events import FoundSource, WorkerDone, WorkerSearched, emit
from deep_research.tools.run_resources import LiveRuns, worker_key
from deep_research.tools.secrets import redact
from deep_research.tools.structured import MODEL_CALL_ERRORS, StructuredOutputError, ask

MAX_FOUND_SHOWN = 15  # sources a worker's done event names, for whoever watches the run
MAX_HITS_KEPT = 15  # evidence a worker keeps and shows its model, best first
FALLBACK_FINDINGS = 5  # snippets a worker reports as findings when its model fails
MODEL_ERRORS = (*MODEL_CALL_ERRORS, StructuredOutputError)


async def observe(state: WorkerState, *, runs: LiveRuns) -> dict:
    """Observe: run this cycle's queries all at once, within the query budget. A worker whose
    model acts has run its calls in `act` (the cycle is only counted), and spends nothing
    before its model has chosen: its first searches are its own."""
    run = runs.for_worker(state)
    if worker_tools.uses_tools(state, run.settings.worker_tools):
        cycles = state.get("cycles_used", 0)
        return {"cycles_used": cycles + 1} if state.get("tool_rounds") else {}
    sent = state.get("sent_queries", [])
    first_cycle = not state.get("cycles_used")
    candidates = (
        state["subtask"].search_queries if first_cycle else state.get("pending_queries", [])
    )
    async with run.worker_slots:  # the budget is read once this worker may spend
        limit = 0 if run.budget_spent() else queries_left(state["budget"], len(sent))
        queries = fresh_queries(candidates, sent, limit)
        searched = await asyncio.gather(*(search_once(run, q) for q in queries))
    queries = [query for query, outcome in zip(queries, searched, strict=True) if outcome]
    outcomes = [outcome for outcome in searched if outcome]
    usage = sum((cost for _, cost, _ in outcomes), Usage())
    cycles = state.get("cycles_used", 0) + 1
    used = {"queries_used": len(sent) + len(queries), "cycles_used": cycles}
    emit(WorkerSearched(**{**budget_use(state), **used}))
    return {
        "sent_queries": sent + queries,
        "cycles_used": cycles,
        "hits": [hit for hits, _, _ in outcomes for hit in hits],  # after the earlier ones
        "search_errors": state.get("search_errors", []) + [e for _, _, e in outcomes if e],
        "pending_queries": [],
        "usage": usage,
    }


def rank_hits(hits: list[SearchHit], keep: int = MAX_HITS_KEPT) -> list[SearchHit]:
    """Hits de-duplicated by URL (best score wins), best first, empty ones last, top `keep`."""
    best: dict[str, SearchHit] = {}
    for hit in hits:
        key = normalize_url(hit.url)
        if key not in best or hit.score > best[key].score:
            best[key] = hit
    ranked = sorted(best.values(), key=lambda h: (not h.content.strip(), -h.score))
    return ranked[:keep]


async def orient(state: WorkerState) -> dict:
    """Orient: de-duplicate and rank what came back, keeping compact evidence only (a run
    stored before the door cleaned its hits is cleaned here when it resumes). The ranked list
    replaces the hits (`Overwrite`: they are a `DeltaChannel`), and only when it changed."""
    hits = state.get("hits", [])
    ranked = rank_hits(admitted_hits(hits))
    return {} if ranked == hits else {"hits": Overwrite(ranked)}


async def decide(state: WorkerState, *, runs: LiveRuns) -> dict:
    """Decide: the worker's model chooses tool calls (`worker_tools`); else, or when it made no
    usable call, the fixed loop's gap check."""
    run = runs.for_worker(state)
    if not worker_tools.uses_tools(state, run.settings.worker_tools):
        return await decide_fixed(state, runs=runs)
    chosen = await worker_tools.decide(state, runs=runs)
    if chosen.get("tool_protocol") != "fixed":
        return chosen
    if not state.get("cycles_used"):  # nothing searched yet: the fixed loop's first cycle
        return {**chosen, "pending_queries": state["subtask"].search_queries}
    fixed = await decide_fixed({**state, **chosen}, runs=runs)  # type: ignore[arg-type]
    return {**chosen, **fixed, "usage": chosen["usage"] + fixed.get("usage", Usage())}


async def decide_fixed(state: WorkerState, *, runs: LiveRuns) -> dict:
    """Decide: stop when the budget is spent or nothing is missing; else name gaps and queries."""
    sent, cycles = len(state.get("sent_queries", [])), state.get("cycles_used", 0)
    hits = state.get("hits", [])
    if budget_spent(state["budget"], sent, cycles):
        return {"termination_reason": "budget_spent"}
    if not hits and state.get("search_errors"):
        return {"termination_reason": "search_failed"}
    run = runs.for_worker(state)
    left = queries_left(state["budget"], sent)
    documents = await run.document_languages()
    try:
        async with run.worker_slots:
            if run.budget_spent():
                return {"termination_reason": "run_budget_spent"}
            check, usage = await ask(
                GapCheck,
                prompts.gap_check(
                    state["question"],
                    state["subtask"],
                    hits,
                    left,
                    run.settings.max_context_tokens,
                    language=run_language(state["question"], run.settings.language),
                    earlier=state.get("earlier_findings", []),
                    documents=documents,
                ),
                role="researcher",
                client=run.model_client(),
            )
    except MODEL_ERRORS as error:
        return {"termination_reason": "model_error", "usage": _usage_of(error)}
    if not check.gaps:
        return {"termination_reason": "no_gaps", "gaps": [], "usage": usage}
    return {"gaps": check.gaps, "pending_queries": check.next_queries, "usage": usage}


async def act(state: WorkerState, *, runs: LiveRuns) -> dict:
    """Act: run the calls the worker's model chose; in the fixed loop, turn the gaps into the
    next cycle's queries (the model's, else the gaps themselves)."""
    if state.get("pending_round"):
        return await worker_tools.act(state, runs=runs)
    sent = state.get("sent_queries", [])
    left = queries_left(state["budget"], len(sent))
    queries = fresh_queries(state.get("pending_queries", []), sent, left)
    queries = queries or fresh_queries(state.get("gaps", []), sent, left)
    if not queries:
        return {"pending_queries": [], "termination_reason": "no_new_queries"}
    return {"pending_queries": queries}


def _sources(hits: list[SearchHit], read: set[str] = frozenset()) -> list[SourceEvidence]:
    """Hits as the worker's numbered sources (local ids 1..n, in the order the model saw),
    dated when the provider or the page gave a date; those whose page was read whole (`read`:
    normalized URLs) are marked so."""
    return [
        SourceEvidence(
            id=n,
            url=h.url,
            title=h.title,
            excerpt=h.content,
            read=normalize_url(h.url) in read,
            published=iso_date(h.published),
        )
        for n, h in enumerate(hits, 1)
    ]


def _cited_only(findings: list[Finding], sources: list[SourceEvidence]) -> list[SourceEvidence]:
    """The sources a finding cites, and the pages read whole (their quotes are evidence)."""
    cited = {i for f in findings for i in f.source_ids}
    return [s for s in sources if s.id in cited or s.read]


def _usage_of(error: BaseException) -> Usage:
    """What a failed model step had already cost (`ask` attaches it to the error)."""
    return getattr(error, "usage", None) or Usage()


def _snippets_only(
    result: WorkerResult, sources: list[SourceEvidence], reason: str
) -> WorkerResult:
    """A `partial` result whose findings are the best snippets themselves, each citing its page."""
    findings = [Finding(claim=s.excerpt[:400], source_ids=[s.id]) for s in sources]
    return result.model_copy(
        update={
            "status": "partial",
            "findings": findings[:FALLBACK_FINDINGS],
            "sources": sources[:FALLBACK_FINDINGS],
            "error": reason,
        }
    )


def _finished(state: WorkerState, result: WorkerResult, usage: Usage) -> dict:
    """The worker's output, announced on the progress stream."""
    emit(
        WorkerDone(
            **budget_use(state),
            status=result.status,
            findings=len(result.findings),
            sources=len(result.sources),
            termination_reason=result.termination_reason,
            error=result.error,
            found=[
                FoundSource(url=s.url, title=s.title[:200])
                for s in result.sources[:MAX_FOUND_SHOWN]
            ],
        )
    )
    return {"worker_results": [result], "usage": usage}


async def report_findings(state: WorkerState, *, runs: LiveRuns) -> dict:
    """Hand back one `WorkerResult`: findings that cite the sources they came from, and the
    verbatim quotes of the pages read."""
    pages = [page for page in state.get("read_pages", []) if page.quotes]
    # ranked again: a worker whose model finished in `act` never passed `orient` after it
    hits = worker_tools.evidence_hits(rank_hits(state.get("hits", [])), pages)
    errors = state.get("search_errors", [])
    result = WorkerResult(
        subtask_id=state["subtask"].id,
        round=state["round"],
        description=state["subtask"].description,
        queries_used=len(state.get("sent_queries", [])),
        cycles_used=state.get("cycles_used", 0),
        termination_reason=state.get("termination_reason"),
        gaps=state.get("gaps", []),
        tools=state.get("tool_protocol") or "fixed",
        pages_read=len(pages),
    )
    run = runs.for_worker(state)
    run.finished_workers.add(worker_key(state))  # its siblings may draw what it leaves
    if not hits:
        quiet = "the run's budget was spent" if run.budget_spent() else "nothing came back"
        error = "; ".join(errors[:3]) or quiet
        failed = result.model_copy(update={"status": "failed", "error": error})
        return _finished(state, failed, Usage())
    sources = _sources(hits, {normalize_url(page.url) for page in pages})
    quotes = worker_tools.worker_quotes(pages, {normalize_url(s.url): s.id for s in sources})
    result = result.model_copy(update={"quotes": quotes})
    try:
        async with run.worker_slots:
            answer, usage = await ask(
                WorkerFindings,
                prompts.findings(
                    state["question"],
                    state["subtask"],
                    hits,
                    run.settings.max_context_tokens,
                    language=run_language(state["question"], run.settings.language),
                    earlier=state.get("earlier_findings", []),
                ),
                role="researcher",
                client=run.model_client(),
            )
    except MODEL_ERRORS as error:  # the evidence is real even when its summary failed
        reason = redact(f"{type(error).__name__}: {error}")[:300]
        return _finished(state, _snippets_only(result, sources, reason), _usage_of(error))
    known = {s.id for s in sources}
    findings = [
        Finding(claim=f.claim, source_ids=[i for i in f.source_ids if i in known])
        for f in answer.findings
        if f.claim.strip() and any(i in known for i in f.source_ids)
    ]
    if not findings:  # a summary that cites nothing found cannot be used; the snippets can
        reason = "the researcher cited none of its evidence"
        return _finished(state, _snippets_only(result, sources, reason), usage)
    done = result.model_copy(
        update={
            "status": "partial" if errors else "ok",
            "findings": findings,
            "summary": answer.summary,
            "gaps": answer.gaps,
            "confidence": answer.confidence,
            "sources": _cited_only(findings, sources),
            "error": "; ".join(errors[:3]),
        }
    )
    return _finished(state, done, usage)
