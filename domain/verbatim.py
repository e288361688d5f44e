"""Quotes that keep their words: a model's quote is kept only as the page itself says it.

A model asked to copy passages may change a word, join two sentences or invent one. A quote is
found in the page with whitespace and quotation-mark style ignored, and kept as the page's own
text; one not found is dropped. When the model gives nothing usable, the sentences that share
most words with the subtask are the quotes (verbatim by construction).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate

from deep_research.domain.lexical import support_score

_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\S+")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n\s*\n")
_MARKS = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "«": '"', "»": '"'})
_TRIM = " \t\n\"'“”‘’«»…"
MIN_QUOTE_CHARS = 12  # shorter "quotes" (a word, a number) say nothing on their own
MAX_QUOTE_CHARS = 1200  # a quote longer than this is a page, not a quote


def _flat(text: str) -> str:
    """Text with runs of whitespace as one space and curly quotes straight."""
    return _SPACE.sub(" ", text.translate(_MARKS)).strip()


class FlatPage:
    """A page flattened once (whitespace runs as one space, curly quotes straight), so that
    each of its quotes is looked up without flattening the page again."""

    def __init__(self, page: str) -> None:
        self.page = page
        marked = page.translate(_MARKS)  # one character for one: offsets are the page's
        words = marked.split()
        self._page_starts = [match.start() for match in _WORD.finditer(marked)]
        self._flat_starts = list(accumulate((len(w) + 1 for w in words[:-1]), initial=0))
        trailing = " " if words and marked[-1].isspace() else ""
        self.flat = " ".join(words) + trailing
        folded = self.flat.casefold()
        self._folded = folded if len(folded) == len(self.flat) else None  # else offsets move

    def _page_offset(self, at: int) -> int:
        """Where the flat text's character `at` is in the page (a space: its run's first)."""
        word = bisect_right(self._flat_starts, at) - 1
        return self._page_starts[word] + at - self._flat_starts[word]

    def verbatim(self, quote: str) -> str | None:
        """The page's own words for `quote` (see `verbatim`)."""
        if not MIN_QUOTE_CHARS <= len(_flat(quote).strip(_TRIM)) <= MAX_QUOTE_CHARS:
            return None
        span = self.span(quote)
        return None if span is None else " ".join(self.page[span[0] : span[1]].split())

    def span(self, quote: str) -> tuple[int, int] | None:
        """Where the page holds `quote` (whitespace, letter case and quotation-mark style
        aside): its start and end offsets in the page; None when it does not, or the quote has
        no words."""
        wanted = _flat(quote).strip(_TRIM)
        for candidate in dict.fromkeys((wanted, wanted.rstrip(".。"))):  # a full stop it added
            at = self.flat.find(candidate) if candidate else -1
            if at < 0 and candidate and self._folded is not None:
                at = self._folded.find(candidate.casefold())
            if at >= 0:
                start, end = self._page_offset(at), self._page_offset(at + len(candidate) - 1)
                return start, end + 1
        return None


def verbatim(quote: str, page: str) -> str | None:
    """The page's own words for `quote` when the page holds it (whitespace, letter case and
    quotation-mark style aside), as the page writes them with its whitespace flattened; None
    when it does not, or when the quote is too short or too long to be one. Several quotes of
    one page: `FlatPage(page).verbatim(quote)` flattens the page once."""
    return FlatPage(page).verbatim(quote)


def locate(quote: str, page: str) -> tuple[int, int] | None:
    """Where the page holds `quote` (`FlatPage.span`): start and end offsets, or None."""
    return FlatPage(page).span(quote)


def sentences(text: str) -> list[str]:
    """A passage's sentences (or paragraphs), as written with whitespace flattened."""
    return [" ".join(part.split()) for part in _SENTENCE_END.split(text) if part.strip()]


def best_sentences(passages: Sequence[str], query: str, limit: int) -> list[str]:
    """Up to `limit` sentences of the page that share most words with `query`, best first;
    sentences sharing no word are never chosen."""
    found = [s for p in passages for s in sentences(p) if len(s) >= MIN_QUOTE_CHARS]
    scored = [(support_score(query, s), i, s) for i, s in enumerate(found)]
    ranked = sorted((item for item in scored if item[0] > 0), key=lambda x: (-x[0], x[1]))
    return [s[:MAX_QUOTE_CHARS] for _, _, s in ranked[:limit]]
