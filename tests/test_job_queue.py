"""Runs on the job queue: `batch --queue` and `run --queue` hand them to `deep-research worker`
processes (procrastinate in PostgreSQL); endpoint limits are shared through Redis.

PostgreSQL and Redis are started from the system's binaries (tests/services.py); the model and
search stand-ins run in this process and keep every request, so a request answered twice is
seen. Each worker has its own model key, so the stand-in knows which worker sent what.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from deep_research.cli.main import main

from stand_ins.loopback import Reply

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = [f"Topic {n}: how do zstd and xz compare on log set {n}" for n in range(1, 5)]
MAX_SEARCHES = 4
SETTINGS = ["--max-iterations", "1", "--min-iterations", "1", "--max-workers", "1"]
SETTINGS += ["--max-searches", str(MAX_SEARCHES)]


def body_key(request: dict) -> str:
    return json.dumps(request["body"], sort_keys=True)


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "deep_research.cli", *args]


def start_worker(number: int, env: dict, log: Path) -> subprocess.Popen:
    worker_env = {**env, "OPENAI_API_KEY": f"sk-worker-{number}"}
    command = cli("worker", "--concurrency", "1", "--stalled-after", "5")
    return subprocess.Popen(command, env=worker_env, cwd=ROOT, stderr=log.open("w"))


def job_count(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as connection:
        query = "SELECT count(*) FROM procrastinate_jobs WHERE task_name = 'deep_research.research'"
        return connection.execute(query).fetchone()[0]  # (the workers' watch ticks apart)


def question_of(request: dict) -> str | None:
    text = json.dumps(request["body"])
    return next((q for q in QUESTIONS if q in text), None)


@pytest.fixture
def queue_env(chat_server, search_server, empty_postgres, redis_url, monkeypatch, tmp_path):
    """The environment of the workers and commands; commands run in-process get it too (in a
    folder of their own: no `.env` or config file around)."""
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", empty_postgres)
    monkeypatch.setenv("DEEP_RESEARCH_REDIS_URL", redis_url)
    monkeypatch.setenv("DEEP_RESEARCH_ENDPOINT_MAX_CONCURRENT_MODEL_CALLS", "4")
    monkeypatch.chdir(tmp_path)
    return dict(os.environ)


def test_a_killed_workers_run_is_finished_by_another_and_nothing_answered_is_sent_twice(
    chat_server, search_server, queue_env, empty_postgres, tmp_path
):
    questions = tmp_path / "questions.txt"
    questions.write_text("\n".join(QUESTIONS) + "\n")
    out = tmp_path / "reports"
    sender = threading.local()
    answer_model = chat_server.handle

    def handle(path, body, headers):  # which worker sent it: its own key
        sender.key = headers.get("authorization", "")
        return answer_model(path, body, headers)

    chat_server.handle = handle
    hold, held, held_by, held_body = threading.Event(), threading.Event(), [], []

    def hold_first_findings(number, body):
        if "WorkerFindings" in json.dumps(body) and not held.is_set():
            held_by.append(sender.key.removeprefix("Bearer "))
            held_body.append(body)
            held.set()
            hold.wait(60)  # being answered when its worker is killed
            return Reply(503, {"error": {"message": "gone"}})
        return None

    chat_server.fault = hold_first_findings
    chat_server.latency = 0.05
    workers = {
        f"sk-worker-{n}": start_worker(n, queue_env, tmp_path / f"worker-{n}.log") for n in range(2)
    }  # both at once, on an empty store
    submit = ["batch", str(questions), "--out-dir", str(out), "--queue", *SETTINGS, "--quiet"]
    try:
        batch = subprocess.Popen(
            cli(*submit), env=queue_env, cwd=ROOT, stderr=subprocess.PIPE, text=True
        )
        assert held.wait(60), "no worker reached a report call"
        killed = held_by[0]
        os.kill(workers[killed].pid, signal.SIGKILL)
        workers[killed].wait(10)
        killed_at = len(chat_server.requests)
        hold.set()
        _, errors = batch.communicate(timeout=120)
        assert batch.returncode == 0, errors
        jobs = job_count(empty_postgres)
        assert main(submit) == 0  # submitted again, in-process
        assert job_count(empty_postgres) == jobs == len(QUESTIONS)  # which added nothing
    finally:
        hold.set()
        for process in workers.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in workers.values():
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()

    rows = [json.loads(line) for line in (out / "summary.jsonl").read_text().splitlines()]
    assert [row["status"] for row in rows] == ["done"] * len(QUESTIONS)
    assert len(list(out.glob("*.md"))) == len(QUESTIONS)
    moved = question_of({"body": held_body[0]})
    after = [
        r
        for r in chat_server.requests[killed_at:]
        if question_of(r) == moved and r["status"] == 200
    ]
    assert after, "the killed worker's run went on nowhere"
    assert all(r["headers"]["authorization"] != f"Bearer {killed}" for r in after)
    answered = [body_key(r) for r in chat_server.requests if r["status"] == 200]
    assert len(answered) == len(set(answered))  # no answered model request was sent twice
    searches = [r for r in search_server.requests if "query" in r["body"]]  # not key checks
    searched = [body_key(r) for r in searches]
    assert len(searched) == len(set(searched))  # nor any search
    for row in rows:
        sent = sum(1 for r in searches if r["body"]["query"].startswith(row["question"]))
        assert row["search_calls"] == sent <= MAX_SEARCHES, row  # each budget held, exactly
    logs = "".join((tmp_path / f"worker-{n}.log").read_text() for n in range(2))
    assert "queued again" in logs and "resumed" in logs


def test_run_queue_no_wait_then_collect(chat_server, search_server, queue_env, tmp_path, capsys):
    worker = start_worker(0, queue_env, tmp_path / "worker.log")
    ask = ["run", "Compare zstd and xz", "--queue", "--thread-id", "q-one", *SETTINGS]
    try:
        assert main([*ask, "--no-wait"]) == 0  # in-process; collected below by the command
        said = capsys.readouterr().err
        assert "thread: q-one" in said and "queued" in said
        collected = subprocess.run(
            cli(*ask), env=queue_env, cwd=ROOT, capture_output=True, text=True, timeout=90
        )
        assert collected.returncode == 0, collected.stderr
        assert "## Sources" in collected.stdout
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(15)
    assert "q-one: started" in (tmp_path / "worker.log").read_text()


def test_a_queue_needs_a_postgresql_store(tmp_path, capsys):
    code = main(["worker", "--checkpoint-db", str(tmp_path / "c.sqlite")])
    assert code == 2
    assert "the job queue lives in PostgreSQL" in capsys.readouterr().err
