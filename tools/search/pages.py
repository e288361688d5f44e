"""Whole pages when snippets are thin: the top hits' pages read, guarded, within a budget.

A page is fetched over httpcore through `GuardedBackend` (no private, loopback or link-local
target unless `fetch_private_addresses`), with a size cap, a timeout, at most five redirects
(each one checked again) and no proxy. HTML and PDF are read by the extractors the local corpus
uses; the passages that best match the query replace the thin snippet. The text joins the hit,
so it is cached with the search, fenced as untrusted like every hit, and each URL is fetched
once per run. A page that cannot be read leaves its hit as the provider returned it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import re
import ssl
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from itertools import accumulate
from typing import NamedTuple
from urllib.parse import urldefrag, urljoin, urlsplit

import httpcore
import httpx

from deep_research.domain.control_chars import without_any_controls, without_controls
from deep_research.domain.dates import page_date
from deep_research.domain.lexical import support_score
from deep_research.domain.source_filter import SourceFilter
from deep_research.settings import Settings
from deep_research.state import SearchHit
from deep_research.tools.corpus.passages import blocks_of, passages_of
from deep_research.tools.corpus.reading import (
    Document,
    SkippedFile,
    decode_text,
    read_html,
    read_pdf,
)
from deep_research.tools.search.base import SearchBackend
from deep_research.tools.search.guard import FetchRefused, GuardedBackend
from deep_research.tools.secrets import redact, redacted_at_once

MAX_LINK_CHARS = 400  # a longer link (a playground's code in its query) is not one to follow
MAX_PDF_PAGES = 60  # pages of a PDF read from the web, at most (its bytes: page_max_bytes)
THIN_SNIPPET_CHARS = 600  # a hit whose content is shorter than this is worth its page
PAGE_CHARS = 4000  # page text kept per hit: the best passages, in page order
PASSAGE_BREAK = "\n\n"  # between a page's passages in its text
MAX_REDIRECTS = 5
REDIRECTS = frozenset({301, 302, 303, 307, 308})
HEADERS = [
    (b"User-Agent", b"deep-research (page reader)"),
    (b"Accept", b"text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8"),
    (b"Accept-Encoding", b"identity"),  # httpcore does not decode; the cap counts real bytes
]
FETCH_ERRORS = (
    FetchRefused,
    httpcore.NetworkError,
    httpcore.TimeoutException,
    httpcore.ProtocolError,
    httpcore.UnsupportedProtocol,
    SkippedFile,
    TimeoutError,
    OSError,
    httpx.InvalidURL,  # an address (or a redirect's Location) that names no valid URL
    ValueError,  # urljoin's and IDNA's word for the same
)

log = logging.getLogger(__name__)


class PageTooLarge(SkippedFile):
    """A PDF over the size cap: a truncated PDF cannot be read."""


HTML_TYPES = ("text/html", "application/xhtml+xml")


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> str:
    """One response header's value (case-insensitive), decoded; empty when absent."""
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1")
    return ""


def read_page(data: bytes, content_type: str, url: str, seconds: float = 10.0) -> Document:
    """A fetched body as a Document: PDF, HTML or plain text by its declared type and its bytes.

    A declared type we do not read (an image, an archive) is refused whatever the body starts
    with; only an undeclared or generic type is decided by the bytes alone.
    """
    kind = content_type.split(";")[0].strip().lower()
    undeclared = kind in ("", "application/octet-stream")
    if kind == "application/pdf" or (
        (undeclared or kind == "text/plain") and data.startswith(b"%PDF-")
    ):
        return read_pdf(data, MAX_PDF_PAGES)
    looks_html = data.lstrip()[:1] == b"<"
    if kind in HTML_TYPES or ((undeclared or kind.startswith("text/")) and looks_html):
        return read_html(data, seconds)
    if kind.startswith("text/"):
        return Document(kind="text", title="", text=decode_text(data))
    raise SkippedFile(f"{url} is {kind or 'of no stated type'}, not a page we read")


