"""Watched questions in the store: each schedule, each version it made, and who holds the one
being made.

A watch is named by its first run's thread. Every `every_seconds` a version is due: claiming it
(`claim_due`, one transaction) numbers it, names its thread (`WATCH-vN`, so a version killed
midway is resumed under the same name, never started twice) and gives the claimer a lease,
renewed while it works; a lease that runs out (its holder died) lets the next claimer take the
version over and resume it from its checkpoint. A version that finishes records its spending and
its change list, and the watch moves on to it. The spending of a calendar month (UTC) is summed
from the versions started in it, a version still going counted at its own cap: what is left is
the next version's cap, and nothing is started once nothing is left.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from deep_research.tools.store_tables import Statements, StoreTables

WATCH_LOCK = 0x77617463  # "watc": claims are made one transaction at a time per database
LEASE_SECONDS = 600.0  # a version's holder renews its lease well before this runs out
TABLES = ("watches", "watch_versions")
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS watches ("
    " watch_id TEXT PRIMARY KEY, question TEXT NOT NULL, every_seconds INTEGER NOT NULL,"
    " next_due DOUBLE PRECISION NOT NULL, version INTEGER NOT NULL, latest TEXT NOT NULL,"
    " pending TEXT NOT NULL, lease_until DOUBLE PRECISION NOT NULL, limits TEXT NOT NULL,"
    " webhook TEXT NOT NULL, secret_env TEXT NOT NULL, webhook_private INTEGER NOT NULL,"
    " note TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE IF NOT EXISTS watch_versions ("
    " watch_id TEXT NOT NULL, version INTEGER NOT NULL, thread_id TEXT NOT NULL,"
    " previous TEXT NOT NULL, started DOUBLE PRECISION NOT NULL,"
    " finished DOUBLE PRECISION, tokens INTEGER, cost_usd DOUBLE PRECISION,"
    " changes TEXT NOT NULL, delivered TEXT NOT NULL, PRIMARY KEY (watch_id, version))",
)
_WATCH_COLUMNS = (
    "watch_id, question, every_seconds, next_due, version, latest, pending, lease_until,"
    " limits, webhook, secret_env, webhook_private, note, created"
)


@dataclass(frozen=True)
class Limits:
    """What a watch may spend: per version and per calendar month (None: no limit)."""

    version_max_tokens: int | None = None
    version_max_cost_usd: float | None = None
    month_max_tokens: int | None = None
    month_max_cost_usd: float | None = None

    def to_json(self) -> str:
        """As stored."""
        return json.dumps({k: v for k, v in self.__dict__.items() if v is not None})

    @classmethod
    def from_json(cls, text: str) -> Limits:
        """As read back."""
        return cls(**json.loads(text or "{}"))


@dataclass(frozen=True)
class Watch:
    """One watched question: its schedule, its latest version, the one being made."""

    watch_id: str
    question: str
    every_seconds: int
    next_due: float
    version: int
    latest: str
    pending: str = ""
    lease_until: float = 0.0
    limits: Limits = field(default_factory=Limits)
    webhook: str = ""  # where each change list is posted ("" none)
    secret_env: str = ""  # the variable holding the secret its signature is made with
    webhook_private: bool = False  # the webhook may be a loopback or private address
    note: str = ""
    created: float = 0.0


@dataclass(frozen=True)
class Claim:
    """A version to make: its watch, number, thread, the version before it, and its caps."""

    watch: Watch
    version: int
    thread_id: str
    previous: str
    max_tokens: int | None
    max_cost_usd: float | None
    taken_over: bool = False  # its last holder's lease ran out: resume it


@dataclass(frozen=True)
class Version:
    """One version of a watched question, as recorded."""

    watch_id: str
    version: int
    thread_id: str
    previous: str
    started: float
    finished: float | None
    tokens: int | None
    cost_usd: float | None
    changes: str  # the change list's JSON ("" until made)
    delivered: str  # what the webhook answered ("" when none was sent)


def version_thread(watch_id: str, version: int) -> str:
    """The thread a version researches in: the watch's id and its number."""
    return f"{watch_id}-v{version}"


def month_start(now: float) -> float:
    """The first second of `now`'s calendar month, UTC."""
    moment = datetime.fromtimestamp(now, UTC)
    return moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0).timestamp()


def _watch(row: tuple) -> Watch:
    """A Watch from the columns `_WATCH_COLUMNS` names."""
    values = dict(zip([c.strip() for c in _WATCH_COLUMNS.split(",")], row, strict=True))
    values["limits"] = Limits.from_json(values["limits"])
    values["webhook_private"] = bool(values["webhook_private"])
    return Watch(**values)


