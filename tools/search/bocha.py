"""Bocha (博查): the web-search API the seed system used (`BOCHA_API_KEY`; `BOCHA_API_BASE_URL`).

`POST {base}/v1/web-search` with a Bearer key and `{query, summary, count, page, freshness}`;
the answer is `{code, msg, data: {webPages: {value: [{name, url, snippet, summary}]}}}`. With
`summary: true` each page comes with a longer summary, which we keep as the hit's content.
Errors come as an HTTP status and `{code, message, log_id}`: 400 (missing query or key),
401 (invalid key), 403 (no balance left), 429 (rate limit), 500.
"""

from __future__ import annotations

import math
import os

import httpx

from deep_research.settings import Settings
from deep_research.state import SearchHit
from deep_research.tools.bounded_http import bounded_request
from deep_research.tools.search.base import (
    SearchKeyRejected,
    SearchProviderError,
    SearchRateLimited,
    check_status,
    compact,
    rank_score,
    required_env,
    retrying,
)
from deep_research.tools.search.clients import SearchClients

DEFAULT_BASE_URL = "https://api.bochaai.com"
PAGE_SIZE = 10  # the documented upper bound of `count`; more results means more pages


def bocha_api_key() -> str:
    """The Bocha key from the environment, or MissingCredentials."""
    return required_env("BOCHA_API_KEY", "for Bocha web search (open.bochaai.com)")


def _message(response: httpx.Response) -> str:
    """The human part of a Bocha error body (`message`, else `msg`), if any."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    if isinstance(body, dict):
        return str(body.get("message") or body.get("msg") or "")
    return ""


def probe_bocha(timeout: float = 10.0) -> None:
    """Check the key with Bocha's free balance query (`GET /v1/fund/remaining`).

    401/403 is a bad key; any other answer is left to the searches (a zero balance may still
    have a resource pack to spend).
    """
    base = os.environ.get("BOCHA_API_BASE_URL") or DEFAULT_BASE_URL
    response = httpx.get(
        base.rstrip("/") + "/v1/fund/remaining",
        headers={"Authorization": f"Bearer {bocha_api_key()}"},
        timeout=timeout,
    )
    if response.status_code in (401, 403):
        check_status("bocha", response, _message(response))


def _body(response: httpx.Response) -> dict:
    """The JSON of a 200 answer, if its own `code` says success too.

    A failing `code` counts as that HTTP status would: 429 and 5xx retried, 401/403 a bad key.
    """
    try:
        body = response.json()
    except ValueError as error:
        raise SearchProviderError(f"bocha answered with no JSON: {error}") from error
    if not isinstance(body, dict):
        raise SearchProviderError("bocha answered with something other than an object")
    code = str(body.get("code", 200))
    if code == "200":
        return body
    if code.isdigit() and (code == "429" or code.startswith("5")):
        raise SearchRateLimited(f"bocha answered code {code}: {_message(response)}")
    if code in ("401", "403"):
        raise SearchKeyRejected(f"bad key for bocha (code {code}: {_message(response)})")
    raise SearchProviderError(f"bocha answered code {code}: {_message(response)}")


FRESHNESS = {"day": "oneDay", "week": "oneWeek", "month": "oneMonth", "year": "oneYear"}
"""Bocha's `freshness` for each time range (`noLimit` without one)."""


def _published(item: dict) -> str:
    """A hit's date: Bocha sends it as `dateLastCrawled` (its docs: the publication time, in
    Beijing time though written with a Z), so it is given the +08:00 it means."""
    text = str(item.get("datePublished") or item.get("dateLastCrawled") or "")
    return text[:-1] + "+08:00" if text.endswith("Z") else text


class BochaSearch:
    """Bocha web search over httpx, one request per page of up to ten results."""

    def __init__(self, settings: Settings, clients: SearchClients) -> None:
        self._key = bocha_api_key()  # sent per request: the shared client holds no key
        base = os.environ.get("BOCHA_API_BASE_URL") or DEFAULT_BASE_URL
        self._url = base.rstrip("/") + "/v1/web-search"
        self._clients = clients
        self._seconds = settings.search_timeout
        self._attempts = settings.search_retries + 1
        self._time_range = settings.time_range

    def __repr__(self) -> str:
        """No key in a repr."""
        return f"BochaSearch(url={self._url!r})"

    def _client(self) -> httpx.AsyncClient:
        """The process's client for this timeout on the running loop."""
        return self._clients.httpx_here(("bocha", self._seconds), timeout=self._seconds)

    async def _page(self, query: str, count: int, page: int) -> list:
        """One page of `webPages.value`, retried on 429/5xx; an absent list is an empty page."""
        payload = {
            "query": query,
            "summary": True,
            "count": count,
            "page": page,
            "freshness": FRESHNESS.get(self._time_range or "", "noLimit"),
        }
        async for attempt in retrying(self._attempts):
            with attempt:
                response = await bounded_request(
                    self._client(),
                    "POST",
                    self._url,
                    seconds=self._seconds,
                    json=payload,
                    headers={"Authorization": f"Bearer {self._key}"},
                )
                check_status("bocha", response, _message(response))
                body = _body(response)
        pages = (body.get("data") or {}).get("webPages") or {}
        return pages.get("value") or []

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        """Hits for one query: pages fetched until `max_results` or a short page."""
        items: list[dict] = []
        count = min(PAGE_SIZE, max_results)  # `page` counts in pages of `count` results
        for page in range(1, math.ceil(max_results / count) + 1):
            batch = await self._page(query, count, page)
            items.extend(batch)
            if len(batch) < count:
                break
        hits, seen = [], set()
        for item in items:
            url = item.get("url") or ""
            if url and url not in seen:
                seen.add(url)
                hits.append(
                    SearchHit(
                        url=url,
                        title=item.get("name") or "",
                        content=compact(item.get("summary") or item.get("snippet")),
                        score=rank_score(len(hits)),
                        query=query,
                        published=_published(item),
                    )
                )
        return hits[:max_results]
