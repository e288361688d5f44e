"""`deep-research batch`: many questions, N at a time, resumable by running the same command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from deep_research.cli.batch_file import read_batch, thread_id_for
from deep_research.cli.main import main
from deep_research.service.preflight import BadInput

from checkpoint_probe import TASK_RESULT, saved_writes, wait_until
from stand_ins.loopback import Reply

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = [f"Question {n}: how do zstd and xz compare on log set {n}" for n in range(1, 6)]


def body_key(request: dict) -> str:
    return json.dumps(request["body"], sort_keys=True)


def batch_args(questions: Path, out: Path, db: str, *extra: str) -> list[str]:
    """`deep-research batch`'s arguments: three questions at a time, one round each."""
    return [
        "batch",
        str(questions),
        "--out-dir",
        str(out),
        "--concurrency",
        "3",
        "--checkpoint-db",
        db,
        "--max-iterations",
        "1",
        "--min-iterations",
        "1",
        *extra,
    ]


def batch_command(questions: Path, out: Path, db: str, *extra: str) -> list[str]:
    """The batch as a process runs it (`python -m deep_research.cli batch ...`)."""
    return [sys.executable, "-m", "deep_research.cli", *batch_args(questions, out, db, *extra)]


POSTGRES_URL = os.environ.get("DEEP_RESEARCH_TEST_POSTGRES_URL")
STORES = [
    "sqlite",
    pytest.param(
        "postgres",
        marks=pytest.mark.skipif(
            not POSTGRES_URL, reason="no PostgreSQL server: set DEEP_RESEARCH_TEST_POSTGRES_URL"
        ),
    ),
]


@pytest.mark.parametrize("store", STORES)
def test_kill_9_midway_then_the_same_command_finishes_repeating_only_calls_in_flight(
    chat_server, search_server, tmp_path, store, capsys
):
    """The kill is a process's; the same command run again (here, in this process: the same
    code, without a second process's start-up) finishes the batch and repeats nothing."""
    questions = tmp_path / "questions.txt"
    questions.write_text("# five questions\n" + "\n".join(QUESTIONS) + "\n\n", encoding="utf-8")
    out = tmp_path / "reports"
    db = str(tmp_path / "batch.sqlite") if store == "sqlite" else POSTGRES_URL
    frozen, hold = threading.Event(), threading.Event()
    answered = []

    def freeze_after_40_answers(number, body):
        if frozen.is_set() or len(answered) >= 40:
            frozen.set()
            hold.wait(60)  # in flight at the kill: never answered to the killed process
            return Reply(503, {"error": {"message": "gone"}})
        answered.append(number)
        return None

    chat_server.fault = freeze_after_40_answers
    command = batch_command(questions, out, db)
    threads = [thread_id_for(questions, n, q) for n, q in zip(range(2, 7), QUESTIONS, strict=True)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert frozen.wait(90), "the batch never got 40 model calls in"
        wait_until(  # every answered call is saved (a task result) before the kill
            lambda: saved_writes(db, TASK_RESULT, threads) >= len(answered),
            f"the {len(answered)} answered model calls saved",
        )
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
        before = [r for r in chat_server.chat_requests if r["status"] == 200]
        finished_before = len(list(out.glob("*.md")))
        plans_before = chat_server.brain.calls["TaskPlan"]
    finally:
        hold.set()
        if process.poll() is None:
            process.kill()
    chat_server.fault = lambda number, body: None

    capsys.readouterr()
    assert main(batch_args(questions, out, db)) == 0, capsys.readouterr().err

    after = [r for r in chat_server.chat_requests if r["status"] == 200][len(before) :]
    held = [r for r in chat_server.chat_requests if r["status"] == 503]
    repeated = {body_key(r) for r in before} & {body_key(r) for r in after}
    assert repeated == set()  # nothing answered before the kill was asked again
    assert held  # calls were in flight at the kill; they (and what follows) were sent again
    assert {body_key(r) for r in held} <= {body_key(r) for r in after}
    reports = sorted(out.glob("*.md"))
    assert len(reports) == 5 and 0 < finished_before < 5
    assert all("## Sources" in r.read_text(encoding="utf-8") for r in reports)
    assert chat_server.brain.calls["TaskPlan"] - plans_before == 5 - plans_before
    rows = [json.loads(line) for line in (out / "summary.jsonl").read_text().splitlines()]
    assert [r["line"] for r in rows] == [2, 3, 4, 5, 6]
    assert {r["status"] for r in rows} == {"done"}
    assert {r["thread_id"] for r in rows} == {
        thread_id_for(questions, n, q) for n, q in zip(range(2, 7), QUESTIONS, strict=True)
    }
    assert all(r["stop_reason"] == "max_iterations" and r["rounds"] == 1 for r in rows)
    assert all(r["input_tokens"] > 0 and r["report"].endswith(".md") for r in rows)

    assert main(batch_args(questions, out, db)) == 0, capsys.readouterr().err
    assert chat_server.brain.calls["TaskPlan"] == 5  # a finished batch is all skipped


def test_jsonl_lines_carry_their_own_settings(chat_server, search_server, tmp_path, capsys):
    questions = tmp_path / "questions.jsonl"
    lines = [
        {"question": "Compare zstd and xz", "settings": {"max_subtasks": 1}},
        {"question": "Compare gzip and brotli"},
    ]
    questions.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    out, db = tmp_path / "reports", str(tmp_path / "batch.sqlite")
    assert main(batch_args(questions, out, db, "--quiet")) == 0, capsys.readouterr().err
    rows = [json.loads(line) for line in (out / "summary.jsonl").read_text().splitlines()]
    assert [r["question"] for r in rows] == ["Compare zstd and xz", "Compare gzip and brotli"]
    workers = [r for r in chat_server.chat_requests if "WorkerFindings" in json.dumps(r["body"])]
    assert len(workers) == 1 + 3  # one subtask for the first question, three for the second


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "holds no questions"),
        ('{"question": 3}', 'line 1: expected an object with a "question" string'),
        ('{"question": "q", "colour": 1}', "line 1: unknown keys ['colour']"),
        ("ok\n{not json", "line 2: not valid JSON"),
    ],
)
def test_a_bad_batch_file_names_the_line(tmp_path, text, message):
    path = tmp_path / "q.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BadInput, match=message.replace("[", r"\[").replace("]", r"\]")):
        read_batch(path)


