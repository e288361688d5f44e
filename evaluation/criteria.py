"""Task-specific criteria: the judge weighs the four dimensions and writes criteria for each.

As DeepResearch Bench does, the dimension weights are asked for several times and averaged
(one sample is noisy), then normalised and written with two decimals that sum to exactly 1.
"""

from __future__ import annotations

import asyncio

from deep_research.evaluation import prompts
from deep_research.evaluation.contracts import (
    DIMENSIONS,
    Dimension,
    DimensionCriteria,
    DimensionWeights,
)
from deep_research.evaluation.judge import Judge
from deep_research.evaluation.records import TaskCriteria
from deep_research.evaluation.tasks import EvalTask
from deep_research.state import Usage

WEIGHT_SAMPLES = 5


def combine_weights(samples: list[DimensionWeights]) -> dict[Dimension, float]:
    """The mean of the samples, normalised, in two decimals that sum to exactly 1.

    The rounding remainder goes to the largest weight (the first of equals), so that no
    weight can turn negative.
    """
    means = {d: sum(getattr(s, d) for s in samples) / len(samples) for d in DIMENSIONS}
    total = sum(means.values())
    rounded = {d: round(value / total, 2) for d, value in means.items()}
    largest = max(DIMENSIONS, key=lambda d: rounded[d])
    rounded[largest] = round(rounded[largest] + 1 - sum(rounded.values()), 2)
    return rounded


async def generate_criteria(task: EvalTask, judge: Judge, usage: list[Usage]) -> TaskCriteria:
    """The task's dimension weights and weighted criteria per dimension, from the judge."""
    weights = [
        judge.ask(DimensionWeights, prompts.judge_weights(task.prompt), usage)
        for _ in range(WEIGHT_SAMPLES)
    ]
    criteria = [
        judge.ask(DimensionCriteria, prompts.judge_criteria(task.prompt, d), usage)
        for d in DIMENSIONS
    ]
    answers = await asyncio.gather(*weights, *criteria)
    samples, per_dimension = answers[:WEIGHT_SAMPLES], answers[WEIGHT_SAMPLES:]
    return TaskCriteria(
        id=task.id,
        prompt=task.prompt,
        dimension_weight=combine_weights(samples),
        criterions={d: c.criteria for d, c in zip(DIMENSIONS, per_dimension, strict=True)},
    )
