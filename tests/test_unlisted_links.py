"""A page read is kept without the links the worker's evidence never shows under it (those
already listed: a site's footer on each of its pages), and nothing a worker sees or may follow
changes for it (pure, no I/O)."""

from __future__ import annotations

import random

from deep_research.nodes.prompts import tool_evidence, unlisted_links
from deep_research.nodes.worker_tools import read_targets
from deep_research.state import PageLink, ReadPage, SearchHit


def footed(n: int, site: str = "https://s", *, in_text: int = 2) -> ReadPage:
    """Page `n` of a site: a few links of its own in its text, then the site's footer of 20."""
    own = [PageLink(url=f"{site}/p{n}/t{k}", text=f"own {k}", in_text=True) for k in range(in_text)]
    footer = [PageLink(url=f"{site}/topics/{k}", text=f"Topic {k}") for k in range(20)]
    return ReadPage(url=f"{site}/p{n}", title=f"Page {n}", links=own + footer)


def test_a_sites_footer_is_kept_under_its_first_page_only():
    first, second = footed(1), footed(2)
    kept = unlisted_links([first], [second])
    own = ["https://s/p2/t0", "https://s/p2/t1"]
    # the first page shows 18 of the footer beside its own 2 links; the second the other 2
    assert [link.url for link in kept[0].links] == [
        *own,
        "https://s/topics/18",
        "https://s/topics/19",
    ]
    assert tool_evidence([], [first, second]) == tool_evidence([], [first, *kept])
    assert unlisted_links([], [first]) == [first]  # nothing listed before it: kept whole


def test_a_link_to_a_page_read_the_same_round_is_not_kept():
    first = ReadPage(url="https://s/a", links=[PageLink(url="https://s/b", in_text=True)])
    second = ReadPage(url="https://s/b", links=[PageLink(url="https://s/a", in_text=True)])
    assert [page.links for page in unlisted_links([], [first, second])] == [[], []]


def random_page(rng: random.Random, n: int) -> ReadPage:
    """A page of one of a few small sites: links in its text and in lists, many shared."""
    site = f"https://s{rng.randrange(3)}"
    urls = [f"{site}/{rng.randrange(40)}" for _ in range(rng.randrange(70))]
    links = [PageLink(url=u, text=u[-2:], in_text=rng.random() < 0.3) for u in dict.fromkeys(urls)]
    return ReadPage(
        url=f"{site}/{rng.randrange(40) if rng.random() < 0.5 else f'r{n}'}", links=links
    )


def test_the_evidence_and_the_links_to_follow_stay_the_same_round_after_round():
    """Pages kept round by round as a read's saved outcome and then `act` keep them, against
    the same pages kept whole."""
    rng = random.Random(38)
    dropped = 0
    for worker in range(300):
        whole: list[ReadPage] = []
        kept: list[ReadPage] = []
        hits = [SearchHit(url=f"https://s0/{k}") for k in range(rng.randrange(5))]
        for _ in range(rng.randrange(1, 5)):  # rounds
            new = [random_page(rng, len(whole) + k) for k in range(rng.randrange(1, 4))]
            whole += new
            saved = [unlisted_links(kept, [page])[0] for page in new]  # each call's outcome
            kept += unlisted_links(kept, saved)  # then `act`, with the round's other pages
            assert tool_evidence(hits, kept) == tool_evidence(hits, whole), worker
            state = {"hits": hits}
            assert read_targets({**state, "read_pages": kept}) == read_targets(
                {**state, "read_pages": whole}
            )
        dropped += sum(len(w.links) - len(k.links) for w, k in zip(whole, kept, strict=True))
    assert dropped > 10_000  # the test's pages share most of their links
