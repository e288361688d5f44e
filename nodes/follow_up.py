"""A follow-up question on a finished run: its evidence is written from first, and only what it
leaves missing is researched (the review's gaps), so nothing it already found is searched again.

The earlier run's worker results come in as `prior_results`; they become the new run's first
round, and its plan is the subtasks they answered (what gap analysis compares against).
"""

from __future__ import annotations

from deep_research.state import SubTask, TaskPlan, WorkerResult


def carried_results(prior: list[WorkerResult]) -> list[WorkerResult]:
    """The earlier run's usable results, as the first round of the new run."""
    return [r.model_copy(update={"round": 1}) for r in prior if r.status != "failed" and r.sources]


def prior_plan(results: list[WorkerResult]) -> TaskPlan:
    """The plan the carried results answer: one subtask each, by their first description."""
    tasks: dict[int, SubTask] = {}
    for result in results:
        text = result.description or f"subtask {result.subtask_id}"
        tasks.setdefault(
            result.subtask_id,
            SubTask(
                id=result.subtask_id, description=text, search_queries=[text], complexity="simple"
            ),
        )
    return TaskPlan(query_type="breadth_first", subtasks=list(tasks.values()))
