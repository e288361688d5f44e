"""Every routing decision, as pure functions of state.

The stop rules (`domain.stop_rules`) are applied once, by `quality_check`, which records the
reason in state; the route after it reads that record, so the way taken and the reason given
cannot disagree.
"""

from __future__ import annotations

from typing import Literal

from langgraph.types import Send

from deep_research.domain.budgets import budget_for
from deep_research.state import ResearchState, SubTask, Usage, WorkerInput, WorkerState


def route_after_synthesis(state: ResearchState) -> Literal["quality_check", "finalize"]:
    """A report with no evidence behind it is not worth reviewing: finish honestly (its stop
    reason set: `no_evidence`, or `budget` when the budget ran out before any evidence)."""
    return "finalize" if state.get("stop_reason") else "quality_check"


def finish(state: ResearchState) -> Literal["verify_citations", "finalize"]:
    """The way out: through citation verification unless the settings turn it off."""
    return "verify_citations" if state["settings"].verify_citations else "finalize"


def route_after_quality(
    state: ResearchState,
) -> Literal["analyze_gaps", "verify_citations", "finalize"]:
    """Another research round, unless `quality_check` recorded the stop rule that now holds."""
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


def route_after_plan(state: ResearchState) -> list[Send] | Literal["approve_plan", "synthesize"]:
    """A follow-up writes from the evidence it carries first; otherwise the plan is shown to a
    person first when the settings ask for approval, then researched."""
    if state.get("worker_results"):  # only a follow-up has results before any research
        return "synthesize"
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
