"""The text a citation rests on, kept with its run: its hash, its cut to the run's byte budget,
and the place a quote holds in it.

A page's text is kept as it was read (its passages joined by blank lines). When the run's room
(`evidence_max_bytes`) is smaller than a page, the paragraphs that hold the run's quotes are kept
first, then the others in page order, and every paragraph left out is replaced by one line that
says so: a reader never mistakes a cut page for the whole.
"""

from __future__ import annotations

import hashlib

from deep_research.domain.verbatim import locate

CUT_LINE = "[… {size:,} bytes of the page not kept here: the run's evidence limit …]"
MIN_ROOM = 200  # bytes: less than this keeps no text at all (a marker would be all of it)


def content_hash(text: str) -> str:
    """The SHA-256 of the text as UTF-8, in hex: what a reader compares a page against."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def size_of(text: str) -> int:
    """The text's size in bytes, as stored (UTF-8)."""
    return len(text.encode("utf-8"))


def _fit(text: str, room: int) -> str:
    """The longest start of `text` within `room` bytes, on a character boundary."""
    return text.encode("utf-8")[:room].decode("utf-8", errors="ignore")


def _cut(paragraphs: list[str], keep: list[bool]) -> str:
    """The paragraphs kept, each run of left-out ones replaced by its one line."""
    parts, left_out = [], 0
    for paragraph, kept in zip(paragraphs, keep, strict=True):
        if kept:
            if left_out:
                parts.append(CUT_LINE.format(size=left_out))
                left_out = 0
            parts.append(paragraph)
        else:
            left_out += size_of(paragraph) + 2
    if left_out:
        parts.append(CUT_LINE.format(size=left_out))
    return "\n\n".join(parts)


def cut_to(text: str, quotes: list[str], room: int) -> str:
    """The text within `room` bytes: whole when it fits; else the paragraphs holding a quote
    first, then the others in page order, each left-out run marked by a line. Empty when the
    room is below `MIN_ROOM`."""
    if size_of(text) <= room:
        return text
    if room < MIN_ROOM:
        return ""
    paragraphs = text.split("\n\n")
    quoted = [any(locate(q, p) for q in quotes if q.strip()) for p in paragraphs]
    keep = [False] * len(paragraphs)
    marker = size_of(CUT_LINE.format(size=size_of(text))) + 2  # the widest line a cut adds
    used = marker  # a kept paragraph costs itself and at most one line before it; one after
    for wanted in (True, False):  # quoted paragraphs first, then any that still fit
        for index, paragraph in enumerate(paragraphs):
            cost = size_of(paragraph) + 2 + marker
            if quoted[index] == wanted and not keep[index] and used + cost <= room:
                keep[index], used = True, used + cost
    if any(keep):
        return _cut(paragraphs, keep)
    first = next((p for p, q in zip(paragraphs, quoted, strict=True) if q), paragraphs[0])
    start = _fit(first, room - marker - 2)  # not one paragraph fits: the start of a quoted one
    return start + "\n\n" + CUT_LINE.format(size=size_of(text) - size_of(start))


def around(text: str, quote: str, chars: int = 400) -> tuple[str, str, str] | None:
    """The text before the quote (up to `chars`), the quote as the text writes it, and the text
    after it; None when the text does not hold the quote."""
    span = locate(quote, text)
    if span is None:
        return None
    start, end = span
    return text[max(0, start - chars) : start], text[start:end], text[end : end + chars]
