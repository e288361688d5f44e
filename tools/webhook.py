"""A change list posted to a webhook, signed so that its receiver can tell it came from us.

The address is an outside one like any page: it is checked where the socket opens (no loopback,
private or link-local target unless the watch allows it), the exchange is bounded in time and
in the bytes read back, and a redirect is not followed (it is the answer). The body is the
change list's JSON; `X-Deep-Research-Signature: t=UNIX_SECONDS,v1=HEX` carries the HMAC-SHA256
of `t.` followed by the body, keyed with the secret the watch names: the receiver computes the
same over the body it got and compares (and refuses an old `t`, so a copy cannot be replayed).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import time
from urllib.parse import urlsplit

import httpcore
import httpx

from deep_research.tools.search.guard import FetchRefused, GuardedBackend

SIGNATURE_HEADER = "X-Deep-Research-Signature"
TIMEOUT_SECONDS = 15.0
MAX_ANSWER_BYTES = 64 * 1024  # what is read of the receiver's answer, at most
SEND_ERRORS = (
    FetchRefused,
    httpcore.NetworkError,
    httpcore.TimeoutException,
    httpcore.ProtocolError,
    httpcore.UnsupportedProtocol,
    TimeoutError,
    OSError,
    httpx.InvalidURL,
    ValueError,
)


def signature(secret: str, body: bytes, at: int) -> str:
    """The signature header's value for `body` sent at `at` (Unix seconds)."""
    digest = hmac.new(secret.encode("utf-8"), f"{at}.".encode() + body, hashlib.sha256)
    return f"t={at},v1={digest.hexdigest()}"


def signed_by(secret: str, body: bytes, header: str, now: float, tolerance: float = 300) -> bool:
    """The receiver's check: the header is the signature of `body` with `secret`, made within
    `tolerance` seconds of `now`."""
    parts = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    if not parts.get("t", "").isdigit() or abs(now - int(parts["t"])) > tolerance:
        return False
    return hmac.compare_digest(signature(secret, body, int(parts["t"])), header)


def check_address(url: str) -> None:
    """ValueError naming why `url` is no webhook address (only http and https ones are)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not a webhook address: give an http:// or https:// URL")


async def post(url: str, body: bytes, secret: str, *, allow_private: bool = False) -> str:
    """POST the body, signed; what came of it in words (`HTTP 200`, or why it was not sent)."""
    check_address(url)
    headers = [
        (b"Content-Type", b"application/json"),
        (b"User-Agent", b"deep-research (watch)"),
        (SIGNATURE_HEADER.encode(), signature(secret, body, int(time.time())).encode()),
    ]
    timeouts = {k: TIMEOUT_SECONDS for k in ("connect", "read", "write", "pool")}
    backend = GuardedBackend(allow_private=allow_private)
    try:
        async with (
            asyncio.timeout(TIMEOUT_SECONDS),
            httpcore.AsyncConnectionPool(network_backend=backend) as pool,
            pool.stream(
                "POST",
                str(httpx.URL(url)),
                headers=headers,
                content=body,
                extensions={"timeout": timeouts},
            ) as response,
        ):
            read = 0
            async for chunk in response.aiter_stream():
                read += len(chunk)
                if read > MAX_ANSWER_BYTES:
                    break
            status = response.status
    except SEND_ERRORS as error:
        return f"not delivered: {type(error).__name__}: {error}"[:300]
    return f"HTTP {status}"
