"""One scenario through every door (the terminal, the MCP server, the web app) on one store: each
starts a run, watches it to its end and reads its report through the same run service; each sees
only its own door's runs. Then what an attacker tried across doors: an MCP server opened on the
web app's store reading the web users' runs, and a web follow-up on a terminal run escaping the
web operator's ceilings.

Every door is driven in this process, through its real adapter: the terminal's `main`, the MCP
SDK's client on the server's tools, an HTTP client on the web app's routes.
"""

from __future__ import annotations

import asyncio
import contextlib
import re

import httpx
import pytest

from deep_research.cli.main import main
from deep_research.graph.threads import thread_config
from deep_research.service.admission import Operator
from deep_research.service.caller import Visibility
from deep_research.service.runs import open_service
from deep_research.tools.checkpoints import open_checkpointer

mcp = pytest.importorskip("mcp", reason="the MCP extra is not installed")
from mcp import Client  # noqa: E402

from deep_research.server.app import build_server  # noqa: E402
from deep_research.web.app import serving  # noqa: E402
from deep_research.web.guard import Guard  # noqa: E402

QUESTION = "Compare zstd and xz"
ONE_ROUND = {"max_iterations": 1, "min_iterations": 1}
ALICE = "alice-token-0123456789abcdef"


@contextlib.asynccontextmanager
async def mcp_door(store: str, **operator):
    """The MCP server's tools over the run service, reached by the SDK's client in-process."""
    async with (
        open_service(
            store,
            Operator({**ONE_ROUND, **operator}, remote=True, unattended=True),
            prefix="mcp-",
            visibility=Visibility(other_doors=False),
        ) as service,
        Client(build_server(service)) as client,
    ):
        yield client


@contextlib.asynccontextmanager
async def web_door(store: str, tokens: dict[str, str] | None = None, **operator):
    """The web app's routes over the run service, reached by an HTTP client in-process."""
    other_doors = operator.pop("other_doors", False)
    guard = Guard(["127.0.0.1"], tokens=tokens or {})
    async with serving(store, {**ONE_ROUND, **operator}, guard, other_doors=other_doors) as app:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            if tokens:
                client.cookies.set("dr_token", next(iter(tokens)))
            yield client


async def web_start(client: httpx.AsyncClient, question: str = QUESTION) -> str:
    """Ask through the form as a page does; the run's id."""
    token = re.search(r'name="csrf" value="([^"]+)"', (await client.get("/")).text)[1]
    form = {"question": question, "preset": "quick", "csrf": token}
    answer = await client.post("/runs", data=form)
    assert answer.status_code == 303, answer.text[-1500:]
    return answer.headers["location"].removeprefix("/runs/")


async def web_finished(client: httpx.AsyncClient, run_id: str) -> str:
    """The run's page once the run ends (its event stream ends with it)."""
    async with client.stream("GET", f"/runs/{run_id}/events") as stream:
        async for _ in stream.aiter_text():
            pass
    return (await client.get(f"/runs/{run_id}")).text


def mcp_data(result) -> dict:
    assert not result.is_error, result.content[0].text
    return result.structured_content


