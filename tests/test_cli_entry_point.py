"""The `deep-research` command as a user runs it, against the stand-in servers.

Settings from every source and their precedence, the exit codes a script reads, the preflight
that refuses an unusable store or endpoint before any model call, and no password echoed.
What is about the process (the entry point's exit code and output, a shadowed package,
`--help`'s imports, the fast exit) runs as a subprocess; what is about the command's behaviour
calls `main(ARGV)` in this process (`here`): the same parser, checks and commands, without a
process's 1.5 s of imports per test. (Ctrl-C's exit code is test_resume's, a terminal's prompts
test_cli_clarify's.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "Compare zstd and xz"


def cli(*args: str, cwd: Path, env: dict[str, str | None] | None = None, **kwargs):
    """Run `python -m deep_research.cli ARGS` (what the console script runs); capture output."""
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name, value in (env or {}).items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value
    return subprocess.run(
        [sys.executable, "-m", "deep_research.cli", *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,
    )


@dataclass
class Done:
    """What a command ended with: its exit code and what it printed."""

    returncode: int
    stdout: str
    stderr: str


def here(capsys: pytest.CaptureFixture, *args: str) -> Done:
    """`deep-research ARGS` in this process, in the current folder and environment (`home`
    and `monkeypatch` set them; conftest gives each test fresh process-wide clients)."""
    from deep_research.cli.main import main

    capsys.readouterr()
    try:
        code = main(list(args))
    except SystemExit as exit:  # argparse refusing the command line
        code = exit.code
    out, err = capsys.readouterr()
    return Done(code, out, err)


def record(path: Path) -> dict:
    return json.loads(path.read_text())


def test_max_iterations_alone_means_one_round(chat_server, search_server, home, capsys):
    done = here(capsys, "run", QUESTION, "--max-iterations", "1", "--json", "r.json")
    assert done.returncode == 0, done.stderr
    result = record(home / "r.json")
    assert result["iteration"] == 1 and result["stop_reason"] == "max_iterations"
    assert chat_server.brain.calls["GapAnalysis"] == 0  # no gap round was started
    assert "rounds: 1" in done.stderr


def test_python_callers_get_the_same_adaptation():
    from deep_research.settings import Settings, settings_from

    assert settings_from({"max_iterations": 1}).min_iterations == 1
    assert Settings(min_iterations=7).max_iterations == 7  # the cap rises to the floor given
    with pytest.raises(ValueError, match=r"min_iterations \(4\) is above max_iterations \(3\)"):
        Settings(min_iterations=4, max_iterations=3)


def test_a_search_budget_set_by_name_holds_the_run(chat_server, search_server, home, capsys):
    done = here(
        capsys, "run", QUESTION, "--set", "max_search_calls=3", "--max-workers", "1", "--json",
        "r.json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = record(home / "r.json")
    assert result["stop_reason"] == "budget" and result["iteration"] == 1
    # one worker at a time sends one cycle's 2 queries at once: at most 1 past the budget
    assert 3 <= len(search_server.searches) <= 3 + 1
    assert result["usage"]["search_calls"] == len(search_server.searches)


def test_a_search_budget_with_workers_at_once_overshoots_only_by_those_in_flight(
    chat_server, search_server, home, capsys
):
    done = here(capsys, "run", QUESTION, "--max-searches", "3", "--json", "r.json")
    assert done.returncode == 0, done.stderr
    assert record(home / "r.json")["stop_reason"] == "budget"
    # 3 workers start together, each sending its first cycle's 2 queries: 6 in flight at most
    assert len(search_server.searches) <= 3 * 2


def test_a_config_file_is_read(chat_server, search_server, home, capsys):
    (home / "research.toml").write_text(
        "max_iterations = 1\n"
        '[prices."stand-in-model"]\ninput_per_million = 1000\noutput_per_million = 1000\n'
    )
    done = here(capsys, "run", QUESTION, "--config", "research.toml", "--json", "r.json")
    assert done.returncode == 0, done.stderr
    result = record(home / "r.json")
    assert result["iteration"] == 1 and chat_server.brain.calls["GapAnalysis"] == 0
    spent = result["usage"]["input_tokens"] + result["usage"]["output_tokens"]
    assert result["cost_usd"] == pytest.approx(spent * 1000 / 1e6)  # priced from the file
    assert f"cost: ${result['cost_usd']:.4f}" in done.stderr


def test_precedence_flag_then_set_then_environment_then_file(home, monkeypatch, capsys):
    (home / "deep-research.toml").write_text(
        "max_workers = 2\nmax_results = 7\nmax_queries = 4\nmodel = 'from-file'\n"
        '[prices."from-file"]\ninput_per_million = 1.5\noutput_per_million = 3\n'
    )
    monkeypatch.setenv("DEEP_RESEARCH_MAX_WORKERS", "3")
    monkeypatch.setenv("DEEP_RESEARCH_MAX_RESULTS", "8")
    monkeypatch.setenv("DEEP_RESEARCH_MAX_QUERIES", "6")
    monkeypatch.delenv("DEEP_RESEARCH_MODEL", raising=False)
    done = here(
        capsys, "config", "--json", "--max-workers", "5", "--set", "max_workers=4", "--set",
        "max_results=9",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    settings = shown["settings"]
    assert settings["max_workers"] == {"value": 5, "from": "--max-workers"}
    assert settings["max_results"] == {"value": 9, "from": "--set max_results"}
    assert settings["max_queries"] == {"value": 6, "from": "$DEEP_RESEARCH_MAX_QUERIES"}
    assert settings["model"]["value"] == "from-file"
    assert settings["model"]["from"].startswith("model in ")
    assert settings["prices"]["value"]["from-file"]["input_per_million"] == 1.5
    assert settings["quality_threshold"] == {"value": 80.0, "from": "default"}
    assert shown["config_file"].endswith("deep-research.toml")


def test_config_names_the_adapted_setting_and_masks_secrets(chat_server, home, monkeypatch, capsys):
    from conftest import SECRET_MODEL_KEY

    store = "postgresql://runner:hunter22secret@db.example:5432/research"
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", store)
    monkeypatch.setenv("SEARXNG_URL", "http://search:sx-pass-41@127.0.0.1:8888")
    done = here(capsys, "config", "--max-iterations", "1")
    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines() if line.strip()}
    assert lines["min_iterations"].split()[1] == "1" and "adapted" in lines["min_iterations"]
    assert "--max-iterations" in lines["max_iterations"]
    assert "hunter22secret" not in done.stdout and "runner:***@db.example" in done.stdout
    assert SECRET_MODEL_KEY not in done.stdout and "set (hidden)" in done.stdout
    assert "sx-pass-41" not in done.stdout and "search:***@127.0.0.1:8888" in done.stdout


@pytest.mark.parametrize(
    ("args", "files", "message"),
    [
        (["--min-iterations", "4", "--max-iterations", "3"], {}, "--min-iterations (4) is above"),
        (["--set", "max_iterations"], {}, "--set max_iterations: write it as KEY=VALUE"),
        (["--set", "prices={bad json"], {}, "--set prices: input should be a valid dictionary"),
        (["--max-cost", "1"], {}, "--max-cost needs prices for every model used"),
        (["--config", "nope.toml"], {}, "cannot read the config file nope.toml"),
        (["--config", "bad.toml"], {"bad.toml": "max_iterations = "}, "is not valid TOML"),
        (["--config", "c.toml"], {"c.toml": "max_iteration = 1\n"}, "did you mean max_iterations"),
        (
            ["--config", "c.toml", "--max-iterations", "3"],
            {"c.toml": "min_iterations = 4\n"},
            "min_iterations in c.toml (4) is above --max-iterations (3)",
        ),
    ],
)
def test_contradicting_or_bad_settings_are_refused_by_the_names_given(
    chat_server, search_server, home, monkeypatch, capsys, args, files, message
):
    from deep_research.cli.main import (
        main,  # in-process, to keep the suite fast: the same parser and checks
    )

    monkeypatch.chdir(home)
    for name, text in files.items():
        (home / name).write_text(text)
    assert main(["run", QUESTION, *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err, err
    assert "Traceback" not in err and "settings:" not in err
    assert chat_server.requests == [] and search_server.searches == []


def test_a_contradiction_through_the_entry_point(chat_server, search_server, home):
    done = cli("run", QUESTION, "--min-iterations", "4", "--set", "max_iterations=3", cwd=home)
    assert done.returncode == 2
    assert done.stderr == "error: --min-iterations (4) is above --set max_iterations (3)\n"
    assert chat_server.requests == []


def test_every_search_failing_exits_3_with_the_report_written(
    chat_server, search_server, home, capsys
):
    search_server.fail_all = True
    no_retries = ("--set", "search_retries=0")  # retries are tested elsewhere; here, the end
    done = here(capsys, "run", QUESTION, *no_retries, "--output", "r.md", "--json", "r.json")
    assert done.returncode == 3, done.stderr
    assert record(home / "r.json")["stop_reason"] == "no_evidence"
    assert (home / "r.md").read_text().startswith("#")
    assert "found no evidence" in done.stderr


def test_a_budget_spent_before_any_evidence_exits_4(chat_server, search_server, home, capsys):
    done = here(capsys, "run", QUESTION, "--max-tokens", "1", "--output", "r.md")
    assert done.returncode == 4, done.stderr
    assert search_server.searches == [] and (home / "r.md").exists()


def test_an_unreachable_postgres_store_exits_2_before_any_model_call(
    chat_server, search_server, home, capsys, caplog
):
    store = "postgresql://u:pw-9c1f@127.0.0.1:1/db"
    done = here(capsys, "run", QUESTION, "--checkpoint-db", store)
    assert done.returncode == 2
    assert not caplog.records  # a library's log line would be a second line on stderr
    printed = done.stdout + done.stderr
    assert "pw-9c1f" not in printed and "postgresql://u:***@127.0.0.1:1/db" in printed
    assert "saved" not in printed and "resume" not in printed
    assert len(done.stderr.strip().splitlines()) == 1  # one sentence
    assert chat_server.requests == [] and search_server.searches == []


def test_an_unusable_sqlite_path_exits_2_and_says_nothing_was_saved(
    chat_server, search_server, home, capsys
):
    from deep_research.cli.main import main

    (home / "a-file").write_text("")
    assert main(["run", QUESTION, "--checkpoint-db", str(home / "a-file" / "c.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "cannot open the checkpoint store" in err and "saved" not in err
    assert chat_server.requests == []


def test_a_missing_postgres_extra_exits_2_naming_the_extra(
    chat_server, search_server, home, tmp_path
):
    blocked = tmp_path / "blocked"
    (blocked / "psycopg").mkdir(parents=True)  # shadows the installed psycopg
    (blocked / "psycopg" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'psycopg'\", name='psycopg')\n"
    )
    done = cli(
        "run", QUESTION, "--checkpoint-db", "postgresql://u:pw-3e@127.0.0.1:1/db", cwd=home,
        env={"PYTHONPATH": f"{blocked}{os.pathsep}{ROOT}"},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert (
        "needs the PostgreSQL extra" in done.stderr
        and 'pip install -e ".[postgres]"' in done.stderr
    )
    assert "saved" not in done.stderr and "pw-3e" not in done.stderr
    assert chat_server.requests == []


def test_an_unreachable_model_server_is_named_without_its_credentials(
    search_server, home, monkeypatch, capsys
):
    from deep_research.cli.main import main

    monkeypatch.setenv("OPENAI_BASE_URL", "http://alice:pw-77@127.0.0.1:1/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert main(["run", QUESTION]) == 2
    err = capsys.readouterr().err
    assert "the model server at http://alice:***@127.0.0.1:1/v1 cannot be reached" in err
    assert "pw-77" not in err and search_server.searches == []
    assert not (home / "store").exists()  # refused before the store was made


def test_read_only_commands_never_create_a_store(chat_server, home, capsys):
    from deep_research.cli.main import main

    store = home / "typo" / "x.sqlite"
    done = cli("threads", "--checkpoint-db", str(store), cwd=home)
    assert done.returncode == 2 and "no checkpoint store at" in done.stderr
    for args in (["history", "t1"], ["resume", "t1"]):
        assert main([*args, "--checkpoint-db", str(store)]) == 2
        assert "no checkpoint store at" in capsys.readouterr().err
    assert not (home / "typo").exists()


def test_threads_limit(chat_server, search_server, home, monkeypatch, capsys):
    from deep_research.cli.main import main

    monkeypatch.chdir(home)
    for thread in ("one", "two"):
        assert (
            main(["run", QUESTION, "--max-iterations", "1", "--thread-id", thread, "--quiet"]) == 0
        )
    capsys.readouterr()

    def listed(*args: str) -> list[str]:
        assert main(["threads", *args]) == 0
        return capsys.readouterr().out.splitlines()[1:]

    assert len(listed("--limit", "0")) == 2  # 0: all of them
    assert len(listed("--limit", "1")) == 1
    with pytest.raises(SystemExit):
        main(["threads", "--limit", "-1"])


def test_help_imports_nothing_heavy():
    probe = (
        "import sys\n"
        "from deep_research.cli.main import build_parser\n"
        "build_parser().format_help()\n"
        "heavy = [m for m in ('langgraph', 'langchain_openai', 'rich', 'deep_research.graph',"
        " 'openai', 'deep_research.evaluation.judge', 'deep_research.cli.evaluate')"
        " if m in sys.modules]\n"
        "print(heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
    helped = cli("run", "--help", cwd=ROOT)
    assert helped.returncode == 0
    for flag in ("--max-cost", "--max-tokens", "--max-searches", "--set", "--config"):
        assert flag in helped.stdout


def test_every_flag_has_help():
    from deep_research.cli.main import build_parser

    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    for name, sub in subparsers.choices.items():
        for action in sub._actions:
            assert action.help, f"{name} {action.option_strings or action.dest} has no help"


def _read_until(master: int, wanted: bytes, seen: bytearray, seconds: float = 90) -> None:
    """Read the terminal's output into `seen` until `wanted` appears (or the child closes it)."""
    import select
    import time

    deadline = time.monotonic() + seconds
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                return
            if not chunk:
                return
            seen += chunk


