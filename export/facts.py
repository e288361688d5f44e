"""The facts of a finished run a reader sees first: question, date, model, rounds, cost, quality."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

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
    sources: str = ""  # the source filters the run kept to ("" when none)

    def rows(self) -> list[tuple[str, str]]:
        """(label, value) pairs for a header or a table, in the order a reader wants them."""
        precision = self.citation_precision
        return [
            ("date", self.finished.strftime("%Y-%m-%d %H:%M UTC") if self.finished else "unknown"),
            ("model", self.model),
            ("rounds", str(self.rounds)),
            ("stop reason", self.stop_reason or "unknown"),
            ("cost", "unknown" if self.cost_usd is None else f"${self.cost_usd:.4f}"),
            ("quality", "unknown" if self.quality is None else f"{self.quality:g}/100"),
            ("citations supported", "-" if precision is None else f"{precision:.0%}"),
        ] + [
            (label, value)
            for label, value in (("sources", self.sources), ("thread", self.thread_id))
            if value
        ]


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
    return RunFacts(
        question=values.get("question") or "",
        finished=finished or datetime.now(UTC),
        model=model_names(settings),
        rounds=values.get("iteration") or 0,
        stop_reason=values.get("stop_reason") or "",
        cost_usd=values.get("cost_usd"),
        quality=None if quality is None else quality.score,
        citation_precision=values.get("citation_precision"),
        thread_id=thread_id,
        sources=SourceFilter.of(settings).describe() if settings else "",
    )
