"""Workers that act, node by node: the toolbox and its parser, verbatim quotes, `decide` asking
the in-process fake chat model for tool calls (prompt protocol), `act` reading pages from a
loopback page server within the budget, the fallback to the fixed loop, and the result's quotes."""

from __future__ import annotations

import asyncio
import json

import pytest

from deep_research.domain.verbatim import best_sentences, verbatim
from deep_research.nodes import worker_tools
from deep_research.nodes.worker_steps import act, decide, observe, report_findings
from deep_research.settings import Settings
from deep_research.state import (
    Budget,
    PageLink,
    PageQuote,
    ReadPage,
    SearchHit,
    SubTask,
    ToolCall,
    ToolRound,
    Usage,
)
from deep_research.tools.toolbox import parse_tool_calls, toolbox

from fake_chat import Replies

SETTINGS = Settings(
    structured_output="prompt",
    worker_tools="prompt",
    language="en",
    model="fake",
    fetch_private_addresses=True,  # the page server is on loopback
)
HUB = """<html><head><title>Hub</title></head><body><nav><a href="/menu">Menu</a></nav>
<p>The survey of 2024 measured 40 archives in total.</p>
<p>Details are on <a href="/deep#part">the deep page</a> and <a href="mailto:x@y">mail</a>.</p>
</body></html>"""
DEEP = "<html><body><p>Deep down, the ratio was 11.2 to 1 for logs.</p></body></html>"


def tagged(*calls: tuple[str, dict]) -> str:
    """A prompt-protocol reply making `calls`."""
    return "\n".join(
        "<tool_call>" + json.dumps({"name": n, "arguments": a}) + "</tool_call>" for n, a in calls
    )


@pytest.fixture
def replies() -> Replies:
    return Replies()


@pytest.fixture
def site(page_server):
    page_server.pages.update({"/hub": HUB, "/deep": DEEP})
    return page_server


def worker(site_url: str = "https://a.example", **extra) -> dict:
    """A worker's state after its first search cycle, with one hit on the site."""
    return {
        "question": "How well do archives compress?",
        "subtask": SubTask(
            id=1,
            description="Compression ratio of archives",
            search_queries=["archive ratio"],
            complexity="simple",
        ),
        "budget": Budget(max_queries=3, max_cycles=1, max_pages=2, max_rounds=2),
        "round": 1,
        "settings": SETTINGS,
        "run_id": f"tools-{id(extra)}",
        "sent_queries": ["archive ratio"],
        "cycles_used": 1,
        "hits": [SearchHit(url=f"{site_url}/hub", title="Hub", content="A survey.", score=0.9)],
        **extra,
    }


# ---------------------------------------------------------------- toolbox and quotes


def test_the_parser_reads_every_valid_call_and_ignores_the_rest():
    box = toolbox(search=True, pages=True, documents=False)
    valid = tagged(("web_search", {"queries": ["a", "b"]}), ("read_page", {"url": "https://x/1"}))
    calls = parse_tool_calls(f"<think>plan</think>Sure.\n{valid}", box)
    assert [(c.name, c.args) for c in calls] == [
        ("web_search", {"queries": ["a", "b"]}),
        ("read_page", {"url": "https://x/1"}),
    ]
    bare = parse_tool_calls('{"name": "finish", "arguments": {"reason": "done"}}', box)
    assert [c.name for c in bare] == ["finish"]
    wrong = tagged(("delete_files", {}), ("web_search", {"queries": []}), ("read_page", {}))
    assert parse_tool_calls(wrong + "<tool_call>{oops", box) == []
    assert parse_tool_calls("I would search the web.", box) == []


def test_a_call_nested_too_deep_is_ignored_not_a_crash():
    box = toolbox(search=True, pages=False, documents=False)
    deep = "[" * 3000 + "]" * 3000
    reply = tagged(("web_search", {"queries": ["fine"]}))
    reply += '<tool_call>{"name": "web_search", "arguments": {"queries": ' + deep + "}}</tool_call>"
    reply += '<tool_call>{"name": "web_search", "arguments": "' + deep + '"}</tool_call>'
    assert [call.args for call in parse_tool_calls(reply, box)] == [{"queries": ["fine"]}]


