"""The run service: a run's whole life, for every door.

A door parses its input, says who calls (`service.caller.Caller`) and renders what this hands
back; everything between is here. A run is admitted (`service.admission`), put in the store
before its id is returned (its input checkpoint, a row in the index, a "started" record), and
run by the executor (this process, or workers through the queue). Its progress events and what
was done to it go to its event log, which any door replays from an id; its status is read by
one rule (`status_of`) from the executor, the checkpoint (`graph.threads.standing`) and the
index. Every read and action checks the caller against the run's owner.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from langgraph.types import Command, StateSnapshot

from deep_research.domain.answering_settings import answered_otherwise
from deep_research.graph.keeping import forget_thread
from deep_research.graph.threads import advance, standing, thread_config
from deep_research.nodes.clarifying import ASKED
from deep_research.service.admission import Admission, Admitted, Operator
from deep_research.service.bad_input import BadInput
from deep_research.service.caller import Caller, Visibility
from deep_research.service.event_log import Record
from deep_research.service.executors import Executor, InProcess
from deep_research.service.follow_up import follow_up_from
from deep_research.service.index import QUESTION_CHARS, RunRow, figures, state_of
from deep_research.service.store import Store, open_store
from deep_research.settings import SERVER_ONLY, Settings, settings_from
from deep_research.state import ClarifyReply, PlanDecision
from deep_research.tools.checkpoints import store_target
from deep_research.tools.events import ProgressEvent
from deep_research.tools.run_resources import LiveRuns
from deep_research.tools.secrets import redact

RunStatus = Literal["queued", "running", "waiting", "done", "stopped", "failed", "unfinished"]
LIVE: tuple[RunStatus, ...] = ("queued", "running")
RESUMABLE: tuple[RunStatus, ...] = ("stopped", "failed", "unfinished")
ERROR_CHARS = 500  # what is kept of a failed run's error


class UnknownRun(LookupError):
    """No run with that id, or none this caller may see (the two are not told apart)."""


class NotNow(ValueError):
    """The action does not fit the run's state now (resume a finished run, answer no plan)."""


class RunTaken(BadInput):
    """A new run was asked for under an id that already holds one."""


@dataclass(frozen=True)
class RunInfo:
    """One run as a caller may read it: its row, status, latest checkpoint and error."""

    row: RunRow
    status: RunStatus
    snapshot: StateSnapshot
    error: str = ""

    @property
    def run_id(self) -> str:
        return self.row.run_id

    @property
    def values(self) -> dict[str, Any]:
        """The run's state values ({} before its first step)."""
        return self.snapshot.values or {}

    @property
    def question(self) -> str:
        return self.values.get("question") or self.row.question

    @property
    def waiting_plan(self) -> dict[str, Any] | None:
        """The plan a waiting run asks a person about."""
        return self._waiting_for().get("plan")

    @property
    def waiting_questions(self) -> list[dict[str, Any]]:
        """The questions a waiting run asks back before research (each with its suggested
        answers); none when it waits for nothing, or for its plan."""
        asked = self._waiting_for()
        return asked.get("questions") or [] if asked.get("kind") == ASKED else []

    def _waiting_for(self) -> dict[str, Any]:
        """What a waiting run asks a person (its interrupt's value); {} when not waiting."""
        if self.status != "waiting" or not self.snapshot.interrupts:
            return {}
        value = self.snapshot.interrupts[0].value
        return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class Ended:
    """A run at its end: its final state values, whether this call ran it, in how long."""

    values: dict[str, Any]
    ran: bool  # False: it had ended before and was read back
    seconds: float  # wall time of this call's stretch (0 when read back)


@dataclass(frozen=True)
class Listed:
    """One run of a list: its row and status."""

    row: RunRow
    status: RunStatus


