"""A stand-in web site whose pages search results point at: HTML, PDF, redirects, big and slow.

Paths: `/<anything>` an HTML article (nav, script and the text), `/paper.pdf` a two-page PDF,
`/redirect?to=URL` a 302 to URL, `/big` more HTML than any size cap, `/slow` an answer after
`slow_seconds`, `/missing` a 404, `/gzip` a page compressed unasked, `/binary` an image,
`/long` an article whose last paragraph (past 6,000 characters) says "Omega is 77".
`pages` maps more paths to HTML of a test's own, `replies` to answers of its own (a PDF, a
header); `served` lists the paths actually answered.
"""

from __future__ import annotations

import gzip
import time

from stand_ins.documents import make_pdf
from stand_ins.loopback import Reply, StandIn

ARTICLE = """<!DOCTYPE html><html><head><title>{title}</title><script>track()</script></head>
<body><nav><a href="/">Home</a> <a href="/about">About</a></nav>
<h1>{title}</h1><p>Some unrelated opening words about the site and its history.</p>
<h2>Measurements</h2><p>The whole page says that zstd level 19 compresses the logs 11.2x,
at 4 MB/s, on the page {path}.</p>
<h2>Other</h2><p>Cookie settings and a newsletter form nobody reads.</p>
</body></html>"""


class PageServer(StandIn):
    """Knobs: slow_seconds; `served` is every path answered, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.slow_seconds = 3.0
        self.served: list[str] = []
        self.pages: dict[str, str] = {}  # path -> HTML served as is (planted pages)
        self.replies: dict[str, Reply] = {}  # path -> a planted answer (a PDF, headers)

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        self.served.append(path)
        route = path.split("?")[0]
        if route in self.replies:
            return self.replies[route]
        if route in self.pages:
            return Reply(200, raw=self.pages[route].encode())
        if route == "/paper.pdf":
            pdf = make_pdf(
                ["Abstract: a paper on log compression.", "zstd level 19 gives 11.2x on logs."],
                "Log paper",
            )
            return Reply(200, raw=pdf, content_type="application/pdf")
        if route == "/redirect":
            return Reply(302, raw=b"", headers={"Location": body.get("to", "/")})
        if route == "/big":
            filler = "<p>" + "lorem ipsum " * 1000 + "</p>"
            return Reply(200, raw=("<html><body>" + filler * 500 + "</body></html>").encode())
        if route == "/long":
            filler = "".join(
                f"<p>Paragraph {n} on nothing in particular, words words.</p>" for n in range(150)
            )
            return Reply(
                200, raw=f"<html><body>{filler}<p>Finally, Omega is 77.</p></body></html>".encode()
            )
        if route == "/slow":
            time.sleep(self.slow_seconds)
        if route == "/missing":
            return Reply(404, raw=b"<html><body>Not here</body></html>")
        if route == "/gzip":  # a server that compresses whatever the client asked for
            page = gzip.compress(ARTICLE.format(title="Zipped", path=route).encode())
            return Reply(200, raw=page, headers={"Content-Encoding": "gzip"})
        if route == "/binary":
            return Reply(200, raw=b"\x89PNG\r\n\x1a\n....", content_type="image/png")
        page = ARTICLE.format(title=f"Article {route}", path=route)
        return Reply(200, raw=page.encode())
