"""Where runs are checkpointed: an SQLite file in the user's data folder, or PostgreSQL.

Checkpoints are read back only as our own contract types (an explicit msgpack allowlist), so a
tampered database cannot make the loader build arbitrary objects.
"""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import platformdirs
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from deep_research import state
from deep_research.settings import ModelPrice, Settings
from deep_research.tools.pg_setup import checkpointer_ready, saver_cursor, set_up_once
from deep_research.tools.secrets import mask_url_passwords

CHECKPOINT_DB_VARIABLE = "DEEP_RESEARCH_CHECKPOINT_DB"
POOL_SIZE = 2  # a pooled checkpointer's connections (the saver uses one at a time)
STATE_TYPES = (
    Settings,
    ModelPrice,
    state.SubTask,
    state.TaskPlan,
    state.PlanDecision,
    state.Budget,
    state.SearchHit,
    state.Source,
    state.SourceEvidence,
    state.Finding,
    state.WorkerResult,
    state.QualityDimensions,
    state.QualityAssessment,
    state.ScoredReport,
    state.GapAnalysis,
    state.Usage,
    state.CitationCheck,
    state.PairVerdict,
    state.PairVerdicts,
    state.StatementRewrite,
    state.StatementRewrites,
    state.RoleUsage,
    state.Quote,
    state.PageQuote,
    state.PageQuotes,
    state.ReadPage,
    state.ToolCall,
    state.ToolRound,
    state.ToolOutcome,
    state.OutlineSection,
    state.ReportOutline,
    state.ReportSection,
    state.WorkerFindings,
    state.GapCheck,
    state.ClarifyingQuestion,
    state.Clarification,
    state.ClarifyReply,
    state.Clarified,
    state.Disagreement,
    state.SetAside,
    state.EvidenceWeighing,
    state.Conflict,
    state.SetAsideQuote,
    state.WeighedEvidence,
    state.PageLink,
    state.SourceRecheck,
    state.ClaimRecheck,
    state.Recheck,
    state.ClaimMatch,
    state.ClaimMatches,
    state.CitedClaim,
    state.FigureChange,
    state.DroppedClaim,
    state.ChangeList,
)
"""Every contract of `state.py` (a test keeps the list whole): a type left out comes back from
a saved checkpoint as a plain dict."""


SQLITE_BUSY_SECONDS = 30.0


def serializer() -> JsonPlusSerializer:
    """The checkpoint serializer, limited to LangGraph's safe types and our contracts."""
    return JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES)


def data_dir() -> Path:
    """The user's data folder for deep-research (checkpoints, document indexes)."""
    return platformdirs.user_data_path("deep-research", appauthor=False)


def default_checkpoint_db() -> str:
    """`DEEP_RESEARCH_CHECKPOINT_DB`, else an SQLite file in the user's data folder."""
    return os.environ.get(CHECKPOINT_DB_VARIABLE) or str(data_dir() / "checkpoints.sqlite")


_POSTGRES_URL = re.compile(r"^postgres(?:ql)?(?:\+[a-z0-9_]+)?://", re.IGNORECASE)
_ANY_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)


def is_postgres(target: str) -> bool:
    """True for a PostgreSQL connection URL, in any case, with a driver (`postgresql+psycopg`)."""
    return bool(_POSTGRES_URL.match(target.strip()))


def store_target(target: str) -> str:
    """The store as we open it: a PostgreSQL URL in the form psycopg reads, else a file path.

    `postgresql+psycopg://` (what SQLAlchemy-minded tools print) and `POSTGRESQL://` mean the
    same database; any other `scheme://` is refused (masked) rather than made a folder name.
    """
    if is_postgres(target):
        return _POSTGRES_URL.sub("postgresql://", target.strip(), count=1)
    if _ANY_URL.match(target.strip()):
        raise StoreUnreadable(
            f"{mask_url_passwords(target)} is not a checkpoint store we can open: "
            "give an SQLite file path or a postgresql:// URL"
        )
    return target


