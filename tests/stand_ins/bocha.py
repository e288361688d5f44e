"""A stand-in Bocha web-search API: `POST /v1/web-search`, Bearer key, paging, its error bodies.

Shapes follow Bocha's API reference: request `{query, freshness, summary, count, page}`;
answer `{code: 200, log_id, msg, data: {_type, queryContext, webPages: {value: [...]}}}`;
errors as HTTP status plus `{code: "<status>", message, log_id}` (400 missing query or key,
401 invalid key, 403 no balance, 429 rate limit, 500).
"""

from __future__ import annotations

from stand_ins.loopback import Reply, StandIn
from stand_ins.search import slug

KEY = "sk-bocha-stand-in-4c2e91"


def error(status: int, message: str) -> Reply:
    """An error the way Bocha words it."""
    return Reply(status, {"code": str(status), "message": message, "log_id": "c66aac17eab1bb7e"})


class BochaServer(StandIn):
    """Knobs: key, balance, total (results a query has), page_base, summaries, fault."""

    def __init__(self) -> None:
        super().__init__()
        self.key = KEY
        self.balance = 100.0
        self.total = 15
        self.page_base = "https://example.com"
        self.summaries = True
        self.fault = lambda number, body: None
        self._count = 0

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        self._count += 1
        if path.split("?")[0] not in ("/v1/web-search", "/v1/fund/remaining"):
            return error(404, "Not Found")
        auth = headers.get("authorization", "")
        if not auth:
            return error(400, "The API KEY is missing")
        if auth != f"Bearer {self.key}":
            return error(401, "Invalid API KEY")
        if path == "/v1/fund/remaining":  # the free balance query, in yuan
            data = {"remaining": self.balance}
            return Reply(200, {"success": True, "code": "200", "msg": "", "data": data})
        if self.balance <= 0:
            return error(403, "You do not have enough money")
        if not body.get("query"):
            return error(400, "Missing parameter query")
        injected = self.fault(self._count, body)
        if injected is not None:
            return injected
        count, page = int(body.get("count", 10)), int(body.get("page", 1))
        if not 1 <= count <= 50:
            return error(400, "count must be between 1 and 50")
        query = body["query"]
        data = {"_type": "SearchResponse", "queryContext": {"originalQuery": query}}
        total = 0 if "nothing" in query else self.total
        numbers = range((page - 1) * count + 1, min(page * count, total) + 1)
        if total:
            data["webPages"] = {
                "webSearchUrl": "",
                "totalEstimatedMatches": total,
                "value": [self._page(query, n, body.get("summary") is True) for n in numbers],
                "someResultsRemoved": False,
            }
        return Reply(200, {"code": 200, "log_id": "d71841ad20095f61", "msg": None, "data": data})

    def _page(self, query: str, n: int, summary: bool) -> dict:
        url = f"{self.page_base}/{slug(query)}/{n}"
        item = {
            "id": None,
            "name": f"{query} — 第{n}页",
            "url": url,
            "displayUrl": url,
            "snippet": f"Snippet {n} about {query}...",
            "siteName": "example.com",
            "siteIcon": f"https://th.bochaai.com/favicon?domain_url={url}",
            "dateLastCrawled": "2024-07-22T00:00:00Z",
            "cachedPageUrl": None,
            "language": None,
            "isFamilyFriendly": None,
            "isNavigational": None,
        }
        if summary and self.summaries:
            item["summary"] = f"Summary {n} about {query}: the measured figure is {n * 7}."
        return item

    @property
    def searches(self) -> list[dict]:
        return [r for r in self.requests if r["path"] == "/v1/web-search"]

    @property
    def queries(self) -> list[str]:
        return [r["body"]["query"] for r in self.searches if r["status"] == 200]