def test_a_tool_not_offered_is_not_a_usable_call():
    box = toolbox(search=False, pages=False, documents=False)
    assert box.names == ["finish"]
    assert parse_tool_calls(tagged(("web_search", {"queries": ["a"]})), box) == []


def test_a_quote_is_kept_as_the_page_words_it_and_a_made_up_one_is_not():
    page = "The survey of 2024\n  measured “40 archives” in total."
    assert verbatim('the survey of 2024 measured "40 archives"', page) == (
        "The survey of 2024 measured “40 archives"  # the page's words and marks
    )
    assert verbatim("The survey of 2025 measured 40 archives", page) is None
    assert verbatim("2024", page) is None  # too short to say anything on its own
    assert best_sentences([page, "Nothing here."], "archives survey", 2) == [
        "The survey of 2024 measured “40 archives” in total."
    ]


# ---------------------------------------------------------------- decide


def test_decide_asks_for_tool_calls_and_keeps_them_for_act(replies):
    replies.append(tagged(("read_page", {"url": "https://a.example/hub"})))
    update = asyncio.run(decide(worker(), runs=replies.runs))
    assert update["tool_protocol"] == "prompt" and "termination_reason" not in update
    assert [c.name for c in update["pending_round"].calls] == ["read_page"]
    system = replies.sent[0][0].content
    assert "You can call these tools." in system and "read_page" in system
    assert "https://a.example/hub" in replies.sent[0][1].content


def test_nothing_is_spent_before_the_model_chooses_its_first_searches(replies):
    uncapped = Budget(max_queries=3, max_cycles=1, max_rounds=2)  # pages: drawn from the run
    fresh = worker(sent_queries=[], cycles_used=0, hits=[], budget=uncapped)
    assert asyncio.run(observe(fresh, runs=replies.runs)) == {}  # no search sent for it
    replies.append(tagged(("web_search", {"queries": ["archive ratio 2024"]})))
    update = asyncio.run(decide(fresh, runs=replies.runs))
    assert [c.name for c in update["pending_round"].calls] == ["web_search"]
    system, user = (m.content for m in replies.sent[0])
    assert "- web_search:" in system and "- read_page:" not in system  # nothing to read yet
    assert 'Suggested first searches (use, change or replace them): ["archive ratio"]' in user
    assert "Budget left: 3 searches, 60 page reads, 2 rounds" in user  # the run's 60: one worker


def test_a_model_that_makes_no_call_before_any_search_starts_the_fixed_loop_with_the_plan(
    replies,
):
    replies.append("I would rather not use tools.")
    fresh = worker(sent_queries=[], cycles_used=0, hits=[])
    update = asyncio.run(decide(fresh, runs=replies.runs))
    assert update["tool_protocol"] == "fixed"
    assert update["pending_queries"] == ["archive ratio"]  # the planner's, in the next observe
    assert update["usage"].llm_calls == 1  # no gap check over no evidence


def test_a_model_without_a_usable_call_falls_back_to_the_fixed_loop(replies):
    replies.append("I think the answer is probably on the internet. <tool_call>{oops")
    replies.append({"gaps": ["ratios"], "next_queries": ["archive ratio 2024"]})  # the gap check
    state = worker(budget=Budget(max_queries=3, max_cycles=2))
    update = asyncio.run(decide(state, runs=replies.runs))
    assert update["tool_protocol"] == "fixed" and update["fallback_reason"] == "no usable tool call"
    assert update["pending_queries"] == ["archive ratio 2024"]
    assert update["usage"].llm_calls == 2


def test_finish_alone_ends_the_worker(replies):
    replies.append(tagged(("finish", {"reason": "enough"})))
    update = asyncio.run(decide(worker(), runs=replies.runs))
    assert update["termination_reason"] == "finished"


