"""The shared `langgraph dev` as fixtures; a test module loads them with
`pytest_plugins = ("served_graph_fixtures",)`."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from served_graph import SERVERS_OWN_NOTES, SHARED_LIMIT, SharedServer, dev_server

from stand_ins.chat import ChatServer
from stand_ins.search import SearchServer


@pytest.fixture(scope="session")
def shared_dev_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedServer]:
    """Started once per test process, on first use, with stand-ins of its own."""
    chat, search = ChatServer().start(), SearchServer().start()
    folder = tmp_path_factory.mktemp("served-graph")
    env = {
        **os.environ,
        "OPENAI_BASE_URL": f"{chat.url}/v1",
        "OPENAI_API_KEY": "sk-test-served-model-key",
        "DEEP_RESEARCH_MODEL": "stand-in-model",
        "TAVILY_API_BASE_URL": search.url,
        "TAVILY_API_KEY": "tvly-test-served-search-key",
        "DUCKDUCKGO_BASE_URL": "http://127.0.0.1:9",  # no real search provider
        "XDG_DATA_HOME": str(folder / "xdg-data"),
        "DEEP_RESEARCH_ENDPOINT_MAX_CONCURRENT_MODEL_CALLS": SHARED_LIMIT,
        "LANGGRAPH_STRICT_MSGPACK": "false",  # LangGraph's default today
    }
    for name in ("BOCHA_API_KEY", "BOCHA_API_BASE_URL", "SEARXNG_URL", "DDGS_PROXY"):
        env.pop(name, None)
    jobs = ("--n-jobs-per-worker", "16")  # room for a dozen runs at once
    try:
        with dev_server(folder, *jobs, files=SERVERS_OWN_NOTES, base_env=env) as url:
            yield SharedServer(url, chat, search, folder)
    finally:
        chat.stop()
        search.stop()


@pytest.fixture
def served(shared_dev_server: SharedServer) -> SharedServer:
    """The shared server, its stand-ins fresh for the test."""
    return shared_dev_server.fresh()
