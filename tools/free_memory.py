"""The heap's free pages handed back to the system as steps end, at most every few seconds.

glibc's allocator keeps what a process frees inside its heap, between the blocks still in use,
and only the heap's top goes back to the system on its own. A process of many runs frees page
text, prompts and replies all the time among what the other runs still hold: with 64 runs at
once, 20-30 MiB of its heap was free at the peak and counted in its memory all the same.
`malloc_trim(0)` hands every whole free page back (glibc 2.8 and later); it takes a few
milliseconds, so it is done when a step ends, at most once every `EVERY` seconds (every step
of a process in use, none of an idle one). Where the C library has no `malloc_trim` (musl,
macOS, Windows), this does nothing.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable

EVERY = 2.0  # seconds between two hand-backs, at least


def _malloc_trim() -> Callable[[], object] | None:
    """glibc's `malloc_trim(0)`, or None where the process's C library has none."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError, TypeError):  # no such symbol; Windows has no CDLL(None)
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return lambda: trim(0)


class FreeMemory:
    """Hands the heap's free pages back when asked, unless it did less than `every` s ago."""

    def __init__(
        self,
        trim: Callable[[], object] | None,
        every: float = EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._trim, self._every, self._clock = trim, every, clock
        self._last = float("-inf")
        self._lock = threading.Lock()  # steps of `graph.invoke` end on other threads
        self.times = 0  # hand-backs made

    def step_ended(self) -> None:
        """A step has ended: what it freed goes back to the system, if it is time."""
        if self._trim is None:
            return
        now = self._clock()
        with self._lock:
            if now - self._last < self._every:
                return
            self._last = now
            self.times += 1
        self._trim()


FREE_MEMORY = FreeMemory(_malloc_trim())
