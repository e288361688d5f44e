"""At most N holders at once across processes and machines: a Redis sorted set of leases.

No well-kept library offers a crash-safe async semaphore over Redis, so this is one, in three
short Lua scripts (each runs atomically on the server, timed by the server's clock). A holder
adds a member whose score is when its lease expires; it renews the lease while it holds it and
removes it when done. A holder that dies (SIGKILL, a lost machine) stops renewing, and its slot
comes back when the lease runs out: within one lease.
"""

from __future__ import annotations

import asyncio
import logging
import random
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Protocol

log = logging.getLogger(__name__)

_NOW = "local t = redis.call('TIME'); local now = t[1] * 1000 + math.floor(t[2] / 1000)\n"
ACQUIRE = (
    _NOW
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], 2 * tonumber(ARGV[3]))
  return 1
end
return 0
"""
)
RENEW = (
    _NOW
    + """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], 2 * tonumber(ARGV[2]))
  return 1
end
return 0
"""
)
FIRST_WAIT = 0.01  # seconds between tries for a free slot, doubling up to LONGEST_WAIT
LONGEST_WAIT = 0.2

Operation = Callable[[], Awaitable[Any]]


class Store(Protocol):
    """How a Redis operation is run: retried while Redis is away (up to a bound), or tried
    once with a failure only logged (giving back, renewing: the lease expires anyway)."""

    async def retry(self, operation: Operation) -> Any:
        """Run it, trying again while Redis is away, up to a bound."""

    async def best_effort(self, operation: Operation, what: str) -> Any:
        """Run it once; a failure is logged, not raised."""


class LeaseSemaphore:
    """At most `limit` leases in the sorted set `key`, each `lease_seconds` long."""

    def __init__(self, redis: Any, store: Store, key: str, limit: int, lease_seconds: float):
        self.key, self.limit = key, limit
        self.lease_ms = max(1, int(lease_seconds * 1000))
        self._acquire = redis.register_script(ACQUIRE)
        self._renew = redis.register_script(RENEW)
        self._redis = redis
        self._store = store

    async def _try(self, member: str) -> bool:
        """One try for a slot: True when the lease was taken."""
        args = [member, self.limit, self.lease_ms]
        return bool(await self._store.retry(lambda: self._acquire(keys=[self.key], args=args)))

    async def _keep(self, member: str) -> None:
        """Renew the lease a few times per lease for as long as it is held."""
        while True:
            await asyncio.sleep(self.lease_ms / 3000)
            renewed = await self._store.best_effort(
                lambda: self._renew(keys=[self.key], args=[member, self.lease_ms]),
                "renew an in-flight slot",
            )
            if renewed == 0:  # it ran out before we renewed it (a frozen process): say so
                log.warning("a shared in-flight slot ran out before it was renewed")
                return

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one slot: wait until one is free, renew it while held, give it back after."""
        member = uuid.uuid4().hex
        wait = FIRST_WAIT
        while not await self._try(member):
            await asyncio.sleep(wait * random.uniform(0.5, 1.5))
            wait = min(LONGEST_WAIT, wait * 2)
        keeper = asyncio.get_running_loop().create_task(self._keep(member))
        try:
            yield
        finally:
            keeper.cancel()
            await self._store.best_effort(
                lambda: self._redis.zrem(self.key, member), "give back an in-flight slot"
            )
