"""What all workers of one run share in memory while the run is live: cache, limits, ledger.

A run's resources are built when its first step runs on an event loop (or when a caller opens
the run, `LiveRuns.resume`) and released when the run ends: after `finalize`, or when any step
raises (an error, an interrupt for approval, a cancelled caller; see `graph.sync_bridge.node`).
Nothing evicts a live run and there is no cap on how many may be live. Nothing here is
checkpointed: a run resumed in another process builds its own, and its ledger starts from the
checkpoint.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections.abc import AsyncIterator, Callable, Hashable
from dataclasses import dataclass, field
from functools import partial

from langchain_core.runnables import RunnableConfig
from langgraph.pregel import Pregel
from langgraph.types import StateSnapshot

from deep_research.domain.budgets import cost_usd, fair_share
from deep_research.domain.run_ledger import RunLedger
from deep_research.settings import Settings, settings_from
from deep_research.state import Usage
from deep_research.tools.call_stats import CallStats
from deep_research.tools.corpus.index import CorpusError
from deep_research.tools.endpoint_limits import Endpoint
from deep_research.tools.events import RunSpent, emit
from deep_research.tools.evidence.reads import PageRead, RunReads
from deep_research.tools.evidence.store import EvidenceStore, store_errors
from deep_research.tools.local_search import HybridSearch, KnowsLanguages
from deep_research.tools.model_client import ModelClient
from deep_research.tools.models import ModelSource, chat_model
from deep_research.tools.process_wide import ProcessWide, current
from deep_research.tools.search.base import SearchBackend
from deep_research.tools.search.factory import search_backend, web_provider
from deep_research.tools.search.filtered import FilteredSearch
from deep_research.tools.search.pages import Answer, PageFetcher
from deep_research.tools.search.tool_sources import ToolSearch, WithToolSources
from deep_research.tools.search_cache import SearchCache

Filtering = Callable[[SearchBackend], SearchBackend]


SPENT_EVERY = 2.0  # seconds between two RunSpent events of one run


def _as_is(backend: SearchBackend) -> SearchBackend:
    """A backend left as it is (a run without a source filter)."""
    return backend


@dataclass
class RunResources:
    """The shared, in-memory side of a live run: cache, worker slots, call limits, ledger."""

    settings: Settings
    worker_slots: asyncio.Semaphore
    model_calls: asyncio.Semaphore
    searches: asyncio.Semaphore
    ledger: RunLedger = field(default_factory=RunLedger)
    stats: CallStats = field(default_factory=CallStats)  # seconds, retries, re-asks per role
    models: ModelSource = chat_model  # where the run's model client gets each role's model
    process: ProcessWide = field(default_factory=current)  # every run's gates and memories
    dropped_addresses: set[str] = field(default_factory=set)  # said once a run, not per search
    finished_workers: set[Hashable] = field(default_factory=set)  # `worker_key`s, this process
    reads: RunReads | None = None  # what the run read that a citation may rest on (with an id)
    _search_cache: SearchCache | None = None
    _pages: PageFetcher | None = None
    _web_cache: SearchCache | None = None
    _documents_cache: SearchCache | None = None
    _spent_told_at: float = float("-inf")  # when the last RunSpent event went out
    _languages: dict[str, int] | None = None  # of the documents searched, once asked

    @property
    def search_cache(self) -> SearchCache:
        """The run's cache in front of its search backend, built when a worker first searches
        (the backend is the run's; its HTTP clients are the process's)."""
        if self._search_cache is None:
            # one page reader, one page budget: thin hits' pages and workers' read_page calls
            backend = search_backend(
                self.settings, self.process.search_clients, self.pages, self.keep_read
            )
            self._search_cache = SearchCache(backend)
        return self._search_cache

    @property
    def pages(self) -> PageFetcher:
        """The run's guarded page reader for workers' `read_page` calls (each URL once, within
        `max_page_fetches`; no private address unless allowed), built when first asked."""
        if self._pages is None:
            book = partial(self.ledger.take_page, self.settings)
            tls = self.process.search_clients.tls()
            self._pages = PageFetcher(self.settings, tls, book, on_read=self._keep_page)
        return self._pages

    async def keep_read(self, read: PageRead) -> None:
        """Hand a read (a page, a passage, a tool answer) to the run's evidence."""
        if self.reads is not None:
            await self.reads.read(read)

    async def _keep_page(self, url: str, answer: Answer, text: str) -> None:
        """A page the run's reader read, with what its server said, to the run's evidence."""
        await self.keep_read(
            PageRead(
                url=url,
                kind="page",
                text=text,
                final_url=answer.url,
                status=answer.status,
                etag=answer.header(b"etag"),
                last_modified=answer.header(b"last-modified"),
            )
        )

    @staticmethod
    def _unfiltered(backend: SearchBackend) -> tuple[SearchBackend, Filtering]:
        """A backend under the run's source filter (if any), and how to put a part of it
        back under the same filter."""
        if isinstance(backend, FilteredSearch):
            return backend.inner, backend.around
        return backend, _as_is

    @property
    def mcp_tools(self) -> ToolSearch | None:
        """The run's MCP tools (`mcp_config`), for workers whose model calls them; None without."""
        backend, _ = self._unfiltered(self.search_cache.backend)
        return backend.tools if isinstance(backend, WithToolSources) else None

    @property
    def web_cache(self) -> SearchCache:
        """The cache a worker whose model acts searches through: the backend without its MCP
        tools (which the model calls itself, within its budget), else the run's cache; under
        the run's source filter either way."""
        backend, filtered = self._unfiltered(self.search_cache.backend)
        if not isinstance(backend, WithToolSources):
            return self.search_cache
        if self._web_cache is None:
            self._web_cache = SearchCache(filtered(backend.base))
        return self._web_cache

    @property
    def documents_cache(self) -> SearchCache | None:
        """The user's folder searched alone, when the run searches it beside the web (hybrid):
        a worker's `search_documents` tool; None otherwise."""
        backend, filtered = self._unfiltered(self.web_cache.backend)
        if not isinstance(backend, HybridSearch):
            return None
        if self._documents_cache is None:
            self._documents_cache = SearchCache(filtered(backend.local))
        return self._documents_cache

    async def document_languages(self) -> dict[str, int]:
        """The languages of the documents the run searches (a folder, alone or beside the
        web), with how many are in each; none for the web alone, or when the folder cannot be
        read (its search then says why). Asked once per run."""
        if self.settings.search_backend not in ("local", "hybrid"):
            return {}
        if self._languages is None:
            backend, _ = self._unfiltered(self.web_cache.backend)
            try:
                found = await backend.languages() if isinstance(backend, KnowsLanguages) else {}
            except CorpusError:  # the first search reports it, as it did before
                found = {}
            self._languages = found
        return self._languages

    async def aclose(self) -> None:
        """The run has ended: what its search holds open (MCP servers it started) stops, and
        what it read goes. Its page reader and caches hand each read back to the run
        (`on_read`, `keep_read`): a cycle that only a full collection of the garbage collector
        frees, which a process with many runs seldom makes, so every page a finished run
        read stayed in memory until then (31 MiB of page text at the end of 64 runs)."""
        if self._search_cache is not None:
            await self._search_cache.aclose()
        self._search_cache = self._pages = self._web_cache = self._documents_cache = None
        self.reads = None

    @property
    def spent(self) -> Usage:
        """Everything the run has spent, as its ledger knows it."""
        return self.ledger.spent

    def search_gate(self) -> Endpoint:
        """The process-wide gate of the run's search provider: runs that ask the same web
        provider (on its own or in hybrid) share it; the local index has its own."""
        return self.process.gates.get(f"search:{web_provider(self.settings) or 'local'}")

    def record(self, usage: Usage) -> None:
        """Count calls as they are answered, so workers (and whoever streams the run) see the
        run's spending live."""
        self.ledger.record(usage)
        now = time.monotonic()
        if now - self._spent_told_at >= SPENT_EVERY:
            self._spent_told_at = now
            spent = self.ledger.spent
            emit(
                RunSpent(
                    tokens=spent.total_tokens,
                    llm_calls=spent.llm_calls,
                    search_calls=spent.search_calls,
                    cost_usd=cost_usd(spent, self.settings),
                )
            )

    def share(self, worker: dict, left: int) -> int:
        """`worker`'s fair share now (`domain.budgets.fair_share`) of a run budget with `left`
        units: shared with the workers of its fan-out (`siblings`: a relay's still to come
        among them) that have not finished, itself included; a later round draws what this one
        leaves. A worker that finished before a resume in another process counts as
        unfinished: a smaller share, never an overspent budget."""
        round_ = worker["round"]
        siblings = set(worker.get("siblings") or [worker["subtask"].id])
        unfinished = sum((round_, i) not in self.finished_workers for i in siblings)
        return fair_share(left, unfinished)

    def model_client(self) -> ModelClient:
        """The run's model client: the run's call slots, its ledger and its call figures."""
        return ModelClient(
            self.settings,
            self.models,
            book=self.record,
            calls_in_flight=self.model_calls,
            stats=self.stats,
            process=self.process,
        )

    def budget_spent(self) -> bool:
        """True once the run's token, search or dollar budget is spent (in-flight searches too)."""
        return self.ledger.budget_spent(self.settings)

    def model_budget_spent(self) -> bool:
        """True once the run's token or dollar budget is spent: no model call past it (a spent
        search budget still lets the workers read and quote what their searches found)."""
        return self.ledger.model_budget_spent(self.settings)

    @contextlib.asynccontextmanager
    async def search_call(self) -> AsyncIterator[bool]:
        """One search: yields False (send nothing) once the run's search budget is spent,
        counting searches in flight; else holds a run slot and an endpoint slot.

        The search counts as in flight until its endpoint slot is given back, which may await
        (a slot shared through Redis): the caller books it right after, with no await between,
        so it is never neither in flight nor booked (that let a run send 9 searches under 8).
        """
        async with self.searches:
            if self.budget_spent():
                yield False
                return
            self.ledger.searches_in_flight += 1
            try:
                async with self.search_gate().call():
                    yield True
            finally:
                self.ledger.searches_in_flight -= 1


