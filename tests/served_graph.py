"""`langgraph dev` for the tests: a copy of the app served on loopback, and one server shared by
the tests that need no setting of their own (each isolated by its own threads and questions).
Its fixtures are in `served_graph_fixtures`."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from stand_ins.chat import ChatServer
from stand_ins.search import SearchServer

ROOT = Path(__file__).resolve().parents[1]
LANGGRAPH = Path(sys.executable).parent / "langgraph"
SECRET_WORD = "QUOKKA7731"  # in a note beside the shared server's app: no caller may read it
SERVERS_OWN_NOTES = {
    "ops-notes.md": f"Compare zstd and xz: the server's own notes, {SECRET_WORD}.\n",
}
SHARED_LIMIT = "4"  # the shared server's endpoint limit on concurrent model calls


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def dev_server(
    tmp_path: Path,
    *args: str,
    files: dict[str, str] | None = None,
    base_env: dict[str, str] | None = None,
    **env: str,
) -> Iterator[str]:
    """`langgraph dev` on a copy of the repository (plus `files`, by name), in the environment
    `base_env` (this process's by default) plus `env`; yields its URL."""
    if not LANGGRAPH.exists():
        pytest.skip("langgraph-cli is not installed (pip install -e '.[dev]')")
    app = tmp_path / "app"  # a copy, so the server's own files stay out of the repository
    skipped = (".venv", ".git", ".ci", "docs", "*.sqlite", ".langgraph_api")  # CI's model: 670 MB
    shutil.copytree(ROOT, app, ignore=shutil.ignore_patterns(*skipped))
    for name, text in (files or {}).items():
        (app / name).write_text(text)
    port = free_port()
    env = {
        **(os.environ if base_env is None else base_env),
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        **env,
    }
    process = subprocess.Popen(
        [str(LANGGRAPH), "dev", "--port", str(port), "--no-browser", "--no-reload", *args],
        cwd=app,
        env=env,
        stdout=(tmp_path / "server.log").open("wb"),  # read it when a test fails
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/ok", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.3)
    else:
        process.kill()
        pytest.fail("langgraph dev did not start within 60 s")
    try:
        yield url
    finally:
        process.terminate()
        process.wait(20)


@dataclass
class SharedServer:
    """The shared `langgraph dev` and the model and search stand-ins it calls."""

    url: str
    chat: ChatServer
    search: SearchServer
    folder: Path  # its log (server.log) and its data folder (XDG_DATA_HOME)

    @property
    def data_home(self) -> Path:
        return self.folder / "xdg-data"

    @property
    def log(self) -> str:
        return (self.folder / "server.log").read_text(errors="replace")

    def fresh(self) -> SharedServer:
        """The stand-ins as a test of its own would find them: default knobs, nothing recorded."""
        self.chat.reset()
        self.search.reset()
        return self
