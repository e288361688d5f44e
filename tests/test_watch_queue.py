"""Watched questions on the job queue, in PostgreSQL (issue 40): `deep-research worker`s' periodic
tick queues every due version as a job; a worker killed mid-version has it finished by another,
resumed from its checkpoint, with nothing answered sent twice and no version made twice. Also:
evidence and re-checks on PostgreSQL. Workers are real subprocesses; the changing world's
stand-ins run in this process."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from keeping_world import QUESTION, READ_FLAGS, RUN_FLAGS, claims_at_once, hold_first, world_on

from deep_research.cli.main import main
from deep_research.state import ChangeList, Recheck
from deep_research.tools.evidence.store import EvidenceStore
from deep_research.tools.watches import WatchStore

from stand_ins.changing_world import zeta

ROOT = Path(__file__).resolve().parents[1]
TICK = "*/1 * * * * *"  # every second


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "deep_research.cli", *args]


def start_worker(number: int, env: dict, log: Path) -> subprocess.Popen:
    command = cli("worker", "--concurrency", "1", "--stalled-after", "3", "--watch-tick", TICK)
    worker_env = {**env, "OPENAI_API_KEY": f"sk-worker-{number}"}
    worker_env["DEEP_RESEARCH_FETCH_PRIVATE_ADDRESSES"] = "true"  # the operator reads loopback
    return subprocess.Popen(command, env=worker_env, cwd=ROOT, stderr=log.open("w"))


def stop(workers: list[subprocess.Popen]) -> None:
    for process in workers:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in workers:
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()


async def _versions(db: str) -> list:
    async with WatchStore(db) as watches:
        return await watches.versions("first")


def finished_version(db: str, seconds: float = 120.0) -> ChangeList:
    """Wait for version 2 to be finished by a worker; its change list."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done = [v for v in asyncio.run(_versions(db)) if v.finished is not None]
        if done:
            return ChangeList.model_validate_json(done[0].changes)
        time.sleep(0.3)
    raise AssertionError("no worker finished the version")


def watched(db: str) -> None:
    """A first run, watched, its next version due now."""
    assert main(["run", QUESTION, *RUN_FLAGS, "--checkpoint-db", db, "--thread-id", "first"]) == 0
    assert main(["watch", "first", "--every", "1d", "--checkpoint-db", db]) == 0

    async def due() -> None:
        async with WatchStore(db) as watches:
            await watches.tables.run("UPDATE watches SET next_due = 0")

    asyncio.run(due())


def test_evidence_and_rechecks_are_kept_in_postgresql_too(
    monkeypatch: pytest.MonkeyPatch, empty_postgres
):
    with world_on(monkeypatch, topics=2) as world:
        command = ["run", QUESTION, *RUN_FLAGS, "--checkpoint-db", empty_postgres]
        assert main([*command, "--thread-id", "first"]) == 0
        assert main([*command, "--thread-id", "second"]) == 0
        world.pages.edit(0, "7301", "7350")
        calls = world.model_calls
        assert main(["recheck", "first", *READ_FLAGS, "--checkpoint-db", empty_postgres]) == 0
        assert world.model_calls == calls + 1

    async def kept() -> tuple:
        async with EvidenceStore(empty_postgres) as store:
            rows = await store.kept("first")
            return (
                rows,
                await store.text(rows[0].stored_sha256),
                await store.sizes(),
                await store.rechecks("first"),
            )

    rows, text, sizes, rechecks = asyncio.run(kept())
    assert [row.read.kind for row in rows] == ["page", "page"] and zeta(0) in text
    assert sizes["texts"] == 2 and set(sizes["threads"]) == {"first", "second"}
    found = {c.statement: c.state for c in Recheck.model_validate_json(rechecks[-1]).claims}
    assert found[zeta(0)] == "quote_gone" and found[zeta(1)] == "unchanged"


def test_workers_make_a_due_version_on_their_own(
    monkeypatch: pytest.MonkeyPatch, empty_postgres, tmp_path
):
    with world_on(monkeypatch, topics=2) as world:
        watched(empty_postgres)
        world.pages.edit(1, "7302", "7340")
        env = {**os.environ, "DEEP_RESEARCH_CHECKPOINT_DB": empty_postgres}
        workers = [start_worker(n, env, tmp_path / f"worker-{n}.log") for n in range(2)]
        try:
            changes = finished_version(empty_postgres)
        finally:
            stop(workers)
    assert {(f.old_value, f.new_value) for f in changes.changed_figures} == {("7302", "7340")}
    assert [v.version for v in asyncio.run(_versions(empty_postgres))] == [2]
    logs = "".join((tmp_path / f"worker-{n}.log").read_text() for n in range(2))
    assert logs.count("first-v2: queued") == 1 and logs.count("first-v2: done") == 1


def body_key(request: dict) -> str:
    return json.dumps(request["body"], sort_keys=True)


def test_a_worker_killed_mid_version_has_it_finished_by_another_and_nothing_sent_twice(
    monkeypatch: pytest.MonkeyPatch, empty_postgres, tmp_path
):
    with world_on(monkeypatch, topics=3) as world:
        watched(empty_postgres)
        world.pages.edit(0, "7301", "7350")
        hold, held = hold_first(world.chat, "WorkerFindings")  # the version's gap round
        searched_before, asked_before = len(world.search.queries), len(world.chat.requests)
        env = {**os.environ, "DEEP_RESEARCH_CHECKPOINT_DB": empty_postgres}
        first = start_worker(0, env, tmp_path / "worker-0.log")
        workers = [first]
        try:
            assert held.wait(90), "no worker reached the version's gap round"
            os.kill(first.pid, signal.SIGKILL)
            first.wait(10)
            hold.set()
            workers.append(start_worker(1, env, tmp_path / "worker-1.log"))
            changes = finished_version(empty_postgres)
        finally:
            hold.set()
            stop(workers)
        version = world.chat.requests[asked_before:]
        answered = [body_key(r) for r in version if r["status"] == 200]
        searched = world.search.queries[searched_before:]
    assert len(answered) == len(set(answered))  # no answered model request was sent twice
    assert len(searched) == len(set(searched))  # nor any search
    assert {(f.old_value, f.new_value) for f in changes.changed_figures} == {("7301", "7350")}
    assert [v.version for v in asyncio.run(_versions(empty_postgres))] == [2]
    log = (tmp_path / "worker-1.log").read_text()
    assert "queued again" in log and "first-v2: resumed" in log


def test_run_due_without_workers_and_one_claim_per_version_on_postgresql(
    monkeypatch: pytest.MonkeyPatch, empty_postgres
):
    claims = claims_at_once(empty_postgres)
    assert [(c.watch.watch_id, c.version) for c in claims] == [("w", 2)]
    with world_on(monkeypatch, topics=2) as world:
        watched(empty_postgres)
        world.pages.edit(0, "7301", "7344")
        assert main(["watch", "--run-due", *READ_FLAGS, "--checkpoint-db", empty_postgres]) == 0
    changes = finished_version(empty_postgres, seconds=1)
    assert {(f.old_value, f.new_value) for f in changes.changed_figures} == {("7301", "7344")}
