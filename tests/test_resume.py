"""Durable runs: a run killed by SIGKILL, or whose worker raised, resumes paying nothing twice.

Runs against SQLite always, and against PostgreSQL where `DEEP_RESEARCH_TEST_POSTGRES_URL` names
a server (`.ci/run` starts one; in CI the PostgreSQL cases must run, elsewhere they skip).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

from deep_research.tools.checkpoints import open_checkpointer

from checkpoint_probe import saved_writes, wait_until
from stand_ins.faults import WriterFails
from stand_ins.loopback import Reply

ROOT = Path(__file__).resolve().parents[1]
POSTGRES_URL = os.environ.get("DEEP_RESEARCH_TEST_POSTGRES_URL")
ONE_ROUND = {  # a run of one round whose failed steps are not retried
    "question": "Compare zstd and xz",
    "settings": {"max_iterations": 1, "min_iterations": 1, "model_retries": 0},
}


def _postgres_param():
    if POSTGRES_URL:
        return pytest.param(POSTGRES_URL, id="postgres")
    if os.environ.get("CI"):
        return pytest.param(
            None,
            id="postgres",
            marks=pytest.mark.xfail(
                reason="CI must provide DEEP_RESEARCH_TEST_POSTGRES_URL", strict=True, run=False
            ),
        )
    return pytest.param(
        None,
        id="postgres",
        marks=pytest.mark.skip(
            reason="no PostgreSQL server: set DEEP_RESEARCH_TEST_POSTGRES_URL (.ci/run does)"
        ),
    )


@pytest.fixture(params=["sqlite", _postgres_param()])
def checkpoint_db(request, tmp_path):
    return str(tmp_path / "checkpoints.sqlite") if request.param == "sqlite" else request.param


def body_key(request):
    return json.dumps(request["body"], sort_keys=True)


def cli(*args, env):
    return [sys.executable, "-m", "deep_research.cli", *args], {"cwd": ROOT, "env": env}


def test_kill_9_mid_fan_out_then_resume_repeats_no_answered_request(
    chat_server, search_server, checkpoint_db, tmp_path, monkeypatch, capsys
):
    """The kill is a process's; the resume runs in this process (the same `main`, without a
    second process's start-up)."""
    from deep_research.cli.main import main

    thread = f"kill-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "DEEP_RESEARCH_CHECKPOINT_DB": checkpoint_db}
    hold, held = threading.Event(), threading.Event()
    findings_seen = []

    def block_third_worker_report(number, body):
        if "WorkerFindings" in json.dumps(body):
            findings_seen.append(number)
            if len(findings_seen) == 3:
                held.set()
                hold.wait(60)
                return Reply(503, {"error": {"message": "gone"}})
        return None

    chat_server.fault = block_third_worker_report
    search_server.latency = 0.05
    command, options = cli(
        "run",
        "Compare zstd and xz",
        "--thread-id",
        thread,
        "--max-workers",
        "1",
        "--min-iterations",
        "1",
        "--max-iterations",
        "1",
        "--quiet",
        env=env,
    )
    process = subprocess.Popen(command, **options, stdout=subprocess.DEVNULL)
    try:
        assert held.wait(60), "the run never reached the third worker's report"
        wait_until(  # the two finished workers' results are saved; only the held one is open
            lambda: saved_writes(checkpoint_db, "worker_results", [thread], latest_only=True) >= 2,
            "the first two workers' results saved",
        )
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
        answered_chat = list(chat_server.chat_requests)
        answered_search = list(search_server.searches)  # free key probes (`/usage`) aside
        chat_server.fault = lambda number, body: None

        monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", checkpoint_db)
        resumed = main(["resume", thread, "--json", str(tmp_path / "r.json"), "--quiet"])
        assert resumed == 0, capsys.readouterr().err
    finally:
        hold.set()
        if process.poll() is None:
            process.kill()

    after_chat = [r for r in chat_server.chat_requests[len(answered_chat) :] if r["status"] == 200]
    after_search = search_server.searches[len(answered_search) :]
    repeated = {body_key(r) for r in answered_chat} & {body_key(r) for r in after_chat}
    repeated |= {body_key(r) for r in answered_search} & {body_key(r) for r in after_search}
    assert repeated == set()
    assert chat_server.brain.calls["WorkerFindings"] == 3  # all three reports, each answered once
    assert len(after_search) == 0  # every search had finished and was checkpointed
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["stop_reason"] == "max_iterations" and record["sources"]
    assert "## Sources" in record["report"]
    print(
        f"\nmodel calls before kill: {len(answered_chat)}, after resume: {len(after_chat)}, "
        f"repeated: {len(repeated)}"
    )


