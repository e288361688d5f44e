"""A stand-in for DuckDuckGo's HTML endpoint: `POST /html/` with form `q`, `b`, `l`, `s`.

The markup is the result list html.duckduckgo.com serves: `div.result > div.result__body`
holding `h2.result__title > a.result__a`, then `a.result__snippet`; links either direct or
wrapped as `//duckduckgo.com/l/?uddg=<quoted target>&rut=...`; ads link to `duckduckgo.com/
y.js`. Page one holds ten results and `s` is the offset of later pages. When it wants a client
to slow down it answers 202 with its anomaly page.
"""

from __future__ import annotations

from html import escape
from urllib.parse import quote

from stand_ins.loopback import Reply, StandIn
from stand_ins.search import slug

FIRST_PAGE = 10

RESULT = """<div class="result results_links results_links_deep web-result ">
<div class="links_main links_deep result__body">
<h2 class="result__title"><a rel="nofollow" class="result__a" href="{href}">{title}</a></h2>
<div class="result__extras"><div class="result__extras__url">
<a class="result__url" href="{href}">{display}</a></div></div>
<a class="result__snippet" href="{href}">{snippet}</a>
<div class="clear"></div>
</div></div>"""

AD_HREF = "https://duckduckgo.com/y.js?ad_domain=ads.example&amp;u3=x"
AD = f"""<div class="result results_links results_links_deep result--ad ">
<div class="links_main links_deep result__body">
<h2 class="result__title"><a class="result__a" href="{AD_HREF}">Buy now</a></h2>
<a class="result__snippet" href="{AD_HREF}">An ad</a>
</div></div>"""

PAGE = """<!DOCTYPE html><html><head><title>{q} at DuckDuckGo</title></head><body>
<div class="serp__results"><div id="links" class="results">{ads}{results}</div></div>
</body></html>"""

ANOMALY = b"""<!DOCTYPE html><html><body><div class="anomaly-modal__title">Unfortunately,
bots use DuckDuckGo too.</div><form id="challenge-form" action="/anomaly.js"></form>
</body></html>"""


class DuckDuckGoServer(StandIn):
    """Knobs: total (results a query has), page_base, rate_limited, fault."""

    def __init__(self) -> None:
        super().__init__()
        self.total = 14
        self.page_base = "https://example.net"
        self.rate_limited = 0  # the next N requests get the anomaly page
        self.fault = lambda number, body: None
        self._count = 0

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        self._count += 1
        if path.split("?")[0] != "/html/":
            return Reply(404, raw=b"Not Found")
        if self.rate_limited:
            self.rate_limited -= 1
            return Reply(202, raw=ANOMALY)
        injected = self.fault(self._count, body)
        if injected is not None:
            return injected
        query = body.get("q", "")
        if not query:
            return Reply(200, raw=PAGE.format(q="", ads="", results="").encode())
        start = int(body.get("s") or 0)
        size = FIRST_PAGE if start == 0 else 15
        total = 0 if "nothing" in query else self.total
        numbers = range(start + 1, min(start + size, total) + 1)
        results = "\n".join(self._result(query, n) for n in numbers)
        ads = AD if numbers else ""
        return Reply(200, raw=PAGE.format(q=escape(query), ads=ads, results=results).encode())

    def _result(self, query: str, n: int) -> str:
        url = f"{self.page_base}/{slug(query)}/{n}?lang=en&page={n}"
        href = url if n % 2 else f"//duckduckgo.com/l/?uddg={quote(url, safe='')}&rut=abc{n}"
        return RESULT.format(
            href=escape(href),
            title=f"{escape(query)} &mdash; <b>result</b> {n}",
            display=escape(url.split("//")[1]),
            snippet=f"Result {n} about <b>{escape(query)}</b>: the figure is {n * 7}.",
        )

    def result_url(self, query: str, n: int) -> str:
        return f"{self.page_base}/{slug(query)}/{n}?lang=en&page={n}"

    @property
    def queries(self) -> list[str]:
        return [r["body"]["q"] for r in self.requests if r["status"] == 200]
