"""A cited source read again: a page through the guarded page reader, sending the validators its
server gave (`If-None-Match`, `If-Modified-Since`: a 304 answer costs nothing and proves the page
unchanged), bounded in time and bytes like every page read; a local document from its file (its
size and modification time stand in for validators). A tool's answer has no address to read
again.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from urllib.parse import urlsplit

from deep_research.tools.corpus.reading import SkippedFile, read_document
from deep_research.tools.evidence.reads import PageRead
from deep_research.tools.local_search import file_validators, path_of
from deep_research.tools.search.pages import FETCH_ERRORS, PageFetcher, answer_text, kept_text


@dataclass(frozen=True)
class Reread:
    """What reading a source again gave: the status (None: no answer; 304: not modified), where
    it answered from, its text now ("" unless it was read), whether validators went with it."""

    status: int | None
    final_url: str = ""
    text: str = ""
    conditional: bool = False
    note: str = ""
    etag: str = ""  # the validators the server sends now
    last_modified: str = ""

    def as_read(self, before: PageRead) -> PageRead:
        """The text read now as a read of the same source (for what is kept of it next)."""
        return PageRead(
            url=before.url,
            kind="page" if before.kind in ("page", "snippet") else before.kind,
            text=self.text,
            final_url=self.final_url,
            status=self.status,
            etag=self.etag,
            last_modified=self.last_modified,
        )


def validators(read: PageRead) -> tuple[tuple[bytes, bytes], ...]:
    """The conditional headers a read's validators make (none when its server sent none)."""
    headers = []
    if read.etag:
        headers.append((b"If-None-Match", read.etag.encode("latin-1", errors="replace")))
    if read.last_modified:
        headers.append(
            (b"If-Modified-Since", read.last_modified.encode("latin-1", errors="replace"))
        )
    return tuple(headers)


async def reread(read: PageRead, fetcher: PageFetcher, seconds: float) -> Reread:
    """Read a source again, within `seconds`: a failure is an answer (status None, its note)."""
    scheme = urlsplit(read.url).scheme.lower()
    if scheme == "file":
        return await asyncio.to_thread(_reread_file, read)
    if scheme not in ("http", "https"):
        return Reread(None, note="a tool's answer: it has no address to read again")
    headers = validators(read)
    try:
        async with asyncio.timeout(seconds):
            answer = await fetcher.answer(read.url, headers)
            if answer.status != 200:
                return Reread(answer.status, answer.url, conditional=bool(headers))
            text = await asyncio.to_thread(answer_text, answer, seconds)
    except FETCH_ERRORS as error:
        note = f"{type(error).__name__}: {error}"[:300]
        return Reread(None, conditional=bool(headers), note=note)
    return Reread(
        200,
        answer.url,
        text,
        conditional=bool(headers),
        etag=answer.header(b"etag"),
        last_modified=answer.header(b"last-modified"),
    )


def _reread_file(read: PageRead) -> Reread:
    """A local document read again: unchanged when its size and time are, gone when missing."""
    path = path_of(read.url)
    if not path.is_file():
        return Reread(404, read.url, note=f"{path} is no longer there")
    etag, modified = file_validators(path)
    if read.etag and etag == read.etag:
        return Reread(304, read.url, conditional=True)
    try:
        document = read_document(path)
    except (SkippedFile, OSError) as error:
        return Reread(None, note=f"{path} cannot be read: {error}"[:300])
    text = kept_text(document)  # as a run keeps what it reads
    return Reread(200, read.url, text, conditional=True, etag=etag, last_modified=modified)
