"""What the judge model of `deep-research eval` fills in: weights, criteria, scores, verdicts.

The research's contracts live in `state.py`; these are the eval judge's own, beside the records
`eval` writes from them (`evaluation.records`).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field, model_validator

Dimension = Literal["comprehensiveness", "insight", "instruction_following", "readability"]
DIMENSIONS: tuple[Dimension, ...] = (
    "comprehensiveness",
    "insight",
    "instruction_following",
    "readability",
)
WEIGHT_TOLERANCE = 0.011  # weights written with two decimals may miss 1.0 by a rounding step
FactResult = Literal["supported", "unsupported", "unknown"]


def _numbers_once(numbers: list[int], expected: int, what: str) -> None:
    """Every number 1..expected exactly once, or a ValueError the judge can act on."""
    wanted = set(range(1, expected + 1))
    missing = sorted(wanted - set(numbers))
    extra = sorted({n for n in numbers if n not in wanted or numbers.count(n) > 1})
    if missing or extra:
        parts = [f"missing {what} {missing}"] if missing else []
        parts += [f"unknown or repeated {what} {extra}"] if extra else []
        raise ValueError(f"answer each of {what} 1..{expected} exactly once: " + "; ".join(parts))


class DimensionWeights(BaseModel):
    """How much each quality dimension matters for one task; the four weights sum to 1."""

    analysis: str = Field("", description="Why each dimension gets its weight, for this task.")
    comprehensiveness: float = Field(ge=0, le=1)
    insight: float = Field(ge=0, le=1)
    instruction_following: float = Field(ge=0, le=1)
    readability: float = Field(ge=0, le=1)

    @model_validator(mode="after")
    def _sum_to_one(self) -> DimensionWeights:
        total = sum(getattr(self, d) for d in DIMENSIONS)
        if abs(total - 1) > WEIGHT_TOLERANCE:
            raise ValueError(f"the four weights must sum to 1.0, not {total:.3f}")
        return self


class Criterion(BaseModel):
    """One task-specific criterion of a dimension, with its weight within the dimension."""

    criterion: str = Field(min_length=1, description="What to check, in a few words.")
    explanation: str = Field("", description="Why it matters for this task and how to judge it.")
    weight: float = Field(gt=0, le=1)


class DimensionCriteria(BaseModel):
    """The judge's criteria for one dimension of one task; their weights sum to 1."""

    criteria: list[Criterion] = Field(min_length=1)

    @model_validator(mode="after")
    def _weights_and_names(self) -> DimensionCriteria:
        total = sum(c.weight for c in self.criteria)
        if abs(total - 1) > WEIGHT_TOLERANCE:
            raise ValueError(f"the criteria weights must sum to 1.0, not {total:.3f}")
        names = [c.criterion.strip().casefold() for c in self.criteria]
        if len(set(names)) < len(names):
            raise ValueError("two criteria have the same text; merge or rename them")
        return self


class CriterionScore(BaseModel):
    """The judge's scores on one numbered criterion (0-10), and why."""

    criterion: int = Field(description="The number of the criterion.")
    analysis: str = Field("", description="Why these scores, in one or two sentences.")
    target_score: float = Field(ge=0, le=10, description="The report under evaluation, 0-10.")
    reference_score: float | None = Field(
        None, ge=0, le=10, description="The reference report, 0-10 (when one is given)."
    )


class CriterionScores(BaseModel):
    """Scores on every numbered criterion; build the contract of a task with `for_criteria`."""

    expected: ClassVar[int] = 0  # criteria numbered 1..expected; 0 checks nothing
    comparative: ClassVar[bool] = False  # a reference report is scored too

    scores: list[CriterionScore] = Field(default_factory=list)

    @model_validator(mode="after")
    def _every_criterion(self) -> CriterionScores:
        if self.expected:
            _numbers_once([s.criterion for s in self.scores], self.expected, "criteria")
        unscored = [s.criterion for s in self.scores if s.reference_score is None]
        if self.comparative and unscored:
            raise ValueError(f"reference_score is missing for criteria {unscored}")
        return self

    @classmethod
    def for_criteria(cls, count: int, comparative: bool) -> type[CriterionScores]:
        """The contract for `count` numbered criteria, with or without a reference report."""
        namespace = {"expected": count, "comparative": comparative, "__module__": cls.__module__}
        return type(cls.__name__, (cls,), namespace)


class DistinctStatements(BaseModel):
    """Which numbered statements citing one page to keep: one per distinct claim."""

    expected: ClassVar[int] = 0  # statements numbered 1..expected

    keep: list[int] = Field(description="The numbers of the statements to keep.")

    @model_validator(mode="after")
    def _known_numbers(self) -> DistinctStatements:
        wrong = sorted(
            {n for n in self.keep if not 1 <= n <= self.expected or self.keep.count(n) > 1}
        )
        if self.expected and (not self.keep or wrong):
            raise ValueError(
                f"keep must list distinct statement numbers from 1..{self.expected}"
                + (f"; these are not: {wrong}" if wrong else "")
            )
        return self

    @classmethod
    def for_statements(cls, count: int) -> type[DistinctStatements]:
        """The contract for `count` numbered statements."""
        return type(cls.__name__, (cls,), {"expected": count, "__module__": cls.__module__})


class FactJudgment(BaseModel):
    """Whether a page supports one numbered statement that cites it."""

    statement: int = Field(description="The number of the statement.")
    result: FactResult = Field(
        description="supported: the page states its facts or figures, fully or in part; "
        "unsupported: it states none of them; unknown: the page has no usable content."
    )
    reason: str = Field("", description="The deciding words of the page, or why none.")


class FactJudgments(BaseModel):
    """The judge's verdicts on every numbered statement citing one page."""

    expected: ClassVar[int] = 0  # statements numbered 1..expected

    judgments: list[FactJudgment] = Field(default_factory=list)

    @model_validator(mode="after")
    def _every_statement(self) -> FactJudgments:
        if self.expected:
            _numbers_once([j.statement for j in self.judgments], self.expected, "statements")
        return self

    @classmethod
    def for_statements(cls, count: int) -> type[FactJudgments]:
        """The contract for `count` numbered statements."""
        return type(cls.__name__, (cls,), {"expected": count, "__module__": cls.__module__})


class CitedFact(BaseModel):
    """One statement of a report and one URL it cites."""

    fact: str = Field(description="The statement, complete enough to be checked on its own.")
    url: str = Field(description="The URL it cites (from the text or the reference list).")


class CitedFacts(BaseModel):
    """Every (statement, URL) pair of a report; empty when it cites nothing in its body."""

    facts: list[CitedFact] = Field(default_factory=list)
