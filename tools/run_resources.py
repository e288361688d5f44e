"""What all workers of one run share in memory: the search cache and the concurrency limits.

Keyed by the run's id and the running event loop, so a resumed run in a new process (or a
second loop in this one) builds its own; nothing here is checkpointed, and nothing needs to be.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field

from settings import Settings
from state import Usage
from tools.budgets import run_budget_spent
from tools.search.factory import search_backend
from tools.search_cache import SearchCache

RUNS_KEPT_PER_LOOP = 16  # runs whose caches stay in memory at once, per event loop


@dataclass
class RunResources:
    """The shared, in-memory side of a run: cache, worker slots, call limits."""

    settings: Settings
    worker_slots: asyncio.Semaphore
    model_calls: asyncio.Semaphore
    searches: asyncio.Semaphore
    structured_mode: str = ""  # the method `auto` settled on for this run
    spent: Usage = field(default_factory=Usage)  # every call this process made for the run
    _search_cache: SearchCache | None = None

    @property
    def search_cache(self) -> SearchCache:
        """The run's cache in front of its search backend, built when a worker first searches."""
        if self._search_cache is None:
            self._search_cache = SearchCache(search_backend(self.settings))
        return self._search_cache

    def record(self, usage: Usage) -> None:
        """Count calls as they are answered, so workers see the run's spending live."""
        self.spent = self.spent + usage

    def seed(self, usage: Usage) -> None:
        """Count what the run spent before (in checkpointed steps), if more than we know of."""
        if (
            usage.total_tokens > self.spent.total_tokens
            or usage.search_calls > self.spent.search_calls
        ):
            self.spent = usage

    def budget_spent(self) -> bool:
        """True once the run's token, search or dollar budget is spent."""
        return run_budget_spent(self.spent, self.settings)


_runs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, OrderedDict[str, RunResources]] = (
    weakref.WeakKeyDictionary()
)


def resources_for(run_id: str, settings: Settings) -> RunResources:
    """The run's shared resources, created on first use on this event loop."""
    runs = _runs.setdefault(asyncio.get_running_loop(), OrderedDict())
    if run_id not in runs:
        runs[run_id] = RunResources(
            settings=settings,
            worker_slots=asyncio.Semaphore(settings.max_workers),
            model_calls=asyncio.Semaphore(settings.max_concurrent_model_calls),
            searches=asyncio.Semaphore(settings.max_concurrent_searches),
        )
        while len(runs) > RUNS_KEPT_PER_LOOP:
            runs.popitem(last=False)
    runs.move_to_end(run_id)
    return runs[run_id]