def test_log_lines_are_redacted():
    probe = (
        "import logging\n"
        "from cli.main import _log_to_stderr_redacted\n"
        "_log_to_stderr_redacted()\n"
        "logging.getLogger('psycopg').warning('lost postgresql://u:pw-5a@h/db')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "postgresql://u:***@h/db" in done.stderr and "pw-5a" not in done.stderr


POSTGRES_URL = os.environ.get("DEEP_RESEARCH_TEST_POSTGRES_URL")


@pytest.mark.skipif(not POSTGRES_URL, reason="needs DEEP_RESEARCH_TEST_POSTGRES_URL (.ci/run)")
def test_read_only_commands_never_create_postgres_tables(home, capsys):
    import uuid

    import psycopg

    schema = f"empty_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in POSTGRES_URL else "?"
    url = f"{POSTGRES_URL}{separator}options=-csearch_path%3D{schema}"
    try:
        for args in (["threads"], ["history", "t1"]):
            done = here(capsys, *args, "--checkpoint-db", url)
            assert done.returncode == 2 and "no checkpoint store in" in done.stderr
        with psycopg.connect(POSTGRES_URL) as connection:
            tables = connection.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = %s", (schema,)
            ).fetchone()
        assert tables == (0,)
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA {schema} CASCADE")


