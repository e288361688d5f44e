"""Budgets: a worker's queries and cycles by complexity, and the run's tokens, searches and cost."""

from __future__ import annotations

from deep_research.settings import Complexity, Settings
from deep_research.state import Budget, Usage

BUDGET_BY_COMPLEXITY: dict[Complexity, Budget] = {
    "simple": Budget(max_queries=3, max_cycles=1, max_mcp_calls=2),
    "medium": Budget(max_queries=5, max_cycles=2, max_mcp_calls=3),
    "complex": Budget(max_queries=8, max_cycles=3, max_mcp_calls=4),
}


def budget_for(complexity: Complexity, settings: Settings) -> Budget:
    """The complexity's queries, cycles and MCP calls (`max_queries` / `max_cycles` from
    settings winning if set); rounds and the page cap from settings, whatever the complexity
    (pages unset: drawn from the run's budget)."""
    default = BUDGET_BY_COMPLEXITY[complexity]
    return default.model_copy(
        update={
            "max_queries": settings.max_queries or default.max_queries,
            "max_cycles": settings.max_cycles or default.max_cycles,
            "max_pages": settings.max_pages,
            "max_rounds": settings.worker_max_rounds,
        }
    )


def queries_left(budget: Budget, sent: int) -> int:
    """Queries a worker may still send."""
    return max(0, budget.max_queries - sent)


def tool_rounds_left(budget: Budget, rounds: int) -> int:
    """Decide-act rounds a worker that calls tools may still take."""
    return max(0, budget.max_rounds - rounds)


def fair_share(left: int, unfinished: int) -> int:
    """What one worker may draw now from a run budget with `left` units: an equal part among
    its round's `unfinished` workers (itself included), rounded up, so that nothing is stranded
    when one finishes (the ledger holds the exact cap: the first to draw the last unit gets
    it)."""
    return -(-max(0, left) // max(1, unfinished))


def budget_spent(budget: Budget, sent: int, cycles: int) -> bool:
    """True when a worker may start no further cycle."""
    return cycles >= budget.max_cycles or queries_left(budget, sent) == 0


def cost_usd(usage: Usage, settings: Settings) -> float | None:
    """What the run's model calls cost, from the price table; None when a model has no price."""
    total = 0.0
    for role, spent in usage.by_role.items():
        price = settings.prices.get(settings.model_for(role))  # type: ignore[arg-type]
        if price is None:
            return None
        total += spent.input_tokens * price.input_per_million / 1e6
        total += spent.output_tokens * price.output_per_million / 1e6
    return total


def run_budget_spent(usage: Usage, settings: Settings) -> bool:
    """True once the run has spent its token, search or dollar budget (those that are set):
    no new round past it."""
    if settings.max_search_calls is not None and usage.search_calls >= settings.max_search_calls:
        return True
    return model_budget_spent(usage, settings)


def model_budget_spent(usage: Usage, settings: Settings) -> bool:
    """True once the run has spent its token or dollar budget (those that are set): no model
    call past it. A spent search budget stops searching, not the reading and writing of what
    the searches found."""
    if settings.max_total_tokens is not None and usage.total_tokens >= settings.max_total_tokens:
        return True
    if settings.max_cost_usd is not None:
        cost = cost_usd(usage, settings)
        return cost is not None and cost >= settings.max_cost_usd
    return False
