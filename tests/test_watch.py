"""`deep-research watch` without the queue (issue 40): a watched question's next version is a
follow-up of the last one, started from its re-checked evidence, with a claim-level change list
against it; `watch --run-due` makes what is due, a version is claimed once, a killed one is
resumed and nothing answered is sent twice, budgets hold per version and per month, the change
list goes to a signed webhook. The real CLI against the changing world's stand-ins."""

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
from deep_research.state import ChangeList
from deep_research.tools.watches import Limits, Watch, WatchStore, month_start, version_thread
from deep_research.tools.webhook import SIGNATURE_HEADER, signed_by

from stand_ins.changing_world import melting, zeta
from stand_ins.webhook import WebhookReceiver

ROOT = Path(__file__).resolve().parents[1]


def first_run(db: str) -> None:
    assert main(["run", QUESTION, *RUN_FLAGS, "--checkpoint-db", db, "--thread-id", "first"]) == 0


async def _sql(db: str, statement: str, params: tuple = ()) -> list:
    async with WatchStore(db) as watches:
        return await watches.tables.run(statement, params)


def due_now(db: str, watch_id: str = "first") -> None:
    """Time passes: the watch's next version is due (and a lapsed holder's lease is over)."""
    asyncio.run(
        _sql(db, "UPDATE watches SET next_due = 0, lease_until = 0 WHERE watch_id = ?", (watch_id,))
    )


def changes_of(db: str, version: int = 2) -> ChangeList:
    async def read() -> str:
        async with WatchStore(db) as watches:
            return next(v for v in await watches.versions("first") if v.version == version).changes

    return ChangeList.model_validate_json(asyncio.run(read()))


def figures(changes: ChangeList) -> set[tuple[str, str, str, str]]:
    return {
        (f.old_value, f.new_value, f.old.sources[0][1], f.new.sources[0][1])
        for f in changes.changed_figures
    }


def test_a_second_version_names_exactly_the_figures_that_changed_with_both_values_cited(
    monkeypatch: pytest.MonkeyPatch, tmp_path, capsys
):
    db = str(tmp_path / "runs.sqlite")
    with world_on(monkeypatch, topics=3) as world:
        first_run(db)
        assert main(["watch", "first", "--every", "7d", "--checkpoint-db", db]) == 0
        assert (
            main(["watch", "--run-due", *READ_FLAGS, "--checkpoint-db", db]) == 0
        )  # nothing due yet
        world.pages.edit(0, "7301", "7350")
        world.pages.edit(2, "1220 kelvin", "1225 kelvin")
        due_now(db)
        asked = len(world.chat.requests)
        assert main(["watch", "--run-due", *READ_FLAGS, "--checkpoint-db", db]) == 0
        pages = [world.pages.page_url(k) for k in range(3)]
        gaps = [r for r in world.chat.requests[asked:] if "GapAnalysis" in json.dumps(r["body"])]
    assert gaps and all("scheduled update" in json.dumps(r["body"]) for r in gaps)
    changes = changes_of(db)
    assert figures(changes) == {
        ("7301", "7350", pages[0], pages[0]),
        ("1220", "1225", pages[2], pages[2]),
    }
    assert not changes.new_findings and not changes.no_longer_supported and not changes.sources_gone
    capsys.readouterr()
    assert main(["watch", "first", "--changes", "--checkpoint-db", db]) == 0
    shown = capsys.readouterr().out
    assert "**7301 → 7350**" in shown and zeta(0).replace("7301", "7350") in shown
    assert main(["watch", "--list", "--checkpoint-db", db]) == 0
    assert "version 2 (first-v2)" in capsys.readouterr().out


def test_a_version_with_nothing_changed_has_an_empty_change_list_and_asks_no_model_for_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path
):
    db = str(tmp_path / "runs.sqlite")
    with world_on(monkeypatch, topics=2) as world:
        first_run(db)
        assert main(["watch", "first", "--every", "1d", "--checkpoint-db", db]) == 0
        due_now(db)
        assert main(["watch", "--run-due", *READ_FLAGS, "--checkpoint-db", db]) == 0
        compared = list(world.brain.compared)
    changes = changes_of(db)
    assert changes.empty and changes.model_calls == 0 and compared == []


