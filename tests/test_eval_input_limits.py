"""`eval` input that used to fail after calls were paid for (exit 1, "run the same command again
to resume", which could never work) is refused first, naming the line or file (issue 28,
item 7). Commands run in process against the stand-ins."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from deep_research.cli.main import main

FIXTURE = Path(__file__).parent / "fixtures" / "bench"
QUESTION = "Compare zstd and xz"


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DEEP_RESEARCH_CONFIG", raising=False)
    return tmp_path


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert "Traceback" not in err and len(lines) == 1, err
    return lines[0]


def run_eval(judge_server, *args: str) -> int:
    judge = ["--judge-model", "judge-model", "--judge-base-url", f"{judge_server.url}/v1"]
    rounds = ["--max-iterations", "1", "--min-iterations", "1", "--fact-mode", "none"]
    return main(["eval", *args, "--out-dir", "out", *judge, *rounds])


@pytest.mark.parametrize(
    ("bad_id", "said"),
    [
        ("a\x00b", "line 2: id: an id may not hold a control character"),
        (
            "x" * 5000,
            "line 2: id: an id is at most 200 bytes (it names a folder); this one is 5000",
        ),
        ("日" * 100, "line 2: id: an id is at most 200 bytes (it names a folder); this one is 300"),
    ],
    ids=["nul", "5000-characters", "300-bytes"],
)
def test_a_task_id_no_folder_can_be_named_by_is_refused_before_any_call(
    bad_id, said, chat_server, search_server, judge_server, here, capsys
):
    tasks = [{"id": "fine", "prompt": QUESTION}, {"id": bad_id, "prompt": "History of xz"}]
    (here / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    assert run_eval(judge_server, "tasks.jsonl") == 2
    line = one_line_error(capsys.readouterr().err)
    assert line.startswith(f"error: tasks.jsonl {said}"), line
    assert chat_server.chat_requests == [] and judge_server.requests == []
    assert search_server.searches == []


def test_ids_that_name_a_folder_are_accepted_first():
    """The check is tried on good ids first: numbers, names, CJK, exactly 200 bytes."""
    from deep_research.evaluation.tasks import EvalTask

    for good in (7, "task-7", "压缩日志", "x" * 200, "é" * 100):
        assert EvalTask(id=good, prompt=QUESTION, language="en").id == good


def test_a_task_line_nested_too_deep_is_refused_naming_the_line(judge_server, here, capsys):
    (here / "tasks.jsonl").write_text(
        '{"id": 1, "prompt": "' + QUESTION + '", "topic": ' + "[" * 200_000 + "]" * 200_000 + "}\n"
    )
    assert run_eval(judge_server, "tasks.jsonl") == 2
    line = one_line_error(capsys.readouterr().err)
    assert line == "error: tasks.jsonl line 1: JSON nested too deep to read", line
    assert judge_server.requests == []


@pytest.mark.parametrize(
    "prompt_file", ["prompt/score_prompt_en.py", "prompt/clean_prompt.py", "utils/extract.py"]
)
def test_a_bench_prompt_file_nested_200000_deep_is_refused_naming_it(
    prompt_file, chat_server, search_server, judge_server, here, capsys
):
    """Python's parser runs out of memory on it (MemoryError); the FACT prompts were read only
    after the first task's research was paid for."""
    clone = here / "bench"
    shutil.copytree(FIXTURE, clone)
    (clone / prompt_file).write_text("x = " + "-" * 200_000 + "1\n", encoding="utf-8")
    query = clone / "data" / "prompt_data" / "query.jsonl"
    assert run_eval(judge_server, "--bench-dir", str(clone), "--limit", "1") == 2
    line = one_line_error(capsys.readouterr().err)
    assert line == f"error: cannot read {clone / prompt_file}: nested too deep to parse", line
    assert chat_server.chat_requests == [] and judge_server.requests == []
    assert search_server.searches == [] and query.exists()
