"""The settings that say how a run is answered (which model, how its server is reached), as
against what it researches. A saved run may take new values for these and no others: a model
name its server refuses would otherwise keep the run from ever finishing."""

from __future__ import annotations

from deep_research.settings import Settings, settings_from

ANSWERING: tuple[str, ...] = (
    "model",
    "planner_model",
    "researcher_model",
    "writer_model",
    "reviewer_model",
    "structured_output",
    "system_role",
    "model_call_timeout",
    "request_idle_timeout",
    "model_retries",
    "max_concurrent_model_calls",
)


def answered_otherwise(saved: Settings | dict | None, given: Settings) -> Settings | None:
    """The saved settings with `given`'s answering settings where they differ; None when none
    differs (or nothing is saved)."""
    if not saved:
        return None
    kept = settings_from(saved)
    changed = {n: getattr(given, n) for n in ANSWERING if getattr(given, n) != getattr(kept, n)}
    if not changed:
        return None
    return Settings.model_validate({**kept.model_dump(), **changed})
