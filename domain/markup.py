"""The one home of citation syntax: the `[n]` marker and the Markdown block structure of a report.

Every module that reads or writes citations goes through here, so that a marker is recognised
the same way everywhere. Block structure (paragraphs, list items, table rows, headings, code) comes
from markdown-it-py, which reports the line span of every block; we turn those into character
offsets so that statements can be replaced in place.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from markdown_it import MarkdownIt

from deep_research.domain.language import WORDS

_SEPARATORS = r"[,，、;；]"
_IDS = rf"\d+(?:\s*{_SEPARATORS}\s*\d+)*"
MARKER = re.compile(rf"\[\s*({_IDS})\s*\](?!\()")
"""One citation marker: `[3]`, `[1, 4]`, `[2，5]`; never the text of a link `[3](url)`."""
FULLWIDTH_MARKER = re.compile(rf"[【［]\s*({_IDS})\s*[】］]")
"""The full-width forms some models write (`【2】`, `［2］`), turned into `[2]` by the clean-up."""
LINK = re.compile(
    r"([ \t]*)\[([^\]\n]*)\]\(\s*([a-zA-Z][\w+.-]*://[^)\s]+|www\.[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)"
)
"""A Markdown link `[text](url "title")`, with the space before it: lead, text, url."""
MARKER_RUN = re.compile(rf"([ \t]*)((?:{MARKER.pattern}[ \t]*)*{MARKER.pattern})")
"""A run of adjacent markers with the space before it, such as ` [2][1]`."""

SOURCE_HEADINGS = frozenset(
    [
        "sources",
        "references",
        "bibliography",
        "works cited",
        "参考资料",
        "参考文献",
        "来源",
        "引用来源",
        "资料来源",
        "參考資料",
        "參考文獻",
        "参考文献一覧",
        "情報源",
        "참고 문헌",
        "참고문헌",
        "literatur",
        "références",
        "referencias",
        *(words.sources.casefold() for words in WORDS.values()),
    ]
)
"""Headings of a sources list: ours in every language, and those writers commonly use."""

_INLINE_CODE = re.compile(r"`[^`\n]+`")
_PARSER = MarkdownIt("commonmark").enable("table")
BlockKind = Literal["paragraph", "table_row", "heading", "code"]


def ids_in(text: str) -> list[int]:
    """The source ids the markers of `text` cite, each once, in order of first citation."""
    found = (int(n) for m in MARKER.finditer(text) for n in re.split(_SEPARATORS, m.group(1)))
    return list(dict.fromkeys(found))


def strip_markers(text: str) -> str:
    """The text without citation markers (and the space before them), whitespace collapsed."""
    return " ".join(MARKER_RUN.sub("", text).split())


def markers(ids: Iterable[int]) -> str:
    """The canonical form of a citation of `ids`: `[2][5]`."""
    return "".join(f"[{i}]" for i in ids)


def rewrite_markers(text: str, change: Callable[[list[int]], list[int]]) -> str:
    """Every run of markers replaced by the canonical markers of `change(ids)`; none if empty.

    Code (fenced, indented, inline) is left as it is.
    """

    def one(run: re.Match) -> str:
        kept = change(ids_in(run.group(2)))
        return run.group(1) + markers(kept) if kept else ""

    return outside_code(text, lambda prose: MARKER_RUN.sub(one, prose))


@dataclass(frozen=True)
class Block:
    """A Markdown leaf block (paragraph, table row, heading or code) and its character span."""

    kind: BlockKind
    start: int
    end: int
    level: int = 0  # a heading's level (1-6)
    text: str = ""  # a heading's text


def _line_starts(text: str) -> list[int]:
    """The offset at which each line of `text` starts, plus the end of the text."""
    starts = [0]
    for match in re.finditer("\n", text):
        starts.append(match.end())
    return [*starts, len(text)]


@lru_cache(maxsize=64)
def blocks(text: str) -> tuple[Block, ...]:
    """The report's leaf blocks in order, with character spans (from markdown-it line maps);
    parsed once per text (a step asks for one report's blocks several times)."""
    lines = _line_starts(text)

    def span(first: int, last: int) -> tuple[int, int]:
        return lines[min(first, len(lines) - 1)], lines[min(last, len(lines) - 1)]

    found: list[Block] = []
    tokens = _PARSER.parse(text)
    for index, token in enumerate(tokens):
        if token.map is None:
            continue
        start, end = span(*token.map)
        if token.type == "paragraph_open":
            found.append(Block("paragraph", start, end))
        elif token.type == "tr_open":
            found.append(Block("table_row", start, end))
        elif token.type in ("fence", "code_block"):
            found.append(Block("code", start, end))
        elif token.type == "heading_open":
            title = tokens[index + 1].content if index + 1 < len(tokens) else ""
            found.append(Block("heading", start, end, int(token.tag[1:]), title))
    return tuple(found)


def _is_sources_heading(block: Block) -> bool:
    """True for a heading that names a list of sources (`## Sources`, `## 参考来源`...)."""
    title = re.sub(r"[*_:：\s]+", " ", block.text).strip().casefold()
    return block.kind == "heading" and title in SOURCE_HEADINGS


def sources_sections(text: str) -> list[tuple[int, int]]:
    """Spans of the sources sections: from such a heading to the next heading as high or higher."""
    found = blocks(text)
    sections = []
    for index, block in enumerate(found):
        if not _is_sources_heading(block):
            continue
        following = (
            b for b in found[index + 1 :] if b.kind == "heading" and b.level <= block.level
        )
        end = next((b.start for b in following), len(text))
        sections.append((block.start, end))
    return sections


def body_end(text: str) -> int:
    """Where the report's body ends: at its last sources section, or at its end."""
    sections = sources_sections(text)
    return sections[-1][0] if sections else len(text)


def code_spans(text: str) -> list[tuple[int, int]]:
    """Spans of code: fenced and indented blocks (markdown-it), and inline code elsewhere."""
    spans = [(b.start, b.end) for b in blocks(text) if b.kind == "code"]
    inline, last = [], 0
    for start, end in [*spans, (len(text), len(text))]:
        inline += [m.span() for m in _INLINE_CODE.finditer(text, last, start)]
        last = end
    return sorted(spans + inline)


def outside_code(text: str, change: Callable[[str], str]) -> str:
    """`change` applied to the prose only: code blocks and inline code are left as they are."""
    parts, last = [], 0
    for start, end in code_spans(text):
        parts += [change(text[last:start]), text[start:end]]
        last = end
    return "".join([*parts, change(text[last:])])
