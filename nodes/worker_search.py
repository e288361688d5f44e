"""What both ways of working share: one search through the run's cache and budget, and the
budget figures every worker event carries."""

from __future__ import annotations

from deep_research.domain.distinct import distinct
from deep_research.domain.sources import admitted
from deep_research.state import SearchHit, Usage, WorkerState
from deep_research.tools.events import SourceFailed, emit
from deep_research.tools.run_resources import RunResources
from deep_research.tools.search import SEARCH_ERRORS
from deep_research.tools.search.pages import counted_fetches
from deep_research.tools.search_cache import SearchCache, SharedSearchFailure
from deep_research.tools.secrets import redact


def budget_use(state: WorkerState) -> dict:
    """What every worker event carries: which subtask, and how much of its budget is used. Once
    a worker's model has acted, its cycles are its decide-act rounds, against their own cap
    (`worker_max_rounds`); its queries never pass `max_queries`, whatever share of the run's
    searches is left."""
    budget, rounds = state["budget"], len(state.get("tool_rounds", []))
    acting = rounds and state.get("tool_protocol") != "fixed"
    return {
        "round": state["round"],
        "subtask_id": state["subtask"].id,
        "description": state["subtask"].description,
        "queries_used": len(state.get("sent_queries", [])),
        "max_queries": budget.max_queries,
        "cycles_used": rounds if acting else state.get("cycles_used", 0),
        "max_cycles": budget.max_rounds if acting else budget.max_cycles,
    }


def fresh_queries(candidates: list[str], sent: list[str], limit: int) -> list[str]:
    """Queries worth sending: not empty, not sent before, not repeated, at most `limit`."""
    return distinct(candidates, already=sent, limit=limit)


async def search_once(
    run: RunResources, query: str, cache: SearchCache | None = None
) -> tuple[list[SearchHit], Usage, str] | None:
    """One query through the run's cache (or `cache`): hits, what it cost (the pages its thin
    hits had read included), and an error message if it failed; None when the run's search
    budget was spent before it could be sent."""
    with counted_fetches() as pages:  # thin hits read whole: booked by the reader already
        try:
            async with run.search_call() as allowed:
                if not allowed:
                    return None
                hits, cached = await (cache or run.search_cache).search(
                    query, run.settings.max_results
                )
        except (*SEARCH_ERRORS, SharedSearchFailure) as error:
            cost = Usage(search_calls=0 if isinstance(error, SharedSearchFailure) else 1)
            run.record(cost)
            why = redact(f"{query!r}: {type(error).__name__}: {error}")[:300]
            return [], cost + Usage(page_fetches=pages[0]), why
    usage = Usage(search_calls=0 if cached else 1, search_cache_hits=int(cached))
    run.record(usage)
    return admitted_hits(hits, run.dropped_addresses), usage + Usage(page_fetches=pages[0]), ""


def admitted_hits(hits: list[SearchHit], said: set[str] | None = None) -> list[SearchHit]:
    """The door: hits cleaned before state holds them; each address dropped is said (once a
    run when `said` holds the ones said already)."""
    kept, dropped = admitted(hits)
    said = set() if said is None else said
    for hit in dropped:
        address = repr(hit.url[:200]) if hit.url else "(none)"
        if address not in said:
            said.add(address)
            emit(SourceFailed(source=f"search hit {address}", error="its address does not parse"))
    return kept
