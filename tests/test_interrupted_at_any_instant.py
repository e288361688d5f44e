"""A run interrupted at any instant stays resumable, and every reader agrees it has not ended.

The break this guards: Ctrl-C a moment after the plan cancelled the planner's step between its
writes and its route's (LangGraph ran our sync routes in a thread, a pause); LangGraph saved the
step as done with nowhere to go, `threads` listed the run as done, `export` said unfinished, and
`resume` ended it with an empty report and no stop reason. Now the routes run inline (no pause
to be cut in), one rule (`graph.threads.standing`) says where a run stands, and a torn step
left by anything else is mended on resume (its one step run again).
"""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deep_research.cli.main import main
from deep_research.graph import research
from deep_research.graph.threads import advance, mend, standing, thread_config, torn
from deep_research.tools.checkpoints import open_checkpointer
from deep_research.tools.events import PlanMade
from deep_research.tools.run_resources import LiveRuns

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "Compare zstd and xz"
ONE_ROUND = {"max_iterations": 1, "min_iterations": 1}


def _command(capsys, *args: str) -> tuple[int, str, str]:
    """The command run in this process (the one that took Ctrl-C ran in its own): its exit
    code, stdout and stderr."""
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("delay", [0.0, 0.1, 0.3, 1.0])
def test_ctrl_c_after_the_plan_leaves_a_run_every_command_calls_unfinished_and_resume_ends_it(
    delay, chat_server, search_server, tmp_path, monkeypatch, capsys
):
    chat_server.latency = 0.3  # the run is still going a second after its plan
    chat_server.brain.subtasks = 1
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", str(tmp_path / "c.sqlite"))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-m", "deep_research.cli", "run", QUESTION, "--thread-id", "cut",
         "--max-iterations", "1"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        for line in child.stderr:
            if line.startswith("plan:"):
                break
        time.sleep(delay)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 130, err
    chat_server.latency = 0
    assert "interrupted; resume with: deep-research resume cut" in err

    _, listed, _ = _command(capsys, "threads")
    assert listed.splitlines()[1].split()[:2] == ["cut", "unfinished"], listed
    code, _, err = _command(capsys, "export", "cut", "--output", str(tmp_path / "early.md"))
    assert code == 2 and "has not finished" in err

    code, _, err = _command(capsys, "resume", "cut", "--quiet", "--output", str(tmp_path / "r.md"))
    assert code == 0, err
    assert (tmp_path / "r.md").read_text(encoding="utf-8").startswith("# ")
    _, listed, _ = _command(capsys, "threads")
    assert listed.splitlines()[1].split()[:4] == ["cut", "done", "1", "max_iterations"], listed
    code, _, _ = _command(capsys, "export", "cut", "--output", str(tmp_path / "late.md"))
    assert code == 0 and (tmp_path / "late.md").read_bytes() == (tmp_path / "r.md").read_bytes()


async def _cut_after_the_plan(target: str, thread_id: str, ticks: int) -> None:
    """Start a run and cancel it `ticks` turns of the event loop after its plan was made."""
    async with open_checkpointer(target) as saver:
        runs = LiveRuns()
        graph = research.build_graph(checkpointer=saver, runs=runs)
        planned = asyncio.Event()

        def on_event(event) -> None:
            if isinstance(event, PlanMade):
                planned.set()

        run = asyncio.ensure_future(
            advance(graph, thread_id, {"question": QUESTION, "settings": ONE_ROUND}, on_event,
                    runs=runs)
        )  # fmt: skip
        await asyncio.wait_for(planned.wait(), 60)
        for _ in range(ticks):
            await asyncio.sleep(0)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run


async def _read(target: str, thread_id: str):
    async with open_checkpointer(target) as saver:
        return await research.build_graph(checkpointer=saver).aget_state(thread_config(thread_id))


def test_a_cancel_at_every_turn_of_the_loop_after_the_plan_tears_no_step(
    chat_server, search_server, tmp_path
):
    target = str(tmp_path / "c.sqlite")
    for ticks in range(12):  # the planner's step ends, writes and routes within these turns
        asyncio.run(_cut_after_the_plan(target, f"t{ticks}", ticks))
        snapshot = asyncio.run(_read(target, f"t{ticks}"))
        assert not torn(snapshot), ticks
        assert standing(snapshot) == "resumable", ticks


async def _resume(target: str, thread_id: str):
    async with open_checkpointer(target) as saver:
        runs = LiveRuns()
        graph = research.build_graph(checkpointer=saver, runs=runs)
        return await advance(graph, thread_id, None, runs=runs)


def test_a_torn_step_is_mended_on_resume_even_after_a_resume_that_went_nowhere(
    chat_server, search_server, tmp_path, monkeypatch
):
    """A route that raises once tears its step as a cancel did: LangGraph keeps the planner's
    writes beside the error. Resumed by LangGraph alone, the run ends with no stop reason (the
    break as users met it); `advance` mends it, paying for the one torn step again."""
    target = str(tmp_path / "c.sqlite")
    real = research.route_after_plan
    broken = {"left": 1}

    @functools.wraps(real)  # its answer type: where it may go
    def route_once_broken(state):
        if broken["left"]:
            broken["left"] -= 1
            raise RuntimeError("the route broke")
        return real(state)

    monkeypatch.setattr(research, "route_after_plan", route_once_broken)

    async def tear_then_resume_without_mending() -> None:
        async with open_checkpointer(target) as saver:
            graph = research.build_graph(checkpointer=saver)
            config = thread_config("torn")
            with pytest.raises(RuntimeError, match="the route broke"):
                await graph.ainvoke({"question": QUESTION, "settings": ONE_ROUND}, config)
            snapshot = await graph.aget_state(config)
            assert torn(snapshot) and snapshot.next == ()  # read as done, with nowhere to go
            assert standing(snapshot) == "resumable"
            await graph.ainvoke(None, config)  # LangGraph alone: the run goes nowhere
            went_nowhere = await graph.aget_state(config)
            assert not went_nowhere.next and not went_nowhere.values.get("stop_reason")
            assert standing(went_nowhere) == "resumable"

    asyncio.run(tear_then_resume_without_mending())
    planner_calls = chat_server.brain.calls["TaskPlan"]
    end = asyncio.run(_resume(target, "torn"))
    assert standing(end) == "ended" and end.values["stop_reason"] == "max_iterations"
    assert end.values["report"].startswith("# ")
    assert chat_server.brain.calls["TaskPlan"] == planner_calls + 1  # only the torn step again


def test_mending_a_run_that_is_not_torn_changes_nothing(chat_server, search_server, tmp_path):
    target = str(tmp_path / "c.sqlite")
    asyncio.run(_cut_after_the_plan(target, "whole", 0))

    async def mend_it() -> bool:
        async with open_checkpointer(target) as saver:
            return await mend(research.build_graph(checkpointer=saver), "whole")

    before = asyncio.run(_read(target, "whole"))
    assert asyncio.run(mend_it()) is False
    assert asyncio.run(_read(target, "whole")).config == before.config
