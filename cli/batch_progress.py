"""Progress of a batch: one row per question, live on a terminal or as plain lines elsewhere.

The rows (`BatchRow`) are built from each run's progress events and kept apart from their
drawing, so the view can be tested without a terminal.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import TextIO

from rich import box
from rich.console import Console
from rich.live import Live
from rich.table import Table

from deep_research.cli.live import shorten
from deep_research.service.event_lines import describe, score_text
from deep_research.tools.events import (
    CitationsChecked,
    GapsAnalyzed,
    PlanMade,
    ProgressEvent,
    QualityScored,
    ReplyDegenerate,
    ReplyPartlyKept,
    ReportWritten,
    SourceFailed,
    WorkerDone,
)

QUESTION_WIDTH = 48
STATE_STYLES = {"done": "green", "skipped": "green", "failed": "red", "queued": "dim"}


@dataclass
class BatchRow:
    """One question's latest state."""

    line: int
    question: str
    state: str = "queued"  # queued | planning | researching | writing | reviewing | done ...
    round: int = 0
    workers_done: int = 0
    workers: int = 0
    score: float | None = None
    started: float | None = None
    seconds: float | None = None
    note: str = ""

    def apply(self, event: ProgressEvent) -> None:
        """Move the row on by one of the run's progress events."""
        match event:
            case PlanMade():
                self.state, self.round = "researching", 1
                self.workers, self.workers_done = len(event.subtasks), 0
            case WorkerDone():
                if event.round != self.round:
                    self.round, self.workers, self.workers_done = event.round, 0, 0
                self.workers_done += 1
                self.workers = max(self.workers, self.workers_done)
            case ReportWritten():
                self.state = "reviewing"
            case QualityScored():
                self.score = event.score
            case GapsAnalyzed():
                self.state, self.round = "researching", self.round + 1
                self.workers, self.workers_done = len(event.tasks), 0
            case CitationsChecked():
                self.state = "checking citations"

    def text(self) -> str:
        """The row as one plain line."""
        parts = [f"[{self.line}] {shorten(self.question, QUESTION_WIDTH)}: {self.state}"]
        if self.round:
            parts.append(f"round {self.round}, workers {self.workers_done}/{self.workers}")
        if self.score is not None:
            parts.append(f"score {score_text(self.score)}")
        if self.seconds is not None:
            parts.append(f"{self.seconds:.1f} s")
        if self.note:
            parts.append(self.note)
        return ", ".join(parts)


class BatchProgress:
    """Tracks every question's row; draws a live table on a terminal, else prints changes."""

    def __init__(self, rows: list[BatchRow], live: bool, quiet: bool = False, stream=None):
        self.rows = {row.line: row for row in rows}
        self.quiet = quiet
        self.stream: TextIO = stream or sys.stderr
        self._live = Live(console=Console(file=self.stream), auto_refresh=False) if live else None

    def start(self, line: int, resumed: bool) -> None:
        row = self.rows[line]
        row.state, row.started = ("resuming" if resumed else "planning"), time.monotonic()
        self._changed(row)

    def event(self, line: int, event: ProgressEvent) -> None:
        match event:  # what a person must know of one question, said on its own line
            case SourceFailed() | ReplyDegenerate(final=True) | ReplyPartlyKept():
                self.note(f"[{line}] {describe(event)}")
        row = self.rows[line]
        before = (row.state, row.round)
        row.apply(event)
        self._changed(row, quiet=(row.state, row.round) == before and self._live is None)

    def finish(self, line: int, state: str, note: str = "", score: float | None = None) -> None:
        row = self.rows[line]
        row.state, row.note = state, note
        row.score = score if score is not None else row.score
        if row.started is not None:
            row.seconds = time.monotonic() - row.started
        self._changed(row)

    def note(self, text: str) -> None:
        if not self.quiet:
            (self._live.console if self._live else Console(file=self.stream)).print(text)

    def _changed(self, row: BatchRow, quiet: bool = False) -> None:
        if self.quiet:
            return
        if self._live is not None:
            self._live.update(self.table(), refresh=True)
        elif not quiet:
            print(row.text(), file=self.stream, flush=True)

    def table(self) -> Table:
        """Every question as one row of a table."""
        table = Table(box=box.SIMPLE, expand=False)
        for column in ("line", "question", "state", "round", "workers", "score", "seconds"):
            table.add_column(column)
        for row in self.rows.values():
            style = STATE_STYLES.get(row.state, "cyan")
            table.add_row(
                str(row.line),
                shorten(row.question, QUESTION_WIDTH),
                f"[{style}]{row.state}[/]" + (f" ({shorten(row.note, 30)})" if row.note else ""),
                str(row.round or "-"),
                f"{row.workers_done}/{row.workers}" if row.workers else "-",
                "-" if row.score is None else score_text(row.score),
                "-" if row.seconds is None else f"{row.seconds:.1f}",
            )
        return table

    def __enter__(self) -> BatchProgress:
        if self._live is not None and not self.quiet:
            self._live.start()
            self._live.update(self.table(), refresh=True)
        return self

    def __exit__(self, *_: object) -> None:
        if self._live is not None and not self.quiet:
            self._live.stop()
