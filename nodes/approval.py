"""Plan approval: pause after planning so a person can approve, edit or reject the plan."""

from __future__ import annotations

from langgraph.types import interrupt

from nodes.planning import announce_plan, shape_plan
from state import PlanDecision, ResearchState


def rejected_report(question: str) -> str:
    """What a run whose plan was rejected reports."""
    return f"# {question}\n\nThe research plan was rejected; no research was done."


async def approve_plan(state: ResearchState) -> dict:
    """Show the plan and wait; resume with {"action": "approve" | "edit" | "reject", "plan"?}."""
    answer = interrupt({"question": state["question"], "plan": state["plan"].model_dump()})
    decision = PlanDecision.model_validate(
        answer if isinstance(answer, dict) else {"action": answer}
    )
    if decision.action == "reject":
        return {"stop_reason": "plan_rejected", "report": rejected_report(state["question"])}
    if decision.action == "edit" and decision.plan is not None:
        plan = shape_plan(decision.plan, state["question"], state["settings"])
        announce_plan(plan, edited=True)
        return {"plan": plan}
    return {}
