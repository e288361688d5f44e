"""No SSRF through a search result: page fetches reach public addresses only, unless allowed.

The check sits where the socket is opened (an httpcore network backend), so it covers every
hop of a redirect and cannot be raced by DNS: the host is resolved once, every address it
resolves to is checked, and the connection goes to a checked address.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable

import httpcore

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class FetchRefused(Exception):
    """A page address that is not fetched: a non-public target, or a scheme we do not speak."""


def refusal(address: IPAddress) -> str | None:
    """Why an address is not a public one ("loopback", "link-local", ...), or None if it is."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is not None:
            return refusal(embedded)
    for kind in ("loopback", "link_local", "unspecified", "multicast", "private", "reserved"):
        if getattr(address, f"is_{kind}"):
            return kind.replace("_", "-")
    return None if address.is_global else "non-public"


async def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address a host name (or literal) resolves to, in the resolver's order."""
    infos = await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )
    addresses: list[IPAddress] = []
    for *_, sockaddr in infos:
        address = ipaddress.ip_address(sockaddr[0].split("%")[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


async def checked_addresses(host: str, port: int, allow_private: bool) -> list[IPAddress]:
    """The host's addresses, or FetchRefused naming the first non-public one."""
    addresses = await resolve(host, port)
    if not allow_private:
        for address in addresses:
            if reason := refusal(address):
                raise FetchRefused(f"{host} resolves to {address}, a {reason} address")
    return addresses


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's own backend, connecting only to addresses that passed `checked_addresses`."""

    def __init__(self, allow_private: bool = False) -> None:
        self._allow_private = allow_private
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """A connection to the first checked address of `host` that accepts one."""
        try:
            addresses = await checked_addresses(host, port, self._allow_private)
        except OSError as error:
            raise httpcore.ConnectError(f"cannot resolve {host}: {error}") from error
        failure: Exception = httpcore.ConnectError(f"{host} has no address")
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as error:
                failure = error
        raise failure

    async def sleep(self, seconds: float) -> None:
        """As the inner backend sleeps (httpcore's retries use it)."""
        await self._inner.sleep(seconds)
