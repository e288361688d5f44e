"""Workers that act, end to end: the real graph and `ChatOpenAI` against the chat stand-in, with
native tools and against a server that refuses `tools` (the prompt protocol), Tavily's client
against the search stand-in, and pages read from a site on loopback. Budgets are counted at the
stand-ins; a run broken mid-act resumes without sending an answered call again."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import uuid
from contextlib import closing
from pathlib import Path

import pytest

from deep_research.cli.main import main
from deep_research.graph import build_graph
from deep_research.tools.checkpoints import StoreMissing, open_checkpointer, serializer
from deep_research.tools.events import WorkerActed, WorkerDone, WorkerFellBack, WorkerReading
from deep_research.tools.process_wide import current

from checkpoint_probe import wait_until
from graph_stream import TOOL_WORKER, streamed_run
from stand_ins.search import slug

ROOT = Path(__file__).resolve().parents[1]

HUB = """<html><head><title>Archive survey</title></head><body>
<p>Opening words about the survey and the people who ran it, long enough to be a snippet.</p>
<p>The survey of 2024 measured 40 archives in total.</p>
<p>The ratios are on <a href="/deep">the detail page</a>.</p></body></html>"""
DEEP = """<html><head><title>Details</title></head><body>
<p>Deep down, the ratio was 11.2 to 1 for logs.</p></body></html>"""
TOOLS = TOOL_WORKER


@pytest.fixture
def site(page_server, search_server, chat_server):
    """A site whose first hit for every query is the hub page, which links to the deep page."""
    page_server.pages.update({"/hub": HUB, "/deep": DEEP})
    search_server.url_for = lambda query, n: (
        f"{page_server.url}/hub" if n == 1 else f"{page_server.url}/a/{slug(query)}/{n}"
    )
    chat_server.brain.subtasks = 1
    chat_server.brain.tools.pages_per_round = 2
    return page_server


def run(question: str, **settings):
    return asyncio.run(streamed_run(question, {**TOOLS, **settings}))


def decide_requests(chat_server) -> list[dict]:
    return [
        r["body"]
        for r in chat_server.chat_requests
        if r["body"].get("tool_choice") == "auto"
        or "You can call these tools." in json.dumps(r["body"]["messages"][:1])
    ]


def writer_prompt(chat_server) -> str:
    bodies = [r["body"] for r in chat_server.chat_requests]
    return json.dumps([b for b in bodies if "Research notes" in json.dumps(b)], ensure_ascii=False)


def test_native_tools_read_pages_two_hops_deep_and_the_quotes_reach_the_writer(chat_server, site):
    values, events = run("How well do log archives compress?")
    assert values["stop_reason"] == "max_iterations"
    decides = decide_requests(chat_server)
    assert decides and all(b.get("tools") for b in decides)  # native: the toolbox as `tools`
    first, *later = [{t["function"]["name"] for t in b["tools"]} for b in decides]
    assert first == {"web_search", "finish"}  # nothing searched for it: its own first searches
    assert later and later[0] >= {"read_page", "finish"}
    assert "/hub" in site.served and "/deep" in site.served  # the link was followed
    prompt = writer_prompt(chat_server)
    assert "measured 40 archives" in prompt and "11.2 to 1" in prompt  # quotes, not snippets
    urls = {s.url for s in values["sources"]}
    assert f"{site.url}/deep" in urls
    acted = [e for e in events if isinstance(e, WorkerActed)]
    assert acted and acted[0].protocol == "native" and acted[0].calls == {"web_search": 1}
    assert acted[1].calls["read_page"] >= 1
    reading = [e.url for e in events if isinstance(e, WorkerReading)]  # the page read now
    assert f"{site.url}/deep" in reading
    assert {url.removeprefix(site.url) for url in reading} <= set(site.served)
    found = {s.url for e in events if isinstance(e, WorkerDone) for s in e.found}
    assert f"{site.url}/deep" in found and found <= urls  # what a watcher sees it kept
    endpoint = f"{chat_server.url}/v1"
    assert current().tool_protocols.settled_method(endpoint, "stand-in-model") == "native"


def test_budgets_hold_whatever_the_model_asks_for(chat_server, search_server, site):
    chat_server.brain.tools.pages_per_round = 10
    chat_server.brain.tools.mode = "search"  # searches and reads every round
    _, events = run(
        "How well do log archives compress?", max_pages=2, max_queries=3, worker_max_rounds=3
    )
    assert len(site.served) == 2  # the worker's page reads, counted at the site
    shown = [(e.cycles_used, e.max_cycles) for e in events if e.event == "worker"]
    assert shown and all(used <= cap for used, cap in shown), shown  # never "cycles 3/1"
    acted = [(e.cycles_used, e.max_cycles) for e in events if isinstance(e, WorkerActed)]
    assert acted and acted == [(n + 1, 3) for n in range(len(acted))]  # worker_max_rounds
    assert len(search_server.queries) == 3  # the model's own: the 2 suggested, 1 of 2 more
    assert len(decide_requests(chat_server)) <= 3  # worker_max_rounds decide rounds
    skipped = chat_server.brain.tools.decisions
    assert sum(name == "read_page" for calls in skipped for name, _ in calls) > 2


def test_a_spent_search_budget_stops_the_searching_not_the_reading(
    chat_server, search_server, site
):
    """The worker's own first searches take the whole run's budget: it still reads the pages
    they found, its model quotes them, and the quotes reach the writer (it used to stop on the
    spot, and a page it did read got the nearest sentences instead of its model's quotes)."""
    values, _ = run("How well do log archives compress?", max_search_calls=2, max_iterations=2)
    assert len(search_server.queries) == 2 == values["usage"].search_calls  # the budget, spent
    assert "/hub" in site.served and "/deep" in site.served
    assert chat_server.brain.calls["PageQuotes"] >= 2  # the hub, the deep page...: by the model
    assert "11.2 to 1" in writer_prompt(chat_server)
    later = [{t["function"]["name"] for t in b["tools"]} for b in decide_requests(chat_server)][1:]
    assert later and all("web_search" not in offered for offered in later)
    assert values["stop_reason"] == "budget"  # and no new round past it


@pytest.mark.parametrize(
    "refusal",
    [(400, "tools are not supported"), (500, "Internal error"), (404, "Not Found")],
    ids=["400", "500", "404"],
)
def test_a_server_that_refuses_tools_gets_them_in_the_prompt(chat_server, site, refusal):
    chat_server.refusals["tools"] = refusal
    values, _ = run("How well do log archives compress?")
    assert values["stop_reason"] == "max_iterations"
    refused = [r for r in chat_server.chat_requests if r["body"].get("tools")]
    assert len(refused) == 1 and refused[0]["status"] == refusal[0]  # asked once, remembered
    prompted = decide_requests(chat_server)[1:]
    assert prompted and not any(b.get("tools") for b in prompted)
    assert "/hub" in site.served and "/deep" in site.served
    assert "11.2 to 1" in writer_prompt(chat_server)
    endpoint = f"{chat_server.url}/v1"
    assert current().tool_protocols.settled_method(endpoint, "stand-in-model") == "prompt"


@pytest.mark.parametrize("native", [True, False], ids=["native", "prompt"])
def test_a_model_that_makes_no_usable_call_runs_the_fixed_loop_and_says_so(
    chat_server, site, native
):
    chat_server.brain.tools.mode = "garbage"
    if not native:
        chat_server.refusals["tools"] = (500, "Internal Server Error")
    values, events = run("How well do log archives compress?")
    assert values["stop_reason"] == "max_iterations" and values["sources"]
    (fell,) = [e for e in events if isinstance(e, WorkerFellBack)]
    assert fell.why == "no usable tool call"
    assert site.served == [] and chat_server.brain.calls["WorkerFindings"] == 1


def test_a_run_broken_mid_act_resumes_without_sending_an_answered_call(
    chat_server, site, tmp_path, monkeypatch
):
    import deep_research.nodes.worker_tools as tools

    real_read = tools._read_page
    broken = {"left": 1}
    store: dict = {}
    config = {"configurable": {"thread_id": f"act-{uuid.uuid4().hex[:8]}"}}

    async def hub_saved() -> bool:
        """The hub's read (its tool-call task) is in the checkpoint."""
        async for saved in store["saver"].alist(config):
            for _, channel, value in saved.pending_writes or []:
                if channel == "__return__" and "Quotes kept" in repr(value):
                    return True
        return False

    async def read_or_break(run_, state, url):
        if "/a/" in url and broken["left"]:  # the hub is read beside it, in the same round
            async with asyncio.timeout(30):  # the hub's read ends and is saved first
                while not await hub_saved():
                    await asyncio.sleep(0.02)
            broken["left"] -= 1
            raise RuntimeError("the worker broke mid-act")
        return await real_read(run_, state, url)

    monkeypatch.setattr(tools, "_read_page", read_or_break)
    settings = {**TOOLS}

    async def scenario():
        async with open_checkpointer(str(tmp_path / "c.sqlite")) as saver:
            store["saver"] = saver
            app = build_graph(checkpointer=saver)
            with pytest.raises(RuntimeError, match="broke mid-act"):
                await streamed_run("How well do log archives compress?", settings, config, app)
            before = len(chat_server.chat_requests)
            async for _ in app.astream(None, config, context=settings):
                pass
            return before, (await app.aget_state(config)).values

    before, values = asyncio.run(scenario())
    assert values["stop_reason"] == "max_iterations"
    answered = [r for r in chat_server.chat_requests[:before] if r["status"] == 200]
    again = {json.dumps(r["body"], sort_keys=True) for r in chat_server.chat_requests[before:]}
    assert not again & {json.dumps(r["body"], sort_keys=True) for r in answered}
    assert site.served.count("/hub") == 1  # read before the break, not again
    quoted = [r for r in chat_server.chat_requests if "Page text:" in json.dumps(r["body"])]
    hub_quotes = [r for r in quoted if "Archive survey" in json.dumps(r["body"])]
    assert len(hub_quotes) == 1


def test_a_workers_rounds_pages_and_hits_are_stored_once_not_again_at_every_round(
    chat_server, site, tmp_path
):
    """`tool_rounds`, `read_pages` and `hits` are `DeltaChannel`s: each round's conversation,
    pages and hits are stored as the write of the step that added them (the hits again only
    when ranking changed them), never as a whole list at every round."""
    path = tmp_path / "c.sqlite"
    config = {"configurable": {"thread_id": "stored-once"}}

    async def scenario():
        async with open_checkpointer(str(path)) as saver:
            app = build_graph(checkpointer=saver)
            return await streamed_run("How well do log archives compress?", TOOLS, config, app)

    values, events = asyncio.run(scenario())
    assert values["stop_reason"] == "max_iterations"
    assert "11.2 to 1" in writer_prompt(chat_server)  # the second hop's quote still reaches it
    acted = [e for e in events if isinstance(e, WorkerActed)]
    assert len(acted) >= 3 and acted[-1].cycles_used == len(acted)  # rounds counted in full
    serde = serializer()
    with closing(sqlite3.connect(path)) as db:
        blobs = db.execute(
            "SELECT count(*) FROM checkpoint_blobs"
            " WHERE channel IN ('read_pages', 'tool_rounds', 'hits')"
        ).fetchone()[0]
        writes = db.execute(
            "SELECT type, value FROM writes WHERE channel = 'read_pages'"
        ).fetchall()
    pages = [page for row in writes for page in serde.loads_typed(row)]
    assert blobs == 0
    assert sorted(p.url.rsplit("/", 1)[-1] for p in pages if "/a/" not in p.url) == [
        "deep",
        "hub",
    ]  # each page in one write: the round that read it


WIKI = Path(__file__).parent / "stand_ins" / "mcp_wiki.py"


def wiki_calls(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_mcp_tools_are_offered_with_their_schemas_and_called_within_the_budget(
    chat_server, site, tmp_path
):
    log = tmp_path / "wiki.log"
    config = tmp_path / "mcp.json"
    server = {"command": sys.executable, "args": [str(WIKI), "--log", str(log)]}
    config.write_text(
        json.dumps({"mcpServers": {"wiki": {**server, "allowedTools": ["search_wiki"]}}})
    )
    chat_server.brain.tools.mcp_calls = 3  # one more than a simple subtask's budget (2)

    def a_finding_per_evidence_item(call):  # the stand-in model keeps every item, not three
        findings = [{"claim": f"Finding {i}", "source_ids": [i]} for i in call.evidence_ids()]
        return {"findings": findings, "summary": "Summary.", "gaps": [], "confidence": 0.8}

    chat_server.brain.on_WorkerFindings = a_finding_per_evidence_item
    values, _ = run("How well do log archives compress?", mcp_config=str(config))
    decides = decide_requests(chat_server)
    offered = {t["function"]["name"]: t["function"] for t in decides[0]["tools"]}
    assert offered["mcp_wiki_search_wiki"]["parameters"]["required"] == ["query"]
    assert "delete_page" not in json.dumps(decides)  # only allowed tools are offered
    # The model's own arguments, twice (the budget), and never once per web search; one
    # round's calls run at once, so the server logs them in either order.
    assert sorted(c["argument"] for c in wiki_calls(log)) == [
        "archive compression 0",
        "archive compression 1",
    ]
    assert "our archive cluster compresses logs" in writer_prompt(chat_server)
    urls = {s.url for s in values["sources"]}
    assert "mcp://wiki/search_wiki?query=archive+compression+0" in urls


def test_a_hybrid_run_offers_the_users_own_documents_as_a_tool(chat_server, site, tmp_path):
    from stand_ins.documents import LOG_ARCHIVES

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, text in LOG_ARCHIVES.items():
        (corpus / name).write_text(text, encoding="utf-8")
    settings = {"search_backend": "hybrid", "web_backend": "tavily", "corpus_dir": str(corpus)}
    _, events = run("How well do log archives compress?", **settings)
    decides = decide_requests(chat_server)
    assert "search_documents" in {t["function"]["name"] for t in decides[0]["tools"]}
    (acted, *_) = [e for e in events if isinstance(e, WorkerActed)]
    assert acted.calls["search_documents"] == 1
    results = json.dumps(decides[1]["messages"], ensure_ascii=False)  # the calls' results
    assert "Query 'xz LZMA2 decompression speed'" in results and "xz.md" in results


def test_kill_9_mid_act_then_resume_sends_no_answered_call_again(
    chat_server, search_server, page_server, tmp_path, monkeypatch
):
    """The CLI killed while one page of a round is still loading and the other's read (with its
    quoting call) is saved: the resumed run reads neither the saved page nor its quotes again."""
    page_server.pages.update({"/hub": HUB, "/deep": DEEP})
    page_server.slow_seconds = 20
    search_server.url_for = lambda query, n: (
        f"{page_server.url}/hub" if n == 1 else f"{page_server.url}/slow"
    )
    chat_server.brain.subtasks = 1
    chat_server.brain.tools.pages_per_round = 2
    db = str(tmp_path / "c.sqlite")
    thread = f"kill-act-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", db)
    monkeypatch.setenv("DEEP_RESEARCH_WORKER_TOOLS", "auto")
    monkeypatch.chdir(tmp_path)  # no `.env` or config file around the resume, run in-process
    env = dict(os.environ)
    flags = ["--min-iterations", "1", "--max-iterations", "1", "--quiet"]
    flags += ["--set", "fetch_private_addresses=true"]
    cli = [sys.executable, "-m", "deep_research.cli"]
    process = subprocess.Popen(
        [*cli, "run", "How well do log archives compress?", "--thread-id", thread, *flags],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    async def hub_saved() -> bool:
        async with open_checkpointer(db, create=False) as saver:
            config = {"configurable": {"thread_id": thread}}
            async for saved in saver.alist(config):
                for _, channel, value in saved.pending_writes or []:
                    if channel == "__return__" and "Quotes kept" in repr(value):
                        return True
        return False

    def ready() -> bool:
        try:
            return "/slow" in page_server.served and asyncio.run(hub_saved())
        except StoreMissing:
            return False

    try:
        wait_until(ready, "the hub's read saved while the slow page loads")
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
    finally:
        if process.poll() is None:
            process.kill()
    page_server.slow_seconds = 0
    answered = [r for r in chat_server.chat_requests if r["status"] == 200]
    before = len(chat_server.chat_requests)
    resume = ["resume", thread, "--json", str(tmp_path / "r.json"), "--quiet"]
    resume += ["--set", "fetch_private_addresses=true"]  # never taken from the store: given again
    assert main(resume) == 0
    again = {json.dumps(r["body"], sort_keys=True) for r in chat_server.chat_requests[before:]}
    assert not again & {json.dumps(r["body"], sort_keys=True) for r in answered}
    assert page_server.served.count("/hub") == 1 and page_server.served.count("/slow") == 2
    assert json.loads((tmp_path / "r.json").read_text())["stop_reason"] == "max_iterations"


def test_the_runs_search_budget_holds_across_workers_whose_models_search(
    chat_server, search_server, site
):
    """Three workers whose models ask for more searches would send 7 without the run's budget."""
    chat_server.brain.subtasks = 3
    chat_server.brain.tools.mode = "search"
    values, _ = run("How well do log archives compress?", max_search_calls=4, max_pages=1)
    assert len(search_server.queries) <= 4  # counted at the search stand-in
    assert values["usage"].search_calls <= 4
