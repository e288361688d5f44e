"""Lexical citation check: split a report into cited statements and measure their word overlap.

The cheap first pass of citation verification: a statement whose words and numbers all appear in
the text its source returned is supported, one that shares almost nothing with it is not, and only
the cases in between go to a model. Pure Python, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from state import Verdict
from tools.citations import CJK_LETTERS, SOURCES_HEADING

_CJK = CJK_LETTERS
_MARKER = r"\[\s*(\d+(?:\s*[,，、;]\s*\d+)*)\s*\](?!\()"
_CITATION = re.compile(_MARKER)
_CITATION_WITH_SPACE = re.compile(r"\s*" + _MARKER)
_MARKERS = rf"(?:\s*{_MARKER})*"
_SENTENCE_END = re.compile(
    rf"[.!?][\"'”’)]*{_MARKERS}(?=\s|$)|[。！？][”’」』）)]*{_MARKERS}"  # markers join the sentence
)
_ABBREVIATIONS = {"vs", "cf", "al", "approx", "ca", "dr", "mr", "mrs", "ms", "prof", "fig", "eq"}
_SOURCES = SOURCES_HEADING
_HEADING_OR_RULE = re.compile(r"#{1,6}(?:\s|$)|(?:[-*_]\s*){3,}$")
_FENCE = re.compile(r"```|~~~")
_PREFIX = re.compile(r"[ \t]*(?:>[ \t]?)*(?P<item>(?:[-*+]|\d{1,3}[.)])[ \t]+)?")
_TOKEN = re.compile(
    r"(?P<num>\d+(?:,\d{3}(?!\d))*(?:\.\d+)?(?:\s?(?:%|％|percent\b|per cent\b))?)"
    r"|(?P<word>[a-z\u00e0-\u00f6\u00f8-\u024f]+(?:'[a-z]+)?)"
    rf"|(?P<cjk>[{_CJK}]+)"
)
_STOP_TEXT = (
    "the and or but of in on at to for from by with as is are was were be been being it its "
    "this that these those which who whom what where when how has have had do does did than then "
    "so such can could will would may might should shall also into about over their they them "
    "there he she his her we our you your if while both each all any some other very just only "
    "up out per via yet"
)
_STOP_WORDS = frozenset(_STOP_TEXT.split())
_NUMBER_WEIGHT = 3.0  # a number the passage lacks is strong evidence against support


@dataclass(frozen=True)
class CitedStatement:
    """One cited claim: its text without markers, the ids it cites, and its span in the report."""

    text: str
    source_ids: tuple[int, ...]
    start: int
    end: int


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


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The trimmed, non-empty sentence spans of `text[start:end]`, trailing markers included."""
    spans, begin = [], start
    for match in _SENTENCE_END.finditer(text, start, end):
        ending = match.group()
        plain_period = ending[0] == "." and "[" not in ending
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


def _blocks(report: str) -> tuple[str, list[tuple[int, int, bool]]]:
    """The report with list/quote markers blanked (offsets kept) and its prose or table blocks."""
    sources = [m.start() for m in _SOURCES.finditer(report)]
    body = report[: sources[-1]] if sources else report
    masked: list[str] = []
    blocks: list[tuple[int, int, bool]] = []
    open_block: list[int] | None = None  # [start, end] of the paragraph or item being read
    in_code, offset = False, 0
    for line in body.splitlines(keepends=True):
        start, offset = offset, offset + len(line)
        stripped, prefix = line.strip(), _PREFIX.match(line)
        fence = bool(_FENCE.match(stripped))
        plain = not (in_code or fence or not stripped or stripped.startswith("|"))
        plain = plain and not _HEADING_OR_RULE.match(stripped)
        if open_block and (not plain or prefix.group("item")):
            blocks.append((*open_block, False))
            open_block = None
        if plain:
            masked.append(" " * prefix.end() + line[prefix.end() :])
            end = start + len(line.rstrip())
            open_block = [open_block[0] if open_block else start + prefix.end(), end]
            continue
        in_code ^= fence
        if stripped.startswith("|") and not in_code and not set(stripped) <= set("|:- \t"):
            blocks.append((*_trim(report, start, start + len(line)), True))  # one table row
        masked.append(line)
    if open_block:
        blocks.append((*open_block, False))
    return "".join(masked), blocks


