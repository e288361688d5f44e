"""The web app in its own process against the stand-ins, and Debian's Chromium driven by Playwright.

`WebServer` starts `deep-research web` as a person would (a subprocess on a free loopback port)
and can SIGKILL and start it again on the same port; `launch` opens Chromium from the system
(no browser download); `serious_violations` runs axe-core on a page.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx

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

    def __init__(self, store: Path, log: Path, *flags: str) -> None:
        """A server for the store, logging to `log`, with extra command-line flags."""
        self.store, self.log, self.flags = store, log, flags
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self) -> WebServer:
        """Start the server and wait until it answers."""
        env = {
            **os.environ,
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


def cli_command(args: list[str]) -> str:
    """`deep-research ARGS` in its own process (Playwright's loop owns this one); its stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "deep_research.cli", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stderr


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
