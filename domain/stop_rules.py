"""The stop rules of a research run, as pure functions of plain values (no state, no model).

`quality_check` calls them once to record why a run ends (`stop_reason` in state); the route
after it reads that record. Order, from the design: max_iterations, budget, then (only after
min_iterations) quality threshold, plateau or decline, and the reviewer's "not worthwhile".

Progress is measured against the best score so far, not the last one: rounds that beat it by
less than `min_improvement` have stalled. Stalled near the best is a plateau; stalled well below
it (71, 42, 46) is a decline, and the run hands back its best-scored report (`best_report`).
"""

from __future__ import annotations

from deep_research.domain.budgets import run_budget_spent
from deep_research.settings import Settings
from deep_research.state import QualityAssessment, StopReason, Usage


def stalled(history: list[float | None], min_improvement: float, rounds: int) -> bool:
    """True when none of the last `rounds` reviews beat the best score before them by
    `min_improvement` points (unknown scores, None, are not counted)."""
    scores = [score for score in history if score is not None]
    if len(scores) < rounds + 1:
        return False
    return max(scores[-rounds:]) < max(scores[:-rounds]) + min_improvement


def fell(history: list[float | None], min_improvement: float) -> bool:
    """True when the latest known score is `min_improvement` points or more below the best."""
    scores = [score for score in history if score is not None]
    return bool(scores) and scores[-1] <= max(scores) - min_improvement


def plateaued(history: list[float | None], min_improvement: float, rounds: int) -> bool:
    """True when the last `rounds` reviews stalled and the latest stays near the best."""
    return stalled(history, min_improvement, rounds) and not fell(history, min_improvement)


def declined(history: list[float | None], min_improvement: float, rounds: int) -> bool:
    """True when the last `rounds` reviews stalled and the latest fell well below the best."""
    return stalled(history, min_improvement, rounds) and fell(history, min_improvement)


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
        if declined(history, settings.min_improvement, settings.plateau_rounds):
            return "declined"
        if latest is not None and quality is not None and not quality.another_round_worthwhile:
            return "not_worthwhile"
    return None
