"""Run or resume one research thread against the checkpoint store, streaming its progress.

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
from deep_research.graph import build_graph
from deep_research.graph.threads import advance, thread_config
from deep_research.settings import Settings, settings_from
from deep_research.state import output_of
from deep_research.tools.checkpoints import StoreMissing, StoreUnreadable, open_checkpointer
from deep_research.tools.events import ProgressEvent
from deep_research.tools.run_resources import LiveRuns
from deep_research.tools.secrets import mask_url_passwords


class Progress(Protocol):
    """Where progress events and notes go."""

    def event(self, event: ProgressEvent) -> None: ...
    def note(self, text: str) -> None: ...
    def paused(self) -> AbstractContextManager[None]: ...


class UnknownThread(LookupError):
    """No run with that thread id is in the checkpoint store."""


class ThreadInUse(ValueError):
    """A new run was asked for under a thread id that already holds one."""


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


async def execute(
    *,
    target: str,
    thread_id: str,
    graph_input: dict | None,
    progress: Progress,
    answer: Callable[[dict], dict],
    new_settings: Settings | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run (or, with no input, resume) a thread to its end; returns the output and the state
    values (settings, question) it ended with. `answer` replies to what the run waits for (its
    questions asked back, its plan). A resume with `new_settings` (another model, say:
    `cli.resume_settings`) saves them with the run before its next step."""
    async with open_checkpointer(target) as saver:
        runs = LiveRuns()
        graph = build_graph(checkpointer=saver, runs=runs)
        config = thread_config(thread_id)
        existing = (await graph.aget_state(config)).values
        if graph_input is None and not existing:
            raise UnknownThread(
                f"no run with thread id {thread_id!r} in {mask_url_passwords(target)}"
            )
        if graph_input is not None and existing:
            raise ThreadInUse(
                f"thread id {thread_id!r} already holds a run: continue it with "
                f"`deep-research resume {thread_id}` or choose another --thread-id"
            )
        step_input: dict | Command | None = graph_input
        if graph_input is None and new_settings is not None:
            step_input = Command(update={"settings": new_settings})
        while True:
            snapshot = await advance(graph, thread_id, step_input, progress.event, runs=runs)
            if not snapshot.interrupts:
                break
            with progress.paused():  # the question is asked on a still terminal
                step_input = Command(resume=answer(snapshot.interrupts[0].value))
    return output_of(snapshot.values), snapshot.values


async def saved_settings(target: str, thread_id: str) -> Settings | None:
    """The settings a saved run holds; None when the store has no such run (yet)."""
    async with open_checkpointer(target, create=False) as saver:
        graph = build_graph(checkpointer=saver)
        values = (await graph.aget_state(thread_config(thread_id))).values
    return settings_from(values["settings"]) if values.get("settings") else None


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
