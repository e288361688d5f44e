"""Drive one checkpointed thread to its next stop: a new run, or a resume from its checkpoint.

The CLI's `run`/`resume`, `batch` and `eval` all go through `advance`, so a resumed thread always
opens its run with what the checkpoint says it spent (the budget holds across a crash), and only
the progress events the callers read are streamed, each as its typed model (`tools.events`).
"""

from __future__ import annotations

from collections.abc import Callable

from langgraph.pregel import Pregel
from langgraph.types import Command, StateSnapshot

from deep_research.settings import Settings
from deep_research.tools.events import ProgressEvent, parse_event
from deep_research.tools.run_resources import LiveRuns


def run_ended(snapshot: StateSnapshot) -> bool:
    """Whether a thread's run has ended: its state is saved and no task is left, done or not.

    `next` alone is not enough: while another process runs the thread, a step whose tasks have
    all saved their writes, but whose checkpoint is not written yet, has an empty `next` (seen:
    a queued run collected as "done" with only its question and settings).
    """
    return bool(snapshot.values) and not snapshot.tasks


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