class RunService:
    """Runs in one store, admitted for one operator, run by one executor."""

    def __init__(
        self,
        store: Store,
        admission: Admission,
        executor: Executor,
        *,
        visibility: Visibility | None = None,
        prefix: str = "",
        max_queued: int | None = None,
    ) -> None:
        """`prefix` starts the ids of new runs (their door's, for people reading ids);
        `max_queued` bounds the runs waiting for a slot (None: no bound)."""
        self.store, self.admission, self.executor = store, admission, executor
        self.visibility = visibility or Visibility()
        self.prefix, self.max_queued = prefix, max_queued
        self._admitting = asyncio.Lock()
        self._listeners: dict[str, list[Callable[[ProgressEvent], None]]] = {}
        self._writing: dict[str, asyncio.Future] = {}
        executor.bind(self._drive)

    # -- who may see what -------------------------------------------------------------------

    async def _row(self, caller: Caller, run_id: str) -> tuple[RunRow, StateSnapshot]:
        """A run this caller may see, with its latest checkpoint; UnknownRun otherwise.

        A thread the index does not know (made in this store by something other than the
        service: an evaluation, a Python caller) is the terminal's: the store's own door."""
        row = await self.store.index.get(run_id)
        snapshot = await self.store.graph.aget_state(thread_config(run_id))
        if row is None:
            if standing(snapshot) == "unknown":
                raise UnknownRun(f"no run with id {run_id!r}")
            row = _adopted(run_id, snapshot)
            await self.store.index.add(row, replace=False)
        if not self.visibility.may_see(caller, row.door, row.owner):
            raise UnknownRun(f"no run with id {run_id!r}")
        return row, snapshot

    # -- reading ----------------------------------------------------------------------------

    async def read(self, caller: Caller, run_id: str) -> RunInfo:
        """A run as it stands now."""
        row, snapshot = await self._row(caller, run_id)
        status = await self.status_of(row, snapshot)
        row = await self._mended(row, snapshot, status)
        error = row.error if status in ("failed", "stopped", "unfinished") else ""
        return RunInfo(row, status, snapshot, error)

    async def status_of(self, row: RunRow, snapshot: StateSnapshot) -> RunStatus:
        """The one rule for a run's status: what the executor is doing with it, else where its
        checkpoint stands, else what was last done to it."""
        activity = await self.executor.activity(row.run_id)
        if activity is not None:
            return activity
        held = standing(snapshot)
        if held == "ended":
            return "done"
        if held == "waiting":
            return "waiting"
        if row.state in ("stopped", "failed"):
            return row.state
        if row.via == self.executor.via and await self.executor.gave_up(row.run_id):
            return "failed"
        return "unfinished"

    async def _mended(self, row: RunRow, snapshot: StateSnapshot, status: RunStatus) -> RunRow:
        """The row, changed where the checkpoint says otherwise (a run that ended or began to
        wait in a process that stopped before it could say so)."""
        state = state_of(snapshot)
        if status in LIVE or state == row.state or state == "accepted":
            return row
        changes = {"state": state, **figures(snapshot.values or {})}
        await self.store.index.change(row.run_id, **changes)
        return RunRow(**{**row.__dict__, **changes})

    async def list(self, caller: Caller, limit: int = 20) -> list[Listed]:
        """The newest runs this caller may see (at most `limit`; 0: all), from the index."""
        rows = await self.store.index.visible(
            caller.door, caller.user, self.visibility.other_doors, limit
        )
        listed = []
        for row in rows:
            activity = await self.executor.activity(row.run_id) if row.state == "accepted" else None
            listed.append(Listed(row, activity or _status_of_row(row)))
        return listed

    async def events(self, caller: Caller, run_id: str, after: int = 0) -> list[Record]:
        """The run's records after `after` (the event id a reader last saw), oldest first."""
        await self._row(caller, run_id)
        return await self.store.events.since(run_id, after)

    async def latest(self, caller: Caller, run_id: str, count: int) -> list[Record]:
        """The run's latest `count` progress records, oldest first."""
        await self._row(caller, run_id)
        return await self.store.events.tail(run_id, count)

    async def follow(
        self, caller: Caller, run_id: str, after: int = 0, ping: float = 15.0
    ) -> AsyncIterator[list[Record]]:
        """The run's new records as they come (never one twice), a batch at a time; an empty
        batch every `ping` seconds without news; ends once the run is no longer live and every
        record is read."""
        await self._row(caller, run_id)
        while True:
            live = await self.executor.activity(run_id)
            records = await self.store.events.since(run_id, after)
            if records:
                after = records[-1].seq
            if records or live:
                yield records
            if live is None:
                rest = await self.store.events.since(run_id, after)
                if rest:
                    yield rest
                return
            await self.executor.news(run_id, ping)

    async def wait(self, caller: Caller, run_id: str, timeout: float) -> RunInfo:
        """The run once it is no longer queued or running, or as it stands after `timeout`."""
        await self._row(caller, run_id)
        clock = asyncio.get_running_loop()
        deadline = clock.time() + timeout
        while (left := deadline - clock.time()) > 0:
            if await self.executor.activity(run_id) is None:
                break
            await self.executor.news(run_id, left)
        return await self.read(caller, run_id)

    @contextlib.contextmanager
    def watching(self, run_id: str, on_event: Callable[[ProgressEvent], None]):
        """Hand every progress event of a run this process drives to `on_event` as it comes."""
        self._listeners.setdefault(run_id, []).append(on_event)
        try:
            yield
        finally:
            self._listeners[run_id].remove(on_event)

    # -- starting ---------------------------------------------------------------------------

    async def start(
        self,
        caller: Caller,
        admitted: Admitted,
        *,
        run_id: str | None = None,
        parent: str = "",
        prior: list | None = None,
        refreshed_by: str = "",
        launch: bool = True,
    ) -> str:
        """Put an admitted run in the store and hand it to the executor; its id at once. With
        `launch=False` it waits in the store for `drive` (the caller runs it in the foreground).
        A run given `prior` results carries `parent`'s evidence (what they rest on is kept
        with it); `refreshed_by` names the re-check that read them again (a watched question's
        next version)."""
        run_id = run_id or f"{self.prefix}{uuid.uuid4().hex}"
        async with self._admitting:  # starts at once must not all count the same queue
            if (
                await self.store.index.get(run_id)
                or standing(await self.store.graph.aget_state(thread_config(run_id))) != "unknown"
            ):
                raise RunTaken(f"thread id {run_id!r} already holds a run")
            await self._room_in_the_queue()
            accepted: dict[str, Any] = {
                "question": admitted.question,
                "settings": admitted.settings,
            }
            if prior:
                accepted["prior_results"] = prior
                accepted["follow_up_of"] = parent
            if refreshed_by:
                accepted["refreshed_by"] = refreshed_by
            await self.store.graph.aupdate_state(
                thread_config(run_id), accepted, as_node="__input__"
            )
            now = time.time()
            row = RunRow(
                run_id, caller.door, caller.user, self.executor.via, parent,
                admitted.question[:QUESTION_CHARS], now, now, "accepted",
            )  # fmt: skip
            await self.store.index.add(row)
            await self.store.events.append(
                run_id,
                "started",
                {"question": admitted.question, "door": caller.door, "owner": caller.user,
                 "parent": parent},
            )  # fmt: skip
            if launch:
                await self.executor.launch(run_id, None)
        return run_id

    async def _room_in_the_queue(self) -> None:
        """BadInput when `max_queued` runs already wait for a slot."""
        if self.max_queued is None:
            return
        waiting = await _waiting(self.executor)
        if waiting < self.max_queued:
            return
        if self.executor.via == "queue":
            raise BadInput(
                f"{waiting} runs already wait on the queue (--max-queued {self.max_queued}): "
                "start this one when a worker has taken one of them"
            )
        raise BadInput(
            f"{waiting} runs are already queued on this server (--max-queued {self.max_queued}): "
            "start this one when one of them has begun"
        )

    async def follow_up(self, caller: Caller, parent: str, question: str, **start: Any) -> str:
        """A new run on a finished one's evidence (`service.follow_up`), admitted with its
        inherited settings brought within this operator's ceilings."""
        _, snapshot = await self._row(caller, parent)
        given = follow_up_from(snapshot, parent, question)
        admitted = await self.admission.inherited(given["question"], given["settings"])
        return await self.start(
            caller, admitted, parent=parent, prior=given["prior_results"], **start
        )

    # -- steering ---------------------------------------------------------------------------

    async def resume(
        self, caller: Caller, run_id: str, change: dict | None = None, *, launch: bool = True
    ) -> Command | None:
        """Continue a run that stopped, failed or was left by a process that stopped, from its
        last finished step; `change` (model and endpoint settings only) is saved with it. Its
        settings are admitted again: within this operator's ceilings, with this process's
        server-only settings. With `launch=False`, the input of its next stretch is returned
        for `drive`."""
        info = await self.read(caller, run_id)
        if info.status in LIVE:
            return None
        if info.status not in RESUMABLE:
            raise NotNow(f"the run is {info.status}: nothing to resume")
        step = await self._executing(run_id, info.snapshot, change, admit=True)
        await self.store.events.append(run_id, "resumed", {})
        await self.store.index.change(run_id, state="accepted", error="")
        if launch:
            await self.executor.launch(run_id, step)
        return step

    async def decide(
        self, caller: Caller, run_id: str, decision: PlanDecision | dict, *, launch: bool = True
    ) -> Command:
        """Answer a run that waits at its plan, and let it go on (with `launch=False`, the input
        of its next stretch is returned for `drive`)."""
        info = await self.read(caller, run_id)
        if info.status != "waiting":
            raise NotNow("the run is not waiting for a plan decision")
        answer = (
            decision.model_dump(mode="json", exclude_none=True)
            if isinstance(decision, PlanDecision)
            else decision
        )
        return await self._go_on(run_id, answer, str(answer.get("action")), launch)

    async def answer(
        self, caller: Caller, run_id: str, reply: ClarifyReply, *, launch: bool = True
    ) -> Command:
        """Answer the questions a run asks back before research (or skip them), and let it
        go on: the answers join its brief (with `launch=False`, the input of its next stretch
        is returned for `drive`)."""
        info = await self.read(caller, run_id)
        if not info.waiting_questions:
            raise NotNow("the run is not waiting for answers to its questions")
        answer = reply.model_dump(mode="json")
        return await self._go_on(run_id, answer, reply.action, launch)

    async def _go_on(self, run_id: str, answer: dict, action: str, launch: bool) -> Command:
        """A waiting run resumed with a person's answer, recorded as what they decided."""
        await self.store.events.append(run_id, "decided", {"action": action})
        await self.store.index.change(run_id, state="accepted")
        await self.store.runs.resume(self.store.graph, thread_config(run_id))
        step = Command(resume=answer)
        if launch:
            await self.executor.launch(run_id, step)
        return step

    async def stop(self, caller: Caller, run_id: str) -> None:
        """End a running run now; it stays resumable from its last finished step."""
        info = await self.read(caller, run_id)
        if info.status not in LIVE:
            raise NotNow("the run is not running")
        await self.store.events.append(run_id, "stopped", {})
        await self.store.index.change(run_id, state="stopped")
        if not await self.executor.stop(run_id):
            raise NotNow("a run on the queue is stopped by its worker, not from here")

    async def delete(self, caller: Caller, run_id: str) -> None:
        """Forget a run: what is kept beside it (evidence, re-checks, its watch), its
        checkpoints, records and row (a running one is stopped first)."""
        await self._row(caller, run_id)
        await self.executor.stop(run_id)
        store = self.store
        await forget_thread(store.graph, store.evidence, store.watches, run_id)
        await self.store.saver.adelete_thread(run_id)
        await self.store.events.forget(run_id)
        await self.store.index.forget(run_id)

    async def history(self, caller: Caller, run_id: str) -> list[StateSnapshot]:
        """Every checkpoint of a run, newest first."""
        await self._row(caller, run_id)
        config = thread_config(run_id)
        return [snapshot async for snapshot in self.store.graph.aget_state_history(config)]

    # -- running ----------------------------------------------------------------------------

    async def drive(
        self, caller: Caller, run_id: str, step_input: dict | Command | None = None
    ) -> RunInfo:
        """Drive a run's next stretch here, in this task, until it ends, waits for a person or
        fails (the terminal, a batch): its events go to the log and to `watching`; a failure is
        recorded and raised."""
        await self._row(caller, run_id)
        await self._drive(run_id, step_input, reraise=True)
        return await self.read(caller, run_id)

    async def resume_own(self, door: str) -> list[str]:
        """Resume the runs of `door` that this kind of process was running when it stopped
        (not those a person stopped, nor failed or waiting ones); their ids, oldest first."""
        resumed = []
        for row in await self.store.index.resumed_by(door):
            snapshot = await self.store.graph.aget_state(thread_config(row.run_id))
            if standing(snapshot) != "resumable":
                await self._mended(row, snapshot, "unfinished")
                continue
            await self.executor.launch(row.run_id, await self._executing(row.run_id, snapshot))
            resumed.append(row.run_id)
        return resumed

    async def to_the_end(
        self,
        caller: Caller,
        admitted: Admitted,
        run_id: str,
        on_event: Callable[[ProgressEvent], None] = lambda event: None,
        starting: Callable[[bool], None] = lambda resumed: None,
    ) -> Ended:
        """A run with a stable id (a batch line, an eval task) driven here to its end: read
        back when it ended before, resumed when it was interrupted (another model or timeout
        given since is saved with it, as `resume --model`; what it reads and starts is this
        call's `admitted` settings, never the store's), started otherwise; raises if it stops
        before its end. `starting` hears whether it resumes (True) or begins."""
        nobody_answers = {"clarify": False}  # no one is asked back here: researched as asked
        admitted = replace(admitted, settings=admitted.settings.model_copy(update=nobody_answers))
        try:
            info = await self.read(caller, run_id)
        except UnknownRun:
            info = None
        if info is not None and info.status == "done":
            return Ended(info.values, ran=False, seconds=0.0)
        starting(info is not None)
        began = time.monotonic()
        step: Command | None = None
        if info is None:
            await self.start(caller, admitted, run_id=run_id, launch=False)
        elif (stored := info.values.get("settings")) is not None:
            kept = answered_otherwise(stored, admitted.settings) or settings_from(stored)
            own = {name: getattr(admitted.settings, name) for name in SERVER_ONLY}
            executing = kept.model_copy(update=own)
            step = None if executing == settings_from(stored) else _new_settings(executing)
        with self.watching(run_id, on_event):
            end = await self.drive(caller, run_id, step)
        if end.status != "done":
            raise RuntimeError(f"the run stopped before its end, at {list(end.snapshot.next)}")
        return Ended(end.values, ran=True, seconds=time.monotonic() - began)

    async def execute(
        self, run_id: str, starting: Callable[[bool], None] = lambda resumed: None
    ) -> RunStatus:
        """Drive a stored run here to its next stop (a queue worker's job): what it was
        asked for is read from the store, its server-only settings are this process's.
        `starting` hears, before it runs, whether it goes on from a step (True) or begins."""
        snapshot = await self.store.graph.aget_state(thread_config(run_id))
        if standing(snapshot) == "unknown":
            raise UnknownRun(f"no run with id {run_id!r} in the store")
        if standing(snapshot) == "resumable":
            starting((snapshot.values or {}).get("settings") is not None)
            await self._drive(run_id, await self._executing(run_id, snapshot), reraise=True)
        row = await self.store.index.get(run_id) or _adopted(run_id, snapshot)
        return await self.status_of(row, await self.store.graph.aget_state(thread_config(run_id)))

    async def _executing(
        self,
        run_id: str,
        snapshot: StateSnapshot,
        change: dict | None = None,
        *,
        admit: bool = False,
    ) -> Command | None:
        """How a stored run goes on here: from its checkpoint, with the settings this process
        runs it with (`Admission.executing`; with `admit`, every admission check too) saved
        first when they differ from the stored ones; `change` is applied before."""
        values = snapshot.values or {}
        accepted = (
            None if values.get("settings") is not None else await self._accepted_input(run_id)
        )
        given = values.get("settings") if accepted is None else accepted.get("settings")
        if given is None:
            return None
        stored = settings_from(given)
        wanted = Settings.model_validate({**stored.model_dump(), **change}) if change else stored
        if admit:
            question = values.get("question") or (accepted or {}).get("question") or ""
            executing = (await self.admission.inherited(question, wanted)).settings
        else:
            executing = self.admission.executing(wanted)
        if executing == stored:
            return None
        if accepted is not None:  # not begun: its input is written again, as a whole
            await self.store.graph.aupdate_state(
                thread_config(run_id), {**accepted, "settings": executing}, as_node="__input__"
            )
            return None
        return _new_settings(executing)

    async def _accepted_input(self, run_id: str) -> dict[str, Any] | None:
        """What a run accepted but not begun was asked (its input checkpoint's)."""
        saved = await self.store.saver.aget_tuple(thread_config(run_id))
        accepted = saved.checkpoint["channel_values"].get("__start__") if saved else None
        return accepted if isinstance(accepted, dict) else None

    async def _drive(
        self, run_id: str, step_input: dict | Command | None, *, reraise: bool = False
    ) -> None:
        """Run one stretch of a run here, until it ends, waits or fails; its events go to the
        log (and to whoever watches it in this process), its row follows. A failure is
        recorded (and with `reraise`, raised again)."""
        listeners = self._listeners.get(run_id, [])

        def on_event(event: ProgressEvent) -> None:
            for listener in listeners:
                listener(event)
            data = event.model_dump(mode="json")
            before = self._writing.get(run_id)
            self._writing[run_id] = asyncio.ensure_future(self._record(before, run_id, data))

        try:
            snapshot = await advance(
                self.store.graph, run_id, step_input, on_event, runs=self.store.runs
            )
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the run failed; the process and the other runs go on
            text = redact(f"{type(error).__name__}: {error}")[:ERROR_CHARS]
            await self._flushed(run_id)
            await self.store.events.append(run_id, "failed", {"error": text})
            await self.store.index.change(run_id, state="failed", error=text)
            if reraise:
                raise
            self.admission.note(f"run {run_id} failed: {text}")
        else:
            await self._flushed(run_id)
            changes = {"state": state_of(snapshot), **figures(snapshot.values or {})}
            await self.store.index.change(run_id, **changes, error="")
        finally:
            await self._flushed(run_id)

    async def _record(self, before: asyncio.Future | None, run_id: str, data: dict) -> None:
        """Write one progress event once the one before it is written; wake the watchers."""
        if before is not None:
            await before
        await self.store.events.append(run_id, "event", data)
        self.executor.wake(run_id)

    async def _flushed(self, run_id: str) -> None:
        """Wait until every progress event of the run is in the log."""
        writing = self._writing.pop(run_id, None)
        if writing is not None:
            await asyncio.shield(writing)


