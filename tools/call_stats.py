"""Per-role figures of a run's model calls: seconds, retries, re-asks, methods, degenerate replies.

`Usage` counts what the servers billed; this counts what the calls cost in time and in second
tries, the figures a user compares before choosing a local model (`bench/bench_model.py`).
In memory only, like the rest of `RunResources`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class RoleCalls:
    """One role's calls."""

    calls: int = 0
    seconds: float = 0.0
    retries: int = 0  # requests sent again after a timeout, a 5xx or a dropped connection
    retries_after_output: int = 0  # of those, calls that had streamed tokens before failing
    reasks: int = 0  # replies that broke their contract or were degenerate, asked again
    refusals: int = 0  # methods the server refused or ignored (then a weaker one was used)
    shrunk: int = 0  # prompts resent shorter after the server said they were too long
    degenerate: int = 0  # replies found empty, cut off, echoing the prompt or looping
    methods: Counter = field(default_factory=Counter)


@dataclass
class CallStats:
    """All roles' calls for one run."""

    roles: dict[str, RoleCalls] = field(default_factory=dict)

    def of(self, role: str) -> RoleCalls:
        """The figures of one role, created on first use."""
        return self.roles.setdefault(role, RoleCalls())