@asynccontextmanager
async def _postgres_saver(target: str, pooled: bool) -> AsyncIterator[BaseCheckpointSaver]:
    """LangGraph's PostgreSQL checkpointer on one connection, or (`pooled`) on a small pool
    that checks a connection before lending it. One connection dies with a PostgreSQL restart
    or failover, or a backend killed by an operator, and every later run of a long-lived
    process (`deep-research worker`) then failed at once with "the connection is closed"; the
    pool hands out a fresh one instead (while PostgreSQL is down, a run fails as before)."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    if not pooled:
        async with AsyncPostgresSaver.from_conn_string(target, serde=serializer()) as saver:
            yield saver
        return
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    pool = AsyncConnectionPool(
        target,
        min_size=1,
        max_size=POOL_SIZE,
        open=False,
        check=AsyncConnectionPool.check_connection,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
    )
    await pool.open(wait=True)
    try:
        yield AsyncPostgresSaver(pool, serde=serializer())  # type: ignore[arg-type]
    finally:
        await pool.close()


async def _has_checkpoint_table(saver: BaseCheckpointSaver) -> bool:
    """True when the PostgreSQL database already holds the checkpoint tables."""
    async with saver_cursor(saver) as cursor:
        await cursor.execute("SELECT to_regclass('checkpoints') IS NOT NULL AS present")
        row = await cursor.fetchone()
    return bool(row and row["present"])


class StoreMissing(FileNotFoundError):
    """A command that only reads was pointed at a checkpoint store that does not exist."""


class StoreUnreadable(StoreMissing):
    """The store named cannot be opened as one (not an SQLite database, an unknown URL):
    reported in one line wherever a missing store is."""


async def set_up_sqlite(saver: BaseCheckpointSaver, patience: float = SQLITE_BUSY_SECONDS) -> None:
    """The saver's tables, made if missing. Two processes opening a new store at once (two
    desktop apps starting `deep-research mcp`) may both switch it to WAL: SQLite then refuses
    one at once with "database is locked", without waiting its busy timeout (it would be a
    deadlock). That one tries again shortly, for up to `patience` seconds; the setup is
    idempotent (IF NOT EXISTS)."""
    deadline = time.monotonic() + patience
    while True:
        try:
            await saver.setup()
            return
        except sqlite3.OperationalError as error:
            code = getattr(error, "sqlite_errorcode", sqlite3.SQLITE_BUSY) & 0xFF  # its family
            if code != sqlite3.SQLITE_BUSY or time.monotonic() >= deadline:
                raise
            await asyncio.sleep(0.05)


@asynccontextmanager
async def open_checkpointer(
    target: str, *, create: bool = True, pooled: bool = False
) -> AsyncIterator[BaseCheckpointSaver]:
    """An async checkpointer for an SQLite path or a PostgreSQL URL, tables created if needed.

    With `create=False` nothing is made: an SQLite file (and its folder) or a PostgreSQL
    database without our tables raises `StoreMissing`, so that a mistyped name is reported.
    `pooled` is for processes that live long (a worker, a server): see `_postgres_saver`.
    """
    target = store_target(target)
    if is_postgres(target):
        async with _postgres_saver(target, pooled) as saver:
            if create:  # workers started at once on an empty store: one migrates
                await set_up_once(target, lambda: checkpointer_ready(saver), saver.setup)
            elif not await _has_checkpoint_table(saver):
                raise StoreMissing(
                    f"no checkpoint store in {mask_url_passwords(target)}: "
                    "no run has been saved there"
                )
            yield saver
        return
    import aiosqlite

    from deep_research.tools.settling_sqlite import SettlingSqliteSaver

    path = Path(target).expanduser()
    if not create and not path.is_file():
        raise StoreMissing(f"no checkpoint store at {path}: no run has been saved there")
    path.parent.mkdir(parents=True, exist_ok=True)
    # Several doors share one SQLite store now (the CLI, `web`, `mcp`): a writer waits up to
    # SQLITE_BUSY_SECONDS for another's transaction (sqlite3's default of 5 s gave "database is
    # locked" to a resume right after a failed one under load).
    async with aiosqlite.connect(str(path), timeout=SQLITE_BUSY_SECONDS) as connection:
        saver = SettlingSqliteSaver(connection, serde=serializer())
        try:
            await set_up_sqlite(saver)
        except sqlite3.DatabaseError as error:
            raise StoreUnreadable(f"{path} is not a readable checkpoint store ({error})") from None
        try:
            if create:
                yield saver
                return
            try:  # a command that only reads: a page corrupted further in is the same one line
                yield saver
            except sqlite3.DatabaseError as error:
                raise StoreUnreadable(
                    f"{path} is not a readable checkpoint store ({error})"
                ) from None
        finally:  # no write is cut off by the close (it would leave the file locked)
            await saver.settle(SQLITE_BUSY_SECONDS)
