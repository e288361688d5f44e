"""A stand-in Tavily search server: deterministic results per query, failures on demand."""

from __future__ import annotations

import re

from stand_ins.loopback import Reply, StandIn


def slug(text: str) -> str:
    return re.sub(r"[^\w]+", "-", text.casefold()).strip("-")[:60] or "q"


class SearchServer(StandIn):
    """Knobs: fail_all, latency, results_per_query, page_text (content override), url_for,
    published_for (a hit's `published_date`)."""

    def __init__(self) -> None:
        super().__init__()
        self.set_knobs()

    def set_knobs(self) -> None:
        """Every knob at its default, the request count at zero."""
        self.fail_all = False
        self.fault = lambda number, body: None
        self.page_text = lambda query, n: f"Evidence {n} about {query}: the figure is {n * 7}."
        self.url_for = lambda query, n: f"https://example.com/{slug(query)}/{n}"
        self.published_for = lambda query, n: ""  # Tavily's `published_date` (news), if any
        self.bad_keys: set[str] = set()
        self.plan_used_up = False
        self._count = 0

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        self._count += 1
        if not headers.get("authorization", "").startswith("Bearer "):
            return Reply(401, {"detail": {"error": "missing key"}})
        if path == "/usage":  # Tavily's free usage query (GET), which the CLI checks keys with
            return self.usage(headers["authorization"].removeprefix("Bearer "))
        if self.fail_all:
            return Reply(500, {"detail": {"error": "search is down"}})
        injected = self.fault(self._count, body)
        if injected is not None:
            return injected
        query = body["query"]
        results = [
            {
                "url": self.url_for(query, n),
                "title": f"{query} — page {n}",
                "content": self.page_text(query, n),
                "score": round(1 - n / 10, 2),
            }
            | ({"published_date": date} if (date := self.published_for(query, n)) else {})
            for n in range(1, min(int(body.get("max_results", 5)), 5) + 1)
        ]
        return Reply(200, {"query": query, "results": results, "response_time": 0.01})

    def usage(self, key: str) -> Reply:
        """`GET /usage` as Tavily answers it; `bad_keys` get 401, `plan_used_up` gives 432."""
        if key in self.bad_keys:
            return Reply(401, {"detail": {"error": "Unauthorized: missing or invalid API key."}})
        if self.plan_used_up:
            return Reply(432, {"detail": {"error": "This request exceeds your plan's limit."}})
        account = {"current_plan": "Researcher", "plan_usage": self._count, "plan_limit": 1000}
        return Reply(200, {"key": {"usage": self._count, "limit": None}, "account": account})

    @property
    def searches(self) -> list[dict]:
        return [r for r in self.requests if r["path"] != "/usage"]

    @property
    def queries(self) -> list[str]:
        return [r["body"]["query"] for r in self.searches if r["status"] == 200]
