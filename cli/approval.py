"""Plan approval on the terminal: show the plan, then approve, edit it in $EDITOR, or reject."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import ValidationError

from deep_research.service.bad_input import BadInput
from deep_research.state import TaskPlan

UNCHANGED = "the plan stays as it was, not approved"


class NoAnswer(BadInput):
    """The plan waits for an answer that standard input cannot give (it is closed)."""


def _edit_plan(plan: dict) -> dict | None:
    """Open the plan as JSON in $VISUAL/$EDITOR and read the edited plan back; None when the
    file was left as it was (the editor quit without saving, `:q!`). An editor that exits with
    an error raises CalledProcessError."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    shown = json.dumps(plan, ensure_ascii=False, indent=2)
    with tempfile.NamedTemporaryFile("w+", suffix=".json", delete=False) as handle:
        handle.write(shown)
    try:
        subprocess.run([*shlex.split(editor), handle.name], check=True)
        text = Path(handle.name).read_text()
        return None if text == shown else TaskPlan.model_validate_json(text).model_dump()
    finally:
        os.unlink(handle.name)


def _plan_error(error: Exception) -> str:
    """Why an edited plan cannot be used, in a line or two (no library links)."""
    if isinstance(error, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in item['loc']) or 'plan'}: {item['msg']}"
            for item in error.errors()[:5]
        )
    return str(error)


@contextmanager
def interruptible() -> Iterator[None]:
    """Ctrl-C ends a wait for input at once (KeyboardInterrupt), not after Enter.

    Inside `asyncio.run` the SIGINT handler only cancels the main task, which cannot happen
    while this thread blocks reading the terminal; the default handler raises right there.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def plan_lines(plan: dict, width: int) -> list[str]:
    """The subtasks as lines at most `width` wide, each wrapped under its own start (the
    terminal would break a long one anywhere, and flush to the left edge)."""
    lines = []
    for task in plan["subtasks"]:
        head = f"  {task['id']}. [{task['complexity']}] "
        lines += textwrap.wrap(
            " ".join(str(task["description"]).split()),
            width=max(width - 1, len(head) + 20),  # the last column would wrap a full line
            initial_indent=head,
            subsequent_indent=" " * len(head),
            break_on_hyphens=False,
        ) or [head.rstrip()]
    return lines


def decide_plan(request: dict) -> dict:
    """Ask on the terminal whether to approve, edit or reject the plan."""
    with interruptible():
        return _ask(request)


def _ask(request: dict) -> dict:
    """The question and its answer, asked again until it is one of a, e or r."""
    plan = request["plan"]
    print(f"\nPlan ({plan['query_type']}):", file=sys.stderr)
    for line in plan_lines(plan, shutil.get_terminal_size().columns):
        print(line, file=sys.stderr)
    while True:
        print("Approve this plan? [a]pprove, [e]dit, [r]eject: ", end="", file=sys.stderr)
        sys.stderr.flush()
        answer = sys.stdin.readline()
        if not answer:
            raise NoAnswer("--approve-plan needs an answer on standard input (a, e or r)")
        choice = answer.strip().lower()[:1]
        if choice == "a":
            return {"action": "approve"}
        if choice == "r":
            return {"action": "reject"}
        if choice == "e":
            try:
                edited = _edit_plan(plan)
            except subprocess.CalledProcessError as error:  # e.g. vim's :cq
                print(
                    f"the editor exited with status {error.returncode}: {UNCHANGED}",
                    file=sys.stderr,
                )
                continue
            except (ValidationError, OSError) as error:
                print(f"the edited plan is not usable: {_plan_error(error)}", file=sys.stderr)
                continue
            if edited is None:
                print(f"the plan file was not changed: {UNCHANGED}", file=sys.stderr)
                continue
            return {"action": "edit", "plan": edited}
