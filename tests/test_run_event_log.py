"""The runs' event log beside the checkpoints: numbers that only grow per run, records read
back in order from a number on (or the latest few), and a run forgotten whole; SQLite always,
PostgreSQL where `DEEP_RESEARCH_TEST_POSTGRES_URL` names a server (.ci/run starts one)."""

from __future__ import annotations

import asyncio
import os
import uuid

import pytest

from deep_research.service.event_log import EventLog
from deep_research.tools.store_tables import StoreTables

POSTGRES_URL = os.environ.get("DEEP_RESEARCH_TEST_POSTGRES_URL")


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param(
            "postgres",
            marks=pytest.mark.skipif(
                not POSTGRES_URL, reason="needs DEEP_RESEARCH_TEST_POSTGRES_URL (.ci/run)"
            ),
        ),
    ]
)
def store(request, tmp_path) -> str:
    return str(tmp_path / "store.sqlite") if request.param == "sqlite" else str(POSTGRES_URL)


def test_records_are_numbered_per_thread_and_read_back_from_a_number(store):
    one, two = f"web-{uuid.uuid4().hex}", f"web-{uuid.uuid4().hex}"

    async def scenario() -> None:
        tables = await StoreTables(store).open()
        log = await EventLog(tables).set_up()
        try:
            assert await log.append(one, "started", {"question": "q 问题 <b>"}) == 1
            assert await log.append(two, "started", {"question": "other"}) == 1
            assert await log.append(one, "event", {"event": "plan"}) == 2
            assert await log.append(one, "stopped", {}) == 3
            assert [r.seq for r in await log.since(one)] == [1, 2, 3]
            after = await log.since(one, after=2)
            assert [(r.seq, r.kind, r.data) for r in after] == [(3, "stopped", {})]
            started = await log.first(one, "started")
            assert started is not None and started.data == {"question": "q 问题 <b>"}
            assert [r.seq for r in await log.tail(one, 1)] == [2]  # the latest progress
            control = await log.last_control(one)
            assert control is not None and control.kind == "stopped"
            await log.forget(one)
            assert await log.since(one) == [] and await log.first(one, "started") is None
            assert len(await log.since(two)) == 1
        finally:
            await tables.close()

    asyncio.run(scenario())


def test_a_log_opened_again_goes_on_numbering(store):
    thread = f"web-{uuid.uuid4().hex}"

    async def append_once() -> int:
        tables = await StoreTables(store).open()
        try:
            return await (await EventLog(tables).set_up()).append(thread, "event", {})
        finally:
            await tables.close()

    assert [asyncio.run(append_once()) for _ in range(3)] == [1, 2, 3]


def test_appends_of_one_run_at_once_get_one_number_each(store):
    """A run's progress and a "stopped" written at the same moment (the Stop button while the
    run reports) are numbered one after the other, on PostgreSQL's pool too."""
    thread = f"web-{uuid.uuid4().hex}"

    async def scenario() -> list[int]:
        tables = await StoreTables(store).open()
        try:
            log = await EventLog(tables).set_up()
            return await asyncio.gather(*(log.append(thread, "event", {}) for _ in range(20)))
        finally:
            await tables.close()

    assert sorted(asyncio.run(scenario())) == list(range(1, 21))
