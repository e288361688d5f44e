"""A research world on loopback for benchmarks: a model, a search service, the pages its results
name, and a timeline of every request they answered.

No address leaves loopback: every search result names a page of the page stand-in, whose
articles are the size of real ones (about 40 kB of HTML: inline scripts, a navigation bar of
links, about 7,000 characters of article text in a dozen paragraphs, related links). The model
stand-in's latency is its generation time: chat completions take `latency`, its other paths
(the context-window probes: `/props`, `/v1/models`, ...) answer at once, as real servers do.

`python tests/stand_ins/world.py --serve` runs the world in a process of its own (so that its
CPU is not counted as the engine's) and prints its addresses as one JSON line; `World` is the
parent's handle on it: the environment that points a run at it, its knobs, and the timeline
from which `critical_path` finds the chain of dependent calls.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stand_ins.chat import ChatServer
from stand_ins.loopback import Reply, StandIn
from stand_ins.search import SearchServer, slug

_WORD_TEXT = (
    "archive compression ratio level dictionary window stream block frame throughput memory "
    "decoder encoder entropy corpus benchmark server rotation retention storage format tool "
    "release default option parallel thread checksum index seek latency disk network cost"
)
_WORDS = _WORD_TEXT.split()
_NUMBERED = (
    "In test {a}, zstd level {b} compressed the {w} logs {c}.{d}x at {e} MB/s.",
    "xz -{f} reached a ratio of {c}.{a}x on the same {w} corpus, taking {e} seconds.",
    "Decompression ran at {e}0 MB/s for zstd against {b}0 MB/s for xz in the {w} runs.",
    "The {w} archive of {a} GB shrank to {b}.{d} GB after {f} passes.",
)


def _sentence(seed: int, n: int) -> str:
    """One sentence of an article: a measurement with numbers, or plain prose."""
    h = hashlib.sha256(f"{seed}:{n}".encode()).digest()
    words = [_WORDS[b % len(_WORDS)] for b in h[:12]]
    if h[12] % 3 == 0:
        template = _NUMBERED[h[13] % len(_NUMBERED)]
        return template.format(
            a=h[14] % 90 + 10, b=h[15] % 19 + 1, c=h[16] % 9 + 2, d=h[17] % 10,
            e=h[18] % 400 + 20, f=h[19] % 9 + 1, w=words[0],
        )  # fmt: skip
    return f"The {words[0]} {words[1]} of the {words[2]} {words[3]} depends on its " + (
        f"{words[4]} {words[5]} and the {words[6]} {words[7]} chosen for {words[8]} {words[9]}."
    )


FOOTER_LINKS = 150  # links in an article's footer, as a news or shop site's directory has


@lru_cache(maxsize=4096)
def article(path: str, paragraphs: int = 12, sentences: int = 6) -> str:
    """A real-sized article page for `path`: head with scripts, navigation, the article,
    related links, a footer with a directory of links (deterministic per path)."""
    seed = int(hashlib.sha256(path.encode()).hexdigest()[:8], 16)
    title = f"Log archives: zstd and xz compared ({slug(path)[:40]})"
    script = "<script>window.__STATE__=" + json.dumps({"k": list(range(2500))}) + "</script>"
    nav = " ".join(f'<a href="/section/{n}">Section {n}</a>' for n in range(1, 26))
    body = "\n".join(
        "<p>" + " ".join(_sentence(seed, p * sentences + s) for s in range(sentences)) + "</p>"
        for p in range(paragraphs)
    )
    related = " ".join(
        f'<li><a href="/related/{seed % 97}/{n}">More {n}</a></li>' for n in (1, 2, 3)
    )
    # a real site's footer: a directory of links no reader follows, which a reader still keeps
    directory = "".join(
        f'<li><a href="/topics/{n}">Topic {n}</a></li>' for n in range(FOOTER_LINKS)
    )
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title>{script}"
        "<style>body{font-family:serif}.nav a{margin:0 4px}</style></head>"
        f'<body><nav class="nav">{nav}</nav><main><article><h1>{title}</h1>{body}'
        f"</article><aside><ul>{related}</ul></aside></main>"
        f"<footer><ul>{directory}</ul><p>Cookie settings and a newsletter form nobody reads.</p>"
        "</footer>"
        "</body></html>"
    )


class RateLimitedChat(ChatServer):
    """The chat stand-in with a provider's rate limit: over `rps` requests a second (0: no
    limit) get 429 with `Retry-After: 1`."""

    def __init__(self) -> None:
        super().__init__()
        self.rps, self.refused = 0.0, 0
        self._recent: deque[float] = deque()
        self._window_lock = threading.Lock()

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        if self.rps:
            now = time.monotonic()
            with self._window_lock:
                while self._recent and now - self._recent[0] > 1.0:
                    self._recent.popleft()
                if len(self._recent) >= self.rps:
                    self.refused += 1
                    error = {"message": "rate limit reached", "type": "requests"}
                    return Reply(429, {"error": error}, headers={"retry-after": "1"})
                self._recent.append(now)
        return super().handle(path, body, headers)


class Articles(StandIn):
    """Any path is an article of its own (see `article`)."""

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        return Reply(200, raw=article(path.split("?")[0]).encode())


def _label(request: dict) -> str:
    """A model call's contract (`decide` for a worker's tool choice, `prose` for text)."""
    body = request["body"]
    if body.get("tool_choice") == "auto":
        return "decide"
    schema = (body.get("response_format") or {}).get("json_schema") or {}
    return schema.get("name") or "prose"


def _kind(server: str, request: dict) -> str:
    """What a request was: model call, probe, search or page."""
    if server != "model":
        return server
    return "model" if request["path"].endswith("/chat/completions") else "probe"


class Control(StandIn):
    """The world's own door: `/timeline`, `/reset`, `/configure` (knobs), `/stats`."""

    def __init__(self, model: RateLimitedChat, search: SearchServer, pages: Articles) -> None:
        super().__init__()
        self.servers = {"model": model, "search": search, "page": pages}
        self.model, self.search = model, search

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        if path == "/timeline":
            return Reply(200, self.timeline())
        if path == "/reset":
            for server in self.servers.values():
                with server._lock:
                    server.requests.clear()
                    server.peak_concurrency = 0
            self.model.brain.calls.clear()
            self.model.answered = self.model.prompt_tokens = self.model.completion_tokens = 0
            self.model.refused = 0
            return Reply(200, {})
        if path == "/configure":
            self.configure(body)
            return Reply(200, {})
        if path == "/stats":
            return Reply(200, self.stats())
        return Reply(404, {})

    def configure(self, knobs: dict) -> None:
        """Latencies, the model's rate limit (`rps`) and stream chunks (`chunk_chars`), and the
        brain's knobs (`subtasks`, `gap_tasks`, `scores`, ...)."""
        self.model.latency = knobs.pop("latency", self.model.latency)
        self.model.rps = knobs.pop("rps", self.model.rps)
        self.model.chunk_chars = knobs.pop("chunk_chars", self.model.chunk_chars)
        self.search.latency = knobs.pop("search_latency", self.search.latency)
        for name, value in knobs.items():
            setattr(self.model.brain, name, value)

    def timeline(self) -> list[dict]:
        """Every request answered: server, kind, start and end (monotonic), seconds waited."""
        rows = []
        for name, server in self.servers.items():
            with server._lock:
                requests = list(server.requests)
            for request in requests:
                rows.append(
                    {
                        "kind": _kind(name, request),
                        "started": request["started"],
                        "ended": request["ended"],
                        "waited": request["waited"],
                        "status": request["status"],
                        "label": _label(request) if name == "model" else request["path"],
                    }
                )
        return sorted(rows, key=lambda row: row["started"])

    def stats(self) -> dict:
        """Peaks in flight, calls answered, tokens, and which contracts were asked."""
        return {
            "model_peak": self.model.peak_concurrency,
            "search_peak": self.search.peak_concurrency,
            "answered": self.model.answered,
            "refused": self.model.refused,
            "prompt_tokens": self.model.prompt_tokens,
            "largest_prompt_tokens": max(
                (
                    len(json.dumps(r["body"].get("messages"), ensure_ascii=False)) // 4 + 1
                    for r in self.model.chat_requests
                ),
                default=0,
            ),
            "contracts": dict(self.model.brain.calls),
            "queries": self.search.queries,
        }


