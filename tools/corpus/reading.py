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
import struct
import zlib
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Literal

from bs4 import BeautifulSoup
from bs4.element import NavigableString, PreformattedString, Tag
from pypdf import PdfReader
from pypdf.errors import DependencyError, PyPdfError

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

# Errors pypdf lets escape on malformed files besides its own PyPdfError family.
PDF_ERRORS = (
    PyPdfError,
    DependencyError,
    ValueError,
    KeyError,
    TypeError,
    IndexError,
    AttributeError,
    RecursionError,
    struct.error,
    zlib.error,
)

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


def kind_of(path: Path) -> Kind | None:
    """The document kind a file name stands for, or None for files we do not read."""
    return SUFFIXES.get(path.suffix.lower())


def read_bytes(path: Path) -> bytes:
    """A file's bytes, never through a symlink (O_NOFOLLOW), as SkippedFile if the OS refuses."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
        with os.fdopen(fd, "rb") as handle:
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


def read_html(data: bytes) -> Document:
    """HTML as heading-led blocks, without script/style/nav; title from <title> or first h1."""
    soup = BeautifulSoup(data, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup.find_all(DROPPED_TAGS):
        tag.decompose()
    if not title and (h1 := soup.find("h1")):
        title = h1.get_text(" ", strip=True)
    blocks: list[Block] = []
    level, heading, parts = 0, "", []
    for node in (soup.body or soup).descendants:
        if isinstance(node, Tag) and node.name in HEADING_TAGS:
            blocks.append(Block(level, heading, tidy("".join(parts))))
            level, heading, parts = int(node.name[1]), node.get_text(" ", strip=True), []
        elif isinstance(node, Tag) and node.name in BLOCK_TAGS:
            parts.append("\n\n" if node.name not in ("br", "td", "th") else "\n")
        elif _is_body_text(node):
            parts.append(str(node))
    blocks.append(Block(level, heading, tidy("".join(parts))))
    kept = tuple(block for block in blocks if block.text or block.heading)
    return Document(kind="html", title=title, blocks=kept)


def _is_body_text(node: object) -> bool:
    """Whether a parsed HTML node is visible text outside headings (not a comment or doctype)."""
    return (
        isinstance(node, NavigableString)
        and not isinstance(node, PreformattedString)
        and node.find_parent(HEADING_TAGS) is None
    )


def read_pdf(data: bytes) -> Document:
    """PDF text page by page; encrypted PDFs open only if their user password is empty."""
    try:
        reader = PdfReader(BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise SkippedFile("is an encrypted PDF that needs a password")
        title = reader.metadata.title if reader.metadata else None
        pages = [tidy(page.extract_text() or "") for page in reader.pages]
    except PDF_ERRORS as error:
        raise SkippedFile(f"is not a readable PDF ({type(error).__name__}: {error})") from error
    blocks = tuple(
        Block(0, f"Page {number}", text, page=number)
        for number, text in enumerate(pages, start=1)
        if text
    )
    return Document(kind="pdf", title=str(title).strip() if title else "", blocks=blocks)
