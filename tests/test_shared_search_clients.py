"""Search clients are the process's, shared by its runs; budgets and page counts stay per run."""

from __future__ import annotations

import asyncio

import pytest
from conftest import SECRET_SEARCH_KEY

from deep_research.settings import Settings
from deep_research.tools.process_wide import ProcessWide
from deep_research.tools.run_resources import LiveRuns
from deep_research.tools.search.bocha import BochaSearch
from deep_research.tools.search.clients import SearchClients
from deep_research.tools.search.factory import search_backend
from deep_research.tools.search.tavily import TavilySearch


def tavily_settings(**values) -> Settings:
    return Settings(search_backend="tavily", search_retries=0, **values)


def test_two_runs_share_one_tavily_client_and_one_tls_context(search_server):
    process = ProcessWide()
    runs = LiveRuns(process=process)

    async def two_runs():
        first = runs.open("run-a", tavily_settings())
        second = runs.open("run-b", tavily_settings())
        await first.search_cache.search("zstd levels", 3)
        await second.search_cache.search("xz presets", 3)
        return first, second

    first, second = asyncio.run(two_runs())
    clients = process.search_clients
    assert clients.built == 1  # one Tavily client for both runs
    assert first.search_cache is not second.search_cache  # each run keeps its own cache
    assert len(search_server.requests) == 2
    assert clients.tls() is clients.tls()


def test_one_tls_context_for_every_httpx_client_and_page_fetch(bocha_server, tmp_path):
    clients = SearchClients()
    settings = Settings(search_backend="bocha", fetch_pages=2)

    async def pools():
        first = search_backend(settings, clients)
        second = search_backend(settings, clients)
        return first, second, first._backend._client(), second._backend._client()

    first, second, client_a, client_b = asyncio.run(pools())
    assert client_a is client_b and clients.built == 1
    assert client_a._transport._pool._ssl_context is clients.tls()
    assert first._fetcher is not second._fetcher  # the page budget is the run's
    assert first._fetcher._tls is second._fetcher._tls is clients.tls()


def test_page_fetch_budget_stays_per_run(page_server, monkeypatch):
    """Two runs share the clients; one spending its page budget leaves the other's whole."""
    from deep_research.tools.search import guard

    monkeypatch.setattr(guard, "refusal", lambda address: None)  # the stand-in is on loopback
    monkeypatch.setenv("DUCKDUCKGO_BASE_URL", page_server.url)
    clients = SearchClients()
    settings = Settings(search_backend="duckduckgo", fetch_pages=1, max_page_fetches=1)
    first = search_backend(settings, clients)._fetcher
    second = search_backend(settings, clients)._fetcher

    async def read_pages():
        spent = await first.passages(f"{page_server.url}/article")
        over_budget = await first.passages(f"{page_server.url}/about")
        others = await second.passages(f"{page_server.url}/about")
        return spent, over_budget, others

    spent, over_budget, others = asyncio.run(read_pages())
    assert spent and others and over_budget == ()
    assert (first.sent, second.sent) == (1, 1)
    assert page_server.served == ["/article", "/about"]


def test_different_keys_and_timeouts_get_different_clients(monkeypatch, bocha_server):
    monkeypatch.setenv("TAVILY_API_KEY", SECRET_SEARCH_KEY)
    clients = SearchClients()

    async def tavily_clients():
        first = TavilySearch(tavily_settings(), clients)._client()
        same = TavilySearch(tavily_settings(search_timeout=5), clients)._client()
        monkeypatch.setenv("TAVILY_API_KEY", "tvly-another-key")
        other_key = TavilySearch(tavily_settings(), clients)._client()
        monkeypatch.setenv("TAVILY_API_BASE_URL", "http://127.0.0.1:9")
        other_base = TavilySearch(tavily_settings(), clients)._client()
        return first, same, other_key, other_base

    first, same, other_key, other_base = asyncio.run(tavily_clients())
    assert first is same  # Tavily's timeout is given per call, not held by the client
    assert len({id(first), id(other_key), id(other_base)}) == 3

    async def bocha_clients():
        short = BochaSearch(Settings(search_timeout=5), clients)._client()
        again = BochaSearch(Settings(search_timeout=5), clients)._client()
        longer = BochaSearch(Settings(search_timeout=30), clients)._client()
        return short, again, longer

    short, again, longer = asyncio.run(bocha_clients())
    assert short is again and short is not longer
    assert longer.timeout.read == 30


def test_clients_on_another_event_loop_are_built_again(bocha_server):
    clients = SearchClients()

    async def one():
        return BochaSearch(Settings(), clients)._client()

    assert asyncio.run(one()) is not asyncio.run(one())  # a pool belongs to its loop


@pytest.mark.parametrize("secret", [SECRET_SEARCH_KEY, "user:pa55word"])
def test_no_secret_in_a_repr_or_a_client_key(search_server, monkeypatch, secret):
    monkeypatch.setenv("TAVILY_API_KEY", secret)
    monkeypatch.setenv("SEARXNG_URL", f"http://{secret}@127.0.0.1:9")
    from deep_research.tools.search.searxng import SearxngSearch

    clients = SearchClients()

    async def build():
        tavily = TavilySearch(tavily_settings(), clients)
        searxng = SearxngSearch(Settings(), clients)
        tavily._client(), searxng._client()
        return tavily, searxng

    tavily, searxng = asyncio.run(build())
    shown = repr(tavily) + repr(searxng) + repr(clients)
    shown += repr([list(kept) for kept in clients._per_loop.values()])
    assert clients.built == 2
    assert secret not in shown and "pa55word" not in shown


def test_the_chat_and_tavily_clients_of_a_new_event_loop_load_no_ca_bundle(
    search_server, chat_server, fresh_process
):
    """A run on a new event loop builds its chat and search clients on the process's TLS
    context: loading the CA bundle (tens of ms of CPU on the loop) is paid once per process."""
    import ssl

    from deep_research.tools.models import chat_model

    process = fresh_process
    tls = process.search_clients.tls()
    loaded = []
    real = ssl.SSLContext.load_verify_locations

    def counted(self, *args, **kwargs):
        loaded.append(self)
        return real(self, *args, **kwargs)

    async def a_new_loop():
        runs = LiveRuns(process=process)
        run = runs.open("run", tavily_settings())
        await run.search_cache.search("zstd levels", 3)
        model = chat_model(run.settings, "planner")
        search = run.search_cache.backend._client()._client
        assert model.root_client._client._transport._pool._ssl_context is tls
        return model.http_async_client, search

    ssl.SSLContext.load_verify_locations = counted
    try:
        chat_http, search_http = asyncio.run(a_new_loop())
    finally:
        ssl.SSLContext.load_verify_locations = real
    assert chat_http._transport._pool._ssl_context is tls
    assert search_http._transport._pool._ssl_context is tls
    assert loaded == []