def _status_of_row(row: RunRow) -> RunStatus:
    """A listed run's status from its row alone (a list asks no checkpoint)."""
    return {
        "ended": "done",
        "waiting": "waiting",
        "stopped": "stopped",
        "failed": "failed",
    }.get(row.state, "queued" if row.via == "queue" else "unfinished")  # type: ignore[return-value]


def _adopted(run_id: str, snapshot: StateSnapshot) -> RunRow:
    """The row of a thread the index did not know: the terminal's (the store's own door)."""
    values = snapshot.values or {}
    now = time.time()
    question = str(values.get("question") or "")[:QUESTION_CHARS]
    return RunRow(
        run_id, "cli", "", "process", "", question, now, now, state_of(snapshot), **figures(values)
    )


def _new_settings(settings: Settings) -> Command:
    """A resume that saves new settings with the run before its next step."""
    return Command(update={"settings": settings})


async def _waiting(executor: Executor) -> int:
    """How many runs wait for a slot of this executor."""
    counted = getattr(executor, "waiting", None)
    if counted is None:
        return 0
    result = counted()
    return await result if asyncio.iscoroutine(result) else result


@contextlib.asynccontextmanager
async def open_service(
    target: str,
    operator: Operator,
    *,
    executor: Executor | None = None,
    queue: bool = False,
    visibility: Visibility | None = None,
    prefix: str = "",
    max_queued: int | None = None,
    create: bool = True,
    pooled: bool = False,
    runs: LiveRuns | None = None,
    notes: Callable[[str], None] = lambda text: None,
) -> AsyncIterator[RunService]:
    """The run service over the store `target` names, for one operator: runs go to `executor`
    (default: this process, two at a time), or with `queue` to the workers of the queue in the
    PostgreSQL store. On leaving, the runs still going here are stopped (each stays resumable
    from its last step) and the store is closed."""
    async with contextlib.AsyncExitStack() as stack:
        store = await stack.enter_async_context(
            open_store(target, create=create, pooled=pooled or queue, runs=runs)
        )
        if queue:
            from deep_research.service.executors import OnQueue
            from deep_research.service.queue import open_queue

            executor = OnQueue(await stack.enter_async_context(open_queue(store_target(target))))
        executor = executor or InProcess()
        stack.push_async_callback(executor.close)
        yield RunService(
            store,
            Admission(operator, notes),
            executor,
            visibility=visibility,
            prefix=prefix,
            max_queued=max_queued,
        )