def page_passages(document: Document) -> list[str]:
    """A page's text as the corpus splits it: passages of about a thousand characters."""
    return [p.text for p in passages_of(blocks_of(document)) if p.text.strip()]


def best_passages(passages: Sequence[str], query: str, limit: int = PAGE_CHARS) -> str:
    """The passages that share most words with the query, up to `limit` chars, in page order."""
    ranked = sorted(range(len(passages)), key=lambda i: (-support_score(query, passages[i]), i))
    kept, used = [], 0
    for index in ranked:
        if used + len(passages[index]) > limit and kept:
            continue
        kept.append(index)
        used += len(passages[index]) + 2
    return "\n\n".join(passages[i] for i in sorted(kept))[:limit]


class FoundLink(NamedTuple):
    """A link of a page read: an absolute http(s) URL, its anchor text, the words around it,
    whether it stands in the running text. A worker makes `state.PageLink`s of those it keeps."""

    url: str
    text: str = ""
    context: str = ""
    in_text: bool = False


PlainLink = tuple[str, str, str, bool]
"""A `FoundLink`'s values in a plain tuple, as a page read is kept for the whole run: a tuple of
plain values (not a subclass of one) is one the garbage collector stops walking, and a page may
hold 500 links (as pydantic models, 1,000 objects each full collection walked again). The
page's passages and links are tuples too, untracked in turn once their items are: a list is
walked item by item at every full collection for as long as the run keeps the page."""


@dataclass(frozen=True)
class FetchedPage:
    """A page as read: its text (its passages in page order, a blank line between them), its
    title, its links (absolute http(s) URLs, resolved against the address it came from, with
    their words), the date it states; `error` says why it is empty.

    The text is held once, for the run's reader and its evidence alike (the passages are cut
    from it when asked): a run holds every page it read until it ends."""

    text: str = ""
    ends: tuple[int, ...] = ()  # where each passage ends in `text`
    title: str = ""
    links: tuple[PlainLink, ...] = ()
    error: str = ""
    published: str = ""

    @classmethod
    def of(cls, passages: Sequence[str], **fields: object) -> FetchedPage:
        """The page whose passages are `passages`, with its other `fields`."""
        ends = tuple(accumulate(len(p) + len(PASSAGE_BREAK) for p in passages))
        text = PASSAGE_BREAK.join(passages)
        return cls(text, tuple(end - len(PASSAGE_BREAK) for end in ends), **fields)

    @property
    def passages(self) -> tuple[str, ...]:
        """Its passages in page order, as they were read."""
        starts = (0, *(end + len(PASSAGE_BREAK) for end in self.ends))[: len(self.ends)]
        return tuple(self.text[start:end] for start, end in zip(starts, self.ends, strict=True))

    def found_links(self) -> list[FoundLink]:
        """Its links with their fields named, made when a worker reads the page."""
        return [FoundLink._make(link) for link in self.links]


@dataclass(frozen=True)
class Fetched:
    """A response as fetched: its body (capped), content type, final URL, Last-Modified."""

    data: bytes
    content_type: str
    url: str
    last_modified: str = ""


_WITH_HOST = re.compile(r"(?:[a-zA-Z][a-zA-Z0-9+.-]*:)?//[^/?#]")
"""An href that names its host (`https://x/...`, `//x/...`): what it reads as depends on the
page's scheme alone (an empty host, `https://?q`, takes the page's path)."""


@functools.lru_cache(maxsize=4096)
def _followable(base: str, href: str) -> str | None:
    """`href` read against `base`: an absolute http(s) URL without its fragment, of at most
    `MAX_LINK_CHARS`, or None. Kept for the next page: a site's navigation and footer repeat on
    every page of it (an href from its root or with its own host is read against the site's
    origin alone, so it is resolved once per site; a relative one once per page)."""
    try:
        url = urldefrag(urljoin(base, href)).url
    except ValueError:  # a malformed href (an invalid IPv6 host): not a link we can follow
        return None
    if urlsplit(url).scheme not in ("http", "https") or len(url) > MAX_LINK_CHARS:
        return None
    return url