def test_no_call_is_asked_for_once_the_rounds_are_spent(replies):
    rounds = [ToolRound(calls=[ToolCall(id="1", name="finish")], results=["x"])] * 2
    update = asyncio.run(decide(worker(tool_rounds=rounds), runs=replies.runs))
    assert update == {"termination_reason": "budget_spent"} and replies.sent == []


# ---------------------------------------------------------------- act


def read_round(*urls: str) -> ToolRound:
    calls = [ToolCall(id=f"c{n}", name="read_page", args={"url": u}) for n, u in enumerate(urls)]
    return ToolRound(calls=calls)


def test_act_reads_a_page_whole_keeps_verbatim_quotes_and_its_links(replies, site):
    made_up = {"text": "The survey measured 41 archives.", "claim": "made up"}
    real = {"text": "The survey of 2024 measured 40 archives in total.", "claim": "40 archives"}
    replies.append({"quotes": [made_up, real]})
    state = worker(site.url, tool_protocol="prompt", pending_round=read_round(f"{site.url}/hub"))
    update = asyncio.run(act(state, runs=replies.runs))
    (page,) = update["read_pages"]
    assert page.quotes == [PageQuote(text=real["text"], claim="40 archives")]
    assert [link.url for link in page.links] == [f"{site.url}/deep"]  # no nav, no mailto
    assert page.links[0].text == "the deep page" and page.links[0].in_text
    assert "Quotes kept" in update["tool_rounds"][0].results[0]
    assert update["pending_round"] is None and update["usage"].llm_calls == 1
    assert site.served == ["/hub"]


def saved_outcomes(monkeypatch) -> list:
    """Each tool call's outcome as `act` saves it, in the order they end (run, not saved)."""
    saved = []

    async def saving(key, run):
        saved.append(await run())
        return saved[-1]

    monkeypatch.setattr(worker_tools, "durable_tool", saving)
    return saved


def test_act_keeps_no_link_the_evidence_already_lists_and_tells_the_model_all_it_found(
    replies, site, monkeypatch
):
    """The hub's one link is listed under a page read before: the hub is kept without it, in
    the worker's pages and in the call's saved outcome alike."""
    saved = saved_outcomes(monkeypatch)
    replies.append({"quotes": [{"text": "The survey of 2024 measured 40 archives in total."}]})
    earlier = ReadPage(url=f"{site.url}/before", links=[PageLink(url=f"{site.url}/deep")])
    state = worker(site.url, read_pages=[earlier], pending_round=read_round(f"{site.url}/hub"))
    update = asyncio.run(act(state, runs=replies.runs))
    assert (
        update["read_pages"][0].links == []
        and worker_tools._saved_outcome(saved[0]).page.links == []
    )
    assert "links found: 1" in update["tool_rounds"][0].results[0]


def test_act_reads_its_calls_saved_outcomes_into_models_once_all_have_ended(
    replies, site, monkeypatch
):
    """While the slowest call waits, the step's tasks hold the others' saved outcomes: no model
    of each besides (a page read was held twice, as JSON and as a model, for that wait)."""
    events = []

    async def saving(key, run):
        outcome = await run()
        events.append("ended")
        return outcome

    def validated(saved):
        events.append("read")
        return read(saved)

    read = worker_tools._saved_outcome
    monkeypatch.setattr(worker_tools, "durable_tool", saving)
    monkeypatch.setattr(worker_tools, "_saved_outcome", validated)
    replies.append({"quotes": [{"text": "The survey of 2024 measured 40 archives in total."}]})
    replies.append({"quotes": [{"text": "Deep down, the ratio was 11.2 to 1 for logs."}]})
    hits = [
        SearchHit(url=f"{site.url}/{p}", title=p, content="x", score=0.5) for p in ("hub", "deep")
    ]
    state = worker(site.url, hits=hits, pending_round=read_round(*(h.url for h in hits)))
    update = asyncio.run(act(state, runs=replies.runs))
    assert [page.url for page in update["read_pages"]] == [h.url for h in hits]
    assert events == ["ended", "ended", "read", "read"]


