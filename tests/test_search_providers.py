"""Each web provider against a stand-in of its API: request shape, auth, paging, error codes."""

from __future__ import annotations

import asyncio
import base64

import httpx
import pytest
from ddgs.exceptions import DDGSException

from deep_research.cli.main import build_parser
from deep_research.settings import SEARCH_BACKENDS, WEB_PROVIDERS, Settings, detected_web_provider
from deep_research.tools.model_names import MissingCredentials
from deep_research.tools.search import SEARCH_ERRORS, SearchKeyRejected, SearchProviderError
from deep_research.tools.search.base import SearchRateLimited
from deep_research.tools.search.bocha import BochaSearch
from deep_research.tools.search.clients import SearchClients
from deep_research.tools.search.duckduckgo import IN_FLIGHT, DuckDuckGoSearch
from deep_research.tools.search.factory import PROVIDERS, search_backend, web_provider
from deep_research.tools.search.searxng import SearxngSearch, probe_searxng

from stand_ins.loopback import Reply


def settings(**values) -> Settings:
    return Settings(**{"search_retries": 2, **values})


def search(backend, query="zstd levels", n=5):
    return asyncio.run(backend.search(query, n))


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch):
    """Retries without the real backoff's seconds of sleep."""
    monkeypatch.setattr("deep_research.tools.retry_policy.backoff", lambda attempt: 0.01)


# Bocha


def test_bocha_request_shape_and_summary_as_content(bocha_server):
    hits = search(BochaSearch(settings(), SearchClients()))
    [request] = bocha_server.requests
    assert request["path"] == "/v1/web-search" and request["method"] == "POST"
    assert request["headers"]["authorization"] == f"Bearer {bocha_server.key}"
    assert request["body"] == {
        "query": "zstd levels",
        "summary": True,
        "count": 5,
        "page": 1,
        "freshness": "noLimit",
    }
    returned = [item["url"] for item in request["reply"]["data"]["webPages"]["value"]]
    assert [hit.url for hit in hits] == returned
    assert hits[0].content == "Summary 1 about zstd levels: the measured figure is 7."
    assert hits[0].title == "zstd levels — 第1页" and hits[0].query == "zstd levels"
    assert hits[0].score > hits[1].score > 0


def test_bocha_pages_of_ten(bocha_server):
    hits = search(BochaSearch(settings(), SearchClients()), n=15)
    assert [(r["body"]["count"], r["body"]["page"]) for r in bocha_server.requests] == [
        (10, 1),
        (10, 2),
    ]
    assert len({hit.url for hit in hits}) == 15


def test_bocha_short_page_ends_paging_and_snippet_stands_in(bocha_server):
    bocha_server.total, bocha_server.summaries = 4, False
    hits = search(BochaSearch(settings(), SearchClients()), n=15)
    assert len(bocha_server.requests) == 1 and len(hits) == 4
    assert hits[0].content == "Snippet 1 about zstd levels..."


def test_bocha_empty_answer_is_empty(bocha_server):
    assert search(BochaSearch(settings(), SearchClients()), "nothing at all") == []
    assert "webPages" not in bocha_server.requests[0]["reply"]["data"]


@pytest.mark.parametrize(
    ("break_it", "message"),
    [
        (lambda s, mp: mp.setenv("BOCHA_API_KEY", "sk-wrong-key"), "HTTP 401: Invalid API KEY"),
        (lambda s, mp: setattr(s, "balance", 0), "HTTP 403: You do not have enough money"),
    ],
)
def test_bocha_refused_key_is_named_and_not_retried(bocha_server, monkeypatch, break_it, message):
    break_it(bocha_server, monkeypatch)
    with pytest.raises(SearchKeyRejected, match="bad key for bocha") as error:
        search(BochaSearch(settings(), SearchClients()))
    assert message in str(error.value)
    assert len(bocha_server.requests) == 1
    assert issubclass(SearchKeyRejected, SEARCH_ERRORS)  # a worker records it


