"""Split a document into passages of about 800-1,200 characters that keep their heading path.

A passage never spans two sections, so each one can say where it sits ("Install > Linux") and
link there: its anchor is the GitHub-style slug of its own (deepest) heading, numbered "-1",
"-2" when a heading repeats, or `page=N` for a PDF page. Headings come from Markdown `#` lines
(and setext underlines, outside code fences), reStructuredText underlined (or over- and
underlined) titles ranked by first appearance, HTML h1-h6 and PDF pages (both from `reading`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deep_research.tools.corpus.reading import Block, Document

PASSAGE_LIMIT = 1200

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_RST_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1+[ \t]*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s")
_SLUG_DROP = re.compile(r"[^\w\- ]")
_SPLITTERS = (
    (re.compile(r"\n\s*\n"), "\n\n"),
    (re.compile(r"\n"), "\n"),
    (re.compile(r"(?<=[.!?;:])\s+|(?<=[。！？；：])"), " "),
    (re.compile(r"\s+"), " "),
)


@dataclass(frozen=True)
class Passage:
    """One searchable piece of a document: heading path, text, and anchor within the file."""

    heading: str
    text: str
    anchor: str


def blocks_of(document: Document) -> list[Block]:
    """The document's heading-led blocks, parsing Markdown and RST headings from its text."""
    if document.kind == "markdown":
        return markdown_blocks(document.text)
    if document.kind == "rst":
        return rst_blocks(document.text)
    if document.kind == "text":
        return [Block(0, "", document.text)]
    return list(document.blocks)


def first_heading(blocks: list[Block]) -> str:
    """The first of the highest-ranked headings: a Markdown or RST document's title."""
    headed = [block for block in blocks if block.heading and block.page is None]
    if not headed:
        return ""
    top = min(block.level for block in headed)
    return next(block.heading for block in headed if block.level == top)


def markdown_blocks(text: str) -> list[Block]:
    """Markdown split at ATX (`## x`) and setext headings, ignoring lines in fenced code."""
    blocks: list[Block] = []
    level, heading, lines = 0, "", []
    fence = ""
    for line in text.split("\n"):
        if opened := _FENCE.match(line):
            marker = opened.group(1)
            if not fence:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = ""
            lines.append(line)
            continue
        if not fence and (atx := _ATX.match(line)):
            blocks.append(Block(level, heading, "\n".join(lines).strip()))
            level, heading, lines = len(atx.group(1)), (atx.group(2) or "").strip(), []
            continue
        if not fence and (under := _SETEXT.match(line)) and _is_setext_title(lines):
            blocks.append(Block(level, heading, "\n".join(lines[:-1]).strip()))
            level, heading, lines = (1 if under.group(1)[0] == "=" else 2), lines[-1].strip(), []
            continue
        lines.append(line)
    blocks.append(Block(level, heading, "\n".join(lines).strip()))
    return [block for block in blocks if block.text or block.heading]


def _is_setext_title(lines: list[str]) -> bool:
    """Whether the last line read can be a setext title: a lone paragraph line, not a list."""
    if not lines or not lines[-1].strip() or _LIST_ITEM.match(lines[-1]):
        return False
    return len(lines) == 1 or not lines[-2].strip()


def rst_blocks(text: str) -> list[Block]:
    """reStructuredText split at section titles; levels follow the order styles first appear."""
    lines = text.split("\n")
    styles: list[tuple[str, bool]] = []
    blocks: list[Block] = []
    level, heading, body = 0, "", []
    index = 0
    while index < len(lines):
        found = _rst_title(lines, index)
        if found is None:
            body.append(lines[index])
            index += 1
            continue
        title, style, consumed = found
        if style not in styles:
            styles.append(style)
        blocks.append(Block(level, heading, "\n".join(body).strip()))
        level, heading, body = min(styles.index(style) + 1, 6), title, []
        index += consumed
    blocks.append(Block(level, heading, "\n".join(body).strip()))
    return [block for block in blocks if block.text or block.heading]


def _rst_title(lines: list[str], index: int) -> tuple[str, tuple[str, bool], int] | None:
    """An RST title starting at `lines[index]`: (text, (char, overlined), lines used) or None."""
    previous_blank = index == 0 or not lines[index - 1].strip()
    if not previous_blank or index + 1 >= len(lines):
        return None
    first, second = lines[index], lines[index + 1]
    over = _RST_ADORNMENT.match(first)
    if over and index + 2 < len(lines):
        title, under = second.strip(), _RST_ADORNMENT.match(lines[index + 2])
        if (
            title
            and under
            and under.group(1) == over.group(1)
            and len(first.rstrip()) >= len(title)
        ):
            return title, (over.group(1), True), 3
    under = _RST_ADORNMENT.match(second)
    title = first.rstrip()
    if over or not title or title != title.lstrip() or under is None:
        return None
    if len(second.rstrip()) < len(title):
        return None
    return title.strip(), (under.group(1), False), 2


def passages_of(blocks: list[Block]) -> list[Passage]:
    """Blocks to passages: heading paths from the levels, text chunked to the size limit."""
    passages: list[Passage] = []
    path: list[tuple[int, str]] = []
    seen: dict[str, int] = {}
    for block in blocks:
        if block.page is not None:
            heading, anchor = block.heading, f"page={block.page}"
        else:
            if block.level:
                path = [entry for entry in path if entry[0] < block.level]
                path.append((block.level, block.heading))
            heading = " > ".join(title for _, title in path if title)
            anchor = unique_slug(path[-1][1], seen) if path and path[-1][1] else ""
        passages.extend(Passage(heading, chunk, anchor) for chunk in chunk_text(block.text))
    return passages


def slugify(heading: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens."""
    return _SLUG_DROP.sub("", heading.strip().lower()).replace(" ", "-")


def unique_slug(heading: str, seen: dict[str, int]) -> str:
    """The heading's slug, suffixed "-1", "-2" for repeats as GitHub does; "section" if empty."""
    slug = slugify(heading) or "section"
    count = seen.get(slug, 0)
    seen[slug] = count + 1
    return f"{slug}-{count}" if count else slug


def chunk_text(text: str, limit: int = PASSAGE_LIMIT) -> list[str]:
    """Text in chunks of at most `limit` characters, cut at paragraphs, lines, sentences, words."""
    text = text.strip()
    return _split(text, limit, 0) if text else []


def _split(text: str, limit: int, depth: int) -> list[str]:
    """Split on the `depth`-th separator, recurse into oversized parts, then pack greedily."""
    if len(text) <= limit and depth:
        return [text]
    if depth == len(_SPLITTERS):
        return [text[start : start + limit] for start in range(0, len(text), limit)]
    pattern, joiner = _SPLITTERS[depth]
    parts = [part.strip() for part in pattern.split(text) if part.strip()]
    pieces = [piece for part in parts for piece in _split(part, limit, depth + 1)]
    return _pack(pieces, joiner, limit)


def _pack(pieces: list[str], joiner: str, limit: int) -> list[str]:
    """Join consecutive pieces while the result stays within `limit` characters."""
    chunks: list[str] = []
    current = ""
    for piece in pieces:
        if current and len(current) + len(joiner) + len(piece) > limit:
            chunks.append(current)
            current = piece
        else:
            current = f"{current}{joiner}{piece}" if current else piece
    if current:
        chunks.append(current)
    return chunks
