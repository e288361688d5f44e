"""The `deep-research` command in-process: outputs, exit codes, inspection and plan approval."""

from __future__ import annotations

import io
import json
import re
import sys

import pytest

from deep_research.cli.main import main
from deep_research.state import ResearchOutput


@pytest.fixture
def store(tmp_path, monkeypatch):
    path = tmp_path / "store" / "checkpoints.sqlite"
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", str(path))
    monkeypatch.chdir(tmp_path)
    return path


OUTPUT = set(ResearchOutput.__annotations__)


def run(*args):
    return main(["run", *args, "--max-iterations", "1", "--min-iterations", "1"])


def test_run_writes_report_and_json_and_prints_the_thread(
    chat_server, search_server, store, tmp_path, capsys
):
    code = run(
        "Compare zstd and xz", "--thread-id", "t1", "--output", "out/r.md", "--json", "r.json"
    )
    assert code == 0
    err = capsys.readouterr().err
    assert "thread: t1" in err and "plan: breadth_first" in err and "done after 1 round:" in err
    report = (tmp_path / "out" / "r.md").read_text()
    assert "## Sources" in report
    record = json.loads((tmp_path / "r.json").read_text())
    assert set(record) == OUTPUT
    assert record["report"] == report and record["stop_reason"] == "max_iterations"
    assert store.exists()


def test_report_goes_to_stdout_and_quiet_prints_nothing_else(
    chat_server, search_server, store, capsys
):
    assert run("Compare zstd and xz", "--quiet") == 0
    out, err = capsys.readouterr()
    assert out.startswith("# Compare zstd and xz") and err == ""


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["   "], {}, "the question is empty"),
        (
            ["q", "--min-iterations", "4", "--max-iterations", "3"],
            {},
            "--min-iterations (4) is above --max-iterations (3)",
        ),
        (["q", "--quality-threshold", "101"], {}, "--quality-threshold 101: input should be"),
        (["q", "--max-workers", "0"], {}, "--max-workers 0: input should be"),
        (["q", "--search", "local"], {}, "--search 'local' needs --corpus"),
        (["q", "--set", "max_querys=3"], {}, "did you mean max_queries?"),
        (["q"], {"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None}, "OPENAI_API_KEY is not set"),
        (["q", "--search", "tavily"], {"TAVILY_API_KEY": None}, "TAVILY_API_KEY is not set"),
    ],
)
def test_bad_input_exits_2_with_the_cause_and_no_request(
    chat_server, search_server, store, capsys, monkeypatch, args, env, message
):
    for name, value in env.items():
        monkeypatch.delenv(name) if value is None else monkeypatch.setenv(name, value)
    assert main(["run", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err
    assert chat_server.requests == [] and search_server.requests == []


def test_history_and_threads(chat_server, search_server, store, capsys):
    run("Compare zstd and xz", "--thread-id", "t2", "--quiet")
    capsys.readouterr()
    assert main(["history", "t2"]) == 0
    history = capsys.readouterr().out
    assert "decompose" in history and "finalize" in history and "(end)" in history
    assert main(["threads"]) == 0
    threads = capsys.readouterr().out
    assert "t2" in threads and "done" in threads and "max_iterations" in threads
    assert main(["history", "nope"]) == 2


def test_resume_of_unknown_thread_is_bad_input(chat_server, search_server, store, capsys):
    assert main(["resume", "nope"]) == 2
    assert "cannot resume 'nope': no checkpoint store at" in capsys.readouterr().err
    assert not store.parent.exists()  # resuming never creates a store
    run("Compare zstd and xz", "--thread-id", "t0", "--quiet")
    capsys.readouterr()
    assert main(["resume", "nope"]) == 2
    assert "no run with thread id 'nope'" in capsys.readouterr().err


def test_a_run_that_fails_midway_exits_1_with_the_resume_command(
    chat_server, search_server, store, capsys
):
    chat_server.fault = lambda number, body: __import__("stand_ins.loopback").loopback.Reply(
        401, {"error": {"message": "bad key"}}
    )
    assert run("Compare zstd and xz", "--thread-id", "t3") == 1
    err = capsys.readouterr().err
    assert "AuthenticationError" in err
    assert f"(model server: {chat_server.url}/v1)" in err  # the endpoint is named
    assert "the run is saved; resume with: deep-research resume t3" in err


def answer_plan(monkeypatch, *lines):
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(f"{line}\n" for line in lines)))