def test_bocha_rate_limit_and_5xx_are_retried(bocha_server):
    def flaky(number, body):
        if number == 1:
            return Reply(429, {"code": "429", "message": "You have reached the request limit"})
        if number == 2:
            return Reply(500, {"code": "500", "message": "xxxx"})
        return None

    bocha_server.fault = flaky
    assert len(search(BochaSearch(settings(), SearchClients()))) == 5
    assert [r["status"] for r in bocha_server.requests] == [429, 500, 200]


def test_bocha_5xx_until_retries_run_out(bocha_server):
    bocha_server.fault = lambda number, body: Reply(500, {"code": "500", "message": "down"})
    with pytest.raises(httpx.HTTPStatusError):
        search(BochaSearch(settings(search_retries=1), SearchClients()))
    assert len(bocha_server.requests) == 2


def test_bocha_code_in_body_is_checked(bocha_server):
    bocha_server.fault = lambda number, body: (
        Reply(200, {"code": 500, "msg": "busy"}) if number == 1 else None
    )
    assert (
        len(search(BochaSearch(settings(), SearchClients()))) == 5
    )  # a 5xx in the body is retried too
    bocha_server.fault = lambda number, body: Reply(200, {"code": "400", "msg": "odd"})
    with pytest.raises(SearchProviderError, match="code 400: odd"):
        search(BochaSearch(settings(), SearchClients()))


def test_bocha_needs_its_key(monkeypatch):
    monkeypatch.delenv("BOCHA_API_KEY", raising=False)
    with pytest.raises(MissingCredentials, match="BOCHA_API_KEY is not set"):
        BochaSearch(settings(), SearchClients())


# SearXNG


def test_searxng_request_shape_and_paging(searxng_server):
    hits = search(SearxngSearch(settings(), SearchClients()), n=12)
    assert [r["method"] for r in searxng_server.requests] == ["GET", "GET"]
    assert [r["body"] for r in searxng_server.requests] == [
        {"q": "zstd levels", "format": "json", "pageno": str(page)} for page in (1, 2)
    ]
    assert "application/json" in searxng_server.requests[0]["headers"]["accept"]
    returned = [r["url"] for req in searxng_server.requests for r in req["reply"]["results"]]
    assert [hit.url for hit in hits] == returned[:12]
    assert hits[0].content == "Result 1 about zstd levels: the figure is 7."


def test_searxng_one_page_is_enough_for_few_results(searxng_server):
    assert len(search(SearxngSearch(settings(), SearchClients()), n=5)) == 5
    assert len(searxng_server.requests) == 1


def test_searxng_with_json_off_says_how_to_turn_it_on(searxng_server):
    searxng_server.json_enabled = False
    with pytest.raises(SearchProviderError, match=r"add `json` to `search\.formats`"):
        search(SearxngSearch(settings(), SearchClients()))
    assert len(searxng_server.requests) == 1  # a 403 is not retried


def test_searxng_probe_runs_no_search(searxng_server):
    probe_searxng(searxng_server.url)
    assert searxng_server.requests[0]["body"] == {"format": "json"}  # no q: nothing searched
    assert searxng_server.requests[0]["reply"] == {"error": "No query"}
    searxng_server.json_enabled = False
    with pytest.raises(SearchProviderError, match="refuses JSON"):
        probe_searxng(searxng_server.url)


def test_searxng_empty_is_empty_but_every_engine_failing_is_an_error(searxng_server):
    assert search(SearxngSearch(settings(), SearchClients()), "nothing here") == []
    searxng_server.unresponsive = [["brave", "timeout"], ["google", "Suspended: CAPTCHA"]]
    with pytest.raises(SearchProviderError, match=r"google \(Suspended: CAPTCHA\)"):
        search(SearxngSearch(settings(), SearchClients()), "nothing here")


def test_searxng_limiter_429_is_retried(searxng_server):
    searxng_server.fault = lambda number, body: (
        Reply(429, raw=b"Too Many Requests") if number == 1 else None
    )
    assert len(search(SearxngSearch(settings(), SearchClients()))) == 5
    assert [r["status"] for r in searxng_server.requests] == [429, 200]


