"""Our SQLite saver (each channel version stored once: `tools.versioned_sqlite`) that knows which
of its writes are under way, so that its store is closed only after them.

When a step fails, LangGraph cancels its sibling tasks and raises at once; a cancelled task's
done-callback then submits its error write, which nothing awaits. Closing the connection under
that write (its INSERT run, its commit not yet) left SQLite a "zombie" connection holding the
write lock for as long as the write's cursor lived: the next command in the same process got
"database is locked", whatever the busy timeout.
"""

from __future__ import annotations

import asyncio
from typing import Any

from deep_research.tools.versioned_sqlite import VersionedSqliteSaver


class SettlingSqliteSaver(VersionedSqliteSaver):
    """A `VersionedSqliteSaver` whose `settle` waits for the writes under way."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.writing: set[asyncio.Task] = set()

    async def aput(self, *args: Any, **kwargs: Any) -> Any:
        return await self._tracked(super().aput(*args, **kwargs))

    async def aput_writes(self, *args: Any, **kwargs: Any) -> None:
        await self._tracked(super().aput_writes(*args, **kwargs))

    async def _tracked(self, write: Any) -> Any:
        """Await `write`, counting the current task as writing meanwhile."""
        task = asyncio.current_task()
        if task is not None:
            self.writing.add(task)
        try:
            return await write
        finally:
            self.writing.discard(task)  # type: ignore[arg-type]

    async def settle(self, seconds: float) -> None:
        """Wait (up to `seconds`) for the writes under way, those they let start too."""
        deadline = asyncio.get_running_loop().time() + seconds
        while pending := self.writing - {asyncio.current_task()}:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return
            await asyncio.wait(pending, timeout=left)
