"""Asking back: before any research is paid for, up to three short questions when the question
is too vague to research well; the person's answers become part of the run's brief.

The planner model judges (a `Clarification`); the person answers through a LangGraph
`interrupt` (resume with a `ClarifyReply`: answers in order, or skip). The judging call is saved
to the checkpoint when it returns (`tools.durable_calls`), so a run resumed at the question is
not charged for it again, and the plan is made only after the answers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from langgraph.types import interrupt

from deep_research.domain.clarifying import clarified, questions_to_ask
from deep_research.nodes import prompts
from deep_research.nodes.planning import clean_question, starting_settings
from deep_research.state import Clarification, ClarifyReply, ResearchState
from deep_research.tools.run_resources import LiveRuns
from deep_research.tools.structured import StructuredOutputError, ask

ASKED = "clarify"  # the `kind` of the interrupt value, beside plan approval's


async def clarify(
    state: ResearchState, *, runs: LiveRuns, caller_runs_it: bool = True, can_pause: bool = True
) -> dict:
    """Ask the person back when the planner judges the question too vague; wait for the reply.

    Nothing is asked (and no model called) when the `clarify` setting is off, for a follow-up
    (its evidence is its first round), or when the graph cannot pause (`can_pause` false: no
    checkpointer, so an answer could never resume it). A planner that gives no valid judgement
    leaves the question as asked.
    """
    question = clean_question(state["question"])
    settings, _ = await starting_settings(state, question, caller_runs_it)
    follow_up = caller_runs_it and bool(state.get("prior_results"))
    if not (settings.clarify and can_pause) or follow_up:
        return {"clarifications": []}  # nothing asked: the output still says so
    run = runs.detached(settings, state.get("usage"))  # the run has no id before its plan
    try:
        judged, usage = await ask(
            Clarification,
            prompts.clarify(question, language=settings.language),
            role="planner",
            client=run.model_client(),
        )
    except StructuredOutputError as error:  # no judgement: research the question as asked
        return {"usage": error.usage, "clarifications": []}
    questions = questions_to_ask(judged)
    if not questions:
        return {"usage": usage, "clarifications": []}
    reply = interrupt(
        {
            "kind": ASKED,
            "question": question,
            "questions": [q.model_dump() for q in questions],
        },
        response_schema=ClarifyReply,
    )
    return {"usage": usage, "clarifications": clarified(questions, reply)}


def clarify_step(*, caller_runs_it: bool, can_pause: bool) -> Callable[..., Awaitable[dict]]:
    """`clarify` as one graph runs it: for its callers (remote or not), pausable or not."""

    async def clarify_question(state: ResearchState, *, runs: LiveRuns) -> dict:
        """Ask the person back when the question is too vague to research well."""
        return await clarify(state, runs=runs, caller_runs_it=caller_runs_it, can_pause=can_pause)

    return clarify_question
