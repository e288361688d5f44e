"""Planning: take the question in, route it, and split it into subtasks the workers can run."""

from __future__ import annotations

import asyncio
import os
import re
import unicodedata
import uuid

from langgraph.runtime import get_runtime

from deep_research.domain.caller_settings import for_remote_caller, operator_from_environment
from deep_research.domain.distinct import distinct, first_of_each
from deep_research.domain.language import detect_language
from deep_research.nodes import prompts
from deep_research.nodes.follow_up import carried_results, prior_plan
from deep_research.settings import Settings, settings_from
from deep_research.state import ResearchState, SubTask, TaskPlan
from deep_research.tools.context_window import fitted_to_server
from deep_research.tools.events import (
    ContextWindowFound,
    CostUnknown,
    GuardKept,
    GuardLowered,
    PlanMade,
    PlannedSubtask,
    emit,
)
from deep_research.tools.model_names import on_the_servers_endpoint
from deep_research.tools.models import roles_by_name
from deep_research.tools.run_resources import LiveRuns
from deep_research.tools.secrets import redact
from deep_research.tools.structured import StructuredOutputError, ask

MAX_QUESTION_CHARS = 4000


class BadQuestion(ValueError):
    """The question cannot be researched as given."""


def clean_question(question: object) -> str:
    """The question without control characters and surplus space; refuses empty or huge ones."""
    if not isinstance(question, str):
        raise BadQuestion(f"the question must be text, not {type(question).__name__}")
    text = "".join(
        ch if ch in "\n\t" or unicodedata.category(ch)[0] != "C" else " " for ch in question
    )
    text = re.sub(r"[ \t]+", " ", text).strip()
    if not text:
        raise BadQuestion("the question is empty")
    if len(text) > MAX_QUESTION_CHARS:
        raise BadQuestion(
            f"the question is {len(text)} characters long; the limit is {MAX_QUESTION_CHARS}"
        )
    return text


def distinct_subtasks(
    tasks: list[SubTask], *, already: list[str], limit: int, first_id: int
) -> list[SubTask]:
    """Subtasks with new descriptions only, at most `limit`, numbered from `first_id`.

    Each keeps its distinct queries, or searches its own description when it has none.
    """
    new = first_of_each(tasks, lambda task: task.description, already=already, limit=limit)
    shaped = []
    for number, task in enumerate(new, start=first_id):
        description = " ".join(task.description.split())
        queries = distinct(task.search_queries) or [description]
        update = {"id": number, "description": description, "search_queries": queries}
        shaped.append(task.model_copy(update=update))
    return shaped


def question_itself(question: str) -> SubTask:
    """The subtask that researches the question as asked."""
    return SubTask(description=question, search_queries=[question], complexity="medium")


def fallback_plan(question: str) -> TaskPlan:
    """The plan used when the planner gave no valid answer: research the question itself.

    Announced as a fallback (never passed off as the planner's decision).
    """
    return TaskPlan(
        query_type="straightforward",
        subtasks=[question_itself(question)],
        recommended_worker_count=1,
    )


def shape_plan(plan: TaskPlan, question: str, settings: Settings, edited: bool = False) -> TaskPlan:
    """The plan made safe to run: capped, de-duplicated, numbered, and sized by its route.

    A straightforward question gets one simple subtask; any plan gets at most `max_subtasks`;
    an empty plan still researches the question itself. A plan a person `edited` keeps the
    subtasks they wrote (up to `max_subtasks`) whatever its route says.
    """
    straightforward = plan.query_type == "straightforward" and not edited
    limit = 1 if straightforward else settings.max_subtasks
    subtasks = distinct_subtasks(plan.subtasks, already=[], limit=limit, first_id=1)
    if not subtasks:
        subtasks = [question_itself(question).model_copy(update={"id": 1})]
    if straightforward:
        subtasks = [task.model_copy(update={"complexity": "simple"}) for task in subtasks]
    workers = min(plan.recommended_worker_count or len(subtasks), len(subtasks))
    return TaskPlan(query_type=plan.query_type, subtasks=subtasks, recommended_worker_count=workers)


