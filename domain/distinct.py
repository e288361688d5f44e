"""Distinct texts: the one rule for "the same query" or "the same subtask" in a run.

Whitespace is collapsed; two texts are the same when they match after Unicode normalisation,
case folding and trimming of quotes and end punctuation (the search cache keys queries the same
way, so a query the planner repeats is neither sent nor paid for twice).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import TypeVar

_SPACES = re.compile(r"\s+")
Item = TypeVar("Item")


def text_key(text: str) -> str:
    """What two texts must share to count as the same: normalised, case-folded, trimmed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SPACES.sub(" ", folded).strip(" \t\"'.,;:!?")


def first_of_each(
    items: Iterable[Item],
    text_of: Callable[[Item], str],
    *,
    already: Iterable[str] = (),
    limit: int | None = None,
) -> list[Item]:
    """The items whose text is not blank, not seen before and not in `already`; at most `limit`."""
    seen = {text_key(text) for text in already}
    kept: list[Item] = []
    for item in items:
        key = text_key(text_of(item))
        if key and key not in seen and (limit is None or len(kept) < limit):
            seen.add(key)
            kept.append(item)
    return kept


def distinct(
    texts: Iterable[str], *, already: Iterable[str] = (), limit: int | None = None
) -> list[str]:
    """The texts on one line each, without blanks, repeats or any of `already`; at most `limit`."""
    kept = first_of_each(texts, str, already=already, limit=limit)
    return [" ".join(text.split()) for text in kept]
