"""The command line's smaller faults a new user met (issue 28, item 12, its CLI parts): pypdf's
notes before our own line, the approval prompt's wrapping and a rejected plan shown as if it
would run, a wall time that left out start-up and rendering, `threads` columns that shifted for
`mcp-…` ids, and `.env` values labelled "environment". Commands run against the stand-ins."""

from __future__ import annotations

import io
import re
import sys
import time

from pypdf import PdfWriter
from rich.console import Console

from deep_research.cli.approval import plan_lines
from deep_research.cli.live import ProgressModel, render
from deep_research.cli.main import main
from deep_research.tools.events import PlanMade, PlannedSubtask, RunDone

QUESTION = "Compare zstd and xz"
ONE_ROUND = ["--max-iterations", "1", "--min-iterations", "1"]


def truncated_pdf() -> bytes:
    """A one-page PDF cut short: pypdf logs "EOF marker not found" before it gives up."""
    writer, buffer = PdfWriter(), io.BytesIO()
    writer.add_blank_page(100, 100)
    writer.write(buffer)
    return buffer.getvalue()[:-30]


def test_the_pdf_readers_notes_do_not_come_before_our_skipping_line(
    chat_server, home, capsys, caplog, recwarn
):
    """In this process, the lines the console script prints to stderr are the log records
    and warnings made (that a process prints them there, redacted, `test_log_lines_are_redacted`
    checks): they are read here as its handler formats them."""
    corpus = home / "docs"
    corpus.mkdir()
    (corpus / "notes.md").write_text(
        "# zstd\n\nzstd compresses logs fast; xz compresses them small.\n"
    )
    (corpus / "broken.pdf").write_bytes(truncated_pdf())
    command = ["run", QUESTION, "--corpus", "docs", *ONE_ROUND, "--quiet", "--output", "r.md"]
    assert main(command) == 0
    stderr = [f"{r.levelname} {r.name}: {r.getMessage()}" for r in caplog.records]
    stderr += [f"warning: {w.message}" for w in recwarn] + capsys.readouterr().err.splitlines()
    about_pdf = [line for line in stderr if "pdf" in line.lower()]
    assert about_pdf and "Skipping" in about_pdf[0] and "broken.pdf" in about_pdf[0], stderr
    assert "not a readable PDF" in about_pdf[0]
    assert not [line for line in stderr if "WARNING pypdf" in line or "EOF marker" in line]


SUBTASKS = [
    PlannedSubtask(
        id=n,
        description=f"{QUESTION} for log archives, aspect {n}: " + "w " * 40,
        complexity="simple",
    )
    for n in (1, 2, 3)
]


def test_plan_lines_fit_the_terminal_and_wrap_under_their_start():
    plan = {"query_type": "breadth_first", "subtasks": [s.model_dump() for s in SUBTASKS]}
    lines = plan_lines(plan, 60)
    assert all(len(line) <= 59 for line in lines), lines
    assert lines[0].startswith("  1. [simple] Compare zstd")
    continued = [line for line in lines if not re.match(r"  \d\. ", line)]
    assert continued and all(line.startswith(" " * len("  1. [simple] ")) for line in continued)
    short = {"query_type": "x", "subtasks": [{"id": 1, "complexity": "simple", "description": "a"}]}
    assert plan_lines(short, 60) == ["  1. [simple] a"]  # a line that fits stays as it was


def test_the_approval_prompt_is_wrapped_to_the_terminal(
    chat_server, search_server, home, capsys, monkeypatch
):
    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.setattr(sys, "stdin", io.StringIO("r\n"))
    long_question = QUESTION + " for log archives on small servers " + "with care " * 12
    assert main(["run", long_question, "--approve-plan", *ONE_ROUND]) == 0
    err = capsys.readouterr().err
    plan = err[err.index("\nPlan (") : err.index("Approve this plan?")]
    assert all(len(line) <= 60 for line in plan.splitlines()), plan


def test_a_rejected_plan_is_not_shown_as_if_it_will_run():
    model = ProgressModel()
    model.apply(PlanMade(query_type="breadth_first", subtasks=SUBTASKS))
    model.apply(RunDone(stop_reason="plan_rejected", sources=0, rounds=0))
    buffer = io.StringIO()
    Console(file=buffer, width=100, color_system=None).print(render(model))
    text = buffer.getvalue()
    assert "Plan: breadth_first (rejected: no research was done)" in text
    assert "aspect 1" not in text and "Done after 0 rounds: plan_rejected" in text


def test_wall_time_is_the_whole_command_start_up_and_rendering_included(
    chat_server, search_server, home, capsys, monkeypatch
):
    from deep_research.export.formats import Rendering
    from deep_research.service import preflight

    slow_check, slow_render = preflight.check_store, Rendering.render

    def check_store(*args, **kwargs):
        time.sleep(0.8)
        return slow_check(*args, **kwargs)

    def render_slowly(self, format):
        time.sleep(0.8)
        return slow_render(self, format)

    monkeypatch.setattr(preflight, "check_store", check_store)
    monkeypatch.setattr(Rendering, "render", render_slowly)
    began = time.monotonic()
    assert main(["run", QUESTION, *ONE_ROUND, "--output", "r.md"]) == 0
    took = time.monotonic() - began
    said = float(re.search(r"^wall time: ([\d.]+)s$", capsys.readouterr().err, re.M).group(1))
    assert 1.6 <= said <= took + 0.1, (said, took)


def test_threads_columns_stay_in_line_for_mcp_ids(chat_server, search_server, home, capsys):
    mcp_id = "mcp-" + "0123456789abcdef" * 2
    for thread_id in (mcp_id, "t1"):
        assert main(["run", QUESTION, *ONE_ROUND, "--thread-id", thread_id, "--quiet"]) == 0
    capsys.readouterr()
    assert main(["threads"]) == 0
    header, *rows = capsys.readouterr().out.strip().splitlines()
    status_at = header.index("status")
    assert len(rows) == 2 and all(row[status_at:].startswith("done ") for row in rows), rows
    assert all(row[status_at - 2 : status_at] == "  " for row in rows)


def test_config_says_which_values_came_from_dotenv(home, capsys, monkeypatch):
    values = {
        "OPENAI_API_KEY": "sk-from-dotenv-31e",
        "DEEP_RESEARCH_MAX_ITERATIONS": "2",
        "SEARXNG_URL": "http://127.0.0.1:9/",
    }
    for name in values:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-from-the-environment")
    (home / ".env").write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    try:
        assert main(["config"]) == 0
    finally:
        for name in values:  # load_dotenv set them in this process: take them out again
            monkeypatch.delenv(name, raising=False)
    out = capsys.readouterr().out
    rows = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert rows["OPENAI_API_KEY"].endswith("  .env")
    assert rows["SEARXNG_URL"].endswith("  .env")
    assert rows["TAVILY_API_KEY"].endswith("  environment")  # set outside: as before
    assert rows["max_iterations"].endswith("$DEEP_RESEARCH_MAX_ITERATIONS in .env")
    assert "sk-from-dotenv-31e" not in out
