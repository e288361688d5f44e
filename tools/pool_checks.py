"""httpcore's pool asks an idle connection whether its server closed it, without anyio's tables.

Each time a request starts or ends, httpcore's connection pool asks every pooled connection
whether it has expired; for an idle one that is `get_extra_info("is_readable")` on its stream,
which anyio answers by building a table of every attribute of the socket (the peer's address
looked up with a system call on each) to hand back the raw socket. When the model server's
pool was an httpx one (chat servers are now reached over httpx2, `SearchClients.model_http`),
while 32 workers went from their page quotes to their next step (`bench/bench_run.py`'s
fan-out, its event loop sampled), the pool's checks took 38 % of the loop's time, those tables
22 %. The search clients' pools still are httpx's. `QuickReadable` keeps the raw socket from the
connection's start and asks it directly (a `poll` with no wait, as httpcore does); everything
else goes to the stream it wraps.
"""

from __future__ import annotations

import select
import socket
import typing

import httpcore
import httpx


def readable(sock: socket.socket | None) -> bool:
    """True when a read would not wait: data, or the server's close (a socket that is gone
    counts as readable, as httpcore counts it: the connection is then dropped)."""
    if sock is None or sock.fileno() < 0:
        return True
    if not hasattr(select, "poll"):  # Windows
        ready, _, _ = select.select([sock], [], [], 0)
        return bool(ready)
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


class QuickReadable(httpcore.AsyncNetworkStream):
    """A connection's stream that answers `is_readable` from the socket it kept at its start."""

    def __init__(self, stream: httpcore.AsyncNetworkStream, sock: socket.socket | None = None):
        self._stream = stream
        self._socket = sock if sock is not None else stream.get_extra_info("socket")

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._stream.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._stream.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def start_tls(
        self,
        ssl_context: typing.Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> QuickReadable:
        """TLS over the same socket: the new stream keeps it too."""
        tls = await self._stream.start_tls(ssl_context, server_hostname, timeout)
        return QuickReadable(tls, self._socket)

    def get_extra_info(self, info: str) -> typing.Any:
        if info == "is_readable":
            return readable(self._socket)
        return self._stream.get_extra_info(info)


class QuickReadableBackend(httpcore.AsyncNetworkBackend):
    """A network backend whose connections are `QuickReadable`s of another backend's."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend) -> None:
        self.inner = inner

    async def connect_tcp(self, *args: typing.Any, **kwargs: typing.Any) -> QuickReadable:
        return QuickReadable(await self.inner.connect_tcp(*args, **kwargs))

    async def connect_unix_socket(self, *args: typing.Any, **kwargs: typing.Any) -> QuickReadable:
        return QuickReadable(await self.inner.connect_unix_socket(*args, **kwargs))

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def quickened(client: httpx.AsyncClient) -> httpx.AsyncClient:
    """`client`, its own pool connecting through `QuickReadableBackend` (proxies it mounted from
    the environment keep theirs). httpx takes no network backend, so its pool's is wrapped in
    place; should a release of httpx or httpcore name them otherwise, the client is left as
    httpx built it (a test says so)."""
    pool = getattr(getattr(client, "_transport", None), "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if isinstance(backend, httpcore.AsyncNetworkBackend):
        pool._network_backend = QuickReadableBackend(backend)
    return client
