"""A caller of the served graph gets only what the operator allows, on every run, through every
door (issue 27): input settings, `context`, `configurable`, `threads.update_state`, a second run
on the same thread, a resume. Driven through the real LangGraph server with the SDK."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from types import SimpleNamespace

import pytest
from served_graph import SECRET_WORD, dev_server

from deep_research.tools.checkpoints import data_dir

pytest_plugins = ("served_graph_fixtures",)  # the `served` fixture: one `langgraph dev` shared
ONE_ROUND = {"max_iterations": 1, "min_iterations": 1, "model_retries": 0, "language": "en"}


def results_on_loopback(search_server, page_server) -> None:
    """Every search hit names a page on loopback, which only the operator may let runs read."""
    loopback_page = f"{page_server.url}/internal-admin"
    serve = search_server.handle

    def answer(path, body, headers):
        reply = serve(path, body, headers)
        for hit in (reply.body or {}).get("results", []):
            hit["url"], hit["content"] = loopback_page, "thin"
        return reply

    search_server.handle = answer


@pytest.fixture
def hostile(tmp_path, page_server):
    """What an attacker would ask the server to do, and the traces each would leave."""
    started = tmp_path / "command-started"
    config = tmp_path / "evil.json"
    script = f"open({str(started)!r}, 'w').write('ran')"
    entry = {"command": sys.executable, "args": ["-c", script], "allowedTools": ["search"]}
    config.write_text(json.dumps({"mcpServers": {"evil": entry}}))
    private = tmp_path / "private"
    private.mkdir()
    notes = f"# Ops notes on zstd and xz\n\nCompare zstd and xz: the vault code is {SECRET_WORD}.\n"
    (private / "ops-notes.md").write_text(notes)
    asks = {
        "mcp_config": {"mcp_config": str(config)},
        "fetch_private_addresses": {"fetch_private_addresses": True, "fetch_pages": 2},
        "corpus_dir": {"corpus_dir": str(private), "search_backend": "local"},
    }
    return SimpleNamespace(asks=asks, started=started, page_server=page_server, private=private)


def leaked(hostile, values: object) -> list[str]:
    """The traces of an attack that got through: a command started, a private page read, a
    folder of the server's read."""
    text = json.dumps(values, default=str)
    traces = []
    if hostile.started.exists():
        traces.append("command started")
    if hostile.page_server.served:
        traces.append(f"private address read: {hostile.page_server.served}")
    if SECRET_WORD in text:
        traces.append("private folder read")
    return traces


async def through_every_door(client, ask: dict) -> dict[str, list]:
    """`ask` (server-only settings) sent through each door; what every run left in state."""
    from langgraph_sdk.errors import APIStatusError

    seen: dict[str, list] = {}

    async def run(door: str, thread: str, **how) -> None:
        try:
            answer = await client.runs.wait(thread, "deep_research", raise_error=False, **how)
            error = answer.get("__error__") if isinstance(answer, dict) else None
            if error:  # the run ended with an error: refused, or failed (the test tells which)
                seen.setdefault(door, []).append(f"error {error.get('error')}")
        except APIStatusError as error:
            seen.setdefault(door, []).append(f"HTTP {error.status_code} {error}")
        state = await client.threads.get_state(thread)
        seen.setdefault(door, []).append(state["values"])

    async def update(door: str, thread: str, values: dict, **how) -> None:
        try:
            await client.threads.update_state(thread, values, **how)
        except APIStatusError as error:  # refused with a clear reason is a kept guard too
            seen.setdefault(door, []).append(f"HTTP {error.status_code} {error}")

    async def thread() -> str:
        return (await client.threads.create())["thread_id"]

    question = {"question": "Compare zstd and xz"}
    hostile = {**ONE_ROUND, **ask}
    approving = {**ONE_ROUND, "approve_plan": True}
    as_planner = "update_state as decompose, input None"

    async def second_run() -> None:
        again = await thread()
        await run("first run", again, input={**question, "settings": ONE_ROUND})
        await run("second run, input", again, input={**question, "settings": hostile})
        await run("second run, context", again, input=question, context=hostile)

    async def update_then_resume() -> None:
        paused = await thread()
        await run("approve", paused, input={**question, "settings": approving})
        await update("update_state, resume", paused, {"settings": hostile})
        await run("update_state, resume", paused, command={"resume": {"action": "approve"}})

    async def command_with_update() -> None:
        commanded = await thread()
        await run("approve, then", commanded, input={**question, "settings": approving})
        resume_and_update = {"resume": {"action": "approve"}, "update": {"settings": hostile}}
        await run("Command(update=...) with the resume", commanded, command=resume_and_update)

    async def update_as_planner() -> None:
        replanned = await thread()
        await run("planned", replanned, input={**question, "settings": ONE_ROUND})
        await update(as_planner, replanned, {"settings": hostile}, as_node="decompose")
        await run(as_planner, replanned, input=None)

    # Each door on a thread of its own, all at once (the server runs them side by side).
    await asyncio.gather(
        run("input", await thread(), input={**question, "settings": hostile}),
        run("context", await thread(), input=question, context=hostile),
        run("configurable", await thread(), input=question, config={"configurable": hostile}),
        second_run(),
        update_then_resume(),
        command_with_update(),
        update_as_planner(),
    )
    return seen