def worker_key(state: dict) -> Hashable:
    """What names one worker within its run: its round and subtask."""
    return (state["round"], state["subtask"].id)


class LiveRuns:
    """The in-memory side of one graph's live runs, by event loop and run id.

    `build_graph` makes one and hands it to every node that needs its run (an argument, not a
    lookup): this is the one place a run's resources are built, lazily, on the first step that
    needs them in this process (a run started by `langgraph dev` or Studio, a Python caller's,
    or the CLI's, which opens a resumed run first with `resume`). `graph.sync_bridge.node` is
    the one place they are released: when a node raises (an error, an interrupt for approval,
    a cancelled caller) or when the run's last node has finished.
    """

    def __init__(
        self,
        models: ModelSource = chat_model,
        process: ProcessWide | None = None,
        evidence: EvidenceStore | None = None,
    ):
        self.models = models
        self._process = process
        self.evidence = evidence  # the store a run's reads are written through to, if any
        self._runs: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, RunResources]
        ] = weakref.WeakKeyDictionary()  # a loop that is gone takes its runs with it
        self.last_released: RunResources | None = None  # its figures, for benchmarks

    @property
    def process(self) -> ProcessWide:
        """What the runs share with every other run in the process (given, else the current)."""
        return self._process or current()

    def __len__(self) -> int:
        """How many runs keep resources now, on every loop (for tests and benchmarks)."""
        return sum(len(runs) for runs in list(self._runs.values()))

    def _here(self) -> dict[str, RunResources]:
        """The runs kept on the running event loop (their semaphores belong to it)."""
        return self._runs.setdefault(asyncio.get_running_loop(), {})

    def detached(self, settings: Settings, spent: Usage | None = None) -> RunResources:
        """Resources for a run that has no id yet (planning): kept only once `adopt`ed."""
        return RunResources(
            settings=settings,
            worker_slots=asyncio.Semaphore(settings.max_workers),
            model_calls=asyncio.Semaphore(settings.max_concurrent_model_calls),
            searches=asyncio.Semaphore(settings.max_concurrent_searches),
            ledger=RunLedger(spent),
            models=self.models,
            process=self.process,
        )

    def adopt(self, run_id: str, run: RunResources) -> None:
        """Keep `run` as the live run `run_id` (once its id is in state), unless one is kept."""
        kept = self._here().setdefault(run_id, run)
        if kept.reads is None:
            kept.reads = RunReads(run_id, self.evidence, store_errors(self.evidence))

    def open(self, run_id: str, settings: Settings, spent: Usage | None = None) -> RunResources:
        """The live run's resources; created (its ledger starting at `spent`) if it has none."""
        if run_id not in self._here():
            self.adopt(run_id, self.detached(settings, spent))
        return self._here()[run_id]

    def for_step(self, state: dict) -> RunResources:
        """The run's resources at an orchestrator step: its ledger set to the checkpointed
        total (at such a step none of the run's calls is in flight, so the two must agree)."""
        run = self.open(state["run_id"], state["settings"])
        run.ledger.settle(state.get("usage") or Usage())
        return run

    def for_worker(self, state: dict) -> RunResources:
        """The run's resources at a worker step: the worker's own checkpointed spending counted
        once (it is not yet in the run's usage), on top of the run's usage when it was sent."""
        run = self.open(state["run_id"], state["settings"], state.get("spent"))
        run.ledger.join(worker_key(state), state.get("usage") or Usage())
        return run

    async def resume(
        self, graph: Pregel, config: RunnableConfig, settings: Settings | None = None
    ) -> RunResources | None:
        """Before resuming a checkpointed run: open it with everything its checkpoint says it
        spent. The snapshot's values include the writes of steps that finished after the last
        complete one (a fan-out's finished workers); each unfinished worker adds what its own
        saved steps cost. So the budget counts all of it from the first resumed call,
        whichever worker runs first. `settings`, when given, replace the saved ones (a resume
        that changes the model)."""
        snapshot = await graph.aget_state(config, subgraphs=True)
        values = snapshot.values
        if not values.get("run_id") or not values.get("settings"):
            return None
        settings = settings or settings_from(values["settings"])
        run = self.open(values["run_id"], settings, values.get("usage") or Usage())
        for task in snapshot.tasks:
            unfinished = task.result is None and isinstance(task.state, StateSnapshot)
            worker = task.state.values if unfinished else {}
            if "subtask" in worker and "round" in worker:
                run.ledger.join(worker_key(worker), worker.get("usage") or Usage())
        return run

    async def release(self, run_id: str | None) -> None:
        """Forget a run that has ended on this loop, once what it held open has stopped; a
        later step (a resume) builds it afresh."""
        released = self._here().pop(run_id or "", None)
        if released is not None:
            self.last_released = released
            await released.aclose()
