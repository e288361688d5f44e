"""Progress events: what each step reports on the graph's custom stream, one typed model a kind.

A step calls `emit(PlanMade(...))`; the event goes out as a small JSON object with an `event`
name (`stream_mode="custom"`), which Studio and LangGraph SDK clients read as is. A Python
caller turns each streamed object back into its model with `parse_event` (None for a kind it
does not know), or lets `graph.threads.advance` do it and hand every event to a callback.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from langgraph.config import get_stream_writer
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from deep_research.settings import Complexity
from deep_research.state import QueryType, StopReason, WorkerStatus, WorkerStopReason


class _Event(BaseModel):
    """What every progress event shares: it is data, frozen once made."""

    model_config = ConfigDict(frozen=True, extra="ignore")


class PlannedSubtask(BaseModel):
    """One subtask as the plan event shows it."""

    model_config = ConfigDict(frozen=True)

    id: int
    description: str
    complexity: Complexity


class PlanMade(_Event):
    """The plan: how the question was routed and the subtasks the workers take."""

    event: Literal["plan"] = "plan"
    query_type: QueryType
    subtasks: list[PlannedSubtask]
    fallback: str = ""  # why the plan is the question itself, when the planner never answered
    edited: bool = False  # a person edited it before approving
    dropped: str = ""  # what of an edited plan could not be kept, said in words
    follow_up: bool = False  # the subtasks an earlier run researched, whose evidence is carried


class _WorkerEvent(_Event):
    """Which worker, and how much of its budget it has used."""

    event: Literal["worker"] = "worker"
    round: int
    subtask_id: int
    description: str
    queries_used: int
    max_queries: int
    cycles_used: int
    max_cycles: int


class WorkerSearched(_WorkerEvent):
    """A worker finished one search cycle."""

    phase: Literal["searched"] = "searched"


class WorkerReading(_WorkerEvent):
    """A worker has begun reading one page whole (its model chose it): the page being read."""

    phase: Literal["reading"] = "reading"
    url: str
    title: str = ""  # the search hit's title, when the page was found by a search


class FoundSource(BaseModel):
    """A source a worker kept, as a watcher sees it: its address and title."""

    model_config = ConfigDict(frozen=True)

    url: str
    title: str = ""


class WorkerDone(_WorkerEvent):
    """A worker handed back its result."""

    phase: Literal["done"] = "done"
    status: WorkerStatus
    findings: int
    sources: int
    termination_reason: WorkerStopReason | None = None
    error: str = ""
    found: list[FoundSource] = Field(default_factory=list)  # the sources it kept, best first


class WorkerActed(_WorkerEvent):
    """A worker's model chose tools and they ran: how many calls of each kind."""

    phase: Literal["acted"] = "acted"
    protocol: str  # native | prompt
    calls: dict[str, int] = Field(default_factory=dict)  # tool name -> calls run
    pages_read: int = 0
    skipped: int = 0  # calls not run: over budget, unknown target, or repeated


class WorkerFellBack(_WorkerEvent):
    """A worker's model made no usable tool call: the worker runs the fixed search loop."""

    phase: Literal["fell_back"] = "fell_back"
    protocol: str
    why: str


class ReportWritten(_Event):
    """A round's report (first draft or revision) is written."""

    event: Literal["report"] = "report"
    round: int
    chars: int
    problem: str = ""  # why the writer's reply could not be used, when it could not
    sections: int = 0  # the report's sections (summary and conclusion apart)
    written: int = 0  # the sections this round wrote or revised
    outline_fallback: str = ""  # why the outline is one section per subtask, when it is


class QualityScored(_Event):
    """The reviewer scored a round's report; `stop_reason` is the stop rule that now holds."""

    event: Literal["quality"] = "quality"
    round: int
    score: float | None  # None: the reviewer gave no valid answer (unknown, not zero)
    issues: list[str]
    stop_reason: StopReason | None = None


class GapsAnalyzed(_Event):
    """The gap analysis: what the report lacks and the subtasks the next round takes."""

    event: Literal["gaps"] = "gaps"
    round: int
    gaps: list[str]
    tasks: list[str]
    error: str = ""  # the analysis gave no valid answer: the run ends


class CitationsChecked(_Event):
    """The citation check: what settled the pairs, the verdicts and the repairs."""

    event: Literal["citations"] = "citations"
    checked: int
    supported: int
    precision: float | None
    removed: int
    rewritten: int
    marked: int
    by_method: dict[str, int] = Field(default_factory=dict)
    rewrites_by_method: dict[str, int] = Field(default_factory=dict)


class MethodSettled(_Event):
    """The structured-output method a model's replies now come by (and the one it refused)."""

    event: Literal["structured_output"] = "structured_output"
    model: str
    method: str
    refused: str = ""
    why: str = ""


class ToolProtocolSettled(_Event):
    """How a model now takes a worker's tools: natively, or written into the prompt."""

    event: Literal["tool_protocol"] = "tool_protocol"
    model: str
    protocol: str
    why: str = ""  # the refusal that moved it to the prompt protocol


class Streaming(_Event):
    """A long model call is streaming (sent every few seconds), or has ended (`done`)."""

    event: Literal["streaming"] = "streaming"
    role: str
    chunks: int
    seconds: float
    done: bool = False