def _left(cap: float | None, spent: float) -> float | None:
    """What a monthly cap leaves (None: no cap)."""
    return None if cap is None else cap - spent


def _smaller(a: float | None, b: float | None) -> float | None:
    """The smaller of two caps, either of which may be None (no cap)."""
    return b if a is None else a if b is None else min(a, b)


class WatchStore:
    """The watch tables of one store; `open` connects, `close` ends."""

    def __init__(self, target: str) -> None:
        self.tables = StoreTables(target, TABLES, SCHEMA)

    async def __aenter__(self) -> WatchStore:
        await self.tables.open()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.tables.close()

    async def add(self, watch: Watch) -> None:
        """Start watching (or change the schedule of a watch: its versions stay)."""
        async with self.tables.transaction(lock=WATCH_LOCK) as statements:
            await statements.run("DELETE FROM watches WHERE watch_id = ?", (watch.watch_id,))
            await statements.run(
                f"INSERT INTO watches ({_WATCH_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    watch.watch_id,
                    watch.question,
                    watch.every_seconds,
                    watch.next_due,
                    watch.version,
                    watch.latest,
                    watch.pending,
                    watch.lease_until,
                    watch.limits.to_json(),
                    watch.webhook,
                    watch.secret_env,
                    int(watch.webhook_private),
                    watch.note,
                    watch.created,
                ),
            )

    async def get(self, watch_id: str) -> Watch | None:
        """One watch, or None."""
        rows = await self.tables.run(
            f"SELECT {_WATCH_COLUMNS} FROM watches WHERE watch_id = ?", (watch_id,)
        )
        return _watch(rows[0]) if rows else None

    async def all(self) -> list[Watch]:
        """Every watch, soonest due first."""
        rows = await self.tables.run(f"SELECT {_WATCH_COLUMNS} FROM watches ORDER BY next_due")
        return [_watch(row) for row in rows]

    async def versions(self, watch_id: str) -> list[Version]:
        """A watch's versions after the first run, oldest first."""
        rows = await self.tables.run(
            "SELECT watch_id, version, thread_id, previous, started, finished, tokens, cost_usd,"
            " changes, delivered FROM watch_versions WHERE watch_id = ? ORDER BY version",
            (watch_id,),
        )
        return [Version(*row) for row in rows]

    async def claimed(self, thread_id: str) -> Claim | None:
        """The claim a version's run was made under (its watch, the version before, its caps),
        read back from the store; None when its watch is no longer kept."""
        rows = await self.tables.run(
            "SELECT watch_id, version, previous, tokens, cost_usd FROM watch_versions"
            " WHERE thread_id = ?",
            (thread_id,),
        )
        if not rows:
            return None
        watch_id, version, previous, tokens, cost = rows[0]
        watch = await self.get(watch_id)
        if watch is None:
            return None
        return Claim(watch, version, thread_id, previous, tokens, cost)

    async def claim_due(
        self, now: float | None = None, lease: float = LEASE_SECONDS
    ) -> list[Claim]:
        """Claim every version due now: a watch whose time has come gets its next version, a
        version whose holder's lease ran out is taken over. One transaction: a version is
        claimed by one caller only."""
        now = time.time() if now is None else now
        claims = []
        async with self.tables.transaction(lock=WATCH_LOCK) as statements:
            rows = await statements.run(
                f"SELECT {_WATCH_COLUMNS} FROM watches WHERE (pending = '' AND next_due <= ?)"
                " OR (pending <> '' AND lease_until <= ?) ORDER BY next_due",
                (now, now),
            )
            for watch in map(_watch, rows):
                claim = await self._claim(statements, watch, now, lease)
                if claim is not None:
                    claims.append(claim)
        return claims

    async def _claim(
        self, statements: Statements, watch: Watch, now: float, lease: float
    ) -> Claim | None:
        """Claim one watch's due (or abandoned) version; None when its month's budget is spent."""
        if watch.pending:  # its holder stopped renewing: take it over, with the caps it had
            version = watch.version + 1
            await statements.run(
                "UPDATE watches SET lease_until = ? WHERE watch_id = ?",
                (now + lease, watch.watch_id),
            )
            rows = await statements.run(
                "SELECT tokens, cost_usd FROM watch_versions WHERE watch_id = ? AND version = ?",
                (watch.watch_id, version),
            )
            tokens, cost = rows[0] if rows else (None, None)
            return Claim(watch, version, watch.pending, watch.latest, tokens, cost, True)
        next_due = watch.next_due + watch.every_seconds
        next_due = next_due if next_due > now else now + watch.every_seconds
        tokens, cost = await self._caps(statements, watch, now)
        if (tokens is not None and tokens <= 0) or (cost is not None and cost <= 0):
            await statements.run(
                "UPDATE watches SET next_due = ?, note = ? WHERE watch_id = ?",
                (next_due, "skipped: this month's budget is spent", watch.watch_id),
            )
            return None
        version = watch.version + 1
        thread_id = version_thread(watch.watch_id, version)
        await statements.run(
            "UPDATE watches SET pending = ?, lease_until = ?, next_due = ?, note = ''"
            " WHERE watch_id = ?",
            (thread_id, now + lease, next_due, watch.watch_id),
        )
        await statements.run(
            "INSERT INTO watch_versions (watch_id, version, thread_id, previous, started,"
            " changes, delivered, tokens, cost_usd) VALUES (?, ?, ?, ?, ?, '', '', ?, ?)",
            (watch.watch_id, version, thread_id, watch.latest, now, tokens, cost),
        )
        return Claim(watch, version, thread_id, watch.latest, tokens, cost)

    async def _caps(
        self, statements: Statements, watch: Watch, now: float
    ) -> tuple[int | None, float | None]:
        """A new version's caps: its own, within what the month leaves. A version not yet
        finished counts at the caps it was given (its tokens and cost until it finishes)."""
        rows = await statements.run(
            "SELECT COALESCE(SUM(tokens), 0), COALESCE(SUM(cost_usd), 0) FROM watch_versions"
            " WHERE watch_id = ? AND started >= ?",
            (watch.watch_id, month_start(now)),
        )
        tokens_spent, cost_spent = rows[0]
        limits = watch.limits
        tokens = _smaller(limits.version_max_tokens, _left(limits.month_max_tokens, tokens_spent))
        cost = _smaller(limits.version_max_cost_usd, _left(limits.month_max_cost_usd, cost_spent))
        return (None if tokens is None else int(tokens)), cost

    async def renew(self, claim: Claim, lease: float = LEASE_SECONDS) -> bool:
        """Extend the lease on a version being made; False when it is no longer ours."""
        rows = await self.tables.run(
            "UPDATE watches SET lease_until = ? WHERE watch_id = ? AND pending = ?"
            " RETURNING watch_id",
            (time.time() + lease, claim.watch.watch_id, claim.thread_id),
        )
        return bool(rows)

    async def release(self, claim: Claim) -> None:
        """Give a version back at once (it failed here): the next claimer resumes it."""
        await self.tables.run(
            "UPDATE watches SET lease_until = 0 WHERE watch_id = ? AND pending = ?",
            (claim.watch.watch_id, claim.thread_id),
        )

    async def finish(self, claim: Claim, tokens: int, cost_usd: float | None, changes: str) -> None:
        """Record a finished version (what it spent, its change list); the watch moves on."""
        async with self.tables.transaction(lock=WATCH_LOCK) as statements:
            await statements.run(
                "UPDATE watch_versions SET finished = ?, tokens = ?, cost_usd = ?, changes = ?"
                " WHERE watch_id = ? AND version = ?",
                (
                    time.time(),
                    tokens,
                    cost_usd or 0.0,
                    changes,
                    claim.watch.watch_id,
                    claim.version,
                ),
            )
            await statements.run(
                "UPDATE watches SET latest = ?, version = ?, pending = '', lease_until = 0"
                " WHERE watch_id = ? AND pending = ?",
                (claim.thread_id, claim.version, claim.watch.watch_id, claim.thread_id),
            )

    async def delivered(self, claim: Claim, outcome: str) -> None:
        """Record what the webhook made of a version's change list."""
        await self.tables.run(
            "UPDATE watch_versions SET delivered = ? WHERE watch_id = ? AND version = ?",
            (outcome, claim.watch.watch_id, claim.version),
        )

    async def forget(self, thread_id: str) -> None:
        """Drop the watch a thread starts or continues, and any version researched in it."""
        async with self.tables.transaction(lock=WATCH_LOCK) as statements:
            rows = await statements.run(
                "SELECT watch_id FROM watches WHERE watch_id = ? OR latest = ? OR pending = ?",
                (thread_id, thread_id, thread_id),
            )
            for (watch_id,) in rows:
                await statements.run("DELETE FROM watches WHERE watch_id = ?", (watch_id,))
                await statements.run("DELETE FROM watch_versions WHERE watch_id = ?", (watch_id,))
            await statements.run("DELETE FROM watch_versions WHERE thread_id = ?", (thread_id,))

    async def stop(self, watch_id: str) -> bool:
        """Stop watching (the versions made stay in the store); False when none was watched."""
        rows = await self.tables.run(
            "DELETE FROM watches WHERE watch_id = ? RETURNING watch_id", (watch_id,)
        )
        return bool(rows)
