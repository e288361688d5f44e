"""Which links of a page a worker is shown first: those in its running text, nearest the task.

A page's links are ranked by where they stand (a link in a sentence before one in a list of
links, a "related pages" box, an aside or a footer), then by how much of the worker's task
their anchor text and surrounding words hold (`domain.lexical.support_score`, which reads CJK
as well as Latin text), then by their place on the page. Ordering only: the model chooses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from deep_research.domain.lexical import support_score


class RankedLink(Protocol):
    """What ranking reads of a link (a `state.PageLink`, or the reader's `FoundLink`)."""

    @property
    def text(self) -> str: ...
    @property
    def context(self) -> str: ...
    @property
    def in_text(self) -> bool: ...


Link = TypeVar("Link", bound=RankedLink)


def ranked_links(links: Sequence[Link], task: str) -> list[Link]:
    """The links in the order a worker is shown them."""
    scored = [
        (not link.in_text, -support_score(task, f"{link.text} {link.context}"), place)
        for place, link in enumerate(links)
    ]
    return [links[place] for *_, place in sorted(scored)]