class CallRetried(_Event):
    """A model call failed in a way worth another try, and is tried again."""

    event: Literal["retry"] = "retry"
    role: str
    attempt: int
    error: str  # the error's type name, never its text (which may quote a key)


class ReplyDegenerate(_Event):
    """A reply could not be used (empty, cut off, looping, the prompt handed back)."""

    event: Literal["degenerate"] = "degenerate"
    role: str
    problem: str
    final: bool  # True: no more tries, the run says so; False: asked again


class PromptShrunk(_Event):
    """The server found a prompt too long: it is sent again, shorter."""

    event: Literal["shrunk"] = "shrunk"
    role: str


class ReplyPartlyKept(_Event):
    """A reply kept without non-essential fields that stayed invalid after a re-ask."""

    event: Literal["partial_reply"] = "partial_reply"
    role: str
    contract: str
    dropped: list[str]
    problem: str


class GuardLowered(_Event):
    """A setting that switches a security guard off is on for this run."""

    event: Literal["guard_lowered"] = "guard_lowered"
    setting: str


class GuardKept(_Event):
    """A remote caller asked to switch a security guard off; only the server may."""

    event: Literal["guard_kept"] = "guard_kept"
    setting: str


class SourceFailed(_Event):
    """A source (an MCP server or tool) failed; the run goes on without it."""

    event: Literal["source_failed"] = "source_failed"
    source: str
    error: str


class ContextWindowFound(_Event):
    """The model server told its context window; the run's prompts now fit it."""

    event: Literal["context_window"] = "context_window"
    tokens: int
    max_context_tokens: int


class EarlierReportKept(_Event):
    """The run hands back an earlier report: it scored higher than the last round's; it is
    revised with what later rounds found (`revised_with`), or unchanged when they found
    nothing."""

    event: Literal["earlier_report"] = "earlier_report"
    round: int  # the round that wrote the report handed back
    score: float
    last_round: int
    last_score: float | None  # None: no review could score the last round's report
    revised_with: list[int] = []  # the later rounds whose findings were written into it


class RunSpent(_Event):
    """What the run has spent so far, from its live ledger (at most every few seconds): the
    checkpoint's figures move per finished step, this moves while workers run."""

    event: Literal["spent"] = "spent"
    tokens: int
    llm_calls: int
    search_calls: int
    cost_usd: float | None = None  # None: a model of the run has no price


class CostUnknown(_Event):
    """Said once, when the run starts: these models have no price (neither in `prices` nor in
    genai-prices' table for the server that serves them), so the run's cost is unknown."""

    event: Literal["cost_unknown"] = "cost_unknown"
    models: list[str]


class RunDone(_Event):
    """The run has finished: why, after how many rounds, with how many sources cited."""

    event: Literal["done"] = "done"
    stop_reason: StopReason
    sources: int
    rounds: int


WorkerEvent = Annotated[
    WorkerSearched | WorkerReading | WorkerActed | WorkerFellBack | WorkerDone,
    Field(discriminator="phase"),
]
ProgressEvent = Annotated[
    PlanMade
    | WorkerEvent
    | ReportWritten
    | QualityScored
    | GapsAnalyzed
    | CitationsChecked
    | MethodSettled
    | ToolProtocolSettled
    | Streaming
    | CallRetried
    | ReplyDegenerate
    | PromptShrunk
    | ReplyPartlyKept
    | GuardLowered
    | GuardKept
    | SourceFailed
    | ContextWindowFound
    | EarlierReportKept
    | RunSpent
    | CostUnknown
    | RunDone,
    Field(discriminator="event"),
]
"""Any progress event; `match` on its class to handle each kind."""

_EVENTS: TypeAdapter[ProgressEvent] = TypeAdapter(ProgressEvent)
KINDS: frozenset[str] = frozenset(
    model.model_fields["event"].default
    for model in (
        PlanMade,
        WorkerSearched,
        ReportWritten,
        QualityScored,
        GapsAnalyzed,
        CitationsChecked,
        MethodSettled,
        ToolProtocolSettled,
        Streaming,
        CallRetried,
        ReplyDegenerate,
        PromptShrunk,
        ReplyPartlyKept,
        GuardLowered,
        GuardKept,
        SourceFailed,
        ContextWindowFound,
        EarlierReportKept,
        RunSpent,
        CostUnknown,
        RunDone,
    )
)
"""The `event` names this code knows."""


def emit(event: ProgressEvent) -> None:
    """Send one progress event to whoever streams the run (nobody, outside a graph run)."""
    try:
        writer = get_stream_writer()
    except RuntimeError:  # a step called directly, not by a graph: there is no stream
        return
    writer(event.model_dump(mode="json"))


def parse_event(raw: Any) -> ProgressEvent | None:
    """The typed event for one object of the custom stream; None for anything else.

    Other writers may share the custom stream, and a newer server may send kinds this code does
    not know: those are skipped. A known kind that breaks its model is a bug, and raises.
    """
    if isinstance(raw, _Event):
        return raw
    if not isinstance(raw, dict) or raw.get("event") not in KINDS:
        return None
    return _EVENTS.validate_python(raw)
