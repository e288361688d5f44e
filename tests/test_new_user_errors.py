"""What a new user hit, fixed (issue 19, items 4-15): each a command as typed, and what it says.

The commands run in process (`cli.main.main`) against the stand-in servers on 127.0.0.1; no test
reaches a real service.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from deep_research.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "Compare zstd and xz"
STORE = "postgresql://alice:pw-4d1@127.0.0.1:1/db"  # nothing listens on port 1


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
        ["export", "some-thread", "--output", "r.html"],
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


# ---------------------------------------------------------------- 5: a batch file checked first


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ("\x01\x02\x03\x1c\x1d", "line 2: the question is empty"),
        ("x" * 5000, "line 2: the question is 5000 characters long; the limit is 4000"),
    ],
)
def test_a_bad_batch_line_is_refused_before_the_first_question_is_paid_for(
    bad_line, message, chat_server, search_server, home, capsys
):
    (home / "q.txt").write_text(f"{QUESTION}\n{bad_line}\n", encoding="utf-8")
    assert main(["batch", "q.txt", "--out-dir", "out"]) == 2
    assert one_line_error(capsys.readouterr().err) == f"error: {message}"
    assert chat_server.requests == [] and search_server.searches == []


def test_a_question_repeated_in_a_batch_is_researched_once(
    chat_server, search_server, home, capsys
):
    (home / "q.txt").write_text(f"{QUESTION}\n\n{QUESTION.upper()}\n", encoding="utf-8")
    assert main(["batch", "q.txt", "--out-dir", "out", "--max-iterations", "1"]) == 0
    assert "line 3 repeats line 1: researched once" in capsys.readouterr().err
    assert chat_server.brain.calls["TaskPlan"] == 1
    assert [p.name for p in (home / "out").glob("*.md")] == ["0001-compare-zstd-and-xz.md"]


# ---------------------------------------------------------------- 6: --corpus is used or refused


def test_a_corpus_without_a_search_backend_is_the_folder_searched(home, capsys):
    (home / "docs").mkdir()
    (home / "docs" / "zstd.md").write_text("# zstd\n\nzstd is fast.\n", encoding="utf-8")
    assert main(["config", "--corpus", "docs"]) == 0
    shown = capsys.readouterr().out
    assert re.search(r"^search_backend +local ", shown, re.M)


def test_a_corpus_with_a_web_backend_is_refused_naming_both(chat_server, home, capsys):
    (home / "docs").mkdir()
    assert main(["run", QUESTION, "--corpus", "docs", "--search", "tavily"]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert "--corpus is set but --search 'tavily' never reads it" in line
    assert chat_server.requests == []


# ---------------------------------------------------------------- 7: a budget spent first


def test_a_budget_spent_before_any_search_says_budget_not_failed_searches(
    chat_server, search_server, home, capsys
):
    assert main(["run", QUESTION, "--max-tokens", "1", "--json", "r.json", "--quiet"]) == 4
    output = json.loads((home / "r.json").read_text())
    assert output["stop_reason"] == "budget" and output["sources_found"] == 0
    assert "the run's budget was spent before any search returned anything" in output["report"]
    assert "every search failed" not in output["report"]
    assert search_server.searches == []
    assert "a budget was spent before any evidence was found (exit 4)" in capsys.readouterr().err


# ---------------------------------------------------------------- 8, 9, 15: plan approval


def editor(tmp_path, monkeypatch, body: str) -> None:
    """$EDITOR: a script that changes the plan file it is given."""
    script = tmp_path / "editor.py"
    script.write_text(
        f"import json, sys\nplan = json.load(open(sys.argv[1]))\n{body}\n"
        "json.dump(plan, open(sys.argv[1], 'w'))\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")


def answers(monkeypatch, *lines: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(f"{line}\n" for line in lines)))


def test_an_edited_straightforward_plan_runs_the_subtasks_the_person_wrote(
    chat_server, search_server, home, monkeypatch, capsys
):
    chat_server.brain.query_type, chat_server.brain.subtasks = "straightforward", 1
    editor(
        home,
        monkeypatch,
        "plan['subtasks'] = [dict(plan['subtasks'][0], description=f'Part {n}', "
        "search_queries=[f'edited {n}']) for n in (1, 2, 3)]",
    )
    answers(monkeypatch, "e")
    assert main(["run", QUESTION, "--approve-plan", "--max-iterations", "1"]) == 0
    assert "(edited)" in capsys.readouterr().err
    assert sorted(search_server.queries) == ["edited 1", "edited 2", "edited 3"]
    assert chat_server.brain.calls["WorkerFindings"] == 3


def test_an_edit_that_cannot_be_kept_whole_says_what_was_dropped(
    chat_server, search_server, home, monkeypatch, capsys
):
    editor(
        home,
        monkeypatch,
        "plan['subtasks'] = [dict(plan['subtasks'][0], description=f'Part {n}') "
        "for n in range(1, 9)]",
    )
    answers(monkeypatch, "e")
    monkeypatch.setenv("DEEP_RESEARCH_MAX_SUBTASKS", "2")
    assert main(["run", QUESTION, "--approve-plan"]) == 0
    err = capsys.readouterr().err
    assert "6 of the 8 edited subtasks dropped (repeats, blanks, or over max_subtasks 2)" in err


def test_an_unusable_edit_is_explained_without_a_library_link(
    chat_server, search_server, home, monkeypatch, capsys
):
    editor(home, monkeypatch, "plan['subtasks'][0]['complexity'] = 'huge'")
    answers(monkeypatch, "e", "r")
    assert main(["run", QUESTION, "--approve-plan"]) == 0
    err = capsys.readouterr().err
    assert (
        "the edited plan is not usable: subtasks.0.complexity: Input should be 'simple', "
        "'medium' or 'complex'" in err
    )
    assert "pydantic.dev" not in err and "http" not in err


def test_ctrl_c_at_the_approval_question_exits_130_at_once(chat_server, search_server, home):
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "deep_research.cli", "run", QUESTION, "--approve-plan"]
    with subprocess.Popen(
        command, cwd=home, env=environ, stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:  # stdin stays open: nobody ever presses Enter
        seen = ""
        while "Approve this plan?" not in seen:
            seen += process.stderr.read(1) or pytest.fail(f"no question asked: {seen}")
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=60)  # stdin stays open: only Ctrl-C can end it, at once
        rest = process.stderr.read()
    assert code == 130
    assert "interrupted; resume with: deep-research resume" in rest


# ---------------------------------------------------------------- 10: an unreachable provider


def test_an_unreachable_duckduckgo_exits_2_before_the_planner_is_paid(
    chat_server, home, monkeypatch, capsys
):
    for name in ("TAVILY_API_KEY", "BOCHA_API_KEY", "SEARXNG_URL"):
        monkeypatch.delenv(name, raising=False)
    # conftest points DUCKDUCKGO_BASE_URL at 127.0.0.1:9, where nothing listens
    assert main(["run", QUESTION]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert line == (
        "error: duckduckgo at http://127.0.0.1:9 cannot be reached: Connection refused; "
        "search another way: set TAVILY_API_KEY or BOCHA_API_KEY, or SEARXNG_URL to your own "
        "SearXNG, or search your documents with --search local --corpus DIR"
    )
    assert chat_server.requests == []


def test_a_reachable_duckduckgo_passes_the_probe_with_nothing_searched(duckduckgo_server):
    from deep_research.service.preflight import check_reachable

    check_reachable("duckduckgo", duckduckgo_server.url)
    assert duckduckgo_server.requests == []  # a connection only: no search, no rate limit


def test_the_probe_is_bounded_even_when_the_name_lookup_hangs(monkeypatch):
    from deep_research.service.bad_input import BadInput
    from deep_research.service.preflight import check_reachable

    release = threading.Event()

    def hanging_lookup(*args, **kwargs):  # a resolver with no route: it hangs, then gives up
        release.wait(30)
        raise OSError("name lookup gave up")

    monkeypatch.setattr("socket.create_connection", hanging_lookup)
    started = time.monotonic()
    with pytest.raises(
        BadInput, match=re.escape("duckduckgo at https://html.example did not answer within 0.3 s")
    ):
        check_reachable("duckduckgo", "https://html.example/html/", timeout=0.3)
    assert time.monotonic() - started < 10  # not the 30 s the lookup hangs: a busy machine's slack
    release.set()


# ---------------------------------------------------------------- 11: a mistyped variable


def test_a_mistyped_setting_variable_gets_the_hint_a_mistyped_toml_key_gets(
    home, monkeypatch, capsys
):
    monkeypatch.setenv("DEEP_RESEARCH_MAX_ITERATION", "1")
    assert main(["config"]) == 2
    assert one_line_error(capsys.readouterr().err) == (
        "error: $DEEP_RESEARCH_MAX_ITERATION: there is no setting named 'max_iteration' "
        "(did you mean $DEEP_RESEARCH_MAX_ITERATIONS?)"
    )


def test_the_projects_other_variables_are_not_mistaken_for_typos(home, monkeypatch, capsys):
    monkeypatch.setenv("DEEP_RESEARCH_MODEL_RPM", "60")
    monkeypatch.setenv("DEEP_RESEARCH_JUDGE_MODEL", "judge")
    monkeypatch.setenv("DEEP_RESEARCH_SOMETHING_ELSE", "x")  # close to no setting: left alone
    assert main(["config"]) == 0


# ---------------------------------------------------------------- 12: eval --help at once


def test_eval_help_imports_nothing_heavy():
    code = (
        "import sys\nfrom deep_research.cli.main import main\n"
        "try:\n    main(['eval', '--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in sys.modules if m.removeprefix('deep_research.').split('.')[0]"
        " in ('langchain_core', 'langgraph', 'openai', 'graph', 'nodes', 'tools')"
        " or m == 'deep_research.evaluation.judge')\n"
        "print('HEAVY', heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert "--judge-model" in done.stdout and "HEAVY []" in done.stdout, done.stdout[-500:]


# ---------------------------------------------------------------- 14: which setting differs


def test_an_eval_folder_started_with_other_settings_names_the_one_that_differs(tmp_path):
    from deep_research.evaluation.layout import EvalDir
    from deep_research.evaluation.pipeline import ManifestMismatch, open_manifest
    from deep_research.settings import Settings

    layout = EvalDir(tmp_path / "out")
    tasks = tmp_path / "tasks.jsonl"

    def record(workers: int) -> dict:
        return {"settings": Settings(model="m", max_workers=workers).model_dump(mode="json")}

    open_manifest(layout, record(2), tasks)
    with pytest.raises(ManifestMismatch) as refused:
        open_manifest(layout, record(3), tasks)
    message = str(refused.value)
    assert message == (
        f"{layout.root} was started with other settings: max_workers (2 then, 3 now); "
        "use another --out-dir, or the same flags"
    )


# ---------------------------------------------------------------- 15: the smaller ones


def test_scores_are_whole_numbers_and_one_round_is_singular():
    from deep_research.service.event_lines import describe, score_text
    from deep_research.tools.events import parse_event

    assert score_text(86.858) == "87/100"
    quality = parse_event({"event": "quality", "round": 1, "score": 86.858, "issues": []})
    assert describe(quality) == "round 1: quality 87/100"
    done = parse_event(
        {"event": "done", "rounds": 1, "stop_reason": "max_iterations", "sources": 1}
    )
    assert describe(done) == "done after 1 round: max_iterations"
    plan = parse_event(
        {
            "event": "plan",
            "query_type": "straightforward",
            "subtasks": [{"id": 1, "description": "q", "complexity": "simple"}],
        }
    )
    assert describe(plan) == "plan: straightforward, 1 subtask: 1. q"


def test_the_live_view_says_one_round(capsys):
    from rich.console import Console

    from deep_research.cli.live import ProgressModel, render
    from deep_research.tools.events import RunDone

    model = ProgressModel()
    model.apply(RunDone(rounds=1, stop_reason="max_iterations", sources=2))
    console = Console(width=100, record=True)
    console.print(render(model))
    assert "Done after 1 round: max_iterations" in console.export_text()


def test_an_unknown_flag_gets_its_commands_usage(capsys):
    with pytest.raises(SystemExit) as ended:
        main(["run", QUESTION, "--bogus"])
    err = capsys.readouterr().err
    assert ended.value.code == 2 and err.startswith("usage: deep-research run ")
    assert "deep-research run: error: unrecognized arguments: --bogus" in err


def test_a_bad_limit_is_explained_in_words(capsys):
    with pytest.raises(SystemExit):
        main(["threads", "--limit", "abc"])
    err = capsys.readouterr().err
    assert "argument --limit: must be a whole number, 0 or more, not 'abc'" in err
    assert "_non_negative" not in err


def test_a_store_under_a_file_names_the_file(chat_server, search_server, home, capsys):
    (home / "notes").write_text("")
    store = str(home / "notes" / "ck.sqlite")
    assert main(["run", QUESTION, "--checkpoint-db", store]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert line == (
        f"error: cannot open the checkpoint store {store}: {home / 'notes'} is a file, not a folder"
    )


@pytest.mark.parametrize("command", ["eval", "batch", "mcp"])
def test_unattended_commands_do_not_offer_approve_plan(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "--approve-plan" not in capsys.readouterr().out


@pytest.mark.parametrize("address", ["0.0.0.0:8765", "192.0.2.7:8765", "myhost:8765"])
def test_mcp_over_http_refuses_an_address_other_machines_reach(address, capsys):
    assert main(["mcp", "--http", address]) == 2
    error = capsys.readouterr().err
    assert "reachable from other machines" in error and "--allow-remote" in error


@pytest.mark.parametrize(
    "command", [["batch", "QUESTIONS"], ["eval", "TASKS", "--out-dir", "OUT"], ["run", QUESTION]]
)
def test_every_research_command_checks_the_mcp_sources_file_first(
    command, chat_server, search_server, home, capsys
):
    (home / "questions.txt").write_text(f"{QUESTION}\n", encoding="utf-8")
    (home / "tasks.jsonl").write_text(f'{{"id": 1, "prompt": "{QUESTION}"}}\n', encoding="utf-8")
    given = {"QUESTIONS": "questions.txt", "TASKS": "tasks.jsonl", "OUT": "out"}
    argv = [given.get(part, part) for part in command]
    assert main([*argv, "--mcp-config", str(home / "missing.json")]) == 2
    assert "missing.json" in one_line_error(capsys.readouterr().err)
    assert chat_server.requests == [] and search_server.searches == []
