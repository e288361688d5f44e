"""What a run page shows, folded from the run's records and its latest checkpoint.

The fold is a pure function of what is stored, so the page a browser gets on load and every
streamed update are the same rendering of the same data: a message seen twice changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from deep_research.export.facts import facts_of
from deep_research.export.formats import Rendering
from deep_research.service.event_log import Record
from deep_research.service.runs import RunInfo
from deep_research.state import WorkerResult, WorkerStatus, output_of
from deep_research.tools.events import (
    CitationsChecked,
    EarlierReportKept,
    GapsAnalyzed,
    PlanMade,
    QualityScored,
    RunDone,
    RunSpent,
    WorkerActed,
    WorkerDone,
    WorkerReading,
    WorkerSearched,
)

Status = Literal["queued", "running", "waiting", "done", "stopped", "failed", "unfinished"]


@dataclass
class WorkerRow:
    """One worker of one round, as its latest event left it."""

    round: int
    subtask_id: int
    description: str
    phase: str
    queries: str
    cycles: str
    findings: int | None = None
    sources: int | None = None
    error: str = ""
    reading: tuple[str, str] | None = None  # the page it reads now: (address, title)


@dataclass
class RoundRow:
    """One round: its score and the gaps its analysis found."""

    round: int
    score: float | None = None
    gaps: list[str] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)


@dataclass
class RunView:
    """Everything the run page shows."""

    thread_id: str
    question: str = ""
    status: Status = "unfinished"
    plan: PlanMade | None = None
    workers: dict[tuple[int, int], WorkerRow] = field(default_factory=dict)
    rounds: dict[int, RoundRow] = field(default_factory=dict)
    citations: CitationsChecked | None = None
    stop_reason: str = ""
    error: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    budgets: dict[str, float | None] = field(default_factory=dict)
    cost_usd: float | None = None
    last_seq: int = 0
    waiting_plan: dict[str, Any] | None = None
    waiting_questions: list[dict[str, Any]] = field(default_factory=list)  # asked back
    parent: str = ""
    live_spent: RunSpent | None = None  # the run's ledger, ahead of the checkpoint mid-step
    kept: EarlierReportKept | None = None  # the report handed back is an earlier round's
    found: dict[str, str] = field(default_factory=dict)  # sources kept so far: address -> title
    iteration: int = 0  # the rounds run
    rendering: Rendering | None = None  # the finished report, as the export renders it


def _round(view: RunView, number: int) -> RoundRow:
    """The row of a round, made on first sight."""
    return view.rounds.setdefault(number, RoundRow(number))


def fold_event(view: RunView, event: Any) -> None:
    """Apply one progress event to the view."""
    match event:
        case PlanMade():
            view.plan = event
        case WorkerSearched() | WorkerActed() | WorkerReading() | WorkerDone():
            row = WorkerRow(
                event.round,
                event.subtask_id,
                event.description,
                event.status if isinstance(event, WorkerDone) else event.phase,
                f"{event.queries_used}/{event.max_queries}",
                f"{event.cycles_used}/{event.max_cycles}",
            )
            if isinstance(event, WorkerReading):
                row.reading = (event.url, event.title)
            if isinstance(event, WorkerDone):
                row.findings, row.sources, row.error = event.findings, event.sources, event.error
                for source in event.found:
                    view.found.setdefault(source.url, source.title)
            view.workers[(event.round, event.subtask_id)] = row
        case QualityScored():
            _round(view, event.round).score = event.score
        case GapsAnalyzed():
            row = _round(view, event.round)
            row.gaps, row.tasks = event.gaps, event.tasks
        case CitationsChecked():
            view.citations = event
        case RunSpent():
            view.live_spent = event
            live_spending(view)
        case EarlierReportKept():
            view.kept = event
        case RunDone():
            view.stop_reason = event.stop_reason


def fold_record(view: RunView, record: Record) -> None:
    """Apply one record of the run's log to the view."""
    view.last_seq = max(view.last_seq, record.seq)
    if record.kind == "event":
        event = record.progress
        if event is not None:
            fold_event(view, event)
    elif record.kind == "started":
        view.question = record.data.get("question", "") or view.question
        view.parent = record.data.get("parent", "")
    elif record.kind == "failed":
        view.error = record.data.get("error", "")
    elif record.kind in ("resumed", "decided"):
        view.error = ""


