"""SearXNG: a self-hosted metasearch instance's JSON API (`SEARXNG_URL`, its base address).

`GET {base}/search?q=...&format=json&pageno=N` answers `{query, results: [{url, title, content,
engine, score}], unresponsive_engines: [[engine, reason]]}`. An instance serves JSON only when
`json` is listed under `search.formats` in its settings.yml; otherwise `/search` answers 403
(it checks the format before the query, so a probe without a query costs no search). Its
limiter, when on, answers 429 to clients it takes for bots.
"""

from __future__ import annotations

import httpx

from deep_research.settings import Settings
from deep_research.state import SearchHit
from deep_research.tools.bounded_http import bounded_request
from deep_research.tools.search.base import (
    SearchKeyRejected,
    SearchProviderError,
    compact,
    rank_score,
    required_env,
    retrying,
)
from deep_research.tools.search.clients import SearchClients, fingerprint

MAX_PAGES = 3  # SearXNG pages hold ~10-30 results; three cover `max_results` up to 20
JSON_DISABLED = (
    "SearXNG at {url} refuses JSON (HTTP 403): add `json` to `search.formats` in its "
    "settings.yml and restart it"
)
HEADERS = {"Accept": "application/json"}


def searxng_url() -> str:
    """The instance's base address from the environment, or MissingCredentials."""
    return required_env("SEARXNG_URL", "to your SearXNG instance's address (http://host:8080)")


def split_credentials(url: str) -> tuple[str, httpx.BasicAuth | None]:
    """The address without `user:password@`, and those as Basic auth (kept out of messages)."""
    parsed = httpx.URL(url.rstrip("/"))
    if not parsed.username:
        return str(parsed), None
    auth = httpx.BasicAuth(parsed.username, parsed.password)
    return str(parsed.copy_with(username=None, password=None)), auth


def _check(base: str, response: httpx.Response) -> None:
    """403 means JSON is off; 401 is a proxy's refusal; the rest as HTTPStatusError."""
    if response.status_code == 403:
        raise SearchProviderError(JSON_DISABLED.format(url=base))
    if response.status_code == 401:
        raise SearchKeyRejected(f"bad key for searxng (HTTP 401 from {base})")
    response.raise_for_status()


def probe_searxng(base: str, timeout: float = 10.0) -> None:
    """Check, without running a search, that the instance answers and serves JSON."""
    base, auth = split_credentials(base)
    response = httpx.get(f"{base}/search", params={"format": "json"}, auth=auth, timeout=timeout)
    if response.status_code == 400:  # "No query": JSON is on, and nothing was searched
        return
    _check(base, response)


class SearxngSearch:
    """Search through a SearXNG instance, paging with `pageno` until enough results."""

    def __init__(self, settings: Settings, clients: SearchClients) -> None:
        address = searxng_url()
        self._base, self._auth = split_credentials(address)
        self._login = fingerprint(httpx.URL(address).userinfo.decode())  # tells logins apart
        self._clients = clients
        self._attempts = settings.search_retries + 1
        self._seconds = settings.search_timeout
        self._time_range = settings.time_range

    def __repr__(self) -> str:
        """The address without its credentials."""
        return f"SearxngSearch(base={self._base!r})"

    def _client(self) -> httpx.AsyncClient:
        """The process's client for this instance, credentials and timeout on the running loop."""
        key = ("searxng", self._base, self._login, self._seconds)
        return self._clients.httpx_here(
            key, timeout=self._seconds, headers=HEADERS, auth=self._auth
        )

    async def _page(self, query: str, pageno: int) -> dict:
        """One page of results, retried on 429/5xx and dropped connections."""
        params = {"q": query, "format": "json", "pageno": pageno}
        if self._time_range:  # SearXNG's own filter, for the engines that support one
            params["time_range"] = self._time_range
        async for attempt in retrying(self._attempts):
            with attempt:
                response = await bounded_request(
                    self._client(),
                    "GET",
                    f"{self._base}/search",
                    seconds=self._seconds,
                    params=params,
                )
                _check(self._base, response)
        try:
            body = response.json()
        except ValueError as error:
            raise SearchProviderError(f"searxng answered with no JSON: {error}") from error
        return body if isinstance(body, dict) else {}

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        """Hits for one query; an empty page ends the paging, every engine failing is an error."""
        hits: list[SearchHit] = []
        seen: set[str] = set()
        for pageno in range(1, MAX_PAGES + 1):
            body = await self._page(query, pageno)
            results = body.get("results") or []
            if not results and pageno == 1 and body.get("unresponsive_engines"):
                failed = ", ".join(
                    f"{name} ({reason})" for name, reason, *_ in body["unresponsive_engines"]
                )
                raise SearchProviderError(f"searxng: no engine answered: {failed}")
            fresh = [r for r in results if r.get("url") and r["url"] not in seen]
            for item in fresh:
                seen.add(item["url"])
                hits.append(
                    SearchHit(
                        url=item["url"],
                        title=item.get("title") or "",
                        content=compact(item.get("content")),
                        score=rank_score(len(hits)),
                        query=query,
                        published=str(item.get("publishedDate") or ""),
                    )
                )
            if not fresh or len(hits) >= max_results:
                break
        return hits[:max_results]