def test_searxng_credentials_in_the_address_become_basic_auth(searxng_server, monkeypatch):
    host = searxng_server.url.removeprefix("http://")
    monkeypatch.setenv("SEARXNG_URL", f"http://team:s3cret-pass@{host}/")
    search(SearxngSearch(settings(), SearchClients()))
    expected = "Basic " + base64.b64encode(b"team:s3cret-pass").decode()
    assert searxng_server.requests[0]["headers"]["authorization"] == expected
    searxng_server.json_enabled = False
    with pytest.raises(SearchProviderError) as error:
        search(SearxngSearch(settings(), SearchClients()))
    assert "s3cret" not in str(error.value) and host in str(error.value)


# DuckDuckGo (through ddgs)


def test_duckduckgo_form_post_redirects_unwrapped_ads_dropped(duckduckgo_server):
    hits = search(DuckDuckGoSearch(settings(), SearchClients()), n=6)
    [request] = duckduckgo_server.requests
    assert request["path"] == "/html/" and request["method"] == "POST"
    assert request["body"] == {"q": "zstd levels", "b": "", "l": "us-en"}
    assert "Mozilla/5.0" in request["headers"]["user-agent"]  # ddgs' browser impersonation
    assert [hit.url for hit in hits] == [
        duckduckgo_server.result_url("zstd levels", n) for n in range(1, 7)
    ]  # the wrapped ones (even n) keep their own query string
    assert hits[1].title == "zstd levels — result 2"
    assert hits[1].content == "Result 2 about zstd levels: the figure is 14."


def test_duckduckgo_second_page_by_offset(duckduckgo_server):
    hits = search(DuckDuckGoSearch(settings(), SearchClients()), n=14)
    assert [r["body"].get("s") for r in duckduckgo_server.requests] == [None, "10"]
    assert len(hits) == 14 and len({h.url for h in hits}) == 14


def test_duckduckgo_sends_few_requests_at_once(duckduckgo_server):
    duckduckgo_server.latency = 0.1
    backend = DuckDuckGoSearch(settings(), SearchClients())

    async def burst():
        return await asyncio.gather(*(backend.search(f"query {i}", 5) for i in range(8)))

    assert all(asyncio.run(burst()))
    assert duckduckgo_server.peak_concurrency == IN_FLIGHT


def test_duckduckgo_empty_is_empty(duckduckgo_server):
    assert search(DuckDuckGoSearch(settings(), SearchClients()), "nothing whatsoever") == []


def test_duckduckgo_anomaly_page_is_a_rate_limit_and_retried(duckduckgo_server):
    duckduckgo_server.rate_limited = 1
    assert len(search(DuckDuckGoSearch(settings(), SearchClients()))) == 5
    duckduckgo_server.rate_limited = 5
    with pytest.raises(SearchRateLimited, match="HTTP 202"):
        search(DuckDuckGoSearch(settings(search_retries=1), SearchClients()))


def test_duckduckgo_unreachable_is_a_recorded_search_error(monkeypatch):
    monkeypatch.setenv("DUCKDUCKGO_BASE_URL", "http://127.0.0.1:9")
    with pytest.raises(SEARCH_ERRORS) as error:
        search(DuckDuckGoSearch(settings(search_retries=0), SearchClients()))
    assert isinstance(error.value, DDGSException)


# Choosing a provider


def test_the_provider_follows_the_keys_that_are_set(monkeypatch):
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    assert detected_web_provider() == "duckduckgo" == Settings().search_backend
    monkeypatch.setenv("SEARXNG_URL", "http://127.0.0.1:8888")
    assert Settings().search_backend == "searxng"
    monkeypatch.setenv("BOCHA_API_KEY", "sk-b")
    assert Settings().search_backend == "bocha"
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-t")
    assert Settings().search_backend == "tavily"


def test_hybrid_uses_its_web_backend(bocha_server, tmp_path):
    chosen = Settings(search_backend="hybrid", corpus_dir=str(tmp_path), web_backend="bocha")
    assert web_provider(chosen) == "bocha"
    assert isinstance(search_backend(chosen)._web, BochaSearch)


def test_cli_choices_are_the_setting_choices():
    run = build_parser()._subparsers._group_actions[0].choices["run"]
    [action] = [a for a in run._actions if a.dest == "setting_search_backend"]
    assert tuple(action.choices) == SEARCH_BACKENDS
    assert set(PROVIDERS) == set(WEB_PROVIDERS)