def test_a_source_gone_is_said_with_the_claims_it_no_longer_supports(
    monkeypatch: pytest.MonkeyPatch, tmp_path
):
    db = str(tmp_path / "runs.sqlite")
    with world_on(monkeypatch, topics=3) as world:
        first_run(db)
        assert main(["watch", "first", "--every", "1d", "--checkpoint-db", db]) == 0
        world.pages.delete(1, status=410)
        world.pages.remove(2, melting(2))
        due_now(db)
        assert main(["watch", "--run-due", *READ_FLAGS, "--checkpoint-db", db]) == 0
    changes = changes_of(db)
    assert [s.number for s in changes.sources_gone] == [2] and changes.sources_gone[0].status == 410
    why = {d.claim.claim: d.why for d in changes.no_longer_supported}
    assert why[zeta(1)] == why[melting(1)] == "source [2] is gone (HTTP 410)"
    assert why[melting(2)].startswith("source [3] no longer says it")
    assert not changes.changed_figures


def test_a_version_is_claimed_once_whoever_asks_at_the_same_moment(tmp_path):
    claims = claims_at_once(str(tmp_path / "runs.sqlite"))
    assert [(c.version, c.thread_id) for c in claims] == [(2, version_thread("w", 2))]


def test_a_months_budget_caps_each_version_and_stops_them_when_spent(tmp_path):
    db = str(tmp_path / "runs.sqlite")
    now = time.time()
    limits = Limits(version_max_tokens=5000, month_max_tokens=12000)

    async def claims() -> list:
        async with WatchStore(db) as store:
            await store.add(Watch("w", "q?", 60, 0.0, 1, "w", limits=limits))
            made = []
            for _ in range(4):
                found = await store.claim_due(now=now)
                for claim in found:
                    await store.finish(claim, tokens=4500, cost_usd=None, changes="{}")
                made.append([(c.version, c.max_tokens) for c in found])
                await store.tables.run("UPDATE watches SET next_due = 0")
            note = (await store.get("w")).note
            return made, note

    made, note = asyncio.run(claims())
    assert made == [[(2, 5000)], [(3, 5000)], [(4, 3000)], []]  # 4500 + 4500 spent: 3000 left
    assert note == "skipped: this month's budget is spent"
    assert month_start(now) <= now


def test_a_change_list_is_posted_signed_to_the_webhook_and_a_private_one_is_refused_unasked(
    monkeypatch: pytest.MonkeyPatch, tmp_path, capsys
):
    db = str(tmp_path / "runs.sqlite")
    receiver = WebhookReceiver().start()
    try:
        with world_on(monkeypatch, topics=2) as world:
            first_run(db)
            hook = ["--webhook", receiver.url, "--checkpoint-db", db]
            assert main(["watch", "first", "--every", "1d", *hook]) == 2  # no secret set
            assert "DEEP_RESEARCH_WEBHOOK_SECRET" in capsys.readouterr().err
            monkeypatch.setenv("DEEP_RESEARCH_WEBHOOK_SECRET", "s3cret-for-the-receiver")
            assert main(["watch", "first", "--every", "1d", *hook]) == 0
            world.pages.edit(0, "7301", "7350")
            due_now(db)
            assert main(["watch", "--run-due", *READ_FLAGS, "--checkpoint-db", db]) == 0
            assert receiver.received == []  # loopback: refused where the socket opens
            assert main(["watch", "first", "--every", "1d", *hook, "--webhook-allow-private"]) == 0
            world.pages.edit(1, "7302", "7309")
            due_now(db)
            assert main(["watch", "--run-due", *READ_FLAGS, "--checkpoint-db", db]) == 0
    finally:
        receiver.stop()
    refused = asyncio.run(_sql(db, "SELECT delivered FROM watch_versions WHERE version = 2"))
    assert refused[0][0].startswith("not delivered: FetchRefused") and "loopback" in refused[0][0]
    [(headers, body)] = receiver.received
    assert signed_by(
        "s3cret-for-the-receiver", body, headers[SIGNATURE_HEADER.lower()], time.time()
    )
    assert not signed_by("another-secret", body, headers[SIGNATURE_HEADER.lower()], time.time())
    posted = ChangeList.model_validate_json(body)
    assert posted.version == 3 and {(f.old_value, f.new_value) for f in posted.changed_figures} == {
        ("7302", "7309")
    }
    assert b"s3cret" not in body


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "deep_research.cli", *args]


