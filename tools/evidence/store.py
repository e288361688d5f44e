"""The evidence tables beside the checkpoints: texts once per hash, the reads of runs under way,
the sources a finished run's citations rest on, and the re-checks of a run.

- `evidence_texts`: one row per distinct stored text (its SHA-256 the key), shared by every run
  that keeps it: two runs citing the same page store it once.
- `evidence_reads`: what a run under way has read (by reader: the run's id, or `recheck:THREAD`
  for the pages a re-check found changed), its text inline; dropped once the run keeps its
  evidence, or with its thread.
- `evidence_kept`: per finished thread and citation number, where the text came from, when,
  the validators the server sent, the hash of the text as read and of the text stored (they
  differ when the run's byte limit cut it).
- `evidence_rechecks`: each re-check of a thread, as JSON.

A text no kept row names any more is deleted in the same transaction that let it go; on
PostgreSQL that transaction holds an advisory lock, so a text is never deleted under a run that
is keeping it.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from deep_research.tools.evidence.reads import PageRead
from deep_research.tools.store_tables import Statements, StoreTables

EVIDENCE_LOCK = 0x65766964  # "evid": keeping and forgetting, one at a time per database
RECHECK_READER = "recheck:{thread_id}"  # the reader under which a re-check keeps changed pages
TABLES = ("evidence_texts", "evidence_reads", "evidence_kept", "evidence_rechecks")
_READ_COLUMNS = "url, kind, final_url, status, fetched_at, etag, last_modified"
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS evidence_texts ("
    " sha256 TEXT PRIMARY KEY, text TEXT NOT NULL, bytes INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS evidence_reads ("
    " reader TEXT NOT NULL, url_key TEXT NOT NULL, url TEXT NOT NULL, kind TEXT NOT NULL,"
    " final_url TEXT NOT NULL, status INTEGER, fetched_at DOUBLE PRECISION,"
    " etag TEXT NOT NULL, last_modified TEXT NOT NULL, text TEXT NOT NULL,"
    " PRIMARY KEY (reader, url_key))",
    "CREATE TABLE IF NOT EXISTS evidence_kept ("
    " thread_id TEXT NOT NULL, number INTEGER NOT NULL, run_id TEXT NOT NULL,"
    " url_key TEXT NOT NULL, url TEXT NOT NULL, kind TEXT NOT NULL, final_url TEXT NOT NULL,"
    " status INTEGER, fetched_at DOUBLE PRECISION, etag TEXT NOT NULL,"
    " last_modified TEXT NOT NULL, sha256 TEXT NOT NULL, stored_sha256 TEXT NOT NULL,"
    " read_bytes INTEGER NOT NULL, stored_bytes INTEGER NOT NULL,"
    " PRIMARY KEY (thread_id, number))",
    "CREATE INDEX IF NOT EXISTS evidence_kept_by_text ON evidence_kept (stored_sha256)",
    "CREATE TABLE IF NOT EXISTS evidence_rechecks ("
    " thread_id TEXT NOT NULL, seq INTEGER NOT NULL, at DOUBLE PRECISION NOT NULL,"
    " result TEXT NOT NULL, PRIMARY KEY (thread_id, seq))",
)


def store_errors(store: EvidenceStore | None) -> tuple[type[BaseException], ...]:
    """What a statement raises when `store` fails (locked, gone, full): psycopg's errors too
    when it is a PostgreSQL store (psycopg is not imported for a run without one: 73 modules)."""
    errors: list[type[BaseException]] = [sqlite3.Error, OSError]
    if store is not None and store.tables.postgres:
        import psycopg

        errors.append(psycopg.Error)
    return tuple(errors)


@dataclass(frozen=True)
class Kept:
    """One cited source's evidence as kept: the read it comes from, the text stored (`cut`
    when the run's limit did not leave room for all of it)."""

    number: int
    read: PageRead  # its text is "" when read back from the store (`EvidenceStore.text`)
    sha256: str  # the hash of the text as read
    stored_sha256: str  # the key of the stored text ("" when nothing could be stored)
    read_bytes: int
    stored_bytes: int

    @property
    def cut(self) -> bool:
        """True when less than the whole text is stored."""
        return self.stored_sha256 != self.sha256


