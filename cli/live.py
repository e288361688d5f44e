"""A live terminal view of a run (rich on stderr), and the end-of-run summary for both views.

The state built from progress events (`ProgressModel`) is kept apart from its drawing
(`render`), so the view can be tested without a terminal.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from rich import box
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from deep_research.cli.summary import RunSummary, render_summary
from deep_research.service.event_lines import (
    citation_counts,
    cost_unknown_line,
    counted,
    partial_reply_line,
    rounds_text,
    score_text,
)
from deep_research.tools.events import (
    CallRetried,
    CitationsChecked,
    CostUnknown,
    GapsAnalyzed,
    MethodSettled,
    PlanMade,
    ProgressEvent,
    QualityScored,
    ReplyDegenerate,
    ReplyPartlyKept,
    ReportWritten,
    RunDone,
    SourceFailed,
    Streaming,
    ToolProtocolSettled,
    WorkerActed,
    WorkerDone,
    WorkerFellBack,
    WorkerSearched,
)

DESCRIPTION_WIDTH = 40
ERROR_WIDTH = 30
STATUS_STYLES = {"searching": "cyan", "ok": "green", "partial": "yellow", "failed": "red"}


def shorten(text: str, width: int) -> str:
    """The text on one line, cut to `width` characters with an ellipsis, so rows stay short."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass
class WorkerRow:
    """One worker's latest state: its subtask, status, budget use and, once done, its yield."""

    round: int
    subtask_id: int
    description: str
    status: str = "searching"
    queries_used: int = 0
    max_queries: int = 0
    cycles_used: int = 0
    max_cycles: int = 0
    findings: int | None = None
    sources: int | None = None
    error: str = ""


@dataclass
class RoundLine:
    """What one round produced: its report's size, its quality score and the gap analysis."""

    number: int
    report_chars: int | None = None
    scored: bool = False
    score: float | None = None
    gap_tasks: list[str] | None = None  # None: the gap analysis has not run (yet)
    gap_error: str = ""


@dataclass
class ProgressModel:
    """Everything the live view shows, built up one progress event at a time."""

    query_type: str = ""
    subtasks: list[tuple[int, str]] = field(default_factory=list)
    edited: bool = False
    follow_up: bool = False  # the subtasks are an earlier run's, whose evidence is carried
    dropped: str = ""  # what of an edited plan could not be kept
    fallback: str = ""
    workers: dict[tuple[int, int], WorkerRow] = field(default_factory=dict)
    rounds: dict[int, RoundLine] = field(default_factory=dict)
    stop_reason: str | None = None
    total_rounds: int | None = None
    cited_sources: int | None = None
    citations: str = ""  # the verification step's line, once it ran
    methods: dict[str, str] = field(default_factory=dict)  # model -> structured-output method
    tool_protocols: dict[str, str] = field(default_factory=dict)  # model -> native | prompt
    streaming: str = ""  # the long call in progress: "writer: 812 tokens, 41 s"
    model_notes: list[str] = field(default_factory=list)  # retries, re-asks, shrunk prompts

    def apply(self, event: ProgressEvent) -> None:
        """Fold one event into the model; kinds the view does not show are ignored."""
        match event:
            case PlanMade():
                self.query_type = event.query_type
                self.subtasks = [(t.id, t.description) for t in event.subtasks]
                self.edited, self.fallback = event.edited, event.fallback
                self.dropped, self.follow_up = event.dropped, event.follow_up
            case WorkerSearched() | WorkerActed() | WorkerDone():
                self._worker(event)
            case WorkerFellBack():
                self._worker(event)
                note = f"worker {event.subtask_id}: no usable tool call; fixed search loop"
                self.model_notes.append(note)
            case ToolProtocolSettled():
                self.tool_protocols[event.model] = event.protocol
            case ReportWritten():
                self.round(event.round).report_chars = event.chars
            case QualityScored():
                line = self.round(event.round)
                line.scored, line.score = True, event.score
            case GapsAnalyzed():
                line = self.round(event.round)
                line.gap_tasks, line.gap_error = list(event.tasks), event.error
            case CitationsChecked():
                self.citations = "Citations: " + citation_counts(event)
            case MethodSettled():
                self.methods[event.model] = event.method
            case Streaming():
                running = f"{event.role}: {event.chunks:,} tokens, {event.seconds:.0f} s"
                self.streaming = "" if event.done else running
            case CallRetried():
                self.model_notes.append(f"{event.role} call retried ({event.error})")
            case ReplyDegenerate():
                self.model_notes.append(f"{event.role} reply unusable: {event.problem}")
            case ReplyPartlyKept():
                self.model_notes.append(partial_reply_line(event))
            case SourceFailed():
                self.model_notes.append(f"source failed, going on without it: {event.source}")
            case CostUnknown():
                self.model_notes.append(cost_unknown_line(event))
            case RunDone():
                self.stop_reason = event.stop_reason
                self.total_rounds, self.cited_sources = event.rounds, event.sources

    def round(self, number: int) -> RoundLine:
        """The line for a round, made on its first event."""
        return self.rounds.setdefault(number, RoundLine(number))

    def _worker(self, event: WorkerSearched | WorkerActed | WorkerFellBack | WorkerDone) -> None:
        key = (event.round, event.subtask_id)
        row = self.workers.setdefault(key, WorkerRow(*key, event.description))
        row.queries_used, row.max_queries = event.queries_used, event.max_queries
        row.cycles_used, row.max_cycles = event.cycles_used, event.max_cycles
        if isinstance(event, WorkerDone):
            row.status, row.findings, row.sources = event.status, event.findings, event.sources
            row.error = event.error


