"""Which links of a page a worker is shown first: those in its running text, nearest the task.

A page's links are ranked by where they stand (a link in a sentence before one in a list of
links, a "related pages" box, an aside or a footer), then by how much of the worker's task
their anchor text and surrounding words hold (`domain.lexical.support_score`, which reads CJK
as well as Latin text), then by their place on the page. Ordering only: the model chooses.
"""

from __future__ import annotations

from deep_research.domain.lexical import support_score
from deep_research.state import PageLink


def ranked_links(links: list[PageLink], task: str) -> list[PageLink]:
    """The links in the order a worker is shown them."""
    scored = [
        (not link.in_text, -support_score(task, f"{link.text} {link.context}"), place)
        for place, link in enumerate(links)
    ]
    return [links[place] for *_, place in sorted(scored)]
