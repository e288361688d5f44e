"""DuckDuckGo: key-free web search through the `ddgs` package's DuckDuckGo HTML engine.

`ddgs` (the maintained successor of `duckduckgo-search`) knows the request DuckDuckGo's HTML
endpoint expects (`POST https://html.duckduckgo.com/html/`, form `q`, `b`, `l`, and `s` for
later pages) and how to read its answer; we use that engine directly, not `DDGS().text`,
because the aggregate hides the HTTP status (a rate limit and "nothing found" both become
"No results found"). `DUCKDUCKGO_BASE_URL` points it elsewhere (a stand-in, or a mirror);
`DDGS_PROXY` (as in ddgs) sends it through a proxy (http, https or socks5).
"""

from __future__ import annotations

import asyncio
import html
import math
import os
import re
import weakref
from urllib.parse import parse_qs

from ddgs.engines.duckduckgo import Duckduckgo
from ddgs.exceptions import DDGSException

from deep_research.settings import Settings
from deep_research.state import SearchHit
from deep_research.tools.search.base import (
    SearchProviderError,
    SearchRateLimited,
    compact,
    rank_score,
    retrying,
)
from deep_research.tools.search.clients import SearchClients, fingerprint

MAX_PAGES = 2  # DuckDuckGo's HTML pages hold about ten results
IN_FLIGHT = 2  # requests at once: a key-free endpoint answers a burst with its anomaly page
RATE_LIMIT_STATUSES = frozenset({202, 403, 418, 429})  # how DuckDuckGo says "slow down"
_REDIRECT = re.compile(r'href="(?:https?:)?//duckduckgo\.com/l/\?([^"]*)"')


class DuckDuckGoUnavailable(SearchProviderError):
    """DuckDuckGo answered with an HTTP status we cannot use (a 5xx is retried first)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status  # read by the retry policy


class _HtmlEngine(Duckduckgo):
    """The ddgs engine, but a non-200 answer raises with its status instead of reading as empty."""

    def request(self, *args, **kwargs) -> str:
        """The page's HTML, or an error that says what the status meant."""
        response = self.http_client.request(*args, **kwargs)
        status = response.status_code
        if status == 200:
            return response.text
        if status in RATE_LIMIT_STATUSES:
            raise SearchRateLimited(f"duckduckgo is rate-limiting us (HTTP {status})")
        raise DuckDuckGoUnavailable(f"duckduckgo answered HTTP {status}", status)

    def pre_process_html(self, html_text: str) -> str:
        """Redirect links replaced by their targets before ddgs unquotes (and so splits) them."""
        return _REDIRECT.sub(_unwrapped, html_text)


def _unwrapped(match: re.Match) -> str:
    """The href attribute of a redirect link, pointing at its target instead."""
    target = parse_qs(html.unescape(match.group(1))).get("uddg")
    return f'href="{html.escape(target[0])}"' if target else match.group(0)


def _engine(proxy: str | None, timeout: int, base: str | None) -> _HtmlEngine:
    """The ddgs engine through `proxy`, pointed at `base` when one is set."""
    engine = _HtmlEngine(proxy=proxy, timeout=timeout)
    if base:
        engine.search_url = base.rstrip("/") + "/html/"
    return engine


class DuckDuckGoSearch:
    """Key-free web search: DuckDuckGo's HTML results, one blocking request per page in a thread."""

    def __init__(self, settings: Settings, clients: SearchClients) -> None:
        proxy = os.environ.get("DDGS_PROXY") or None  # ddgs' own variable for its proxy
        timeout = math.ceil(settings.search_timeout)
        base = os.environ.get("DUCKDUCKGO_BASE_URL") or None
        # a blocking client used from threads: one per proxy, timeout and address, any loop
        self._engine = clients.anywhere(
            ("duckduckgo", fingerprint(proxy), timeout, base),
            lambda: _engine(proxy, timeout, base),
        )
        self._attempts = settings.search_retries + 1
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
        self._slots = weakref.WeakKeyDictionary()

    def _slot(self) -> asyncio.Semaphore:
        """The running loop's limit on requests in flight (IN_FLIGHT)."""
        return self._slots.setdefault(asyncio.get_running_loop(), asyncio.Semaphore(IN_FLIGHT))

    async def _page(self, query: str, page: int) -> list:
        """One page of ddgs `TextResult`s, retried on rate limits and 5xx."""
        async for attempt in retrying(self._attempts, also=(DDGSException,)):
            with attempt:
                async with self._slot():
                    results = await asyncio.to_thread(self._engine.search, query, page=page)
        return results or []

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        """Hits for one query; a page with nothing new ends the paging."""
        hits: list[SearchHit] = []
        seen: set[str] = set()
        for page in range(1, MAX_PAGES + 1):
            fresh = 0
            for item in await self._page(query, page):
                url = item.href
                if url.startswith(("http://", "https://")) and url not in seen:
                    seen.add(url)
                    fresh += 1
                    hits.append(
                        SearchHit(
                            url=url,
                            title=item.title,
                            content=compact(item.body),
                            score=rank_score(len(hits)),
                            query=query,
                        )
                    )
            if not fresh or len(hits) >= max_results:
                break
        return hits[:max_results]