def test_a_tool_calls_outcome_is_saved_as_json_text_and_one_saved_parsed_is_still_read(
    replies, site, monkeypatch
):
    """One string per saved outcome (the collector never walks it), where the parsed JSON was a
    dict, a list and more per quote and link; a checkpoint written before holds the parsed form,
    which a resumed `act` reads the same."""
    saved = saved_outcomes(monkeypatch)
    replies.append({"quotes": [{"text": "The survey of 2024 measured 40 archives in total."}]})
    state = worker(site.url, pending_round=read_round(f"{site.url}/hub"))
    update = asyncio.run(act(state, runs=replies.runs))
    (text,) = saved
    assert isinstance(text, str) and json.loads(text)["page"]["url"] == f"{site.url}/hub"

    async def saved_before(key, run):
        return json.loads(text)

    monkeypatch.setattr(worker_tools, "durable_tool", saved_before)
    again = asyncio.run(act(state, runs=replies.runs))
    assert again["read_pages"] == update["read_pages"] and again["hits"] == update["hits"]
    assert again["tool_rounds"] == update["tool_rounds"] and site.served == ["/hub"]


def test_a_link_found_in_a_page_read_can_be_followed(replies, site):
    hub = ReadPage(url=f"{site.url}/hub", title="Hub", links=[f"{site.url}/deep"])
    replies.append({"quotes": [{"text": "the ratio was 11.2 to 1 for logs", "claim": "ratio"}]})
    state = worker(site.url, read_pages=[hub], pending_round=read_round(f"{site.url}/deep"))
    update = asyncio.run(act(state, runs=replies.runs))
    assert update["read_pages"][-1].quotes[0].text == "the ratio was 11.2 to 1 for logs"
    assert site.served == ["/deep"]


def test_act_reads_no_page_past_the_budget_nor_one_never_listed(replies, site):
    replies.append({"quotes": []})  # nothing quoted: the nearest sentences are kept instead
    hub, deep = f"{site.url}/hub", f"{site.url}/deep"
    listed = [SearchHit(url=hub, title="Hub"), SearchHit(url=deep, title="Deep")]
    state = worker(
        site.url,
        hits=listed,
        budget=Budget(max_queries=3, max_cycles=1, max_pages=1),
        pending_round=read_round(f"{site.url}/elsewhere", hub, deep),
    )
    update = asyncio.run(act(state, runs=replies.runs))
    results = update["tool_rounds"][0].results
    assert results[0].startswith("not run: not a URL listed") and "Quotes kept" in results[1]
    assert results[2] == "not run: no page reads left in the budget"
    assert site.served == ["/hub"] and len(update["read_pages"]) == 1
    assert update["read_pages"][0].quotes  # the fallback's sentences, verbatim


def test_a_page_that_cannot_be_read_is_said_so_and_costs_no_model_call(replies, site):
    missing = f"{site.url}/missing"
    state = worker(site.url, hits=[SearchHit(url=missing)], pending_round=read_round(missing))
    update = asyncio.run(act(state, runs=replies.runs))
    assert update["tool_rounds"][0].results[0].startswith("not read: ")
    assert replies.sent == [] and update["read_pages"][0].error


# ---------------------------------------------------------------- the result


def test_the_result_carries_the_quotes_and_the_pages_read_as_sources(replies):
    page = ReadPage(
        url="https://a.example/hub",
        title="Hub",
        quotes=[PageQuote(text="The survey of 2024 measured 40 archives.", claim="40")],
    )
    replies.append(
        {"findings": [{"claim": "40 archives", "source_ids": [1]}], "summary": "S.", "gaps": []}
    )
    state = worker(read_pages=[page], tool_protocol="prompt", termination_reason="finished")
    result = asyncio.run(report_findings(state, runs=replies.runs))["worker_results"][0]
    assert result.tools == "prompt" and result.pages_read == 1
    (source,) = result.sources
    assert source.read and source.excerpt == "The survey of 2024 measured 40 archives."
    assert [(q.source_id, q.claim) for q in result.quotes] == [(1, "40")]
    assert "The survey of 2024 measured 40 archives." in replies.sent[0][1].content


