"""Fixtures: the stand-in model and search servers on loopback, wired in through the environment."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from stand_ins.bocha import BochaServer
from stand_ins.chat import ChatServer
from stand_ins.duckduckgo import DuckDuckGoServer
from stand_ins.pages import PageServer
from stand_ins.search import SearchServer
from stand_ins.searxng import SearxngServer


def _cache_bytecode_outside_the_sources() -> None:
    """Where the environment forbids writing bytecode (`PYTHONDONTWRITEBYTECODE`), every process
    the tests start (a command, a web or MCP server, a test worker) compiled the project again:
    ~0.26 s of CPU each, some 250 times a suite. Their bytecode goes to a cache in the temporary
    folder instead (`PYTHONPYCACHEPREFIX`), never beside the sources. Set here, in the first
    process, before the test workers start, so that they and every child inherit it."""
    if not sys.dont_write_bytecode and not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return
    cache = os.environ.get("PYTHONPYCACHEPREFIX") or str(
        Path(tempfile.gettempdir()) / f"deep-research-tests-bytecode-{os.getuid()}"
    )
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = cache
    sys.dont_write_bytecode = False
    sys.pycache_prefix = cache


_cache_bytecode_outside_the_sources()
pytest_plugins = ("services",)  # Redis and PostgreSQL fixtures, started from system binaries

SECRET_MODEL_KEY = "sk-test-model-key-5f1e0c"
SECRET_SEARCH_KEY = "tvly-test-search-key-9a7d2b"


# Workers run the fixed search loop unless a test lets their model choose tools (the setting
# `worker_tools`): the stand-ins' search results name pages on the public web, which no test may
# read. Set before any test module builds its settings.
os.environ["DEEP_RESEARCH_WORKER_TOOLS"] = "off"


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


@pytest.fixture
def home(tmp_path, monkeypatch: pytest.MonkeyPatch):
    """A working folder for the command: its own checkpoint store, and no config file around."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", str(tmp_path / "store" / "c.sqlite"))
    monkeypatch.delenv("DEEP_RESEARCH_CONFIG", raising=False)
    return tmp_path


@pytest.fixture(autouse=True, scope="session")
def ctrl_c_reaches_started_commands():
    """A suite started in the background (`pytest &` in a script, nohup, some CI runners)
    ignores SIGINT, and every command a test starts inherits that: the Ctrl-C tests' commands
    then run to their end (seen: five Ctrl-C tests failed so, and passed in the foreground)."""
    main = threading.current_thread() is threading.main_thread()
    if main and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield


@pytest.fixture(autouse=True)
def environment_restored():
    """Each test leaves the process environment as it found it: the CLI run in-process loads a
    `./.env` into `os.environ` (as it must for a user), which would leak into every later test
    of the same worker and into the servers they start (seen: a `.env`'s max_iterations 1
    became the web app's ceiling two tests later)."""
    before = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(before)


@pytest.fixture(autouse=True)
def logging_restored():
    """What the CLI's `main` sets for the life of its process (the `pypdf` logger's level, how
    a Python warning is printed) is put back after a test that ran it here, so a later test of
    the same worker sees what it would see first."""
    import logging
    import warnings

    pypdf, format_warning = logging.getLogger("pypdf"), warnings.formatwarning
    level = pypdf.level
    yield
    pypdf.setLevel(level)
    warnings.formatwarning = format_warning


@pytest.fixture(autouse=True)
def own_data_folder(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory):
    """Each test gets its own data folder (capability memory, indexes, default checkpoints):
    no test reads or writes the developer's, nor another test's when tests run in parallel. It
    sits outside the test's `tmp_path`, which a test may use as a corpus (never written to)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))


@pytest.fixture(autouse=True)
def no_real_search_provider(monkeypatch: pytest.MonkeyPatch):
    """No test reaches a real search service: the key-free default points at a closed port,
    and keys from the developer's own environment do not pick a provider."""
    monkeypatch.setenv("DUCKDUCKGO_BASE_URL", "http://127.0.0.1:9")
    for name in ("BOCHA_API_KEY", "BOCHA_API_BASE_URL", "SEARXNG_URL", "DDGS_PROXY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def bocha_server(monkeypatch: pytest.MonkeyPatch):
    server = BochaServer().start()
    monkeypatch.setenv("BOCHA_API_BASE_URL", server.url)
    monkeypatch.setenv("BOCHA_API_KEY", server.key)
    yield server
    server.stop()


@pytest.fixture
def searxng_server(monkeypatch: pytest.MonkeyPatch):
    server = SearxngServer().start()
    monkeypatch.setenv("SEARXNG_URL", server.url)
    yield server
    server.stop()


@pytest.fixture
def duckduckgo_server(monkeypatch: pytest.MonkeyPatch):
    server = DuckDuckGoServer().start()
    monkeypatch.setenv("DUCKDUCKGO_BASE_URL", server.url)
    yield server
    server.stop()


@pytest.fixture
def page_server():
    server = PageServer().start()
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


@pytest.fixture(autouse=True)
def fresh_process(monkeypatch: pytest.MonkeyPatch):
    """Each test runs in a process of its own as far as the project can tell: fresh endpoint
    gates, chat clients, capability and context-window memory (the stand-ins reuse ports)."""
    from deep_research.tools import process_wide

    fresh = process_wide.ProcessWide()
    monkeypatch.setattr(process_wide, "PROCESS", fresh)
    return fresh
