"""The frame a reader can stop reading early in: one title, a summary whose every sentence is
cited, no section the citation check left empty, headings that nest. Pure, no I/O.

Block structure comes from `domain.markup` (markdown-it-py line maps), so nothing inside code
is touched.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from deep_research.domain.markup import MARKER, Block, blocks
from deep_research.domain.statements import sentences

TITLE_CHARS = 200  # the report's title (its question) at most
_PREFIX = re.compile(r"[ \t]*(?:>[ \t]?)*(?:(?:[-*+]|\d{1,3}[.)])[ \t]+)?")


def report_title(question: str) -> str:
    """The report's one title: its question, on one line, cut at a word past `TITLE_CHARS`."""
    text = " ".join(question.split())
    if len(text) <= TITLE_CHARS:
        return text
    cut = text[: TITLE_CHARS - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > TITLE_CHARS // 2 else cut).rstrip() + "…"


def _replaced(text: str, changes: list[tuple[int, int, str]]) -> str:
    """`text` with each (start, end) span replaced, last first."""
    for start, end, new in sorted(changes, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def cited_only(summary: str) -> str:
    """The summary's headings and the sentences of it that cite a source; "" when none does."""
    changes = []
    kept = 0
    for block in blocks(summary):
        if block.kind != "paragraph":
            continue
        prefix = _PREFIX.match(summary, block.start).group()
        body_start = block.start + len(prefix)
        cited = [
            summary[s:e]
            for s, e in sentences(summary, body_start, block.end)
            if MARKER.search(summary[s:e])
        ]
        kept += len(cited)
        end = block.end if summary[block.end - 1 : block.end] != "\n" else block.end - 1
        changes.append((block.start, end, prefix + " ".join(cited) if cited else ""))
    if not kept:
        return ""
    return re.sub(r"\n{3,}", "\n\n", _replaced(summary, changes)).strip()


def _paragraph_alive(report: str, block: Block, marks: Sequence[str]) -> bool:
    """True when a paragraph holds text besides statements the citation check marked (a mark
    follows the statement it marks)."""
    signs = [mark.strip() for mark in marks if mark.strip()]
    for start, end in sentences(report, block.start, block.end):
        piece = report[start:end].strip()
        for sign in signs:  # a mark that opens the piece belongs to the sentence before
            piece = piece.removeprefix(sign).strip()
        after = report[end : block.end].lstrip()
        marked = any(piece.endswith(sign) or after.startswith(sign) for sign in signs)
        if re.search(r"\w", piece) and not marked:
            return True
    return False


def _own_alive(report: str, start: int, end: int, found: list[Block], marks: Sequence[str]) -> bool:
    """True when `report[start:end]` (a heading's own text) holds anything to read: a paragraph
    with an unmarked statement, or any other block (a table, code, HTML, a rule)."""
    rest = report[start:end]
    for block in found:
        if start <= block.start < end and block.kind == "paragraph":
            if _paragraph_alive(report, block, marks):
                return True
            rest = rest.replace(report[block.start : block.end], "", 1)
    return bool(re.sub(r"(?m)^[ \t]*(?:[-*+>]|\d{1,3}[.)])?[ \t]*$", "", rest).strip())


def without_empty_sections(report: str, marks: Sequence[str]) -> str:
    """The report without the sections that have nothing left to read: a heading whose own
    text is empty or only statements the citation check marked (`marks`), and under which no
    subsection is left. The title (a first level-1 heading) always stays."""
    found = blocks(report)
    headings = [b for b in found if b.kind == "heading"]
    alive: list[bool] = [False] * len(headings)
    for position in reversed(range(len(headings))):
        heading = headings[position]
        end = headings[position + 1].start if position + 1 < len(headings) else len(report)
        own = _own_alive(report, heading.end, end, found, marks)
        children = []
        for later in range(position + 1, len(headings)):
            if headings[later].level <= heading.level:
                break
            children.append(alive[later])
        alive[position] = own or any(children)
    title = 0 if headings and headings[0].level == 1 else None
    changes = []
    for position, heading in enumerate(headings):
        if alive[position] or position == title:
            continue
        end = headings[position + 1].start if position + 1 < len(headings) else len(report)
        changes.append((heading.start, end, ""))
    return re.sub(r"\n{3,}", "\n\n", _replaced(report, changes)).rstrip() + (
        "\n" if report.endswith("\n") else ""
    )


def nested_headings(report: str) -> str:
    """One title and headings that nest: the first heading, when level 1, is the title; every
    other heading sits at level 2 or deeper, at most one level below the heading before it."""
    changes = []
    previous = 1
    for number, block in enumerate(b for b in blocks(report) if b.kind == "heading"):
        if number == 0 and block.level == 1:
            continue
        level = max(2, min(block.level, previous + 1))
        previous = level
        line = report[block.start : block.end]
        atx = line.lstrip().startswith("#") and "\n" not in line.rstrip("\n")
        if level != block.level or not atx:
            ending = "\n" if line.endswith("\n") else ""
            changes.append((block.start, block.end, f"{'#' * level} {block.text.strip()}{ending}"))
    return _replaced(report, changes)
