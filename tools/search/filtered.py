"""A search backend that keeps only the sources a run allows (`domain.source_filter`)."""

from __future__ import annotations

from datetime import UTC, datetime

from deep_research.domain.source_filter import SourceFilter
from deep_research.state import SearchHit
from deep_research.tools.search.base import HoldsConnections, SearchBackend


class FilteredSearch:
    """The inner backend's hits, without those on a disallowed domain or out of the time range."""

    def __init__(self, backend: SearchBackend, allowed: SourceFilter) -> None:
        self._backend, self._allowed = backend, allowed

    @property
    def inner(self) -> SearchBackend:
        """The backend this filter stands in front of."""
        return self._backend

    def around(self, backend: SearchBackend) -> FilteredSearch:
        """The same filter in front of another backend (a part of the inner one)."""
        return FilteredSearch(backend, self._allowed)

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        """The inner backend's hits that the filter allows, in their order."""
        hits = await self._backend.search(query, max_results)
        return self._allowed.kept(hits, datetime.now(UTC))

    async def aclose(self) -> None:
        """Let go of what the inner backend holds open, if anything."""
        if isinstance(self._backend, HoldsConnections):
            await self._backend.aclose()
