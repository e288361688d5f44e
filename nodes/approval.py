"""Plan approval: pause after planning so a person can approve, edit or reject the plan."""

from __future__ import annotations

from langgraph.types import interrupt

from deep_research.nodes.planning import announce_plan, shape_plan
from deep_research.settings import Settings
from deep_research.state import PlanDecision, ResearchState, TaskPlan


def rejected_report(question: str) -> str:
    """What a run whose plan was rejected reports."""
    return f"# {question}\n\nThe research plan was rejected; no research was done."


def _dropped(edited: TaskPlan, kept: TaskPlan, settings: Settings) -> str:
    """What of a person's edit could not be kept, said in a few words ("" when all was)."""
    lost = len(edited.subtasks) - len(kept.subtasks)
    if lost <= 0:
        return ""
    return (
        f"{lost} of the {len(edited.subtasks)} edited subtasks dropped (repeats, blanks, or "
        f"over max_subtasks {settings.max_subtasks})"
    )


async def approve_plan(state: ResearchState) -> dict:
    """Show the plan and wait; resume with {"action": "approve" | "edit" | "reject", "plan"?}."""
    answer = interrupt({"question": state["question"], "plan": state["plan"].model_dump()})
    decision = PlanDecision.model_validate(
        answer if isinstance(answer, dict) else {"action": answer}
    )
    if decision.action == "reject":
        return {"stop_reason": "plan_rejected", "report": rejected_report(state["question"])}
    if decision.action == "edit" and decision.plan is not None:
        settings = state["settings"]
        plan = shape_plan(decision.plan, state["question"], settings, edited=True)
        announce_plan(plan, edited=True, dropped=_dropped(decision.plan, plan, settings))
        return {"plan": plan}
    return {}