def test_a_bad_setting_on_a_line_exits_2_before_any_call(
    chat_server, search_server, tmp_path, capsys
):
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "q", "settings": {"max_workers": 0}}\n', encoding="utf-8")
    assert main(batch_args(questions, tmp_path / "out", str(tmp_path / "b.sqlite"))) == 2
    assert "line 1: invalid setting max_workers" in capsys.readouterr().err
    assert chat_server.chat_requests == []


def test_a_batch_row_follows_its_runs_events():
    from deep_research.cli.batch_progress import BatchRow
    from deep_research.tools.events import (
        GapsAnalyzed,
        PlanMade,
        QualityScored,
        ReportWritten,
        WorkerDone,
    )

    row = BatchRow(3, "Compare zstd and xz")
    subtasks = [{"id": n, "description": "d", "complexity": "simple"} for n in (1, 2)]
    row.apply(PlanMade(subtasks=subtasks, query_type="breadth_first"))
    budget = dict(queries_used=1, max_queries=3, cycles_used=1, max_cycles=1, description="d")
    row.apply(WorkerDone(round=1, subtask_id=1, status="ok", findings=1, sources=1, **budget))
    assert (row.state, row.round, row.workers_done, row.workers) == ("researching", 1, 1, 2)
    row.apply(ReportWritten(round=1, chars=10))
    row.apply(QualityScored(round=1, score=72, issues=[]))
    row.apply(GapsAnalyzed(round=1, gaps=["g"], tasks=["t"]))
    assert (row.state, row.round, row.workers, row.score) == ("researching", 2, 1, 72)
    assert row.text().startswith("[3] Compare zstd and xz: researching, round 2, workers 0/1")


def test_the_search_provider_is_probed_once_per_batch_not_once_per_line(
    chat_server, search_server, tmp_path
):
    from deep_research.cli.batch import plan_batch

    questions = tmp_path / "questions.txt"
    questions.write_text("One?\nTwo?\nThree?\n", encoding="utf-8")
    flags = {"search_backend": "tavily"}
    plan = plan_batch(read_batch(questions), flags, tmp_path / "out", str(tmp_path / "db"), 2)
    assert len(plan.questions) == 3
    assert [r["path"] for r in search_server.requests] == ["/usage"]  # the free key check, once
