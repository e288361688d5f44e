"""Research over the user's own documents: the local index as a search backend, or with the web.

The index lives beside the checkpoints (one SQLite file per folder), never in the folder itself.
"""

from __future__ import annotations

import asyncio
import hashlib
from itertools import zip_longest
from pathlib import Path
from typing import Protocol, runtime_checkable

from deep_research.domain.sources import normalize_url
from deep_research.state import SearchHit
from deep_research.tools.checkpoints import data_dir
from deep_research.tools.corpus import LocalCorpus
from deep_research.tools.corpus.index import named_folder
from deep_research.tools.search.base import SearchBackend, rank_score


@runtime_checkable
class KnowsLanguages(Protocol):
    """A backend that can say which languages its documents are in (the user's folder)."""

    async def languages(self) -> dict[str, int]:
        """Language codes and how many documents are in each, most first."""
        ...


def index_path(corpus_dir: str | Path | None) -> Path:
    """Where the index of a folder is kept: the data folder, keyed by the folder's real path."""
    real = str(named_folder(corpus_dir).expanduser().resolve())
    digest = hashlib.sha256(real.encode()).hexdigest()[:16]
    return data_dir() / "indexes" / f"{Path(real).name or 'root'}-{digest}.sqlite"


def open_corpus(corpus_dir: str | Path | None) -> LocalCorpus:
    """The folder's index (raises CorpusError when the folder is missing or not a folder)."""
    return LocalCorpus(corpus_dir, index_path(corpus_dir))


class LocalSearch:
    """Full-text search over a folder; the first search opens it and brings the index up to date.

    Opening touches the disk (the folder, the index, SQLite), so it happens in a worker thread on
    the first search, never on the event loop (where `langgraph dev` refuses blocking calls).
    """

    def __init__(self, corpus_dir: str | Path | None) -> None:
        self._folder = named_folder(corpus_dir)
        self._corpus: LocalCorpus | None = None
        self._opening = asyncio.Lock()

    async def _opened(self) -> LocalCorpus:
        """The folder's index, opened once (off the event loop)."""
        async with self._opening:
            if self._corpus is None:
                self._corpus = await asyncio.to_thread(open_corpus, self._folder)
        return self._corpus

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        """The best passages for a query, one per document section."""
        return await (await self._opened()).asearch(query, max_results)

    async def languages(self) -> dict[str, int]:
        """The languages of the folder's documents, with how many are in each."""
        corpus = await self._opened()
        return await asyncio.to_thread(corpus.languages)


class HybridSearch:
    """The web and the folder together: both asked at once, answers interleaved, URLs unique."""

    def __init__(self, web: SearchBackend, local: SearchBackend) -> None:
        self._web, self._local = web, local

    @property
    def local(self) -> SearchBackend:
        """The folder's search alone (a worker's `search_documents` tool)."""
        return self._local

    async def languages(self) -> dict[str, int]:
        """The languages of the folder's documents (the web's are the model's guess)."""
        return await self._local.languages() if isinstance(self._local, LocalSearch) else {}

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        """Local and web hits alternately (local first), without duplicates, scored in that order.

        BM25's scores and a provider's are on different scales, and the worker sorts by score:
        scoring by position keeps the alternation.
        """
        local, web = await asyncio.gather(
            self._local.search(query, max_results), self._web.search(query, max_results)
        )
        hits, seen = [], set()
        for pair in zip_longest(local, web):
            for hit in pair:
                if hit is not None and normalize_url(hit.url) not in seen:
                    seen.add(normalize_url(hit.url))
                    hits.append(hit.model_copy(update={"score": rank_score(len(hits))}))
        return hits
