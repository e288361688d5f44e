"""The runs the web app drives: started, stopped, resumed and answered in the server, never in
the browser.

Each run is the engine's normal checkpointed thread (`graph.threads.advance`, as the CLI's `run`
and the MCP server use), so it shows in `deep-research threads` and survives the server: a
server that starts again resumes the web runs that were going when it stopped (not the ones a
person stopped). Every progress event and every action on a run is kept in the event log
beside the checkpoints, which is what pages replay.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from dataclasses import dataclass, field
from typing import Any

from langgraph.pregel import Pregel
from langgraph.types import Command, StateSnapshot

from deep_research.cli.inspect import recent_threads
from deep_research.graph import build_graph
from deep_research.graph.threads import advance, run_ended, standing, thread_config
from deep_research.state import PlanDecision
from deep_research.tools.checkpoints import open_checkpointer
from deep_research.tools.run_resources import LiveRuns
from deep_research.tools.secrets import redact
from deep_research.web.event_log import EventLog
from deep_research.web.view import RunView, Status, add_checkpoint, fold, last_control

RUN_PREFIX = "web-"  # the threads this server started, and so resumes when it starts again


class UnknownRun(LookupError):
    """No run with that id is in the store (or not one this user may see)."""


class NotNow(ValueError):
    """The action does not fit the run's state (resume a finished run, answer no plan)."""


@dataclass
class Live:
    """A run this process drives now: its task, and a signal for pages that wait for news."""

    task: asyncio.Task | None = None
    queued: bool = True
    writing: asyncio.Future | None = None  # the latest record being written (they chain)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def wake(self) -> None:
        """Wake every waiter (each holds the event it started waiting on)."""
        self.changed.set()
        self.changed = asyncio.Event()

    @property
    def running(self) -> bool:
        """True while the task has not ended."""
        return self.task is not None and not self.task.done()


