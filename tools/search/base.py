"""What every search provider shares: the protocol, the errors, and one retry policy."""

from __future__ import annotations

import os
from functools import partial
from typing import Protocol, runtime_checkable

import httpx
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from deep_research.state import SearchHit
from deep_research.tools.model_names import MissingCredentials
from deep_research.tools.retry_policy import is_transient, retry_delay

MAX_CONTENT_CHARS = 1500  # evidence kept per hit: enough to quote, small enough to checkpoint


class SearchBackend(Protocol):
    """Anything that answers a query with hits."""

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        """Hits for one query, best first."""
        ...


@runtime_checkable
class HoldsConnections(Protocol):
    """A backend that keeps something open for its run (MCP servers): closed when the run ends."""

    async def aclose(self) -> None:
        """Let go of what the backend holds open, and return once it has."""
        ...


class SearchProviderError(RuntimeError):
    """A provider answered, but not with results (a refusal or a body we cannot read)."""


class SearchKeyRejected(SearchProviderError):
    """The provider refused our credentials (HTTP 401/403): every further search would too."""


class SearchRateLimited(SearchProviderError):
    """The provider asks us to slow down in a way that is not an HTTP 429 (worth a retry)."""

    transient = True


def required_env(name: str, purpose: str) -> str:
    """An environment variable a provider cannot work without, or MissingCredentials."""
    value = os.environ.get(name, "").strip()
    if not value:
        raise MissingCredentials(
            f"{name} is not set: set it {purpose} "
            "(or choose another provider with --search; duckduckgo needs no key)."
        )
    return value


def wait_for_retry(state: RetryCallState) -> float:
    """Honour the server's Retry-After; otherwise exponential backoff with full jitter."""
    error = state.outcome.exception() if state.outcome else None
    return retry_delay(error, state.attempt_number)


def retrying(attempts: int, also: tuple[type[BaseException], ...] = ()) -> AsyncRetrying:
    """The shared retry loop: `attempts` tries, transient failures only (`tools.retry_policy`,
    plus a client's own error types in `also`), waiting as the policy says."""
    return AsyncRetrying(
        stop=stop_after_attempt(attempts),
        wait=wait_for_retry,
        retry=retry_if_exception(partial(is_transient, also=also)),
        reraise=True,
    )


def check_status(provider: str, response: httpx.Response, message: str = "") -> None:
    """Raise for a failed HTTP answer: 401/403 as a rejected key, the rest as HTTPStatusError."""
    status = response.status_code
    if status in (401, 403):
        detail = f"HTTP {status}" + (f": {message}" if message else "")
        raise SearchKeyRejected(f"bad key for {provider} ({detail})")
    response.raise_for_status()


def rank_score(rank: int) -> float:
    """A 0-1 score from a position, for providers that rank without scoring (first = 1.0)."""
    return round(1.0 / (1 + rank), 3)


def compact(text: str | None) -> str:
    """Hit text as evidence: whitespace collapsed, capped at MAX_CONTENT_CHARS."""
    return " ".join((text or "").split())[:MAX_CONTENT_CHARS]