def test_approve_plan_approve(chat_server, search_server, store, capsys, monkeypatch):
    answer_plan(monkeypatch, "a")
    assert run("Compare zstd and xz", "--approve-plan", "--json", "r.json") == 0
    assert "Approve this plan?" in capsys.readouterr().err
    assert chat_server.brain.calls["WorkerFindings"] == 3


def test_approve_plan_reject(chat_server, search_server, store, capsys, monkeypatch, tmp_path):
    answer_plan(monkeypatch, "r")
    assert run("Compare zstd and xz", "--approve-plan", "--json", "r.json") == 0
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["stop_reason"] == "plan_rejected" and record["sources"] == []
    assert search_server.searches == []  # the key was checked, nothing searched


def test_approve_plan_edit(chat_server, search_server, store, capsys, monkeypatch, tmp_path):
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import json, sys\n"
        "plan = json.load(open(sys.argv[1]))\n"
        "plan['subtasks'] = plan['subtasks'][:1]\n"
        "plan['subtasks'][0]['search_queries'] = ['edited query']\n"
        "json.dump(plan, open(sys.argv[1], 'w'))\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    answer_plan(monkeypatch, "x", "e")
    assert run("Compare zstd and xz", "--approve-plan") == 0
    assert search_server.queries == ["edited query"]


@pytest.mark.parametrize(
    ("editor", "said"),
    [("true", "the plan file was not changed"), ("false", "the editor exited with status 1")],
    ids=["quit-without-saving", "editor-error"],
)
def test_an_edit_left_unsaved_approves_nothing(
    chat_server, search_server, store, capsys, monkeypatch, editor, said
):
    """`:q!` leaves the file as it was, `:cq` exits 1: neither approves the plan; it is asked
    again, and rejected here, so nothing is searched."""
    monkeypatch.setenv("EDITOR", editor)
    monkeypatch.delenv("VISUAL", raising=False)
    answer_plan(monkeypatch, "e", "r")
    assert run("Compare zstd and xz", "--approve-plan", "--json", "r.json") == 0
    err = capsys.readouterr().err
    assert f"{said}: the plan stays as it was, not approved" in err
    assert err.count("Approve this plan?") == 2 and "(edited)" not in err
    assert search_server.searches == [] and chat_server.brain.calls["WorkerFindings"] == 0


def test_an_edited_plan_is_announced_once(
    chat_server, search_server, store, capsys, monkeypatch, tmp_path
):
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import json, sys\n"
        "plan = json.load(open(sys.argv[1]))\n"
        "plan['subtasks'] = plan['subtasks'][:1]\n"
        "json.dump(plan, open(sys.argv[1], 'w'))\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    answer_plan(monkeypatch, "e")
    assert run("Compare zstd and xz", "--approve-plan", "--max-iterations", "1") == 0
    assert capsys.readouterr().err.count("(edited)") == 1


def test_approve_plan_without_an_answer_is_bad_input(
    chat_server, search_server, store, capsys, monkeypatch
):
    answer_plan(monkeypatch)
    assert run("Compare zstd and xz", "--approve-plan", "--thread-id", "t4") == 2
    err = capsys.readouterr().err
    assert "needs an answer on standard input" in err
    assert "resume with: deep-research resume t4" in err


