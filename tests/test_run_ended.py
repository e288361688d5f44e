"""When a thread's run has ended: no task left, not merely no task waiting (pure, no I/O)."""

from __future__ import annotations

from langgraph.types import PregelTask, StateSnapshot

from deep_research.graph.threads import run_ended

ASKED = {"question": "q", "settings": {}}


def snapshot(values: dict, next_: tuple[str, ...], tasks: tuple[PregelTask, ...]) -> StateSnapshot:
    """A state snapshot as `aget_state` returns it (only the fields the rule reads matter)."""
    return StateSnapshot(values, next_, {}, None, None, None, tasks, ())


def test_a_step_whose_tasks_all_wrote_but_whose_checkpoint_is_not_saved_has_not_ended():
    started = PregelTask("t1", "__start__", ("__pregel_pull", "__start__"), result=ASKED)
    assert not run_ended(snapshot(ASKED, (), (started,)))  # `next` is empty, yet it runs on


def test_a_finished_run_has_ended_and_a_waiting_or_empty_one_has_not():
    finished = {**ASKED, "report": "# r", "stop_reason": "max_iterations"}
    assert run_ended(snapshot(finished, (), ()))
    waiting = PregelTask("t2", "decompose", ("__pregel_pull", "decompose"))
    assert not run_ended(snapshot(ASKED, ("decompose",), (waiting,)))
    assert not run_ended(snapshot({}, (), ()))


def test_where_a_run_stands_is_one_rule_for_every_door():
    from langgraph.types import Interrupt

    from deep_research.graph.threads import standing, torn

    finished = {**ASKED, "report": "# r", "stop_reason": "max_iterations"}
    assert standing(snapshot(finished, (), ())) == "ended"
    assert standing(snapshot({}, (), ())) == "unknown"
    assert standing(snapshot({"usage": 0}, ("__start__",), ())) == "resumable"  # accepted
    asking = StateSnapshot(ASKED, ("approve_plan",), {}, None, None, None, (), (Interrupt(1),))
    assert standing(asking) == "waiting"
    # ended by the graph but with no stop reason: a torn step was resumed as done
    assert standing(snapshot(ASKED, (), ())) == "resumable"
    cut = PregelTask("t3", "decompose", ("__pregel_pull", "decompose"), error=ValueError("x"))
    broke = PregelTask("t3", "decompose", ("__pregel_pull", "decompose"), error=ValueError("x"),
                       result={"plan": "..."})  # fmt: skip
    assert not torn(snapshot(ASKED, ("decompose",), (cut,)))  # failed whole: it runs again
    assert torn(snapshot(ASKED, (), (broke,)))  # its writes without its route's
    assert standing(snapshot(ASKED, (), (broke,))) == "resumable"
