"""LangGraph's SQLite saver storing each channel's value once per version, as its PostgreSQL
saver does, instead of every value again in every checkpoint.

LangGraph's `AsyncSqliteSaver` serializes the whole state into each checkpoint: a value that
no step changed (the settings, the subtask, a worker's evidence) is written again at every
step, so a run's store grew faster than its work. Here a checkpoint row keeps only its small
values (`None`, short text, numbers; and a `DeltaChannel`'s snapshots, which LangGraph's own delta
walk reads from the row); every other value goes to `checkpoint_blobs` under its channel and
version, written when the version is new and read back by the version the checkpoint names.
Rows written by the plain saver (every value inline) read back unchanged.

A version is also shorter than the plain saver's (`next_version`): every checkpoint names the
version of each of its channels and of what each node has seen, and the plain saver's 50
characters a version were most of a checkpoint row's bytes.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import aiosqlite
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

BLOBS_TABLE = """
CREATE TABLE IF NOT EXISTS checkpoint_blobs (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    channel TEXT NOT NULL,
    version TEXT NOT NULL,
    type TEXT NOT NULL,
    blob BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
)"""


INLINE_TEXT = 256  # characters of text a checkpoint row keeps itself (a report is stored once)


def _inline(value: Any) -> bool:
    """True for a value the checkpoint row keeps itself."""
    if isinstance(value, str):
        return len(value) <= INLINE_TEXT
    return value is None or isinstance(value, (int, float, bool, _DeltaSnapshot))


def version_number(version: str | int | None) -> int:
    """The step count a version carries, in `next_version`'s form or the plain saver's."""
    if version is None:
        return 0
    if isinstance(version, int):
        return version
    number = version.split(".", 1)[0]
    return int(number) if number[:1].isdigit() else int(number[1:], 16)


def next_version(current: str | int | None) -> str:
    """The version after `current`: its number in hex behind a letter that says how many hex
    digits follow, then a random tag (versions of forked branches must not meet in the blobs
    table). Versions are compared as strings: the letter makes a longer number sort after a
    shorter one, and every letter after the plain saver's zero-padded digits, so a run stored
    before goes on in order."""
    digits = f"{version_number(current) + 1:x}"
    return f"{chr(ord('f') + len(digits))}{digits}.{random.getrandbits(32):08x}"


class VersionedSqliteSaver(AsyncSqliteSaver):
    """An `AsyncSqliteSaver` that writes each channel version's value once."""

    _blobs: bool | None = None  # the blobs table: None until set up, False if it cannot be

    async def setup(self) -> None:
        await super().setup()
        if self._blobs is not None:
            return
        async with self.lock:
            if self._blobs is None:
                try:
                    await self.conn.execute(BLOBS_TABLE)
                    await self.conn.commit()
                    self._blobs = True
                except aiosqlite.OperationalError as error:
                    if "readonly database" not in str(error):
                        raise
                    self._blobs = False  # a read-only store from before: every value inline

    def get_next_version(self, current: str | None, channel: None) -> str:
        return next_version(current)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store the values of the channels with a new version, then the checkpoint without
        them (so that no reader finds a checkpoint whose values are not stored yet)."""
        await self.setup()
        thread_id = str(config["configurable"]["thread_id"])
        namespace = config["configurable"]["checkpoint_ns"]
        values = checkpoint["channel_values"]
        rows = [
            (thread_id, namespace, channel, str(version), *self.serde.dumps_typed(values[channel]))
            for channel, version in new_versions.items()
            if channel in values and not _inline(values[channel])
        ]
        if rows:
            async with self.lock:
                await self.conn.executemany(
                    "INSERT OR IGNORE INTO checkpoint_blobs "
                    "(thread_id, checkpoint_ns, channel, version, type, blob) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    rows,
                )
                await self.conn.commit()
        kept = {channel: value for channel, value in values.items() if _inline(value)}
        return await super().aput(
            config, {**checkpoint, "channel_values": kept}, metadata, new_versions
        )

    async def _with_values(self, found: CheckpointTuple | None) -> CheckpointTuple | None:
        """The checkpoint with the values its row does not hold read back by version."""
        if found is None:
            return None
        checkpoint = found.checkpoint
        values = checkpoint["channel_values"]
        wanted = [
            (channel, str(version))
            for channel, version in checkpoint["channel_versions"].items()
            if channel not in values
        ]
        if not wanted or not self._blobs:
            return found
        configurable = found.config["configurable"]
        pairs = ", ".join("(?, ?)" for _ in wanted)
        query = (
            "SELECT channel, type, blob FROM checkpoint_blobs WHERE thread_id = ? "
            f"AND checkpoint_ns = ? AND (channel, version) IN (VALUES {pairs})"
        )
        parameters = [str(configurable["thread_id"]), configurable.get("checkpoint_ns", "")]
        parameters += [part for pair in wanted for part in pair]
        async with self.lock, self.conn.execute(query, parameters) as cursor:
            rows = await cursor.fetchall()
        for channel, type_, blob in rows:
            values[channel] = self.serde.loads_typed((type_, blob))
        return found

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self._with_values(await super().aget_tuple(config))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        # the listing holds the saver's lock while it yields: read the values after it
        listed = [
            found
            async for found in super().alist(config, filter=filter, before=before, limit=limit)
        ]
        for found in listed:
            yield await self._with_values(found)  # type: ignore[misc]

    async def adelete_thread(self, thread_id: str) -> None:
        await super().adelete_thread(thread_id)
        await self.setup()
        async with self.lock:
            await self.conn.execute(
                "DELETE FROM checkpoint_blobs WHERE thread_id = ?", (str(thread_id),)
            )
            await self.conn.commit()
