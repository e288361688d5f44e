"""`deep-research recheck ID` (issue 40): every cited source read again with the validators its
server sent, every cited claim sorted by what changed; the model only where a quote is gone.
The sorting rules are tables; the command runs against the changing world's stand-ins."""

from __future__ import annotations

import asyncio
import json

import pytest
from keeping_world import QUESTION, READ_FLAGS, RUN_FLAGS, world_on

from deep_research.cli.main import main
from deep_research.domain.recheck_rules import claim_state, parse_every, same_place, source_state
from deep_research.state import Recheck
from deep_research.tools.evidence.store import EvidenceStore

from stand_ins.changing_world import melting, opening, zeta


@pytest.mark.parametrize(
    ("status", "new_url", "new_hash", "state"),
    [
        (304, "", "", "unchanged"),
        (200, "https://a.example/p", "h1", "unchanged"),  # validators ignored, same text
        (200, "https://www.a.example/p/", "h1", "unchanged"),  # the same page, written otherwise
        (200, "http://a.example/p", "h2", "changed"),
        (200, "https://b.example/p", "h1", "moved"),
        (200, "https://a.example/", "h2", "moved"),  # a deep page now redirects to the home
        (404, "", "", "gone"),
        (410, "", "", "gone"),
        (403, "", "", "unreachable"),  # blocked now: not gone
        (429, "", "", "unreachable"),
        (503, "", "", "unreachable"),
        (None, "", "", "unreachable"),  # no answer at all
    ],
)
def test_a_source_read_again_is_sorted_by_its_answer(status, new_url, new_hash, state):
    assert source_state(status, "https://a.example/p", new_url, "h1", new_hash) == state


@pytest.mark.parametrize(
    ("source", "quote", "text", "state"),
    [
        ("unchanged", "x", "", "unchanged"),
        ("changed", "The index is 7301.", "Intro. The  index is 7301. More.", "quote_kept"),
        ("changed", "The index is 7301.", "Intro. The index is 7350. More.", "quote_gone"),
        ("changed", "", "anything", "quote_gone"),  # nothing to look for: the model decides
        ("moved", "The index is 7301.", "The index is 7301.", "quote_kept"),
        ("moved", "The index is 7301.", "Welcome to our home page.", "page_gone"),
        ("gone", "x", "", "page_gone"),
        ("unreachable", "x", "", "unreachable"),
    ],
)
def test_a_claim_is_sorted_by_its_sources_state_and_its_quote(source, quote, text, state):
    assert claim_state(source, quote, text) == state


def test_periods_are_read_as_people_write_them():
    assert parse_every("7d") == 7 * 86400
    assert parse_every("1d12h") == 36 * 3600
    assert parse_every("2w") == 14 * 86400 and parse_every("30m") == 1800
    for bad in ("", "7", "seven days", "0d", "7x", "7d x"):
        with pytest.raises(ValueError):
            parse_every(bad)
    assert same_place("http://a.example:80/p/", "https://A.example/p")


def run_and_recheck(monkeypatch, tmp_path, change) -> tuple[Recheck, dict]:
    """A run, `change(world)`, then `recheck`: the result and what it cost."""
    db = str(tmp_path / "runs.sqlite")
    with world_on(monkeypatch, topics=4) as world:
        command = ["run", QUESTION, *RUN_FLAGS, "--checkpoint-db", db, "--thread-id", "first"]
        assert main(command) == 0
        change(world)
        calls, requests = world.model_calls, len(world.pages.requests)
        out = tmp_path / "recheck.json"
        assert (
            main(["recheck", "first", *READ_FLAGS, "--checkpoint-db", db, "--json", str(out)]) == 0
        )
        cost = {
            "model_calls": world.model_calls - calls,
            "requests": world.pages.requests[requests:],
        }
    result = Recheck.model_validate_json(out.read_text())

    async def kept() -> list[str]:
        async with EvidenceStore(db) as store:
            return await store.rechecks("first")

    assert [json.loads(r) for r in asyncio.run(kept())] == [result.model_dump(mode="json")]
    return result, cost


def states(result: Recheck) -> dict[str, str]:
    return {claim.statement: claim.state for claim in result.claims}


