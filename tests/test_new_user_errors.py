"""What a new user hit, fixed (issue 19, items 4-15): each a command as typed, and what it says.

The commands run in process (`cli.main.main`) against the stand-in servers on 127.0.0.1; no test
reaches a real service.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.main import main

QUESTION = "Compare zstd and xz"
STORE = "postgresql://alice:pw-4d1@127.0.0.1:1/db"  # nothing listens on port 1


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A working folder with its own checkpoint store, and no config file around."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", str(tmp_path / "store" / "c.sqlite"))
    monkeypatch.delenv("DEEP_RESEARCH_CONFIG", raising=False)
    return tmp_path


def one_line_error(err: str) -> str:
    """The single error line a refused command printed (and nothing like a traceback)."""
    lines = err.strip().splitlines()
    assert "Traceback" not in err and len(lines) == 1, err
    return lines[0]


# ---------------------------------------------------------------- 4: an unreachable store


@pytest.mark.parametrize(
    "command",
    [
        ["threads"],
        ["history", "some-thread"],
        ["batch", "QUESTIONS"],
        ["eval", "TASKS", "--out-dir", "OUT"],
    ],
)
def test_every_command_that_opens_an_unreachable_store_says_so_in_one_line(
    command, chat_server, search_server, home, capsys
):
    (home / "questions.txt").write_text(f"{QUESTION}\n", encoding="utf-8")
    (home / "tasks.jsonl").write_text(f'{{"id": 1, "prompt": "{QUESTION}"}}\n', encoding="utf-8")
    given = {"QUESTIONS": "questions.txt", "TASKS": "tasks.jsonl", "OUT": "out"}
    argv = [given.get(part, part) for part in command]
    assert main([*argv, "--checkpoint-db", STORE]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert "cannot open the checkpoint store postgresql://alice:***@127.0.0.1:1/db" in line
    assert "pw-4d1" not in line and "resume" not in line
    assert chat_server.requests == [] and search_server.searches == []