def _plain(text: str) -> str:
    """The text without citation markers and with whitespace collapsed."""
    return " ".join(_CITATION_WITH_SPACE.sub("", text).split())


def cited_statements(report: str) -> list[CitedStatement]:
    """The report's sentences, list items and table rows that cite sources, in order."""
    masked, blocks = _blocks(report)
    statements = []
    for start, end, table in blocks:
        for s, e in [(start, end)] if table else _sentences(masked, start, end):
            groups = _CITATION.findall(report[s:e])
            ids = tuple(dict.fromkeys(int(n) for g in groups for n in re.split(r"[,，、;]", g)))
            cells = masked[s:e].strip("|").split("|") if table else [masked[s:e]]
            text = " | ".join(c for c in map(_plain, cells) if c)
            if ids and re.search(r"\w", text):
                statements.append(CitedStatement(text, ids, s, e))
    return statements


def _stem(word: str) -> str:
    """Light normalisation: no possessive, no plural `s`, `-ies` back to `-y`."""
    word = word.split("'")[0]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _tokens(text: str) -> dict[str, float]:
    """Content tokens with their weights: numbers verbatim, Latin stems, CJK bigrams."""
    tokens: dict[str, float] = {}
    for match in _TOKEN.finditer(text.lower()):
        if number := match.group("num"):
            digits = re.match(r"[\d,.]+", number).group().replace(",", "")
            percent = number[-1] in "%％" or number.endswith("cent")
            tokens[digits + ("%" if percent else "")] = _NUMBER_WEIGHT
        elif word := match.group("word"):
            if len(word) >= 2 and word not in _STOP_WORDS:
                tokens[_stem(word)] = 1.0
        else:
            run = match.group("cjk")
            for i in range(max(1, len(run) - 1)):
                tokens[run[i : i + 2]] = 1.0
    return tokens


def _recall(statement: dict[str, float], passage: dict[str, float]) -> float:
    """The weighted share of the statement's tokens the passage contains."""
    total = sum(statement.values())
    return sum(w for t, w in statement.items() if t in passage) / total if total else 0.0


def support_score(statement: str, passage: str) -> float:
    """How much of the statement's content (0..1, numbers weighing more) the passage contains."""
    return _recall(_tokens(statement), _tokens(passage))


def lexical_verdict(
    statement: str, passage: str, *, supported_at: float = 0.75, unsupported_below: float = 0.2
) -> Verdict | None:
    """A verdict when word overlap settles it, None when a model has to judge."""
    if not passage.strip():
        return "unsupported"
    claim, evidence = _tokens(statement), _tokens(passage)
    if not claim:
        return None
    score = _recall(claim, evidence)
    if score < unsupported_below:
        return "unsupported"
    numbers = {t for t in claim if t[0].isdigit()}
    return "supported" if score >= supported_at and numbers <= evidence.keys() else None


def _windows(text: str, max_chars: int) -> list[str]:
    """The text if short enough, else overlapping word-aligned windows of at most `max_chars`."""
    if len(text) <= max_chars:
        return [text]
    windows: dict[str, None] = {}
    for i in range(0, len(text), max(1, max_chars // 4)):
        if i and not text[i - 1].isspace() and not re.match(f"[{_CJK}]", text[i]):
            i = text.find(" ", i) + 1  # start on the next word, not mid-word
            if not i:
                break
        window = text[i : i + max_chars]
        if i + max_chars < len(text) and not text[i + max_chars].isspace() and " " in window:
            window = window[: window.rindex(" ")]
        windows[window.strip()] = None
    return list(windows)


def best_quote(statement: str, passage: str, max_chars: int = 300) -> str:
    """The passage sentence (or window of a long one) sharing most with the statement, or ''."""
    claim, best, best_score = _tokens(statement), "", 0.0
    lines = [(m.start(), m.end()) for m in re.finditer(r"[^\n]+", passage)]
    for s, e in (span for line in lines for span in _sentences(passage, *line)):
        for window in _windows(" ".join(passage[s:e].split()), max_chars):
            score = _recall(claim, _tokens(window))
            if score > best_score:
                best, best_score = window, score
    return best
