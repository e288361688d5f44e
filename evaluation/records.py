"""The files `eval` writes per task and for the whole set: criteria, scores, citation checks.

`TaskCriteria` has the shape of a line of DeepResearch Bench's `criteria.jsonl`, so its criteria
file can be read in and ours can be compared with it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator

from deep_research.evaluation.contracts import DIMENSIONS, Criterion, Dimension, FactResult
from deep_research.state import Usage

RaceMode = Literal["relative", "absolute"]


class TaskCriteria(BaseModel):
    """The weighted criteria of one task: dimension weights, and criteria per dimension."""

    id: int | str
    prompt: str
    dimension_weight: dict[Dimension, float]
    criterions: dict[Dimension, list[Criterion]]

    @model_validator(mode="after")
    def _every_dimension(self) -> TaskCriteria:
        missing = [d for d in DIMENSIONS if d not in self.dimension_weight]
        empty = [d for d in DIMENSIONS if not self.criterions.get(d)]
        if missing or empty:
            raise ValueError(f"no weight for {missing} or no criteria for {empty}")
        return self


class ScoredCriterion(BaseModel):
    """One criterion with the judge's scores and reason."""

    dimension: Dimension
    criterion: str
    weight: float
    target_score: float
    reference_score: float | None = None
    analysis: str = ""


class RaceScore(BaseModel):
    """Quality of one report: per dimension and overall.

    relative: target / (target + reference), 0-1, 0.5 = as good as the reference;
    absolute: the weighted 0-10 scores themselves, when the task has no reference.
    """

    mode: RaceMode
    dimensions: dict[Dimension, float]
    overall: float
    target: dict[Dimension, float]  # weighted average 0-10 per dimension
    target_total: float  # sum over dimensions of weight x average
    reference: dict[Dimension, float] | None = None
    reference_total: float | None = None
    clipped: bool = False  # an article was cut to fit the judge's context
    criteria: list[ScoredCriterion] = Field(default_factory=list)


class JudgedStatement(BaseModel):
    """One deduplicated (statement, URL) pair and the judge's verdict on it."""

    statement: str
    url: str
    source_id: int
    result: FactResult
    reason: str = ""


class FactScore(BaseModel):
    """The citations of one report, checked against the pages the run retrieved."""

    pairs: int  # (statement, URL) pairs in the report
    unique_pairs: int  # after duplicates citing the same URL were merged
    supported: int
    unsupported: int
    unknown: int  # the page had no usable text; counted in neither accuracy nor effective
    citation_accuracy: float | None  # supported / (supported + unsupported)
    effective_citations: int  # supported pairs
    judged: list[JudgedStatement] = Field(default_factory=list)
    mode: str = "snippets"  # pages: full pages read again; snippets: the run's kept text
    pages_read: int = 0  # fact mode pages: URLs whose full page was read and judged
    pages_unreadable: int = 0  # fact mode pages: URLs that could not be read (not judged)


class TaskResult(BaseModel):
    """Everything `eval` measured for one task (the per-task result.json)."""

    id: int | str
    language: str
    thread_id: str
    race: RaceScore
    fact: FactScore
    stop_reason: str = ""
    rounds: int = 0
    research_usage: Usage = Field(default_factory=Usage)
    research_cost_usd: float | None = None
    research_seconds: float = 0.0  # wall time of the attempt that finished the run
    judge_usage: Usage = Field(default_factory=Usage)
    judge_cost_usd: float | None = None
