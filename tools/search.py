"""Search backends: Tavily on the web, with retries; all return compact `SearchHit`s."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import weakref
from typing import Protocol

import httpx
import tavily
from tavily import errors as tavily_errors
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)

from settings import Settings
from state import SearchHit
from tools.corpus import CorpusError
from tools.models import MissingCredentials

MAX_CONTENT_CHARS = 1500  # evidence kept per hit: enough to quote, small enough to checkpoint
MAX_RETRY_AFTER = 60.0  # seconds: a longer Retry-After is capped rather than obeyed
_backoff = wait_random_exponential(multiplier=0.5, max=20)
SEARCH_TIMEOUT = 60  # seconds per search when `request_timeout` sets no cap

SEARCH_ERRORS: tuple[type[BaseException], ...] = (
    httpx.HTTPError,
    tavily_errors.UsageLimitExceededError,
    tavily_errors.BadRequestError,
    tavily_errors.ForbiddenError,
    tavily_errors.InvalidAPIKeyError,
    tavily_errors.TimeoutError,
    OSError,
    sqlite3.Error,
    CorpusError,
)
"""What a failed search raises; a worker records these instead of failing the run."""


class SearchBackend(Protocol):
    """Anything that answers a query with hits."""

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        """Hits for one query, best first."""
        ...


def tavily_api_key() -> str:
    """The Tavily key; without one the client would silently go keyless, so refuse instead."""
    key = os.environ.get("TAVILY_API_KEY", "").strip()
    if not key:
        raise MissingCredentials(
            "TAVILY_API_KEY is not set: set it for web search "
            "(or research your own documents with --search local, which needs none)."
        )
    return key


def _is_transient(error: BaseException) -> bool:
    """429, 5xx, timeouts and dropped connections are worth another try; the rest are not."""
    if isinstance(error, httpx.HTTPStatusError):
        return error.response.status_code >= 500 or error.response.status_code == 429
    return isinstance(
        error,
        httpx.TransportError | tavily_errors.UsageLimitExceededError | tavily_errors.TimeoutError,
    )


def _retry_after(error: BaseException | None) -> float | None:
    """The seconds a server's Retry-After header asks for, if the error carries one."""
    if not isinstance(error, httpx.HTTPStatusError):
        return None
    value = error.response.headers.get("retry-after", "")
    try:
        return min(max(float(value), 0.0), MAX_RETRY_AFTER)
    except ValueError:
        return None


def wait_for_retry(state: RetryCallState) -> float:
    """Honour the server's Retry-After; otherwise exponential backoff with full jitter."""
    error = state.outcome.exception() if state.outcome else None
    asked = _retry_after(error)
    return asked if asked is not None else _backoff(state)


class TavilySearch:
    """Web search through `AsyncTavilyClient`, one client per event loop, retried with backoff."""

    _clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tavily.AsyncTavilyClient]

    def __init__(self, settings: Settings) -> None:
        self._key = tavily_api_key()
        self._base_url = os.environ.get("TAVILY_API_BASE_URL") or None
        self._timeout = settings.request_timeout or SEARCH_TIMEOUT
        self._attempts = settings.search_retries + 1
        self._clients = weakref.WeakKeyDictionary()

    def _client(self) -> tavily.AsyncTavilyClient:
        loop = asyncio.get_running_loop()
        if loop not in self._clients:
            self._clients[loop] = tavily.AsyncTavilyClient(
                api_key=self._key, api_base_url=self._base_url
            )
        return self._clients[loop]

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        """Hits for one query from Tavily, retrying transient failures with jittered backoff."""
        async for attempt in AsyncRetrying(
            stop=stop_after_attempt(self._attempts),
            wait=wait_for_retry,
            retry=retry_if_exception(_is_transient),
            reraise=True,
        ):
            with attempt:
                reply = await self._client().search(
                    query, max_results=max_results, timeout=self._timeout
                )
        return [
            SearchHit(
                url=item.get("url", ""),
                title=item.get("title") or "",
                content=(item.get("content") or "")[:MAX_CONTENT_CHARS],
                score=float(item.get("score") or 0.0),
                query=query,
            )
            for item in reply.get("results", [])
            if item.get("url")
        ]