def page_links(document: Document, base: str) -> list[FoundLink]:
    """A document's links as absolute http(s) URLs (of at most `MAX_LINK_CHARS`) with their
    words, in page order, first occurrence kept (one in the text wins over the same URL in a
    list), fragments dropped."""
    seen: dict[str, FoundLink] = {}
    parts = urlsplit(base)
    origin = f"{parts.scheme}://{parts.netloc}"
    for link in document.links:
        href = without_any_controls(link.href)
        # an href from the root, or with its own host, reads the same against the site's origin
        rooted = href.startswith("/") and not href.startswith("//")
        sited = rooted or _WITH_HOST.match(href) is not None
        # an href longer than a URL we keep is resolved, never kept: the cache outlives runs
        resolve = _followable if len(href) <= MAX_LINK_CHARS else _followable.__wrapped__
        if (url := resolve(origin if sited else base, href)) is None:
            continue
        found = FoundLink(
            url=url,
            text=without_any_controls(link.text),
            context=without_any_controls(link.context),
            in_text=link.in_text,
        )
        if url not in seen or (found.in_text and not seen[url].in_text):
            seen[url] = found
    return list(seen.values())


def clean_passages(document: Document) -> list[str]:
    """A read document's passages as evidence holds them: no control characters, none empty."""
    return [text for text in map(without_controls, page_passages(document)) if text.strip()]


def _split(
    document: Document, url: str, allowed: SourceFilter, last_modified: str = ""
) -> FetchedPage:
    """A read document as passages, title, absolute links and date, as evidence may hold them
    (the door every hit passes, `domain.sources.admitted`): no control characters, and only
    the links the run's source filter lets it follow."""
    passages = tuple(clean_passages(document))
    found = page_links(document, url)
    links = tuple(tuple(link) for link in found if allowed.refusal(link.url) is None)
    title = " ".join(without_any_controls(document.title).split())
    headings = [block.heading for block in document.blocks if block.heading]
    published = page_date(list(document.dates), list(document.times), headings, last_modified)
    return FetchedPage.of(passages, title=title, links=links, published=published)


_tally: ContextVar[list[int] | None] = ContextVar("page_fetch_tally", default=None)


@contextlib.contextmanager
def counted_fetches() -> Iterator[list[int]]:
    """Count the page fetches started inside the block, by this task and the tasks it starts
    (a search whose thin hits are read whole): `[n]`. What a step spent on pages travels with
    its usage into state, where a resumed run finds it."""
    tally = [0]
    token = _tally.set(tally)
    try:
        yield tally
    finally:
        _tally.reset(token)


OnRead = Callable[[str, "Answer", str], Awaitable[None]]  # URL asked, last answer, kept text


