"""Endpoint limits shared by every process that uses one Redis (`DEEP_RESEARCH_REDIS_URL`).

The same limits as `tools.endpoint_limits` (which stays the default, per process), held in Redis
so that any number of processes on any number of machines obey one set:

- requests in flight: leases in a sorted set (`tools.leases`); a dead holder's slot comes back
  within one lease (`DEEP_RESEARCH_REDIS_LEASE_SECONDS`, default 15);
- requests per minute: the `limits` library's moving window, exact: no window of S seconds
  holds more than the rate's share of S (S is the shortest whole number of seconds with a
  share of at least 90% of one request, e.g. 120/min: 2 in any second);
- tokens per minute: `limits`' sliding window counter, charged with `cost=` our estimate of the
  prompt before the call and what the server reported after it;
- a 429's Retry-After: a key that lives that long; every process waits it out.

Keys are `deep-research:<hash of the endpoint>:...`: never a key or a URL. Every process reads
its limits from its own environment; give them all the same values.

Redis gone mid-run: every operation that admits a call is retried (each try bounded by a short
socket timeout) for up to `DEEP_RESEARCH_REDIS_WAIT_SECONDS` (default 30), with one warning;
past that the call fails with `SharedLimitsUnavailable`, which stops the run like any failed
step (saved, resumable). Calls never fall back to per-process limits: several processes doing so
would together break the provider's limits that Redis was there to keep. Giving back a slot
and renewing one only log a failure: the lease runs out on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from limits import RateLimitItemPerMinute, RateLimitItemPerSecond
from limits.aio.storage import RedisStorage
from limits.aio.strategies import MovingWindowRateLimiter, SlidingWindowCounterRateLimiter
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from deep_research.tools.endpoint_limits import Endpoint, Limits, retry_after_seconds
from deep_research.tools.leases import LeaseSemaphore, Operation
from deep_research.tools.secrets import mask_url_passwords

log = logging.getLogger(__name__)

REDIS_URL_VARIABLE = "DEEP_RESEARCH_REDIS_URL"
LEASE_VARIABLE = "DEEP_RESEARCH_REDIS_LEASE_SECONDS"
WAIT_VARIABLE = "DEEP_RESEARCH_REDIS_WAIT_SECONDS"
DEFAULT_LEASE = 15.0
DEFAULT_WAIT = 30.0
SOCKET_TIMEOUT = 2.0  # seconds one Redis operation may take before it is tried again
UNAVAILABLE = (RedisConnectionError, RedisTimeoutError, OSError)
PREFIX = "deep-research"


class SharedLimitsUnavailable(RuntimeError):
    """Redis, which holds the shared endpoint limits, stayed unreachable past the bound."""


def redis_url() -> str | None:
    """The Redis that holds shared limits (`DEEP_RESEARCH_REDIS_URL`), None when unset."""
    return os.environ.get(REDIS_URL_VARIABLE, "").strip() or None


def _seconds(variable: str, default: float) -> float:
    """A positive number of seconds from the environment, else the default."""
    raw = os.environ.get(variable, "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        value = 0.0
    if value <= 0:
        raise ValueError(f"{variable}={raw!r}: expected a positive number of seconds")
    return value


def endpoint_key(name: str) -> str:
    """What names an endpoint in Redis: a hash of its name (no URL, no key)."""
    return f"{PREFIX}:{hashlib.sha256(name.encode()).hexdigest()[:20]}"


def request_window(per_minute: float) -> RateLimitItemPerSecond:
    """The exact window for a per-minute request rate: N requests per S seconds, S the shortest
    whole number of seconds (at most 60) whose share keeps 90% of the rate."""
    for seconds in range(1, 61):
        share = per_minute * seconds / 60
        if share >= 1 and int(share) >= 0.9 * share:
            return RateLimitItemPerSecond(int(share), seconds)
    return RateLimitItemPerSecond(max(1, int(per_minute)), 60)


class SharedStore:
    """One Redis connection pool per event loop, and how operations on it are retried."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.shown = mask_url_passwords(url)
        self.redis = Redis.from_url(
            url, socket_timeout=SOCKET_TIMEOUT, socket_connect_timeout=SOCKET_TIMEOUT
        )
        self.storage = RedisStorage(
            f"async+{url}", implementation="redispy", connection_pool=self.redis.connection_pool
        )
        self.lease_seconds = _seconds(LEASE_VARIABLE, DEFAULT_LEASE)
        self.wait_seconds = _seconds(WAIT_VARIABLE, DEFAULT_WAIT)
        self._warned = False

    async def retry(self, operation: Operation) -> Any:
        """Run a Redis operation; while Redis is unreachable, try again for up to the bound
        (one warning), then raise SharedLimitsUnavailable."""
        deadline = time.monotonic() + self.wait_seconds
        while True:
            try:
                return await operation()
            except UNAVAILABLE as error:
                if time.monotonic() >= deadline:
                    raise SharedLimitsUnavailable(
                        f"Redis at {self.shown}, which holds the shared endpoint limits, has "
                        f"been unreachable for {self.wait_seconds:g} s ({error})"
                    ) from None
                if not self._warned:
                    log.warning(
                        "Redis at %s is unreachable; calls wait for it (up to %g s)",
                        self.shown,
                        self.wait_seconds,
                    )
                    self._warned = True
                await asyncio.sleep(min(0.5, max(0.0, deadline - time.monotonic())))

    async def best_effort(self, operation: Operation, what: str) -> Any:
        """Run a Redis operation once; if Redis is unreachable, log it and go on (None)."""
        try:
            return await operation()
        except UNAVAILABLE as error:
            log.warning("could not %s in Redis at %s (%s)", what, self.shown, error)
            return None


