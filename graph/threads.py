"""Drive one checkpointed thread to its next stop, and say where a thread's run stands.

The run service (`service/`) drives every run of every door through `advance`, so a resumed
thread always opens its run with what the checkpoint says it spent (the budget holds across a
crash), and only the progress events the callers read are streamed, each as its typed model
(`tools.events`). `standing` is the one rule for ended, waiting and resumable.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Literal

from langgraph.pregel import Pregel
from langgraph.types import Command, StateSnapshot

from deep_research.settings import Settings
from deep_research.tools.events import ProgressEvent, parse_event
from deep_research.tools.run_resources import LiveRuns

Standing = Literal["unknown", "ended", "waiting", "resumable"]


def standing(snapshot: StateSnapshot) -> Standing:
    """Where a thread's run stands: the one rule every door and store reads.

    - `ended`: its graph has no task left and its output holds a stop reason;
    - `waiting`: it asks a person (an approval of its plan);
    - `resumable`: anything else the store holds: accepted and not begun, running elsewhere,
      failed, or interrupted at any instant (`advance` mends a torn step first);
    - `unknown`: the store holds nothing of it.

    `next` alone is not enough: while another process runs the thread, a step whose tasks have
    all saved their writes, but whose checkpoint is not written yet, has an empty `next` (seen:
    a queued run collected as "done" with only its question and settings); and a step torn by a
    cancel (below) has an empty `next` and no stop reason.
    """
    if not snapshot.values and not snapshot.next:
        return "unknown"
    if snapshot.interrupts:
        return "waiting"
    if not snapshot.tasks and snapshot.values.get("stop_reason"):
        return "ended"
    return "resumable"


def run_ended(snapshot: StateSnapshot) -> bool:
    """Whether a thread's run has ended (`standing`): nothing left to run, a stop reason kept."""
    return standing(snapshot) == "ended"


def torn(snapshot: StateSnapshot) -> bool:
    """Whether a checkpoint holds a torn step: a task saved with an error and part of its
    writes, which LangGraph reads as done. A task cancelled between its node's writes and its
    route's is saved so (`graph.sync_bridge.route` leaves no such pause in our graph; a route
    that raises, or a store written by an older version, can still hold one): resumed as it
    is, the run would go nowhere and end with no report and no stop reason."""
    return any(task.error is not None and task.result is not None for task in snapshot.tasks)


async def mend(graph: Pregel, thread_id: str) -> bool:
    """Make a thread whose latest step was torn resumable again; True when one was mended.

    The checkpoint before the torn step's writes is copied as the thread's newest (LangGraph's
    `as_node="__copy__"`, without the pending writes), so its task runs again: that one step's
    calls are paid again, every earlier step is kept. A run that already went on from a torn
    step to an end without a stop reason goes back to that step the same way.
    """
    config = thread_config(thread_id)
    latest = await graph.aget_state(config)
    if torn(latest):
        await graph.aupdate_state(latest.config, None, as_node="__copy__")
        return True
    if latest.tasks or latest.next or latest.interrupts or latest.values.get("stop_reason"):
        return False
    if not latest.values:
        return False
    async with contextlib.aclosing(graph.aget_state_history(config)) as history:  # newest first
        async for earlier in history:
            if torn(earlier):
                await graph.aupdate_state(earlier.config, None, as_node="__copy__")
                return True
    return False


def thread_config(thread_id: str) -> dict:
    """The LangGraph config that names a thread."""
    return {"configurable": {"thread_id": thread_id}}


async def advance(
    graph: Pregel,
    thread_id: str,
    step_input: dict | Command | None,
    on_event: Callable[[ProgressEvent], None] = lambda event: None,
    *,
    runs: LiveRuns,
) -> StateSnapshot:
    """Run the thread until it ends or waits for a person; None as input resumes it.

    `on_event` gets every progress event of the run, workers' included, as it happens. `runs`
    is the graph's live runs (`build_graph(runs=...)`): a resumed run is opened in it first, so
    that its budget counts what finished before the crash.
    """
    config = thread_config(thread_id)
    if step_input is None or _settings_only(step_input):
        await mend(graph, thread_id)
        await runs.resume(graph, config, _new_settings(step_input))
    async for _namespace, raw in graph.astream(
        step_input, config, stream_mode="custom", subgraphs=True, durability="sync"
    ):
        event = parse_event(raw)
        if event is not None:
            on_event(event)
    return await graph.aget_state(config)


def _settings_only(step_input: dict | Command) -> bool:
    """True for a resume that only changes the run's settings (`Command(update=...)`)."""
    return isinstance(step_input, Command) and step_input.resume is None and bool(step_input.update)


def _new_settings(step_input: dict | Command | None) -> Settings | None:
    """The settings a resume gives the run (its saved ones when it gives none)."""
    update = step_input.update if isinstance(step_input, Command) else None
    return update.get("settings") if isinstance(update, dict) else None