def pages_for(search: SearchServer, pages: Articles) -> None:
    """Make every search result name a page of `pages` (on loopback, never a public address)."""
    search.url_for = lambda query, n: f"{pages.url}/{slug(query)}/{n}"


def environment(model_url: str, search_url: str) -> dict[str, str]:
    """The variables that point a run at a model stand-in and a Tavily stand-in."""
    return {
        "OPENAI_BASE_URL": f"{model_url}/v1",
        "OPENAI_API_KEY": "sk-bench",
        "TAVILY_API_BASE_URL": search_url,
        "TAVILY_API_KEY": "tvly-bench",
        "DEEP_RESEARCH_MODEL": "stand-in",
    }


def serve() -> None:
    """The world in this process until stdin closes; its addresses first, as one JSON line."""
    model, search, pages = RateLimitedChat().start(), SearchServer().start(), Articles().start()
    pages_for(search, pages)
    control = Control(model, search, pages).start()
    urls = {"model": model.url, "search": search.url, "pages": pages.url, "control": control.url}
    print(json.dumps(urls), flush=True)
    sys.stdin.read()


@dataclass
class Chain:
    """The longest chain of dependent requests in a timeline: how many model calls it holds,
    and the seconds its servers made it wait (model calls and searches on it)."""

    depth: int
    seconds: float


