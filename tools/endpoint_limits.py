"""Limits per provider endpoint, shared by every run in the process (`tools.process_wide`).

Providers limit a key, not a run: requests and tokens per minute, and a local server has a few
slots. Each endpoint (a model base URL, a search backend) gets one gate that every run's calls
pass: at most N requests in flight (a semaphore), requests per minute and tokens per minute
(`aiolimiter` leaky buckets; tokens are reserved on our estimate of the prompt and the bucket is
charged the difference once the server reports what the call really used), and a pause for the
whole endpoint when the server answers 429 with `Retry-After`.

With `DEEP_RESEARCH_REDIS_URL` set, the same limits are held in Redis and shared by every
process that uses it (`tools.shared_limits`).

Configured from the environment, so that the CLI, Python callers and `langgraph dev` all obey
it. The variables are `DEEP_RESEARCH_ENDPOINT_<LIMIT>`, named like the per-run setting they cap
for the whole process (`max_concurrent_model_calls` per run,
`DEEP_RESEARCH_ENDPOINT_MAX_CONCURRENT_MODEL_CALLS` per endpoint); see `VARIABLES`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import warnings
import weakref
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass

import httpx2
from aiolimiter import AsyncLimiter

from deep_research.tools.retry_policy import retry_after

OPENAI_URL = "https://api.openai.com/v1"  # where the OpenAI SDK goes without a base URL
DEFAULT_CONCURRENCY = 32  # requests in flight per endpoint when the environment says nothing
DEFAULT_PAUSE = 1.0  # seconds an endpoint rests after a 429 that names no Retry-After
LARGEST_PROMPT = 8_000  # tokens one request may take from the bucket at once (larger: capped)
MAX_PAUSE = 120.0  # a Retry-After longer than this is capped (a broken header must not hang us)


class BadLimit(ValueError):
    """An endpoint limit in the environment is not a positive number."""


PREFIX = "DEEP_RESEARCH_ENDPOINT_"
VARIABLES = {  # each limit's variable, and the old name that still works (with a warning)
    "model_in_flight": (
        f"{PREFIX}MAX_CONCURRENT_MODEL_CALLS",
        "DEEP_RESEARCH_MAX_MODEL_CONCURRENCY",
    ),
    "model_requests": (f"{PREFIX}MODEL_CALLS_PER_MINUTE", "DEEP_RESEARCH_MODEL_RPM"),
    "model_tokens": (f"{PREFIX}MODEL_TOKENS_PER_MINUTE", "DEEP_RESEARCH_MODEL_TPM"),
    "search_in_flight": (
        f"{PREFIX}MAX_CONCURRENT_SEARCHES",
        "DEEP_RESEARCH_MAX_SEARCH_CONCURRENCY",
    ),
    "search_requests": (f"{PREFIX}SEARCHES_PER_MINUTE", "DEEP_RESEARCH_SEARCH_RPM"),
}


def _variable(limit: str) -> str | None:
    """The variable that sets a limit: its name, else its old name (with a warning), else None."""
    name, old = VARIABLES[limit]
    if os.environ.get(name, "").strip():
        return name
    if os.environ.get(old, "").strip():
        message = f"{old}: set {name}, the limit's new name ({old} still works)"
        warnings.warn(message, FutureWarning, stacklevel=3)
        return old
    return None


def _positive(limit: str, kind: type[int] | type[float]) -> int | float | None:
    """A positive number from the limit's environment variable, None when unset or empty."""
    name = _variable(limit)
    if name is None:
        return None
    raw = os.environ[name].strip()
    try:
        value = kind(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise BadLimit(f"{name}={raw!r}: expected a positive {kind.__name__}")
    return value


@dataclass(frozen=True)
class Limits:
    """One endpoint's limits; None means no limit of that kind."""

    max_in_flight: int | None = DEFAULT_CONCURRENCY
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None

    @classmethod
    def for_models(cls) -> Limits:
        """The model endpoint's limits, from the environment."""
        return cls(
            _positive("model_in_flight", int) or DEFAULT_CONCURRENCY,
            _positive("model_requests", float),
            _positive("model_tokens", float),
        )

    @classmethod
    def for_search(cls) -> Limits:
        """The search endpoint's limits, from the environment."""
        return cls(
            _positive("search_in_flight", int) or DEFAULT_CONCURRENCY,
            _positive("search_requests", float),
        )


def retry_after_seconds(headers: Mapping[str, str]) -> float:
    """How long a 429 pauses the endpoint: what the server asks (`tools.retry_policy`), capped
    at MAX_PAUSE, else DEFAULT_PAUSE."""
    asked = retry_after(headers, cap=MAX_PAUSE)
    return DEFAULT_PAUSE if asked is None else asked


BUCKET_SECONDS = 0.1  # a bucket holds this long's allowance (or one `burst`, if more)


def _bucket(per_minute: float, burst: float) -> AsyncLimiter:
    """A leaky bucket for a per-minute rate that holds a tenth of a second's worth (at least
    `burst`), not a minute's: providers enforce per-minute limits in short slices, so a
    minute's allowance sent at once would be refused, and any second then sees at most the
    rate plus one small bucket."""
    period = min(60.0, max(BUCKET_SECONDS, 60.0 * burst / per_minute))
    return AsyncLimiter(per_minute * period / 60.0, period)


class Endpoint:
    """The gate every call to one endpoint passes, from every run on this event loop."""

    def __init__(self, name: str, limits: Limits) -> None:
        self.name = name
        self.limits = limits
        self._slots = asyncio.Semaphore(limits.max_in_flight) if limits.max_in_flight else None
        rpm, tpm = limits.requests_per_minute, limits.tokens_per_minute
        self._requests = _bucket(rpm, burst=1) if rpm else None
        self._tokens = _bucket(tpm, burst=LARGEST_PROMPT) if tpm else None
        self._resume_at = 0.0  # loop time before which no request may start (after a 429)
        self._reserved = 0  # tokens reserved on estimates, and reported by servers, in total
        self._reported = 0
        self._debt_tasks: set[asyncio.Task] = set()
        self.in_flight = 0
        self.peak_in_flight = 0
        self.rate_limited = 0  # 429 answers seen
        self._hooked = False  # the endpoint's HTTP client calls `before_request` itself

    @asynccontextmanager
    async def call(self, estimated_tokens: int = 0) -> AsyncIterator[None]:
        """Hold one request slot, after the rate buckets and any 429 pause allow it."""
        async with self._slots or contextlib.nullcontext():
            await self._admit(estimated_tokens)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            try:
                yield
            finally:
                self.in_flight -= 1

    async def _admit(self, estimated_tokens: int) -> None:
        """Wait out a 429 pause and take one request (unless each HTTP request takes its own,
        see `http_hooks`) and the estimated tokens from the buckets."""
        if not self._hooked:
            await self._take_request()
        if self._tokens is not None and estimated_tokens > 0:
            amount = min(estimated_tokens, self._tokens.max_rate)
            self._reserved += amount
            await self._tokens.acquire(amount)
        await self._pause_over()

    def _paused(self) -> bool:
        return self._resume_at > asyncio.get_running_loop().time()

    async def _pause_over(self) -> None:
        loop = asyncio.get_running_loop()
        while (wait := self._resume_at - loop.time()) > 0:
            await asyncio.sleep(wait)

    def reported(self, tokens: int) -> None:
        """The server reported a call's tokens: charge the bucket what the estimates missed."""
        if self._tokens is None or tokens <= 0:
            return
        self._reported += tokens
        debt = self._reported - self._reserved
        if debt <= 0:
            return
        self._reserved += debt  # charged now: later calls wait for it to drain
        amount = min(debt, self._tokens.max_rate)
        task = asyncio.get_running_loop().create_task(self._tokens.acquire(amount))
        self._debt_tasks.add(task)
        task.add_done_callback(self._debt_tasks.discard)

    def back_off(self, seconds: float) -> None:
        """Pause every new request to this endpoint for `seconds` (a 429's Retry-After)."""
        self.rate_limited += 1
        resume_at = asyncio.get_running_loop().time() + seconds
        self._resume_at = max(self._resume_at, resume_at)

    async def _take_request(self) -> None:
        """Wait out any pause, then take one request from the bucket; again if a 429 came in
        while we waited, so that a pause is not followed by a burst."""
        while True:
            await self._pause_over()
            if self._requests is not None:
                await self._requests.acquire()
            if not self._paused():
                return

    def http_hooks(self) -> dict[str, list]:
        """Event hooks for a client of this endpoint (httpx2's, the chat servers'; httpx takes
        them too): every HTTP request, the SDK's own retries included, waits out a 429 pause
        and takes its request from the bucket, and every 429 answer pauses the endpoint."""
        self._hooked = True
        return {"request": [self.before_request], "response": [self.observe]}

    async def before_request(self, request: httpx2.Request) -> None:
        """A request hook (see `http_hooks`)."""
        await self._take_request()

    async def observe(self, response: httpx2.Response) -> None:
        """A response hook: a 429 slows the whole endpoint, not just the one call."""
        if response.status_code == 429:
            self.back_off(retry_after_seconds(response.headers))


class Gates:
    """Every endpoint's gate, built on first use, per event loop (a semaphore and a bucket
    belong to the loop they wait on). The process holds one (`tools.process_wide`)."""

    def __init__(self) -> None:
        self._per_loop: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, Endpoint]
        ] = weakref.WeakKeyDictionary()

    def get(self, name: str, limits: Limits | None = None) -> Endpoint:
        """The endpoint's gate on the running event loop, built on first use from the limits
        given (or from the environment: model limits unless `name` starts with `search:`)."""
        per_loop = self._per_loop.setdefault(asyncio.get_running_loop(), {})
        if name not in per_loop:
            if limits is None:
                limits = Limits.for_search() if name.startswith("search:") else Limits.for_models()
            per_loop[name] = _gate(name, limits)
        return per_loop[name]

    def model(self, base_url: str | None) -> Endpoint:
        """The gate of the chat server at `base_url` (None: OpenAI's own)."""
        return self.get(endpoint_id(base_url))

    def all(self) -> dict[str, Endpoint]:
        """Every gate built on the running event loop (for benchmarks and progress)."""
        return dict(self._per_loop.get(asyncio.get_running_loop(), {}))


def _gate(name: str, limits: Limits) -> Endpoint:
    """A gate in this process, or, with `DEEP_RESEARCH_REDIS_URL` set, one whose limits every
    process using that Redis shares (`tools.shared_limits`, the `queue` extra)."""
    url = os.environ.get("DEEP_RESEARCH_REDIS_URL", "").strip()
    if not url:
        return Endpoint(name, limits)
    from deep_research.tools.shared_limits import shared_endpoint

    return shared_endpoint(name, limits, url)


def endpoint_id(base_url: str | None) -> str:
    """What names one chat server, for every per-endpoint memory: its base URL as the SDK will
    use it (None: OpenAI's own), without a trailing slash."""
    return (base_url or OPENAI_URL).rstrip("/")
