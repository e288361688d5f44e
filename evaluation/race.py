"""Quality, RACE-style: weighted criteria scores per dimension, relative to a reference report.

Per dimension, the average of the criterion scores weighted by criterion weight; the total is
the sum of those averages weighted by dimension weight. With a reference report, each is turned
into target / (target + reference) (0.5 = as good as the reference) and the overall score is
target total / (target total + reference total), as DeepResearch Bench computes it; without
one, the 0-10 averages and total are the scores.
"""

from __future__ import annotations

from deep_research.domain.markup import rewrite_markers, sources_sections
from deep_research.evaluation import prompts
from deep_research.evaluation.contracts import (
    DIMENSIONS,
    Criterion,
    CriterionScore,
    CriterionScores,
    Dimension,
)
from deep_research.evaluation.judge import Judge
from deep_research.evaluation.records import RaceScore, ScoredCriterion, TaskCriteria
from deep_research.evaluation.tasks import EvalTask
from deep_research.state import Usage


def clean_article(report: str) -> str:
    """The report as the judge reads it: no [n] markers and no Sources section.

    DeepResearch Bench scores articles with citations and reference lists removed, so that
    the judge weighs the writing, not the bibliography.
    """
    text = report
    sections = sources_sections(text)
    if sections:
        start, end = sections[-1]
        text = text[:start].rstrip() + ("\n\n" + text[end:] if text[end:].strip() else "")
    return rewrite_markers(text, lambda ids: []).strip()


def numbered_criteria(criteria: TaskCriteria) -> list[tuple[Dimension, Criterion]]:
    """Every criterion in a fixed order (dimension by dimension), numbered from 1 by position."""
    return [(d, c) for d in DIMENSIONS for c in criteria.criterions[d]]


def criteria_block(criteria: TaskCriteria) -> str:
    """The numbered criteria as the judge sees them, under their dimensions."""
    lines, number = [], 0
    for dimension in DIMENSIONS:
        lines.append(f"{dimension}:")
        for item in criteria.criterions[dimension]:
            number += 1
            lines.append(f"  {number}. {item.criterion} — {item.explanation}".rstrip(" —"))
    return "\n".join(lines)


def _weighted(items: list[tuple[float, float]]) -> float:
    """The weighted average of (weight, score) pairs."""
    total = sum(weight for weight, _ in items)
    return sum(weight * score for weight, score in items) / total


def _share(target: float, reference: float) -> float:
    """target / (target + reference); a tie at zero is a tie (0.5)."""
    return target / (target + reference) if target + reference > 0 else 0.5


def race_score(
    criteria: TaskCriteria, scores: list[CriterionScore], clipped: bool = False
) -> RaceScore:
    """The RACE arithmetic for one report, from the judge's scores on the numbered criteria."""
    by_number = {s.criterion: s for s in scores}
    scored = [
        ScoredCriterion(
            dimension=dimension,
            criterion=item.criterion,
            weight=item.weight,
            target_score=by_number[n].target_score,
            reference_score=by_number[n].reference_score,
            analysis=by_number[n].analysis,
        )
        for n, (dimension, item) in enumerate(numbered_criteria(criteria), 1)
    ]
    comparative = all(s.reference_score is not None for s in scored)

    def averages(side: str) -> dict[Dimension, float]:
        return {
            d: _weighted([(s.weight, getattr(s, side)) for s in scored if s.dimension == d])
            for d in DIMENSIONS
        }

    weights = criteria.dimension_weight
    target = averages("target_score")
    target_total = sum(weights[d] * target[d] for d in DIMENSIONS)
    if not comparative:
        return RaceScore(
            mode="absolute",
            dimensions=target,
            overall=target_total,
            target=target,
            target_total=target_total,
            clipped=clipped,
            criteria=scored,
        )
    reference = averages("reference_score")
    reference_total = sum(weights[d] * reference[d] for d in DIMENSIONS)
    return RaceScore(
        mode="relative",
        dimensions={d: _share(target[d], reference[d]) for d in DIMENSIONS},
        overall=_share(target_total, reference_total),
        target=target,
        target_total=target_total,
        reference=reference,
        reference_total=reference_total,
        clipped=clipped,
        criteria=scored,
    )


async def score_report(
    task: EvalTask, report: str, criteria: TaskCriteria, judge: Judge, usage: list[Usage]
) -> RaceScore:
    """The judge scores the report (and the task's reference, if any) on every criterion."""
    reference = clean_article(task.reference) if task.reference else None
    messages, clipped = prompts.judge_scores(
        task.prompt,
        criteria_block(criteria),
        clean_article(report),
        reference,
        judge.context_tokens,
    )
    contract = CriterionScores.for_criteria(len(numbered_criteria(criteria)), reference is not None)
    reply = await judge.ask(contract, messages, usage)
    return race_score(criteria, reply.scores, clipped)