class WebRuns:
    """Start, watch, steer and read runs against one checkpoint store."""

    def __init__(self, target: str, max_runs: int = 2) -> None:
        """Runs in the store `target` names; at most `max_runs` research at once."""
        self.target = target
        self.slots = asyncio.Semaphore(max_runs)
        self.live: dict[str, Live] = {}
        self.log: EventLog | None = None
        self._stack = contextlib.AsyncExitStack()
        self.graph: Pregel | None = None
        self.saver: Any = None
        self.runs = LiveRuns()

    async def __aenter__(self) -> WebRuns:
        """Open the store and the event log; resume the web runs a stopped server left going."""
        self.saver = await self._stack.enter_async_context(open_checkpointer(self.target))
        self.graph = build_graph(checkpointer=self.saver, runs=self.runs)
        self.log = await EventLog(self.target).open()
        for thread_id in await self.events.threads():
            if not thread_id.startswith(RUN_PREFIX):
                continue
            if last_control(await self.events.since(thread_id)) not in (
                "started",
                "resumed",
                "decided",
            ):
                continue
            snapshot = await self._graph.aget_state(thread_config(thread_id))
            if standing(snapshot) in ("ended", "waiting"):
                continue  # it had reached its end, or its plan, before the server stopped
            self._launch(thread_id, None)
        return self

    async def __aexit__(self, *_: object) -> None:
        """Stop the runs still going (each stays resumable from its last step), close the store."""
        tasks = [live.task for live in self.live.values() if live.running and live.task]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._stack.aclose()
        if self.log is not None:
            await self.log.close()

    @property
    def _graph(self) -> Pregel:
        """The graph, once the store is open."""
        if self.graph is None:
            raise RuntimeError("the run store is not open")
        return self.graph

    @property
    def events(self) -> EventLog:
        """The event log, once the store is open."""
        if self.log is None:
            raise RuntimeError("the run store is not open")
        return self.log

    async def start(self, graph_input: dict, owner: str = "", parent: str = "") -> str:
        """Start a checked run in the background; returns its thread id at once."""
        thread_id = f"{RUN_PREFIX}{uuid.uuid4().hex}"
        record = {"question": graph_input["question"], "owner": owner, "parent": parent}
        await self.events.append(thread_id, "started", record)
        self._launch(thread_id, graph_input)
        return thread_id

    async def stop(self, thread_id: str) -> None:
        """End a running run at once; it stays resumable from its last finished step."""
        live = self.live.get(thread_id)
        if live is None or not live.running or live.task is None:
            raise NotNow("the run is not running")
        await self.events.append(thread_id, "stopped", {})
        live.task.cancel()
        await asyncio.gather(live.task, return_exceptions=True)
        live.wake()

    async def resume(self, thread_id: str) -> None:
        """Continue a run that stopped, failed, or was left by a server that stopped."""
        status = await self.status(thread_id)
        if status not in ("stopped", "failed", "unfinished"):
            raise NotNow(f"the run is {status}: nothing to resume")
        await self.events.append(thread_id, "resumed", {})
        self._launch(thread_id, None)

    async def decide(self, thread_id: str, decision: PlanDecision) -> None:
        """Answer a run that waits at its plan, and let it go on."""
        if await self.status(thread_id) != "waiting":
            raise NotNow("the run is not waiting for a plan decision")
        answer = decision.model_dump(mode="json", exclude_none=True)
        await self.events.append(thread_id, "decided", {"action": decision.action})
        await self.runs.resume(self._graph, thread_config(thread_id))
        self._launch(thread_id, Command(resume=answer))

    async def delete(self, thread_id: str) -> None:
        """Forget a run: its checkpoints and its records (a running one is stopped first)."""
        live = self.live.pop(thread_id, None)
        if live and live.running and live.task:
            live.task.cancel()
            await asyncio.gather(live.task, return_exceptions=True)
        await self.saver.adelete_thread(thread_id)
        await self.events.forget(thread_id)

    def _launch(self, thread_id: str, step_input: dict | Command | None) -> Live:
        """Drive the thread in a background task of the server."""
        old = self.live.get(thread_id)
        live = self.live[thread_id] = Live()
        if old is not None:
            live.changed = old.changed  # pages waiting on the old run hear of the new one
        live.task = asyncio.create_task(self._drive(thread_id, live, step_input), name=thread_id)
        return live

    async def _drive(self, thread_id: str, live: Live, step_input: dict | Command | None) -> None:
        """Run the thread until it ends or waits; a failure is kept as a record."""

        def on_event(event: Any) -> None:
            """Write the event after the ones before it (the stream callback cannot wait)."""
            data = event.model_dump(mode="json")
            live.writing = asyncio.ensure_future(self._record(live.writing, thread_id, data, live))

        try:
            async with self.slots:
                live.queued = False
                live.wake()
                await advance(self._graph, thread_id, step_input, on_event, runs=self.runs)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the run failed; the server and the other runs go on
            text = redact(f"{type(error).__name__}: {error}")[:500]
            await self.events.append(thread_id, "failed", {"error": text})
        finally:
            if live.writing is not None:  # every event is in the log before the run is over
                await asyncio.shield(live.writing)
            live.wake()

    async def _record(
        self, before: asyncio.Future | None, thread_id: str, data: dict, live: Live
    ) -> None:
        """Write one progress event once the one before it is written; wake the pages."""
        if before is not None:
            await before
        await self.events.append(thread_id, "event", data)
        live.wake()

    async def snapshot(self, thread_id: str) -> StateSnapshot:
        """The thread's latest checkpoint (values empty before its first step)."""
        return await self._graph.aget_state(thread_config(thread_id))

    async def status(self, thread_id: str) -> Status:
        """Where the run stands; UnknownRun when neither the store nor the log knows it."""
        return (await self.view(thread_id)).status

    async def view(self, thread_id: str) -> RunView:
        """Everything the run page shows, read now."""
        records = await self.events.since(thread_id)
        snapshot = await self.snapshot(thread_id)
        if not records and not snapshot.values:
            raise UnknownRun(f"no run with id {thread_id!r}")
        view = fold(thread_id, records)
        add_checkpoint(view, snapshot.values)
        view.status = self._status(thread_id, snapshot, last_control(records))
        if view.status == "waiting":
            view.waiting_plan = snapshot.interrupts[0].value.get("plan")
        if view.status in ("done", "waiting"):
            view.error = ""
        return view

    def _status(self, thread_id: str, snapshot: StateSnapshot, control: str) -> Status:
        """queued, running, waiting, done, stopped, failed or unfinished."""
        live = self.live.get(thread_id)
        if live and live.running:
            return "queued" if live.queued else "running"
        if snapshot.interrupts:
            return "waiting"
        if run_ended(snapshot):
            return "done"
        if control == "stopped":
            return "stopped"
        if control == "failed":
            return "failed"
        return "unfinished"

    async def news(self, thread_id: str, timeout: float) -> None:
        """Return at the run's next change or after `timeout` seconds."""
        live = self.live.get(thread_id)
        if live is None:
            await asyncio.sleep(timeout)
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(live.changed.wait(), timeout)

    async def recent(self) -> list[tuple[str, StateSnapshot]]:
        """Every run in the store, newest first, whichever door started it."""
        rows = await recent_threads(self.saver, self._graph, limit=0)
        known = {thread_id for thread_id, _ in rows}
        for thread_id in await self.events.threads():  # started here, no checkpoint yet
            if thread_id not in known:
                rows.insert(0, (thread_id, await self.snapshot(thread_id)))
        return rows