def test_the_conversation_keeps_the_newest_rounds_that_fit_and_every_call_its_result():
    from langchain_core.messages import ToolMessage

    from deep_research.nodes.worker_tools import latest_rounds

    def round_(n: int, size: int) -> ToolRound:
        calls = [ToolCall(id=f"r{n}c{i}", name="read_page", args={"url": f"u{i}"}) for i in (1, 2)]
        return ToolRound(calls=calls, results=[f"round {n} " + "x" * size] * 2)

    rounds = [round_(1, 100), round_(2, 100), round_(3, 100), round_(4, 40_000)]
    native = latest_rounds(rounds, "native", room=2_000)
    assert [m.tool_call_id for m in native if isinstance(m, ToolMessage)] == ["r4c1", "r4c2"]
    assert sum(len(m.text) for m in native) < 2_000 * 4  # the newest, clipped to the room
    roomy = latest_rounds(rounds[:3], "prompt", room=10_000)
    assert [m.type for m in roomy] == ["ai", "human"] * 3  # the calls as text, then the results
    assert "<tool_call>" in roomy[0].text and "round 1" in roomy[1].text


def test_a_native_reply_keeps_only_calls_to_offered_tools_with_valid_arguments():
    from langchain_core.messages import AIMessage

    from deep_research.tools.tool_calling import _native_calls

    box = toolbox(search=True, pages=False, documents=False)
    good = {"name": "web_search", "args": {"queries": ["zstd"]}, "id": "a"}
    reply = AIMessage(
        "",
        tool_calls=[good, {"name": "read_page", "args": {"url": "x"}, "id": "b"}],
        invalid_tool_calls=[{"name": "finish", "args": "{oops", "id": "c", "error": None}],
    )
    assert [(c.id, c.name) for c in _native_calls(reply, box)] == [("a", "web_search")]
    garbage = AIMessage("", tool_calls=[{"name": "web_search", "args": {"q": 1}, "id": "d"}])
    assert _native_calls(garbage, box) == []
    written = AIMessage(tagged(("finish", {"reason": "done"})))  # a small model's text call
    assert [c.name for c in _native_calls(written, box)] == ["finish"]


def test_a_page_read_once_the_run_budget_is_spent_is_quoted_without_a_model_call(replies, site):
    settings = SETTINGS.model_copy(update={"max_total_tokens": 1})
    state = worker(
        site.url,
        settings=settings,
        spent=Usage(input_tokens=5),
        pending_round=read_round(f"{site.url}/hub"),
    )
    update = asyncio.run(act(state, runs=replies.runs))
    (page,) = update["read_pages"]
    assert replies.sent == [] and page.quotes  # the sentences nearest the subtask, verbatim
    assert "40 archives" in page.quotes[0].text


def test_the_progress_says_what_a_worker_did_and_when_it_fell_back():
    from deep_research.service.event_lines import describe
    from deep_research.tools.events import ToolProtocolSettled, WorkerActed, WorkerFellBack

    where = dict(
        round=1,
        subtask_id=2,
        description="Ratios",
        queries_used=3,
        max_queries=5,
        cycles_used=1,
        max_cycles=2,
    )
    acted = describe(WorkerActed(**where, protocol="native", calls={"read_page": 2}, skipped=1))
    assert "acted (native tools): read_page ×2, 1 skipped" in acted
    fell = describe(WorkerFellBack(**where, protocol="prompt", why="no usable tool call"))
    assert "no usable tool call" in fell and "fixed search loop" in fell
    settled = describe(ToolProtocolSettled(model="m", protocol="prompt", why="HTTP 500"))
    assert settled == "worker tools for m: prompt (native tools refused: HTTP 500)"


