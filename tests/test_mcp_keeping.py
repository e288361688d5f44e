"""Keeping a report true through MCP (issue 40): `deep-research mcp` in its own process, driven by
the MCP SDK's client, against the changing world's pages, search and model on loopback.

A finished run's evidence (every cited source with its read time and hash; a citation's quotes
in the stored text), re-checks (nothing changed: no model call; a figure edited: its claim's
quote gone, the others unchanged), a watch (a period under an hour refused, a day taken), a
version made by `watch --run-due` and its change list read back, and stopping the watch; on
SQLite and on PostgreSQL.
"""

from __future__ import annotations

import asyncio

import pytest
from keeping_world import QUESTION, READ_FLAGS, world_on
from test_mcp_server import data, error_text, stdio

from deep_research.cli.main import main
from deep_research.tools.watches import WatchStore

mcp = pytest.importorskip("mcp", reason="the MCP extra is not installed")
from mcp import Client  # noqa: E402
from mcp_in_process import served  # noqa: E402

OPERATOR = ["--search", "tavily", "--fetch-pages", "1", "--set", "fetch_private_addresses=true"]
QUICK = {"max_iterations": 1, "min_iterations": 1}


def due_now(store: str, watch_id: str) -> None:
    """Time passes: the watch's next version is due."""

    async def run() -> None:
        async with WatchStore(store) as watches:
            await watches.tables.run(
                "UPDATE watches SET next_due = 0 WHERE watch_id = ?", (watch_id,)
            )

    asyncio.run(run())


def session(store: str, scenario, *, own_process: bool = False):
    """`scenario` with a client of `deep-research mcp` on `store`: in a server process of its
    own as a desktop client starts it, or the same command run in the test's process."""
    if not own_process:
        return served(store, scenario, *OPERATOR)

    async def over_stdio():
        async with Client(stdio(store, *OPERATOR)) as client:
            return await scenario(client)

    return asyncio.run(over_stdio())


def states(recheck: dict) -> dict[str, str]:
    return {claim["statement"]: claim["state"] for claim in recheck["claims"]}


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_evidence_rechecks_a_watch_and_its_change_list_through_the_mcp_client(
    monkeypatch: pytest.MonkeyPatch, tmp_path, request, kind, capsys
):
    from stand_ins.changing_world import zeta

    if kind == "sqlite":
        store = str(tmp_path / "runs.sqlite")
    else:
        store = request.getfixturevalue("empty_postgres")
    with world_on(monkeypatch, topics=2) as world:

        async def first(client: Client) -> dict:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            started = data(
                await client.call_tool("start_research", {"question": QUESTION, "options": QUICK})
            )
            run_id = started["run_id"]
            done = data(
                await client.call_tool(
                    "wait_for_research", {"run_id": run_id, "timeout_seconds": 120}
                )
            )
            listed = data(await client.call_tool("research_evidence", {"run_id": run_id}))
            one = data(await client.call_tool("research_evidence", {"run_id": run_id, "number": 1}))
            beyond = await client.call_tool("research_evidence", {"run_id": run_id, "number": 9})
            asked = len(world.chat.chat_requests)
            same = data(await client.call_tool("recheck_research", {"run_id": run_id}))
            calls = len(world.chat.chat_requests) - asked
            world.pages.edit(1, "7302", "7340")
            edited = data(await client.call_tool("recheck_research", {"run_id": run_id}))
            often = await client.call_tool("watch_research", {"run_id": run_id, "every": "1m"})
            watched = data(
                await client.call_tool("watch_research", {"run_id": run_id, "every": "1d"})
            )
            none_yet = await client.call_tool("research_changes", {"run_id": run_id})
            return {
                "tools": tools,
                "done": done,
                "listed": listed,
                "one": one,
                "beyond": error_text(beyond),
                "same": same,
                "calls": calls,
                "edited": edited,
                "often": error_text(often),
                "watched": watched,
                "none_yet": error_text(none_yet),
            }

        got = session(store, first, own_process=kind == "sqlite")  # one real server
        run_id = got["done"]["run_id"]
        world.pages.edit(0, "7301", "7350")
        due_now(store, run_id)
        assert main(["watch", "--run-due", *READ_FLAGS, "--checkpoint-db", store]) == 0

        async def then(client: Client) -> tuple[dict, dict, str]:
            changes = data(await client.call_tool("research_changes", {"run_id": run_id}))
            stopped = data(await client.call_tool("stop_watching_research", {"run_id": run_id}))
            again = await client.call_tool("stop_watching_research", {"run_id": run_id})
            return changes, stopped, error_text(again)

        changes, stopped, again = session(store, then)
    capsys.readouterr()
    terminal = ["--checkpoint-db", store]  # an MCP run: the terminal reaches it when told to
    assert main(["evidence", run_id, *terminal]) == 2
    assert f"no run with id {run_id!r}" in capsys.readouterr().err
    assert main(["evidence", run_id, "1", *terminal, "--all-doors"]) == 0
    assert zeta(0) in capsys.readouterr().out
    assert main(["watch", run_id, "--changes", *terminal, "--all-doors"]) == 0
    assert "**7301 → 7350**" in capsys.readouterr().out

    assert {
        "research_evidence",
        "recheck_research",
        "watch_research",
        "stop_watching_research",
        "research_changes",
    } <= got["tools"]
    assert got["done"]["status"] == "done"
    cited = got["listed"]["sources"]
    assert cited and all(s["kind"] == "page" and len(s["sha256"]) == 64 for s in cited)
    assert all(
        s["fetched"].endswith("Z") and s["url"].startswith("http://127.0.0.1") for s in cited
    )
    quotes = got["one"]["quotes"]
    assert quotes and all(q["found"] for q in quotes)
    assert got["one"]["sources"][0]["number"] == 1
    assert "not 9" in got["beyond"]
    assert got["calls"] == 0 and got["same"]["model_calls"] == 0
    assert set(states(got["same"]).values()) == {"unchanged"}
    edited = states(got["edited"])
    assert edited[zeta(1)] == "quote_gone" and edited[zeta(0)] == "unchanged"
    gone = next(c for c in got["edited"]["claims"] if c["statement"] == zeta(1))
    assert gone["verdict"] == "unsupported" and "7340" in gone["new_quote"]
    assert "once an hour" in got["often"]
    assert got["watched"]["watched"] and got["watched"]["every_seconds"] == 86400
    assert "no change list" in got["none_yet"]
    figures = {(f["old_value"], f["new_value"]) for f in changes["changed_figures"]}
    assert figures == {("7301", "7350"), ("7302", "7340")}
    assert changes["thread_id"] == f"{run_id}-v2"
    assert stopped == {**stopped, "watched": False}
    assert "is not watched" in again