def body_key(request: dict) -> str:
    return json.dumps(request["body"], sort_keys=True)


def test_a_run_due_killed_mid_version_is_resumed_and_nothing_answered_is_sent_twice(
    monkeypatch: pytest.MonkeyPatch, tmp_path, capsys
):
    """The kill is a process's; the command run again after it runs in this process (the same
    `main`, without another process's start-up)."""
    db = str(tmp_path / "runs.sqlite")
    with world_on(monkeypatch, topics=3) as world:
        first_run(db)
        assert main(["watch", "first", "--every", "1d", "--checkpoint-db", db]) == 0
        world.pages.edit(0, "7301", "7350")
        due_now(db)
        hold, held = hold_first(world.chat, "WorkerFindings")  # the version's gap round
        searched_before, asked_before = len(world.search.queries), len(world.chat.requests)
        due = ["watch", "--run-due", *READ_FLAGS, "--checkpoint-db", db, "--lease", "600"]
        killed = subprocess.Popen(cli(*due), env={**os.environ}, cwd=ROOT, stderr=subprocess.PIPE)
        try:
            assert held.wait(60), "the version never reached its gap round"
            os.kill(killed.pid, signal.SIGKILL)
            killed.wait(10)
        finally:
            hold.set()
        capsys.readouterr()
        assert main(due) == 0 and "0 versions made" in capsys.readouterr().err  # its lease holds
        due_now(db)  # the killed holder's lease runs out
        assert main(due) == 0
        again = capsys.readouterr().err
        assert "first-v2: resumed" in again and "1 versions made" in again
        version = world.chat.requests[asked_before:]  # (the first run asked the same of some)
        answered = [body_key(r) for r in version if r["status"] == 200]
        searched = world.search.queries[searched_before:]
    assert len(answered) == len(set(answered))  # no answered model request was sent twice
    assert len(searched) == len(set(searched))  # nor any search
    assert {(f.old_value, f.new_value) for f in changes_of(db).changed_figures} == {
        ("7301", "7350")
    }
    versions = asyncio.run(_sql(db, "SELECT version FROM watch_versions"))
    assert versions == [(2,)]  # made once, never twice


def test_a_changed_pages_new_evidence_is_where_its_old_quotes_stood():
    from deep_research.nodes.follow_up import Stale, new_evidence, refreshed
    from deep_research.state import Finding, Quote, SourceEvidence, WorkerResult

    filler = [
        f"Part {chr(65 + n)} of the survey says nothing new about the samples." * 6
        for n in range(20)
    ]
    text = "\n\n".join(
        [*filler[:10], "The melting point of Quillon alloy is 1205 kelvin.", *filler[10:]]
    )
    stale = Stale(text, ("The melting point of Quillon alloy is 1200 kelvin.",))
    old_excerpt = "\n\n".join(filler)  # the old evidence mostly filler: the quote must still win
    assert "1205 kelvin" in new_evidence(stale, old_excerpt)
    page = SourceEvidence(id=1, url="https://a.example/p", excerpt="old", read=True)
    other = SourceEvidence(id=2, url="https://b.example/q", excerpt="kept")
    gone = SourceEvidence(id=3, url="https://c.example/r", excerpt="gone")
    result = WorkerResult(
        subtask_id=1,
        sources=[page, other, gone],
        findings=[Finding(claim="a", source_ids=[1]), Finding(claim="b", source_ids=[2, 3])],
        quotes=[Quote(source_id=1, text="old quote"), Quote(source_id=2, text="kept quote")],
    )
    [fresh] = refreshed(
        [result], {"https://a.example/p": stale, "https://c.example/r": Stale(None)}
    )
    assert [s.id for s in fresh.sources] == [1, 2] and not fresh.sources[0].read
    assert "1205 kelvin" in fresh.sources[0].excerpt and fresh.sources[1].excerpt == "kept"
    assert [(f.claim, f.source_ids) for f in fresh.findings] == [("b", [2])]
    assert [q.source_id for q in fresh.quotes] == [2]