def test_eval_takes_the_same_settings_and_refuses_plan_approval(home, monkeypatch, capsys):
    from deep_research.cli.main import main

    monkeypatch.chdir(home)
    (home / "tasks.jsonl").write_text('{"id": 1, "prompt": "q"}\n')
    with pytest.raises(SystemExit) as refused:  # eval does not offer the flag at all
        main(["eval", "tasks.jsonl", "--out-dir", "out", "--approve-plan"])
    assert refused.value.code == 2
    assert "unrecognized arguments: --approve-plan" in capsys.readouterr().err
    assert main(["eval", "tasks.jsonl", "--out-dir", "out", "--set", "approve_plan=true"]) == 2
    assert "eval runs unattended" in capsys.readouterr().err
    assert main(["eval", "tasks.jsonl", "--out-dir", "out", "--set", "max_iterations=0"]) == 2
    assert "--set max_iterations: input should be greater than" in capsys.readouterr().err
    assert not (home / "out").exists()


EXITING = """
import atexit, sys
from langchain_core.runnables import RunnableLambda
from deep_research.cli import main as command

def work(argv=None):
    atexit.register(lambda: open(sys.argv[1], "w").write("closed"))
    RunnableLambda(lambda x: x + 1).invoke(1)  # traced when LANGSMITH_TRACING is on
    print("said", end="")  # still in stdout's buffer (a pipe) when the command returns
    return 3

command.main = work
command.entry_point()
"""


def test_the_fast_exit_still_writes_what_exit_would(tmp_path):
    """The console script ends without the interpreter's teardown, yet loses nothing exit
    writes: its exit code, buffered output, `atexit` handlers, and the traces LangSmith queued
    (sent to a loopback stand-in here; a background thread sends them only after the main
    thread ends, which `os._exit` never lets happen)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    posted: list[str] = []

    class LangSmith(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            self._answer()

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            posted.append(self.path)
            self._answer()

        def _answer(self):
            body = b"{}"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), LangSmith)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        done = subprocess.run(
            [sys.executable, "-c", EXITING, str(tmp_path / "closed")],
            env={
                **os.environ,
                "PYTHONPATH": str(ROOT),
                "LANGSMITH_TRACING": "true",
                "LANGSMITH_ENDPOINT": f"http://127.0.0.1:{server.server_address[1]}",
                "LANGSMITH_API_KEY": "not-a-key",
            },
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.shutdown()
    assert done.returncode == 3, done.stderr
    assert done.stdout == "said"
    assert (tmp_path / "closed").read_text() == "closed"
    assert any("/runs" in path for path in posted), posted
