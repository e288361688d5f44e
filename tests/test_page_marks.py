"""What a page says besides its text: where its links stand, and its date (pure, no I/O)."""

from __future__ import annotations

import gc
from datetime import date
from urllib.parse import urldefrag, urljoin, urlsplit

import pytest

from deep_research.domain.dates import heading_date, iso_date, newer, page_date
from deep_research.domain.link_rank import ranked_links
from deep_research.nodes.prompts import kept_links, link_line, shown_links
from deep_research.state import PageLink, ReadPage
from deep_research.tools.corpus.reading import read_html, read_pdf
from deep_research.tools.search.pages import _followable, page_links

from stand_ins.documents import make_pdf

PAGE = b"""<html><head><title>T</title>
<meta property="article:published_time" content="2021-03-04T10:00:00Z">
<script type="application/ld+json">{"@graph": [{"@type": "Article",
 "dateModified": "2024-05-06T08:00:00+02:00"}]}</script></head><body>
<nav><a href="/menu">Menu</a></nav>
<header><a href="/home">Home</a></header>
<ul><li><a href="/r1">Related one</a></li><li><a href="/r2">Related two</a></li></ul>
<p>The survey measured things; see <a href="/deep">the detail page</a> for the ratios.</p>
<table><tr><td>Zeta: <a href="/t">the table's source</a> gives every figure here</td></tr></table>
<aside><p>Some words here about <a href="/side">side things</a> in an aside box</p></aside>
<footer><p>Copyright and <a href="/legal">the legal notice</a> of the site owners</p></footer>
<p><time datetime="2023-02-02">February</time></p>
<p><a href="#top">top</a> <a href="/deep">again</a></p>
</body></html>"""


def test_links_keep_their_words_and_whether_they_stand_in_the_text():
    document = read_html(PAGE)
    links = {}
    for link in document.links:
        links.setdefault(link.href, link)  # the first of each
    assert "/menu" not in links  # a nav's links are not the page's
    deep = links["/deep"]
    assert deep.in_text and deep.text == "the detail page"
    assert deep.context == "The survey measured things; see … for the ratios."
    assert links["/t"].in_text  # a table cell with words around its link
    for listed in ("/r1", "/r2", "/home", "/side", "/legal"):  # lists, header, aside, footer
        assert not links[listed].in_text, listed
    assert document.dates == ("2021-03-04T10:00:00Z", "2024-05-06T08:00:00+02:00")
    assert document.times == ("2023-02-02",)


BASE = "https://site.example/a/b"


def test_page_links_are_absolute_once_each_and_in_the_text_when_any_copy_is():
    links = page_links(read_html(PAGE), BASE)
    urls = [link.url for link in links]
    assert urls.count("https://site.example/deep") == 1 and "#top" not in " ".join(urls)
    deep = next(link for link in links if link.url.endswith("/deep"))
    assert deep.in_text and deep.text == "the detail page"


HREFS = ["/x", "x", "../y", "//other.example/z", "/p?q=1#f", "?q=2", "#top", "mailto:a@b.c"]
HREFS += ["https://site.example/abs#f", "http://[::1", "/./a/../b", "", "/x"]
HREFS += ["//", "https://?q=3", "Http://Other.example/Z?", "//b.example:8443/w"]  # no host, a host
BASES = [
    "https://site.example/a/b",
    "https://site.example/c/d/",
    "https://user:pw@other.example:8443/a/b?q=1",
    "http://[::1]:8080/c/",
]


@pytest.mark.parametrize("base", BASES)
def test_links_read_against_one_page_are_as_the_url_library_reads_them_whatever_was_read_before(
    base,
):
    """An href from a site's root is read once per site (its navigation repeats on every
    page): pages read first, on another path of the site or on other sites, change nothing."""
    html = "".join(
        f'<p>Some words around <a href="{h}">link {n}</a> here.</p>' for n, h in enumerate(HREFS)
    )
    document = read_html(html.encode())
    for other in BASES:
        page_links(document, other)
    expected = []
    for href in dict.fromkeys(HREFS):
        if not href or href.startswith("#"):  # not a link to another page
            continue
        try:
            url = urldefrag(urljoin(base, href)).url
        except ValueError:
            continue
        if urlsplit(url).scheme in ("http", "https") and url not in expected:
            expected.append(url)
    got = [link.url for link in page_links(document, base)]
    assert got == expected
    assert urljoin(base, "/x") in got and urljoin(base, "x") in got  # this page's, no other's


def test_an_href_longer_than_a_kept_url_is_read_but_never_kept_for_the_next_page():
    """The resolution cache outlives runs: a 100 kB href (a `data:` download) stays out of it."""
    href = "/q?" + "a" * 100_000
    html = f'<p>A very long link <a href="{href}">here</a> and <a href="/ok">a short one</a>.</p>'
    _followable.cache_clear()
    links = page_links(read_html(html.encode()), "https://site.example/a")
    assert [link.url for link in links] == ["https://site.example/ok"]
    assert _followable.cache_info().currsize == 1  # the short one


