"""The facts of a finished run a reader sees first: question, date, model, rounds, cost, quality."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from deep_research.domain.labels import ENGLISH, Labels, score_text
from deep_research.domain.language import run_language
from deep_research.domain.source_filter import SourceFilter
from deep_research.settings import ROLES, Settings


@dataclass(frozen=True)
class RunFacts:
    """What a report's header says about the run that wrote it; None where it is not known."""

    question: str
    finished: datetime | None
    model: str
    rounds: int
    stop_reason: str
    cost_usd: float | None
    quality: float | None
    citation_precision: float | None
    thread_id: str = ""
    language: str = ""  # the run's language ("": not known, the report's own is detected)
    sources: str = ""  # the source filters the run kept to ("" when none)
    clarifications: tuple[tuple[str, str], ...] = ()  # (question asked back, answer), answered

    def rows(self, words: Labels = ENGLISH) -> list[tuple[str, str]]:
        """(label, value) pairs for a header or a table, in the order a reader wants them."""
        precision, unknown = self.citation_precision, words.unknown
        return [
            (
                words.date,
                self.finished.strftime("%Y-%m-%d %H:%M UTC") if self.finished else unknown,
            ),
            (words.model, self.model),
            (words.rounds, str(self.rounds)),
            (words.stop_reason, words.stop_reason_name(self.stop_reason) or unknown),
            (words.cost, unknown if self.cost_usd is None else f"${self.cost_usd:.4f}"),
            (words.quality, score_text(self.quality, unknown)),
            (words.citations_supported, "-" if precision is None else f"{precision:.0%}"),
        ] + [
            (label, value)
            for label, value in (
                (words.clarified, self.clarified()),
                (words.source_filter, self.sources),
                (words.thread, self.thread_id),
            )
            if value
        ]

    def clarified(self) -> str:
        """The questions asked back before research and the answers given ("" when none was
        answered)."""
        return "; ".join(f"{question} {answer}" for question, answer in self.clarifications)


def model_names(settings: Settings | None) -> str:
    """The model a run used, or each role's when they differ; "unknown" without settings."""
    if settings is None:
        return "unknown"
    by_role = {role: settings.model_for(role) for role in ROLES}
    if len(set(by_role.values())) == 1:
        return settings.model
    return ", ".join(f"{role}: {model}" for role, model in by_role.items())


def facts_of(
    values: dict[str, Any], finished: datetime | None = None, thread_id: str = ""
) -> RunFacts:
    """The facts from a run's state values (a checkpoint's, or a run's output plus input)."""
    quality = values.get("quality")
    settings = values.get("settings")
    if isinstance(settings, dict):
        settings = Settings.model_validate(settings)
    question = values.get("question") or ""
    return RunFacts(
        question=question,
        finished=finished or datetime.now(UTC),
        model=model_names(settings),
        rounds=values.get("iteration") or 0,
        stop_reason=values.get("stop_reason") or "",
        cost_usd=values.get("cost_usd"),
        quality=None if quality is None else quality.score,
        citation_precision=values.get("citation_precision"),
        thread_id=thread_id,
        language=run_language(question, settings.language) if settings else "",
        sources=SourceFilter.of(settings).describe() if settings else "",
        clarifications=tuple(
            (c.question, c.answer) for c in values.get("clarifications") or [] if c.answer
        ),
    )
