"""Web search providers behind one protocol (query -> hits), one module each; see `factory`.

Providers: tavily, bocha, searxng, duckduckgo (key-free). `local` and `hybrid` live in
`tools.local_search`; `factory.search_backend` picks one; whole-page reading is in `pages`,
its SSRF guard in `guard`.
"""

from __future__ import annotations

import sqlite3

import httpx
from ddgs.exceptions import DDGSException

from deep_research.tools.corpus import CorpusError
from deep_research.tools.search.base import (
    MAX_CONTENT_CHARS,
    SearchBackend,
    SearchKeyRejected,
    SearchProviderError,
    wait_for_retry,
)
from deep_research.tools.search.tavily import TAVILY_ERRORS, TavilySearch, tavily_api_key

SEARCH_ERRORS: tuple[type[BaseException], ...] = (
    httpx.HTTPError,
    *TAVILY_ERRORS,
    SearchProviderError,
    DDGSException,
    OSError,
    sqlite3.Error,
    CorpusError,
)
"""What a failed search raises; a worker records these instead of failing the run."""


__all__ = [
    "MAX_CONTENT_CHARS",
    "SEARCH_ERRORS",
    "SearchBackend",
    "SearchKeyRejected",
    "SearchProviderError",
    "TavilySearch",
    "tavily_api_key",
    "wait_for_retry",
]
