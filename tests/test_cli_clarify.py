"""Questions asked back on the terminal: shown with their suggested answers, answered by number
or in words, then the plan's approval prompt; Ctrl-C keeps the run waiting at them; piped or
with `--no-clarify`, nothing is asked or paid for. The command runs as a user runs it, on a
pseudo-terminal."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from test_cli_entry_point import ROOT, _read_until

from deep_research.cli.main import main

VAGUE = "Is it worth switching?"
WHAT = {
    "question": "Switching what: your database or your cloud provider?",
    "suggested_answers": ["database", "cloud provider"],
}
WHEN = {"question": "By when do you need to decide?", "suggested_answers": []}


@dataclass
class Terminal:
    """A command on a pseudo-terminal: what it has shown so far, and a keyboard."""

    child: subprocess.Popen
    master: int
    seen: bytearray = field(default_factory=bytearray)

    def until(self, wanted: bytes, after: bytes = b"") -> None:
        """Read what the command shows until `wanted` appears (after `after`, if given)."""
        start = 0
        if after:
            _read_until(self.master, after, self.seen)
            start = self.seen.index(after)
        shown = bytearray(self.seen[start:])
        _read_until(self.master, wanted, shown)
        self.seen[start:] = shown

    def type(self, line: str) -> None:
        os.write(self.master, f"{line}\n".encode())


@contextmanager
def on_a_terminal(*args: str, cwd) -> Iterator[Terminal]:
    """`deep-research ARGS` with a pseudo-terminal for standard input and error."""
    master, terminal = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, "-m", "deep_research.cli", *args],
        cwd=cwd, stdin=terminal, stderr=terminal, stdout=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", "COLUMNS": "100"},
    )  # fmt: skip
    os.close(terminal)
    try:
        yield Terminal(child, master)
    finally:
        child.kill()
        child.wait()
        os.close(master)


def requests_for(chat_server, contract: str) -> list[str]:
    """The text of every request that asked for `contract`, in order."""
    texts = [json.dumps(r["body"], ensure_ascii=False) for r in chat_server.chat_requests]
    return [text for text in texts if contract in text]


def test_the_questions_are_asked_and_the_answers_reach_the_plan_then_shown_for_approval(
    chat_server, search_server, home
):
    """Both of a run's questions on a terminal, in one command: the clarifying questions, then
    the plan's approval prompt with its keys."""
    chat_server.brain.clarifying = [WHAT, WHEN]
    args = ("run", VAGUE, "--approve-plan", "--max-iterations", "1", "--output", "r.md")
    with on_a_terminal(*args, cwd=home) as tty:
        tty.until(b"> ")
        assert b"Before researching, 2 questions" in tty.seen, bytes(tty.seen)
        assert b"1. Switching what" in tty.seen and b"1) database  2) cloud provider" in tty.seen
        assert chat_server.brain.calls["TaskPlan"] == 0  # nothing planned before the answers
        tty.type("1")
        tty.until(b"> ", after=b"2. By when")
        tty.type("before the next release")
        tty.until(b"eject", after=b"before the next release")
        assert b"[a]pprove, [e]dit, [r]eject" in tty.seen, bytes(tty.seen)
        assert not search_server.searches  # nothing researched before the approval
        tty.type("a")
        tty.until(b"Run summary")
        assert tty.child.wait(timeout=60) == 0, bytes(tty.seen)
    plan = requests_for(chat_server, "TaskPlan")
    assert len(plan) == 1 and "Switching what" in plan[0]
    assert "database" in plan[0] and "before the next release" in plan[0]
    assert (home / "r.md").exists() and search_server.searches  # approved, then researched


def test_piped_nothing_is_asked_nor_paid_for(chat_server, search_server, home, capsys):
    chat_server.brain.clarifying = [WHAT]
    assert main(["run", VAGUE, "--max-iterations", "1", "--output", "r.md"]) == 0
    assert chat_server.brain.calls["Clarification"] == 0 and "Before researching" not in (
        capsys.readouterr().err
    )


def test_no_clarify_turns_it_off_on_a_terminal(chat_server, search_server, home, monkeypatch):
    chat_server.brain.clarifying = [WHAT]
    monkeypatch.setattr("deep_research.cli.clarify._is_terminal", lambda: True)
    assert main(["run", VAGUE, "--no-clarify", "--max-iterations", "1", "--output", "r.md"]) == 0
    assert chat_server.brain.calls["Clarification"] == 0
    assert chat_server.brain.calls["TaskPlan"] == 1


def test_ctrl_c_at_the_questions_keeps_the_run_waiting_there(
    chat_server, search_server, home, capsys
):
    chat_server.brain.clarifying = [WHAT]
    with on_a_terminal(
        "run", VAGUE, "--thread-id", "asked", "--max-iterations", "1", cwd=home
    ) as tty:
        tty.until(b"> ")
        tty.child.send_signal(signal.SIGINT)
        tty.until(b"resume with")
        assert tty.child.wait(timeout=30) == 130, bytes(tty.seen)
        seen = bytes(tty.seen)
    assert b"deep-research resume asked" in seen
    assert dict(chat_server.brain.calls) == {"Clarification": 1}
    # resumed where nobody can answer: researched as asked, the judgement not paid for again
    assert main(["resume", "asked", "--output", "r.md"]) == 0
    assert "no terminal to answer the questions" in capsys.readouterr().err
    assert chat_server.brain.calls["Clarification"] == 1 and chat_server.brain.calls["TaskPlan"]
    assert "answered these questions" not in requests_for(chat_server, "TaskPlan")[0]
