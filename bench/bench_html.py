"""How long a deeply nested HTML page takes to read: the page reader and the corpus (issue 20).

Prints, for pages nested N elements deep with text at every level, the seconds `read_html`
takes, and the seconds the local corpus takes to index one such file of 64 KB (after the
language model, which indexing loads once a process, is loaded: its load is printed apart).
The page reader works within `page_timeout` (default 20 s); the old parser (BeautifulSoup plus
a parent walk per text node) took 5.5 s on 8 KB and 73 s on 32 KB.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from deep_research.domain.language import detect_language
from deep_research.settings import Settings
from deep_research.tools.corpus import LocalCorpus
from deep_research.tools.corpus.reading import read_html
from deep_research.tools.search.pages import PageFetcher


def nested(size: int) -> bytes:
    """A page of about `size` bytes, every element inside the one before, text in each."""
    depth = size // 13
    return b"<html><body>" + b"<div>x " * depth + b"</div>" * depth


def serve(page: bytes) -> tuple[ThreadingHTTPServer, str]:
    """A 127.0.0.1 server that answers every GET with `page` as text/html."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/deep.html"


def through_fetch_pages(size: int, timeout: float) -> None:
    """The page reader (`--fetch-pages`) on a nested page served from loopback."""
    server, url = serve(nested(size))
    settings = Settings(fetch_private_addresses=True, page_timeout=timeout)
    start = time.perf_counter()
    text = asyncio.run(PageFetcher(settings).text(url, "x"))
    took = time.perf_counter() - start
    server.shutdown()
    print(
        f"PageFetcher {size:>9,} bytes nested, page_timeout {timeout:g} s: {took:6.3f} s, "
        f"{len(text):,} characters kept"
    )


def main() -> None:
    for size in (8_000, 16_000, 32_000, 64_000, 2_000_000):
        page = nested(size)
        start = time.perf_counter()
        read_html(page)
        print(f"read_html  {len(page):>9,} bytes nested   {time.perf_counter() - start:6.3f} s")
    start = time.perf_counter()
    detect_language("Each indexed file's language is detected; the model loads once.")
    print(f"language model load (once a process)           {time.perf_counter() - start:6.3f} s")
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as out:
        Path(folder, "deep.html").write_bytes(nested(64_000))
        start = time.perf_counter()
        corpus = LocalCorpus(Path(folder), Path(out, "index.sqlite"))
        corpus.refresh()
        print(f"corpus index of a 64 KB nested page          {time.perf_counter() - start:6.3f} s")
    through_fetch_pages(16_000, 3)
    through_fetch_pages(2_000_000, 3)


if __name__ == "__main__":
    main()