def render_plan(model: ProgressModel) -> RenderableType:
    """The plan: query type, numbered subtasks, and whether it was edited or a fallback; a
    rejected plan is named as such, without its subtasks (none of them runs)."""
    if model.follow_up:
        head = Text("Follow-up: ", style="bold").append(
            "writing first from the earlier run's evidence on", style="bold cyan"
        )
        return Group(head, *[Text(f"  {number}. {text}") for number, text in model.subtasks])
    head = Text("Plan: ", style="bold").append(model.query_type or "…", style="bold cyan")
    if model.stop_reason == "plan_rejected":
        return head.append(" (rejected: no research was done)", style="yellow")
    if model.edited:
        head.append(" (edited)", style="magenta")
    lines: list[RenderableType] = [head]
    if model.fallback:
        lines.append(Text(f"⚠ fallback plan: {model.fallback}", style="yellow"))
    if model.dropped:
        lines.append(Text(f"⚠ {model.dropped}", style="yellow"))
    lines += [Text(f"  {number}. {text}") for number, text in model.subtasks]
    return Group(*lines)


def render_workers(model: ProgressModel) -> Table:
    """One row per worker, in (round, subtask) order."""
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), pad_edge=False, show_edge=False)
    for name in ("Rnd", "#", "Subtask", "Status", "Queries", "Cycles", "Found", "Srcs"):
        left = name in ("Subtask", "Status")
        table.add_column(name, no_wrap=name != "Subtask", justify="left" if left else "right")
    table.columns[2].min_width = 16  # narrow terminals wrap the description, not the numbers
    table.add_column("Error", style="dim", min_width=10)
    for _, row in sorted(model.workers.items()):
        table.add_row(
            str(row.round),
            str(row.subtask_id),
            shorten(row.description, DESCRIPTION_WIDTH),
            Text(row.status, style=STATUS_STYLES.get(row.status, "")),
            f"{row.queries_used}/{row.max_queries}",
            f"{row.cycles_used}/{row.max_cycles}",
            "" if row.findings is None else str(row.findings),
            "" if row.sources is None else str(row.sources),
            shorten(row.error, ERROR_WIDTH),
        )
    return table


def round_text(line: RoundLine) -> Text:
    """One round's line: report size, quality score and what the gap analysis asked for."""
    text = Text(f"Round {line.number}: ", style="bold")
    parts = []
    if line.report_chars is not None:
        parts.append(f"report {line.report_chars:,} chars")
    if line.scored:
        parts.append(f"quality {score_text(line.score)}")
    if line.gap_tasks is not None:
        asked = "; ".join(line.gap_tasks) or "nothing more to research"
        parts.append(f"gap analysis: {asked}")
    text.append(" · ".join(parts) or "researching…")
    if line.gap_error:
        text.append(f" (gap analysis failed: {shorten(line.gap_error, ERROR_WIDTH)})", style="dim")
    return text


def render(model: ProgressModel) -> RenderableType:
    """The whole view: plan, workers table, one line per round and, at the end, why it stopped."""
    parts: list[RenderableType] = [render_plan(model)]
    if model.workers:
        parts += [Text(""), render_workers(model)]
    parts += [round_text(line) for _, line in sorted(model.rounds.items())]
    if model.methods:
        used = ", ".join(f"{name}: {method}" for name, method in model.methods.items())
        parts.append(Text(f"Structured output: {used}", style="dim"))
    if model.tool_protocols:
        used = ", ".join(f"{name}: {how}" for name, how in model.tool_protocols.items())
        parts.append(Text(f"Worker tools: {used}", style="dim"))
    parts += [Text(shorten(note, 100), style="yellow") for note in model.model_notes[-3:]]
    if model.streaming:
        parts.append(Text(f"… {model.streaming}", style="cyan"))
    if model.citations:
        parts.append(Text(model.citations))
    if model.stop_reason is not None:
        done = Text("Done", style="bold green")
        done.append(f" after {rounds_text(model.total_rounds)}: {model.stop_reason}", style="bold")
        if model.cited_sources is not None:
            done.append(f" ({counted(model.cited_sources, 'source')} cited)")
        parts.append(done)
    return Group(*parts)


class LiveProgress:
    """A `Progress` that redraws the run's state in place on a terminal (stderr by default)."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.model = ProgressModel()
        self.live = self._new_live()

    def _new_live(self) -> Live:
        """A live area drawn from the model (a fresh one knows nothing of earlier frames)."""
        return Live(
            console=self.console,
            auto_refresh=False,  # redrawn on each event: no thread reads the model as it changes
            redirect_stdout=False,  # stdout may carry the report; never pull it onto stderr
            get_renderable=lambda: render(self.model),
        )

    def __enter__(self) -> LiveProgress:
        self.live.start(refresh=True)
        return self

    def __exit__(self, *_: object) -> None:
        """Stop redrawing, also on errors."""
        self.live.stop()  # not transient: the final frame stays on screen
        if not self.console.is_terminal:
            self.console.line()  # rich ends the frame with a newline only on terminals

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Take the live area off the screen while the user is asked something, then redraw.

        While it runs, rich reads text written to stderr as markup (`[a]pprove` became
        `pprove`) and redraws over what the user types.
        """
        self.live.transient = True  # stop() then erases the area instead of leaving it
        self.live.stop()
        try:
            yield
        finally:  # a new area, drawn below the question (the old one would draw over it)
            self.live = self._new_live()
            self.live.start(refresh=True)

    def event(self, event: ProgressEvent) -> None:
        """Fold the event into the view and redraw it."""
        self.model.apply(event)
        self.live.refresh()

    def note(self, text: str) -> None:
        """A line above the live area, as is (no markup)."""
        self.console.print(text, markup=False, highlight=False)

    def summary(self, summary: RunSummary) -> None:
        """Print the end-of-run summary table."""
        self.console.print(render_summary(summary))