def test_a_worker_that_raises_is_the_only_one_repeated_on_resume(
    chat_server, search_server, checkpoint_db, monkeypatch
):
    import deep_research.graph.worker as worker_module
    from deep_research.graph import build_graph

    real_decide = worker_module.decide
    failures = {"left": 1}
    store: dict = {}  # the run's checkpointer, once the scenario has opened it
    config = {"configurable": {"thread_id": f"raise-{uuid.uuid4().hex[:8]}"}}

    async def siblings_saved() -> bool:
        latest = await store["saver"].aget_tuple(config)
        writes = latest.pending_writes if latest else []
        return sum(channel == "worker_results" for _, channel, _ in writes or []) >= 2

    async def decide_or_raise(state, *, runs):
        if state["subtask"].id == 2 and failures["left"]:
            async with asyncio.timeout(60):  # the siblings finish, and are saved, first
                while not await siblings_saved():
                    await asyncio.sleep(0.02)
            failures["left"] -= 1
            raise RuntimeError("worker 2 broke")
        return await real_decide(state, runs=runs)

    monkeypatch.setattr(worker_module, "decide", decide_or_raise)
    question = ONE_ROUND

    async def scenario():
        async with open_checkpointer(checkpoint_db) as saver:
            store["saver"] = saver
            graph = build_graph(checkpointer=saver)
            with pytest.raises(RuntimeError, match="worker 2 broke"):
                await graph.ainvoke(question, config)
            before = len(chat_server.chat_requests), len(search_server.requests)
            result = await graph.ainvoke(None, config)
            return before, result

    (chat_before, search_before), result = asyncio.run(scenario())
    assert result["stop_reason"] == "max_iterations" and result["sources"]
    resumed_chat = [r["body"] for r in chat_server.chat_requests[chat_before:]]
    resumed_search = [r["body"]["query"] for r in search_server.requests[search_before:]]
    assert resumed_search == []  # worker 2 had searched before it broke: not searched again
    findings = [b for b in resumed_chat if "WorkerFindings" in json.dumps(b)]
    assert len(findings) == 1 and "aspect 2" in json.dumps(findings[0])
    assert chat_server.brain.calls["WorkerFindings"] == 3


def test_a_worker_stopped_after_its_report_before_the_orchestrator_has_it_reports_once(
    chat_server, search_server, checkpoint_db, monkeypatch
):
    """A worker's result is kept only in the orchestrator's state (`Command.PARENT`): one
    stopped after its report was written but before the orchestrator had it is not done, and
    a resume runs its last step again with the report's model call read from the checkpoint."""
    import deep_research.graph.worker as worker_module
    from deep_research.graph import build_graph

    real_report = worker_module.report_findings
    failures = {"left": 1}
    config = {"configurable": {"thread_id": f"report-{uuid.uuid4().hex[:8]}"}}

    async def report_then_stop(state, *, runs):
        update = await real_report(state, runs=runs)  # its model call saved as it answered
        if state["subtask"].id == 2 and failures["left"]:
            failures["left"] -= 1
            raise RuntimeError("stopped before the orchestrator had the result")
        return update

    monkeypatch.setattr(worker_module, "report_findings", report_then_stop)
    question = ONE_ROUND

    async def scenario():
        async with open_checkpointer(checkpoint_db) as saver:
            graph = build_graph(checkpointer=saver)
            with pytest.raises(RuntimeError, match="stopped before the orchestrator"):
                await graph.ainvoke(question, config)
            before = len(chat_server.chat_requests)
            result = await graph.ainvoke(None, config)
            return before, result, (await graph.aget_state(config)).values

    chat_before, result, values = asyncio.run(scenario())
    resumed = [r["body"] for r in chat_server.chat_requests[chat_before:]]
    assert not [b for b in resumed if "WorkerFindings" in json.dumps(b)]  # read back, not asked
    assert chat_server.brain.calls["WorkerFindings"] == 3
    assert sorted(r.subtask_id for r in values["worker_results"]) == [1, 2, 3]
    assert result["stop_reason"] == "max_iterations" and result["sources"]


def test_ctrl_c_exits_130_with_the_resume_command(chat_server, search_server, tmp_path):
    """Ctrl-C while a model call is in flight ends the run without waiting for the call: the
    server holds it far longer than the bound, so only an abandoned call lets it exit."""
    env = {**os.environ, "DEEP_RESEARCH_CHECKPOINT_DB": str(tmp_path / "c.sqlite")}
    held, hold = threading.Event(), threading.Event()

    def hold_reports(number, body):
        if "WorkerFindings" in json.dumps(body):
            held.set()
            hold.wait(300)  # released when the test ends
        return None

    chat_server.fault = hold_reports
    command, options = cli("run", "Compare zstd and xz", "--thread-id", "ctrl-c", env=env)
    process = subprocess.Popen(
        command, **options, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert held.wait(120)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        hold.set()
    assert process.returncode == 130
    assert "interrupted; resume with: deep-research resume ctrl-c" in err
    assert "Traceback" not in err


def test_a_resume_takes_what_it_reads_and_starts_from_its_own_command_never_the_store(
    chat_server, search_server, tmp_path, monkeypatch, capsys
):
    """A stored run's server-only settings (folders, MCP sources, private reads) are never used
    as stored: `resume` refuses one started with others than it was given, naming them, and
    goes on when they are given again."""
    from deep_research.cli.main import main

    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", str(tmp_path / "c.sqlite"))
    writer = WriterFails()  # the report writer fails until the test says otherwise
    chat_server.fault = writer
    flags = ["--max-iterations", "1", "--min-iterations", "1", "--set", "model_retries=0"]
    flags += ["--set", "fetch_private_addresses=true", "--thread-id", "own", "--quiet"]
    assert main(["run", "Compare zstd and xz", *flags]) == 1  # failed, saved
    writer.failing = False
    capsys.readouterr()
    assert main(["resume", "own", "--quiet"]) == 2
    refused = capsys.readouterr().err
    assert "fetch_private_addresses True (--set fetch_private_addresses=...)" in refused
    given = ["--set", "fetch_private_addresses=true", "--quiet"]
    assert main(["resume", "own", *given, "--output", str(tmp_path / "r.md")]) == 0
    assert (tmp_path / "r.md").read_text(encoding="utf-8").startswith("# ")
