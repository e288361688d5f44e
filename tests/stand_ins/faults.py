"""Seeded fault injection for the stand-ins: errors, rate limits and slow answers at given rates."""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter

from stand_ins.loopback import Reply


class Faults:
    """A `fault(number, body)` hook: each request fails with some probability, reproducibly."""

    def __init__(
        self,
        seed: int,
        error_rate: float = 0.0,
        limit_rate: float = 0.0,
        slow_rate: float = 0.0,
        slow_seconds: float = 0.0,
    ) -> None:
        self.random = random.Random(seed)
        self.error_rate, self.limit_rate = error_rate, limit_rate
        self.slow_rate, self.slow_seconds = slow_rate, slow_seconds
        self.injected: Counter = Counter()
        self._lock = threading.Lock()

    def __call__(self, number: int, body: dict) -> Reply | None:
        with self._lock:
            draw = self.random.random()
        if draw < self.error_rate:
            self.injected["500"] += 1
            return Reply(
                500,
                {"error": {"message": "injected failure"}},
                headers={"retry-after-ms": "20", "retry-after": "0"},
            )
        if draw < self.error_rate + self.limit_rate:
            self.injected["429"] += 1
            return Reply(
                429,
                {"error": {"message": "injected rate limit"}},
                headers={"retry-after-ms": "20", "retry-after": "0"},
            )
        if draw < self.error_rate + self.limit_rate + self.slow_rate:
            self.injected["slow"] += 1
            time.sleep(self.slow_seconds)
        return None


class WriterFails:
    """A `fault(number, body)` hook: every prose request (the report writer's) is refused with
    a 400 until `failing` is set False; structured ones pass (the run fails at its writer, after
    its research is saved)."""

    def __init__(self) -> None:
        self.failing = True

    def __call__(self, number: int, body: dict) -> Reply | None:
        text = json.dumps(body["messages"])
        structured = body.get("response_format") or body.get("tools") or "Schema name" in text
        if self.failing and not structured:
            return Reply(400, {"error": {"message": "scripted", "type": "invalid_request_error"}})
        return None