def _read_values(read: PageRead) -> tuple:
    """A read's values for the columns `_READ_COLUMNS` names, in that order."""
    return (
        read.url,
        read.kind,
        read.final_url,
        read.status,
        read.fetched_at,
        read.etag,
        read.last_modified,
    )


def _read(row: tuple, text: str = "") -> PageRead:
    """A PageRead from the columns `_READ_COLUMNS` names, in that order."""
    url, kind, final_url, status, fetched_at, etag, last_modified = row
    return PageRead(
        url=url,
        kind=kind,
        text=text,
        final_url=final_url,
        status=status,
        fetched_at=fetched_at,
        etag=etag,
        last_modified=last_modified,
    )


class EvidenceStore:
    """The evidence tables of one store; `open` connects, `close` ends."""

    def __init__(self, target: str) -> None:
        self.tables = StoreTables(target, TABLES, SCHEMA)

    async def open(self) -> EvidenceStore:
        """Connect, and create the tables if needed."""
        await self.tables.open()
        return self

    async def close(self) -> None:
        """Close the connection."""
        await self.tables.close()

    async def __aenter__(self) -> EvidenceStore:
        return await self.open()

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    # ------------------------------------------------------------ runs under way

    async def note_read(self, reader: str, read: PageRead) -> None:
        """Keep one read of a run under way (a later read of the same source replaces it)."""
        async with self.tables.transaction() as statements:
            await statements.run(
                "DELETE FROM evidence_reads WHERE reader = ? AND url_key = ?", (reader, read.key)
            )
            await statements.run(
                f"INSERT INTO evidence_reads (reader, url_key, {_READ_COLUMNS}, text)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (reader, read.key, *_read_values(read), read.text),
            )

    async def reads(self, reader: str) -> dict[str, PageRead]:
        """Every read a reader has kept, by source."""
        rows = await self.tables.run(
            f"SELECT url_key, {_READ_COLUMNS}, text FROM evidence_reads WHERE reader = ?",
            (reader,),
        )
        return {row[0]: _read(row[1:8], row[8]) for row in rows}

    async def forget_reads(self, reader: str) -> None:
        """Drop a reader's reads (a re-check keeps only its latest changed pages)."""
        await self.tables.run("DELETE FROM evidence_reads WHERE reader = ?", (reader,))

    # ------------------------------------------------------------ finished runs

    async def keep(self, thread_id: str, run_id: str, kept: list[tuple[Kept, str]]) -> list[Kept]:
        """Keep a finished run's evidence: each cited source's row and stored text; its reads
        under way are dropped. Keeping the same run again changes nothing (a finalize step that
        runs again after a crash gets the rows the first one kept)."""
        async with self.tables.transaction(lock=EVIDENCE_LOCK) as statements:
            earlier = await self._kept(statements, thread_id)
            if earlier and all(run == run_id for run, _ in earlier):
                return [row for _, row in earlier]
            await statements.run("DELETE FROM evidence_kept WHERE thread_id = ?", (thread_id,))
            for row, text in kept:
                await self._insert(statements, thread_id, run_id, row, text)
            await statements.run("DELETE FROM evidence_reads WHERE reader = ?", (run_id,))
            await self._drop_unused(statements, {row.stored_sha256 for _, row in earlier})
        return [row for row, _ in kept]

    async def _insert(
        self, statements: Statements, thread_id: str, run_id: str, row: Kept, text: str
    ) -> None:
        """One kept row, and its text unless that text is stored already."""
        if row.stored_sha256:
            await statements.run(
                "INSERT INTO evidence_texts (sha256, text, bytes) VALUES (?, ?, ?)"
                " ON CONFLICT (sha256) DO NOTHING",
                (row.stored_sha256, text, row.stored_bytes),
            )
        read = row.read
        await statements.run(
            "INSERT INTO evidence_kept (thread_id, number, run_id, url_key, "
            f"{_READ_COLUMNS}, sha256, stored_sha256, read_bytes, stored_bytes)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                thread_id,
                row.number,
                run_id,
                read.key,
                *_read_values(read),
                row.sha256,
                row.stored_sha256,
                row.read_bytes,
                row.stored_bytes,
            ),
        )

    async def _drop_unused(self, statements: Statements, hashes: set[str]) -> None:
        """Delete those of `hashes` no kept row names any more."""
        for sha256 in hashes - {""}:
            await statements.run(
                "DELETE FROM evidence_texts WHERE sha256 = ? AND NOT EXISTS"
                " (SELECT 1 FROM evidence_kept WHERE stored_sha256 = ?)",
                (sha256, sha256),
            )

    async def _kept(self, statements: Statements, thread_id: str) -> list[tuple[str, Kept]]:
        """A thread's kept rows with the run that kept them, by citation number."""
        rows = await statements.run(
            f"SELECT run_id, number, {_READ_COLUMNS}, sha256, stored_sha256, read_bytes,"
            " stored_bytes FROM evidence_kept WHERE thread_id = ? ORDER BY number",
            (thread_id,),
        )
        return [(row[0], _kept_row(row[1:])) for row in rows]

    async def kept(self, thread_id: str) -> list[Kept]:
        """A finished thread's evidence rows (no text), by citation number."""
        async with self.tables.transaction() as statements:
            return [row for _, row in await self._kept(statements, thread_id)]

    async def text(self, sha256: str) -> str | None:
        """A stored text by its hash; None when none is stored."""
        rows = await self.tables.run("SELECT text FROM evidence_texts WHERE sha256 = ?", (sha256,))
        return rows[0][0] if rows else None

    async def forget(self, thread_id: str, run_id: str = "") -> None:
        """Delete everything kept of a thread: its rows, its re-checks, the reads of its run
        and of its re-checks, and every text no other thread keeps."""
        readers = [RECHECK_READER.format(thread_id=thread_id), run_id]
        async with self.tables.transaction(lock=EVIDENCE_LOCK) as statements:
            earlier = await self._kept(statements, thread_id)
            await statements.run("DELETE FROM evidence_kept WHERE thread_id = ?", (thread_id,))
            await statements.run("DELETE FROM evidence_rechecks WHERE thread_id = ?", (thread_id,))
            for reader in filter(None, readers):
                await statements.run("DELETE FROM evidence_reads WHERE reader = ?", (reader,))
            await self._drop_unused(statements, {row.stored_sha256 for _, row in earlier})

    # ------------------------------------------------------------ re-checks

    async def save_recheck(self, thread_id: str, at: float, result: str) -> int:
        """Keep a re-check's JSON beside its thread; returns its number (1, 2, ...)."""
        rows = await self.tables.run(
            "INSERT INTO evidence_rechecks (thread_id, seq, at, result) SELECT ?,"
            " COALESCE(MAX(seq), 0) + 1, ?, ? FROM evidence_rechecks WHERE thread_id = ?"
            " RETURNING seq",
            (thread_id, at, result, thread_id),
        )
        return int(rows[0][0])

    async def rechecks(self, thread_id: str) -> list[str]:
        """A thread's re-checks, oldest first, as the JSON they were kept as."""
        rows = await self.tables.run(
            "SELECT result FROM evidence_rechecks WHERE thread_id = ? ORDER BY seq", (thread_id,)
        )
        return [row[0] for row in rows]

    # ------------------------------------------------------------ sizes

    async def sizes(self) -> dict[str, Any]:
        """Bytes stored: texts in all, and per thread what its rows name (shared ones too)."""
        total = await self.tables.run(
            "SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM evidence_texts"
        )
        per = await self.tables.run(
            "SELECT thread_id, COUNT(*), COALESCE(SUM(stored_bytes), 0) FROM evidence_kept"
            " GROUP BY thread_id"
        )
        return {
            "texts": int(total[0][0]),
            "bytes": int(total[0][1]),
            "threads": {t: {"sources": int(n), "bytes": int(b)} for t, n, b in per},
        }


def _kept_row(row: tuple) -> Kept:
    """A Kept from `number, _READ_COLUMNS..., sha256, stored_sha256, read_bytes, stored_bytes`."""
    number, *read_columns, sha256, stored, read_bytes, stored_bytes = row
    return Kept(
        number=int(number),
        read=_read(tuple(read_columns)),
        sha256=sha256,
        stored_sha256=stored,
        read_bytes=int(read_bytes),
        stored_bytes=int(stored_bytes),
    )
