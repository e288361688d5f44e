"""Worker budgets: how many queries and cycles a subtask may spend, from its complexity."""

from __future__ import annotations

from settings import Complexity, Settings
from state import Budget

BUDGET_BY_COMPLEXITY: dict[Complexity, Budget] = {
    "simple": Budget(max_queries=3, max_cycles=1),
    "medium": Budget(max_queries=5, max_cycles=2),
    "complex": Budget(max_queries=8, max_cycles=3),
}


def budget_for(complexity: Complexity, settings: Settings) -> Budget:
    """The complexity's budget, with `max_queries` / `max_cycles` from settings winning if set."""
    default = BUDGET_BY_COMPLEXITY[complexity]
    return Budget(
        max_queries=settings.max_queries or default.max_queries,
        max_cycles=settings.max_cycles or default.max_cycles,
    )


def queries_left(budget: Budget, sent: int) -> int:
    """Queries a worker may still send."""
    return max(0, budget.max_queries - sent)


def budget_spent(budget: Budget, sent: int, cycles: int) -> bool:
    """True when a worker may start no further cycle."""
    return cycles >= budget.max_cycles or queries_left(budget, sent) == 0
