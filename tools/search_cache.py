"""One search cache per run, in front of every backend: a normalised query is paid for once.

Two workers that ask the same query at the same moment share one request (single flight);
a failed search is not cached, so a later ask tries again.
"""

from __future__ import annotations

import asyncio

from deep_research.domain.distinct import text_key
from deep_research.state import SearchHit
from deep_research.tools.search.base import HoldsConnections, SearchBackend
from deep_research.tools.secrets import redact_hit


class SharedSearchFailure(RuntimeError):
    """The search this caller waited on (sent once, by another caller) failed."""


class SearchCache:
    """Memoises `backend.search` per (normalised query, max_results) for the life of a run."""

    def __init__(self, backend: SearchBackend) -> None:
        self._backend = backend
        self._entries: dict[tuple[str, int], asyncio.Future[list[SearchHit]]] = {}

    @property
    def backend(self) -> SearchBackend:
        """The backend it caches."""
        return self._backend

    async def aclose(self) -> None:
        """The run has ended: let the backend go of what it holds open (MCP servers)."""
        if isinstance(self._backend, HoldsConnections):
            await self._backend.aclose()

    async def search(self, query: str, max_results: int) -> tuple[list[SearchHit], bool]:
        """Hits for a query, and whether they came from the cache rather than the backend."""
        key = (text_key(query), max_results)
        if key in self._entries:
            try:
                return await asyncio.shield(self._entries[key]), True
            except Exception as error:  # re-raised as what it is for this caller: not a new call
                raise SharedSearchFailure(f"{type(error).__name__}: {error}") from error
        future: asyncio.Future[list[SearchHit]] = asyncio.get_running_loop().create_future()
        self._entries[key] = future
        try:
            hits = await self._backend.search(query, max_results)
        except asyncio.CancelledError:
            del self._entries[key]
            future.cancel()
            raise
        except Exception as error:  # re-raised: the owner and every waiter see the failure
            del self._entries[key]
            future.set_exception(error)
            future.exception()  # marks it retrieved when nobody else was waiting
            raise
        hits = [redact_hit(hit) for hit in hits]  # where a search's answer enters the run
        future.set_result(hits)
        return hits, False
