"""The one retry policy: what is worth another try, and how long to wait before it.

Every outside call (model requests, searches) asks the same two questions. An error is
transient when it carries an HTTP status of 408, 409, 429 or 5xx (on the exception: `status`,
`status_code`, or its `response`), when it is a timeout or a dropped connection, or when its
class says so (`transient = True`: an empty stream, a provider's own rate-limit answer). The
wait honours the server's `Retry-After` (`retry-after-ms`, seconds, or an HTTP date), capped;
else it is exponential with full jitter. Errors are recognised by type and status, never by
their text.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Mapping

import httpx
import httpx2
import openai

RETRY_STATUS = frozenset({408, 409, 429})  # and every 5xx
MAX_WAIT = 60.0  # seconds: a longer Retry-After is capped rather than obeyed
BACKOFF_BASE = 0.5  # seconds before the first retry when the server names no wait
BACKOFF_CAP = 20.0
_CONNECTION = (
    httpx.TransportError,
    httpx2.TransportError,  # the chat servers' stack, should one reach us unwrapped by the SDK
    openai.APIConnectionError,  # openai.APITimeoutError is one
    TimeoutError,
)


def status_of(error: BaseException) -> int | None:
    """The HTTP status an error carries, wherever its library keeps it; None without one."""
    for name in ("status", "status_code"):
        value = getattr(error, name, None)
        if isinstance(value, int):
            return value
    response = getattr(error, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) else None


def is_transient(error: BaseException, also: tuple[type[BaseException], ...] = ()) -> bool:
    """Worth sending again: 408/409/429/5xx, timeouts, dropped connections, errors marked
    `transient`, and the types in `also` (a client's own rate-limit or timeout errors)."""
    if isinstance(error, _CONNECTION + also) or getattr(error, "transient", False):
        return True
    status = status_of(error)
    return status is not None and (status in RETRY_STATUS or status >= 500)


def retry_after(headers: Mapping[str, str] | None, cap: float = MAX_WAIT) -> float | None:
    """How long the server asks us to wait (`retry-after-ms`, `retry-after` in seconds or as
    an HTTP date), capped at `cap`; None when it names no wait we can read."""
    headers = headers or {}
    try:
        return min(cap, max(0.0, float(headers.get("retry-after-ms", "")) / 1000))
    except ValueError:
        pass
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    try:
        return min(cap, max(0.0, float(value)))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return min(cap, max(0.0, when - time.time()))


def headers_of(error: BaseException | None) -> Mapping[str, str] | None:
    """The response headers an error carries, if any."""
    response = getattr(error, "response", None)
    return getattr(response, "headers", None)


def backoff(attempt: int) -> float:
    """Exponential backoff with full jitter for retry number `attempt` (1, 2, ...)."""
    return random.uniform(0, min(BACKOFF_CAP, BACKOFF_BASE * 2**attempt))


def retry_delay(error: BaseException | None, attempt: int) -> float:
    """The wait before retry number `attempt`: the server's Retry-After, else the backoff."""
    asked = retry_after(headers_of(error))
    return asked if asked is not None else backoff(attempt)