class PageFetcher:
    """Reads pages for one run: each URL once (concurrent asks share it), within a budget. A
    link found on several pages (a site's navigation and footer) is kept once.

    `book` is the run's page budget (`RunLedger.take_page`): called as a fetch starts, False
    once it is spent. Without one, the fetcher counts its own fetches against
    `max_page_fetches`. `on_read` is handed every page read, as the run keeps it (redacted):
    the run's evidence.
    """

    def __init__(
        self,
        settings: Settings,
        tls: ssl.SSLContext | None = None,
        book: Callable[[], bool] | None = None,
        on_read: OnRead | None = None,
    ) -> None:
        self._settings = settings
        self._on_read = on_read
        self._allowed = SourceFilter.of(settings)  # the run's include/exclude domains
        self._tls = tls  # the process's TLS context; None builds one per connection
        self._pages: dict[str, asyncio.Future[FetchedPage] | FetchedPage] = {}
        self._links: dict[PlainLink, PlainLink] = {}  # each link once, whatever page it is on
        self._book = book or self._own_count
        self.sent = 0  # fetches this fetcher started

    def _own_count(self) -> bool:
        """The budget of a fetcher without a run ledger: its own fetches."""
        return self.sent < self._settings.max_page_fetches

    async def text(self, url: str, query: str) -> str:
        """The page's best passages for the query; empty when refused, unreadable or over budget."""
        return best_passages(await self.passages(url), query)

    async def whole(self, url: str) -> str:
        """The page's whole text, every passage in page order (no `PAGE_CHARS` cut); empty
        when refused, unreadable or over budget."""
        return (await self.page(url)).text

    async def passages(self, url: str) -> tuple[str, ...]:
        """The page's passages, fetched once per URL; none when refused, unreadable or over
        budget."""
        return (await self.page(url)).passages

    async def page(self, url: str) -> FetchedPage:
        """The page read whole (passages, title, links), fetched once per URL; no passages and
        the reason when refused, unreadable or over the run's page budget."""
        known = self._pages.get(url)
        if isinstance(known, FetchedPage):
            return known
        if known is None:
            if not self._book():
                return FetchedPage(error="the run's page budget (max_page_fetches) is spent")
            self.sent += 1
            if (tally := _tally.get()) is not None:
                tally[0] += 1
            known = self._pages[url] = asyncio.ensure_future(self._read(url))
            known.add_done_callback(functools.partial(self._settled, url))
        return await asyncio.shield(known)

    def _settled(self, url: str, reading: asyncio.Future[FetchedPage]) -> None:
        """A read that has ended is kept as its page, not as its task: a task holds the context
        it was made in for as long as it lives, here the asking step's LangGraph config (its
        runtime, scratchpad and callbacks, some 15 kB), for the rest of the run."""
        if not reading.cancelled() and reading.exception() is None:
            self._pages[url] = reading.result()

    async def _read(self, url: str) -> FetchedPage:
        """Fetch and split, turning every failure into no passages (and a log line); a page
        read is handed to `on_read` (the run's evidence) as the run keeps it."""
        try:
            seconds = self._settings.page_timeout
            deadline = time.monotonic() + seconds
            async with asyncio.timeout(seconds):
                answer = await self.answer(url)
            got = _readable(answer)
            left = max(0.0, deadline - time.monotonic())  # parsing counts against the timeout too
            page = await asyncio.to_thread(  # parsing a big page must not stall the others
                lambda: _split(
                    read_page(got.data, got.content_type, got.url, left),
                    got.url,
                    self._allowed,
                    got.last_modified,
                )
            )
            # where a page's text enters: a page that shows a key we hold is kept without it
            links = tuple(
                self._links.setdefault(link, link) for link in redacted_at_once(page.links)
            )
            page = FetchedPage.of(
                redacted_at_once(page.passages),
                title=redact(page.title),
                links=links,
                published=page.published,
            )
        except FETCH_ERRORS as error:
            log.info("page not read: %s: %s: %s", url, type(error).__name__, error)
            return FetchedPage(error=redact(f"{type(error).__name__}: {error}")[:300])
        if self._on_read is not None and page.text:
            await self._on_read(url, answer, page.text)
        return page

    async def fetch(self, url: str) -> Fetched:
        """The body (at most `page_max_bytes`), its content type, the URL it came from and its
        Last-Modified header."""
        return _readable(await self.answer(url))

    async def answer(self, url: str, extra: tuple[tuple[bytes, bytes], ...] = ()) -> Answer:
        """The last answer to a GET of `url` (redirects followed, each hop checked), whatever
        its status; `extra` headers go with every hop (a re-check's validators)."""
        backend = GuardedBackend(allow_private=self._settings.fetch_private_addresses)
        pool = httpcore.AsyncConnectionPool(network_backend=backend, ssl_context=self._tls)
        async with pool:
            for _ in range(MAX_REDIRECTS + 1):
                if urlsplit(url).scheme not in ("http", "https"):
                    raise FetchRefused(f"{url}: only http and https pages are fetched")
                if refused := self._allowed.refusal(url):  # every hop: redirects too
                    raise FetchRefused(f"{url}: {refused}")
                status, headers, data = await self._get(pool, url, extra)
                location = _header(headers, b"location")
                if status in REDIRECTS and location:
                    url = urljoin(url, location)
                    continue
                return Answer(status, headers, data, url)
        raise SkippedFile(f"{url}: more than {MAX_REDIRECTS} redirects")

    async def _get(
        self, pool: httpcore.AsyncConnectionPool, url: str, extra: tuple = ()
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """One GET: status, headers and up to `page_max_bytes` of the body."""
        cap, seconds = self._settings.page_max_bytes, self._settings.page_timeout
        timeouts = {"connect": seconds, "read": seconds, "write": seconds, "pool": seconds}
        wire = str(httpx.URL(url))  # an IRI (例え.jp/パス) as the URI it names: IDNA, %-encoded
        async with pool.stream(
            "GET", wire, headers=[*HEADERS, *extra], extensions={"timeout": timeouts}
        ) as response:
            if response.status in REDIRECTS:
                return response.status, response.headers, b""
            chunks, size = [], 0
            async for chunk in response.aiter_stream():
                chunks.append(chunk)
                size += len(chunk)
                if size >= cap:
                    break
        data = b"".join(chunks)[:cap]
        if size >= cap and data.startswith(b"%PDF-"):
            raise PageTooLarge(f"{url} is a PDF over page_max_bytes ({cap})")
        return response.status, response.headers, data


@dataclass(frozen=True)
class Answer:
    """A server's last answer to a GET (redirects followed): status, headers, body, address."""

    status: int
    headers: list[tuple[bytes, bytes]]
    data: bytes
    url: str

    def header(self, name: bytes) -> str:
        """One header's value (case-insensitive), "" when absent."""
        return _header(self.headers, name)


def _readable(answer: Answer) -> Fetched:
    """An answer as a page we read (body, content type, address, Last-Modified); else
    SkippedFile naming why (a status other than 200, an encoding we did not ask for)."""
    if answer.status != 200:
        raise SkippedFile(f"{answer.url} answered HTTP {answer.status}")
    encoding = answer.header(b"content-encoding").strip().lower()
    if encoding not in ("", "identity"):
        raise SkippedFile(f"{answer.url} came {encoding}-encoded though we asked for none")
    content_type = answer.header(b"content-type")
    return Fetched(answer.data, content_type, answer.url, answer.header(b"last-modified"))


def answer_text(answer: Answer, seconds: float) -> str:
    """An answer's text as a run keeps a page's (its passages in page order, redacted as
    where a page's text enters); SkippedFile when it is no page we read (another status, an
    image)."""
    got = _readable(answer)
    return kept_text(read_page(got.data, got.content_type, got.url, seconds))


def kept_text(document: Document) -> str:
    """A read document's text as a run keeps it (its passages in page order, redacted as where
    a page's text enters): what a re-read compares with what the run read."""
    return PASSAGE_BREAK.join(redacted_at_once(tuple(clean_passages(document))))


class WholePages:
    """A search backend whose thin top hits carry their page's best passages (and its date,
    when the provider gave none)."""

    def __init__(self, backend: SearchBackend, fetcher: PageFetcher, per_search: int) -> None:
        self._backend, self._fetcher, self._per_search = backend, fetcher, per_search

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        """The backend's hits; the top `per_search` thin ones read in full, all at once."""
        hits = await self._backend.search(query, max_results)
        thin = [
            i
            for i, hit in enumerate(hits[: self._per_search])
            if len(hit.content) < THIN_SNIPPET_CHARS and hit.url.startswith(("http:", "https:"))
        ]
        pages = await asyncio.gather(*(self._fetcher.page(hits[i].url) for i in thin))
        for index, page in zip(thin, pages, strict=True):
            if text := best_passages(page.passages, query):
                content = f"{hits[index].content}\n\n{text}".strip()
                published = hits[index].published or page.published
                update = {"content": content, "published": published}
                hits[index] = hits[index].model_copy(update=update)
        return hits
