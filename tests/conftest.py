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


SECRET_JUDGE_KEY = "sk-test-judge-key-3c8e41"


@pytest.fixture
def judge_server(monkeypatch: pytest.MonkeyPatch):
    """A stand-in judge on its own port, with known answers (tests/stand_ins/judge.py)."""
    from stand_ins.judge import JudgeBrain

    server = ChatServer(JudgeBrain()).start()
    monkeypatch.setenv("DEEP_RESEARCH_JUDGE_API_KEY", SECRET_JUDGE_KEY)
    yield server
    server.stop()