def test_a_worker_that_finished_in_act_reports_each_page_once(replies):
    twice = [
        SearchHit(url="https://a.example/x", title="X", content="short", score=0.2),
        SearchHit(url="https://a.example/x/", title="X", content="longer text", score=0.7),
    ]
    replies.append({"findings": [{"claim": "x", "source_ids": [1]}], "summary": "S.", "gaps": []})
    state = worker(hits=twice, termination_reason="finished")
    result = asyncio.run(report_findings(state, runs=replies.runs))["worker_results"][0]
    assert [s.excerpt for s in result.sources] == ["longer text"]
    assert replies.sent[0][1].content.count("https://a.example/x") == 1


# ---------------------------------------------------------------- the door, for pages and tools

DIRTY = """<html><head><title>Dirty\x1b[31m title\x07</title></head><body>
<p>The survey\x1b[2J of 2024 measured 40 archives\x07 in total.</p>
<p><a href="/deep">deep</a> <a href="https://blocked.example/x">off the allowed domains</a></p>
</body></html>"""


def test_a_page_read_keeps_no_control_character_and_no_link_the_run_may_not_follow(
    replies, page_server
):
    page_server.pages["/dirty"] = DIRTY
    replies.append({"quotes": []})  # the nearest sentences, from the page's own text
    settings = SETTINGS.model_copy(update={"exclude_domains": ["blocked.example"]})
    url = f"{page_server.url}/dirty"
    state = worker(
        page_server.url,
        settings=settings,
        hits=[SearchHit(url=url, title="Dirty")],
        pending_round=read_round(url),
    )
    update = asyncio.run(act(state, runs=replies.runs))
    (page,) = update["read_pages"]
    assert page.quotes and page.title == "Dirty[31m title"
    words = [w for link in page.links for w in (link.url, link.text, link.context)]
    kept = " ".join([page.title, *(q.text for q in page.quotes), *words])
    assert "measured 40 archives in total" in kept
    assert not any((ord(c) < 32 and c not in "\n\t\r") or c == "\x7f" for c in kept)
    assert [link.url for link in page.links] == [f"{page_server.url}/deep"]  # excluded: gone


class Answers:
    """Stand-in MCP tools: one allowed tool whose answer is `hit`."""

    def __init__(self, hit: SearchHit) -> None:
        self.hit = hit

    async def call(self, server: str, tool: str, args: dict) -> SearchHit:
        return self.hit


def test_an_mcp_answer_passes_the_door_and_the_source_filter(replies, monkeypatch):
    from deep_research.nodes.worker_tools import _mcp_call, _saved_outcome
    from deep_research.tools.run_resources import RunResources

    settings = SETTINGS.model_copy(update={"exclude_domains": ["blocked.example"]})
    run = replies.runs.detached(settings)
    dirty = SearchHit(url="mcp://docs/find?q=x", title="docs\x1b[0m", content="40\x07 archives")
    monkeypatch.setattr(RunResources, "mcp_tools", Answers(dirty))
    outcome = _saved_outcome(asyncio.run(_mcp_call(run, "docs", "find", {"q": "x"})))
    (hit,) = outcome.hits
    assert hit.title == "docs[0m" and hit.content == "40 archives"
    assert "\x07" not in outcome.text and "\x1b" not in outcome.text
    blocked_hit = SearchHit(url="https://blocked.example/a", content="40 archives")
    monkeypatch.setattr(RunResources, "mcp_tools", Answers(blocked_hit))
    blocked = _saved_outcome(asyncio.run(_mcp_call(run, "docs", "find", {"q": "y"})))
    assert blocked.hits == [] and "blocked.example" in blocked.text


