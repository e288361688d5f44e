"""Tavily: web search through `AsyncTavilyClient` (`TAVILY_API_KEY`; `TAVILY_API_BASE_URL`)."""

from __future__ import annotations

import asyncio
import os

import httpx
import tavily
from tavily import errors as tavily_errors

from deep_research.settings import Settings
from deep_research.state import SearchHit
from deep_research.tools.http_cycles import with_let_go
from deep_research.tools.pool_checks import quickened
from deep_research.tools.search.base import (
    MAX_CONTENT_CHARS,
    SearchKeyRejected,
    SearchProviderError,
    required_env,
    retrying,
)
from deep_research.tools.search.clients import SearchClients, fingerprint

TAVILY_ERRORS: tuple[type[BaseException], ...] = (
    tavily_errors.UsageLimitExceededError,
    tavily_errors.BadRequestError,
    tavily_errors.ForbiddenError,
    tavily_errors.InvalidAPIKeyError,
    tavily_errors.TimeoutError,
)
"""What the Tavily client raises besides httpx's errors."""


def tavily_api_key() -> str:
    """The Tavily key; without one the client would silently go keyless, so refuse instead."""
    return required_env("TAVILY_API_KEY", "for Tavily web search")


def probe_tavily(timeout: float = 10.0) -> None:
    """Check the key with Tavily's free `GET /usage`: 401/403 is a bad key, 432/433 a used-up plan.

    Any other answer (an endpoint without `/usage`, a passing 5xx) is left to the searches.
    """
    base = os.environ.get("TAVILY_API_BASE_URL") or "https://api.tavily.com"
    response = httpx.get(
        f"{base.rstrip('/')}/usage",
        headers={"Authorization": f"Bearer {tavily_api_key()}"},
        timeout=timeout,
    )
    status = response.status_code
    if status in (401, 403, 432, 433):
        try:
            detail = (response.json().get("detail") or {}).get("error") or ""
        except (ValueError, AttributeError):
            detail = ""
        detail = f"HTTP {status}" + (f": {detail}" if detail else "")
        if status in (401, 403):
            raise SearchKeyRejected(f"bad key for tavily ({detail})")
        raise SearchProviderError(f"tavily: the key's usage limit is reached ({detail})")


def tavily_filters(settings: Settings) -> dict:
    """The source filters Tavily's search takes (`include_domains`, `exclude_domains`,
    `time_range`), only those the settings set."""
    filters = {
        "include_domains": list(settings.include_domains),
        "exclude_domains": list(settings.exclude_domains),
        "time_range": settings.time_range,
    }
    return {name: value for name, value in filters.items() if value}


TAVILY_TRANSIENT = (tavily_errors.UsageLimitExceededError, tavily_errors.TimeoutError)
"""The Tavily client's own rate-limit and timeout errors, retried like any transient one."""


class TavilySearch:
    """Web search through `AsyncTavilyClient`, retried with backoff; the client is the
    process's one for this key and address on the running loop (`clients`)."""

    def __init__(self, settings: Settings, clients: SearchClients) -> None:
        self._key = tavily_api_key()
        self._base_url = os.environ.get("TAVILY_API_BASE_URL") or None
        self._timeout = settings.search_timeout  # given per call: not part of the client
        self._attempts = settings.search_retries + 1
        self._clients = clients
        self._filters = tavily_filters(settings)

    def __repr__(self) -> str:
        """No key in a repr."""
        return f"TavilySearch(base_url={self._base_url!r})"

    def _client(self) -> tavily.AsyncTavilyClient:
        """The shared client for this key and address on the running loop, on the process's
        TLS context (unless Tavily's own proxy variables are set: its client mounts them)."""

        def build() -> tavily.AsyncTavilyClient:
            proxied = any(os.environ.get(v) for v in ("TAVILY_HTTP_PROXY", "TAVILY_HTTPS_PROXY"))
            http = None
            if not proxied:  # responses freed once closed (`tools.http_cycles`)
                http = quickened(  # `tools.pool_checks`
                    httpx.AsyncClient(verify=self._clients.tls(), event_hooks=with_let_go(None))
                )
            return tavily.AsyncTavilyClient(
                api_key=self._key, api_base_url=self._base_url, client=http
            )

        return self._clients.on_loop(("tavily", self._base_url, fingerprint(self._key)), build)

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        """Hits for one query from Tavily, retrying transient failures with jittered backoff."""
        try:
            async for attempt in retrying(self._attempts, also=TAVILY_TRANSIENT):
                with attempt:
                    async with asyncio.timeout(self._timeout):  # its own timeout is per read
                        reply = await self._client().search(
                            query, max_results=max_results, timeout=self._timeout, **self._filters
                        )
        except (tavily_errors.InvalidAPIKeyError, tavily_errors.ForbiddenError) as error:
            raise SearchKeyRejected(f"bad key for tavily ({error})") from error
        return [
            SearchHit(
                url=item.get("url", ""),
                title=item.get("title") or "",
                content=(item.get("content") or "")[:MAX_CONTENT_CHARS],
                score=float(item.get("score") or 0.0),
                query=query,
                published=str(item.get("published_date") or ""),
            )
            for item in reply.get("results", [])
            if item.get("url")
        ]