def test_keys_never_reach_checkpoints_outputs_or_progress(
    chat_server, search_server, store, tmp_path, capsys
):
    from conftest import SECRET_MODEL_KEY, SECRET_SEARCH_KEY

    assert run("Compare zstd and xz", "--output", "r.md", "--json", "r.json") == 0
    printed = capsys.readouterr()
    written = [
        store.read_bytes(),
        (tmp_path / "r.md").read_bytes(),
        (tmp_path / "r.json").read_bytes(),
    ]
    written += [p.read_bytes() for p in store.parent.glob("*")]  # the SQLite WAL files too
    for secret in (SECRET_MODEL_KEY, SECRET_SEARCH_KEY):
        assert secret not in printed.out and secret not in printed.err
        assert all(secret.encode() not in blob for blob in written)
    auth = [r["headers"].get("authorization") for r in chat_server.requests]
    assert auth and all(a == f"Bearer {SECRET_MODEL_KEY}" for a in auth)  # it was really used


def test_summary_and_evidence_table(chat_server, search_server, store, tmp_path, capsys):
    assert run("Compare zstd and xz", "--output", "r.md", "--evidence") == 0
    err = capsys.readouterr().err
    for label in (
        "rounds: 1",
        "stop reason: max_iterations",
        "LLM calls:",
        "tokens:",
        "searches:",
        "citation precision:",
        "cost: unknown",
        "report: r.md",
    ):
        assert label in err
    assert "citations: " in err  # the verification step's progress line
    report = (tmp_path / "r.md").read_text()
    assert "## Citation evidence" in report
    assert "| statement | source | verdict | method | evidence |" in report


def test_live_view_on_a_terminal(chat_server, search_server, store, monkeypatch, capsys):
    from deep_research.cli import commands as cli_main
    from deep_research.cli.live import LiveProgress

    monkeypatch.setattr(cli_main.sys.stderr, "isatty", lambda: True)
    assert isinstance(cli_main.choose_progress(quiet=False), LiveProgress)
    assert not isinstance(cli_main.choose_progress(quiet=True), LiveProgress)
    assert run("Compare zstd and xz") == 0
    err = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", capsys.readouterr().err)  # drop the styling
    assert "Run summary" in err and "Plan: breadth_first" in err
    assert "Done after 1 round: max_iterations" in err


def test_a_dotenv_file_in_the_working_folder_is_read(
    chat_server, search_server, store, tmp_path, monkeypatch, capsys
):
    import os

    values = {name: os.environ[name] for name in ("OPENAI_API_KEY", "TAVILY_API_KEY")}
    for name in values:
        monkeypatch.delenv(name)
    (tmp_path / ".env").write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    assert run("Compare zstd and xz", "--quiet") == 0
    for name in values:  # load_dotenv set them in this process: take them out again
        monkeypatch.delenv(name, raising=False)


def test_a_new_run_never_reuses_a_thread(chat_server, search_server, store, capsys):
    assert run("Compare zstd and xz", "--thread-id", "same", "--quiet") == 0
    calls = len(chat_server.chat_requests)
    assert run("History of the Roman aqueducts", "--thread-id", "same") == 2
    assert "already holds a run" in capsys.readouterr().err
    assert len(chat_server.chat_requests) == calls  # refused before any model call


def test_a_server_that_quotes_the_key_back_does_not_leak_it(
    chat_server, search_server, store, tmp_path, capsys
):
    from conftest import SECRET_SEARCH_KEY

    from stand_ins.loopback import Reply

    search_server.fault = lambda number, body: (
        Reply(401, {"detail": {"error": f"bad key {SECRET_SEARCH_KEY}"}})
        if "aspect 2" in body["query"]
        else None
    )
    assert run("Compare zstd and xz", "--json", "r.json", "--output", "r.md") == 0
    printed = capsys.readouterr()
    assert "Not researched" in (tmp_path / "r.md").read_text()  # the failure is reported...
    for blob in [
        printed.err,
        printed.out,
        (tmp_path / "r.md").read_text(),
        (tmp_path / "r.json").read_text(),
    ]:
        assert SECRET_SEARCH_KEY not in blob  # ...without the key it quoted
    for path in store.parent.glob("*"):
        assert SECRET_SEARCH_KEY.encode() not in path.read_bytes()
