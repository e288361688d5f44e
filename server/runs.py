"""The research runs an MCP server owns: started at once, run in the server, kept in the store.

Each run is the engine's normal checkpointed thread (`graph.threads.advance`, as `run`, `resume`
and `batch` use), so it shows in `deep-research history` and survives the server: a server that
starts again resumes the unfinished runs it owns (thread ids `mcp-…`) from their last finished
step, and nothing finished is paid for twice. A run is in the store before its id is returned
(its input checkpoint, as LangGraph writes one for any new run), so a queued run survives a
restart too. All runs share the process's endpoint limits; each keeps its own budgets, within
the server's own (`server.arguments.CEILINGS`); at most `max_runs` run at once, at most
`max_queued` wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from langgraph.pregel import Pregel
from langgraph.types import StateSnapshot

from deep_research.cli.bad_input import BadInput
from deep_research.cli.inspect import recent_threads, thread_status
from deep_research.cli.preflight import (
    check_corpus,
    check_credentials,
    check_mcp_config,
    check_question,
    settings_or_explain,
)
from deep_research.cli.progress import describe
from deep_research.graph import build_graph
from deep_research.graph.threads import advance, run_ended, thread_config
from deep_research.server.arguments import (
    CorpusOutside,
    ResearchOptions,
    corpus_inside,
    over_a_ceiling,
)
from deep_research.settings import Settings
from deep_research.tools.checkpoints import open_checkpointer
from deep_research.tools.run_resources import LiveRuns
from deep_research.tools.search.factory import web_provider
from deep_research.tools.secrets import redact

RUN_PREFIX = "mcp-"  # the threads this server started, and so resumes when it starts again
PROGRESS_LINES = 40  # the latest progress lines kept per live run
KEEP_FINISHED = 200  # finished runs whose live view (error, last lines) the server keeps


def progress_line(event: Any) -> str | None:
    """The one place that reads the graph's progress events: one line, or None for no line."""
    return describe(event)


class UnknownRun(LookupError):
    """No run with that id is in the checkpoint store."""