def critical_path(timeline: list[dict]) -> Chain:
    """The chain of requests each of which started after the one before it ended, with the
    most model calls (its depth) and the most server seconds (the lower bound of the wall
    time: no engine can answer before its servers do)."""
    depth: list[int] = []
    seconds: list[float] = []
    for i, row in enumerate(timeline):
        before = [j for j in range(i) if timeline[j]["ended"] <= row["started"]]
        depth.append((row["kind"] == "model") + max((depth[j] for j in before), default=0))
        seconds.append(row["waited"] + max((seconds[j] for j in before), default=0.0))
    return Chain(max(depth, default=0), max(seconds, default=0.0))


class World:
    """The parent's handle on a world served by a child process."""

    def __init__(self, latency: float = 0.0, search_latency: float = 0.0, **knobs: Any) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.urls = json.loads(self.process.stdout.readline())
        self.configure(latency=latency, search_latency=search_latency, **knobs)

    def _post(self, path: str, body: dict | None = None) -> Any:
        reply = httpx.post(f"{self.urls['control']}{path}", json=body or {}, timeout=30)
        reply.raise_for_status()
        return reply.json()

    def configure(self, **knobs: Any) -> None:
        """Set latencies and brain knobs (see `Control.configure`)."""
        self._post("/configure", knobs)

    def reset(self) -> None:
        """Forget the requests and counts so far."""
        self._post("/reset")

    def timeline(self) -> list[dict]:
        return self._post("/timeline")

    def stats(self) -> dict:
        return self._post("/stats")

    def environment(self) -> dict[str, str]:
        """The variables that point a run at this world."""
        return environment(self.urls["model"], self.urls["search"])

    def enter(self) -> World:
        """Point this process's runs at the world."""
        os.environ.update(self.environment())
        return self

    def stop(self) -> None:
        self.process.stdin.close()
        self.process.wait(10)


if __name__ == "__main__" and sys.argv[1:2] == ["--serve"]:
    serve()
