"""How long a deeply nested HTML page takes to read: the page reader and the corpus (issue 20).

Prints, for pages nested N elements deep with text at every level, the seconds `read_html`
takes, and the seconds the local corpus takes to index one such file of 64 KB. The page reader
works within `page_timeout` (default 20 s); the old parser (BeautifulSoup plus a parent walk per
text node) took 5.5 s on 8 KB and 73 s on 32 KB.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.corpus import LocalCorpus
from tools.corpus.reading import read_html


def nested(size: int) -> bytes:
    """A page of about `size` bytes, every element inside the one before, text in each."""
    depth = size // 13
    return b"<html><body>" + b"<div>x " * depth + b"</div>" * depth


def main() -> None:
    for size in (8_000, 16_000, 32_000, 64_000, 2_000_000):
        page = nested(size)
        start = time.perf_counter()
        read_html(page)
        print(f"read_html  {len(page):>9,} bytes nested   {time.perf_counter() - start:6.3f} s")
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as out:
        Path(folder, "deep.html").write_bytes(nested(64_000))
        start = time.perf_counter()
        corpus = LocalCorpus(Path(folder), Path(out, "index.sqlite"))
        corpus.refresh()
        print(f"corpus index of a 64 KB nested page          {time.perf_counter() - start:6.3f} s")


if __name__ == "__main__":
    main()
