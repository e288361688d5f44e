"""Text extraction per file type: one `Document` from one local file, or `SkippedFile` saying why.

Markdown, reStructuredText and plain text come back as their decoded text (`passages` finds
their headings); HTML and PDF come back as `Block`s, because only the parser sees their
structure: HTML headings h1-h6, PDF pages. Every read goes through `read_bytes`, which refuses to
follow a symlink, so a file swapped for a link after the folder walk is not read either.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
import struct
import time
import zlib
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Literal

from lxml import etree

from deep_research.tools.corpus.html_marks import DateMarks, Link, LinkTracker

Kind = Literal["markdown", "text", "rst", "html", "pdf"]

SUFFIXES: dict[str, Kind] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".rst": "rst",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
}

HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6")
DROPPED_TAGS = ("script", "style", "nav", "noscript", "template", "svg", "head")
BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "figcaption",
        "figure", "footer", "form", "header", "hr", "li", "main", "ol", "p", "pre", "section",
        "table", "td", "th", "tr", "ul",
    }
)  # fmt: skip

# Errors pypdf lets escape on malformed files besides its own (`pdf_errors`).
_MALFORMED_PDF_ERRORS = (
    ValueError,
    KeyError,
    TypeError,
    IndexError,
    AttributeError,
    RecursionError,
    struct.error,
    zlib.error,
)

LINK_BLOCKS = (BLOCK_TAGS - {"br", "hr"}) | set(HEADING_TAGS)  # what a link's context is read in
HTML_SECONDS = 10.0  # the longest one HTML file may take to parse
MAX_LINKS = 500  # links of one HTML page kept at most
MAX_HTML_DEPTH = 512  # text nested deeper than this is not page content anyone reads
_HTML_CHUNK = 64 * 1024  # parse in pieces, to look at the clock between them

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_FRONT_TITLE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.MULTILINE)
_SPACES = re.compile(r"[ \t\f\v\r\u00a0]+")
_BLANK_LINES = re.compile(r"\n\s*\n\s*")


class SkippedFile(Exception):
    """A file that cannot be indexed; the message says why, in words fit for a log line."""


@dataclass(frozen=True)
class Block:
    """Text under one heading (level 1-6, 0 before any heading), or one PDF page."""

    level: int
    heading: str
    text: str
    page: int | None = None


@dataclass(frozen=True)
class Document:
    """What a file says: its title ('' if it names none), raw text or parsed blocks."""

    kind: Kind
    title: str = ""
    text: str = ""
    blocks: tuple[Block, ...] = ()
    links: tuple[Link, ...] = ()  # an HTML page's links (href as written), in page order
    dates: tuple[str, ...] = ()  # published / modified dates its metadata states, raw
    times: tuple[str, ...] = ()  # an HTML page's `<time datetime>` values, in page order


def kind_of(path: Path) -> Kind | None:
    """The document kind a file name stands for, or None for files we do not read."""
    return SUFFIXES.get(path.suffix.lower())


def read_bytes(path: Path) -> bytes:
    """A file's bytes, never through a symlink (O_NOFOLLOW), as SkippedFile if the OS refuses.

    Opened without blocking (O_NONBLOCK), and read only if it is still a regular file: a FIFO or
    device swapped in after the folder walk would otherwise hold the read forever.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    flags |= getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise SkippedFile("is not a regular file (a pipe, socket or device)")
            return handle.read()
    except OSError as error:
        raise SkippedFile(f"cannot be read ({error.strerror or error})") from error


def decode_text(data: bytes) -> str:
    """Bytes as text: UTF-8 (BOM or not), UTF-16 with a BOM, else cp1252, else lossy UTF-8."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            pass
    if b"\x00" in data:
        raise SkippedFile("looks binary (it holds NUL bytes)")
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("utf-8", errors="replace")


def tidy(text: str) -> str:
    """Runs of spaces to one, blank-line runs to one blank line, outer whitespace gone."""
    lines = (_SPACES.sub(" ", line).strip() for line in text.split("\n"))
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def read_document(path: Path) -> Document:
    """The document in one file, by its suffix; SkippedFile if it cannot be read or is empty."""
    kind = kind_of(path)
    if kind is None:
        raise SkippedFile("is not a supported document type")
    data = read_bytes(path)
    if kind == "pdf":
        document = read_pdf(data)
    elif kind == "html":
        document = read_html(data)
    else:
        document = read_plain(decode_text(data), kind)
    if not (document.text.strip() or any(block.text for block in document.blocks)):
        raise SkippedFile("holds no text")
    return document


def read_plain(text: str, kind: Kind) -> Document:
    """Markdown, reStructuredText or plain text; Markdown front matter gives the title."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    title = ""
    if kind == "markdown" and (front := _FRONT_MATTER.match(text)):
        if found := _FRONT_TITLE.search(front.group(1)):
            title = found.group(1).strip("\"'")
        text = text[front.end() :]
    return Document(kind=kind, title=title, text=text)


def read_html(data: bytes, seconds: float = HTML_SECONDS) -> Document:
    """HTML as heading-led blocks, without script/style/nav; title from <title> or first h1.

    One pass over libxml2's parse events (lxml), no tree: linear in the page, whatever its
    nesting. Text nested deeper than `MAX_HTML_DEPTH` is not read; a page that takes longer
    than `seconds` to parse is SkippedFile.
    """
    collector = _HtmlText()
    parser = etree.HTMLParser(target=collector, no_network=True, recover=True)
    deadline = time.monotonic() + seconds
    try:
        for offset in range(0, len(data), _HTML_CHUNK):
            if time.monotonic() > deadline:
                raise SkippedFile(f"took over {seconds:g} s to parse as HTML")
            parser.feed(data[offset : offset + _HTML_CHUNK])
        if data:
            parser.close()
        return collector.document()
    finally:
        collector.release()