def test_no_door_lets_a_caller_start_a_command_read_a_private_address_or_a_folder(
    hostile, served, monkeypatch
):
    """The shared server has a note with the secret word beside its app (`SERVERS_OWN_NOTES`)."""
    from langgraph_sdk import get_client

    results_on_loopback(served.search, hostile.page_server)

    async def scenario(url: str) -> dict[str, dict[str, list]]:
        client = get_client(url=url)
        asks = hostile.asks.items()
        seen = await asyncio.gather(*(through_every_door(client, ask) for _, ask in asks))
        return dict(zip(hostile.asks, seen, strict=True))

    seen = asyncio.run(scenario(served.url))
    problems = {
        (name, door): leaked(hostile, values)
        for name, doors in seen.items()
        for door, values in doors.items()
        if leaked(hostile, values)
    }
    assert problems == {}
    monkeypatch.setenv("XDG_DATA_HOME", str(served.data_home))  # the server's data folder
    assert not (data_dir() / "indexes").exists()  # no folder of the server's was indexed
    for name in ("mcp_config", "fetch_private_addresses"):  # the runs did run, guards kept
        for door in ("input", "context", "configurable", "second run, input"):
            assert seen[name][door][-1].get("report"), (name, door, seen[name][door])
    setting_up = {"first run", "approve", "approve, then", "planned"}  # before the attempt
    for name, doors in seen.items():  # every attempt ended: a report, or refused with a reason
        for door, values in doors.items():
            refused = [v for v in values if isinstance(v, str)]
            assert all(v.startswith(("HTTP 4", "error CallerRefused")) for v in refused), values
            ended = refused or [v for v in values if v.get("report")]
            assert ended or door in setting_up, (name, door, values)


@pytest.fixture(params=["true", "false"])
def serializer(request, tmp_path):
    """The served graph with LANGGRAPH_STRICT_MSGPACK at `true` (LangGraph's announced default: a
    server of its own) or `false` (today's default: the shared server): its URL, its stand-in
    model, and what its log says meanwhile."""
    if request.param == "false":
        served = request.getfixturevalue("served")
        before = len(served.log)
        yield SimpleNamespace(url=served.url, chat=served.chat, log=lambda: served.log[before:])
        return
    chat = request.getfixturevalue("chat_server")
    request.getfixturevalue("search_server")
    with dev_server(tmp_path, LANGGRAPH_STRICT_MSGPACK="true") as url:
        log = tmp_path / "server.log"
        yield SimpleNamespace(url=url, chat=chat, log=lambda: log.read_text(errors="replace"))


def test_state_survives_the_servers_serializer_through_approval_cancel_and_resume(serializer):
    """With LANGGRAPH_STRICT_MSGPACK=true (LangGraph's announced default) the served graph's
    state types round-trip: a plan approved, a run cancelled midway and resumed, a settings
    dict written by `update_state`."""
    from langgraph_sdk import get_client

    question = "Compare zstd and xz"
    cancelled_at = {"planning": "TaskPlan", "the workers": "WorkerFindings"}  # a call held
    asked = {where: f"{question}, cancelled in {where}" for where in cancelled_at}
    held = {where: threading.Event() for where in cancelled_at}
    released = {where: threading.Event() for where in cancelled_at}

    def hold_until_cancelled(number, body):
        text = json.dumps(body)
        for where, contract in cancelled_at.items():
            if asked[where] in text and contract in text and not held[where].is_set():
                held[where].set()
                released[where].wait(60)  # its run is cancelled meanwhile
        return None

    serializer.chat.fault = hold_until_cancelled

    async def scenario() -> dict:
        client = get_client(url=serializer.url)

        async def approval() -> dict:
            paused = (await client.threads.create())["thread_id"]
            approving = {**ONE_ROUND, "approve_plan": True}
            await client.runs.wait(
                paused, "deep_research", input={"question": question, "settings": approving}
            )
            return await client.runs.wait(
                paused, "deep_research", command={"resume": {"action": "approve"}}
            )

        async def cancelled_then_resumed(where: str) -> tuple[dict, dict, dict]:
            thread = (await client.threads.create())["thread_id"]
            run = await client.runs.create(
                thread, "deep_research", input={"question": asked[where], "settings": ONE_ROUND}
            )
            assert await asyncio.to_thread(held[where].wait, 60), f"no run reached {where}"
            await client.runs.cancel(thread, run["run_id"], wait=True)
            released[where].set()
            after_cancel = await client.threads.get_state(thread)
            settings = {**ONE_ROUND, "max_workers": 2}
            await client.threads.update_state(thread, {"settings": settings})
            resumed = await client.runs.wait(thread, "deep_research", input=None)
            return after_cancel, resumed, await client.threads.get_state(thread)

        # cancelled in planning or among the workers; all three threads at once
        approved, *cancelled = await asyncio.gather(
            approval(), *(cancelled_then_resumed(where) for where in cancelled_at)
        )
        return {"approved": approved, "cancels": dict(zip(cancelled_at, cancelled, strict=True))}

    try:
        seen = asyncio.run(scenario())
    finally:
        for event in released.values():
            event.set()
    assert "## Sources" in seen["approved"]["report"]
    for where, (after_cancel, resumed, final) in seen["cancels"].items():
        assert after_cancel["values"]["question"] == asked[where]
        assert after_cancel["next"] and not after_cancel["values"].get("report")  # midway
        assert "## Sources" in resumed["report"], resumed
        assert final["values"]["usage"]["llm_calls"] > 0
    assert "Run encountered an error" not in serializer.log()


