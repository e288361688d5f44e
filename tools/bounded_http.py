"""One HTTP request read to a total cap in seconds and bytes, whatever the server sends.

httpx's timeouts are per read: a server that drips, or sends JSON that never ends, passes them
all. Here the body is streamed into memory up to `max_bytes` and the whole exchange must finish
within `seconds`; the response comes back whole, so `.json()` and status checks work as usual.
"""

from __future__ import annotations

import asyncio

import httpx
import httpx2

MAX_JSON_BYTES = 8 * 1024 * 1024  # a search page or a server's props: far below this


class ResponseTooLarge(httpx.HTTPError):
    """The body went on past the byte cap."""


async def bounded_request(
    client: httpx.AsyncClient | httpx2.AsyncClient,  # httpx2: the chat servers' probes
    method: str,
    url: str,
    *,
    seconds: float,
    max_bytes: int = MAX_JSON_BYTES,
    **kwargs,
) -> httpx.Response:
    """The response to one request, its body read whole within `seconds` and `max_bytes`."""
    try:
        async with asyncio.timeout(seconds):
            async with client.stream(method, url, **kwargs) as response:
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > max_bytes:
                        raise ResponseTooLarge(f"{url}: the answer ran past {max_bytes:,} bytes")
    except TimeoutError as error:
        raise httpx.ReadTimeout(f"{url}: no whole answer within {seconds:g} s") from error
    return httpx.Response(
        response.status_code,
        headers=response.headers,
        content=bytes(body),
        request=response.request,
    )
