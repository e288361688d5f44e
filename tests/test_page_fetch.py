"""Whole-page reading: the SSRF guard, size cap, timeout, budget, redirects, HTML and PDF."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import ipaddress
import weakref

import httpcore
import pytest

from deep_research.domain.link_rank import ranked_links
from deep_research.settings import Settings
from deep_research.state import SearchHit
from deep_research.tools.search import guard
from deep_research.tools.search.guard import FetchRefused, refusal
from deep_research.tools.search.pages import (
    PAGE_CHARS,
    FetchedPage,
    PageFetcher,
    WholePages,
    best_passages,
)

LOOPBACK = ipaddress.ip_address("127.0.0.1")


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch):
    """Whatever the guard decides, no test socket goes anywhere but 127.0.0.1."""
    connect = httpcore.AnyIOBackend.connect_tcp

    async def only_loopback(self, host, port, *args, **kwargs):
        assert host == "127.0.0.1", f"a test tried to connect to {host}"
        return await connect(self, host, port, *args, **kwargs)

    monkeypatch.setattr(httpcore.AnyIOBackend, "connect_tcp", only_loopback)


@pytest.fixture
def loopback_is_public(monkeypatch):
    """The stand-in site (on 127.0.0.1) counts as public; every other address as it really is."""
    real = guard.refusal
    monkeypatch.setattr(guard, "refusal", lambda a: None if a == LOOPBACK else real(a))


def fetcher(**values) -> PageFetcher:
    return PageFetcher(Settings(search_backend="duckduckgo", **values))


def read(fetch: PageFetcher, url: str, query: str = "zstd level 19 logs") -> str:
    return asyncio.run(fetch.text(url, query))


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("169.254.169.254", "link-local"),
        ("10.0.0.5", "private"),
        ("192.168.1.10", "private"),
        ("172.16.0.1", "private"),
        ("100.64.0.1", "non-public"),
        ("0.0.0.0", "unspecified"),
        ("::1", "loopback"),
        ("fe80::1", "link-local"),
        ("fd00::1", "private"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:169.254.169.254", "link-local"),
        ("2002:0a00:0001::1", "private"),  # 6to4 wrapping 10.0.0.1
        ("224.0.0.1", "multicast"),
        ("93.184.216.34", None),
        ("2606:4700:4700::1111", None),
    ],
)
def test_refusal_names_the_kind_of_address(address, reason):
    assert refusal(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/article",
        "http://localhost:{port}/article",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.1.2.3/intranet",
        "http://[::1]:{port}/article",
        "http://[::ffff:127.0.0.1]:{port}/article",
    ],
)
def test_private_loopback_and_link_local_pages_are_refused(page_server, url):
    port = page_server.url.rsplit(":", 1)[1]
    target = url.format(port=port)
    with pytest.raises(FetchRefused, match="resolves to"):
        asyncio.run(fetcher().fetch(target))
    assert read(fetcher(), target) == ""
    assert page_server.served == []


def test_a_setting_allows_private_addresses(page_server):
    text = read(fetcher(fetch_private_addresses=True), f"{page_server.url}/article")
    assert "11.2x" in text and page_server.served == ["/article"]


def test_every_redirect_hop_is_checked(page_server, loopback_is_public):
    port = page_server.url.rsplit(":", 1)[1]
    fetch = fetcher()
    assert "11.2x" in read(fetch, f"{page_server.url}/redirect?to=/article")
    for target in ("http://169.254.169.254/latest/meta-data/", f"http://127.0.0.2:{port}/x"):
        with pytest.raises(FetchRefused):
            asyncio.run(fetch.fetch(f"{page_server.url}/redirect?to={target}"))
    with pytest.raises(FetchRefused, match="only http and https"):
        asyncio.run(fetch.fetch(f"{page_server.url}/redirect?to=file:///etc/passwd"))


def test_html_is_read_by_the_corpus_extractor_and_the_best_passage_kept(page_server):
    text = read(fetcher(fetch_private_addresses=True), f"{page_server.url}/article")
    assert "track()" not in text and "Home" not in text  # script and nav dropped
    assert text.index("11.2x") < len(text) and len(text) <= PAGE_CHARS


@pytest.mark.parametrize("bad", ["http://evil.example:abc/", "http://例え..jp/", "http://[::1/"])
def test_a_page_whose_redirect_names_no_valid_address_is_skipped_not_raised(page_server, bad):
    fetch = fetcher(fetch_private_addresses=True)
    assert read(fetch, f"{page_server.url}/redirect?to={bad}") == ""
    assert read(fetch, bad) == ""


def test_an_address_with_unicode_is_fetched_as_the_uri_it_names(page_server):
    """A cited page of a Chinese or Japanese site (path or host not ASCII) is read, not refused
    by the HTTP layer: it is sent percent-encoded."""
    text = read(fetcher(fetch_private_addresses=True), f"{page_server.url}/文章/パス")
    assert text
    assert page_server.served[-1] == "/%E6%96%87%E7%AB%A0/%E3%83%91%E3%82%B9"


def test_pdf_pages_are_read(page_server):
    text = read(fetcher(fetch_private_addresses=True), f"{page_server.url}/paper.pdf")
    assert "11.2x on logs" in text


def test_size_cap_and_timeout(page_server):
    fetch = fetcher(fetch_private_addresses=True, page_max_bytes=10_000, page_timeout=0.5)
    data = asyncio.run(fetch.fetch(f"{page_server.url}/big")).data
    assert len(data) == 10_000
    assert read(fetch, f"{page_server.url}/slow") == ""
    assert read(fetch, f"{page_server.url}/missing") == ""
    assert read(fetch, f"{page_server.url}/binary") == ""
    assert read(fetch, f"{page_server.url}/gzip") == ""  # not read as garbage text
    assert {r["headers"]["accept-encoding"] for r in page_server.requests} == {"identity"}


def test_each_url_is_fetched_once_and_the_budget_holds(page_server):
    fetch = fetcher(fetch_private_addresses=True, max_page_fetches=2)

    async def many() -> list[str]:
        urls = [f"{page_server.url}/a", f"{page_server.url}/a", f"{page_server.url}/b"]
        urls.append(f"{page_server.url}/c")
        return await asyncio.gather(*(fetch.text(url, "zstd") for url in urls))

    texts = asyncio.run(many())
    assert sorted(page_server.served) == ["/a", "/b"] and fetch.sent == 2
    assert texts[0] == texts[1] != "" and texts[3] == ""


def test_a_pages_links_are_kept_as_plain_tuples_the_garbage_collector_stops_walking(
    page_server,
):
    """A page read is kept for the whole run, with its links (500 here): as pydantic models they
    were 1,000 objects every full collection walked again (each with its set of fields given);
    now none, and neither are the lists that held them and the passages' ends, walked item by
    item.
    A worker ranks them and keeps `PageLink`s of the best."""
    items = "".join(f'<li><a href="/p/{n}">Page {n}</a></li>' for n in range(500))
    page_server.pages["/many"] = f"<html><body><p>Some text.</p><ul>{items}</ul></body></html>"
    page = asyncio.run(fetcher(fetch_private_addresses=True).page(f"{page_server.url}/many"))
    assert len(page.links) == 500 and page.links[7][0] == f"{page_server.url}/p/7"
    assert page.passages and "Some text." in page.passages[0]
    gc.collect()  # a tuple of plain values is untracked once the collector has seen it
    assert not [link for link in page.links if gc.is_tracked(link)]
    gc.collect()  # and the tuple holding them, at the first collection that sees them untracked
    assert not gc.is_tracked(page.links) and not gc.is_tracked(page.ends)  # the text: a str
    (first,) = ranked_links(page.found_links(), "page 7")[:1]
    assert (first.url, first.text, first.in_text) == (f"{page_server.url}/p/7", "Page 7", False)


def test_a_page_read_is_held_once_for_the_reader_and_the_runs_evidence(page_server):
    """A run holds every page it read until it ends: its passages (the reader's, for later
    quotes) and its text (the evidence a citation rests on) are one string, not two copies."""
    paragraphs = [f"Paragraph {n} of the page, with its own words." for n in range(40)]
    body = "".join(f"<p>{text}</p>" for text in paragraphs)
    page_server.pages["/once"] = f"<html><body><article>{body}</article></body></html>"
    url = f"{page_server.url}/once"
    handed: list[str] = []

    async def on_read(asked: str, answer, text: str) -> None:
        handed.append(text)

    reader = PageFetcher(Settings(fetch_private_addresses=True), on_read=on_read)
    page = asyncio.run(reader.page(url))
    (text,) = handed
    assert text is page.text and text == "\n\n".join(page.passages)
    assert all(p in text for p in paragraphs) and len(page.passages) >= 1
    assert [len(p) for p in page.passages] == [e - s for s, e in _spans(page)]


def _spans(page: FetchedPage) -> list[tuple[int, int]]:
    """Where each of a page's passages is in its text, found by searching."""
    spans, at = [], 0
    for passage in page.passages:
        start = page.text.index(passage, at)
        spans.append((start, start + len(passage)))
        at = start + len(passage)
    return spans


