"""Quotes that keep their words: a model's quote is kept only as the page itself says it.

A model asked to copy passages may change a word, join two sentences or invent one. A quote is
found in the page with whitespace and quotation-mark style ignored, and kept as the page's own
text; one not found is dropped. When the model gives nothing usable, the sentences that share
most words with the subtask are the quotes (verbatim by construction).
"""

from __future__ import annotations

import re

from deep_research.domain.lexical import support_score

_SPACE = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n\s*\n")
_MARKS = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "«": '"', "»": '"'})
_TRIM = " \t\n\"'“”‘’«»…"
MIN_QUOTE_CHARS = 12  # shorter "quotes" (a word, a number) say nothing on their own
MAX_QUOTE_CHARS = 1200  # a quote longer than this is a page, not a quote


def _flat(text: str) -> str:
    """Text with runs of whitespace as one space and curly quotes straight."""
    return _SPACE.sub(" ", text.translate(_MARKS)).strip()


def _flat_map(page: str) -> tuple[str, list[int]]:
    """The page flattened as `_flat` does, and for each of its characters the page offset."""
    chars, where = [], []
    for at, char in enumerate(page):
        if char.isspace():
            if chars and chars[-1] != " ":
                chars.append(" ")
                where.append(at)
            continue
        chars.append(char.translate(_MARKS))
        where.append(at)
    return "".join(chars), where


def verbatim(quote: str, page: str) -> str | None:
    """The page's own words for `quote` when the page holds it (whitespace, letter case and
    quotation-mark style aside), as the page writes them with its whitespace flattened; None
    when it does not, or when the quote is too short or too long to be one."""
    if not MIN_QUOTE_CHARS <= len(_flat(quote).strip(_TRIM)) <= MAX_QUOTE_CHARS:
        return None
    span = locate(quote, page)
    return None if span is None else " ".join(page[span[0] : span[1]].split())


def locate(quote: str, page: str) -> tuple[int, int] | None:
    """Where the page holds `quote` (whitespace, letter case and quotation-mark style aside):
    its start and end offsets in `page`; None when it does not, or the quote has no words."""
    wanted = _flat(quote).strip(_TRIM)
    if not wanted:
        return None
    flat, where = _flat_map(page)
    for candidate in dict.fromkeys((wanted, wanted.rstrip(".。"))):  # a full stop it added
        at = flat.find(candidate)
        if at < 0 and len(flat.casefold()) == len(flat):  # else folding moves the offsets
            at = flat.casefold().find(candidate.casefold())
        if at >= 0 and candidate:
            return where[at], where[at + len(candidate) - 1] + 1
    return None


def sentences(text: str) -> list[str]:
    """A passage's sentences (or paragraphs), as written with whitespace flattened."""
    return [" ".join(part.split()) for part in _SENTENCE_END.split(text) if part.strip()]


def best_sentences(passages: list[str], query: str, limit: int) -> list[str]:
    """Up to `limit` sentences of the page that share most words with `query`, best first;
    sentences sharing no word are never chosen."""
    found = [s for p in passages for s in sentences(p) if len(s) >= MIN_QUOTE_CHARS]
    scored = [(support_score(query, s), i, s) for i, s in enumerate(found)]
    ranked = sorted((item for item in scored if item[0] > 0), key=lambda x: (-x[0], x[1]))
    return [s[:MAX_QUOTE_CHARS] for _, _, s in ranked[:limit]]
