"""Run, follow up or resume one research run through the run service, streaming its progress.

Every step is checkpointed before the next starts (durability "sync"), so a run killed at any
point resumes from its last finished step: nothing finished is paid for twice.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from langgraph.types import Command
from pydantic_core import to_jsonable_python

from deep_research.export.facts import RunFacts
from deep_research.export.formats import (
    Format,
    Rendering,
    check_stdout,
    format_of,
    write_file,
    write_reports,
)
from deep_research.graph.threads import thread_config
from deep_research.service.admission import Admission, Admitted, Operator
from deep_research.service.caller import Caller, Visibility
from deep_research.service.runs import RunInfo, open_service
from deep_research.settings import GUARD_NOTE, Settings
from deep_research.state import ClarifyReply, output_of
from deep_research.tools.checkpoints import StoreMissing, StoreUnreadable, open_checkpointer
from deep_research.tools.events import ProgressEvent

CALLER = Caller("cli")  # the terminal's local user: the store's own door


class Progress(Protocol):
    """Where progress events and notes go."""

    def event(self, event: ProgressEvent) -> None: ...
    def note(self, text: str) -> None: ...
    def paused(self) -> AbstractContextManager[None]: ...


@dataclass
class Outputs:
    """Where the results go: the report to files (format by extension) and/or stdout in one
    format (Markdown when no file is named), the output state as JSON."""

    reports: list[Path] = field(default_factory=list)
    json: Path | None = None
    evidence: bool = False
    stdout_format: Format | None = None
    stdout_is_terminal: bool = field(default_factory=lambda: _is_terminal(sys.stdout))

    def formats(self) -> list[Format]:
        """Every format asked for (an unknown extension raises UnknownFormat, and Word or PDF
        to a terminal BinaryToTerminal)."""
        check_stdout(self.to_stdout(), self.stdout_is_terminal)
        return [format_of(p) for p in self.reports] + [f for f in [self.to_stdout()] if f]

    def to_stdout(self) -> Format | None:
        """The format standard output gets, if any."""
        return self.stdout_format or (None if self.reports else "md")


def _is_terminal(stream: Any) -> bool:
    """True when `stream` is a terminal (a closed or missing one is not)."""
    return bool(stream is not None and getattr(stream, "isatty", lambda: False)())


def write_outputs(
    output: dict[str, Any], outputs: Outputs, facts: RunFacts, stdout: Callable[[bytes], None]
) -> list[str]:
    """The report in every format asked for, the state as JSON; returns what failed, why."""
    rendering = Rendering(output, facts, evidence=outputs.evidence)
    problems = []
    for path in outputs.reports:  # one that cannot be written stops none of the others
        try:
            problems += write_reports(rendering, [path])
        except OSError as error:
            problems.append(_cannot_write(path, error))
    problems += write_reports(rendering, [], outputs.to_stdout(), stdout)
    if outputs.json:
        text = json.dumps(to_jsonable_python(output), ensure_ascii=False, indent=2)
        try:
            write_file(outputs.json, (text + "\n").encode("utf-8"))
        except OSError as error:
            problems.append(_cannot_write(outputs.json, error))
    return problems


def _cannot_write(path: Path, error: OSError) -> str:
    """What a file that could not be written says: its path and the system's reason."""
    return f"{path}: cannot write it ({error.strerror or type(error).__name__})"


@dataclass(frozen=True)
class Research:
    """What the terminal asked: a new run (`admitted`), a follow-up (`parent` and `question`)
    or a resume (neither), under `thread_id`."""

    thread_id: str | None
    question: str = ""
    admitted: Admitted | None = None
    parent: str = ""
    change: dict[str, Any] = field(default_factory=dict)  # what a resume changes


async def admit(
    operator: Operator,
    question: str,
    settings: Settings,
    notes: Progress,
    door_checks: Callable[[], None],
) -> Admitted:
    """A new run through the service's admission (the same checks as every door's, with the
    terminal's `door_checks` before the model server is asked anything); its notes said (but
    the lowered guard, which the terminal says with its origin)."""
    admitted = await Admission(operator).new_run(question, settings, door_checks)
    for text in admitted.notes:
        if text != GUARD_NOTE:
            notes.note(text)
    return admitted


async def execute(
    *,
    target: str,
    asked: Research,
    operator: Operator,
    progress: Progress,
    answer: Callable[[dict], dict],
    all_doors: bool = False,
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """Start (or follow up, or resume) a run through the run service and drive it here to its
    end, `answer` replying to what it waits for (its questions asked back, its plan); its id,
    output and the state values it ended with.
    `operator`: this command's (what it reads and starts comes from its settings)."""
    async with open_service(
        target,
        operator,
        visibility=Visibility(other_doors=all_doors),
        create=asked.admitted is not None,
        notes=progress.note,
    ) as service:
        step: Command | None = None
        waiting: RunInfo | None = None  # a resumed run that waits for a person
        if asked.admitted is not None:
            run_id = await service.start(
                CALLER, asked.admitted, run_id=asked.thread_id, launch=False
            )
            progress.note(f"thread: {run_id}")
        elif asked.parent:
            run_id = await service.follow_up(
                CALLER, asked.parent, asked.question, run_id=asked.thread_id, launch=False
            )
            progress.note(f"thread: {run_id}")
        else:
            run_id = asked.thread_id or ""
            info = await service.read(CALLER, run_id)
            if info.status == "done":  # nothing to run: its report is written again
                return run_id, output_of(info.values), info.values
            if info.status == "waiting" and not asked.change:  # what it waits for: asked again
                waiting = info
            else:
                step = await service.resume(CALLER, run_id, asked.change, launch=False)
            progress.note(f"resuming thread: {run_id}")
        with service.watching(run_id, progress.event):
            while True:
                info = waiting or await service.drive(CALLER, run_id, step)
                waiting = None
                if info.status != "waiting" or not info.snapshot.interrupts:
                    break
                with progress.paused():  # the question is asked on a still terminal
                    reply = answer(info.snapshot.interrupts[0].value)
                if info.waiting_questions:  # its questions asked back, else its plan
                    replied = ClarifyReply.model_validate(reply)
                    step = await service.answer(CALLER, run_id, replied, launch=False)
                else:
                    step = await service.decide(CALLER, run_id, reply, launch=False)
    return run_id, output_of(info.values), info.values


def reading(target: str, all_doors: bool = False):
    """The run service for commands that only read (the store is never made)."""
    return open_service(
        target, Operator(), visibility=Visibility(other_doors=all_doors), create=False
    )


async def checkpoint_saved(target: str, thread_id: str) -> bool | None:
    """Whether the store holds a checkpoint of the thread (so `resume` can continue it).

    None when the store cannot be read now: then nobody knows, and the caller says so.
    """
    try:
        async with open_checkpointer(target, create=False) as saver:
            return await saver.aget_tuple(thread_config(thread_id)) is not None
    except StoreUnreadable:
        return None
    except StoreMissing:
        return False
    except Exception:  # a store that cannot be read now: unknown, not "nothing saved"
        return None
