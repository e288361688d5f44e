"""A follow-up: a new question on a finished run, answered as a new run from its evidence.

The new run carries the first one's evidence (`prior_results`): it writes from it first and
researches only what the review finds missing. Its settings are the first run's, but for the
report language, detected again from the new question, and plan approval (there is no plan to
approve: the evidence is the first round); admission then brings them within the operator's
ceilings, with the executing process's own server-only settings (`service.admission`).
"""

from __future__ import annotations

from typing import Any

from langgraph.types import StateSnapshot

from deep_research.graph.threads import run_ended
from deep_research.service.bad_input import BadInput
from deep_research.service.preflight import check_question


def follow_up_from(snapshot: StateSnapshot, parent: str, question: str) -> dict[str, Any]:
    """The new run's input: the question, the first run's settings and its results; BadInput
    when the first run (its latest checkpoint) is unknown, unfinished or found nothing."""
    question = check_question(question)
    values = snapshot.values
    if not values:
        raise BadInput(f"no run with thread id {parent!r} to ask a follow-up of")
    if not run_ended(snapshot):
        raise BadInput(f"the run {parent!r} has not finished: resume it first")
    results = [r for r in values.get("worker_results") or [] if r.sources]
    if not results:
        raise BadInput(f"the run {parent!r} found no evidence to start a follow-up from")
    settings = values["settings"].model_copy(update={"language": None, "approve_plan": False})
    return {"question": question, "settings": settings, "prior_results": results}