def announce_plan(
    plan: TaskPlan,
    fallback: str = "",
    edited: bool = False,
    dropped: str = "",
    follow_up: bool = False,
) -> None:
    """The plan on the progress stream: route, subtasks, whether it was a fallback or edited,
    what of an edit could not be kept (`dropped`), or whether it is an earlier run's whose
    evidence a follow-up starts from (`follow_up`)."""
    subtasks = [
        PlannedSubtask(id=t.id, description=t.description, complexity=t.complexity)
        for t in plan.subtasks
    ]
    emit(
        PlanMade(
            query_type=plan.query_type,
            subtasks=subtasks,
            fallback=fallback,
            edited=edited,
            dropped=dropped,
            follow_up=follow_up,
        )
    )


async def starting_settings(
    state: ResearchState, question: str, caller_runs_it: bool
) -> tuple[Settings, list[str]]:
    """The settings a run starts with, and the names of those a remote caller may not set.

    With `caller_runs_it` false (the graph LangGraph's server exposes), settings that switch a
    security guard off or name what the server reads and starts are not taken from the caller
    (`for_remote_caller`), on every run of a thread, whatever its state already holds. The
    report's language is decided once, from the question (the model loads off-loop).
    """
    asked = state.get("settings") or get_runtime(Settings).context
    refused: list[str] = []
    if caller_runs_it:
        settings = settings_from(asked)
    else:
        operator = operator_from_environment(os.environ)
        settings, refused = for_remote_caller(
            asked, operator, model_allowed=on_the_servers_endpoint
        )
    if settings.language is None:
        language = await asyncio.to_thread(detect_language, question)
        settings = settings.model_copy(update={"language": language})
    return settings, refused


async def decompose(state: ResearchState, *, runs: LiveRuns, caller_runs_it: bool = True) -> dict:
    """Start the run: keep its settings in state, then route the question and plan subtasks
    (from the brief: the question with the answers the person gave when asked back)."""
    question = clean_question(state["question"])
    settings, refused = await starting_settings(state, question, caller_runs_it)
    for name in refused:
        emit(GuardKept(setting=name))
    if settings.fetch_private_addresses and not state.get("run_id"):
        emit(GuardLowered(setting="fetch_private_addresses"))
    if not state.get("run_id") and (unpriced := settings.unpriced_models()):
        emit(CostUnknown(models=unpriced))  # said once, when the run starts
    run_id = state.get("run_id") or uuid.uuid4().hex
    process = runs.process
    named = roles_by_name(runs.models)  # a model handed in is not asked of OPENAI_BASE_URL
    settings, window = await fitted_to_server(
        settings, process.context_windows, process.gates, named
    )
    if window:
        emit(ContextWindowFound(tokens=window, max_context_tokens=settings.max_context_tokens))
    run = runs.detached(settings, state.get("usage"))  # kept (`adopt`) once its id is in state
    prior = carried_results(state.get("prior_results") or []) if caller_runs_it else []
    if prior and not state.get("run_id"):  # a follow-up: no plan to ask for, nothing to search yet
        runs.adopt(run_id, run)
        plan = prior_plan(prior)
        announce_plan(plan, follow_up=True)
        return {
            "question": question,
            "settings": settings,
            "run_id": run_id,
            "plan": plan,
            "iteration": 0,
            "worker_results": prior,
        }
    fallback = ""
    try:
        documents = await run.document_languages()  # a folder's, so queries go out in them
        plan, usage = await ask(
            TaskPlan,
            prompts.plan(
                prompts.brief(question, state.get("clarifications")),
                settings.max_subtasks,
                language=settings.language,
                documents=documents,
            ),
            role="planner",
            client=run.model_client(),
        )
    except StructuredOutputError as error:  # a one-subtask plan beats no research at all
        plan, usage, fallback = fallback_plan(question), error.usage, redact(str(error))
    runs.adopt(run_id, run)
    plan = shape_plan(plan, question, settings)
    announce_plan(plan, fallback=fallback)
    return {
        "question": question,
        "settings": settings,
        "run_id": run_id,
        "plan": plan,
        "iteration": 0,
        "usage": usage,
    }


async def decompose_for_remote_callers(state: ResearchState, *, runs: LiveRuns) -> dict:
    """`decompose` for callers of the LangGraph API: they cannot switch a security guard off."""
    return await decompose(state, runs=runs, caller_runs_it=False)
