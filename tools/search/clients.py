"""Search providers' HTTP clients and their TLS context, built once per process, not per run.

Building an `httpx.AsyncClient` (or Tavily's, or ddgs' engine) loads the CA bundle into a fresh
SSL context: tens of milliseconds of CPU. A run needs none of its own: the client depends only
on the provider, its address, its key and its timeout, so `ProcessWide.search_clients` keeps one
per such key (and per event loop where the client is an asyncio one, whose pool belongs to a
loop). What belongs to a run (its budgets, page-fetch count, cache) stays in the run.
"""

from __future__ import annotations

import asyncio
import hashlib
import ssl
import weakref
from collections.abc import Callable, Hashable
from typing import TypeVar

import httpx
import httpx2

from deep_research.tools.http_cycles import with_let_go
from deep_research.tools.pool_checks import quickened

Client = TypeVar("Client")


def fingerprint(secret: str | None) -> str:
    """A stand-in for a secret in a client's key: tells keys apart, never shows one."""
    if not secret:
        return ""
    return hashlib.sha256(secret.encode()).hexdigest()[:16]


class SearchClients:
    """One client per provider, address, key and timeout (per event loop for asyncio ones),
    and one TLS context for all of them and for page fetches."""

    def __init__(self) -> None:
        self._tls: ssl.SSLContext | None = None
        self._per_loop: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[Hashable, object]
        ] = weakref.WeakKeyDictionary()  # a loop that is gone takes its clients with it
        self._loop_free: dict[Hashable, object] = {}
        self.built = 0  # clients built so far (for tests and benchmarks)

    def __repr__(self) -> str:
        """Counts only: a client's key holds a fingerprint, but say nothing of it anyway."""
        return f"SearchClients(built={self.built})"

    def tls(self) -> ssl.SSLContext:
        """The process's TLS context (httpx's defaults: certifi's CAs), built on first use."""
        if self._tls is None:
            self._tls = httpx.create_ssl_context()
        return self._tls

    def on_loop(self, key: Hashable, build: Callable[[], Client]) -> Client:
        """The running loop's client for `key`, built by `build()` the first time."""
        clients = self._per_loop.setdefault(asyncio.get_running_loop(), {})
        return self._kept(clients, key, build)

    def anywhere(self, key: Hashable, build: Callable[[], Client]) -> Client:
        """The client for `key` that no event loop owns (a blocking one used from threads)."""
        return self._kept(self._loop_free, key, build)

    def httpx_here(self, key: Hashable, **options) -> httpx.AsyncClient:
        """An `httpx.AsyncClient` on the running loop with `options` and the shared TLS context;
        `key` must name everything in `options` that sets one client apart from another. Its
        responses are freed once closed and let go (`tools.http_cycles`), and its pool checks
        idle connections without anyio's attribute tables (`tools.pool_checks`)."""
        hooks = with_let_go(options.pop("event_hooks", None))

        def build() -> httpx.AsyncClient:
            client = httpx.AsyncClient(verify=self.tls(), event_hooks=hooks, **options)
            return quickened(client)

        return self.on_loop(("httpx", key), build)

    def model_http(self, key: Hashable, **options) -> httpx2.AsyncClient:
        """A chat server's client on the running loop: httpx2 (the openai SDK's own stack) with
        `options` and the shared TLS context; `key` as for `httpx_here`. Neither of httpx's
        mendings is needed: httpx2 binds no response to its stream, and its pool checks an idle
        connection once, as it reuses it, from the socket its stream keeps."""
        return self.on_loop(
            ("httpx2", key), lambda: httpx2.AsyncClient(verify=self.tls(), **options)
        )

    def _kept(self, clients: dict[Hashable, object], key: Hashable, build: Callable) -> Client:
        """`clients[key]`, built and kept if absent."""
        if key not in clients:
            clients[key] = build()
            self.built += 1
        return clients[key]  # type: ignore[return-value]
