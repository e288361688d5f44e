"""Every routing decision, as pure functions of state.

The stop rules (`domain.stop_rules`) are applied once, by `quality_check`, which records the
reason in state; the route after it reads that record, so the way taken and the reason given
cannot disagree.
"""

from __future__ import annotations

from typing import Literal

from langgraph.types import Send

from deep_research.domain.best_report import handed_back
from deep_research.domain.budgets import budget_for
from deep_research.state import (
    ResearchState,
    SubTask,
    TaskPlan,
    Usage,
    WorkerInput,
    WorkerResult,
    WorkerState,
)


def route_after_synthesis(state: ResearchState) -> Literal["quality_check", "finalize"]:
    """A report with no evidence behind it is not worth reviewing: finish honestly (its stop
    reason set: `no_evidence`, or `budget` when the budget ran out before any evidence)."""
    return "finalize" if state.get("stop_reason") else "quality_check"


def finish(state: ResearchState) -> Literal["verify_citations", "finalize"]:
    """The way out: through citation verification unless the settings turn it off."""
    return "verify_citations" if state["settings"].verify_citations else "finalize"


def ending(state: ResearchState) -> Literal["keep_best_report", "verify_citations", "finalize"]:
    """The way out when the rounds end: through the best report's revision when an earlier
    round's report scored higher than the current one, then out."""
    written = state.get("report_round") or state["iteration"]
    return "keep_best_report" if handed_back(state.get("best"), written) else finish(state)


def route_after_quality(
    state: ResearchState,
) -> Literal["analyze_gaps", "keep_best_report", "verify_citations", "finalize"]:
    """Another research round, unless `quality_check` recorded the stop rule that now holds."""
    return ending(state) if state.get("stop_reason") else "analyze_gaps"


MAX_RELAYED = 30  # findings a relayed worker is shown from the workers before it


def _sends(
    state: ResearchState,
    node: str,
    tasks: list[SubTask],
    round_: int,
    earlier: list[str] | None = None,
    siblings: list[SubTask] | None = None,
) -> list[Send]:
    """One worker per task; `siblings`: the tasks whose workers share the run's budgets with
    these (a relay's still to come; default the tasks sent together)."""
    settings = state["settings"]
    extra = {"earlier_findings": earlier} if earlier else {}
    sharing = [task.id for task in (siblings or tasks)]
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
                siblings=sharing,
                **extra,
            ),
        )
        for task in tasks
    ]


def research_shape(plan: TaskPlan) -> Literal["single", "parallel", "relay"]:
    """How the first round runs, by the planner's route: a straightforward question one worker,
    breadth-first workers side by side, depth-first a relay (each worker after the one before,
    seeing what it found)."""
    if plan.query_type == "depth_first" and len(plan.subtasks) > 1:
        return "relay"
    if plan.query_type == "straightforward" and len(plan.subtasks) == 1:
        return "single"
    return "parallel"


def dispatch_research(state: ResearchState) -> list[Send]:
    """The first round's workers: every subtask at once (`max_workers` bounds the work), or, for
    a relay, the first subtask only."""
    plan = state["plan"]
    first = plan.subtasks[:1] if research_shape(plan) == "relay" else plan.subtasks
    return _sends(state, "research", first, 1, siblings=plan.subtasks)


def earlier_findings(results: list[WorkerResult]) -> list[str]:
    """What the relay's workers so far found, as claims (a failed worker's error is no finding)."""
    claims = [f.claim for r in results if r.status != "failed" for f in r.findings]
    return [" ".join(claim.split())[:400] for claim in claims][-MAX_RELAYED:]


def route_after_research(state: ResearchState) -> list[Send] | Literal["synthesize"]:
    """A relay hands the next subtask, with the findings so far, to its worker; otherwise the
    first round is done and the report is written."""
    plan = state["plan"]
    if research_shape(plan) != "relay":
        return "synthesize"
    results = sorted(
        (r for r in state.get("worker_results", []) if r.round == 1), key=lambda r: r.subtask_id
    )
    done = {r.subtask_id for r in results}
    left = [task for task in plan.subtasks if task.id not in done]
    if not left:
        return "synthesize"
    return _sends(state, "research", left[:1], 1, earlier_findings(results), siblings=left)


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
) -> list[Send] | Literal["keep_best_report", "verify_citations", "finalize"]:
    """Fan out the gap round's subtasks, or finish when gap analysis found none."""
    tasks = state["gap_analysis"].supplementary_tasks
    if not tasks:  # analyze_gaps recorded "no_gaps" (or "gaps_failed")
        return ending(state)
    return _sends(state, "supplementary_research", tasks, state["iteration"] + 1)


def route_after_decide(state: WorkerState) -> Literal["act", "report_findings"]:
    """A worker goes on only while gaps and budget are left."""
    return "report_findings" if state.get("termination_reason") else "act"


def route_after_act(state: WorkerState) -> Literal["observe", "report_findings"]:
    """A worker with no new query to send is done."""
    return "report_findings" if state.get("termination_reason") else "observe"