class SharedEndpoint(Endpoint):
    """An endpoint's gate whose limits live in Redis, shared by every process using it."""

    def __init__(self, name: str, limits: Limits, store: SharedStore) -> None:
        super().__init__(name, limits)
        self.store = store
        self.key = endpoint_key(name)
        self._pause_key = f"{self.key}:pause"
        self._leases = (
            LeaseSemaphore(
                store.redis, store, f"{self.key}:slots", limits.max_in_flight, store.lease_seconds
            )
            if limits.max_in_flight
            else None
        )
        rpm, tpm = limits.requests_per_minute, limits.tokens_per_minute
        self._request_window = request_window(rpm) if rpm else None
        self._token_window = RateLimitItemPerMinute(max(1, int(tpm))) if tpm else None
        self._moving = MovingWindowRateLimiter(store.storage)
        self._sliding = SlidingWindowCounterRateLimiter(store.storage)

    @asynccontextmanager
    async def call(self, estimated_tokens: int = 0) -> AsyncIterator[None]:
        """Hold one shared request slot, after the shared rates and any 429 pause allow it."""
        async with self._leases.slot() if self._leases else contextlib.nullcontext():
            await self._admit(estimated_tokens)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            try:
                yield
            finally:
                self.in_flight -= 1

    async def _admit(self, estimated_tokens: int) -> None:
        """Wait out a shared 429 pause and take one request (unless each HTTP request takes its
        own) and the estimated tokens from the shared windows."""
        if not self._hooked:
            await self._take_request()
        if self._token_window is not None and estimated_tokens > 0:
            self._reserved += min(estimated_tokens, self._token_window.amount)
            await self._hit(self._sliding, self._token_window, estimated_tokens)
        await self._pause_over()

    async def _hit(self, limiter: Any, item: Any, cost: int) -> None:
        """Take `cost` from a shared window, waiting until it fits (`limits` never waits)."""
        cost = min(cost, item.amount)
        while not await self.store.retry(lambda: limiter.hit(item, self.key, cost=cost)):
            stats = await self.store.retry(lambda: limiter.get_window_stats(item, self.key))
            await asyncio.sleep(min(1.0, max(0.01, stats.reset_time - time.time())))

    async def _pause_left(self) -> float:
        """Seconds left of the shared pause after a 429 (0 when none)."""
        left = await self.store.retry(lambda: self.store.redis.pttl(self._pause_key))
        return max(0, left) / 1000

    async def _pause_over(self) -> None:
        """Wait until no process's 429 pauses this endpoint."""
        while (left := await self._pause_left()) > 0:
            await asyncio.sleep(left)

    async def _take_request(self) -> None:
        """Wait out any pause, then take one request from the shared window; again if a 429
        came in while we waited, so that a pause is not followed by a burst."""
        while True:
            await self._pause_over()
            if self._request_window is not None:
                await self._hit(self._moving, self._request_window, 1)
            if await self._pause_left() <= 0:
                return

    def reported(self, tokens: int) -> None:
        """The server reported a call's tokens: charge the shared window what the estimate
        missed (later calls, in every process, wait for it)."""
        if self._token_window is None or tokens <= 0:
            return
        self._reported += tokens
        debt = self._reported - self._reserved
        if debt <= 0:
            return
        self._reserved += debt
        charge = self._hit(self._sliding, self._token_window, debt)
        task = asyncio.get_running_loop().create_task(charge)
        self._debt_tasks.add(task)
        task.add_done_callback(self._debt_tasks.discard)

    async def observe(self, response: httpx2.Response) -> None:
        """A response hook: a 429 pauses the endpoint for every process."""
        if response.status_code == 429:
            await self.back_off_shared(retry_after_seconds(response.headers))

    async def back_off_shared(self, seconds: float) -> None:
        """Pause every new request to this endpoint, in every process, for `seconds`."""
        self.rate_limited += 1
        milliseconds = max(1, int(seconds * 1000))
        await self.store.retry(lambda: self._extend_pause(milliseconds))

    async def _extend_pause(self, milliseconds: int) -> None:
        """Make the pause last at least `milliseconds` from now (a longer one stays): each of
        the two commands is atomic, so two processes' 429s leave the longer pause."""
        await self.store.redis.set(self._pause_key, "1", px=milliseconds, nx=True)
        await self.store.redis.pexpire(self._pause_key, milliseconds, gt=True)

    def back_off(self, seconds: float) -> None:
        """A 429 seen outside an HTTP hook: pause every process (in the background)."""
        task = asyncio.get_running_loop().create_task(self.back_off_shared(seconds))
        self._debt_tasks.add(task)
        task.add_done_callback(self._debt_tasks.discard)


_STORES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, SharedStore]] = (
    weakref.WeakKeyDictionary()
)


def shared_endpoint(name: str, limits: Limits, url: str) -> SharedEndpoint:
    """The shared gate of an endpoint on the running loop (one Redis pool per loop and URL)."""
    stores = _STORES.setdefault(asyncio.get_running_loop(), {})
    if url not in stores:
        stores[url] = SharedStore(url)
    return SharedEndpoint(name, limits, stores[url])