def test_usage_read_back_as_plain_dicts_still_adds_up():
    """A server's serializer may hand `usage` back as a dict (seen after a cancel): the reducer
    read it as `Usage` instead of failing with dict + dict."""
    from deep_research.state import Usage, add_usage

    one = Usage.of_call("planner", 10, 5)
    total = add_usage(one.model_dump(), one.model_dump())
    assert total == one + one and total.by_role["planner"].llm_calls == 2
    assert add_usage(None, one.model_dump()) == one


def test_the_operator_may_still_allow_each_one_and_the_traces_then_show(
    hostile, chat_server, search_server, tmp_path
):
    """The same traces, when the server's own environment allows what callers may not: the
    operator's choice holds, and the test above would have seen a leak."""
    from langgraph_sdk import get_client

    results_on_loopback(search_server, hostile.page_server)

    async def scenario(url: str) -> list:
        client = get_client(url=url)

        async def answer(asked: dict) -> dict:
            thread = (await client.threads.create())["thread_id"]
            question = {"question": "Compare zstd and xz", "settings": asked}
            await client.runs.wait(thread, "deep_research", input=question)
            return (await client.threads.get_state(thread))["values"]

        web = {**ONE_ROUND, "fetch_pages": 2, "search_backend": "tavily"}
        return await asyncio.gather(answer(web), answer(ONE_ROUND))

    operator = {
        "DEEP_RESEARCH_FETCH_PRIVATE_ADDRESSES": "true",
        "DEEP_RESEARCH_MCP_CONFIG": hostile.asks["mcp_config"]["mcp_config"],
        "DEEP_RESEARCH_CORPUS_DIR": str(hostile.private),
    }
    with dev_server(tmp_path, **operator) as url:
        web, local = asyncio.run(scenario(url))
    assert leaked(hostile, web) == [
        "command started",
        f"private address read: {hostile.page_server.served}",
    ]
    assert "private folder read" in leaked(hostile, local)  # the operator's folder, by default
    assert "ops-notes.md" in local["sources"][0]["url"]


def test_a_refused_update_then_a_goto_leaves_the_thread_answering_and_mendable(served):
    """A `Command(update=...)` the guard refuses stays among its step's pending writes; a
    `Command(goto=...)` and a valid update after it made two settings in one step, and every
    read of the thread answered 400 ("Can receive only one value per step") for good. Now the
    later update wins: the thread says why it refused, then takes a valid update and finishes."""
    from langgraph_sdk import get_client
    from langgraph_sdk.errors import APIStatusError

    async def scenario() -> list[str]:
        client = get_client(url=served.url)
        thread = (await client.threads.create())["thread_id"]
        seen: list[str] = []

        async def run(**how) -> None:
            try:
                answer = await client.runs.wait(thread, "deep_research", raise_error=False, **how)
                error = (answer or {}).get("__error__") or {}
                seen.append(error.get("error") or (answer or {}).get("stop_reason") or "ran")
            except APIStatusError as error:
                seen.append(f"HTTP {error.status_code}")

        approving = {**ONE_ROUND, "approve_plan": True}
        await run(input={"question": "Compare zstd and xz", "settings": approving})
        await run(command={"update": {"settings": {"search_backend": "local"}}})  # no folder
        await run(command={"goto": "decompose"})
        await run(command={"update": {"settings": ONE_ROUND}})
        state = await client.threads.get_state(thread)  # answered, not 400
        seen.append(",".join(state["next"]))
        await run(command={"resume": {"action": "approve"}})
        return seen

    seen = asyncio.run(scenario())
    assert seen == [
        "ran",
        "CallerRefused",
        "CallerRefused",
        "ran",
        "approve_plan",
        "max_iterations",
    ]
