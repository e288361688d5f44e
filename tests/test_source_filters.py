"""Sources a user controls (issue 29): include/exclude domains and a time range, passed to the
providers that take them and enforced by us on every hit and page, shown in the run's header."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from deep_research.domain.source_filter import SourceFilter
from deep_research.export.facts import facts_of
from deep_research.settings import Settings
from deep_research.state import SearchHit
from deep_research.tools.search.factory import search_backend
from deep_research.tools.search.guard import FetchRefused
from deep_research.tools.search.pages import PageFetcher

NOW = datetime(2026, 12, 2, tzinfo=UTC)
ALLOWED = SourceFilter(include=("nature.com", "arxiv.org"), exclude=("blogs.nature.com",))


@pytest.mark.parametrize(
    ("url", "refused"),
    [
        ("https://nature.com/a", False),
        ("https://www.nature.com/a", False),
        ("https://news.nature.com/a", False),  # a subdomain of an included domain
        ("https://blogs.nature.com/a", True),  # excluded, though under an included one
        ("https://notnature.com/a", True),  # not a subdomain: a different name
        ("https://example.org/a", True),
        ("file:///home/me/notes.md", False),  # a local document: domains do not apply
        ("https://blogs.nature.com./a", True),  # the same host, written fully qualified
        ("https://nature.com./a", False),
    ],
)
def test_domains_cover_their_subdomains_only(url, refused):
    assert (ALLOWED.refusal(url) is not None) is refused


@pytest.mark.parametrize(
    ("published", "kept"),
    [
        ("2026-11-30T08:00:00Z", True),
        ("2026-11-20", False),  # twelve days ago, out of a week
        ("Mon, 30 Nov 2026 10:00:00 GMT", True),
        ("", True),  # no date: kept (the filter is applied where dates are known)
        ("last Tuesday", True),  # unreadable: kept
    ],
)
def test_a_time_range_drops_only_hits_known_to_be_older(published, kept):
    assert SourceFilter(time_range="week").recent(published, NOW) is kept


def test_settings_read_domains_as_people_write_them():
    settings = Settings(include_domains="https://www.Nature.com/articles, arxiv.org")
    assert settings.include_domains == ["nature.com", "arxiv.org"]
    with pytest.raises(ValueError, match="is not a domain name"):
        Settings(exclude_domains=["not a domain"])


def search(settings: Settings) -> list[SearchHit]:
    return asyncio.run(search_backend(settings).search("zstd speed", 5))


def test_tavily_is_asked_to_filter_and_its_hits_are_checked_all_the_same(search_server):
    settings = Settings(
        search_backend="tavily",
        include_domains=["example.com"],
        exclude_domains=["spam.example.com"],
        time_range="month",
    )
    hits = search(settings)
    body = search_server.requests[-1]["body"]
    assert body["include_domains"] == ["example.com"]
    assert body["exclude_domains"] == ["spam.example.com"]
    assert body["time_range"] == "month"
    assert hits and all(h.url.startswith("https://example.com/") for h in hits)
    # A provider that ignores the filter still gives us nothing we did not allow.
    assert search(Settings(search_backend="tavily", include_domains=["nature.com"])) == []


def test_no_filter_sends_no_filter_parameters(search_server):
    search(Settings(search_backend="tavily"))
    body = search_server.requests[-1]["body"]
    assert not {"include_domains", "exclude_domains", "time_range"} & set(body)


def test_searxng_gets_the_time_range(searxng_server):
    search(Settings(search_backend="searxng", time_range="year"))
    assert searxng_server.requests[-1]["body"]["time_range"] == "year"


def test_bocha_gets_freshness_and_its_dated_hits_are_checked(bocha_server):
    assert search(Settings(search_backend="bocha", time_range="week")) == []  # dated 2024
    assert bocha_server.requests[-1]["body"]["freshness"] == "oneWeek"
    hits = search(Settings(search_backend="bocha"))
    assert hits and bocha_server.requests[-1]["body"]["freshness"] == "noLimit"
    assert hits[0].published == "2024-07-22T00:00:00+08:00"  # Beijing time, as Bocha means


def test_a_page_off_the_allowed_domains_is_never_fetched():
    fetcher = PageFetcher(Settings(include_domains=["example.org"], fetch_private_addresses=True))
    with pytest.raises(FetchRefused, match="not on the included domains"):
        asyncio.run(fetcher.fetch("http://127.0.0.1:9/page"))  # refused before connecting


def test_the_run_header_names_the_filters():
    settings = Settings(include_domains=["nature.com"], time_range="month")
    rows = dict(facts_of({"question": "q", "settings": settings}).rows())
    assert rows["sources kept to"] == "only nature.com; from the last month"
    assert "sources kept to" not in dict(facts_of({"question": "q", "settings": Settings()}).rows())
