"""Fixtures: the stand-in model and search servers on loopback, wired in through the environment."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from stand_ins.chat import ChatServer
from stand_ins.search import SearchServer

SECRET_MODEL_KEY = "sk-test-model-key-5f1e0c"
SECRET_SEARCH_KEY = "tvly-test-search-key-9a7d2b"


@pytest.fixture
def chat_server(monkeypatch: pytest.MonkeyPatch):
    server = ChatServer().start()
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_MODEL_KEY)
    monkeypatch.setenv("DEEP_RESEARCH_MODEL", "stand-in-model")
    yield server
    server.stop()


@pytest.fixture
def search_server(monkeypatch: pytest.MonkeyPatch):
    server = SearchServer().start()
    monkeypatch.setenv("TAVILY_API_BASE_URL", server.url)
    monkeypatch.setenv("TAVILY_API_KEY", SECRET_SEARCH_KEY)
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _fresh_capabilities():
    """Each test discovers its stand-in's structured-output method afresh (ports get reused)."""
    from tools import capabilities, context_window

    capabilities.forget_all()
    context_window.forget_all()
    yield
    capabilities.forget_all()
    context_window.forget_all()