def test_a_pages_passages_are_cut_from_its_text_as_they_were_given():
    """Passages with blank lines and breaks of their own, an empty one, none at all."""
    for passages in [(), ("one",), ("a\n\nb", "", "c d\n", "\n\ne")]:
        page = FetchedPage.of(passages, title="t")
        assert page.passages == passages and page.text == "\n\n".join(passages)
    assert FetchedPage(error="refused").passages == ()


def test_a_link_on_every_page_of_a_site_is_kept_once_by_the_run(page_server):
    """A site's footer of 150 links, on each of its pages a run reads, was held again for each."""
    footer = "".join(f'<li><a href="/topics/{n}">Topic {n}</a></li>' for n in range(150))
    for name in ("one", "two"):
        page_server.pages[f"/{name}"] = (
            f"<html><body><p>Page {name} says <a href='/{name}/more'>more</a> here and"
            f" there.</p><footer><ul>{footer}</ul></footer></body></html>"
        )
    reader = fetcher(fetch_private_addresses=True)

    async def read_both():
        return [await reader.page(f"{page_server.url}/{name}") for name in ("one", "two")]

    one, two = asyncio.run(read_both())
    assert len(one.links) == len(two.links) == 151
    assert one.links[0] != two.links[0] and one.links[0][0].endswith("/one/more")
    assert all(a is b for a, b in zip(one.links[1:], two.links[1:], strict=True))
    assert two.links[5] == (f"{page_server.url}/topics/4", "Topic 4", "", False)


