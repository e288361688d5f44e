"""The run service's own rules, each on its own: who sees which run, what a list reads, how
inherited settings are brought within an operator's, and what a process runs a stored run with.
(The doors drive it end to end in tests/test_doors.py.)"""

from __future__ import annotations

import asyncio

import pytest

from deep_research.service.admission import Admission, Operator
from deep_research.service.bad_input import BadInput
from deep_research.service.caller import Caller, Visibility
from deep_research.service.index import SCHEMA, RunIndex, RunRow
from deep_research.service.options import within_server
from deep_research.settings import Settings
from deep_research.tools.store_tables import StoreTables

ALICE, WEB, MCP, CLI = Caller("web", "alice"), Caller("web"), Caller("mcp"), Caller("cli")


@pytest.mark.parametrize(
    ("caller", "door", "owner", "alone", "with_other_doors"),
    [
        (ALICE, "web", "alice", True, True),
        (ALICE, "web", "bob", False, False),  # another user's: never
        (WEB, "web", "", True, True),  # a web app without authentication: its one user
        (MCP, "web", "alice", False, True),  # other doors: only when the operator says
        (CLI, "mcp", "", False, True),
        (ALICE, "cli", "", False, True),
        (ALICE, "mcp", "", False, True),
    ],
)
def test_who_sees_which_run(caller, door, owner, alone, with_other_doors):
    assert Visibility().may_see(caller, door, owner) is alone
    assert Visibility(other_doors=True).may_see(caller, door, owner) is with_other_doors


def row(run_id: str, door: str, owner: str, created: float) -> RunRow:
    return RunRow(run_id, door, owner, "process", "", f"q {run_id}", created, created, "ended")


def test_a_list_reads_only_what_its_caller_may_see_newest_first(tmp_path):
    async def scenario() -> dict[str, list[str]]:
        tables = await StoreTables(str(tmp_path / "store.sqlite")).open()
        try:
            index = RunIndex(tables)
            await tables.run(SCHEMA)
            for n, (door, owner) in enumerate(
                [("web", "alice"), ("web", "bob"), ("mcp", ""), ("cli", ""), ("web", "alice")]
            ):
                await index.add(row(f"r{n}", door, owner, float(n)))
            seen = {}
            for name, caller, other in [
                ("alice", ALICE, False),
                ("alice, all doors", ALICE, True),
                ("mcp", MCP, False),
                ("mcp, all doors", MCP, True),
            ]:
                rows = await index.visible(caller.door, caller.user, other, 0)
                seen[name] = [r.run_id for r in rows]
            seen["limit"] = [r.run_id for r in await index.visible("web", "alice", True, 2)]
            return seen
        finally:
            await tables.close()

    seen = asyncio.run(scenario())
    assert seen["alice"] == ["r4", "r0"]
    assert seen["alice, all doors"] == ["r4", "r3", "r2", "r0"]  # never bob's
    assert seen["mcp"] == ["r2"]
    assert seen["mcp, all doors"] == ["r4", "r3", "r2", "r1", "r0"]
    assert seen["limit"] == ["r4", "r3"]


def test_inherited_settings_are_brought_within_the_operators():
    operator = Settings(
        max_search_calls=2, max_iterations=2, min_iterations=1, fetch_pages=0,
        include_domains=["nature.com"], exclude_domains=["spam.com"], time_range="month",
    )  # fmt: skip
    wide = Settings(
        max_search_calls=40, max_iterations=5, min_iterations=4, fetch_pages=3,
        include_domains=["blog.nature.com", "other.org"], exclude_domains=[], time_range=None,
    )  # fmt: skip
    narrowed = within_server(operator, wide)
    assert (narrowed.max_search_calls, narrowed.max_iterations) == (2, 2)
    assert narrowed.min_iterations == 2 and narrowed.fetch_pages == 0
    assert narrowed.include_domains == ["blog.nature.com"]  # inside the operator's list
    assert narrowed.exclude_domains == ["spam.com"] and narrowed.time_range == "month"
    assert within_server(operator, narrowed) == narrowed  # already within: unchanged
    unlimited = within_server(Settings(), Settings(max_search_calls=7))
    assert unlimited.max_search_calls == 7  # no ceiling set: the inherited value stands


def test_a_stored_run_runs_with_the_executing_processes_server_only_settings(tmp_path):
    stored = Settings(mcp_config=str(tmp_path / "evil.json"), fetch_private_addresses=True)
    server = Admission(Operator({"max_search_calls": 3}, remote=True))
    executing = server.executing(stored)
    assert executing.mcp_config is None and executing.fetch_private_addresses is False
    assert executing.max_search_calls == 3  # and within its ceilings
    worker = Admission(Operator({}, unattended=True))
    assert worker.executing(stored).mcp_config is None
    terminal = Admission(Operator({}, strict=True))  # the terminal says which, not silently
    with pytest.raises(BadInput, match=r"mcp_config .*\(--mcp-config\).*give them again"):
        terminal.executing(stored)
    same = Admission(Operator({"mcp_config": stored.mcp_config, "fetch_private_addresses": True}))
    assert same.executing(stored) == stored
