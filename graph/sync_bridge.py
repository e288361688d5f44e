"""Our functions as graph steps: nodes that `graph.invoke` can run too, routes with no pause.

Every node is written once, as a coroutine. Under `ainvoke` LangGraph awaits it directly; under
`invoke` the sync twin below runs it on a single long-lived loop (so HTTP clients and their
connection pools are reused), carrying the caller's context variables so that LangGraph's
config, stream writer and runtime are visible inside the node.

Every route is a plain function run where its node ran, never in a thread (`route`): LangGraph
hands a sync route to an executor under `ainvoke`, and a run cancelled in that pause (Ctrl-C a
moment after the plan) saved its node's writes without the route's, a step LangGraph then reads
as done with nowhere to go: the run ended with no report and no stop reason.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import inspect
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.runnables import RunnableLambda
from langgraph._internal._runnable import RunnableCallable
from langgraph.types import Command

from deep_research.graph.settings_guard import SettingsReader, reading_settings, with_settings
from deep_research.tools.free_memory import FREE_MEMORY
from deep_research.tools.run_resources import LiveRuns
from deep_research.tools.secrets import redact_error

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def _portal() -> asyncio.AbstractEventLoop:
    """The background event loop, started on first use."""
    global _loop
    with _lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(
                target=_loop.run_forever, name="deep-research-loop", daemon=True
            ).start()
        return _loop


def run_sync(coroutine_fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    """Run `coroutine_fn(*args)` on the background loop with this thread's context; wait for it."""
    loop = _portal()
    context = contextvars.copy_context()
    done: concurrent.futures.Future = concurrent.futures.Future()

    def relay(task: asyncio.Task) -> None:
        if task.cancelled():
            done.cancel()
        elif task.exception() is not None:
            done.set_exception(task.exception())
        else:
            done.set_result(task.result())

    tasks: list[asyncio.Task] = []

    def start() -> None:
        tasks.append(loop.create_task(coroutine_fn(*args), context=context))
        tasks[0].add_done_callback(relay)

    loop.call_soon_threadsafe(start)
    try:
        return done.result()
    except BaseException:  # Ctrl-C or a cancelled caller: stop the node's work too, then re-raise
        loop.call_soon_threadsafe(lambda: [task.cancel() for task in tasks])
        raise


def node(
    afunc: Callable[..., Awaitable[dict | Command]],
    runs: LiveRuns,
    *,
    ends_run: bool = False,
    read: SettingsReader | None = None,
) -> RunnableLambda:
    """A graph node from a coroutine function, runnable by both `ainvoke` and `invoke`.

    A function with a `runs` parameter is handed the graph's live runs. This wrapper is the one
    place a run's in-memory resources are released: when the node raises (none of our nodes has
    a retry policy, so anything that leaves a node, an error, an interrupt for approval or a
    cancelled caller, ends the run; a resume builds them again from the checkpoint), and when
    the run's last node (`ends_run`) returns. The error of a failed node is redacted before
    LangGraph saves it in the checkpoint (`tools.secrets.redact_error`). With `read`, the node
    sees the settings in state as `read` gives them (`graph.settings_guard`): validated, and
    guarded for remote callers. A step that ends lets the process hand its heap's free pages back
    to the system (`tools.free_memory`: at most every 2 s).
    """
    handed = "runs" in inspect.signature(afunc).parameters
    bound = functools.partial(afunc, runs=runs) if handed else afunc

    @functools.wraps(afunc)
    async def guarded(state: Any) -> dict | Command:
        run_id = state.get("run_id") if isinstance(state, dict) else None
        try:
            update = await bound(with_settings(state, read) if read else state)
        except BaseException as error:
            redact_error(error)  # what LangGraph saves of the failed step holds no key
            with contextlib.suppress(BaseException):  # a cancel while releasing: the error stands
                await runs.release(run_id)
            raise
        if ends_run:
            await runs.release(run_id)
        FREE_MEMORY.step_ended()
        return update

    return RunnableLambda(
        lambda state: run_sync(guarded, state), afunc=guarded, name=afunc.__name__
    )


def route(path: Callable[..., Any], read: SettingsReader | None = None) -> RunnableCallable:
    """A conditional edge's function as a step that runs inline under `ainvoke` and `invoke`.

    A pure route needs no thread, and without one there is no `await` between a node's writes
    and its route's: a cancelled run saves both or neither (see the module's note). LangGraph's
    own `RunnableCallable`, untraced: LangChain's `RunnableLambda` awaits its callbacks in a
    task of their own (`on_chain_end` is shielded), a pause of the same kind. With `read`,
    the route sees the settings as the steps do (`graph.settings_guard.reading_settings`).
    Its `Literal` answer type is kept, so the drawn graph shows where it may go.
    """
    sync = reading_settings(path, read) if read else path

    @functools.wraps(sync)
    async def inline(state: Any) -> Any:
        return sync(state)

    return RunnableCallable(sync, inline, name=path.__name__, trace=False)