def fold(thread_id: str, records: list[Record]) -> RunView:
    """The view of a run from its records alone (the checkpoint adds the rest)."""
    view = RunView(thread_id)
    for record in records:
        fold_record(view, record)
    return view


def view_of(info: RunInfo, records: list[Record] | None, base: RunView | None = None) -> RunView:
    """Everything the run page shows: its records folded (or `base`, folded already), with
    what its latest checkpoint and status add."""
    view = fold(info.run_id, records or []) if base is None else base
    view.question = view.question or info.row.question
    view.parent = view.parent or info.row.parent
    add_checkpoint(view, info.values)
    view.status = info.status
    view.waiting_plan = info.waiting_plan
    view.waiting_questions = info.waiting_questions
    view.rendering = rendering_of(info) if info.status == "done" else None
    view.error = "" if info.status in ("done", "waiting") else (view.error or info.error)
    return view


def add_checkpoint(view: RunView, values: dict[str, Any]) -> None:
    """What the latest checkpoint adds: spending, budgets, stop reason, the question."""
    view.question = view.question or values.get("question", "")
    usage = values.get("usage")
    if usage is not None:
        view.usage = {
            "tokens": usage.input_tokens + usage.output_tokens,
            "searches": usage.search_calls,
            "llm_calls": usage.llm_calls,
        }
    settings = values.get("settings")
    if settings is not None:
        view.budgets = {
            "tokens": settings.max_total_tokens,
            "searches": settings.max_search_calls,
            "cost": settings.max_cost_usd,
        }
    view.cost_usd = values.get("cost_usd")
    view.iteration = values.get("iteration") or view.iteration
    live_spending(view)
    view.stop_reason = values.get("stop_reason") or view.stop_reason
    if view.plan is None and values.get("plan") is not None:  # a run started elsewhere
        plan = values["plan"]
        view.plan = PlanMade(
            query_type=plan.query_type,
            subtasks=[
                {"id": t.id, "description": t.description, "complexity": t.complexity}
                for t in plan.subtasks
            ],
        )
    add_results(view, values.get("worker_results") or [])
    for number, score in enumerate(values.get("quality_history") or [], start=1):
        row = _round(view, number)
        row.score = score if row.score is None else row.score


def live_spending(view: RunView) -> None:
    """The spending shown: the checkpoint's or the live ledger's, whichever has counted more
    (the ledger runs ahead while a round's workers call; the checkpoint catches up after)."""
    live = view.live_spent
    if live is None:
        return
    figures = {"tokens": live.tokens, "searches": live.search_calls, "llm_calls": live.llm_calls}
    view.usage = {key: max(view.usage.get(key, 0), value) for key, value in figures.items()}
    if live.cost_usd is not None and (view.cost_usd is None or live.cost_usd > view.cost_usd):
        view.cost_usd = live.cost_usd


def rendering_of(info: RunInfo) -> Rendering:
    """A finished run's report, rendered as `deep-research export` renders it."""
    from datetime import datetime

    created = info.snapshot.created_at
    finished = datetime.fromisoformat(created) if created else None
    output = output_of(info.values)
    return Rendering(output, facts_of({**info.values, **output}, finished, info.run_id))


def add_results(view: RunView, results: list[WorkerResult]) -> None:
    """Every worker the checkpoint holds a result of, shown as ended: a worker whose last
    events were lost (the server killed after the worker's result was saved, before its "done"
    reached the log) is not left "searching" in a run that went on without it."""
    ended = get_args(WorkerStatus)
    for result in results:
        key = (result.round, result.subtask_id)
        row = view.workers.get(key)
        if row is not None and row.phase in ended:
            continue
        view.workers[key] = WorkerRow(
            result.round,
            result.subtask_id,
            result.description or (row.description if row else ""),
            result.status,
            row.queries if row else str(result.queries_used),
            row.cycles if row else str(result.cycles_used),
            findings=len(result.findings),
            sources=len(result.sources),
            error=result.error,
        )