def test_a_pages_links_are_kept_without_a_key_or_password_the_page_shows(page_server, monkeypatch):
    """A page's text was kept without a key we hold; its links' addresses and words were not."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    page_server.pages["/leaky"] = (
        "<html><body><p>See <a href='https://ops:hunter2@db.example/x'>our db</a> and the key"
        " <a href='/k?token=sk-test-0123456789'>sk-test-0123456789</a> here, said nobody.</p>"
        "<p>And <a href='/plain'>a plain link</a> too, in the running text.</p></body></html>"
    )
    page = asyncio.run(fetcher(fetch_private_addresses=True).page(f"{page_server.url}/leaky"))
    kept = " ".join(" ".join(map(str, link)) for link in page.links)
    assert "hunter2" not in kept and "sk-test-0123456789" not in kept
    assert "https://ops:***@db.example/x" in kept and f"{page_server.url}/plain" in kept


def test_best_passages_prefer_the_query_words_in_page_order():
    passages = ["Cookie banner text.", "zstd level 19 compresses logs 11x.", "About us."]
    assert best_passages(passages, "zstd logs", limit=40) == passages[1]
    assert best_passages(passages, "zstd logs") == "\n\n".join(passages)


class Fixed:
    """A backend that returns the same hits for every query."""

    def __init__(self, hits: list[SearchHit]) -> None:
        self.hits = hits

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        return [hit.model_copy() for hit in self.hits]


def test_whole_pages_fill_thin_hits_only_and_leave_refused_ones(page_server):
    hits = [
        SearchHit(url="http://10.9.8.7/secret", content="thin private", query="q"),
        SearchHit(url=f"{page_server.url}/article", content="thin", query="q"),
        SearchHit(url=f"{page_server.url}/thick", content="x" * 700, query="q"),
        SearchHit(url=f"{page_server.url}/third", content="thin", query="q"),
    ]
    settings = Settings(search_backend="duckduckgo", fetch_private_addresses=False)
    backend = WholePages(Fixed(hits), PageFetcher(settings), per_search=3)
    got = asyncio.run(backend.search("zstd level 19", 5))
    assert [hit.content for hit in got] == [hit.content for hit in hits]  # all refused
    assert page_server.served == []

    allowed = Settings(search_backend="duckduckgo", fetch_private_addresses=True)
    backend = WholePages(Fixed(hits[1:]), PageFetcher(allowed), per_search=2)
    got = asyncio.run(backend.search("zstd level 19", 5))
    assert got[0].content.startswith("thin\n\n") and "11.2x" in got[0].content
    assert got[1].content == "x" * 700 and got[2].content == "thin"  # thick, and past the top 2
    assert page_server.served == ["/article"]


class _AskingStep:
    """Stands for what the step that asked for a page holds in its context (its LangGraph
    config, runtime and callbacks)."""


_ASKING_STEP: contextvars.ContextVar[_AskingStep | None] = contextvars.ContextVar(
    "asking_step", default=None
)


def test_a_page_read_that_has_ended_keeps_nothing_of_the_step_that_asked(page_server):
    """The reader keeps a page for the run's later asks; what it keeps is the page, not the
    read's task, which holds the asking step's context as long as it lives."""
    page_server.pages["/kept"] = "<html><body><article><p>Kept words.</p></article></body></html>"
    url = f"{page_server.url}/kept"
    reader = PageFetcher(Settings(fetch_private_addresses=True))

    async def ask() -> tuple[weakref.ref, FetchedPage]:
        step = _AskingStep()
        _ASKING_STEP.set(step)
        page = await reader.page(url)
        await asyncio.sleep(0)  # the read's own callbacks run
        return weakref.ref(step), page

    gc.collect()
    gc.disable()  # only reference counts free anything now
    try:
        step, page = asyncio.run(ask())
        assert "Kept words." in page.text
        assert step() is None
        assert asyncio.run(reader.page(url)) is page  # asked again: the page kept, no new read
    finally:
        gc.enable()
