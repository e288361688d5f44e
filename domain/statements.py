"""Cited statements: the sentences, list items and table rows of a report that cite sources.

Block structure comes from `domain.markup` (markdown-it-py); this module splits prose blocks into
sentences (Latin and CJK punctuation, abbreviations kept whole; a line that ends in a citation,
and a mark of the citation check, end one too) and keeps each statement's span, so that
verification can replace it in place. It is the one splitter: the citation check, the review
and every export read a report's statements from here. Pure Python, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deep_research.domain.language import WORDS
from deep_research.domain.markup import MARKER, Block, blocks, body_end, ids_in, strip_markers

_MARKERS = rf"(?:\s*{MARKER.pattern})*"
_CHECK_MARKS = sorted(
    {mark.strip() for words in WORDS.values() for mark in (words.unsupported, words.unchecked)},
    key=len,
    reverse=True,
)
_MARK = rf"[ \t]*(?:{'|'.join(re.escape(mark) for mark in _CHECK_MARKS)})"
"""A mark the citation check put after a statement (`*(not supported by the sources found)*`)."""
_MARKED = re.compile(_MARK)
_SENTENCE_END = re.compile(  # markers, and a check's mark, join the sentence they close
    rf"[.!?][\"'”’)]*{_MARKERS}(?:{_MARK})?(?=\s|$)"
    rf"|[。！？][”’」』）)]*{_MARKERS}(?:{_MARK})?"
    rf"|{MARKER.pattern}{_MARKERS}(?=[ \t]*\n)"  # a line that ends in a citation ends a statement
    rf"|{_MARK}"  # so does a mark: what follows is another statement
)
_ABBREVIATIONS = {"vs", "cf", "al", "approx", "ca", "dr", "mr", "mrs", "ms", "prof", "fig", "eq"}
_PREFIX = re.compile(r"[ \t]*(?:>[ \t]?)*(?:(?:[-*+]|\d{1,3}[.)])[ \t]+)?")
_QUOTE_PREFIX = re.compile(r"[ \t]*(?:>[ \t]?)*")


@dataclass(frozen=True)
class CitedStatement:
    """One cited claim: its text without markers, the ids it cites, and its span in the report."""

    text: str
    source_ids: tuple[int, ...]
    start: int
    end: int
    table_row: bool = False


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without surrounding whitespace, so offsets point at the statement itself."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _no_break(text: str, begin: int, dot: int, after: int, end: int) -> bool:
    """True when the period ends an abbreviation (`e.g.`, `vs.`) rather than a sentence."""
    word = re.search(r"[\w.]*$", text[begin:dot]).group().lower()
    following = re.match(r"\s*(\S?)", text[after:end]).group(1)
    abbreviation = word in _ABBREVIATIONS or re.fullmatch(r"(?:[a-z]\.)*[a-z]", word)
    return bool(abbreviation) or (following.isascii() and following.islower())


def sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The trimmed, non-empty sentence spans of `text[start:end]`, trailing markers included."""
    spans, begin = [], start
    for match in _SENTENCE_END.finditer(text, start, end):
        ending = match.group()
        plain_period = ending[0] == "." and "[" not in ending and not _MARKED.search(ending)
        after_citation = text[begin : match.start()].rstrip().endswith("]")
        if (
            plain_period
            and not after_citation
            and _no_break(text, begin, match.start(), match.end(), end)
        ):
            continue
        spans.append(_trim(text, begin, match.end()))
        begin = match.end()
    spans.append(_trim(text, begin, end))
    return [(s, e) for s, e in spans if s < e]


def _masked(report: str, start: int, end: int) -> str:
    """A paragraph's lines with list bullets and quote marks blanked (offsets kept)."""
    out = []
    for number, line in enumerate(report[start:end].splitlines(keepends=True)):
        prefix = (_PREFIX if number == 0 else _QUOTE_PREFIX).match(line)
        out.append(" " * prefix.end() + line[prefix.end() :])
    return "".join(out)


def _rows_of_bare_tables(report: str, found: list[Block]) -> list[Block]:
    """The blocks, with a paragraph made only of `|` lines read as table rows (a broken table)."""
    out = []
    for block in found:
        lines = report[block.start : block.end].splitlines(keepends=True)
        if block.kind != "paragraph" or not all(line.lstrip().startswith("|") for line in lines):
            out.append(block)
            continue
        offset = block.start
        for line in lines:
            out.append(Block("table_row", offset, offset + len(line)))
            offset += len(line)
    return out


def cited_statements(report: str) -> list[CitedStatement]:
    """The report's sentences, list items and table rows that cite sources, in order."""
    end_of_body = body_end(report)
    found = [b for b in blocks(report) if b.start < end_of_body]
    masked = list(report)
    for block in found:
        if block.kind == "paragraph":
            masked[block.start : block.end] = _masked(report, block.start, block.end)
    text = "".join(masked)
    statements = []
    for block in _rows_of_bare_tables(report, found):
        if block.kind == "table_row":
            s, e = _trim(report, block.start, block.end)
            if set(report[s:e]) <= set("|:- \t"):
                continue
            cells = [strip_markers(c) for c in report[s:e].strip().strip("|").split("|")]
            spans = [(s, e, " | ".join(c for c in cells if c), True)]
        elif block.kind == "paragraph":
            spans = [
                (s, e, strip_markers(text[s:e]), False)
                for s, e in sentences(text, *_trim(text, block.start, block.end))
            ]
        else:
            continue
        for s, e, claim, row in spans:
            ids = tuple(ids_in(report[s:e]))
            if ids and re.search(r"\w", claim):
                statements.append(CitedStatement(claim, ids, s, e, row))
    return statements


_CLOSED = re.compile(rf"(?:[.!?][\"'”’)]*|[。！？][”’」』）)]*){_MARKERS}$")
_CITED_AT_END = re.compile(rf"{MARKER.pattern}$")
_CJK_AT_END = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uff01-\uff5e]$")


def closed_like(original: str, rewrite: str) -> str:
    """`rewrite`, put in the place of the statement `original`, ending where it did: with the
    original's full stop (or `!`, `?`, `。`) after its citations when the original had one and
    the rewrite has none, so that the report splits into the same statements around it. A
    rewrite left ending in uncited words gets a full stop of its script."""
    rewrite = rewrite.rstrip()
    if _CLOSED.search(rewrite):
        return rewrite
    closing = _CLOSED.search(original.rstrip())
    if closing:
        return rewrite + closing.group().lstrip()[0]
    if _CITED_AT_END.search(rewrite):  # the original ended its line or paragraph the same way
        return rewrite
    return rewrite + ("。" if _CJK_AT_END.search(strip_markers(rewrite)) else ".")
