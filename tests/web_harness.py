"""The web app in its own process against the stand-ins, and Debian's Chromium driven by Playwright.

`WebServer` starts `deep-research web` as a person would (a subprocess on a free loopback port)
and can SIGKILL and start it again on the same port; `shared_web` is one such server for a
module's tests that need nothing of their own (each test's runs are its own, the stand-ins made
fresh for each test); `launch` opens Chromium from the system (no browser download);
`serious_violations` runs axe-core on a page.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import httpx
import pytest
from conftest import SECRET_MODEL_KEY, SECRET_SEARCH_KEY

from stand_ins.chat import ChatServer
from stand_ins.search import SearchServer

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
SHOTS = os.environ.get("DEEP_RESEARCH_WEB_SCREENSHOTS")  # docs/web: the docs' screenshots


def free_port() -> int:
    """A port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class WebServer:
    """`deep-research web` in a subprocess; `kill` (SIGKILL) and `start` again on the same port."""

    def __init__(
        self, store: Path, log: Path, *flags: str, environment: Mapping[str, str] | None = None
    ) -> None:
        """A server for the store, logging to `log`, with extra command-line flags; its
        environment is `environment`, or this process's when it starts."""
        self.store, self.log, self.flags, self.environment = store, log, flags, environment
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self) -> WebServer:
        """Start the server and wait until it answers."""
        env = {
            **(os.environ if self.environment is None else self.environment),
            "PYTHONPATH": str(ROOT),
            "DEEP_RESEARCH_CHECKPOINT_DB": str(self.store),
        }
        with self.log.open("ab") as sink:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "deep_research.cli",
                    "web",
                    "--port",
                    str(self.port),
                    *self.flags,
                ],
                cwd=ROOT,
                env=env,
                stdout=sink,
                stderr=sink,
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.process.poll() is None:
            with contextlib.suppress(httpx.TransportError):
                httpx.get(f"{self.url}/static/web.css", timeout=1)
                return self
            time.sleep(0.1)
        raise AssertionError(f"the web app did not start: {self.log.read_text()[-3000:]}")

    def kill(self) -> None:
        """SIGKILL: no clean-up, as a crash or a power cut."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        """SIGTERM and wait."""
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()

    def records(self, thread_id: str) -> list[tuple[int, str, dict]]:
        """The run's event log as the store holds it: (seq, kind, data)."""
        with contextlib.closing(sqlite3.connect(self.store)) as db:
            rows = db.execute(
                "SELECT seq, kind, data FROM run_events WHERE thread_id = ? ORDER BY seq",
                (thread_id,),
            ).fetchall()
        return [(s, k, json.loads(d)) for s, k, d in rows]


STAND_IN_LATENCY = 0.05  # s a model call takes unless a test wants to watch a run being made
NO_REAL_SEARCH = ("BOCHA_API_KEY", "BOCHA_API_BASE_URL", "SEARXNG_URL", "DDGS_PROXY")


def stand_in_environment(chat: ChatServer, search: SearchServer) -> dict[str, str]:
    """The variables that point a process at the model and search stand-ins (as conftest's
    `chat_server` and `search_server` set them for one test)."""
    return {
        "OPENAI_BASE_URL": f"{chat.url}/v1",
        "OPENAI_API_KEY": SECRET_MODEL_KEY,
        "DEEP_RESEARCH_MODEL": "stand-in-model",
        "TAVILY_API_BASE_URL": search.url,
        "TAVILY_API_KEY": SECRET_SEARCH_KEY,
    }


@pytest.fixture(scope="module")
def shared_stand_ins() -> Iterator[tuple[ChatServer, SearchServer]]:
    """The model and search stand-ins of a module's shared web server."""
    chat, search = ChatServer().start(), SearchServer().start()
    yield chat, search
    chat.stop()
    search.stop()


@pytest.fixture(scope="module")
def shared_web(shared_stand_ins, tmp_path_factory) -> Iterator[WebServer]:
    """One `deep-research web` (no flags) for a module's tests that need nothing of their own:
    each is isolated by the runs it starts, not by an empty store. Its environment is what
    conftest gives one test (its own data folder, no real search provider), made here because
    a module's fixture starts before a test's."""
    folder = tmp_path_factory.mktemp("shared-web")
    environment = {k: v for k, v in os.environ.items() if k not in NO_REAL_SEARCH}
    environment |= stand_in_environment(*shared_stand_ins)
    environment |= {
        "XDG_DATA_HOME": str(folder / "data"),
        "DUCKDUCKGO_BASE_URL": "http://127.0.0.1:9",
    }
    server = WebServer(folder / "store.sqlite", folder / "web.log", environment=environment)
    yield server.start()
    server.stop()


@pytest.fixture(name="stand_ins")
def fresh_stand_ins(shared_stand_ins, monkeypatch) -> tuple[ChatServer, SearchServer]:
    """The shared stand-ins as a test's own: once the last test's calls are answered, reset
    to a new stand-in's knobs with the usual latency, nothing recorded; this process's
    environment points at them (for a server of the test's own, and a command run here)."""
    chat, search = shared_stand_ins
    deadline = time.monotonic() + 60
    while (chat.in_flight or search.in_flight) and time.monotonic() < deadline:
        time.sleep(0.05)  # a killed server's call, answered to nobody
    assert chat.in_flight == search.in_flight == 0, "an earlier test's call is still going"
    chat.reset()
    search.reset()
    chat.latency = STAND_IN_LATENCY
    for name, value in stand_in_environment(chat, search).items():
        monkeypatch.setenv(name, value)
    return chat, search


def cli_command(args: list[str]) -> str:
    """`deep-research ARGS` as the entry point runs it (`cli.main.main`), in a thread of its own
    (Playwright's loop owns this one); what it wrote to stderr."""
    from deep_research.cli.main import main

    said, ended = io.StringIO(), {}

    def command() -> None:
        try:
            with contextlib.redirect_stderr(said):  # this thread waits: only the command writes
                ended["code"] = main(args)
        except BaseException as error:  # raised again in the test's thread, below
            ended["error"] = error

    worker = threading.Thread(target=command, name="deep-research", daemon=True)
    worker.start()
    worker.join(120)
    assert not worker.is_alive(), f"deep-research {args[0]} still running after 120 s"
    if "error" in ended:
        raise ended["error"]
    assert ended.get("code") == 0, said.getvalue()[-2000:]
    return said.getvalue()


def launch(playwright):
    """Debian's Chromium, headless, with nothing that reaches off the machine."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def serious_violations(page, also: tuple[str, ...] = ()) -> list[str]:
    """axe-core's serious and critical findings on the page (and those of the rules `also`
    names, whatever their impact), one line each."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes']][:3]}"
        for v in results.response["violations"]
        if v["impact"] in ("serious", "critical") or v["id"] in also
    ]


def shot(page, name: str, folder: Path, full_page: bool = True) -> None:
    """A screenshot into the test's folder, and into the docs' folder when asked."""
    page.screenshot(path=str(folder / f"{name}.png"), full_page=full_page)
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=full_page)