def test_links_in_the_text_come_first_then_those_nearest_the_task():
    links = [
        PageLink(url="https://s/related-zeta", text="Zeta index overview"),
        PageLink(url="https://s/filler", text="more", context="words about nothing", in_text=True),
        PageLink(url="https://s/zeta", text="the Zeta table", context="see the", in_text=True),
    ]
    ranked = [link.url for link in ranked_links(links, "What is the Zeta index of Quillon?")]
    assert ranked == ["https://s/zeta", "https://s/filler", "https://s/related-zeta"]


def test_a_worker_is_shown_every_link_in_the_text_and_a_few_from_lists():
    in_text = [PageLink(url=f"https://s/t{n}", in_text=True) for n in range(30)]
    listed = [PageLink(url=f"https://s/l{n}") for n in range(30)]
    assert len(shown_links(in_text + listed)) == 35  # more than 20 when they matter
    assert len(shown_links(in_text * 2 + listed)) == 45  # at most 40 from the text
    assert len(shown_links(in_text[:3] + listed)) == 20
    line = link_line(PageLink(url="https://s/x", text="the table", context="see … below"))
    assert line == "  https://s/x — the table (see … below)"


def test_a_worker_keeps_of_a_page_the_links_it_can_be_shown_and_no_footer_more():
    """A footer of 150 links was kept whole (60 of them) by every worker that read the page."""
    in_text = [PageLink(url=f"https://s/t{n}", in_text=True) for n in range(3)]
    footer = [PageLink(url=f"https://s/f{n}") for n in range(150)]
    kept = kept_links(in_text + footer)
    assert kept == in_text + footer[:20]
    assert shown_links(kept) == shown_links(in_text + footer)  # the first page to list them
    many = [PageLink(url=f"https://s/m{n}", in_text=True) for n in range(50)]
    assert kept_links(many + footer) == many[:40] + footer[:20]


def test_a_kept_link_is_one_object_for_the_garbage_collector():
    """A worker holds up to 60 links of each page it read; as pydantic models each brought its
    set of fields given, a second object every full collection walked."""
    page = ReadPage(url="https://s", links=[{"url": f"https://s/{n}"} for n in range(60)])
    beside = [o for o in gc.get_referents(*page.links) if not isinstance(o, type)]
    assert len(beside) == 4 * 60 and not [o for o in beside if gc.is_tracked(o)]
    assert page.model_dump()["links"][7] == {
        "url": "https://s/7",
        "text": "",
        "context": "",
        "in_text": False,
    }


def test_pages_checkpointed_with_bare_links_still_load():
    page = ReadPage.model_validate({"url": "https://s/a", "links": ["https://s/b"]})
    assert page.links == [PageLink(url="https://s/b")]


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("2024-03-12T23:00:00-05:00", "2024-03-12"),  # the day the source wrote
        ("2024-03-12", "2024-03-12"),
        ("2024-03", "2024-03"),
        ("2024", "2024"),
        ("Tue, 12 Mar 2024 10:00:00 GMT", "2024-03-12"),
        ("D:20230405120000Z", "2023-04-05"),
        ("03/04/2024", ""),  # March or April: never guessed
        ("2024-02-30", ""),
        ("1900-01-01", ""),
        ("2099-01-01", ""),  # to come: an event's date, not the source's
        ("yesterday", ""),
        ("", ""),
    ],
)
def test_a_date_is_read_only_from_forms_that_cannot_be_misread(text, iso):
    assert iso_date(text) == iso


@pytest.mark.parametrize(
    ("heading", "iso"),
    [
        ("2.4.0 — 2024-03-12", "2024-03-12"),
        ("Release of March 12, 2024", "2024-03-12"),
        ("12 March 2024", "2024-03-12"),
        ("Sept. 3, 2023", "2023-09-03"),
        ("2024年3月12日 发布", "2024-03-12"),
        ("Version 2024", ""),
        ("03/04/2024", ""),
    ],
)
def test_a_heading_dates_a_page_only_with_a_full_unambiguous_date(heading, iso):
    assert heading_date(heading) == iso


def test_a_pages_date_comes_from_its_surest_sign():
    today = date(2025, 1, 1)
    meta = ["2021-03-04T10:00:00Z", "2024-05-06"]
    assert page_date(meta, ["2020-01-01"], [], "", today) == "2024-05-06"  # latest metadata
    assert page_date([], ["2023-02-02", "2024-01-01"], [], "", today) == "2023-02-02"
    notes = ["1.0 (2022-01-01)", "2.0 (2023-06-01)", "Roadmap for 2026-01-01"]
    assert page_date([], [], notes, "", today) == "2023-06-01"  # the latest; none to come
    header = "Tue, 12 Mar 2024 10:00:00 GMT"
    assert page_date([], [], ["Intro"], header, today) == "2024-03-12"  # the header, last
    assert page_date([], [], [], "", today) == ""
    assert newer("2024-03", "2024-03-12") == "2024-03-12" and newer("", "2021") == "2021"


def test_a_pdf_is_read_up_to_its_page_cap_with_its_metadata_date():
    pdf = make_pdf(["one 1", "two 2", "three 3"], "Doc", modified="D:20220304120000Z")
    document = read_pdf(pdf, max_pages=2)
    assert [block.text for block in document.blocks] == ["one 1", "two 2"]
    assert iso_date(document.dates[0]) == "2022-03-04"
