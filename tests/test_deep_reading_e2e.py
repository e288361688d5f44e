"""Workers that read deep, end to end: the real graph, `ChatOpenAI` against the chat stand-in,
Tavily's client against the search stand-in, pages on loopback. A fact three links past the
search hit, in a linked PDF, behind "related pages" lists that come first in the page, is
reached; every source arrives with the date it states; several workers drawing pages from one
run budget never read one page more than `max_page_fetches`, counted at the site."""

from __future__ import annotations

import asyncio
import json
import re

from deep_research.state import Budget, ReadPage, SubTask, Usage
from deep_research.tools.events import WorkerActed
from deep_research.tools.run_resources import LiveRuns

from graph_stream import TOOL_WORKER, streamed_run
from stand_ins.documents import make_pdf
from stand_ins.loopback import Reply
from stand_ins.search import slug

TOOLS = TOOL_WORKER


def related(prefix: str, count: int = 25) -> str:
    """A 'related pages' box that comes before the text: links and nothing else."""
    items = "".join(
        f'<li><a href="/{prefix}/{n}">Related page {n} on archives</a></li>' for n in range(count)
    )
    return f'<div class="related"><h3>Related</h3><ul>{items}</ul></div>'


HUB = f"""<html><head><title>Archive survey</title>
<meta property="article:modified_time" content="2024-05-02T10:00:00Z"></head><body>
{related("hub")}<h1>Archive survey</h1>
<p>The survey of 2024 measured 40 archives in total. The per-format ratios are on
<a href="/level1">the detail page for formats</a>, with more tables.</p></body></html>"""
LEVEL1 = f"""<html><head><title>Formats</title><script type="application/ld+json">
{{"@context": "https://schema.org", "@type": "Article", "datePublished": "2023-01-10"}}
</script></head><body>{related("level1")}
<p>At level one, zstd reached 11.2 to 1 for logs. The raw measurements are in
<a href="/level2">the measurement appendix</a> of the study.</p></body></html>"""
LEVEL2 = """<html><head><title>Appendix</title></head><body>
<p>The appendix says the xz runs took 6 hours. The whole study is in
<a href="/report.pdf">the final report (PDF)</a> the team published.</p></body></html>"""
REPORT = make_pdf(
    ["Final report on log archives.", "The Zeta ratio in the final report is 42.5 overall."],
    "Final report",
    modified="D:20220304120000Z",
)


def writer_prompt(chat_server) -> str:
    bodies = [r["body"] for r in chat_server.chat_requests]
    return json.dumps([b for b in bodies if "Research notes" in json.dumps(b)], ensure_ascii=False)


def test_a_fact_three_links_deep_in_a_pdf_behind_related_lists_is_read_and_dated(
    chat_server, search_server, page_server
):
    page_server.pages.update({"/hub": HUB, "/level1": LEVEL1})
    page_server.replies["/level2"] = Reply(
        200, raw=LEVEL2.encode(), headers={"Last-Modified": "Wed, 21 Oct 2020 07:28:00 GMT"}
    )
    page_server.replies["/report.pdf"] = Reply(200, raw=REPORT, content_type="application/pdf")
    search_server.url_for = lambda query, n: (
        f"{page_server.url}/hub" if n == 1 else f"{page_server.url}/a/{slug(query)}/{n}"
    )
    search_server.published_for = lambda query, n: "2021-06-01T08:00:00Z" if n == 2 else ""
    chat_server.brain.subtasks = 1
    chat_server.brain.tools.pages_per_round = 2

    values, events = asyncio.run(streamed_run("How well do log archives compress?", TOOLS))

    assert {"/hub", "/level1", "/level2", "/report.pdf"} <= set(page_server.served)
    decides = [
        json.dumps(r["body"]["messages"], ensure_ascii=False)
        for r in chat_server.chat_requests
        if r["body"].get("tool_choice") == "auto"
    ]
    after_hub = next(d for d in decides if "Read: Archive survey" in d)
    assert after_hub.index("/level1 — the detail page") < after_hub.index("/hub/0")
    links = after_hub.split("Links on this page:\\n", 1)[1]
    assert links.startswith(f"  {page_server.url}/level1 — the detail page for formats (")
    prompt = writer_prompt(chat_server)
    for fact in ("40 archives", "11.2 to 1", "6 hours", "42.5 overall"):
        assert fact in prompt, fact  # each page's quote reached the writer
    dates = {
        s.url.removeprefix(page_server.url): s.published
        for result in values["worker_results"]
        for s in result.sources
    }
    assert dates["/hub"] == "2024-05-02"  # its metadata
    assert dates["/level1"] == "2023-01-10"  # its JSON-LD
    assert dates["/level2"] == "2020-10-21"  # its Last-Modified header
    assert dates["/report.pdf"] == "2022-03-04"  # the PDF's metadata
    second = next(url for url in dates if re.fullmatch(r"/a/.*/2", url))
    assert dates[second] == "2021-06-01"  # the provider's date, its page stating none
    acted = [e for e in events if isinstance(e, WorkerActed)]
    assert all(e.cycles_used <= e.max_cycles == 6 for e in acted)  # worker_max_rounds


def test_workers_drawing_pages_from_one_run_budget_never_read_one_more(
    chat_server, search_server, page_server
):
    """Four workers that would each read every hit share `max_page_fetches` 7: exactly 7
    pages are read (counted at the site), every worker reads some, none is shown a cap it
    passes, and the run's usage counts the 7."""
    search_server.url_for = lambda query, n: f"{page_server.url}/a/{slug(query)}/{n}"
    chat_server.brain.subtasks = 4
    chat_server.brain.tools.pages_per_round = 10
    settings = {**TOOLS, "max_page_fetches": 7}

    values, events = asyncio.run(streamed_run("How well do log archives compress?", settings))

    assert len(page_server.served) == 7
    assert values["usage"].page_fetches == 7
    by_worker = {r.subtask_id: r.pages_read for r in values["worker_results"]}
    assert all(count >= 1 for count in by_worker.values()), by_worker
    shown = [
        (e.cycles_used, e.max_cycles, e.queries_used, e.max_queries)
        for e in events
        if e.event == "worker"
    ]
    assert shown and all(c <= cc and q <= qq for c, cc, q, qq in shown), shown


def test_a_resumed_run_counts_the_pages_read_before_it_stopped(page_server):
    """A worker resumed in a new process brings its saved page reads into the run's ledger:
    with 29 of 30 read before the crash, one more page is fetched, then none."""

    async def scenario():
        from deep_research.settings import Settings

        settings = Settings(fetch_private_addresses=True, max_page_fetches=30)
        worker = {
            "run_id": "resumed",
            "settings": settings,
            "spent": Usage(page_fetches=20),  # the run's, when the worker was sent
            "usage": Usage(page_fetches=9),  # the worker's own saved steps
            "round": 1,
            "subtask": SubTask(id=1, description="a", search_queries=["a"], complexity="simple"),
            "budget": Budget(max_queries=3, max_cycles=1),
            "read_pages": [ReadPage(url=f"{page_server.url}/p{n}") for n in range(9)],
        }
        run = LiveRuns().for_worker(worker)
        first = await run.pages.page(f"{page_server.url}/one")
        second = await run.pages.page(f"{page_server.url}/two")
        return first, second, run.spent.page_fetches

    first, second, spent = asyncio.run(scenario())
    assert first.passages and not second.passages
    assert "max_page_fetches" in second.error
    assert spent == 30 and page_server.served == ["/one"]
