"""The stop rules of a research run, as pure functions of plain values (no state, no model).

`quality_check` calls them once to record why a run ends (`stop_reason` in state); the route
after it reads that record. Order, from the design: max_iterations, budget, then (only after
min_iterations) quality threshold, plateau, and the reviewer's "not worthwhile".
"""

from __future__ import annotations

from itertools import pairwise

from deep_research.domain.budgets import run_budget_spent
from deep_research.settings import Settings
from deep_research.state import QualityAssessment, StopReason, Usage


def plateaued(history: list[float | None], min_improvement: float, rounds: int) -> bool:
    """True when each of the last `rounds` reviews gained less than `min_improvement` points."""
    scores = [score for score in history if score is not None]
    if len(scores) < rounds + 1:
        return False
    recent = scores[-(rounds + 1) :]
    return all(later - earlier < min_improvement for earlier, later in pairwise(recent))


def stop_reason(
    rounds: int,
    history: list[float | None],
    quality: QualityAssessment | None,
    usage: Usage,
    settings: Settings,
) -> StopReason | None:
    """The first stop rule that holds after a review, in the design's order; None to go on."""
    latest = history[-1] if history else None
    if rounds >= settings.max_iterations:
        return "max_iterations"
    if run_budget_spent(usage, settings):
        return "budget"
    if rounds < settings.min_iterations:
        return None
    if latest is not None and latest >= settings.quality_threshold:
        return "quality_threshold"
    if settings.diminishing_returns:
        if plateaued(history, settings.min_improvement, settings.plateau_rounds):
            return "plateau"
        if latest is not None and quality is not None and not quality.another_round_worthwhile:
            return "not_worthwhile"
    return None
