"""The depth world on loopback: its web site, and a Tavily-compatible search over it.

The search is lexical, as a plain web index is: a page is found by the words of its title and
text (crudely stemmed; Chinese characters one by one), ranked by how many query words it has
(title words count three times), ties broken by a hash of query and address, so that two
wordings of one question find overlapping but different pages. A result's `content` is the
page's opening paragraph, as a provider's snippet often is; some results carry the provider's
`published_date` (as an HTTP-date). Pages no search returns (methods, annexes, the PDF) are
reached by links only.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from email.utils import format_datetime

from stand_ins.depth_world.site import Page, world_pages
from stand_ins.loopback import Reply, StandIn

_WORD = re.compile(r"[a-z0-9]+|[\u4e00-\u9fff]", re.I)
_STOPWORD_TEXT = (
    "a an and are as at be by for from has have in is it its of on or the to was were what "
    "which who with how does do did this that these those about"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def stems(text: str) -> set[str]:
    """The words of `text` as the index matches them: lower case, cut to six letters."""
    return {w.lower()[:6] for w in _WORD.findall(text) if w.lower() not in STOPWORDS}


def http_date(day: str) -> str:
    """An ISO day as the HTTP-date form ("Tue, 04 Jun 2024 00:00:00 GMT") in which Tavily's
    news results have been seen to give `published_date`."""
    return format_datetime(datetime.fromisoformat(day).replace(tzinfo=UTC), usegmt=True)


class WorldSite(StandIn):
    """Serves the world's pages (HTML with their headers, the PDF as application/pdf).
    `served` lists every path asked for, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.pages = world_pages()
        self.served: list[str] = []

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        route = path.split("?")[0].split("#")[0]
        self.served.append(route)
        page = self.pages.get(route)
        if page is None:
            return Reply(404, raw=b"<html><body><h1>Not found</h1></body></html>")
        return Reply(200, raw=page.body, content_type=page.content_type, headers=page.headers)


class WorldSearch(StandIn):
    """Tavily's `POST /search` (and `GET /usage`) over the world's searchable pages.
    `returned` lists (query, [url...]) for every search answered."""

    def __init__(self, site_url: str) -> None:
        super().__init__()
        self.site_url = site_url
        self.index = [
            (page, stems(page.title), stems(page.text))
            for page in world_pages().values()
            if page.searchable
        ]
        self.returned: list[tuple[str, list[str]]] = []

    def ranked(self, query: str) -> list[Page]:
        """The searchable pages that share a word with `query`, best first."""
        wanted = stems(query)
        scored = []
        for page, title, text in self.index:
            score = sum(3 * (w in title) + (w in text) for w in wanted)
            if score:
                tie = hashlib.sha256(f"{query}\n{page.path}".encode()).hexdigest()
                scored.append((-score, tie, page))
        return [page for _, _, page in sorted(scored, key=lambda item: item[:2])]

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        if path.startswith("/usage"):
            return Reply(200, {"account": {"plan_usage": 0, "plan_limit": 1000}})
        if not headers.get("authorization", "").startswith("Bearer "):
            return Reply(401, {"detail": {"error": "missing key"}})
        query = str(body.get("query", ""))
        count = max(1, min(int(body.get("max_results") or 5), 20))
        pages = self.ranked(query)[:count]
        results = []
        for n, page in enumerate(pages):
            hit = {
                "url": f"{self.site_url}{page.path}",
                "title": page.title,
                "content": page.lead[:300],
                "score": round(0.95 - 0.05 * n, 2),
            }
            if page.published:
                hit["published_date"] = http_date(page.published)
            results.append(hit)
        self.returned.append((query, [hit["url"] for hit in results]))
        return Reply(200, {"query": query, "results": results, "response_time": 0.01})