def test_a_source_filter_leaves_the_workers_mcp_tools_and_documents_in_place(tmp_path):
    """Before: the filter wrapped the MCP tools, so with any include/exclude/time range a
    worker that acts had no MCP tool, no search_documents, and its web_search asked every MCP
    tool of every server per query, outside its MCP budget."""
    from deep_research.tools.local_search import HybridSearch
    from deep_research.tools.run_resources import LiveRuns
    from deep_research.tools.search.filtered import FilteredSearch

    config = tmp_path / "mcp.json"
    server = {"command": "true", "allowedTools": ["search_wiki"]}
    config.write_text(json.dumps({"mcpServers": {"wiki": server}}))
    for exclude in ([], ["blocked.example"]):
        settings = SETTINGS.model_copy(
            update={
                "search_backend": "hybrid",
                "web_backend": "duckduckgo",
                "corpus_dir": str(tmp_path),
                "mcp_config": str(config),
                "exclude_domains": exclude,
            }
        )
        run = LiveRuns().detached(settings)
        assert run.mcp_tools is not None and run.documents_cache is not None
        web = run.web_cache.backend
        inner = web.inner if isinstance(web, FilteredSearch) else web
        assert isinstance(inner, HybridSearch)  # the web and the folder, without the tools
        assert isinstance(web, FilteredSearch) == bool(exclude)  # and still filtered


def test_thin_hits_pages_and_read_page_calls_share_one_reader_and_one_page_budget():
    """Before: the search's WholePages had a page reader of its own, so a run could fetch
    twice max_page_fetches pages, and the same page twice."""
    from deep_research.tools.run_resources import LiveRuns
    from deep_research.tools.search.pages import WholePages

    settings = SETTINGS.model_copy(update={"search_backend": "duckduckgo", "fetch_pages": 2})
    run = LiveRuns().detached(settings)
    backend = run.search_cache.backend
    assert isinstance(backend, WholePages) and backend._fetcher is run.pages


def test_an_mcp_tools_schema_cannot_make_the_engine_fetch_a_remote_or_local_reference(
    page_server, tmp_path
):
    """Before: jsonschema fetched a `$ref` with urllib (no guard, no timeout, file:// too)
    when a model's arguments were checked against a (remote) MCP server's input schema."""
    from deep_research.tools.toolbox import checked_call

    page_server.pages["/schema.json"] = '{"type": "object"}'
    (tmp_path / "local.json").write_text('{"type": "object"}')
    inner = {"type": "object", "$defs": {"q": {"type": "string"}}}
    fine = {**inner, "properties": {"query": {"$ref": "#/$defs/q"}}, "required": ["query"]}
    box = toolbox(search=False, pages=False, documents=False, mcp=[("s", "t", "T", fine)])
    assert checked_call("c1", "mcp_s_t", {"query": "x"}, box) is not None  # valid replies first
    assert checked_call("c2", "mcp_s_t", {"query": 3}, box) is None
    for ref in (f"{page_server.url}/schema.json", (tmp_path / "local.json").as_uri()):
        schema = {"type": "object", "properties": {"query": {"$ref": ref}}}
        box = toolbox(search=False, pages=False, documents=False, mcp=[("s", "t", "T", schema)])
        assert checked_call("c3", "mcp_s_t", {"query": "x"}, box) is None
    assert page_server.served == []


def test_an_mcp_tool_with_a_huge_schema_is_not_offered_and_descriptions_are_clean():
    """Before: every allowed tool's schema (up to a 4 MB message) joined every decide prompt."""
    small = {"type": "object", "properties": {"query": {"type": "string"}}}
    huge = {"type": "object", "properties": {f"p{n}": {"type": "string"} for n in range(2000)}}
    box = toolbox(
        search=False,
        pages=False,
        documents=False,
        mcp=[("s", "find", "Find\x1b[2J things", small), ("s", "all", "Everything", huge)],
    )
    assert box.names == ["mcp_s_find", "finish"]
    assert box.tools[0].description == "Find[2J things (the MCP server s, tool find)"
