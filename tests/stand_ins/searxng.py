"""A stand-in SearXNG instance: `GET /search?format=json&pageno=N`, as its webapp answers.

From searx/webapp.py: a format not in `search.formats` is a bare 403 (checked before the
query); no `q` is 400 `{"error": "No query"}`; a bad `pageno` is 400. The JSON holds `query`,
`results` (url, title, content, engine, engines, score...), `answers`, `corrections`,
`infoboxes`, `suggestions` and `unresponsive_engines` as `[engine, message]` pairs. With its
limiter on, a client whose User-Agent looks like a bot gets 429 "Too Many Requests".
"""

from __future__ import annotations

import re

from stand_ins.loopback import Reply, StandIn
from stand_ins.search import slug

BOT_AGENTS = re.compile(r"[Cc][Uu][Rr][Ll]|[wW]get|python-requests|Python|HttpClient|Go-http")
PER_PAGE = 8


class SearxngServer(StandIn):
    """Knobs: json_enabled, limiter, total, unresponsive, page_base, fault."""

    def __init__(self) -> None:
        super().__init__()
        self.json_enabled = True
        self.limiter = False
        self.total = 12
        self.unresponsive: list[list[str]] = []
        self.page_base = "https://example.org"
        self.fault = lambda number, body: None
        self._count = 0

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        self._count += 1
        if path.split("?")[0] != "/search":
            return Reply(404, raw=b"Not Found")
        if self.limiter and BOT_AGENTS.search(headers.get("user-agent", "unknown")):
            return Reply(429, raw=b"Too Many Requests", content_type="text/plain")
        if body.get("format", "html") == "json" and not self.json_enabled:
            return Reply(403, raw=b"<!doctype html><title>403 Forbidden</title>")
        if body.get("format") != "json":
            return Reply(200, raw=b"<html><body>the HTML page</body></html>")
        if not body.get("q"):
            return Reply(400, {"error": "No query"})
        pageno = body.get("pageno", "1")
        if not pageno.isdigit() or int(pageno) < 1:
            return Reply(400, {"error": f'Invalid value "{pageno}" for parameter pageno'})
        injected = self.fault(self._count, body)
        if injected is not None:
            return injected
        query, page = body["q"], int(pageno)
        total = 0 if "nothing" in query else self.total
        numbers = range((page - 1) * PER_PAGE + 1, min(page * PER_PAGE, total) + 1)
        return Reply(
            200,
            {
                "query": query,
                "number_of_results": 0,
                "results": [self._result(query, n) for n in numbers],
                "answers": [],
                "corrections": [],
                "infoboxes": [],
                "suggestions": [],
                "unresponsive_engines": self.unresponsive,
            },
        )

    def _result(self, query: str, n: int) -> dict:
        url = f"{self.page_base}/{slug(query)}/{n}"
        return {
            "url": url,
            "title": f"{query} — result {n}",
            "content": f"Result {n} about {query}: the figure is {n * 7}.",
            "engine": "duckduckgo",
            "engines": ["duckduckgo", "brave"],
            "positions": [n],
            "score": round(4.0 / n, 3),
            "category": "general",
            "parsed_url": ["https", "example.org", f"/{slug(query)}/{n}", "", "", ""],
            "template": "default.html",
            "publishedDate": None,
            "thumbnail": "",
        }

    @property
    def queries(self) -> list[str]:
        return [r["body"]["q"] for r in self.requests if r["status"] == 200 and "q" in r["body"]]