def test_one_scenario_through_every_door_each_sees_only_its_own(
    chat_server, search_server, tmp_path, monkeypatch, capsys
):
    store = str(tmp_path / "store.sqlite")
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", store)
    quick = ["--max-iterations", "1", "--min-iterations", "1"]
    assert main(["run", QUESTION, *quick, "--thread-id", "cli-run", "--quiet"]) == 0
    terminal_report = capsys.readouterr().out

    async def through_mcp_and_web() -> dict:
        seen: dict = {}
        async with mcp_door(store) as client:
            started = mcp_data(await client.call_tool("start_research", {"question": QUESTION}))
            run_id = started["run_id"]
            wait = {"run_id": run_id, "timeout_seconds": 120}
            seen["mcp"] = mcp_data(await client.call_tool("wait_for_research", wait))
            listed = mcp_data(await client.call_tool("list_research", {"limit": 20}))
            seen["mcp lists"] = {row["run_id"] for row in listed["result"]}
            other = await client.call_tool("research_result", {"run_id": "cli-run"})
            seen["mcp reads the terminal's"] = other.is_error
        async with web_door(store) as client:
            web_run = await web_start(client)
            seen["web"] = await web_finished(client, web_run)
            seen["web run"] = web_run
            history = (await client.get("/runs")).text
            seen["web lists"] = set(re.findall(r'href="/runs/([\w-]+)"', history))
            seen["web reads mcp's"] = (await client.get(f"/runs/{run_id}")).status_code
        seen["mcp run"] = run_id
        return seen

    seen = asyncio.run(through_mcp_and_web())
    mcp_run, web_run = seen["mcp run"], seen["web run"]
    assert "## Sources" in terminal_report
    assert seen["mcp"]["status"] == "done" and "## Sources" in seen["mcp"]["report"]
    assert seen["mcp"]["stop_reason"] == "max_iterations"
    assert "Finished" in seen["web"] and "max_iterations" not in seen["web"].split("<main")[0]
    assert seen["mcp lists"] == {mcp_run}  # its own door's runs only
    assert seen["web lists"] == {web_run}
    assert seen["mcp reads the terminal's"] is True and seen["web reads mcp's"] == 404
    assert main(["threads"]) == 0
    listed = capsys.readouterr().out
    assert "cli-run" in listed and mcp_run not in listed and web_run not in listed
    assert main(["threads", "--all-doors"]) == 0  # the operator may look at every door's
    everything = capsys.readouterr().out
    assert all(run in everything for run in ("cli-run", mcp_run, web_run))
    assert main(["export", web_run, "--output", str(tmp_path / "w.md")]) == 2
    assert "no run with thread id" in capsys.readouterr().err
    assert main(["export", web_run, "--all-doors", "--output", str(tmp_path / "w.md")]) == 0


def test_an_mcp_server_on_the_web_apps_store_reads_no_web_users_runs(
    chat_server, search_server, tmp_path
):
    """Seen before: an MCP server opened on the web app's store (no token, the default) listed
    every web user's runs and returned their reports."""
    store = str(tmp_path / "store.sqlite")

    async def scenario() -> tuple[set, bool, str]:
        async with web_door(store, tokens={ALICE: "alice"}) as client:
            web_run = await web_start(client, "Alice's private question about zstd")
            await web_finished(client, web_run)
        async with mcp_door(store) as client:
            listed = mcp_data(await client.call_tool("list_research", {"limit": 200}))
            result = await client.call_tool("research_result", {"run_id": web_run})
            try:
                await client.read_resource(f"research://{web_run}/report")
                resource = "read"
            except Exception as error:  # the SDK raises the server's "not found"
                resource = str(error)
        return {row["run_id"] for row in listed["result"]}, result.is_error, resource

    listed, refused, resource = asyncio.run(scenario())
    assert listed == set() and refused
    assert "no run with id" in resource


def test_a_web_follow_up_on_a_terminal_run_stays_within_the_web_operators_ceilings(
    chat_server, search_server, tmp_path, monkeypatch, capsys
):
    """Seen before: `POST /runs/ID/ask` on a run started from the terminal with 40 searches and
    private-address reads ran with exactly those on a server whose ceilings are 2 searches and
    no private reads."""
    store = str(tmp_path / "store.sqlite")
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", store)
    wide = ["--max-iterations", "1", "--min-iterations", "1", "--max-searches", "40"]
    wide += ["--set", "fetch_private_addresses=true", "--thread-id", "wide", "--quiet"]
    assert main(["run", QUESTION, *wide]) == 0
    capsys.readouterr()

    async def follow_up() -> str:
        operator = {"max_search_calls": 2, "other_doors": True}  # it may see terminal runs
        async with web_door(store, **operator) as client:
            page = await client.get("/runs/wide")
            token = re.search(r'name="csrf" value="([^"]+)"', page.text)[1]
            asked = {"question": "And how fast is lz4?", "csrf": token}
            answer = await client.post("/runs/wide/ask", data=asked)
            assert answer.status_code == 303, answer.text[-1500:]
            new = answer.headers["location"].removeprefix("/runs/")
            await web_finished(client, new)
            return new

    new = asyncio.run(follow_up())

    async def settings_of(run_id: str):
        async with open_checkpointer(store) as saver:
            from deep_research.graph import build_graph

            graph = build_graph(checkpointer=saver)
            return (await graph.aget_state(thread_config(run_id))).values["settings"]

    parent, child = asyncio.run(settings_of("wide")), asyncio.run(settings_of(new))
    assert (parent.max_search_calls, parent.fetch_private_addresses) == (40, True)
    assert (child.max_search_calls, child.fetch_private_addresses) == (2, False)
