"""Progress as plain lines on stderr, one per event (for pipes, CI and logs): `describe`."""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager, nullcontext
from typing import TextIO

from deep_research.cli.summary import RunSummary, summary_lines
from deep_research.service.event_lines import describe
from deep_research.tools.events import ProgressEvent


class PlainProgress:
    """Writes one line per event; quiet prints nothing."""

    def __init__(self, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.stream, self.quiet = stream, quiet

    def event(self, event: ProgressEvent) -> None:
        line = describe(event)
        if line:
            self.note(line)

    def note(self, text: str) -> None:
        if not self.quiet:
            print(text, file=self.stream or sys.stderr, flush=True)

    def summary(self, summary: RunSummary) -> None:
        for line in summary_lines(summary):
            self.note(line)

    def paused(self) -> AbstractContextManager[None]:
        """Nothing to pause: plain lines never redraw over a question."""
        return nullcontext()

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *_: object) -> None:
        pass
