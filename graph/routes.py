"""The stop rules and every routing decision, as pure functions of state (no model involved)."""

from __future__ import annotations

from itertools import pairwise
from typing import Literal

from langgraph.types import Send

from settings import Settings
from state import ResearchState, StopReason, SubTask, Usage, WorkerInput, WorkerState
from tools.budgets import budget_for, run_budget_spent


def plateaued(history: list[float | None], min_improvement: float, rounds: int) -> bool:
    """True when each of the last `rounds` reviews gained less than `min_improvement` points."""
    scores = [score for score in history if score is not None]
    if len(scores) < rounds + 1:
        return False
    recent = scores[-(rounds + 1) :]
    return all(later - earlier < min_improvement for earlier, later in pairwise(recent))


def stop_reason(state: ResearchState, settings: Settings) -> StopReason | None:
    """The first stop rule that holds after a review, in the design's order; None to go on."""
    rounds = state.get("iteration", 0)
    history = state.get("quality_history", [])
    latest = history[-1] if history else None
    quality = state.get("quality")
    if rounds >= settings.max_iterations:
        return "max_iterations"
    if run_budget_spent(state.get("usage") or Usage(), settings):
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


def route_after_synthesis(state: ResearchState) -> Literal["quality_check", "finalize"]:
    """A report with no evidence behind it is not worth reviewing: finish honestly."""
    return "finalize" if state.get("stop_reason") == "no_evidence" else "quality_check"


def finish(state: ResearchState) -> Literal["verify_citations", "finalize"]:
    """The way out: through citation verification unless the settings turn it off."""
    return "verify_citations" if state["settings"].verify_citations else "finalize"


def route_after_quality(
    state: ResearchState,
) -> Literal["analyze_gaps", "verify_citations", "finalize"]:
    """Another research round, unless the review's stop rules (recorded by quality_check) fired."""
    return finish(state) if state.get("stop_reason") else "analyze_gaps"


def _sends(state: ResearchState, node: str, tasks: list[SubTask], round_: int) -> list[Send]:
    settings = state["settings"]
    return [
        Send(
            node,
            WorkerInput(
                question=state["question"],
                subtask=task,
                budget=budget_for(task.complexity, settings),
                round=round_,
                settings=settings,
                run_id=state["run_id"],
                spent=state.get("usage") or Usage(),
            ),
        )
        for task in tasks
    ]


def dispatch_research(state: ResearchState) -> list[Send]:
    """Fan out: one worker per planned subtask, all at once (`max_workers` bounds the work)."""
    return _sends(state, "research", state["plan"].subtasks, 1)


def route_after_plan(state: ResearchState) -> list[Send] | Literal["approve_plan"]:
    """Show the plan to a person first when the settings ask for approval."""
    return "approve_plan" if state["settings"].approve_plan else dispatch_research(state)


def route_after_approval(state: ResearchState) -> list[Send] | Literal["finalize"]:
    """A rejected plan ends the run; an approved or edited one is researched."""
    return "finalize" if state.get("stop_reason") == "plan_rejected" else dispatch_research(state)


def dispatch_supplementary(
    state: ResearchState,
) -> list[Send] | Literal["verify_citations", "finalize"]:
    """Fan out the gap round's subtasks, or finish when gap analysis found none."""
    tasks = state["gap_analysis"].supplementary_tasks
    if not tasks:  # analyze_gaps recorded "no_gaps"
        return finish(state)
    return _sends(state, "supplementary_research", tasks, state["iteration"] + 1)


def route_after_decide(state: WorkerState) -> Literal["act", "report_findings"]:
    """A worker goes on only while gaps and budget are left."""
    return "report_findings" if state.get("termination_reason") else "act"


def route_after_act(state: WorkerState) -> Literal["observe", "report_findings"]:
    """A worker with no new query to send is done."""
    return "report_findings" if state.get("termination_reason") else "observe"