def test_nothing_changed_costs_only_conditional_requests_and_no_model_call(
    monkeypatch: pytest.MonkeyPatch, tmp_path, capsys
):
    result, cost = run_and_recheck(monkeypatch, tmp_path, lambda world: None)
    assert cost["model_calls"] == 0
    assert len(cost["requests"]) == 4 and all(r["status"] == 304 for r in cost["requests"])
    assert all("if-none-match" in r["headers"] for r in cost["requests"])
    assert set(states(result).values()) == {"unchanged"} and len(result.claims) == 12
    assert result.requests == result.not_modified == 4 and result.model_calls == 0
    assert "12 unchanged" in capsys.readouterr().out


def test_each_change_is_sorted_right_and_no_unchanged_claim_is_flagged(
    monkeypatch: pytest.MonkeyPatch, tmp_path
):
    def change(world) -> None:
        world.pages.edit(0, "7301", "7350")  # a figure edited
        world.pages.remove(1, melting(1))  # a quote removed
        world.pages.delete(2)  # a page deleted
        world.pages.delete(3, status=503)  # a page down for now

    result, cost = run_and_recheck(monkeypatch, tmp_path, change)
    found = states(result)
    assert found[zeta(0)] == "quote_gone"
    assert found[opening(0)] == found[melting(0)] == "quote_kept"  # the same page, unedited
    assert found[melting(1)] == "quote_gone"
    assert found[opening(1)] == found[zeta(1)] == "quote_kept"
    assert {found[s] for s in (opening(2), zeta(2), melting(2))} == {"page_gone"}
    assert {found[s] for s in (opening(3), zeta(3), melting(3))} == {"unreachable"}
    gone = {c.statement: c.verdict for c in result.claims if c.state == "quote_gone"}
    assert gone == {zeta(0): "unsupported", melting(1): "unsupported"}  # the model said so
    assert cost["model_calls"] == result.model_calls == 1  # both pairs in one batch
    by_number = {s.number: s for s in result.sources}
    assert [by_number[n].state for n in (1, 2, 3, 4)] == [
        "changed",
        "changed",
        "gone",
        "unreachable",
    ]
    assert by_number[3].status == 404 and by_number[4].status == 503


def test_a_page_that_moved_elsewhere_or_cannot_be_reached_is_told_apart(
    monkeypatch: pytest.MonkeyPatch, tmp_path
):
    def change(world) -> None:
        world.pages.move(0, world.pages.page_url(2))  # now redirects to another topic's page
        world.pages.move(1, "http://127.0.0.1:9/refused")  # to a port where nothing listens

    result, _ = run_and_recheck(monkeypatch, tmp_path, change)
    found = states(result)
    assert found[zeta(0)] == "page_gone"
    assert found[zeta(1)] == "unreachable"
    by_number = {s.number: s for s in result.sources}
    assert by_number[1].state == "moved" and by_number[1].final_url.endswith("/t2")
    assert by_number[2].state == "unreachable" and "ConnectError" in by_number[2].note


def test_an_unknown_or_unfinished_run_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path, capsys):
    db = str(tmp_path / "runs.sqlite")
    assert main(["recheck", "nothing", "--checkpoint-db", db]) == 2
    assert "no checkpoint store" in capsys.readouterr().err
    with world_on(monkeypatch, topics=1):
        assert main(["run", QUESTION, *RUN_FLAGS, "--checkpoint-db", db, "--thread-id", "a"]) == 0
    assert main(["recheck", "other", "--checkpoint-db", db]) == 2
    assert "no run with id 'other'" in capsys.readouterr().err


def test_a_run_whose_citations_were_not_checked_is_rechecked_by_its_reports_statements(
    monkeypatch: pytest.MonkeyPatch, tmp_path
):
    def change(world) -> None:
        world.pages.edit(0, "7301", "7350")

    monkeypatch.setenv("DEEP_RESEARCH_VERIFY_CITATIONS", "false")
    result, cost = run_and_recheck(monkeypatch, tmp_path, change)
    found = states(result)
    assert len(found) == 12 and {c.quote for c in result.claims} == {""}
    assert {found[s] for s in (opening(0), zeta(0), melting(0))} == {"quote_gone"}  # no quote
    assert found[zeta(1)] == "unchanged"
    assert cost["model_calls"] == 1 and {c.verdict for c in result.claims if c.verdict} == {
        "supported",
        "unsupported",
    }