class _HtmlText:
    """An lxml parser target that keeps visible text by heading, the page's title, its links
    (where each stands) and the dates its markup states."""

    def __init__(self) -> None:
        self.depth = 0
        self.dropped = 0  # open script/style/nav... elements around the current text
        self.in_heading = 0
        self.in_title = False
        self.title, self.first_h1 = [], None
        self.blocks: list[Block] = []
        self.level, self.heading, self.parts, self.heading_parts = 0, "", [], []
        self.links = LinkTracker(MAX_LINKS)
        self.dates = DateMarks()

    def start(self, tag: str, attrib: dict) -> None:
        self.depth += 1
        name = tag.lower() if isinstance(tag, str) else ""
        visible = not self.dropped and self.depth <= MAX_HTML_DEPTH
        self.links.start(name, attrib, block=name in LINK_BLOCKS, visible=visible)
        if attrib:  # most elements have none, and the lookups cost
            self.dates.start(name, attrib, visible=visible)
        if name in DROPPED_TAGS:
            self.dropped += 1
        if name == "title":
            self.in_title = True
        if self.dropped or self.depth > MAX_HTML_DEPTH:
            return
        if name in HEADING_TAGS:
            if not self.in_heading:
                self.blocks.append(Block(self.level, self.heading, tidy("".join(self.parts))))
                self.level, self.parts, self.heading_parts = int(name[1]), [], []
            self.in_heading += 1
        elif name in BLOCK_TAGS and not self.in_heading:
            self.parts.append("\n\n" if name not in ("br", "td", "th") else "\n")

    def end(self, tag: str) -> None:
        self.depth -= 1
        name = tag.lower() if isinstance(tag, str) else ""
        self.links.end(name)
        self.dates.end(name)
        if name in DROPPED_TAGS:
            self.dropped = max(0, self.dropped - 1)
        if name == "title":
            self.in_title = False
        if name in HEADING_TAGS and self.in_heading and not self.dropped:
            self.in_heading -= 1
            if not self.in_heading:
                self.heading = " ".join("".join(self.heading_parts).split())
                if self.level == 1 and self.first_h1 is None:
                    self.first_h1 = self.heading

    def data(self, text: str) -> None:
        if self.dates.text(text):  # JSON-LD: metadata, not page text
            return
        if self.in_title:
            self.title.append(text)
            return
        if self.dropped or self.depth > MAX_HTML_DEPTH:
            return
        self.links.text(text)
        if self.in_heading:
            self.heading_parts.append(text)
        else:
            self.parts.append(text)

    def close(self) -> None:
        return None

    def release(self) -> None:
        """Drop all it read. lxml's parser and its context hold each other, and so this target,
        in a cycle that only the garbage collector frees: a page's hundreds of pending links
        and text parts lived on until then, most till a full collection, walked by each."""
        vars(self).clear()

    def document(self) -> Document:
        """What was read, as blocks and a title."""
        if self.in_heading:  # a heading never closed
            self.heading = " ".join("".join(self.heading_parts).split())
        blocks = [*self.blocks, Block(self.level, self.heading, tidy("".join(self.parts)))]
        kept = tuple(block for block in blocks if block.text or block.heading)
        title = " ".join("".join(self.title).split()) or self.first_h1 or ""
        return Document(
            kind="html",
            title=title,
            blocks=kept,
            links=self.links.links(),
            dates=tuple(self.dates.meta),
            times=tuple(self.dates.times),
        )


def pdf_errors() -> tuple[type[BaseException], ...]:
    """What reading a malformed PDF may raise: pypdf's own errors and those it lets escape.

    pypdf is imported on the first PDF read, not with this module: it weighs 17 MiB of memory
    (with the font and cryptography libraries it loads) in every process, most of which never
    read a PDF."""
    from pypdf.errors import DependencyError, PyPdfError

    return (PyPdfError, DependencyError, *_MALFORMED_PDF_ERRORS)


def read_pdf(data: bytes, max_pages: int | None = None) -> Document:
    """PDF text page by page (the first `max_pages` when given); encrypted PDFs open only if
    their user password is empty. Its metadata's modification and creation dates are kept."""
    from pypdf import PdfReader

    errors = pdf_errors()
    try:
        reader = PdfReader(BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise SkippedFile("is an encrypted PDF that needs a password")
        info = reader.metadata
        title = info.title if info else None
        dates = _pdf_dates(info)
        pages = [tidy(page.extract_text() or "") for page in reader.pages[:max_pages]]
    except errors as error:
        raise SkippedFile(f"is not a readable PDF ({type(error).__name__}: {error})") from error
    blocks = tuple(
        Block(0, f"Page {number}", text, page=number)
        for number, text in enumerate(pages, start=1)
        if text
    )
    title = str(title).strip() if title else ""
    return Document(kind="pdf", title=title, blocks=blocks, dates=dates)


def _pdf_dates(info: object) -> tuple[str, ...]:
    """A PDF's modification and creation dates, as ISO 8601 (none when unset or unreadable)."""
    dates, errors = [], pdf_errors()
    for name in ("modification_date", "creation_date"):
        try:
            moment = getattr(info, name, None)
        except errors:  # a date field pypdf cannot parse is no date
            continue
        if moment is not None:
            dates.append(moment.isoformat())
    return tuple(dates)