@dataclass
class LiveRun:
    """What the server knows of a run while it runs: its task and its latest progress."""

    run_id: str
    question: str = ""
    lines: deque[str] = field(default_factory=lambda: deque(maxlen=PROGRESS_LINES))
    events: int = 0
    queued: bool = True
    error: str | None = None
    task: asyncio.Task | None = None
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def on_event(self, event: Any) -> None:
        """Keep a progress event's line and wake whoever waits for news."""
        self.events += 1
        line = progress_line(event)
        if line:
            self.lines.append(line)
        self.changed()

    def changed(self) -> None:
        """Wake every waiter (each holds the event it started waiting on)."""
        self._changed.set()
        self._changed = asyncio.Event()

    async def news(self, timeout: float) -> None:
        """Return at the next event or after `timeout` seconds, whichever comes first."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout)

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()


class ResearchRuns:
    """Start, resume, watch and read the server's runs against one checkpoint store."""

    def __init__(
        self,
        target: str,
        defaults: dict[str, Any],
        max_runs: int,
        notes: Any,
        max_queued: int = 20,
    ) -> None:
        self.target, self.defaults, self.notes = target, defaults, notes
        self.server_settings = settings_or_explain(defaults)  # the ceilings of every run
        self.slots = asyncio.Semaphore(max_runs)
        self.max_runs, self.max_queued = max_runs, max_queued
        self.live: dict[str, LiveRun] = {}
        self._finished: deque[str] = deque()  # ended runs, oldest first, forgotten past a bound
        self.checked_providers: set[str | None] = set()
        self._stack = contextlib.AsyncExitStack()
        self.graph: Pregel | None = None
        self.saver: Any = None
        self.runs = LiveRuns()  # the live runs' in-memory resources (cache, limits, ledger)
        self.admitting = asyncio.Lock()  # one start at a time from counting the queue to launch

    async def __aenter__(self) -> ResearchRuns:
        self.saver = await self._stack.enter_async_context(open_checkpointer(self.target))
        self.graph = build_graph(checkpointer=self.saver, runs=self.runs)
        for run_id in reversed(await self.unfinished_own_runs()):  # oldest first, as queued
            self.notes.note(f"resuming run {run_id}")
            self._launch(run_id, None).question = await self._accepted_question(run_id)
        return self

    async def _accepted_question(self, run_id: str) -> str:
        """The question of a run accepted but not begun (it is only in its input channel yet)."""
        saved = await self.saver.aget_tuple(thread_config(run_id))
        accepted = saved.checkpoint["channel_values"].get("__start__") if saved else None
        return str(accepted.get("question") or "") if isinstance(accepted, dict) else ""

    async def __aexit__(self, *_: object) -> None:
        """Stop the runs still going (each stays resumable from its last step), close the store."""
        tasks = [run.task for run in self.live.values() if run.running and run.task]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._stack.aclose()

    async def unfinished_own_runs(self) -> list[str]:
        """The runs this server started that neither finished nor wait for a person."""
        rows = await recent_threads(self.saver, self._graph, limit=0)
        return [
            thread_id
            for thread_id, snapshot in rows
            if thread_id.startswith(RUN_PREFIX) and thread_status(snapshot) == "unfinished"
        ]

    @property
    def _graph(self) -> Pregel:
        if self.graph is None:
            raise RuntimeError("the run store is not open")
        return self.graph

    async def start(self, question: str, options: ResearchOptions) -> str:
        """Check the request (no paid call), then start the run; returns its id at once."""
        question, settings = await self.accept(question, options)
        async with self.admitting:  # calls at once must not all count the same queue
            active = sum(1 for run in self.live.values() if run.running)
            waiting = max(0, active - self.max_runs)  # every slot taken: the rest wait
            if waiting >= self.max_queued and active >= self.max_runs:
                raise BadInput(
                    f"{waiting} runs are already queued on this server (--max-queued "
                    f"{self.max_queued}): start this one when one of them has begun"
                )
            run_id = f"{RUN_PREFIX}{uuid.uuid4().hex}"
            accepted = {"question": question, "settings": settings}
            await self._graph.aupdate_state(thread_config(run_id), accepted, as_node="__input__")
            self._launch(run_id, None).question = question  # from the store: as after a restart
        return run_id

    async def accept(self, question: str, options: ResearchOptions) -> tuple[str, Settings]:
        """The run's question and settings: the server's, narrowed by the caller's options
        within its ceilings and guards; BadInput naming the cause (no paid call is made)."""
        question = check_question(question)
        overrides = options.overrides()
        try:
            if "corpus_dir" in overrides:
                root = self.defaults.get("corpus_dir")
                overrides["corpus_dir"] = corpus_inside(overrides["corpus_dir"], root)
        except CorpusOutside as error:
            raise BadInput(str(error)) from None
        # no MCP tool answers questions asked back yet: the run researches its question as asked
        settings = settings_or_explain({**self.defaults, **overrides, "clarify": False})
        beyond = over_a_ceiling(self.server_settings, settings, set(overrides))
        if beyond:
            raise BadInput(beyond)
        if settings.approve_plan:
            raise BadInput("an MCP server runs unattended: approve_plan cannot be on")
        if web_provider(settings) not in self.checked_providers:
            await asyncio.to_thread(check_credentials, settings)
            self.checked_providers.add(web_provider(settings))
        if settings.corpus_dir:
            await asyncio.to_thread(check_corpus, settings, self.notes)
        check_mcp_config(settings)
        return question, settings

    async def resume(self, run_id: str) -> None:
        """Continue a run that stopped (failed, or left by a server that stopped)."""
        snapshot = await self.snapshot(run_id)
        live = self.live.get(run_id)
        if live and live.running:
            return
        if thread_status(snapshot) != "unfinished":
            raise BadInput(f"run {run_id!r} is {thread_status(snapshot)}: nothing to resume")
        self._launch(run_id, None)

    def _launch(self, run_id: str, graph_input: dict | None) -> LiveRun:
        run = self.live[run_id] = LiveRun(run_id)
        run.task = asyncio.create_task(self._drive(run, graph_input), name=run_id)
        return run

    async def _drive(self, run: LiveRun, graph_input: dict | None) -> None:
        """Run (or resume) one thread to its end; a failure is kept as the run's error."""
        try:
            async with self.slots:
                run.queued = False
                run.changed()
                await advance(self._graph, run.run_id, graph_input, run.on_event, runs=self.runs)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the run failed; the server and other runs go on
            run.error = redact(f"{type(error).__name__}: {error}")[:500]
            self.notes.note(f"run {run.run_id} failed: {run.error}")
        finally:
            run.changed()
            self._forget_old(run.run_id)

    def _forget_old(self, ended: str) -> None:
        """Note that a run ended; past `KEEP_FINISHED` ended runs, drop the oldest live views
        (the store keeps every run: its status and result are read from there)."""
        self._finished.append(ended)
        while len(self._finished) > KEEP_FINISHED:
            old = self._finished.popleft()
            live = self.live.get(old)
            if live is not None and not live.running and old not in self._finished:
                del self.live[old]

    async def snapshot(self, run_id: str) -> StateSnapshot:
        """The run's latest checkpoint; UnknownRun when the store has none (or none yet)."""
        snapshot = await self._graph.aget_state(thread_config(run_id))
        if not snapshot.values:
            live = self.live.get(run_id)
            if live is None or not (live.running or live.error):
                raise UnknownRun(f"no run with id {run_id!r}")
        return snapshot

    async def status(self, run_id: str) -> tuple[str, StateSnapshot, LiveRun | None]:
        """queued, running, failed, done, waiting or unfinished; with the snapshot and live run."""
        snapshot = await self.snapshot(run_id)
        live = self.live.get(run_id)
        if live and live.running:
            return ("queued" if live.queued else "running"), snapshot, live
        if run_ended(snapshot):
            return "done", snapshot, live
        if live and live.error:
            return "failed", snapshot, live
        return thread_status(snapshot), snapshot, live

    async def wait(
        self,
        run_id: str,
        timeout: float,
        on_news: Callable[[LiveRun], Awaitable[None]],
        tick: float = 1.0,
    ) -> None:
        """Return once the run stops running or after `timeout` s, calling `on_news` as it goes."""
        await self.snapshot(run_id)
        live = self.live.get(run_id)
        if live is None:
            return
        deadline = asyncio.get_running_loop().time() + timeout
        seen = -1
        while live.running:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return
            if live.events != seen:
                seen = live.events
                await on_news(live)
            await live.news(min(tick, left))

    async def recent(self, limit: int) -> list[tuple[str, StateSnapshot]]:
        """The store's most recent runs (any started from the CLI too), newest first."""
        return await recent_threads(self.saver, self._graph, limit)
